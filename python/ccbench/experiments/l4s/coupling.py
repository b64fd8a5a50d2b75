"""L4S: the coupling's aim, Scalable and Classic flows at about equal rates over DualPI2.

One Scalable flow (TCP Prague, or DCTCP with ECT(1)) and one CUBIC flow with classic ECN share a
DualPI2 bottleneck, across link rates and base RTTs. RFC 9332's Abstract claims "roughly
equivalent throughput per flow" for any mix; its draft -07 says "a flow runs at about the same
rate whether it uses DCTCP or TCP Reno/Cubic".

Real Linux Prague does not meet "roughly equivalent" as a factor of two: over DualPI2 it runs at
about twice CUBIC's rate at 20 ms (heistp/l4s-tests, Appendix "Scenario 1 Fairness Table": 2.05
and 2.17 at 50 Mbps, 1.81 and 1.86 at 10 Mbps; L4STeam's RTT-independence results at 100 Mbps:
1.9). So a Prague point with a real measurement nearby (:data:`MEASURED`: the same base RTT, a
link rate within 25 %) is held to that measurement, with the spread of the measurements
themselves as its tolerance (:data:`SPREAD`); elsewhere, and for DCTCP and the one PI2 queue,
the claim stays the papers' "roughly equivalent", given a number by us as a factor of two either
way (the rate ratio in [0.5, 2]), which the papers do not.

The contrast arm puts the same Prague and CUBIC flows in one PIE queue that marks both with one
probability (``aqm = "pie"``, ECN on): without the coupling's square law the Scalable flow's
answer to each mark is so much smaller that the Classic flow gets a small share (the DualPI2
paper's Abstract: Scalable flows are "very aggressive"). The papers give no number for it, so
these rows are reported beside the coupled queue's ratio at the same point.

A last arm turns on Prague's own defence in the same PIE queue, the L4STeam code's classic-ECN
bottleneck detection and fallback (``ecn_fallback = 1``; off by default there): when the RTT's
variance and depth say the marks come from a classic AQM, it cuts by at least α = 0.625.

The PI2 arm puts both flows in one PI2 queue (De Schepper et al., "PI2: A Linearized AQM for both
Classic and Scalable TCP", CoNEXT 2016): the same square law, one queue, so one delay for both;
tc-dualpi2(8) says of it "both Reno/Cubic can be used in parallel with Prague, maintaining window
fairness", and with one RTT equal windows are equal rates.

Two contrast arms keep DualPI2 but set Linux's ``min_qlen_step = 1``: no step mark for a
packet that found the L queue empty. At 4 and 12 Mbps one full-size packet takes 3.0 and 1.0 ms to
send, so with the default (0) an L packet that only waits for the packet in transmission —
CUBIC's, mostly — already exceeds the 1 ms step and is marked; Prague's window then shrinks
round after round (every byte marked, no additive increase) and starves; the arm shows that the
step, not the coupling, starves it there. DCTCP, which is not paced, loses at 4–12 Mbps whatever
`min_qlen_step` says: the packets of its own bursts queue behind each other past the step.

Where Prague gets more than CUBIC, the row says why in its run's numbers: the RTTs differ by the
Classic queue, and k = 2 (RFC 9332 §2.1's Reno/DCTCP window laws) plans the Classic window the
larger one assuming a Scalable cut every round trip (W = 2/p_L), while Prague, as Linux's CWR state
has it, cuts at most once per round and only at the first mark after the last cut's round ends:
the row quotes its cuts per round trip and the windows' ratio.

Settings: RFC 9332 App. A.1's DualPI2 (Linux ``sch_dualpi2`` defaults), a 250 ms buffer, 60 s
runs with the first 20 s excluded, 3 seeds; Prague as the L4STeam ``tcp_prague.c`` 0.6 (its
RTT independence on, 25 ms target), CUBIC as Linux.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict

from ccbench.experiments.base import Experiment, mean_spread
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.l4s import common
from ccbench.experiments.l4s.common import classic_flow, dumbbell, flows_named, scalable_flow, total_goodput

#: Arm → (queue, Scalable controller, the queue's parameters).
ARMS: Dict[str, tuple] = {
    "dualpi2-prague": ("dualpi2", "prague", {}),
    "dualpi2-dctcp": ("dualpi2", "dctcp", {}),
    # Contrast: no step mark for a packet that found the L queue empty (Linux's `min_qlen_step`).
    "dualpi2-prague-minq1": ("dualpi2", "prague", {"min_qlen_step": 1}),
    "dualpi2-dctcp-minq1": ("dualpi2", "dctcp", {"min_qlen_step": 1}),
    # One PI2 queue with the square law: both flows see one delay, so window fairness is rate fairness.
    "pi2-prague": ("pi2", "prague", {}),
    "pie-prague": ("pie", "prague", {}),
    # Prague's own answer to a classic-ECN queue (tcp_prague.c's `prague_ecn_fallback = 1`).
    "pie-prague-fallback": ("pie", "prague", {}),
}
#: Controller parameters of an arm's Scalable flow.
SCALABLE_CC: Dict[str, Dict[str, Any]] = {"pie-prague-fallback": {"ecn_fallback": 1}}
RATES_MBPS = [4, 12, 40, 120]
RTTS_MS = [5, 10, 20, 50]
#: "Roughly equivalent": a factor of two either way (ours; the papers give no number).
BALANCE = (0.5, 2.0)

#: heistp/l4s-tests, README, Appendix "Scenario 1 Fairness Table" (s1_table.md): D_SS, the
#: delivery rate at steady state (Mbps; mean of a 60 s window ending 2 s before the end), of
#: Prague and CUBIC over dualpi2 on L4STeam/linux@b256dae (Aug 2020), both flows at one base RTT,
#: once with each flow first: (rate Mbps, RTT ms) → ((Prague, CUBIC), (Prague, CUBIC)).
HEISTP_S1 = {
    (10, 10): ((6.22, 2.93), (6.25, 2.93)),
    (10, 20): ((5.93, 3.28), (6.01, 3.23)),
    (10, 80): ((5.90, 3.48), (5.94, 3.42)),
    (50, 10): ((34.57, 12.65), (34.09, 13.04)),
    (50, 20): ((32.39, 14.94), (31.85, 15.51)),
    (50, 80): ((29.58, 17.85), (29.92, 17.48)),
}
HEISTP_SOURCE = "heistp/l4s-tests, Appendix \"Scenario 1 Fairness Table\" (s1_table.md)"
#: L4STeam's RTT-independence results at 100 Mbps (Prague / Cubic over DualPI2), as issue 39 item 7
#: reads them from the plots: (RTT low, RTT high) ms → (ratio low, ratio high).
L4STEAM_100 = {(10, 10): (2.6, 2.6), (20, 20): (1.9, 1.9), (30, 50): (1.8, 2.2)}
L4STEAM_SOURCE = "L4STeam RTT-independence results, 100 Mbps (issue 39 item 7)"
#: Our link rate may be this far (as a factor) from a measured one and still be held to it.
RATE_NEAR = 1.25


def _ratios(pairs) -> tuple:
    return tuple(prague / cubic for prague, cubic in pairs)


#: The tolerance: the widest relative half-spread of two runs of one point in the table (each flow
#: first once), about 2.7 % (50 Mbps, 20 ms: 2.05 against 2.17).
SPREAD = max((max(r) - min(r)) / (max(r) + min(r)) for r in map(_ratios, HEISTP_S1.values()))


def measured(rate_mbps: float, rtt_ms: float):
    """The real Linux Prague / CUBIC ratio at our point, as ``(claim, text, source)``, or None
    where no measurement is near (the same base RTT, a rate within :data:`RATE_NEAR`)."""
    def near(rate):
        return max(rate, rate_mbps) / min(rate, rate_mbps) <= RATE_NEAR

    for (rate, rtt), pairs in HEISTP_S1.items():
        if near(rate) and rtt == rtt_ms:
            r = _ratios(pairs)
            return (Claim("in", (min(r), max(r)), within=SPREAD),
                    f"real Linux Prague / CUBIC over DualPI2: {min(r):.2f} and {max(r):.2f} at {rate} Mbps, {rtt} ms",
                    HEISTP_SOURCE)
    for (low, high), (r_low, r_high) in L4STEAM_100.items():
        if near(100) and low <= rtt_ms <= high:
            claim = (Claim("≈", r_low, agree=SPREAD, within=SPREAD) if r_low == r_high
                     else Claim("in", (r_low, r_high), within=SPREAD))
            span = f"{r_low:g}" if r_low == r_high else f"{r_low:g}–{r_high:g}"
            rtts = f"{low} ms" if low == high else f"{low}–{high} ms"
            return claim, f"real Linux Prague / CUBIC over DualPI2: {span} at 100 Mbps, {rtts}", L4STEAM_SOURCE
    return None
#: DualPI2's L-queue step threshold (Linux `sch_dualpi2` default) and the packet it is met in.
STEP_S = 1e-3
MTU_BYTES = 1514


def _apply(point: Dict[str, Any]) -> Dict[str, Any]:
    aqm, cca, params = ARMS[point["arm"]]
    return {
        "bottleneck.rate": f"{point['rate_mbps']}Mbps",
        "bottleneck.rtt": f"{point['rtt_ms']}ms",
        "bottleneck.aqm": aqm,
        "bottleneck.aqm_params": params,
        "flows[0]": scalable_flow(cca, cc=SCALABLE_CC.get(point["arm"], {})),
    }


def _metric(result, point) -> dict:
    scalable = total_goodput(flows_named(result, "l4s"))
    classic = total_goodput(flows_named(result, "classic"))
    return {
        "scalable_mbps": scalable,
        "classic_mbps": classic,
        "ratio": scalable / classic if classic > 0 else float("inf"),
        "scalable_delay_mean_ms": common.delay(flows_named(result, "l4s"), "mean"),
        "scalable_delay_p99_ms": common.delay(flows_named(result, "l4s"), "p99"),
        "classic_delay_mean_ms": common.delay(flows_named(result, "classic"), "mean"),
        **common.bottleneck_numbers(result),
        **_window_law(result),
    }


def _window_law(result) -> dict:
    """What sets the windows: the Scalable flow's ECN cuts per round trip over the run (its
    `ecn_reductions` against run time over its mean smoothed RTT), and the two flows' mean windows
    over the measured window."""
    flows = result.flows
    scenario = result.summary["scenario"]
    warmup_s = float(scenario.get("warmup_s", 0.0))
    duration_s = float(result.summary["sim_s"])
    scalable = flows[flows["flow"] == "l4s"]
    classic = flows[flows["flow"] == "classic"]
    srtt_s = float(scalable["srtt_ms"].mean()) / 1e3
    cuts = float(result.flow("l4s")["ecn_reductions"])
    return {"scalable_cuts_per_round": cuts * srtt_s / duration_s if duration_s > 0 else float("nan"),
            "window_ratio": _mean_window(scalable, warmup_s) / _mean_window(classic, warmup_s)}


def _mean_window(series, warmup_s: float) -> float:
    after = series[series["t_s"] > warmup_s]["cwnd_bytes"]
    return float(after.mean()) if len(after) else float("nan")


def _shown(row) -> str:
    return (f"{mean_spread(row, 'ratio', '.2f')} ({row['scalable_mbps']:.1f} / {row['classic_mbps']:.1f} Mbps)")


def _at(summary, arm: str, row) -> str:
    """The ratio of `arm` at `row`'s rate and RTT, as text ("—" if it did not run)."""
    other = summary[(summary["arm"] == arm) & (summary["rate_mbps"] == row["rate_mbps"])
                    & (summary["rtt_ms"] == row["rtt_ms"])]
    return f"{other['ratio'].iloc[0]:.2f}" if len(other) else "—"


