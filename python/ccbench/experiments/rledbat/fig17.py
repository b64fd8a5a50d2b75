"""rLEDBAT paper, Fig. 17 (L453, L458): one rLEDBAT and one BBRv1 download, 20 Mbps, 30 ms buffer
(rLEDBAT in loss-based mode), base RTT varied; the LEDBAT++ sender beside it.

Claims (L458): as Fig. 16, but the switch is at the buffer size, not at T: rLEDBAT yields for base
RTTs above 30 ms; below, BBRv1 is held back by its in-flight cap and rLEDBAT takes part of the
capacity; LEDBAT++ does the same [11]. Notes' pass rows: RTT ≥ 40 ms share ≤ 0.15; RTT ≤ 20 ms
share ≥ 0.25. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`.
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """Above the buffer size the measured mechanism of a failed row: the loss-based regime."""
    if row["rtt_ms"] <= 30:
        return ""
    return ("Loss-based regime: BBRv1 paces at its bandwidth estimate and fills "
            "the 30 ms buffer only in its 1.25-gain probing phases; the losses there cut the rLEDBAT flow "
            "(its CUBIC sender and its rlwnd) but not BBRv1, and between probes the rLEDBAT flow regrows into "
            "what BBRv1's estimate leaves; sender LEDBAT++ keeps the same share, so it is not rLEDBAT's later "
            "reaction to losses (the notes' 0.15 is their reading of \"yields\"; the paper prints no number)")


FIGURE = vs_bbr.Figure(
    name="rledbat-fig17", number=17, bbr="bbr", bbr_label="BBRv1", buffer="30ms", enhanced=False,
    source="Fig. 17, L458", quick_rtts=[20, 100],
    claims=[vs_bbr.share_band("RTT ≤ 20 ms: rLEDBAT share ≥ 0.25",
                              "takes part of the capacity below the buffer size (L458)", lambda rtt: rtt <= 20, 0.25),
            vs_bbr.share_band("RTT ≥ 40 ms: rLEDBAT share ≤ 0.15", "yields for base RTT > 30 ms (L458)",
                              lambda rtt: rtt >= 40, 0.0, 0.15)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
