"""SIAD thesis §4.5.1 (3)–(4), Figs. 4.30/4.31, Table 4.6 and Tables C.8–C.10 (L2630–2668,
L6199–6277; notes ``siad-eval.md`` §2.2 rows C3, C4 and §4.7): one TCP flow and CBR cross
traffic that is on from 0 s, stops at 30 s and starts again at 60 s.

* 10 Mbit/s with 7 Mbit/s of CBR; 100 Mbit/s with 75 Mbit/s of CBR (the prose and captions; Table
  B.2's 5 and 50 Mbit/s lose, notes §7.2). Buffers 0.3, 0.5, 1.0, 1.2·BDP (the tables); the prose
  numbers are at 1·BDP (10 Mbit/s, L2638) and 0.5·BDP (100 Mbit/s, L2644).
* NewReno, Cubic, H-TCP, SIAD(20), SIAD(40); delayed ACKs on (L2473); RTT 100 ms, drop tail.
* The CBR source is two CBR flows (0–30 s and from 60 s) of 1500-B packets on the wire (payload
  1472 + 28 B of IP/UDP: the thesis's 1514-B frames less Ethernet, like our 1500-B TCP packets).

Measured per run:
* ``reach_80_s`` / ``reach_95_s``: the core's ``reallocations`` entry of the TCP flow at 30 s,
  whose fair share is the whole link once the CBR stops: seconds until its 200 ms receiver rate
  first exceeds 80 / 95 % of the link (the thesis's "> 9.5 Mbit/s", "> 95 Mbit/s"); NaN if not
  before the CBR restarts.
* ``max_rate_mbps``: the TCP flow's largest 200 ms rate while the CBR is off (the thesis's
  "maximum rate of 43.42 Mbit/s" of NewReno at 100 Mbit/s, L2644); ``rate_at_stop_mbps`` and
  ``rate_at_restart_mbps``: its rate in the bin just before 30 s and 60 s (where in its epoch the
  change meets it, which the thesis names as what decides both results, L2636, L2668).
* ``cbr_loss_<k>s`` and ``loss_rate_<k>s``, k = 1…5: cumulative over the first k seconds after
  the restart at 60 s (Tables C.9/C.10 and 4.6/C.8): CBR packets lost (the flows series' per-bin
  ``losses`` of the restarted CBR flow), and the bottleneck's (drops + random losses) / arrivals
  of all packets, TCP and CBR (the links series' per-bin counts). These are sums of the core's
  per-bin counts; the thesis counts bytes, we count packets (all data packets are 1500 B).
  ``loss_rate_tcp_<k>s``: the same drops over the TCP packets arriving only (arrivals less the
  CBR's, which are its sends: a fixed count per second), a contrast reading of the tables.

Loss counting (issue 25 item 6). The thesis defines the loss rate as the bytes dropped at the
queue over the bytes received at the queue (L2137), and Table 4.6 as "the total loss rate for both
together the TCP traffic and the CBR cross traffic" (L2646): ours. Its numbers are 2–4× ours in
nearly every cell, for every scheme, while its CBR loss counts (Tables C.9/C.10, the same drops
seen from the CBR) agree with ours within the tolerance in most cells. Counting the drops over the
TCP packets arriving instead brings almost every cell within the tolerance; a contrast row per
table gives both readings' median ratio to the thesis and how many cells each brings within it.
The main rows keep L2137's definition.

Choices where the thesis is silent: 90 s runs (the figures' span; every metric lies in 30–65 s),
warm-up 20 s, one run per configuration as the thesis (its times are single samples, L2638).
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Optional

from ccbench.experiments.base import Experiment, expand_grid
from ccbench.experiments.siad.common import (
    check,
    contrast,
    dumbbell,
    factor_claim,
    flow,
    reach_s,
    reallocation,
    rows,
    seconds,
)

DURATION_S = 90.0
CBR_STOP_S, CBR_RESTART_S = 30.0, 60.0
#: Link rate → CBR rate, Mbit/s (L2634, L2644).
CBR_MBPS = {10: 7, 100: 75}
BUFFERS = [0.3, 0.5, 1.0, 1.2]
SCHEMES = ["NewReno", "Cubic", "H-TCP", "SIAD(20)", "SIAD(40)"]
SECONDS = [1, 2, 3, 4, 5]
CBR_WIRE_BYTES, CBR_HEADER_BYTES = 1500, 28

#: The thesis's convergence times are single samples that depend on where in an epoch the CBR
#: stops (L2636, L2644): ours agree within a factor of 2 either way (notes §8: orders of magnitude).
REACH_FACTOR = 2.0
#: Sanity bounds the tests hold (the comparison judges SIAD(20) against the thesis's 2.2 s and
#: "about 2 s", L2638, L2644, L2690): SIAD at most 4 s; Cubic at 100 Mbit/s at least twice
#: SIAD(20)'s time (thesis 12.8 vs 2.2 s).
SIAD_REACH_MAX_S, CUBIC_OVER_SIAD = 4.0, 2.0
#: Loss counts and rates after the restart are single samples too (the overshoot depends on the
#: start time, L2668): within a factor of 2.5 either way counts as the same size.
LOSS_FACTOR = 2.5

#: (link Mbit/s, buffer ·BDP, scheme) → thesis seconds to 95 % (None = never) (L2638, L2644).
THESIS_REACH_95 = {
    (10, 1.0, "NewReno"): 6.2, (10, 1.0, "Cubic"): 6.6, (10, 1.0, "H-TCP"): 1.6, (10, 1.0, "SIAD(20)"): 2.2,
    (100, 0.5, "NewReno"): None, (100, 0.5, "Cubic"): 12.8, (100, 0.5, "H-TCP"): 2.6,
    (100, 0.5, "SIAD(20)"): 2.2,
}
THESIS_NEWRENO_MAX_100 = 43.42


def _rows(table: str) -> dict:
    """``"scheme buffer v1 … v5"`` lines → {(scheme, buffer): [v1 … v5]}."""
    out = {}
    for line in table.strip().splitlines():
        scheme, buffer, *values = line.split()
        out[(scheme, float(buffer))] = [float(v) for v in values]
    return out


#: Total loss rate [%] in the first 1…5 s after the restart: Table C.8 (10 Mbit/s, L6207) and
#: Table 4.6 (100 Mbit/s, L2648; no NewReno rows).
THESIS_LOSS_RATE = {10: _rows("""
NewReno 0.3 28.76 19.36 13.49 11.37 9.95
NewReno 0.5 15.43 8.35 5.62 4.26 3.52
NewReno 1.0 32.46 24.02 18.23 13.96 11.17
NewReno 1.2 27.62 20.81 14.32 10.88 8.8
Cubic 0.3 28.71 22.49 16.89 13.42 10.82
Cubic 0.5 36.43 27.22 20.84 16.46 13.73
Cubic 1.0 35.21 26.84 21.3 16.69 14.06
Cubic 1.2 33.98 30.23 23.95 19.61 16.39
H-TCP 0.3 26.12 26.02 19.69 16.29 14.1
H-TCP 0.5 33.2 27.52 21.22 17.64 14.41
H-TCP 1.0 9.96 5.61 4.18 3.13 3.46
H-TCP 1.2 13.96 8.79 5.80 4.95 4.42
SIAD(20) 0.3 33.38 30.86 24.71 20.78 17.4
SIAD(20) 0.5 34.86 25.58 20.38 16.49 13.45
SIAD(20) 1.0 19.08 11.73 15.32 16.52 15.41
SIAD(20) 1.2 8.41 10.64 7.59 5.64 4.69
SIAD(40) 0.3 33.29 27.07 21.53 17.55 14.72
SIAD(40) 0.5 34.98 25.26 20.79 16.75 13.71
SIAD(40) 1.0 27.96 19.53 14.73 14.15 11.66
SIAD(40) 1.2 25.92 20.85 17.35 14.3 11.45
"""), 100: _rows("""
Cubic 0.3 35.92 33.01 27.46 22.49 18.93
Cubic 0.5 37.58 30.66 24.32 20.11 16.76
Cubic 1.0 35.94 31.99 27.25 23.13 19.42
Cubic 1.2 40.64 35.26 29.63 24.09 20.06
H-TCP 0.3 30.41 27.93 24 19.59 16.34
H-TCP 0.5 33.89 29.12 23.01 20.01 16.56
H-TCP 1.0 23.49 21.73 15.78 12.24 9.97
H-TCP 1.2 16.56 13.33 9.87 7.56 6.04
SIAD(20) 0.3 37.03 35.93 30.25 25.59 22.74
SIAD(20) 0.5 39.96 30.82 24.11 20.92 17.48
SIAD(20) 1.0 35.53 29.12 21.38 18.37 17.14
SIAD(20) 1.2 31.01 27.21 20.63 18.66 16.08
SIAD(40) 0.3 36.98 32.97 26.98 22.71 19.32
SIAD(40) 0.5 31.42 29.6 24.44 19.03 17.33
SIAD(40) 1.0 32.78 27.38 22.32 18.9 15.89
SIAD(40) 1.2 26.98 24.16 18.12 16.92 14.42
""")}

#: CBR packets lost in the first 1…5 s: Table C.9 (10 Mbit/s, L6231; the SIAD(40) 1.2 row is
#: garbled in the text and left out) and Table C.10 (100 Mbit/s, L6255).
THESIS_CBR_LOSSES = {10: _rows("""
NewReno 0.3 32 41 41 43 43
NewReno 0.5 30 30 30 30 31
NewReno 1.0 58 73 73 73 73
NewReno 1.2 39 54 54 54 54
Cubic 0.3 35 52 52 52 52
Cubic 0.5 109 132 133 133 133
Cubic 1.0 53 72 77 77 77
Cubic 1.2 29 57 60 61 61
H-TCP 0.3 67 105 105 109 109
H-TCP 0.5 62 102 103 103 105
H-TCP 1.0 13 13 14 14 18
H-TCP 1.2 24 25 25 28 29
SIAD(20) 0.3 43 83 87 87 87
SIAD(20) 0.5 94 109 116 116 116
SIAD(20) 1.0 40 44 59 80 88
SIAD(20) 1.2 8 18 18 18 19
SIAD(40) 0.3 65 106 110 110 112
SIAD(40) 0.5 111 130 144 144 144
SIAD(40) 1.0 43 50 51 53 53
"""), 100: _rows("""
NewReno 0.3 21 21 21 21 21
NewReno 0.5 28 28 28 28 28
NewReno 1.0 21 38 38 38 38
NewReno 1.2 0 20 20 20 20
Cubic 0.3 560 1154 1261 1261 1261
Cubic 0.5 1040 1314 1314 1314 1314
Cubic 1.0 446 713 821 877 877
Cubic 1.2 311 613 860 860 860
H-TCP 0.3 0 0 140 146 146
H-TCP 0.5 670 960 990 990 990
H-TCP 1.0 216 438 438 438 438
H-TCP 1.2 182 285 298 298 298
SIAD(20) 0.3 579 1257 1355 1391 1391
SIAD(20) 0.5 1226 1414 1419 1476 1476
SIAD(20) 1.0 481 641 665 697 778
SIAD(20) 1.2 694 1120 1120 1198 1198
SIAD(40) 0.3 691 1137 1198 1229 1229
SIAD(40) 0.5 546 736 738 751 812
SIAD(40) 1.0 13 13 13 75 75
SIAD(40) 1.2 517 905 905 986 986
""")}


def cbr_interval_ns(rate_mbps: float) -> int:
    """The CBR's packet spacing: 1500-B wire packets at ``rate_mbps``, rounded to whole ns."""
    return round(CBR_WIRE_BYTES * 8 / (rate_mbps * 1e6) * 1e9)