def _imbalance(row, summary) -> str:
    """Why a point is out of balance, in this run's numbers."""
    rtt = row["rtt_ms"]
    if ARMS[row["arm"]][0] == "pi2":
        return (f"one queue: both flows meet about {row['classic_delay_mean_ms']:.1f} ms of it, so the rate ratio is "
                "their windows' ratio: the square law leaves them that far apart here")
    classic_rtt = rtt + row["classic_delay_mean_ms"]
    scalable_rtt = rtt + row["scalable_delay_mean_ms"]
    if row["ratio"] > 1:
        because = (f"the Classic flow's RTT is {classic_rtt:.1f} ms (its queue's {row['classic_delay_mean_ms']:.1f} ms "
                   f"on top of {rtt:g}) against the Scalable flow's {scalable_rtt:.1f} ms: at equal windows that alone "
                   f"is a factor {classic_rtt / scalable_rtt:.2f} in rate")
        return because + _window_reason(row)
    serialisation_ms = MTU_BYTES * 8 / (row["rate_mbps"] * 1e3)
    if ARMS[row["arm"]][1] == "dctcp":
        return (f"DCTCP is not paced: at {row['rate_mbps']:g} Mbps one {MTU_BYTES} B packet takes "
                f"{serialisation_ms:.2f} ms to send, so in each window's burst the packets behind the first "
                f"wait past the {STEP_S * 1e3:g} ms step and are marked, whether or not the L queue was empty "
                f"(ratio {_at(summary, 'dualpi2-dctcp', row)} with min_qlen_step 0, "
                f"{_at(summary, 'dualpi2-dctcp-minq1', row)} with 1); it cuts every round and, as Linux's DCTCP, "
                f"does not grow while in CWR (L queue p99 {row['scalable_delay_p99_ms']:.2f} ms)")
    return (f"at {row['rate_mbps']:g} Mbps one {MTU_BYTES} B packet takes {serialisation_ms:.2f} ms to send, against "
            f"the L queue's {STEP_S * 1e3:g} ms step: an L packet waiting behind any packet in transmission, a Classic "
            f"one too, is step-marked, and the Scalable window shrinks round after round (L queue p99 "
            f"{row['scalable_delay_p99_ms']:.2f} ms); with min_qlen_step = 1 the ratio here is "
            f"{_at(summary, 'dualpi2-prague-minq1', row)}")


