"""SIAD thesis §4.2, Figs. 4.2–4.10 (notes ``siad-eval.md`` §2.1, §4.1): the algorithm's
components one by one, each as a ``[flows.cc] variant`` of the SIAD controller (Appendix A.3).

Setting (L2189–L2195): two greedy flows over the thesis dumbbell, 10 Mbit/s, 0.5 BDP
(62 500 B ≈ 41 packets), RTT 100 ms, Num_RTT 20, delayed ACKs off (L2191). Choices where the
thesis is silent: a "late" second flow starts 5 s after the first (Figs. 4.7b, 4.8b, 4.9 give
no offset; 5 s is one of Fig. 4.2's); the convergence cases (Figs. 4.2c–d, 4.4, 4.10: the thesis
shows 60 s) run 60 s and measure the split over [start + 15 s, 60 s], the horizon of "converges
after about 15 s" (L2251); the others run 600 s with the 20 s warm-up (quick: 120 s).

Claims: Fixed_Increase rates 3.28/6.36 (10 Mbit/s), 6.51/12.78 (20 Mbit/s) for α 1 vs 2 and
2.64/7.02 for α 1 vs 3 (L2221), rate ratio α₁/α₂ (Eq. 4.3); SI_only never converges and its split
depends on the start offset (0/4/5/6 s, L2203–L2209), its epoch stays the same at 20 Mbit/s and
scales with Num_RTT 30 (L2213); SI_trend converges within ≈ 15 s with the second flow 6 s late
(L2251); SI_trend_fastIncrease shares 4.96/4.6 over 580 s (L2257), and at Num_RTT 20 vs 40 the
40 flow keeps the minimum increase (L2259); AD_only drains the queue at every decrease for
0.5/1.0/1.5 BDP (L2277); Fixed_Decrease (42 packets) underutilizes 0.5 BDP and leaves a standing
queue at 1.0 BDP when unsynchronized (L2281–L2287); SIAD_only converges no better than SI_only
(L2301); SIAD_addDecrease drains the queue even unsynchronized (L2305); SIAD_trend converges
like SI_trend (L2309). The variant list comes from the core (``ccbench list``).

The trend rule (issue 25 item 5). The prose computes ``trend = cwnd_max − prev_cwnd_max`` and
``incthresh = cwnd_max + trend`` (§3.2.2, L1677–1684; full SIAD's listing does so too, L3664–3674);
the printed SI_trend and SIAD_trend listings compute ``trend = ssthresh − prev_max_cwnd`` and
``incthresh = max(ssthresh + trend, ssthresh)`` (A.6 L4725–4747, A.11 L5904–5921), which stays at
ssthresh, α = 1 packet per RTT, unless ssthresh exceeds the previous maximum. The listing is the
code the thesis ran, so it is the main arm (``literal_trend = true``); the prose's rule runs as a
contrast arm (cases ``…-prose``) judged against the same claims; the convergence cases run 60 s
in quick and full runs alike. Which rule reaches L2251/L2309 is in the rows (split per rule), and
a reported row per variant gives each rule's loss-event distance in RTTs, which separates them:
about Num_RTT for the prose's, a Reno epoch (α = 1) for the listing's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import check, contrast, dumbbell, every, flow, rows
from ccbench.experiments.siad.single_flow_traces import flow_metrics, is_nan, link_metrics, trace_panel

FULL_S, QUICK_S, SHORT_S = 600.0, 120.0, 60.0
#: "Convergence is reached after about 15 s" (L2251): the split is measured from start + 15 s.
CONVERGE_AFTER_S = 15.0
#: Equal sharing: the thesis calls 4.96/4.6 (1.08) "about equally" (L2257) and its diagonal
#: sharing ratios span 0.93–1.11 (Tables 4.2/4.3); a split within 1.15 counts as converged.
CONVERGED = 1.15
#: Fixed_Increase rates: one run each in the thesis, so ±15 % per rate (notes §8: trends).
RATE_TOL = 0.15
#: Epoch length (loss-event distance) "stays constant" at 20 Mbit/s and scales 1.5× with
#: Num_RTT 30 (L2213): ±20 %, the issue's tolerance for the feedback rate.
EPOCH_TOL = 0.20


#: The trend rule of SI_trend and SIAD_trend (the ``literal_trend`` key of the controller): the
#: printed listings (A.6 L4725–4747, A.11 L5904–5921: ``trend = ssthresh − prev_max``) run in the
#: main cases, the prose's rule (§3.2.2 L1677–1684: ``trend = cwnd_max − prev_cwnd_max``) in the
#: ``-prose`` contrast cases, judged against the same claims.
LISTING, PROSE = "listing", "prose"


def _case(variant: str, starts=(0.0, 0.0), rate=10, buffer=0.5, duration=FULL_S,
          params: Optional[List[dict]] = None, ref=None, group="", rule: Optional[str] = None) -> dict:
    if rule is not None:
        params = [{**p, "literal_trend": rule == LISTING} for p in (params or [{}, {}])]
    return {"variant": variant, "starts": starts, "rate": rate, "buffer": buffer,
            "duration": duration, "params": params or [{}, {}], "ref": ref, "group": group, "rule": rule}


#: case → its setting; ``ref`` = the thesis's (rate 1, rate 2) in Mbit/s.
CASES: Dict[str, dict] = {
    "fixed-1v2-10M": _case("Fixed_Increase", params=[{"fixed_alpha": 1}, {"fixed_alpha": 2}], ref=(3.28, 6.36), group="fixed"),
    "fixed-1v2-20M": _case("Fixed_Increase", rate=20, params=[{"fixed_alpha": 1}, {"fixed_alpha": 2}], ref=(6.51, 12.78), group="fixed"),
    "fixed-1v3-10M": _case("Fixed_Increase", params=[{"fixed_alpha": 1}, {"fixed_alpha": 3}], ref=(2.64, 7.02), group="fixed"),
    "si-only-0s": _case("SI_only", duration=SHORT_S, group="offset"),
    "si-only-4s": _case("SI_only", (0.0, 4.0), duration=SHORT_S, group="offset"),
    "si-only-5s": _case("SI_only", (0.0, 5.0), duration=SHORT_S, group="offset"),
    "si-only-6s": _case("SI_only", (0.0, 6.0), duration=SHORT_S, group="offset"),
    "si-only-10M": _case("SI_only", group="epoch"),
    "si-only-20M": _case("SI_only", rate=20, group="epoch"),
    "si-only-n30": _case("SI_only", params=[{"num_rtt": 30}, {"num_rtt": 30}], group="epoch"),
    "si-trend-0s": _case("SI_trend", duration=SHORT_S, group="converge", rule=LISTING),
    "si-trend-6s": _case("SI_trend", (0.0, 6.0), duration=SHORT_S, group="converge", rule=LISTING),
    "si-trend-0s-prose": _case("SI_trend", duration=SHORT_S, group="converge", rule=PROSE),
    "si-trend-6s-prose": _case("SI_trend", (0.0, 6.0), duration=SHORT_S, group="converge", rule=PROSE),
    "si-trend-fi": _case("SI_trend_fastIncrease", ref=(4.96, 4.6), group="fast"),
    "si-trend-fi-20v40": _case("SI_trend_fastIncrease", params=[{"num_rtt": 20}, {"num_rtt": 40}], group="fast"),
    "ad-only-0.5": _case("AD_only", group="drain"),
    "ad-only-1.0": _case("AD_only", buffer=1.0, group="drain"),
    "ad-only-1.5": _case("AD_only", buffer=1.5, group="drain"),
    "fixed-dec-0.5": _case("Fixed_Decrease", params=[{"fixed_decrease": 42}] * 2, group="fixdec"),
    "fixed-dec-0.5-late": _case("Fixed_Decrease", (0.0, 5.0), params=[{"fixed_decrease": 42}] * 2, group="fixdec"),
    "fixed-dec-1.0": _case("Fixed_Decrease", buffer=1.0, params=[{"fixed_decrease": 42}] * 2, group="fixdec"),
    "fixed-dec-1.0-late": _case("Fixed_Decrease", (0.0, 5.0), buffer=1.0, params=[{"fixed_decrease": 42}] * 2, group="fixdec"),
    "siad-only-0s": _case("SIAD_only", duration=SHORT_S, group="offset"),
    "siad-only-5s": _case("SIAD_only", (0.0, 5.0), duration=SHORT_S, group="offset"),
    "siad-only-5s-long": _case("SIAD_only", (0.0, 5.0), group="drain"),
    "siad-adddec-0s": _case("SIAD_addDecrease", group="drain"),
    "siad-adddec-5s": _case("SIAD_addDecrease", (0.0, 5.0), group="drain"),
    "siad-trend-6s": _case("SIAD_trend", (0.0, 6.0), duration=SHORT_S, group="converge", rule=LISTING),
    "siad-trend-6s-prose": _case("SIAD_trend", (0.0, 6.0), duration=SHORT_S, group="converge", rule=PROSE),
    "siad-6s": _case("SIAD", (0.0, 6.0), duration=SHORT_S, group="converge"),
    "siad-full": _case("SIAD", group="drain"),
}


def _window(case: dict, duration: float) -> tuple:
    """(duration, warm-up): 60 s cases measure from the late start + 15 s; others skip 20 s."""
    if case["duration"] == SHORT_S:
        return SHORT_S, max(case["starts"]) + CONVERGE_AFTER_S
    return duration, 20.0


def _points(quick: bool) -> List[dict]:
    points = []
    for name, case in CASES.items():
        duration = case["duration"] if case["duration"] == SHORT_S or not quick else QUICK_S
        points.append({"case": name, "duration_s": duration})
    return points


def _flows(case: dict) -> list:
    return [flow("SIAD(20)", name=f"f{i + 1}", delayed_ack=False, start=f"{start:g}s",
                 cc={"variant": case["variant"], **params})
            for i, (start, params) in enumerate(zip(case["starts"], case["params"]))]


def _apply(point: dict) -> dict:
    case = CASES[point["case"]]
    duration, warmup = _window(case, point["duration_s"])
    return {"duration": f"{duration:g}s", "warmup": f"{warmup:g}s",
            "bottleneck.rate": f"{case['rate']}Mbps", "bottleneck.buffer": f"{case['buffer']:g}bdp",
            "flows": _flows(case)}


def _metric(result, point: dict) -> dict:
    return {**link_metrics(result), **flow_metrics(result, "f1", "rate1"), **flow_metrics(result, "f2", "rate2")}


def _compare(summary):
    summary = summary.copy()
    summary["split"] = summary["rate1_mbps"] / summary["rate2_mbps"]
    summary["larger_over_smaller"] = summary["split"].where(summary["split"] >= 1, 1 / summary["split"])
    return summary


def _row(summary, case: str):
    rows = summary[summary["case"] == case]
    return rows.iloc[0] if len(rows) else None


def _fixed_rows(summary) -> list:
    checks = []
    for name, case in CASES.items():
        r = _row(summary, name)
        if case["group"] != "fixed" or r is None:
            continue
        a1, a2 = (p["fixed_alpha"] for p in case["params"])
        for i, (alpha, paper) in enumerate(zip((a1, a2), case["ref"]), start=1):
            ours = float(r[f"rate{i}_mbps"])
            checks.append(check(
                f"Fixed_Increase α {a1} vs {a2}, {case['rate']} Mbit/s: rate of the α {alpha} flow [Mbit/s]",
                f"{paper} (ratio {case['ref'][1] / case['ref'][0]:.2f}, theory α₂/α₁ = {a2 / a1:g}, Eq. 4.3)",
                "Sec. 4.2, L2221", ours, Claim("≈", paper, agree=RATE_TOL), shown=f"{ours:.2f} (ratio {1 / r['split']:.2f})",
                why=f"{ours / paper - 1:+.0%} from the thesis's rate"))
    return checks


def _split_text(r) -> str:
    return f"{r['rate1_mbps']:.2f} / {r['rate2_mbps']:.2f} Mbit/s (×{r['larger_over_smaller']:.2f})"


def _offset_rows(summary) -> list:
    checks = []
    for prefix, label in (("si-only", "SI_only"), ("siad-only", "SIAD_only")):
        cases = [n for n, c in CASES.items() if n.startswith(prefix + "-") and c["group"] == "offset"]
        found = [(n, _row(summary, n)) for n in cases if _row(summary, n) is not None]
        if not found:
            continue
        # "Still both flows never completely converge to equal sharing" (L2211), whatever the
        # offset (the split is random, set by the start, L2203): every offset, so its smallest split.
        least = min(found, key=lambda nr: float(nr[1]["larger_over_smaller"]))
        smallest = float(least[1]["larger_over_smaller"])
        checks.append(check(
            f"{label}: smallest split (larger / smaller rate) over [start 2 + 15 s, 60 s] across start offsets",
            f"never converges at any offset (split beyond ×{CONVERGED}); the split depends on the offset",
            "Sec. 4.2, L2203–L2211, L2301", smallest, Claim("≥", CONVERGED),
            shown=f"×{smallest:.2f} (" + "; ".join(f"{n.rsplit('-', 1)[1]}: {_split_text(r)}" for n, r in found) + ")",
            why=lambda least=least, smallest=smallest: (
                f"with flow 2 at {least[0].rsplit('-', 1)[1]} the split is ×{smallest:.2f} over the window: the "
                "flows look converged there, as the thesis's own traces can look (L2211: full packets make the "
                "rates seem to converge; only longer runs show they do not)")))
    return checks


def _epoch_rows(summary) -> list:
    base, fast, n30 = (_row(summary, n) for n in ("si-only-10M", "si-only-20M", "si-only-n30"))
    if base is None or fast is None or n30 is None or is_nan(base["loss_distance_s"]):
        return [check("SI_only epoch length at 20 Mbit/s and with Num_RTT 30", "×1 and ×1.5", "Sec. 4.2, L2213",
                      None, None, reported="not measured")]
    checks = []
    for other, want, what in ((fast, 1.0, "at 20 vs 10 Mbit/s"), (n30, 1.5, "with Num_RTT 30 vs 20")):
        ratio = float(other["loss_distance_s"] / base["loss_distance_s"])
        checks.append(check(
            f"SI_only loss-event distance {what}", f"×{want:g} (epoch constant with rate, scales with Num_RTT)",
            "Sec. 4.2, L2213", ratio, Claim("≈", want, agree=EPOCH_TOL),
            shown=f"{base['loss_distance_s']:.2f} → {other['loss_distance_s']:.2f} s (×{ratio:.2f})",
            why=f"×{ratio:.2f} instead of ×{want:g}"))
    return checks


#: How a row names a case's trend rule.
RULE_TEXT = {LISTING: "trend as the listing prints it (A.6 L4725–4747, A.11 L5904–5921)",
             PROSE: "contrast arm: trend as the prose says (L1677–1684)"}
#: The convergence cases, main arm (listing) first, then the prose contrast arm.
CONVERGE_CASES = ("si-trend-0s", "si-trend-6s", "siad-trend-6s", "siad-6s",
                  "si-trend-0s-prose", "si-trend-6s-prose", "siad-trend-6s-prose")


def _label(name: str) -> str:
    rule = CASES[name]["rule"]
    return CASES[name]["variant"] + ("" if rule is None else f" [{RULE_TEXT[rule]}]")


def _epoch_rtts(r, name: str) -> float:
    """The link's mean loss-event distance in mean RTTs: base 100 ms plus the mean queue delay
    (fill × buffer, the buffer being ``buffer`` BDPs of 100 ms)."""
    rtt_s = 0.1 * (1 + float(r["queue_fill_mean"]) * CASES[name]["buffer"])
    return float(r["loss_distance_s"]) / rtt_s


def _converge_rows(summary) -> list:
    checks = []
    for name in CONVERGE_CASES:
        r = _row(summary, name)
        if r is None:
            continue
        late = max(CASES[name]["starts"])
        split = float(r["larger_over_smaller"])
        if CASES[name]["rule"] == PROSE:
            # The prose's trend rule is an arm of ours beside the listing's: no thesis claim.
            checks.append(contrast(
                f"{_label(name)}, flow 2 at {late:g} s: split (larger / smaller) over "
                f"[{late + CONVERGE_AFTER_S:g} s, 60 s]",
                "an arm of ours (the prose's trend rule) beside the listing's, judged in the row above",
                "Sec. 3.2.2, L1677–1684", split, shown=_split_text(r)))
            continue
        checks.append(check(
            f"{_label(name)}, flow 2 at {late:g} s: split (larger / smaller) over "
            f"[{late + CONVERGE_AFTER_S:g} s, 60 s]",
            f"converged within ≈ 15 s (split within ×{CONVERGED})" if name != "siad-6s" else
            f"full SIAD, the components' reference: converged (split within ×{CONVERGED})",
            "Sec. 4.2, L2251, L2309", split, Claim("≤", CONVERGED), shown=_split_text(r),
            why=f"split ×{split:.3f} beyond ×{CONVERGED} after 15 s"))
    for variant, names in (("SI_trend", ("si-trend-0s", "si-trend-6s", "si-trend-0s-prose", "si-trend-6s-prose")),
                           ("SIAD_trend", ("siad-trend-6s", "siad-trend-6s-prose"))):
        found = [(n, _row(summary, n)) for n in names if _row(summary, n) is not None]
        found = [(n, r) for n, r in found if not is_nan(r["loss_distance_s"])]
        if not found:
            continue
        checks.append(contrast(
            f"{variant}: loss-event distance per trend rule (what separates the two rules)",
            "our two arms side by side; the thesis gives no distance for them (Figs. 4.4, 4.10 are traces)",
            "Sec. 4.2, L2251, L2309", None,
            shown="; ".join(f"{n}: {r['loss_distance_s']:.2f} s ≈ {_epoch_rtts(r, n):.0f} RTTs" for n, r in found),
            reason="the listing's incthresh = max(2·ssthresh − prev_max, ssthresh) is ssthresh unless "
                   "ssthresh exceeds the previous maximum, so α = 1 packet per RTT; the prose's "
                   "max(2·cwnd_max − prev_max, ssthresh) targets the last maximum plus its change"))
    r = _row(summary, "si-trend-fi")
    if r is not None:
        split = float(r["larger_over_smaller"])
        checks.append(check(
            "SI_trend_fastIncrease, equal Num_RTT: split of the mean rates over 580 s",
            f"4.96 / 4.6 Mbit/s (×1.08: about equal, within ×{CONVERGED})", "Sec. 4.2, L2257", split,
            Claim("≤", CONVERGED), shown=_split_text(r), why=f"split ×{split:.2f} beyond ×{CONVERGED}"))
    r = _row(summary, "si-trend-fi-20v40")
    if r is not None:
        split = float(r["split"])
        checks.append(check(
            "SI_trend_fastIncrease, Num_RTT 20 vs 40: rate 20 / rate 40",
            f"the 40 flow keeps the minimum increase: the smaller share (beyond ×{CONVERGED})", "Sec. 4.2, L2259",
            split, Claim("≥", CONVERGED), shown=_split_text(r), why=f"rate ratio ×{split:.2f}: about equal"))
    return checks


#: Drain cases → (the thesis's words, whether a standing queue is expected; None: no claim).
DRAINS = {
    "ad-only": ("AD_only: the queue empties (min fill 0)", "queue emptied at every decrease", "Sec. 4.2, L2277",
                ("ad-only-0.5", "ad-only-1.0", "ad-only-1.5"), False),
    "siad-adddec": ("SIAD_addDecrease: the queue empties (min fill 0)", "drains even unsynchronized",
                    "Sec. 4.2, L2305", ("siad-adddec-0s", "siad-adddec-5s"), False),
    "siad-full": ("SIAD: the queue empties (min fill 0)", "drains", "Sec. 4.3, L2355", ("siad-full",), False),
    "fixed-dec": ("Fixed_Decrease 1 BDP, flow 2 5 s late: a standing queue (min fill > 0)",
                  "standing queue when unsynchronized", "Sec. 4.2, L2287", ("fixed-dec-1.0-late",), True),
}


def _run_text(name: str, r) -> str:
    case = CASES[name]
    return (f"{case['buffer']:g} BDP, flow 2 at {max(case['starts']):g} s: min {r['queue_fill_min']:.3f}, "
            f"mean {r['queue_fill_mean']:.2f}, util {r['utilization']:.1%}")


def _drain_rows(summary) -> list:
    checks = []
    for what, paper, source, names, standing in DRAINS.values():
        found = [(n, _row(summary, n)) for n in names if _row(summary, n) is not None]
        measured = [(n, r) for n, r in found if not is_nan(r["queue_fill_min"])]
        if not found:
            continue
        if not measured:
            checks.append(check(what, paper, source, None, None, reported="not measured"))
            continue
        held = [(n, r) for n, r in measured if (r["queue_fill_min"] > 0) == standing]
        checks.append(every(what, paper, source, len(held), len(measured), unit="runs ("
                            + "; ".join(_run_text(n, r) for n, r in measured) + ")",
                            why="not in " + "; ".join(_run_text(n, r) for n, r in measured if (n, r) not in held)))
    r = _row(summary, "siad-only-5s-long")
    if r is not None:
        checks.append(check(
            "SIAD_only 0.5 BDP, flow 2 at 5 s: min queue fill", "no Additional Decrease: Adaptive Decrease "
            "empties the queue only when the flows' decreases are synchronized", "Sec. 4.2, L2269, L2297", None if is_nan(r["queue_fill_min"]) else float(r["queue_fill_min"]),
            None, shown=_run_text("siad-only-5s-long", r),
            reported="not measured" if is_nan(r["queue_fill_min"]) else
            "the thesis shows no SIAD_only run that keeps a standing queue (Fig. 4.8, L2301, is about "
            "convergence) and ties draining to synchronized decreases (L2269), which this run does not record"))
    r = _row(summary, "fixed-dec-0.5")
    if r is not None:
        ad = _row(summary, "ad-only-0.5")
        what = "Fixed_Decrease 42 pkts, 0.5 BDP, synchronized: utilization over AD_only's"
        paper = "underutilizes (84 packets cut from a 41-packet buffer)"
        if ad is None:
            checks.append(check(what, paper, "Sec. 4.2, L2281", float(r["utilization"]), None,
                                shown=f"{r['utilization']:.1%}", reported="AD_only at 0.5 BDP not run"))
        else:
            ratio = float(r["utilization"] / ad["utilization"])
            checks.append(check(
                what, paper + ", below AD_only's", "Sec. 4.2, L2281", ratio, Claim("≤", 1.0),
                shown=f"{r['utilization']:.1%} / {ad['utilization']:.1%} = {ratio:.3f}",
                why="Fixed_Decrease keeps the link as busy as AD_only"))
    return checks


def _comparison(summary) -> list:
    return rows(_fixed_rows(summary) + _offset_rows(summary) + _epoch_rows(summary)
                + _converge_rows(summary) + _drain_rows(summary))


#: The traces drawn (60 s each, as the thesis's figures).
TRACES = [("fixed-1v2-10M", "Fig 4.3a Fixed_Increase α 1 vs 2"), ("si-only-6s", "Fig 4.2d SI_only, +6 s"),
          ("si-trend-6s", "Fig 4.4 SI_trend, +6 s"), ("ad-only-1.0", "Fig 4.6 AD_only, 1.0 BDP"),
          ("fixed-dec-1.0-late", "Fig 4.7d Fixed_Decrease, 1.0 BDP, +5 s"),
          ("siad-adddec-5s", "Fig 4.9 SIAD_addDecrease, +5 s")]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, axes = plt.subplots(2, 4, figsize=(20, 8))
    for ax, (name, title) in zip(list(axes[0, :3]) + list(axes[1, :3]), TRACES):
        result = EXPERIMENT.rerun({"case": name, "duration_s": SHORT_S}, 1, ["output.bin=\"100ms\""])
        trace_panel(ax, result, title, ["f1", "f2"])
    ax = axes[0, 3]
    fixed = [(n, c) for n, c in CASES.items() if c["group"] == "fixed"]
    x = range(len(fixed))
    for label, offset in (("thesis", -0.2), ("ours", 0.2)):
        for j in (0, 1):
            values = [c["ref"][j] if label == "thesis" else float(summary.loc[summary["case"] == n, f"rate{j + 1}_mbps"].iloc[0])
                      for n, c in fixed]
            ax.bar([i + offset + (j - 0.5) * 0.2 for i in x], values, width=0.2,
                   color=f"C{j}", alpha=0.45 if label == "thesis" else 0.9,
                   label=f"{label} flow {j + 1}")
    ax.set_xticks(list(x), [n for n, _ in fixed], fontsize="x-small")
    ax.set_ylabel("mean rate (Mbit/s)")
    ax.set_title("Fixed_Increase rates: thesis (light) vs ours (L2221)", fontsize="small")
    ax.legend(fontsize="xx-small")
    ax = axes[1, 3]
    s = summary.dropna(subset=["larger_over_smaller"])
    ax.barh(s["case"], s["larger_over_smaller"], color="C2")
    ax.axvline(CONVERGED, color="k", ls="--", lw=1, label=f"converged ≤ ×{CONVERGED}")
    ax.set_xscale("log")
    ax.tick_params(labelsize="xx-small")
    ax.set_title("split (larger / smaller rate) per case", fontsize="small")
    ax.legend(fontsize="xx-small")
    fig.suptitle("SIAD thesis §4.2: components, two flows, 10 Mbit/s, 0.5 BDP, RTT 100 ms, no delayed ACKs")
    fig.tight_layout()
    return save(fig, out_dir / "siad-components.png")


EXPERIMENT = Experiment(
    name="siad-components",
    description="SIAD thesis §4.2 (Figs. 4.2–4.10): the component variants, two flows, 10 Mbit/s, "
                "0.5 BDP, RTT 100 ms, delayed ACKs off",
    base=dumbbell("10Mbps", 0.5, _flows(CASES["siad-full"])),
    grid={},
    points=_points(quick=False),
    quick_points=_points(quick=True),
    apply=_apply,
    metric=_metric,
    compare=_compare,
    figure=_figure,
    comparison=_comparison,
)
