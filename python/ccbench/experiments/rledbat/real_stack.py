"""rLEDBAT on the real Linux stack (issue 11): the paper's Fig. 12 setting and Fig. 5, each run in
the simulator and on real kernel TCP through ``ccbench emu`` with ``rledbatd`` on the receiver,
side by side. Root only for the real-stack half; real-time runs go one at a time.

Figs. 12 and 13 (L387–L391): an rLEDBAT download (a CUBIC sender; the receiver's ``rledbatd`` rewrites its
ACKs' window) beside an unmarked CUBIC download, 20 Mbps, 500 ms drop-tail buffer, both starting at
once; rates over the whole run (L315). Pass rows as ``rledbat-fig12``: rLEDBAT ≤ 10 % of C, CUBIC
≥ 80 %, judged as one number per engine (CUBIC ≥ max(0.80, both − 0.10)). Fig. 12 sweeps the RTT at 20 Mbps (here 20 and 100 ms), Fig. 13 the capacity at RTT 20 ms (here
5 and 50 Mbps, the ends of ``rledbat-fig13``'s grid). Runs are 120 s here (the paper's 300 s are in
``rledbat-fig12``/``-fig13``, simulator only), 1 seed.

Fig. 5 (L321–L338): 64 kbps VoIP from 0 s, an rLEDBAT download from 10 s, 1 Mbps, 150 ms buffer,
RTT 20 ms, 50 s, as ``rledbat-fig5``; the extra delay VoIP sees and the download's rate.

The simulated receiver gets this machine's kernel receive-buffer maximum (``linux_receive_buffer``), so
the core gives it the window scale the kernel announces (10 for a 32 MB ``tcp_rmem`` maximum) and
both advertise windows in the same steps: Fig. 5's share of
VoIP packets under T depends on that step (with the simulator's default 64 MB buffer, scale 11,
``rledbat-fig5`` finds about 57 %; at scale 10 about 35 %). What still differs on the real stack:
Linux's own CUBIC, delayed ACKs, receive-buffer autotuning and 1 ms timestamps; the sender's segments are 1390 B of payload as in the simulator, but the
forwarder counts IP bytes (1442 B per segment), not the paper's 1456 B Ethernet frames.
"""

from __future__ import annotations

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check
from ccbench.experiments.rledbat import common, pairs, voip

SIM, EMU = "sim", "emu"
ENGINES = {SIM: "simulator", EMU: "real stack (rledbatd)"}
FIG12, FIG13, FIG5 = "fig12", "fig13", "fig5"
FIG12_RTTS_MS, QUICK_FIG12_RTTS_MS = [20, 100], [40]
#: Fig. 13 sweeps the capacity at RTT 20 ms (1–50 Mbps in ``rledbat-fig13``): its two ends here.
FIG13_RATES_MBPS, QUICK_FIG13_RATES_MBPS, FIG13_RTT_MS = [5, 50], [], 20
FIG12_DURATION_S, QUICK_FIG12_DURATION_S = 120, 40
QUICK_FIG5_DURATION_S = 30


def _points(rtts, rates, fig12_s: float, fig5_s: float) -> list:
    """Every point has the same keys (the summary groups by them): the rate under both names the
    two figures' metrics read."""
    def point(figure, engine, rate, rtt, duration):
        return {"figure": figure, "engine": engine, "rate_mbps": rate, "capacity_mbps": rate, "rtt_ms": rtt,
                "duration_s": duration}

    return ([point(FIG12, e, common.CAPACITY_MBPS, r, fig12_s) for r in rtts for e in ENGINES]
            + [point(FIG13, e, c, FIG13_RTT_MS, fig12_s) for c in rates for e in ENGINES]
            + [point(FIG5, e, 1, 20, fig5_s) for e in ENGINES])


def linux_receive_buffer() -> int:
    """The most this machine's kernel lets a TCP receive buffer grow to (the larger of
    ``tcp_rmem``'s maximum and ``rmem_max``): the space its window scale is chosen for
    (``tcp_select_initial_window``). 6 MB, Linux's default, where /proc cannot tell."""
    try:
        return max(int(open("/proc/sys/net/ipv4/tcp_rmem").read().split()[2]),
                   int(open("/proc/sys/net/core/rmem_max").read()))
    except (OSError, ValueError, IndexError):
        return 6 << 20


