"""rLEDBAT paper, Table 2 (L436–L450): completion time of a 262 KB BBRv1 download alone, after a
long rLEDBAT background download, and after a long BBRv1 background flow; RTT 20/100/200/300 ms.

Claims (L450): usually alone < rLEDBAT-bg < BBRv1-bg, except at 20 ms, where BBRv1's extra queue
of about one BDP (20 ms) is below rLEDBAT's 60 ms, so BBRv1-bg < rLEDBAT-bg; BBRv1-bg times are
much lower than the CUBIC-bg times of Table 1. Notes' pass rows: at 20 ms BBRv1-bg < rLEDBAT-bg;
at 100 and 200 ms alone < rLEDBAT-bg < BBRv1-bg; every BBRv1-bg cell < the matching CUBIC-bg
cell (run here too, the "Table 1 CUBIC-bg" row). Issue 25: cells agree within ±10 %, within
tolerance within ±15 % (alone) or ±25 % (background rows); orders are ratios of two cells, in the
range both cells within their bands give (see ``short_flows.order_rows``). L450's "extra BDP":
the long BBRv1 flow's queue when the short flow starts about the base RTT (the notes' ±30 %
agrees, ±50 % within) at 20 and 100 ms; at 200 and 300 ms the paper's own cells bound that queue
to 0.38 and 0.22 of a BDP, so ours is reported there (see ``EXTRA_BDP_RTTS_MS``).

Environment (issue 25 item 6): judged in the testbed's (``common.TESTBED``: tbf burst 32 KiB, GRO
at the receivers, BBRv1 with extra_acked); the no-burst arm is judged beside it, and the burst is
swept (16 and 64 KiB, and 32 KiB without GRO), contrast rows, one per cell. Full run, testbed: the
262 KB flow behind BBRv1 takes 0.41/1.17/1.58/2.23 s (paper 0.41/1.23/1.85/2.47), alone < rLEDBAT-
bg < BBRv1-bg at 100 and 200 ms, and the long flow's queue is 17 ms at 20 ms (a BDP, agrees) and
51 ms at 100 ms (half a BDP, within tolerance): BBRv1 paces at an estimate a tbf burst lifts by up
to one burst per round, 66 % of the BDP at 20 ms but 13 % at 100 ms, and is not at its 2·BDP cap.
Without the burst the same cells are 0.36/0.81/1.45/2.15 s with a 5–9 ms queue (1.23 s at 100 ms
differs, −34 %, and BBRv1-bg falls below rLEDBAT-bg there). The sweep: at 100 ms 0.88/1.17/1.36 s
with 16/32/64 KiB, 1.17 s with 32 KiB and no GRO, so the burst, not GRO, gives BBRv1 its queue.
Still differing: BBRv1-bg < CUBIC-bg at 300 ms (8.8 / 2.2 = 3.95, above the 1.2–3.4 the paper's
cells give): the CUBIC-bg cell runs 77 % long, Table 1's 300 ms cell (see table1.WHY).

Set-up and measurement: :mod:`ccbench.experiments.rledbat.short_flows`.
"""

from __future__ import annotations

from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common, table1
from ccbench.experiments.rledbat import short_flows as sf

CCA, LABEL = "bbr", "BBRv1"
#: The row of Table 1 the text compares with (L450), run beside on our simulator.
CUBIC_BG = "cubic-same-bg"
ROWS = sf.table_rows(CCA, LABEL) + [sf.Row(CUBIC_BG, "Table 1's CUBIC long, then CUBIC short", "cubic", "cubic")]
LABELS = {row.key: row.label for row in ROWS}
#: Table 2 (L441–L443), seconds.
PAPER = {sf.ALONE: [0.17, 0.68, 1.34, 2.03],
         sf.RLEDBAT: [0.55, 1.04, 1.61, 2.02],
         sf.SAME: [0.41, 1.23, 1.85, 2.47]}
PAPER_CUBIC_BG = [3.26, 4.84, 4.76, 4.99]
SOURCE = "Table 2, L441–L443"


#: L450: "BBRv1 introduces a queue of an extra BDP", i.e. about one base RTT of queueing delay.
#: The table's own cells bound the queue the short flow met: it needs at least its alone rounds,
#: each stretched by that queue, so q ≤ RTT·(same-bg/alone − 1) = 28, 81, 76 and 65 ms at 20, 100,
#: 200 and 300 ms. Judged where that bound admits a BDP within the agree band (20 ms, where the
#: paper applies it, and 100 ms); at 200 and 300 ms the paper's cells exclude a BDP (≤ 0.38 and
#: 0.22 of it), so ours is reported beside the bound.
EXTRA_BDP_RTTS_MS = (20, 100)
#: The notes' BED-num band for times (§3.0): ±30 % agrees, ±50 % within tolerance.
EXTRA_BDP_AGREE, EXTRA_BDP_WITHIN = 0.30, 0.50