def _window_reason(row) -> str:
    """Why the Scalable window is not the smaller one k = 2 plans for, in this run's numbers."""
    per_round = row.get("scalable_cuts_per_round", float("nan"))
    if not per_round > 0:
        return ""
    return (f"; the windows are {row['window_ratio']:.2f} (Scalable / Classic), where k = 2 plans the Classic "
            f"window larger: it assumes DCTCP's W = 2/p_L, a cut every round trip, but the Scalable flow cut "
            f"once every {1 / per_round:.2f} of its round trips — after each cut the sender's CWR round must end "
            f"(as in Linux) before a later mark can cut again, and with a few marks per round the next one comes "
            f"part of a round later, so each cut is answered by more additive increase")


def _beside_linux(real, row) -> str:
    """Which side of the real Linux measurement ours lies on, where there is one."""
    if real is None:
        return ""
    low, high = real[0].value if real[0].relation == "in" else (real[0].value, real[0].value)
    side = "above" if row["ratio"] > high else "below"
    return f"{side} the real Linux measurement ({real[1].split(': ', 1)[1]}): "


def _checks(summary) -> list:
    checks = []
    for _, row in summary.sort_values(["arm", "rate_mbps", "rtt_ms"]).iterrows():
        where = f"{row['rate_mbps']:g} Mbps, {row['rtt_ms']:g} ms"
        arm = row["arm"]
        if arm.startswith("pie-"):
            coupled = summary[(summary["arm"] == "dualpi2-prague") & (summary["rate_mbps"] == row["rate_mbps"])
                              & (summary["rtt_ms"] == row["rtt_ms"])]
            beside = f"; DualPI2 at this point: {coupled['ratio'].iloc[0]:.2f}" if len(coupled) else ""
            fallback = arm == "pie-prague-fallback"
            label = "one PIE queue, Prague with its classic-ECN fallback" if fallback else "one PIE queue, Prague"
            check = Check(f"{label} / CUBIC rate, {where}", "Scalable flows \"very aggressive\" "
                          "against Classic ones in one queue (no number)", common.DUALQ_PAPER, float(row["ratio"]),
                          None, shown=_shown(row),
                          reason=f"the contrast arm: one marking probability for both{beside}", contrast=True)
        else:
            queue, cca, params = ARMS[arm]
            contrast = " (contrast: min_qlen_step = 1)" if params else ""
            claim = Claim("in", BALANCE)
            real = measured(row["rate_mbps"], row["rtt_ms"]) if queue == "dualpi2" and cca == "prague" else None
            if queue == "pi2":
                paper, source = "\"both Reno/Cubic can be used in parallel with Prague, maintaining window fairness\"", common.PI2_MAN
            elif real is not None:
                claim, paper, source = real
            elif cca == "prague":
                paper, source = ("\"roughly equivalent throughput per flow\" (no Linux measurement at this point)",
                                 common.RFC9332_ABSTRACT)
            else:
                paper, source = "\"about the same rate whether it uses DCTCP or TCP Reno/Cubic\"", common.RFC9332_DCTCP
            label = "one PI2 queue" if queue == "pi2" else f"DualPI2{contrast}"
            check = Check(f"{label}, {'Prague' if cca == 'prague' else 'DCTCP'} / CUBIC rate, {where}", paper, source,
                          float(row["ratio"]), claim, shown=_shown(row), needs=("seeds", "duration"),
                          of=("scalable_mbps", "classic_mbps"))
            if check.verdict != "agrees":
                check.reason = _beside_linux(real, row) + _imbalance(row, summary)
        checks.append(check)
    return checks


