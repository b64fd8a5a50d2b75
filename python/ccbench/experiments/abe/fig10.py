"""ABE paper §IV-B, Fig. 10: CDF of the bottleneck queueing delay for one long CUBIC flow with
ECN through CoDel and PIE at 10 Mbps (the runs of Fig. 9) at RTT 100 ms, per beta_ecn.

Paper (seed text, L242): at RTT 100 ms, against the CUBIC default beta_ecn 0.7, the median / 90th
percentile grow by 6 / 3 ms (PIE, 0.85), 12 / 5 ms (PIE, 0.95), 1 / 1 ms (CoDel, 0.85) and
3 / 2 ms (CoDel, 0.95); "the trend for the queuing delay is also similar to that of NewReno"
(L238). Pass criteria (notes ``experiments-abe.md`` §3 Fig. 10): each increment within ±3 ms or
±50 %, whichever is larger; PIE's increments larger than CoDel's.

The scenario is Fig. 9's (``fig9.EXPERIMENT.base``: CUBIC with HyStart, IW 10, SACK on, delayed
ACKs off, 300 s, 20 s warm-up, 5 seeds) with per-packet sojourns recorded; the delay measure,
its window and the CDF construction are Fig. 8's (``fig8.delay_metric``: enqueue to start of
transmission, core percentiles; see fig8's module doc for why the absolute levels sit below the
AQM targets while the increments are comparable).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.abe import fig8, fig9
from ccbench.experiments.base import Experiment

BETA_ECN = [0.5, 0.7, 0.85, 0.95]
REFERENCE_BETA = fig9.REFERENCE_BETA
#: L242, RTT 100 ms: (extra median, extra 90th percentile) in ms over beta_ecn 0.7.
PAPER_EXTRA_100MS = {
    ("pie", 0.85): (6, 3), ("pie", 0.95): (12, 5),
    ("codel", 0.85): (1, 1), ("codel", 0.95): (3, 2),
}


def _compare(summary):
    return fig8.add_increments(summary, REFERENCE_BETA)


def _pie_above_codel_rows(summary, rtt_ms: int = 100) -> list:
    """Notes §3 Fig. 10: PIE's increments exceed CoDel's, per beta_ecn and statistic."""
    rows = []
    for beta_ecn in sorted({b for _, b in PAPER_EXTRA_100MS}):
        pie, codel = fig8.select(summary, "pie", rtt_ms, beta_ecn), fig8.select(summary, "codel", rtt_ms, beta_ecn)
        if pie is None or codel is None:
            continue
        for stat in ("median", "p90"):
            p, c = float(pie[f"extra_{stat}_ms"]), float(codel[f"extra_{stat}_ms"])
            ok = p > c
            rows.append({
                "what": f"RTT {rtt_ms} ms, beta_ecn {beta_ecn:g}: PIE adds more to the {stat} than CoDel",
                "paper": "yes (L242)", "ours": f"PIE {p:+.1f} ms, CoDel {c:+.1f} ms",
                "verdict": "agrees" if ok else "differs", "reason": "" if ok else "PIE's increment is not larger",
            })
    return rows


def _comparison(summary) -> list:
    summary = _compare(summary) if "extra_median_ms" not in summary else summary
    rows = fig8.increment_rows(summary, PAPER_EXTRA_100MS, REFERENCE_BETA, "L242")
    rows += _pie_above_codel_rows(summary)
    rows += fig8.monotone_rows(summary, "pie", [b for b in BETA_ECN if b >= REFERENCE_BETA], "L238, L242")
    return rows


def _figure(summary, out_dir: Path) -> Path:
    return fig8.cdf_figure(summary, out_dir / "abe-fig10.png",
                           "ABE Fig. 10: queueing delay, one CUBIC flow with ECN, 10 Mbps", [100])


_BASE = dict(fig9.EXPERIMENT.base)
_BASE["output"] = {"sojourn_samples": True}

EXPERIMENT = Experiment(
    name="abe-fig10",
    description="ABE Fig. 10: queueing-delay CDF of one CUBIC flow with ECN through CoDel and PIE "
                "(10 Mbps, RTT 100 ms) per beta_ecn; increments over beta_ecn 0.7",
    base=_BASE,
    grid={"aqm": ["codel", "pie"], "rtt_ms": [100], "beta_ecn": BETA_ECN},
    seeds=(1, 2, 3, 4, 5),
    quick_seeds=(1, 2),
    quick_overrides={"duration": "150s"},
    apply=fig8.apply_point,
    metric=fig8.delay_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