def cbr_flow(name: str, rate_mbps: float, start_s: float, stop_s=None) -> dict:
    """A CBR flow of 1500-B wire packets at ``rate_mbps`` (interval rounded to whole ns)."""
    interval_ns = cbr_interval_ns(rate_mbps)
    entry = {"type": "cbr", "name": name, "packet_size": CBR_WIRE_BYTES - CBR_HEADER_BYTES,
             "interval": f"{interval_ns}ns", "start": f"{start_s:g}s"}
    if stop_s is not None:
        entry["stop"] = f"{stop_s:g}s"
    return entry


def _apply(point: dict) -> dict:
    cbr = CBR_MBPS[point["rate_mbps"]]
    return {
        "bottleneck.rate": f"{point['rate_mbps']}Mbps",
        "bottleneck.buffer": f"{point['buffer_bdp']:g}bdp",
        "flows": [flow(point["scheme"], name="tcp"), cbr_flow("cbr-first", cbr, 0.0, CBR_STOP_S),
                  cbr_flow("cbr-again", cbr, CBR_RESTART_S)],
    }


def _window(frame, after_s: float, seconds_after: float):
    """Rows of a series whose bins lie in (after_s, after_s + seconds_after] (bins stamped at their end)."""
    return frame[(frame["t_s"] > after_s + 1e-9) & (frame["t_s"] <= after_s + seconds_after + 1e-9)]


