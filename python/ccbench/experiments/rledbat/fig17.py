"""rLEDBAT paper, Fig. 17 (L453, L458): one rLEDBAT and one BBRv1 download, 20 Mbps, 30 ms buffer
(rLEDBAT in loss-based mode), base RTT varied; the LEDBAT++ sender beside it.

Claims (L458): as Fig. 16, but the switch is at the buffer size, not at T: rLEDBAT yields for base
RTTs above 30 ms; below, BBRv1 is held back by its in-flight cap and rLEDBAT takes part of the
capacity; LEDBAT++ does the same [11]. Notes' pass rows: RTT ≥ 40 ms share ≤ 0.15; RTT ≤ 20 ms
share ≥ 0.25. Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`.

Environment (issue 25 item 6): judged in the testbed's (tbf burst 32 KiB, GRO), the no-burst arm
beside it. Full run, testbed: rLEDBAT yields from 60 ms (≤ 0.15 everywhere but 40 ms, 0.153), but
at 20 ms keeps 0.20 (< 0.25; no burst 0.30): the tbf bursts lift BBRv1's bandwidth estimate above
C, its queue overflows the 30 ms buffer (loss 0.49 % against 0.15 %), and the losses cut the
rLEDBAT flow's CUBIC sender, not BBRv1; sender LEDBAT++ keeps 0.18. At 80 ms rLEDBAT keeps 0.065
against LEDBAT++'s 0.04 (more than half apart): the later reaction to losses the paper itself
gives for 30 ms buffers (L422). Without the burst, 40 and 60 ms keep 0.20 and 0.16 (> 0.15).
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """The measured mechanism of a failed row: below the buffer size in the testbed, BBRv1's
    bandwidth over-estimate from the tbf bursts; above it, the loss-based regime."""
    if row["rtt_ms"] <= 30:
        if not vs_bbr.in_testbed(row):
            return ""
        return (vs_bbr.burst_overestimate("BBRv1", row["rtt_ms"]) + "; here that queue overflows the 30 ms buffer "
                "(see the loss rates), and each loss halves the rLEDBAT flow's CUBIC sender and its rlwnd but "
                "not BBRv1, so rLEDBAT keeps less than without the burst (beside); sender LEDBAT++ the same")
    return ("Loss-based regime: BBRv1 paces at its bandwidth estimate and fills "
            "the 30 ms buffer only in its 1.25-gain probing phases; the losses there cut the rLEDBAT flow "
            "(its CUBIC sender and its rlwnd) but not BBRv1, and between probes the rLEDBAT flow regrows into "
            "what BBRv1's estimate leaves; sender LEDBAT++ keeps the same share, so it is not rLEDBAT's later "
            "reaction to losses (the notes' 0.15 is their reading of \"yields\"; the paper prints no number)")


def explain_match(row) -> str:
    """Why rLEDBAT keeps more than sender LEDBAT++ in the 30 ms buffer (the paper's own reason)."""
    if row["rledbat_lbe_share"] <= row["ledbatpp_lbe_share"]:
        return ""
    return ("in 30 ms buffers the paper finds rLEDBAT more aggressive than LEDBAT++ \"because of its delayed "
            "reaction to losses (as it reacts to retransmissions)\" (L422): here rLEDBAT keeps the larger of two "
            "small shares, both flows yielding")


FIGURE = vs_bbr.Figure(
    name="rledbat-fig17", number=17, bbr="bbr", bbr_label="BBRv1", buffer="30ms", enhanced=False,
    source="Fig. 17, L458", quick_rtts=[20, 100],
    claims=[vs_bbr.share_band("RTT ≤ 20 ms: rLEDBAT share ≥ 0.25",
                              "takes part of the capacity below the buffer size (L458)", lambda rtt: rtt <= 20, 0.25),
            vs_bbr.share_band("RTT ≥ 40 ms: rLEDBAT share ≤ 0.15", "yields for base RTT > 30 ms (L458)",
                              lambda rtt: rtt >= 40, 0.0, 0.15)],
    explain=explain, explain_match=explain_match)
EXPERIMENT = vs_bbr.experiment(FIGURE)
