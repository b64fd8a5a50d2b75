"""rLEDBAT paper, Table 2 (L436–L450): completion time of a 262 KB BBRv1 download alone, after a
long rLEDBAT background download, and after a long BBRv1 background flow; RTT 20/100/200/300 ms.

Claims (L450): usually alone < rLEDBAT-bg < BBRv1-bg, except at 20 ms, where BBRv1's extra queue
of about one BDP (20 ms) is below rLEDBAT's 60 ms, so BBRv1-bg < rLEDBAT-bg; BBRv1-bg times are
much lower than the CUBIC-bg times of Table 1. Notes' pass rows: at 20 ms BBRv1-bg < rLEDBAT-bg;
at 100 and 200 ms alone < rLEDBAT-bg < BBRv1-bg; every BBRv1-bg cell < the matching CUBIC-bg
cell (run here too, the "Table 1 CUBIC-bg" row). Issue 25: cells agree within ±10 %, within
tolerance within ±15 % (alone) or ±25 % (background rows); orders are ratios of two cells, in the
range both cells within their bands give (see ``short_flows.order_rows``).

Set-up and measurement: :mod:`ccbench.experiments.rledbat.short_flows`.
"""

from __future__ import annotations

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


def _comparison(summary) -> list:
    rows = sf.cell_rows(summary, LABELS, SOURCE, why_short={sf.SAME: sf.long_bbr_queue(LABEL)})
    cells = {**PAPER, CUBIC_BG: PAPER_CUBIC_BG}
    checks = [(20, f"{LABEL}-bg < rLEDBAT-bg at 20 ms", "0.41 < 0.55: BBRv1 queues ≈1 BDP = 20 ms < T (L450)",
               [(sf.SAME, ""), (sf.RLEDBAT, "<")], "")]
    checks += [(rtt, f"alone < rLEDBAT-bg < {LABEL}-bg at {rtt} ms", "the usual order (L450)",
                [(sf.ALONE, ""), (sf.RLEDBAT, "<"), (sf.SAME, "<")], sf.long_bbr_queue(LABEL)) for rtt in (100, 200)]
    checks += [(rtt, f"{LABEL}-bg < CUBIC-bg at {rtt} ms", f"much lower than the Cubic case (L450)",
                [(sf.SAME, ""), (CUBIC_BG, "<")], "") for rtt in sf.RTTS_MS]
    for rtt, what, paper, chain, why in checks:
        rows += sf.order_rows(summary, what, paper, SOURCE + "; Table 1, L406–L408" if CUBIC_BG in dict(chain)
                              else SOURCE, chain, rtt, cells, why=why)
    return rows


EXPERIMENT = sf.experiment(
    name="rledbat-table2",
    description="rLEDBAT Table 2: FCT of a 262 KB BBRv1 flow (with handshake) alone, after an rLEDBAT "
                "download, after a long BBRv1 flow; 20 Mbps, 500 ms buffer, RTT 20/100/200/300 ms",
    rows=ROWS, paper=PAPER, comparison=_comparison,
    title="rLEDBAT Table 2: 262 KB BBRv1 flow, 20 Mbps, 500 ms buffer")
