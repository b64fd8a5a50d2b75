"""rLEDBAT paper, Fig. 21 (L498, L506): the modified rLEDBAT (target min(T, base RTT), §7.1, L500)
and one BBRv2 download, 20 Mbps, 500 ms buffer, base RTT varied; the LEDBAT++ sender with the same
modification beside it.

Claim (L506): with the modification rLEDBAT yields at every RTT, against both BBRs: it no longer
builds more than one BDP of queue (L500), which BBRv2's in-flight cap can exceed. Notes' pass row:
rLEDBAT share ≤ 0.15 at every RTT, including ≤ 20 ms. The modification's details are unstated
(notes §5 item 11); the core's ``enhanced_target`` replaces T by min(T, base RTT) as documented
there. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`.

Environment (issue 25 item 6): judged in the testbed's (tbf burst 32 KiB, GRO), the no-burst arm
beside it. Full run, testbed: the modified rLEDBAT yields from 200 ms only; from 10 to 150 ms it
keeps 0.37, 0.27, 0.45, 0.30, 0.25, 0.23, 0.19 (no burst: 0.56, 0.52, 0.43, 0.28, 0.26, 0.23,
0.21): the queue sits at the modified target, where BBRv2 gains only in its probes; at 10 ms it is
also 0.11 above sender LEDBAT++ (0.26; std 0.08 over seeds), not traced.
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """The mechanism of a failed row found in the traces: below T the queue sits at the modified
    target, where BBRv2 (probing only every few seconds) loses ground; from T up, as in Fig. 18."""
    if row["rtt_ms"] >= vs_bbr.common.TARGET_MS:
        return vs_bbr.above_target("BBRv2")
    return (vs_bbr.queue_at_modified_target("BBRv2") + ". BBRv2 probes for bandwidth only every few "
            "seconds, so its estimate and window decay and the rLEDBAT flow's share grows over the run")


FIGURE = vs_bbr.Figure(
    name="rledbat-fig21", number=21, bbr="bbr2", bbr_label="BBRv2", buffer="500ms", enhanced=True,
    source="Fig. 21, L506", quick_rtts=[20, 100],
    claims=[vs_bbr.share_band("every RTT: modified rLEDBAT's share ≤ 0.15",
                              "yields in all scenarios (L506)", lambda rtt: True, 0.0, 0.15)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
