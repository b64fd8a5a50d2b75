"""SIAD thesis §4.3.2 (1), Fig. 4.15 (notes ``siad-eval.md`` A3, §4.3): one SIAD(20) flow,
10 Mbit/s, 0.5 BDP (of 100 ms); the base RTT changes 100 → 40 ms at 30 s → 140 ms at 60 s.

The thesis moves the bottleneck's delay (L2391). The ``[bottleneck]`` shorthand keeps
2 × delay ≤ the flow's RTT, so the same link is written in the general ``[[links]]`` form: one
link r1→r2 with a one-way delay of 50 → 20 → 70 ms and no access delay (its ACK direction gets a
10 000-packet queue, as the shorthand's). The figure shows 90 s; the thesis does not say more.

Claims (L2393–L2399): SIAD takes a few overshoots to adapt to the smaller RTT (incthresh and the
trend must re-adapt to the smaller window) and adapts to the larger RTT after one decrease (too
large, so the link idles briefly, the minimum delay is re-measured, Fast Increase refills it).
Each phase is measured on its own window of the same deterministic run (the core's summary is
over [warm-up, duration], and a run cut at 60 s is the first 60 s of the 90 s run): the first
10 s after each change (adaptation) and the rest (settled).
"""

from __future__ import annotations

from pathlib import Path

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Claim
from ccbench.experiments.siad.common import BIN, UTIL_MIN, check, every, flow, rows
from ccbench.experiments.siad.single_flow_traces import flow_metrics, is_nan, link_metrics, trace_panel

#: phase → (window start, window end) in s.
CHANGES = [{"at": "30s", "delay": "20ms"}, {"at": "60s", "delay": "70ms"}]
PHASES = {"100 ms": (10.0, 30.0), "40 ms, adapting": (30.0, 40.0), "40 ms": (40.0, 60.0),
          "140 ms, adapting": (60.0, 70.0), "140 ms": (70.0, 90.0)}


def base() -> dict:
    return {"duration": "90s", "warmup": "10s", "output": {"bin": BIN, "sojourn_samples": False},
            "links": [{"name": "bottleneck", "from": "r1", "to": "r2", "rate": "10Mbps", "delay": "50ms",
                       "rtt": "100ms", "buffer": "0.5bdp", "reverse": {"buffer": "10000p"},
                       "changes": CHANGES}],
            "flows": [{**flow("SIAD(20)", name="flow"), "from": "r1", "to": "r2"}]}


def _apply(point: dict) -> dict:
    start, end = PHASES[point["phase"]]
    # A change must fall inside the run: a run cut at 60 s leaves out the one at 60 s.
    changes = [c for c in CHANGES if float(c["at"].rstrip("s")) < end]
    return {"duration": f"{end:g}s", "warmup": f"{start:g}s", "links[0].changes": changes}


def _metric(result, point: dict) -> dict:
    return {**link_metrics(result), **flow_metrics(result, "flow", "siad")}


def _comparison(summary) -> list:
    checks = []
    for _, r in summary.iterrows():
        phase = r["phase"]
        what = f"RTT {phase} ({PHASES[phase][0]:g}–{PHASES[phase][1]:g} s)"
        drained = None if is_nan(r["queue_fill_min"]) else bool(r["queue_fill_min"] == 0)
        shown = (f"util {r['utilization']:.1%}, min fill "
                 f"{'n/a' if drained is None else format(r['queue_fill_min'], '.3f')}, mean fill "
                 f"{r['queue_fill_mean']:.2f}, {r['loss_events']:.0f} loss events, "
                 f"{r['siad_timeouts']:.0f} timeouts since 0 s")
        if "adapting" in phase:
            paper, source = (("a few overshoots to adapt", "Sec. 4.3.2, L2393") if phase.startswith("40")
                             else ("one too-large decrease, then Fast Increase", "Sec. 4.3.2, L2397"))
            checks.append(check(what, paper, source, float(r["utilization"]), None, shown=shown,
                                reported="the thesis describes the adaptation but gives no number for it"))
            continue
        checks.append(check(
            f"{what}: utilization", f"settled: link busy (> {UTIL_MIN:.0%}, as §4.3.1)", "Fig. 4.15, Sec. 4.3.2",
            float(r["utilization"]), Claim("≥", UTIL_MIN), shown=shown,
            why=f"utilization {r['utilization']:.1%} in a settled phase"))
        what_q, paper_q = f"{what}: the queue drains (min fill 0)", "settled: queue drained each epoch"
        if drained is None:
            checks.append(check(what_q, paper_q, "Fig. 4.15, Sec. 4.3.2", None, None, reported="not measured"))
        else:
            checks.append(every(what_q, paper_q, "Fig. 4.15, Sec. 4.3.2", int(drained), 1,
                                unit=f"runs (min fill {r['queue_fill_min']:.3f}, mean {r['queue_fill_mean']:.2f})",
                                why=f"a standing queue: the minimum fill stays at {r['queue_fill_min']:.3f} of the "
                                    f"buffer over the phase ({r['loss_events']:.0f} loss events)"))
    return rows(checks)


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    fig, (ax, bars) = plt.subplots(1, 2, figsize=(15, 4.5), gridspec_kw={"width_ratios": [3, 1]})
    trace_panel(ax, EXPERIMENT.rerun({"phase": "140 ms"}, 1, ["warmup=\"0s\"", "output.bin=\"50ms\""]),
                "Fig 4.15: SIAD(20), RTT 100 → 40 ms (30 s) → 140 ms (60 s)", ["flow"])
    for t in (30, 60):
        ax.axvline(t, color="k", lw=0.8, ls=":")
    bars.bar(summary["phase"], summary["utilization"], color="C0", label="utilization")
    bars.bar(summary["phase"], summary["queue_fill_mean"], color="C1", alpha=0.6, width=0.4, label="mean queue fill")
    bars.tick_params(axis="x", labelsize="x-small", rotation=30)
    bars.legend(fontsize="x-small")
    fig.tight_layout()
    return save(fig, out_dir / "siad-rtt-change.png")


EXPERIMENT = Experiment(
    name="siad-rtt-change",
    description="SIAD thesis §4.3.2 (1), Fig. 4.15: one SIAD(20) flow, 10 Mbit/s, 0.5 BDP, "
                "RTT 100 → 40 ms at 30 s → 140 ms at 60 s, each phase measured on its own",
    base=base(),
    grid={"phase": list(PHASES)},
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
