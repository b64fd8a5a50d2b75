"""Figs. 16–21 of the rLEDBAT paper as one machinery: one rLEDBAT download beside one BBR download
(L432–L506; ``Lnnn`` are lines of ``shared/seeds/000_0bcdc4d0e80e9a68.txt``).

Set-up: the common testbed (:mod:`ccbench.experiments.rledbat.common`: 20 Mbps, MSS 1390 in
1456 B frames, a 500 or 30 ms drop-tail buffer, 300 s, 8 runs, the notes' RTT grid, each flow
starting at U[0, 100 ms) per seed). The rLEDBAT flow downloads from a CUBIC sender: the BBR
sections do not say which CCA S1 ran for it (notes §5 item 5, suggestion CUBIC as in L346). The
BBR flow is ``cca = "bbr"`` (BBRv1) or ``"bbr2"`` (BBRv2); Figs. 20–21 use the modified target
min(T, base RTT) (§7.1, L500; ``enhanced_target``).

The paper says rLEDBAT "behaves similarly to LEDBAT++" against both BBRs (L448, L458, L464) and
that neither yields below T (L486), citing [11] for LEDBAT++. So each figure also runs a second
arm beside it: sender-side LEDBAT++ (``cca = "ledbat++"``, the same target switch) against the
same BBR, with the same start times.

Environment (issue 25 item 6): the main arm runs in the testbed's (``common.TESTBED``: the tbf
burst of tc-tbf(8)'s rule, 32 KiB at 20 Mbps, and GRO at the receivers), where the BBR sender's
ACK-aggregation allowance (``extra_acked``, Linux ≥ 4.19) answers the burst's stretch ACKs with
more in-flight; the ideal shaper with per-segment ACKs (``common.NO_BURST``) runs beside it as a
contrast arm, judged against the same claims, its rows labelled "[no burst, no GRO]".

Measured: each flow's goodput over the whole run including start-up (L315, the core's
``goodput_mbps``) as a share of C, and of the best goodput 0.9547·C (notes §2); Jain's index of
the pair; the bottleneck's median and 90th-percentile queueing delay (the core's), which tells
whose queue it was (60 ms: rLEDBAT's target; ≈1 base RTT: BBR's 2·BDP cap).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Tuple

from ccbench.experiments.base import Experiment
from ccbench.experiments.checks import Check, Claim
from ccbench.experiments.rledbat import common

#: The two arms: rLEDBAT at the receiver (the paper's), sender-side LEDBAT++ beside it.
RLEDBAT, LEDBATPP = "rledbat", "ledbatpp"
ARM_LABELS = {RLEDBAT: "rLEDBAT (receiver)", LEDBATPP: "LEDBAT++ (sender)"}
NAMES = ("lbe", "bbr")
#: The gap between the rLEDBAT and LEDBAT++ arms' shares (the notes' BED-num band for shares)
#: beyond which a contrast row gives the mechanism found in the traces.
MATCH_BAND = 0.10
QUICK_DURATION = f"{common.QUICK_DURATION_S}s"


def lbe_flow(arm: str, start_s: float, enhanced: bool) -> dict:
    """The less-than-best-effort download of ``arm``."""
    if arm == RLEDBAT:
        return common.rledbat_flow("lbe", start_s, enhanced=enhanced)
    extra = {"cc": {"enhanced_target": True}} if enhanced else {}
    return common.tcp_flow("lbe", "ledbat++", start_s, **extra)


def flows(arm: str, bbr: str, enhanced: bool, seed: int) -> List[dict]:
    return [lbe_flow(arm, common.start_jitter_s(seed, "lbe"), enhanced),
            common.tcp_flow("bbr", bbr, common.start_jitter_s(seed, "bbr"))]


def metric(result, point: dict) -> dict:
    lbe, bbr = common.flow_rates_mbps(result, NAMES)
    link = result.link("bottleneck")
    capacity = float(link["rate_mbps"])
    queue = link["queue_delay_ms"]
    return {"lbe_share": lbe / capacity, "bbr_share": bbr / capacity,
            "lbe_share_of_best": lbe / (capacity * common.GOODPUT_FRACTION),
            "jain": float(result.summary["jain_index"]), "queue_p50_ms": queue["p50"], "queue_p90_ms": queue["p90"],
            "loss_rate": link["loss_rate"]}


def wide(summary, env: common.Environment = common.TESTBED):
    """One row per RTT of environment ``env``, each arm's columns prefixed ``rledbat_`` /
    ``ledbatpp_``."""
    import pandas as pd

    if "env" in summary:
        summary = summary[summary["env"] == env.key].drop(columns=["env"])
    parts = []
    for arm in (RLEDBAT, LEDBATPP):
        part = summary[summary["arm"] == arm].drop(columns=["arm"]).set_index("rtt_ms")
        parts.append(part.add_prefix(f"{arm}_"))
    return pd.concat(parts, axis=1).reset_index().sort_values("rtt_ms")


# ---------------------------------------------------------------- claims

@dataclass(frozen=True)
class ShareRow:
    """A pass row on the rLEDBAT arm's means, one check per RTT that ``covers``: ``kind`` "band"
    (rLEDBAT's share in [low, high]), "yield" (rLEDBAT's share ≤ high, judged as the BBR flow's
    share ≥ what the two carry less ``high``: ``common.yield_claim``), "bbr_yields" (the BBR flow's
    share ≤ high, judged on rLEDBAT's share the same way), "bbr_above" (the BBR flow's
    share at least half of what the two carry) or "even" (rLEDBAT's part of what the two carry,
    from both flows' own rates, about a half: :data:`EVEN_AGREE`, :data:`EVEN_WITHIN`)."""

    what: str
    paper: str
    covers: Callable[[float], bool]
    kind: str = "band"
    band: Optional[Tuple[float, float]] = None


#: "Split the capacity evenly" (L448): rLEDBAT's part of the two flows' goodput is 0.5, agreeing
#: within ±0.05 and within tolerance within ±0.10 (a 45:55 split agrees, 40:60 is within; a 2:1
#: split, 0.67, differs).
EVEN_AGREE, EVEN_WITHIN = 0.05, 0.10


def share_band(what: str, paper: str, covers, low: float = 0.0, high: float = 1.0) -> ShareRow:
    return ShareRow(what, paper, covers, "yield" if low <= 0 < high < 1 else "band", (low, high))


def even_split(what: str, paper: str, covers) -> ShareRow:
    return ShareRow(what, paper, covers, "even")


def bbr_yields(what: str, paper: str, covers, high: float = 0.15) -> ShareRow:
    """The BBR flow yields to rLEDBAT (L464, L466, L480), in the paper's sense of "yields" that the
    rLEDBAT rows use: it keeps at most ``high`` of C, judged on rLEDBAT's own share (at least what
    the two carry less ``high``)."""
    return ShareRow(what, paper, covers, "bbr_yields", (0.0, high))


def bbr_above(what: str, paper: str, covers) -> ShareRow:
    return ShareRow(what, paper, covers, "bbr_above")


def _shares(row, arm: str) -> str:
    return f"{row[f'{arm}_lbe_share']:.2f}/{row[f'{arm}_bbr_share']:.2f}"


def queue_state(row) -> str:
    """The measured state of the rLEDBAT arm at one RTT: the queue and the losses."""
    return (f"queue p50 {row['rledbat_queue_p50_ms']:.0f} ms, p90 {row['rledbat_queue_p90_ms']:.0f} ms "
            f"with a base RTT of {row['rtt_ms']:g} ms, loss rate {row['rledbat_loss_rate']:.2%}")


def explain_default(row) -> str:
    return f"{queue_state(row)}; sender LEDBAT++ gets {row['ledbatpp_lbe_share']:.2f}"


#: The other environment's table beside a row's (``(environment, table of wide())``), or None.
Beside = Optional[Tuple[common.Environment, object]]


def beside_state(beside: Beside, rtt: float, bbr_label: str) -> str:
    """The rLEDBAT arm at ``rtt`` in the other environment of this run, for a failed row's reason."""
    if beside is None:
        return ""
    env, table = beside
    hit = table[table["rtt_ms"] == rtt]
    if hit.empty:
        return ""
    r = hit.iloc[0]
    return (f"[{env.describe()}] rLEDBAT/{bbr_label} {_shares(r, RLEDBAT)}, queue p50 {r['rledbat_queue_p50_ms']:.0f} ms, "
            f"loss rate {r['rledbat_loss_rate']:.2%}")


def share_check(claim: ShareRow, r, source: str, bbr_label: str) -> Check:
    """The check of ``claim`` at the RTT of ``r`` (a row of :func:`wide`); ``shown`` carries the
    pair's shares, Jain's index and the queue (the figure's values are not printed)."""
    lbe, bbr = float(r["rledbat_lbe_share"]), float(r["rledbat_bbr_share"])
    shown = (f"rLEDBAT/{bbr_label} {_shares(r, RLEDBAT)} of C (rLEDBAT {r['rledbat_lbe_share_of_best']:.2f} of best "
             f"goodput, Jain {r['rledbat_jain']:.2f}, queue p50 {r['rledbat_queue_p50_ms']:.0f} ms; "
             f"LEDBAT++ arm {_shares(r, LEDBATPP)})")
    what = f"{claim.what}, at {r['rtt_ms']:g} ms"
    if claim.kind == "yield":
        return Check(f"{what}: {bbr_label}'s share (yields: ≥ the two's − {claim.band[1]:g})", claim.paper, source,
                     bbr, common.yield_claim(claim.band[1], lbe, bbr), shown=shown, of=("bbr_share",))
    if claim.kind == "bbr_yields":
        return Check(f"{what}: rLEDBAT's share ({bbr_label} yields: ≥ the two's − {claim.band[1]:g})", claim.paper,
                     source, lbe, common.yield_claim(claim.band[1], bbr, lbe), shown=shown, of=("lbe_share",))
    if claim.kind == "bbr_above":
        return Check(f"{what}: {bbr_label}'s share (at least half of the two)", claim.paper, source, bbr,
                     Claim("≥", round((lbe + bbr) / 2, 4), relative=False), shown=shown, of=("bbr_share",))
    if claim.kind == "even":
        part = lbe / (lbe + bbr) if lbe + bbr > 0 else float("nan")
        return Check(f"{what}: rLEDBAT's part of the two flows' goodput", claim.paper, source, part,
                     Claim("≈", 0.5, agree=EVEN_AGREE, within=EVEN_WITHIN, relative=False),
                     shown=f"{part:.2f}; {shown}", of=("lbe_share", "bbr_share"))
    low, high = claim.band
    return Check(f"{what}: rLEDBAT's share", claim.paper, source, lbe,
                 Claim("≥", low) if high >= 1 else Claim("in", (low, high)), shown=shown, of=("lbe_share",))


def claim_rows(claim: ShareRow, table, explain: Callable[[object], str], source: str, bbr_label: str,
               env: common.Environment = common.TESTBED, beside: Beside = None) -> List[dict]:
    """One check per RTT that ``claim`` covers; a failed one's reason gives the measured state, the
    other environment's at the same RTT (``beside``) and the mechanism (``explain(row)``, which
    sees the row's ``env``)."""
    out = []
    for _, r in table[[claim.covers(x) for x in table["rtt_ms"]]].iterrows():
        check = share_check(claim, r, source, bbr_label)
        check.what = common.contrast_label(env, check.what)
        if check.verdict != "agrees":
            state = "; ".join(filter(None, [explain_default(r), beside_state(beside, r["rtt_ms"], bbr_label)]))
            row = r.astype(object)
            row["env"] = env.key
            check.reason = ". ".join(filter(None, [state, explain(row)]))
        out.append(check.row())
    return out


def match_rows(table, source: str, env: common.Environment = common.TESTBED,
               explain: Callable[[object], str] = lambda row: "") -> List[dict]:
    """Our sender-side LEDBAT++ arm beside rLEDBAT at each RTT, a contrast row: the paper prints no
    LEDBAT++ share here (it cites [11]); what it says LEDBAT++ does (L129) is what the share rows
    judge rLEDBAT on. ``explain(row)`` gives the mechanism of a gap found in the traces, if any."""
    out = []
    for _, r in table.iterrows():
        theirs, ours = float(r["ledbatpp_lbe_share"]), float(r["rledbat_lbe_share"])
        gap = explain(r) if abs(ours - theirs) > MATCH_BAND else ""
        out.append(Check(common.contrast_label(env, f"rLEDBAT's share beside our sender LEDBAT++ arm's, at {r['rtt_ms']:g} ms"),
                         f"our sender LEDBAT++ arm, {theirs:.3f} (the paper prints none; it cites [11], L129)",
                         source, ours, shown=f"{ours:.3f} ({ours - theirs:+.3f})", reason=gap,
                         contrast=True, of=("lbe_share",)).row())
    return out


def share_rows(table, bbr_label: str, source: str, env: common.Environment = common.TESTBED,
               claims: Sequence[ShareRow] = ()) -> List[dict]:
    """The shares at every RTT no claim covers, reported (the paper states nothing there); a
    covered RTT shows them in its judged row."""
    bare = table[[not any(c.covers(x) for c in claims) for x in table["rtt_ms"]]]
    return [Check(common.contrast_label(env, f"shares at RTT {r['rtt_ms']:g} ms (LBE/{bbr_label} of C)"), "no statement at this RTT", source,
                  None, shown=(f"rLEDBAT {_shares(r, RLEDBAT)} (rLEDBAT {r['rledbat_lbe_share_of_best']:.2f} of best "
                               f"goodput, Jain {r['rledbat_jain']:.2f}, {queue_state(r)}); "
                               f"LEDBAT++ {_shares(r, LEDBATPP)}"),
                  reason="the paper states no share or direction at this RTT and prints no values").row()
            for _, r in bare.iterrows()]


def above_target(bbr_label: str) -> str:
    """Why an LBE flow keeps a share above T against a BBR that is not at its cap (traces, Figs.
    16, 18 and 20 at 60–100 ms): the queue exceeds T only in the BBR flow's probing peaks."""
    return (f"{bbr_label} paces at its bandwidth estimate, so beyond the pipe it queues only what its "
            "1.25-gain probing adds; the queue exceeds T only in those peaks (see the percentiles) and "
            "the rLEDBAT flow keeps growing between them. " + no_bdp_queue(bbr_label))


def no_bdp_queue(bbr_label: str) -> str:
    """The modelling gap behind the BBR rows: the paper's BBR holds a standing queue of a BDP."""
    return (f"The paper's argument relies on {bbr_label} holding a standing queue of an extra BDP, up to its "
            "2·BDP in-flight cap (L448, L450, L464, L492, L500); ours does not build it, because our simulator "
            "does not model the sender's TSO/GSO bursts")


def in_testbed(row) -> bool:
    """Whether a row of :func:`wide` (with the ``env`` :func:`claim_rows` adds) is the testbed's."""
    return row.get("env", common.TESTBED.key) == common.TESTBED.key


def burst_share_of_bdp(rtt_ms: float) -> float:
    """The testbed's tbf burst as a fraction of the BDP at ``rtt_ms`` (20 Mbps)."""
    return common.TESTBED.burst_bytes(common.CAPACITY_MBPS) / (common.CAPACITY_MBPS * 1e6 / 8 * rtt_ms / 1e3)


def bucket_kept_empty() -> str:
    """Why the testbed changes little where the LBE flow holds a standing queue (Figs. 16, 20 below
    T): tokens accrue only while the queue is empty."""
    return ("in the testbed the rLEDBAT flow's standing queue leaves the tbf bucket no idle time to "
            "refill (tokens accrue only while the queue is empty), so its bursts, and the ACK aggregation "
            "BBR's extra_acked answers, come only after the rLEDBAT flow's slowdowns: compare the no-burst "
            "arm beside")


def burst_overestimate(bbr_label: str, rtt_ms: float) -> str:
    """How the testbed's bursts raise a BBR flow's rate (tables and Fig. 17 in the testbed): its
    probing phase's delivery-rate samples exceed C by up to one burst per round."""
    return (f"a tbf burst leaves at 1 Gbit/s, so while {bbr_label} probes (pacing gain 1.25) its "
            f"delivery-rate samples exceed C by up to one burst per round, {burst_share_of_bdp(rtt_ms):.0%} "
            f"of the BDP at {rtt_ms:g} ms: its max-filtered estimate and pacing rate stay above C and it "
            "builds a queue, and it does not back off for the losses that queue causes (L428)")


def queue_at_modified_target(bbr_label: str) -> str:
    """Why the modified target does not make the LBE flow yield (traces, Figs. 20–21 at 20 ms): the
    queue the BBR flow sustains is about one base RTT, the modified target itself."""
    return ("The modified target min(T, RTT_b) is one base RTT here; "
            f"{bbr_label} at its in-flight cap 2·bw·min_rtt delivers 2·bw·RTT_b/(RTT_b + q), so it keeps "
            "its bandwidth estimate only while the queue q stays below RTT_b: the queue sits at about one "
            "base RTT, the modified target itself, where the rLEDBAT flow grows every RTT it is below and "
            f"{bbr_label} gains only in its bandwidth probes; the paper's argument (the modified flow "
            "\"refrains from generating queues larger than one BDP\", L500) assumes BBR's queue is above that")


# ---------------------------------------------------------------- the experiment

@dataclass(frozen=True)
class Figure:
    """One of Figs. 16–21: the BBR version, buffer, target switch, quick RTTs and pass rows;
    ``explain(row)`` gives the measured mechanism for a failed row."""

    name: str
    number: int
    bbr: str
    bbr_label: str
    buffer: str
    enhanced: bool
    quick_rtts: Sequence[float]
    claims: Sequence[ShareRow]
    #: Where the claims are in the paper (figure and lines).
    source: str = ""
    #: The mechanism behind a failed row (``row`` of :func:`wide`), found in the traces; the
    #: measured queue, losses and LEDBAT++'s share are written beside it.
    explain: Callable[[object], str] = lambda row: ""
    #: Pass rows on the whole curve (``table`` → comparison rows), e.g. a monotone shape.
    curve_rows: Callable[[object], List[dict]] = lambda table: []
    #: The environments run: the testbed's (judged), then the contrast arms (judged, labelled).
    envs: Sequence[common.Environment] = (common.TESTBED, common.NO_BURST)
    #: The mechanism of a failed "about sender LEDBAT++" row, found in the traces ("": none found).
    explain_match: Callable[[object], str] = lambda row: ""


def _apply_for(fig: Figure):
    def apply(point: dict) -> dict:
        changes = {"bottleneck.rtt": f"{point['rtt_ms']:g}ms",
                   "flows": flows(point["arm"], fig.bbr, fig.enhanced, point["seed"])}
        return common.in_environment(changes, common.environment(point), common.CAPACITY_MBPS)
    return apply


def _labelled(env: common.Environment, rows: List[dict]) -> List[dict]:
    return [dict(row, what=common.contrast_label(env, row["what"])) for row in rows]


def _comparison_for(fig: Figure):
    def comparison(summary) -> list:
        source = fig.source or f"Fig. {fig.number}"
        rows = []
        tables = {env: wide(summary, env) for env in fig.envs}
        for env, table in tables.items():
            other = next(((e, t) for e, t in tables.items() if e != env), None)
            rows += [row for claim in fig.claims
                     for row in claim_rows(claim, table, fig.explain, source, fig.bbr_label, env, other)]
            rows += _labelled(env, fig.curve_rows(table)) + match_rows(table, source, env, fig.explain_match)
        for env in fig.envs:
            rows += share_rows(wide(summary, env), fig.bbr_label, f"Fig. {fig.number}", env, fig.claims)
        return rows
    return comparison


def _figure_for(fig: Figure, title: str):
    def figure(summary, out_dir: Path) -> Path:
        import pandas as pd

        main, contrast = wide(summary, fig.envs[0]).set_index("rtt_ms"), None
        columns = [("rledbat_lbe_share", "rLEDBAT"), ("rledbat_bbr_share", f"{fig.bbr_label} (vs rLEDBAT)"),
                   ("ledbatpp_lbe_share", "LEDBAT++ sender (beside)"),
                   ("ledbatpp_bbr_share", f"{fig.bbr_label} (vs LEDBAT++)")]
        for env in fig.envs[1:]:
            contrast = wide(summary, env).set_index("rtt_ms")
            for column, _label in columns[:2]:
                for suffix in ("", "_std"):
                    main[f"{env.key}_{column}{suffix}"] = contrast[f"{column}{suffix}"]
            columns += [(f"{env.key}_{column}", f"{label} [{env.label}]") for column, label in columns[:2]]
        table = pd.DataFrame(main).reset_index()
        bands = [(c.band[0], c.band[1], c.what) for c in fig.claims if c.band and c.kind in ("band", "yield")]
        return common.share_figure(table, Path(out_dir) / f"{fig.name}.png", columns, title,
                                   ylabel="share of C (goodput / 20 Mbps)", bands=bands)
    return figure


def experiment(fig: Figure) -> Experiment:
    variant = "modified rLEDBAT" if fig.enhanced else "rLEDBAT"
    title = f"rLEDBAT Fig. {fig.number}: {variant} vs {fig.bbr_label}, 20 Mbps, {fig.buffer} buffer"
    testbed = f"testbed ({common.TESTBED.describe()})"
    arms = (RLEDBAT, LEDBATPP)
    envs = [env.key for env in fig.envs]
    return Experiment(
        name=fig.name,
        description=(f"{title}, {testbed} (and sender LEDBAT++ vs the same {fig.bbr_label} beside it; "
                     f"contrast: no burst, no GRO)"),
        base=common.base(buffer=fig.buffer, flows=flows(RLEDBAT, fig.bbr, fig.enhanced, 1)),
        grid={},
        points=[{"env": env, "arm": arm, "rtt_ms": rtt} for env in envs for arm in arms for rtt in common.RTTS_MS],
        quick_points=[{"env": env, "arm": arm, "rtt_ms": rtt} for env in envs for arm in arms for rtt in fig.quick_rtts],
        seeds=common.SEEDS,
        quick_seeds=common.QUICK_SEEDS,
        quick_overrides={"duration": QUICK_DURATION},
        seed_in_point=True,
        apply=_apply_for(fig),
        metric=metric,
        comparison=_comparison_for(fig),
        figure=_figure_for(fig, f"{title}\n{testbed}"),
    )
