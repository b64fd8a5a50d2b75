"""ABE paper §IV-B, Fig. 10: CDF of the bottleneck queueing delay for one long CUBIC flow with
ECN through CoDel and PIE at 10 Mbps (the runs of Fig. 9) at RTT 100 ms, per beta_ecn.

Paper (seed text, L242): at RTT 100 ms, against the CUBIC default beta_ecn 0.7, the median / 90th
percentile grow by 6 / 3 ms (PIE, 0.85), 12 / 5 ms (PIE, 0.95), 1 / 1 ms (CoDel, 0.85) and
3 / 2 ms (CoDel, 0.95); "the trend for the queuing delay is also similar to that of NewReno"
(L238). Checks (``common.increment_claim``): each increment agrees within ±50 % of the paper's and
is within tolerance within ±3 ms or ±50 %, whichever is larger (notes ``experiments-abe.md`` §3
Fig. 10); PIE's increments over CoDel's and the growth with beta_ecn are reported (orders and
shapes of our numbers, each number checked against the paper's by the increment rows).

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
    select,
    single_flow_base,
)
from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check

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
    """PIE's increments exceed CoDel's (L242's numbers): reported, a comparison of two of our
    numbers that the increment rows above already check one by one against the paper's."""
    checks = []
    for beta_ecn in sorted({b for _, b in PAPER_EXTRA_100MS}):
        pie, codel = select(summary, "pie", rtt_ms, beta_ecn), select(summary, "codel", rtt_ms, beta_ecn)
        if pie is None or codel is None:
            continue
        for i, stat in enumerate(("median", "p90")):
            p, c = float(pie[f"extra_{stat}_ms"]), float(codel[f"extra_{stat}_ms"])
            paper_p, paper_c = PAPER_EXTRA_100MS[("pie", beta_ecn)][i], PAPER_EXTRA_100MS[("codel", beta_ecn)][i]
            checks.append(Check(
                f"RTT {rtt_ms} ms, beta_ecn {beta_ecn:g}: PIE adds more to the {stat} than CoDel",
                f"PIE +{paper_p} ms, CoDel +{paper_c} ms", SOURCE, None,
                shown=f"PIE {p:+.1f} ms, CoDel {c:+.1f} ms",
                reason=("an order of two of our numbers, each checked against the paper's above: PIE's is "
                        + ("larger" if p > c else "not larger") + f" by {abs(p - c):.1f} ms")))
    return checks


def _comparison(summary) -> list:
    summary = _compare(summary) if "extra_median_ms" not in summary else summary
    checks = increment_checks(summary, PAPER_EXTRA_100MS, REFERENCE_BETA, SOURCE)
    checks += _pie_above_codel_checks(summary)
    checks += monotone_checks(summary, "pie", [b for b in BETA_ECN if b >= REFERENCE_BETA], "Fig. 10, L238, L242",
                              numbers="L242's increments above")
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
