"""SIAD thesis §4.4.2, Table 4.3 (L2530–L2538): two SIAD flows with Num_RTT ∈ {10 … 50}²,
100 Mbit/s, 0.1 BDP.

Notes ``siad-eval.md`` §2.2 row B4, §4.5. The Table 4.2 scenario (table4_2.py: simultaneous
start, RTT 100 ms, delayed ACKs on, 600 s, 20 s warm-up) at 100 Mbit/s with a buffer of 0.1 BDP
(125 000 B ≈ 83 full packets). Same checks: each cell within ±25 %, the sign pattern and the
growth to the upper right (L2540). The thesis's own table is not monotone in places
((10, 30) = 6.14 > (10, 40) = 4.35, notes §4.5), so ours is held to its count of monotone steps
minus two, not to strict monotonicity.
"""

from __future__ import annotations

from ccbench.experiments.siad.table4_2 import sharing_experiment

#: Table 4.3 (L2530–L2538): rows flow 1's Num_RTT, columns flow 2's (10 … 50).
TABLE_4_3 = {
    10: (0.93, 2.95, 6.14, 4.35, 4.57),
    20: (0.27, 1.05, 1.71, 1.73, 1.81),
    30: (0.3, 0.62, 1.11, 1.25, 1.38),
    40: (0.19, 0.61, 0.84, 1.05, 1.09),
    50: (0.20, 0.68, 0.66, 0.96, 1.06),
}

EXPERIMENT = sharing_experiment(
    "siad-table4-3", "100Mbps", 0.1, TABLE_4_3, "Table 4.3", "L2530–L2538",
    # Quick: one unequal pair in both orientations; 100 Mbit/s costs ≈ 0.6 s per simulated minute.
    quick_pairs=[(10, 40), (40, 10)], quick_duration="80s",
    description="SIAD thesis Table 4.3: sharing ratio of two SIAD flows, Num_RTT 10–50 each, "
                "100 Mbit/s, 0.1 BDP")