def _apply(point: dict) -> dict:
    if point["figure"] in (FIG12, FIG13):
        pair = {"arm": pairs.RLEDBAT, "rate_mbps": point["rate_mbps"], "rtt_ms": point["rtt_ms"],
                "buffer": common.DEEP_BUFFER, "seed": point.get("seed", 1)}
        changes = {**pairs.versus_cubic_apply(pair), "duration": f"{point['duration_s']:g}s"}
    else:
        changes = {**voip.apply({**point, "variant": voip.PAPER}), "bottleneck.buffer": voip.BUFFER,
                   "duration": f"{point['duration_s']:g}s"}
    if point["engine"] == SIM:
        # Like for like: the simulated receiver gets the kernel's buffer, so the core gives it
        # the kernel's window scale and its window moves in rledbatd's steps (1 KiB at scale 10).
        changes["flows"] = [{**f, "rcv_buf": f"{linux_receive_buffer()}B"} if f.get("receiver_cca") else f
                            for f in changes["flows"]]
    return changes


def _metric(result, point: dict) -> dict:
    if point["figure"] in (FIG12, FIG13):
        return pairs.versus_cubic_metric(result, point)
    return voip.metric(result, point)


def _rows(summary, figure: str):
    return summary[summary["figure"] == figure]


#: Figs. 12–13's pass rows (as ``rledbat-fig12``): rLEDBAT ≤ 10 % of C, CUBIC ≥ 80 %.
LBE_MAX, CUBIC_MIN = 0.10, 0.80


def _versus_cubic_rows(summary) -> list:
    """One check per point and engine: CUBIC ≥ max(0.80, what the two carry − 0.10), the notes' two
    rows as one number (``common.yield_claim``)."""
    rows = []
    for _, r in summary[summary["figure"].isin([FIG12, FIG13])].iterrows():
        figure = r["figure"]
        paper, source = (("rLEDBAT yields in front of Cubic in all experiments", "Fig. 12, L389") if figure == FIG12
                         else ("rLEDBAT yields to Cubic at every capacity", "Fig. 13, L391"))
        check = Check(f"Fig. {figure[3:]}, {r['rate_mbps']:g} Mbps, RTT {r['rtt_ms']:g} ms, 500 ms buffer, "
                      f"{ENGINES[r['engine']]}: CUBIC's share (notes: rLEDBAT ≤ 10 %, CUBIC ≥ 80 %)", paper, source,
                      float(r["cubic_share"]), common.yield_claim(LBE_MAX, r["lbe_share"], r["cubic_share"], CUBIC_MIN),
                      of=("cubic_share",),
                      shown=(f"rLEDBAT {r['lbe_share']:.1%}, CUBIC {r['cubic_share']:.1%} of C, "
                             f"queue {r['queue_ms']:.0f} ms"))
        if check.verdict != "agrees":
            check.reason = (f"rLEDBAT keeps {r['lbe_share']:.1%}" if r["lbe_share"] > LBE_MAX else
                            f"the two flows carry {r['lbe_share'] + r['cubic_share']:.1%} of C")
        rows.append(check.row())
    return rows


def _fig5_rows(summary) -> list:
    rows = []
    for _, r in _rows(summary, FIG5).iterrows():
        engine = ENGINES[r["engine"]]
        below = Check(f"Fig. 5, {engine}: VoIP packets less than T = 60 ms above the base delay",
                      f"{voip.PAPER_BELOW:.1%}", "Fig. 5, L327, L334", float(r["below_target"]),
                      voip.below_claim(), of=("below_target",),
                      shown=f"{r['below_target']:.1%} (p50 {r['extra_p50_ms']:.0f} ms, p90 {r['extra_p90_ms']:.0f} ms)")
        if below.verdict != "agrees":
            below.reason = voip.settles_at_target(r)
        rate = Check(f"Fig. 5, {engine}: rLEDBAT download rate beside VoIP", f"{voip.PAPER_KBPS} kbps", "L336",
                     float(r["rledbat_kbps"]), voip.kbps_claim(), of=("rledbat_kbps",), shown=f"{r['rledbat_kbps']:.0f} kbps")
        if rate.verdict != "agrees":
            rate.reason = (f"the download's flight averages {r['flight_over_bdp']:.0%} of the BDP, "
                           f"{r['rledbat_retransmits']:.0f} retransmissions")
        rows += [below.row(), rate.row()]
    return rows