def restart_losses(result, cbr_mbps: Optional[float] = None) -> dict:
    """CBR losses and the bottleneck's total loss rate, cumulative over 1…5 s after the restart;
    with ``cbr_mbps``, also the drops over the TCP packets arriving (arrivals less the CBR's
    ``k`` seconds of sends)."""
    cbr = result.flows[result.flows["flow"] == "cbr-again"]
    link = result.links[result.links["link"] == "bottleneck"]
    out = {}
    for k in SECONDS:
        out[f"cbr_loss_{k}s"] = float(_window(cbr, CBR_RESTART_S, k)["losses"].sum())
        bins = _window(link, CBR_RESTART_S, k)
        arrivals = float(bins["arrivals"].sum())
        lost = float(bins["drops"].sum() + bins["random_losses"].sum())
        out[f"loss_rate_{k}s"] = lost / arrivals if arrivals else math.nan
        if cbr_mbps is not None:
            tcp = arrivals - round(k * 1e9 / cbr_interval_ns(cbr_mbps))
            out[f"loss_rate_tcp_{k}s"] = lost / tcp if tcp > 0 else math.nan
    return out


def _rate_before(tcp, at_s: float) -> float:
    """The TCP flow's rate in the bin that ends at ``at_s`` (where in its epoch the change meets it)."""
    return float(_window(tcp, at_s - 0.2, 0.2)["throughput_mbps"].iloc[-1])


