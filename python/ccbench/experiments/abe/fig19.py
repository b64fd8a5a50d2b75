"""ABE paper Appendix C, Fig. 19 (L394–L411): PIE without (a) and with (b) the rule (Linux 3.17's
default, L207) that drops instead of marks ECN-capable packets once PIE's probability exceeds 10 %.

Scenario (L394): a PIE bottleneck carrying 20 long-lived TCP flows with ECN for 300 s, all started
within the first second, plus one short flow starting at 50 s, for several beta_ecn. The paper
gives neither the capacity, the RTT, the congestion control, the short flow's size nor the
beta_ecn grid (not given, notes ``experiments-abe.md`` §3 Fig. 19, §5.5); we take the notes'
suggestions: 10 Mbps, base RTT 100 ms, NewReno, a 1 MB short flow, beta_ecn 0.5/0.7/0.85/0.95,
every flow using the same beta_ecn. As in the paper's other ns-2 runs (notes §1.1, §5): IW 3,
SACK on, delayed ACKs off, no SYN handshake (ns-2's one-way TCP), the 1000-packet Linux limit.

The figure is a simulation (L394), and all simulations ran on ns-2.35 (L376) with ns-2's own PIE
code (L203), so PIE is ns-2's ``pie.cc`` (``common.PIE_NS2``, ``profile = "ns2"``: target 20 ms,
tupdate 30 ms, alpha 0.125, beta 1.25, burst 100 ms), with ``ecn_drop_above = 1.0`` (the rule off,
Fig. 19(a): ``mark_p_`` unused) or ``0.1`` (on, Fig. 19(b): ns-2's ``mark_p_`` = 0.1, the same 10 %
line as Linux's default). ns-2's ``p`` is not capped at 1.
The long flows' starts are drawn per seed (uniform in [0, 1) s) like Figs. 16–18
(``seed_in_point``). Host timing noise stays at the
project default: with 21 flows, exact periodicity would add phase effects ns-2 avoids by
randomised starts alone only partly. 20 seeds per point (the notes suggest 5; the short flow's FCT
is noisy), 2 in the quick variant.

Measures: the links series is binned at PIE's tupdate (30 ms), so each row's
``aqm_probability`` is one PIE update; "p > 10 %" counts the updates after the 10 s warm-up with
``p > 0.1``, and "p in slow start" is the largest ``p`` of the first 10 s. Queueing delay is the
core's per-packet sojourn summary over [10 s, 300 s]; the short flow's FCT is the core's.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

from ccbench.experiments.abe.common import PIE_NS2, order_check, trend_check
from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim

LONG_FLOWS = 20
BETA_ECN = [0.5, 0.7, 0.85, 0.95]
#: ``ecn_drop_above`` per rule: 1.0 never drops an ECN-capable packet (rule off), 0.1 is the 10 %
#: line of L207 (ns-2's ``mark_p_``).
RULES = {"off": 1.0, "on": 0.1}
WARMUP_S = 10.0
PROBABILITY_LINE = 0.1
SHORT_FLOW = LONG_FLOWS  # index of the short flow in ``flows``
BDP_PACKETS = 83  # 10 Mbps × 100 ms in 1500-byte packets (L312)
#: Notes §3 Fig. 19 pass criteria (SIM class).
HIGH_BETA = 0.85
RULE_OFF_MIN_SHARE = 0.10
RULE_OFF_MAX_P99_MS = 100.0
TRACE_SEED = 1


def long_flow_starts(seed: int) -> list:
    """L394: the long flows start within the first second, drawn per seed."""
    draw = random.Random(f"abe-fig19-starts-{seed}")
    return [draw.uniform(0.0, 1.0) for _ in range(LONG_FLOWS)]


def _apply(point: dict) -> dict:
    changes = {
        # ns-2's PIE: Fig. 19 is a simulation (L394, L376; L203).
        "bottleneck.aqm_params": {**PIE_NS2, "ecn_drop_above": RULES[point["rule"]]},
        "flows.cc.beta_ecn": point["beta_ecn"],
    }
    for i, start in enumerate(long_flow_starts(point.get("seed", TRACE_SEED))):
        changes[f"flows[{i}].start"] = f"{start:.6f}s"
    return changes


def _metric(result, point: dict) -> dict:
    link = result.link("bottleneck")
    series = result.links[result.links["link"] == "bottleneck"]
    updates = series[series["t_s"] > WARMUP_S]["aqm_probability"]
    short = result.flow("short")
    return {
        "p_above_10pct_share": float((updates > PROBABILITY_LINE).mean()),
        "p_mean": float(updates.mean()),
        "p_p95": float(updates.quantile(0.95)),
        "p_max_slow_start": float(series[series["t_s"] <= WARMUP_S]["aqm_probability"].max()),
        "queue_delay_p50_ms": link["queue_delay_ms"]["p50"],
        "queue_delay_p99_ms": link["queue_delay_ms"]["p99"],
        "utilization": link["utilization"],
        "aqm_drops": link["aqm_drops"],
        "ecn_marks": link["ecn_marks"],
        "short_fct_s": short["fct_s"],
        "short_ecn_reductions": short["ecn_reductions"],
        "short_loss_reductions": short["loss_reductions"],
        "short_timeouts": short["timeouts"],
    }


def _row(summary, rule: str, beta: float):
    rows = summary[(summary["rule"] == rule) & (summary["beta_ecn"] == beta)]
    return None if rows.empty else rows.iloc[0]


def _window_reason(row) -> str:
    window = BDP_PACKETS / LONG_FLOWS
    cut = window * (1 - row["beta_ecn"])
    return (f"{LONG_FLOWS} flows share a BDP of {BDP_PACKETS} packets, so each window is about "
            f"{window:.0f} packets plus its share of the queue: a cut by 1 − beta_ecn removes {cut:.1f} packets, "
            + ("no more than" if cut <= 1 else f"only {cut:.1f}× what") + " additive increase adds per RTT, so ECN "
            f"alone (one cut per RTT) hardly holds the queue; p climbs to the 10 % line, where drops take over, "
            f"and is held there (mean {row['p_mean']:.3f}, {row['p_above_10pct_share']:.0%} of the updates above it). "
            "The paper gives neither capacity nor RTT (L394; the notes' 10 Mbps / 100 ms used); larger "
            "windows would need less p")


def _far(check: Check, ours: float, bound: float, what: str) -> Check:
    """A bound of the notes far from ours is still a claim: the reason says how far."""
    if check.verdict == "agrees":
        check.reason = f"the bound ({what}) is far from ours: {ours:.3g} against {bound:g}"
    return check


def _rule_off_checks(summary) -> list:
    """(a), L396: p "frequently" rises "significantly" above 10 % for beta_ecn > 0.7 (the notes'
    reading: in at least 10 % of PIE's updates), even in slow start with 0.5 (above 10 %), and
    "queuing delays remain bounded" (the notes' reading: p99 within 100 ms): judged."""
    checks = []
    for beta in [b for b in BETA_ECN if b >= HIGH_BETA]:
        row = _row(summary, "off", beta)
        if row is None:
            continue
        share = float(row["p_above_10pct_share"])
        check = Check(
            f"(a) rule off, beta_ecn {beta:g}: share of PIE updates with p > 10 %",
            f"p frequently rises significantly above 10 % for beta_ecn > 0.7 (notes: ≥ {RULE_OFF_MIN_SHARE:.0%})",
            "Fig. 19(a), App. C, L396", share, Claim("≥", RULE_OFF_MIN_SHARE),
            shown=mean_spread(row, "p_above_10pct_share", ".3f", note=f"mean p {row['p_mean']:.3f}"), of=("p_mean",))
        if check.verdict != "agrees":
            check.reason = f"p is above 10 % in only {share:.1%} of the updates"
        checks.append(_far(check, share, RULE_OFF_MIN_SHARE, "the notes' reading of \"frequently\""))
        p99 = float(row["queue_delay_p99_ms"])
        check = Check(
            f"(a) rule off, beta_ecn {beta:g}: p99 queueing delay, ms",
            f"queueing delays remain bounded (notes: ≤ {RULE_OFF_MAX_P99_MS:g} ms)", "Fig. 19(a), App. C, L396", p99,
            Claim("≤", RULE_OFF_MAX_P99_MS),
            shown=mean_spread(row, "queue_delay_p99_ms", ".1f", unit="ms", note=f"max {row['queue_delay_p99_ms_max']:.1f}"),
            of=("queue_delay_p99_ms",))
        if check.verdict != "agrees":
            check.reason = f"the p99 delay reaches {p99:.1f} ms"
        checks.append(_far(check, p99, RULE_OFF_MAX_P99_MS, "the notes' reading of \"bounded\""))
    row = _row(summary, "off", 0.5)
    if row is not None:
        peak = float(row["p_max_slow_start"])
        check = Check(
            "(a) rule off, beta_ecn 0.5: largest p in the first 10 s (slow start)",
            "p rises above 10 % even with beta_ecn 0.5 during slow start", "Fig. 19(a), App. C, L396", peak,
            Claim("≥", PROBABILITY_LINE), shown=mean_spread(row, "p_max_slow_start", ".3f"), of=("p_max_slow_start",))
        if check.verdict != "agrees":
            check.reason = "slow start's overshoot does not drive p above 10 %"
        checks.append(_far(check, peak, PROBABILITY_LINE, "the paper's 10 %, which it only says p exceeds"))
    return checks


def _rule_on_checks(summary) -> list:
    checks = []
    for beta in BETA_ECN:
        row = _row(summary, "on", beta)
        if row is None:
            continue
        # "Controlled under 10 %" (L398) as the notes read it: at most 5 % of the updates above
        # 10 %, i.e. the 95th percentile of p at most 0.10.
        check = Check(f"(b) rule on, beta_ecn {beta:g}: 95th percentile of PIE's p over its updates",
                      "drop/mark probability controlled under 10 %", "Fig. 19(b), App. C, L398",
                      float(row["p_p95"]), Claim("≤", PROBABILITY_LINE),
                      shown=mean_spread(row, "p_p95", ".3f", note=f"mean p {row['p_mean']:.3f}, "
                                        f"{row['p_above_10pct_share']:.1%} of the updates above 10 %"))
        if check.verdict != "agrees":
            check.reason = _window_reason(row)
        checks.append(check)
    on = summary[summary["rule"] == "on"].sort_values("beta_ecn")
    if len(on) >= 2:
        # L398: "the queuing delay is increased with larger beta_ecn"; L400: "large beta_ecn results
        # in dropping more packets": both trends judged, the reach from the seed spreads.
        betas = on["beta_ecn"].tolist()
        checks.append(trend_check(
            "(b) rule on: median queueing delay increases with beta_ecn", "delay increased with larger beta_ecn",
            "Fig. 19(b), App. C, L398, L400", betas, on["queue_delay_p50_ms"].tolist(), unit=" ms", fmt=".1f",
            stds=on["queue_delay_p50_ms_std"].tolist(), of=("queue_delay_p50_ms",)))
        checks.append(trend_check(
            "(b) rule on: more AQM drops with larger beta_ecn", "large beta_ecn results in dropping more packets",
            "Fig. 19(b), App. C, L400", betas, on["aqm_drops"].tolist(), fmt=".0f",
            stds=on["aqm_drops_std"].tolist(), of=("aqm_drops",)))
    return checks


def _monotone(values, slack: float = 0.0) -> bool:
    return all(b >= a - slack for a, b in zip(values, values[1:]))


def _contrast_checks(summary) -> list:
    """(a) against (b) at the same beta_ecn, judged: the median delay is higher with the rule on
    (L400: "Use of large beta_ecn with less that 10% marking probability increases queuing
    delay"), and the short flow takes longer with it (L411: the rule "is detrimental to short
    flows"). The reach of the missing seeds is 3 standard errors of the difference of the means."""
    checks = []
    for beta in BETA_ECN:
        off, on = _row(summary, "off", beta), _row(summary, "on", beta)
        if off is None or on is None:
            continue
        if beta >= HIGH_BETA:
            checks.append(order_check(
                f"beta_ecn {beta:g}: median queueing delay higher with the rule on",
                "counting CE marks keeps delay low (a); < 10 % marking raises it (b)", "Fig. 19, App. C, L400",
                float(on["queue_delay_p50_ms"]), float(off["queue_delay_p50_ms"]), labels=("on", "off"), unit=" ms",
                fmt=".1f", reach=3 * _error(on, off, "queue_delay_p50_ms"), of=("queue_delay_p50_ms",)))
        error = _error(on, off, "short_fct_s")
        check = order_check(
            f"beta_ecn {beta:g}: the 1 MB flow at 50 s takes longer with the rule on",
            "the rule is detrimental to short flows", "Fig. 19, App. C, L411",
            float(on["short_fct_s"]), float(off["short_fct_s"]), labels=("on", "off"), unit=" s", fmt=".2f",
            reach=3 * error, why=_short_flow_reason(off, on), of=("short_fct_s",))
        check.shown += (f" (± {error:.2f} s.e.; {int(on['seeds'])} seeds); its loss reductions "
                        f"{on['short_loss_reductions']:.1f} vs {off['short_loss_reductions']:.1f}")
        checks.append(check)
    return checks


def _error(on, off, column: str) -> float:
    """Standard error of the difference of two seed means."""
    return math.sqrt(on[f"{column}_std"] ** 2 / on["seeds"] + off[f"{column}_std"] ** 2 / off["seeds"])


def _short_flow_reason(off, on) -> str:
    return (f"the rule costs the flow drops ({on['short_loss_reductions']:.1f} loss reductions against "
            f"{off['short_loss_reductions']:.1f} without it), but it drops the long flows' packets too "
            f"({on['aqm_drops']:.0f} AQM drops against {off['aqm_drops']:.0f}), halving their windows as well; a 1 MB "
            f"flow among {LONG_FLOWS} long ones spends most of its {off['short_fct_s']:.0f} s in congestion "
            f"avoidance at about a 1/{LONG_FLOWS + 1} share, so its FCT hardly depends on how its slow start went "
            "(the paper does not give the short flow's size, L394; the notes suggest 1 MB)")


def _comparison(summary) -> list:
    checks = _rule_off_checks(summary) + _rule_on_checks(summary) + _contrast_checks(summary)
    return [check.row() for check in checks]


def trace(rule: str, beta_ecn: float, seed: int = TRACE_SEED):
    """One Fig. 19 run with per-packet sojourns, re-run for the figure."""
    return EXPERIMENT.rerun({"rule": rule, "beta_ecn": beta_ecn}, seed, ["output.sojourn_samples=true"])


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    betas = sorted(set(summary["beta_ecn"]))
    fig, axes = plt.subplots(2, 3, figsize=(15, 7.5))
    for row, (rule, label) in enumerate((("off", "(a) 10 % rule off"), ("on", "(b) 10 % rule on"))):
        for i, beta in enumerate(betas):
            _plot_trace(axes[row], trace(rule, beta), f"C{i}", f"β_ecn={beta:g}")
        axes[row][0].axhline(PROBABILITY_LINE, color="k", ls=":", lw=1)
        axes[row][0].set_ylabel(f"{label}\nPIE probability p")
        axes[row][1].set_ylabel("queueing delay, 1 s median (ms)")
        _plot_summary(axes[row][2], summary[summary["rule"] == rule])
        for ax in axes[row][:2]:
            ax.set_xlabel("time (s)")
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small")
    fig.suptitle(f"ABE Fig. 19: PIE (ns-2), 20 NewReno flows with ECN + 1 MB at 50 s, "
                 f"10 Mbps, 100 ms (traces: seed {TRACE_SEED})")
    return save(fig, out_dir / "abe-fig19.png")


def _plot_trace(axes, result, colour: str, label: str) -> None:
    links = result.links[result.links["link"] == "bottleneck"]
    axes[0].plot(links["t_s"], links["aqm_probability"], color=colour, lw=0.4, label=label)
    sojourn = result.sojourn[result.sojourn["link"] == "bottleneck"]
    per_second = sojourn.groupby(sojourn["t_s"].astype(int))["sojourn_ms"].median()
    axes[1].plot(per_second.index, per_second.values, color=colour, lw=0.8, label=label)


def _plot_summary(ax, summary) -> None:
    summary = summary.sort_values("beta_ecn")
    ax.plot(summary["beta_ecn"], 100 * summary["p_above_10pct_share"], "o-", color="C3",
            label="updates with p > 10 % (%)")
    ax.plot(summary["beta_ecn"], summary["queue_delay_p50_ms"], "s-", color="C0", label="median delay (ms)")
    ax.plot(summary["beta_ecn"], summary["queue_delay_p99_ms"], "^--", color="C0", label="p99 delay (ms)")
    ax.set_xlabel("β_ecn")
    ax.set_title("seed means")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="x-small")


def _flows() -> list:
    common = {"cca": "newreno", "ecn": True, "initial_window": 3, "sack": True, "delayed_ack": False,
              "handshake": False, "cc": {"beta_ecn": 0.5}}
    flows = [{"name": f"long-{i}", **common} for i in range(LONG_FLOWS)]
    return flows + [{"name": "short", "start": "50s", "size": "1MB", **common}]


EXPERIMENT = Experiment(
    name="abe-fig19",
    description="ABE Fig. 19: PIE (ns-2) without (a) and with (b) the 10 % ECN-drop rule; "
                "20 long NewReno flows with ECN and a 1 MB flow at 50 s, 10 Mbps, 100 ms, 300 s",
    base={
        "duration": "300s",
        "warmup": f"{WARMUP_S:g}s",
        "seed": 1,
        "bottleneck": {"rate": "10Mbps", "rtt": "100ms", "buffer": "1000p", "aqm": "pie", "ecn": True,
                       "aqm_params": PIE_NS2},
        "flows": _flows(),
        # One links row per PIE update (tupdate 30 ms), so aqm_probability samples every update.
        "output": {"bin": "30ms", "sojourn_samples": False},
    },
    grid={"rule": list(RULES), "beta_ecn": BETA_ECN},
    seed_in_point=True,
    seeds=tuple(range(1, 21)),
    quick_seeds=(1, 2),
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