def _comparison(summary) -> list:
    return [c.row() for c in _checks(summary)]


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    arms = list(ARMS)
    columns = 4
    rows = -(-len(arms) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.6 * rows), sharey=True, squeeze=False)
    for ax in axes.flat[len(arms):]:
        ax.set_visible(False)
    for ax, arm in zip(axes.flat, arms):
        for i, (rate, df) in enumerate(summary[summary["arm"] == arm].groupby("rate_mbps", sort=True)):
            df = df.sort_values("rtt_ms")
            ax.errorbar(df["rtt_ms"], df["ratio"], yerr=df.get("ratio_std"), fmt="o-", color=f"C{i}",
                        capsize=2, label=f"{rate:g} Mbps")
        ax.axhspan(*BALANCE, color="0.9", label="factor of two")
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.set_xticks(RTTS_MS, [str(r) for r in RTTS_MS])
        ax.minorticks_off()
        ax.set_title(arm)
        ax.set_xlabel("base RTT (ms)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize="small")
    for row in axes:
        row[0].set_ylabel("Scalable / Classic goodput")
    return save(fig, out_dir / "l4s-coupling.png")


def _rate_ratio(summary):
    """The rows judge the ratio of the two flows' own mean rates, computed here from them (not
    the runs' ratio column): so a row moves with each flow's measured rate (issue 39 item 3)."""
    summary = summary.copy()
    classic = summary["classic_mbps"].where(summary["classic_mbps"] > 0)
    summary["ratio"] = (summary["scalable_mbps"] / classic).fillna(float("inf"))
    return summary


EXPERIMENT = Experiment(
    name="l4s-coupling",
    description="L4S: one Scalable (Prague or DCTCP) and one CUBIC flow over DualPI2 across 4-120 Mbps and "
                "5-50 ms, the rate ratio the coupling aims at 1; contrasts: one PI2 queue, one PIE queue (with and "
                "without Prague's classic-ECN fallback), DualPI2 with min_qlen_step = 1",
    base=dumbbell([scalable_flow("prague"), classic_flow("cubic")]),
    grid={"arm": list(ARMS), "rate_mbps": RATES_MBPS, "rtt_ms": RTTS_MS},
    quick_grid={"arm": list(ARMS), "rate_mbps": [4, 40], "rtt_ms": [20]},
    seeds=(1, 2, 3),
    quick_seeds=(1,),
    quick_overrides=common.QUICK_OVERRIDES,
    apply=_apply,
    metric=_metric,
    compare=_rate_ratio,
    figure=_figure,
    comparison=_comparison,
)