def _metric(result, point: dict) -> dict:
    entry = reallocation(result, "tcp", CBR_STOP_S)
    tcp = result.flows[result.flows["flow"] == "tcp"]
    return {"reach_80_s": reach_s(entry, 80), "reach_95_s": reach_s(entry, 95),
            "max_rate_mbps": float(_window(tcp, CBR_STOP_S, CBR_RESTART_S - CBR_STOP_S)["throughput_mbps"].max()),
            "rate_at_stop_mbps": _rate_before(tcp, CBR_STOP_S),
            "rate_at_restart_mbps": _rate_before(tcp, CBR_RESTART_S),
            **restart_losses(result, CBR_MBPS[point["rate_mbps"]])}


def offered_tcp_mbps(loss_rate: float, rate_mbps: float) -> float:
    """TCP's mean offered load implied by a total loss rate L while the link is saturated: arrivals
    (TCP + CBR) = C / (1 − L), so TCP = C / (1 − L) − CBR."""
    return rate_mbps / (1 - loss_rate) - CBR_MBPS[int(rate_mbps)]


def within_factor(ours: float, paper: float, factor: float) -> bool:
    if paper == 0 or ours == 0:
        return abs(ours - paper) <= 1e-12 or max(ours, paper) <= factor  # a handful vs none
    return paper / factor <= ours <= paper * factor


