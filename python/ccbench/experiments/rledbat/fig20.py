"""rLEDBAT paper, Fig. 20 (L495, L506): the modified rLEDBAT (target min(T, base RTT), §7.1, L500)
and one BBRv1 download, 20 Mbps, 500 ms buffer, base RTT varied; the LEDBAT++ sender with the same
modification beside it.

Claim (L506): with the modification rLEDBAT yields at every RTT, against both BBRs: it no longer
builds more than one BDP of queue (L500), which BBRv1's in-flight cap can exceed. Notes' pass row:
rLEDBAT share ≤ 0.15 at every RTT, including ≤ 20 ms. The modification's details are unstated
(notes §5 item 11); the core's ``enhanced_target`` replaces T by min(T, base RTT) as documented
there. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`.

Environment (issue 25 item 6): judged in the testbed's (tbf burst 32 KiB, GRO), the no-burst arm
beside it. Full run, testbed: the modified rLEDBAT yields from 60 ms up (≤ 0.14), not below: 0.26,
0.28 and 0.15 at 10, 20 and 40 ms, about the no-burst arm's (0.26, 0.28, 0.22), since BBRv1 at its
cap holds the queue at about one base RTT, the modified target itself (p50 9/16 ms at 10/20 ms),
and that queue leaves the tbf bucket no idle time to refill. Without the burst it also keeps
0.21/0.19/0.15 at 60/80/150 ms.
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """The mechanism of a failed row found in the traces: below T BBRv1 at its cap holds the queue at
    the modified target; from T up the target is T again, as in Fig. 16."""
    if row["rtt_ms"] >= vs_bbr.common.TARGET_MS:
        return vs_bbr.above_target("BBRv1")
    testbed = "; " + vs_bbr.bucket_kept_empty() if vs_bbr.in_testbed(row) else ""
    return vs_bbr.queue_at_modified_target("BBRv1") + testbed


FIGURE = vs_bbr.Figure(
    name="rledbat-fig20", number=20, bbr="bbr", bbr_label="BBRv1", buffer="500ms", enhanced=True,
    source="Fig. 20, L506", quick_rtts=[20, 200],
    claims=[vs_bbr.share_band("every RTT: modified rLEDBAT's share ≤ 0.15",
                              "yields in all scenarios (L506)", lambda rtt: True, 0.0, 0.15)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
