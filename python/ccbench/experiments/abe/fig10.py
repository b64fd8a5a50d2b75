"""ABE paper §IV-B, Fig. 10: CDF of the bottleneck queueing delay for one long CUBIC flow with
ECN through CoDel and PIE at 10 Mbps (the runs of Fig. 9) at RTT 100 ms, per beta_ecn.

Paper (seed text, L242): at RTT 100 ms, against the CUBIC default beta_ecn 0.7, the median / 90th
percentile grow by 6 / 3 ms (PIE, 0.85), 12 / 5 ms (PIE, 0.95), 1 / 1 ms (CoDel, 0.85) and
3 / 2 ms (CoDel, 0.95); "the trend for the queuing delay is also similar to that of NewReno"
(L238). Checks (``common.increment_claim``): each increment agrees within ±50 % of the paper's and
is within tolerance within ±3 ms or ±50 %, whichever is larger (notes ``experiments-abe.md`` §3
Fig. 10); PIE's increments over CoDel's (L242's orders, PIE − CoDel ≥ 0) and the growth of PIE's
median and p90 with beta_ecn (L238: the trend is NewReno's, which grows, L230, L232) are judged too.

The scenario is Fig. 9's (``common.single_flow_base(CUBIC_FLOW)``: CUBIC with HyStart, IW 10, SACK on, delayed
ACKs off, 300 s, 20 s warm-up, 5 seeds; an ns-2 simulation, L236, L376, so CoDel and PIE are
ns-2's ``codel.cc`` and ``pie.cc``, ``common.CODEL_NS2`` and ``common.PIE_NS2``, L203) with per-packet sojourns recorded; the delay measure,
its window and the CDF construction are Fig. 8's (``common.delay_metric``: enqueue to start of
transmission, core percentiles; see fig8's module doc for why the absolute levels sit below the
AQM targets while the increments are comparable).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.abe.common import (
    CUBIC_FLOW,
    add_increments,
    apply_point,
    cdf_figure,
    delay_metric,
    increment_checks,
    monotone_checks,
    order_check,
    seed_reach,
    select,
    single_flow_base,
    step_checks,
)
from ccbench.experiments.base import Experiment

BETA_ECN = [0.5, 0.7, 0.85, 0.95]
#: CUBIC's default beta_ecn, the reference of Fig. 9's gains and L242's increments (L228).
REFERENCE_BETA = 0.7
#: L242, RTT 100 ms: (extra median, extra 90th percentile) in ms over beta_ecn 0.7.
PAPER_EXTRA_100MS = {
    ("pie", 0.85): (6, 3), ("pie", 0.95): (12, 5),
    ("codel", 0.85): (1, 1), ("codel", 0.95): (3, 2),
}
SOURCE = "Fig. 10, Sec. IV-B, L242"


def _compare(summary):
    return add_increments(summary, REFERENCE_BETA)


def _pie_above_codel_checks(summary, rtt_ms: int = 100) -> list:
    """PIE's increments exceed CoDel's (L242: 6 > 1 and 3 > 1 ms at 0.85, 12 > 3 and 5 > 2 ms at
    0.95): each order judged on our increments (PIE − CoDel ≥ 0), the reach of the missing seeds
    from the four seed spreads the two increments are made of."""
    checks = []
    for beta_ecn in sorted({b for _, b in PAPER_EXTRA_100MS}):
        rows = {aqm: (select(summary, aqm, rtt_ms, beta_ecn), select(summary, aqm, rtt_ms, REFERENCE_BETA))
                for aqm in ("pie", "codel")}
        if any(r is None for pair in rows.values() for r in pair):
            continue
        for i, stat in enumerate(("median", "p90")):
            paper_p, paper_c = PAPER_EXTRA_100MS[("pie", beta_ecn)][i], PAPER_EXTRA_100MS[("codel", beta_ecn)][i]
            column = f"{stat}_ms"
            stds = [r.get(f"{column}_std") for pair in rows.values() for r in pair]
            checks.append(order_check(
                f"RTT {rtt_ms} ms, beta_ecn {beta_ecn:g}: PIE adds more to the {stat} than CoDel",
                f"PIE +{paper_p} ms > CoDel +{paper_c} ms", SOURCE,
                float(rows["pie"][0][f"extra_{column}"]), float(rows["codel"][0][f"extra_{column}"]),
                labels=("PIE", "CoDel"), unit=" ms", fmt=".1f",
                reach=seed_reach(*stds) if f"{column}_std" in summary else None, of=(column,)))
    return checks


def _comparison(summary) -> list:
    summary = _compare(summary) if "extra_median_ms" not in summary else summary
    checks = increment_checks(summary, PAPER_EXTRA_100MS, REFERENCE_BETA, SOURCE)
    checks += _pie_above_codel_checks(summary)
    checks += step_checks(summary, PAPER_EXTRA_100MS, REFERENCE_BETA, SOURCE)
    checks += monotone_checks(summary, "pie", [b for b in BETA_ECN if b >= REFERENCE_BETA], "Fig. 10, L238, L242")
    return [check.row() for check in checks]


def _figure(summary, out_dir: Path) -> Path:
    return cdf_figure(summary, out_dir / "abe-fig10.png",
                      "ABE Fig. 10: queueing delay, one CUBIC flow with ECN, 10 Mbps", [100])


EXPERIMENT = Experiment(
    name="abe-fig10",
    description="ABE Fig. 10: queueing-delay CDF of one CUBIC flow with ECN through CoDel and PIE "
                "(10 Mbps, RTT 100 ms) per beta_ecn; increments over beta_ecn 0.7",
    base=single_flow_base(CUBIC_FLOW, sojourn_samples=True),
    grid={"aqm": ["codel", "pie"], "rtt_ms": [100], "beta_ecn": BETA_ECN},
    seeds=(1, 2, 3, 4, 5),
    quick_seeds=(1, 2),
    quick_overrides={"duration": "150s"},
    apply=apply_point,
    metric=delay_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