def _row(summary, rate: int, buffer: float, scheme: str):
    match = summary[(summary["rate_mbps"] == rate) & (summary["buffer_bdp"] == buffer) & (summary["scheme"] == scheme)]
    return None if match.empty else match.iloc[0]


def _never(value: float) -> float:
    """A time to reach the link that never came before the CBR restarted: at least the whole
    window (a lower bound, judged as such)."""
    return float(value) if math.isfinite(value) else CBR_RESTART_S - CBR_STOP_S


def _reach_rows(summary) -> list:
    checks = []
    for (rate, buffer, scheme), paper in THESIS_REACH_95.items():
        r = _row(summary, rate, buffer, scheme)
        if r is None:
            continue
        where, line = f"{rate} Mbit/s, {buffer:g}·BDP, {scheme}", "L2638" if rate == 10 else "L2644"
        why = (f"outside ±{1 - 1 / REACH_FACTOR:.0%} of the thesis's; a single sample that depends on where in its epoch the "
               f"stop meets the flow (L2636): ours sent {r['rate_at_stop_mbps']:.1f} Mbit/s in the bin "
               f"before the stop (share {rate - CBR_MBPS[rate]} Mbit/s)")
        if paper is None:
            checks.append(check(
                f"{where}: largest 200 ms rate while the CBR is off [Mbit/s]",
                f"{THESIS_NEWRENO_MAX_100} (never above 95 %)", f"Sec. 4.5.1, {line}", r["max_rate_mbps"],
                factor_claim(THESIS_NEWRENO_MAX_100, REACH_FACTOR),
                shown=f"{r['max_rate_mbps']:.2f} (95 % reached: {seconds(r['reach_95_s'])})", why=why))
        else:
            checks.append(check(
                f"{where}: time to > 95 % after the CBR stops [s]",
                f"{paper} s" + (" (\"about 2 seconds\" in all scenarios, L2690)" if scheme == "SIAD(20)" else ""),
                f"Sec. 4.5.1, {line}",
                _never(r["reach_95_s"]), factor_claim(paper, REACH_FACTOR), shown=seconds(r["reach_95_s"]), why=why))
    return checks


def _headline_rows(summary) -> list:
    """Cubic "far longer" than SIAD(20) at 100 Mbit/s (L2644). SIAD(20)'s own time is judged once,
    in its scenario row against the thesis's 2.2 s (L2638, L2644; "about 2 seconds", L2690)."""
    siad, cubic = _row(summary, 100, 0.5, "SIAD(20)"), _row(summary, 100, 0.5, "Cubic")
    if siad is None or cubic is None:
        return []
    paper = THESIS_REACH_95[(100, 0.5, "Cubic")] / THESIS_REACH_95[(100, 0.5, "SIAD(20)")]
    ratio = _never(cubic["reach_95_s"]) / _never(siad["reach_95_s"])
    return [check(
        "100 Mbit/s: Cubic's time to 95 % over SIAD(20)'s", f"far longer: 12.8 s vs 2.2 s = ×{paper:.1f}",
        "Sec. 4.5.1, L2644", ratio, factor_claim(round(paper, 2), REACH_FACTOR),
        shown=f"{seconds(cubic['reach_95_s'])} vs {seconds(siad['reach_95_s'])} = ×{ratio:.1f}",
        why=f"outside ±{1 - 1 / REACH_FACTOR:.0%} of the thesis's ×{paper:.1f}: "
            + ("Cubic slower relative to SIAD(20) than in the thesis" if ratio > paper else
               "Cubic relatively faster than in the thesis"))]


def _series_text(r, prefix: str, fmt: str, scale: float = 1.0) -> str:
    return " / ".join(format(r[f"{prefix}_{k}s"] * scale, fmt) for k in SECONDS)