def _comparison(summary) -> list:
    return _versus_cubic_rows(summary) + _fig5_rows(summary)


def _share_panel(ax, part, x: str, xlabel: str, title: str) -> None:
    for i, (engine, label) in enumerate(ENGINES.items()):
        mine = part[part["engine"] == engine].sort_values(x)
        ax.plot(mine[x], mine["lbe_share"], marker="o", color=f"C{i}", label=f"rLEDBAT, {label}")
        ax.plot(mine[x], mine["cubic_share"], marker="s", ls="--", color=f"C{i}", label=f"CUBIC, {label}")
    ax.axhspan(0, 0.10, color="C7", alpha=0.15, label="LBE pass band ≤ 10 %")
    ax.set(xlabel=xlabel, ylabel="share of C (whole run)", title=title, ylim=(0, 1))
    ax.legend(fontsize=6)


def _figure(summary, out_dir):
    from ccbench.plot import pyplot, save

    fig, (left, middle, right) = pyplot().subplots(1, 3, figsize=(14, 4))
    _share_panel(left, _rows(summary, FIG12), "rtt_ms", "base RTT (ms)", "Fig. 12 setting: 20 Mbps, 500 ms buffer")
    _share_panel(middle, _rows(summary, FIG13), "rate_mbps", "capacity (Mbps)", "Fig. 13 setting: RTT 20 ms")
    f5 = _rows(summary, FIG5)
    names = [ENGINES[e] for e in f5["engine"]]
    right.bar(names, f5["below_target"], color=["C0", "C1"][: len(names)])
    right.axhline(voip.PAPER_BELOW, color="k", ls=":", label=f"paper {voip.PAPER_BELOW:.1%}")
    right.set(ylabel="VoIP packets < T above base", title="Fig. 5: VoIP beside rLEDBAT, 1 Mbps", ylim=(0, 1))
    right.legend(fontsize=7)
    return save(fig, out_dir / "rledbat-real-stack.png")


def _unavailable():
    """The real-stack half needs root, the emulator and rledbatd, and iptables."""
    import os
    import shutil
    from pathlib import Path

    from ccbench import emu
    from ccbench.errors import UsageError

    if os.geteuid() != 0:
        return "runs on the real Linux stack: needs root"
    try:
        program = emu.binary()
    except UsageError as exc:
        return str(exc)
    if not os.environ.get("CCBENCH_RLEDBATD") and not Path(program).with_name("rledbatd").is_file():
        return "rledbatd is not built (make build)"
    if shutil.which("iptables") is None:
        return "rledbatd needs iptables (make build installs it)"
    return None


EXPERIMENT = Experiment(
    name="rledbat-real-stack",
    description="rLEDBAT on real Linux TCP with rledbatd (root) beside the simulator: Figs. 12/13's setting (rLEDBAT "
                "vs CUBIC, 500 ms buffer, 120 s: 20 Mbps at RTT 20/100 ms, 5 and 50 Mbps at 20 ms) and Fig. 5 (VoIP "
                "beside rLEDBAT, 1 Mbps)",
    base=voip.base(),
    grid={},
    points=_points(FIG12_RTTS_MS, FIG13_RATES_MBPS, FIG12_DURATION_S, voip.DURATION_S),
    quick_points=_points(QUICK_FIG12_RTTS_MS, QUICK_FIG13_RATES_MBPS, QUICK_FIG12_DURATION_S, QUICK_FIG5_DURATION_S),
    seeds=(1,),
    seed_in_point=True,
    apply=_apply,
    metric=_metric,
    figure=_figure,
    comparison=_comparison,
    unavailable=_unavailable,
)
