"""rLEDBAT paper, Fig. 20 (L495, L506): the modified rLEDBAT (target min(T, base RTT), §7.1, L500)
and one BBRv1 download, 20 Mbps, 500 ms buffer, base RTT varied; the LEDBAT++ sender with the same
modification beside it.

Claim (L506): with the modification rLEDBAT yields at every RTT, against both BBRs: it no longer
builds more than one BDP of queue (L500), which BBRv1's in-flight cap can exceed. Notes' pass row:
rLEDBAT share ≤ 0.15 at every RTT, including ≤ 20 ms. The modification's details are unstated
(notes §5 item 11); the core's ``enhanced_target`` replaces T by min(T, base RTT) as documented
there. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`.
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """The mechanism of a failed row found in the traces: below T BBRv1 at its cap holds the queue at
    the modified target; from T up the target is T again, as in Fig. 16."""
    if row["rtt_ms"] >= vs_bbr.common.TARGET_MS:
        return vs_bbr.above_target("BBRv1")
    return vs_bbr.queue_at_modified_target("BBRv1")


FIGURE = vs_bbr.Figure(
    name="rledbat-fig20", number=20, bbr="bbr", bbr_label="BBRv1", buffer="500ms", enhanced=True,
    source="Fig. 20, L506", quick_rtts=[20, 200],
    claims=[vs_bbr.share_band("every RTT: modified rLEDBAT's share ≤ 0.15",
                              "yields in all scenarios (L506)", lambda rtt: True, 0.0, 0.15)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