def _loss_rows(summary) -> list:
    checks = []
    for _, r in summary.iterrows():
        key, rate = (r["scheme"], float(r["buffer_bdp"])), int(r["rate_mbps"])
        where = f"{rate} Mbit/s, {r['buffer_bdp']:g}·BDP, {r['scheme']}"
        paper = THESIS_LOSS_RATE[rate].get(key)
        if paper is not None:
            table = "Table C.8" if rate == 10 else "Table 4.6"
            implied = (f"TCP's mean offered load in the first second implied by the loss rate "
                       f"(C/(1−L) − CBR): thesis {offered_tcp_mbps(paper[0] / 100, rate):.1f}, ours "
                       f"{offered_tcp_mbps(r['loss_rate_1s'], rate):.1f} Mbit/s")
            checks.append(check(
                f"{where}: total loss rate over the 5 s after the restart [%]",
                f"{paper[-1]:g} (1…5 s: " + " / ".join(f"{v:g}" for v in paper) + ")", table,
                r["loss_rate_5s"] * 100, factor_claim(paper[-1], LOSS_FACTOR),
                shown=f"{r['loss_rate_5s'] * 100:.2f} (1…5 s: {_series_text(r, 'loss_rate', '.2f', 100)})",
                why=f"5-s value outside ±{1 - 1 / LOSS_FACTOR:.0%} of the thesis's: {implied}"))
        paper = THESIS_CBR_LOSSES[rate].get(key)
        if paper is not None:
            table = "Table C.9" if rate == 10 else "Table C.10"
            checks.append(check(
                f"{where}: CBR packets lost over the 5 s after the restart",
                f"{paper[-1]:g} (1…5 s: " + " / ".join(f"{v:g}" for v in paper) + ")", table,
                r["cbr_loss_5s"], factor_claim(paper[-1], LOSS_FACTOR),
                shown=f"{r['cbr_loss_5s']:.0f} (1…5 s: {_series_text(r, 'cbr_loss', '.0f')})",
                why=f"5-s count outside ±{1 - 1 / LOSS_FACTOR:.0%} of the thesis's; the overshoot depends on the TCP rate the "
                    f"restart meets (L2668): ours {r['rate_at_restart_mbps']:.1f} Mbit/s in the bin before it"))
    return checks


def _counting_rows(summary) -> list:
    """Per table, the two readings of its loss rates over every cell run: L2137's (drops over all
    arrivals, ours) and drops over the TCP packets only."""
    checks = []
    for rate, table in ((10, "Table C.8"), (100, "Table 4.6")):
        cells = []
        for _, r in summary[summary["rate_mbps"] == rate].iterrows():
            paper = THESIS_LOSS_RATE[rate].get((r["scheme"], float(r["buffer_bdp"])))
            if paper is not None and "loss_rate_tcp_5s" in r and not math.isnan(r["loss_rate_tcp_5s"]):
                cells.append((paper[-1], r["loss_rate_5s"] * 100, r["loss_rate_tcp_5s"] * 100))
        if not cells:
            continue

        def reading(i: int, cells=cells) -> str:
            median = statistics.median(c[i] / c[0] for c in cells)
            held = sum(factor_claim(c[0], LOSS_FACTOR).decide(c[i]) != "differs" for c in cells)
            return f"median ×{median:.2f} of the thesis's, {held}/{len(cells)} cells within ±{1 - 1 / LOSS_FACTOR:.0%}"

        checks.append(contrast(
            f"{rate} Mbit/s: the 5-s loss rates after the restart, counted two ways",
            "a reading of ours beside the thesis's definition: bytes dropped over bytes arriving at the queue "
            "(L2137), TCP and CBR together (L2646)", table, None,
            shown=f"drops / all arrivals (L2137, the rows above): {reading(1)}; drops / TCP arrivals: {reading(2)}",
            reason="the second reading is not the thesis's definition (L2137); the CBR loss-count rows "
                   "(Tables C.9/C.10) count the same drops from the CBR's side"))
    return checks


