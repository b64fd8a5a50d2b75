"""rLEDBAT paper, Fig. 18 (L456, L464): one rLEDBAT and one BBRv2 download, 20 Mbps, 500 ms
buffer, base RTT varied; the LEDBAT++ sender beside it.

Claims (L464): rLEDBAT yields for RTTs above 60 ms (T); below, unlike BBRv1, BBRv2 yields to
rLEDBAT: its in-flight is bounded by its model (inflight_hi/lo), not only by the 2·BDP cap; the
same as LEDBAT++ against BBRv2 [11]. Notes' pass rows: RTT ≥ 80 ms share ≤ 0.15; RTT ≤ 40 ms
share > 0.5 (above BBRv2's), judged (issue 39) in the sense of "yields" the rLEDBAT rows use: BBRv2
keeps at most 0.15 of C. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`;
BBRv2 is ``cca = "bbr2"``.

Environment (issue 25 item 6): judged in the testbed's (tbf burst 32 KiB, GRO, BBRv2 with its
ACK-aggregation allowance), the no-burst arm beside it. Full run, testbed: BBRv2 yields below T and
rLEDBAT matches LEDBAT++ at every RTT; rLEDBAT yields from 200 ms but keeps 0.25/0.23/0.19 at
80/100/150 ms (> 0.15): BBRv2's queue passes T only in its probes (p50 45–25 ms). Without the
burst it keeps more than 0.15 up to 200 ms (0.17).
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """The mechanism of a failed row found in the traces (above T: BBRv2's queue mostly below T)."""
    if row["rtt_ms"] >= vs_bbr.common.TARGET_MS:
        return (vs_bbr.above_target("BBRv2") + "; without losses in this buffer BBRv2's in-flight bounds "
                "stay open and its window follows its bandwidth samples, which shrink as the rLEDBAT flow grows")
    return ""


FIGURE = vs_bbr.Figure(
    name="rledbat-fig18", number=18, bbr="bbr2", bbr_label="BBRv2", buffer="500ms", enhanced=False,
    source="Fig. 18, L464", quick_rtts=[20, 100],
    claims=[vs_bbr.bbr_yields("RTT ≤ 40 ms: BBRv2's share ≤ 0.15", "BBRv2 yields in front of rLEDBAT below T (L464)",
                              lambda rtt: rtt <= 40),
            vs_bbr.share_band("RTT ≥ 80 ms: rLEDBAT share ≤ 0.15", "yields for RTT > 60 ms = T (L464)",
                              lambda rtt: rtt >= 80, 0.0, 0.15)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