def implied_queue_ms(rtt: float, background: float, alone: float) -> float:
    """The standing queue that turns the alone time's rounds of ``rtt`` into ``background``: an
    upper bound on the mean queue the short flow met (competing for the link only adds time)."""
    return rtt * (background / alone - 1)


def extra_bdp_rows(summary) -> list:
    """L450's extra BDP: the queue the long BBRv1 flow holds when the short flow starts (the
    background's smoothed RTT over the second before, less the base RTT), about the base RTT."""
    out = []
    for rtt in sf.RTTS_MS:
        hit = summary[(summary["row"] == sf.SAME) & (summary["rtt_ms"] == rtt)]
        if hit.empty:
            continue
        r = hit.iloc[0]
        i = sf.RTTS_MS.index(rtt)
        implied = implied_queue_ms(rtt, PAPER[sf.SAME][i], PAPER[sf.ALONE][i])
        ours_implied = implied_queue_ms(rtt, r["fct_s"], sf.cell(summary, sf.ALONE, rtt) or float("nan"))
        shown = (f"{r['queue_at_start_ms']:.0f} ms at the short start (std {r['queue_at_start_ms_std']:.0f} over "
                 f"seeds); our cells bound it to ≤ {ours_implied:.0f} ms")
        paper = (f"an extra BDP = {rtt} ms (L450); the table's cells bound it to ≤ {implied:.0f} ms "
                 f"({rtt}·({PAPER[sf.SAME][i]:.2f}/{PAPER[sf.ALONE][i]:.2f} − 1))")
        what = f"{LABEL}-bg: the long {LABEL} flow's standing queue, at {rtt} ms"
        if rtt in EXTRA_BDP_RTTS_MS:
            check = Check(f"{what} (≈ one BDP, the base RTT)", paper, SOURCE + "; L450",
                          float(r["queue_at_start_ms"]),
                          Claim("≈", float(rtt), agree=EXTRA_BDP_AGREE, within=EXTRA_BDP_WITHIN), shown=shown,
                          # the queue the short flow meets moves from seed to seed: how far the full
                          # run's seeds could move our mean, from this run's spread
                          needs=("seeds",), movable=sf.seed_reach(r, "queue_at_start_ms"),
                          of=("queue_at_start_ms",))
            if check.verdict != "agrees":
                check.reason = sf.long_bbr_queue(LABEL)
        else:
            check = Check(what, paper, SOURCE + "; L450", None, shown=shown,
                          reason=f"reported: the paper's own cells bound the queue to {implied:.0f} ms here, "
                                 f"{implied / rtt:.2f} of a BDP, so the claim is not judged at this RTT")
        out.append(check.row())
    return out


#: Why the CUBIC-bg cell can leave the range (Table 1's cell, the same runs' set-up): its mechanism.
CUBIC_BG_WHY = f"the CUBIC-bg cell is Table 1's, which runs long where {table1.WHY[sf.SAME]}"


def _comparison(summary) -> list:
    rows = sf.cell_rows(summary, LABELS, SOURCE, why_short={sf.SAME: sf.long_bbr_queue(LABEL)})
    rows += extra_bdp_rows(summary)
    cells = {**PAPER, CUBIC_BG: PAPER_CUBIC_BG}
    checks = [(20, f"{LABEL}-bg < rLEDBAT-bg at 20 ms", "0.41 < 0.55: BBRv1 queues ≈1 BDP = 20 ms < T (L450)",
               [(sf.SAME, ""), (sf.RLEDBAT, "<")], "")]
    checks += [(rtt, f"alone < rLEDBAT-bg < {LABEL}-bg at {rtt} ms", "the usual order (L450)",
                [(sf.ALONE, ""), (sf.RLEDBAT, "<"), (sf.SAME, "<")], sf.long_bbr_queue(LABEL)) for rtt in (100, 200)]
    checks += [(rtt, f"{LABEL}-bg < CUBIC-bg at {rtt} ms", "much lower than the Cubic case (L450)",
                [(sf.SAME, ""), (CUBIC_BG, "<")], CUBIC_BG_WHY) for rtt in sf.RTTS_MS]
    for rtt, what, paper, chain, why in checks:
        rows += sf.order_rows(summary, what, paper, SOURCE + "; Table 1, L406–L408" if CUBIC_BG in dict(chain)
                              else SOURCE, chain, rtt, cells, why=why)
    return rows


EXPERIMENT = sf.experiment(
    name="rledbat-table2",
    description="rLEDBAT Table 2: FCT of a 262 KB BBRv1 flow (with handshake) alone, after an rLEDBAT "
                "download, after a long BBRv1 flow; 20 Mbps, 500 ms buffer, RTT 20/100/200/300 ms",
    rows=ROWS, paper=PAPER, comparison=_comparison, source=SOURCE,
    sweep=(common.HALF_BURST, common.DOUBLE_BURST, common.NO_GRO),
    sweep_paper={CUBIC_BG: (PAPER_CUBIC_BG, "Table 1, L406–L408")},
    title="rLEDBAT Table 2: 262 KB BBRv1 flow, 20 Mbps, 500 ms buffer")