def _comparison(summary) -> list:
    return rows(_headline_rows(summary) + _reach_rows(summary) + _loss_rows(summary) + _counting_rows(summary))


def _reach_panel(ax, part, rate: int) -> None:
    import numpy as np

    buffers = sorted(set(part["buffer_bdp"]))
    x = np.arange(len(SCHEMES))
    width = 0.8 / max(1, len(buffers))
    for i, buffer in enumerate(buffers):
        ours = [_value(part, buffer, s, "reach_95_s") for s in SCHEMES]
        ax.bar(x + i * width, np.nan_to_num(ours, nan=0.0), width, label=f"ours {buffer:g}·BDP")
    prose_buffer = 1.0 if rate == 10 else 0.5
    paper = [THESIS_REACH_95.get((rate, prose_buffer, s)) for s in SCHEMES]
    ax.plot(x + 0.4 - width / 2, [np.nan if p is None else p for p in paper], "k*", ms=10,
            label=f"thesis ({prose_buffer:g}·BDP)")
    ax.set_xticks(x + 0.4 - width / 2, SCHEMES)
    ax.set_ylabel("s to > 95 % after the CBR stops (0 = never)")
    ax.set_title(f"{rate} Mbit/s, {CBR_MBPS[rate]} Mbit/s CBR off at 30 s")


def _loss_panel(ax, part, rate: int) -> None:
    buffers = sorted(set(part["buffer_bdp"]))
    for i, scheme in enumerate(SCHEMES):
        for buffer in buffers:
            ours = [_value(part, buffer, scheme, f"loss_rate_{k}s") * 100 for k in SECONDS]
            ax.plot(SECONDS, ours, "-o", color=f"C{i}", ms=3, lw=0.8, label=scheme if buffer == buffers[0] else None)
            paper = THESIS_LOSS_RATE[rate].get((scheme, float(buffer)))
            if paper:
                ax.plot(SECONDS, paper, "--", color=f"C{i}", lw=0.8)
    ax.set_xlabel("seconds after the CBR restarts at 60 s")
    ax.set_ylabel("total loss rate (%), ours solid, thesis dashed")


def _figure(summary, out_dir: Path) -> Path:
    from ccbench.plot import pyplot, save

    plt = pyplot()
    rates = sorted(set(int(v) for v in summary["rate_mbps"]))
    fig, axes = plt.subplots(2, len(rates), figsize=(6.5 * len(rates), 7), squeeze=False)
    for col, rate in enumerate(rates):
        part = summary[summary["rate_mbps"] == rate]
        _reach_panel(axes[0][col], part, rate)
        _loss_panel(axes[1][col], part, rate)
        for ax in axes[:, col]:
            ax.grid(alpha=0.3)
            ax.legend(fontsize="x-small")
    return save(fig, out_dir / "siad-cbr-onoff.png")


def _value(part, buffer: float, scheme: str, column: str) -> float:
    match = part[(part["buffer_bdp"] == buffer) & (part["scheme"] == scheme)]
    return float(match[column].iloc[0]) if len(match) else math.nan


EXPERIMENT = Experiment(
    name="siad-cbr-onoff",
    description="SIAD thesis §4.5.1 Table 4.6, C.8–C.10: one flow + CBR (7 of 10, 75 of 100 Mbit/s) off at "
                "30 s, on at 60 s: time to 95 % after the stop, losses in the first 1…5 s after the restart",
    base=dumbbell("10Mbps", 1.0, [flow("SIAD(20)", name="tcp")], duration_s=DURATION_S),
    grid={},
    points=expand_grid({"rate_mbps": list(CBR_MBPS), "buffer_bdp": BUFFERS, "scheme": SCHEMES}),
    quick_points=[{"rate_mbps": 10, "buffer_bdp": 1.0, "scheme": s} for s in SCHEMES]
    + [{"rate_mbps": 100, "buffer_bdp": 0.5, "scheme": s} for s in ("Cubic", "SIAD(20)")],
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
)
