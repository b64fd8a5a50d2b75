"""rLEDBAT paper, Fig. 19 (L466, L469, L480): one rLEDBAT and one BBRv2 download, 20 Mbps, 30 ms
buffer, base RTT varied; the LEDBAT++ sender beside it.

Claims (L466, L480): BBRv2 yields to rLEDBAT for RTTs below the buffer size (30 ms), its in-flight
bound being too small to fill the buffer; for larger RTTs BBRv2 takes more; the same as LEDBAT++
[11]. Notes' pass rows: RTT ≤ 20 ms share > 0.5, judged (issue 39) in the sense of "yields" the
rLEDBAT rows use (BBRv2 keeps at most 0.15 of C); RTT ≥ 40 ms BBRv2's share above rLEDBAT's.
Set-up and measurement: :mod:`ccbench.experiments.rledbat.vs_bbr`; BBRv2 is ``cca = "bbr2"``.

Environment (issue 25 item 6): judged in the testbed's (tbf burst 32 KiB, GRO), the no-burst arm
beside it. Full run (before issue 39's "yields" row): every testbed row agreed (at 40 ms BBRv2 takes 0.55 against rLEDBAT's 0.38);
without the burst rLEDBAT still takes more at 40 ms (0.50/0.41), the crossover one grid step late.
"""

from __future__ import annotations

from ccbench.experiments.rledbat import vs_bbr


def explain(row) -> str:
    """Where a failed row sits relative to the paper's crossover at the buffer size (30 ms)."""
    if row["rtt_ms"] <= 30:
        return ("not traced to a mechanism: BBRv2 keeps more than a yielding flow's 0.15 of C, with the queue "
                "and loss rate above; the paper's reason (L480) is that BBRv2's in-flight limit keeps it from "
                "filling the 30 ms buffer")
    return ("Equal shares fall between 40 and 60 ms here, one grid step above the paper's 30 ms (the buffer "
            "size); the notes' BED-shape class (§3.0) lets a crossover move by one grid step, this pass row "
            "does not")


FIGURE = vs_bbr.Figure(
    name="rledbat-fig19", number=19, bbr="bbr2", bbr_label="BBRv2", buffer="30ms", enhanced=False,
    source="Fig. 19, L480", quick_rtts=[20, 60],
    claims=[vs_bbr.bbr_yields("RTT ≤ 20 ms: BBRv2's share ≤ 0.15", "BBRv2 yields in front of rLEDBAT below the "
                              "buffer size (L466, L480)", lambda rtt: rtt <= 20),
            vs_bbr.bbr_above("RTT ≥ 40 ms: BBRv2's share above rLEDBAT's", "BBRv2 takes more above 30 ms (L480)",
                             lambda rtt: rtt >= 40)],
    explain=explain)
EXPERIMENT = vs_bbr.experiment(FIGURE)
