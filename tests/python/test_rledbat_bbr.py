"""rLEDBAT paper: the short-flow tables (Tables 1–3) and the BBR figures (Figs. 16–21), quick variants.

Every table and figure runs in the testbed's environment (§5, L307–L311: tbf with tc-tbf(8)'s
burst, 32 KiB at 20 Mbps, and GRO at the receivers; BBR with its ACK-aggregation allowance) and
beside it in the no-burst contrast arm, whose rows are labelled "[no burst, no GRO]".

Asserted: the set-ups (the environments and the burst rule, 262 KB flows with the handshake, the
background's lead, the paper's segment sizes and buffers, the BBR versions, the modified target on
both arms, equal starts across arms), and the pass rows that the quick runs can check and that
hold, in the testbed unless said: Table 1 (alone row ±10 %, alone ≤ rLEDBAT-bg ≤ CUBIC-bg,
CUBIC-bg/alone ≥ 10 at 20 ms and ≥ 2.5, the middle row within the issue's ±25 %), Table 2 (alone
row; BBRv1-bg < rLEDBAT-bg at 20 ms and BBRv1-bg < CUBIC-bg in both arms; at 100 ms 1.23 s behind
BBRv1 within ±10 % and alone < rLEDBAT-bg < BBRv1-bg; L450's extra BDP at 20 ms), Table 3 (alone
row, BBRv2-bg < rLEDBAT-bg at 20 ms, BBRv2-bg ≤ BBRv1-bg at 100 ms), Fig. 16 (yields at 200 ms,
share not increasing with RTT), Fig. 17 (yields at 100 ms in both arms; ≥ 0.25 at 20 ms without
the burst), Fig. 18 (BBRv2 yields at 20 ms, ≤ 0.15 of C), Fig. 19 (rLEDBAT takes more than half at 20 ms,
BBRv2 takes more at 60 ms; its "BBRv2 yields" row is judged at ≤ 0.15, which the quick run misses),
Figs. 20–21 (the modified target keeps the queue within one base RTT, L500, and Fig. 20 yields at
200 ms), and rLEDBAT within ±0.10 of sender LEDBAT++ (L448, L458, L464) where the quick run's one
seed shows it (our LEDBAT++ arm is a contrast row in comparison.md, not a paper claim).

Not asserted, reported in comparison.md with the mechanism found in the traces (full runs):
* Fig. 16 at ≤ 20 ms: rLEDBAT takes about two thirds of what the two carry, not an even split
  (L448): BBRv1's in-flight cap behind rLEDBAT's standing queue, which also keeps the tbf bucket
  from refilling (asserted: that row differs).
* Fig. 17 at 20 ms in the testbed: rLEDBAT keeps 0.20 (< 0.25): the tbf bursts lift BBRv1's
  estimate above C and its queue overflows the 30 ms buffer, cutting rLEDBAT's CUBIC sender; at
  40 ms 0.153 (> 0.15).
* Fig. 18: at 80–150 ms rLEDBAT keeps 0.25–0.19 (> 0.15): BBRv2's queue passes T only in probes.
* Figs. 20–21: the modified rLEDBAT keeps 0.15–0.45 below 60 ms (Fig. 21: up to 150 ms): BBR at
  its cap holds the queue at about one base RTT, the modified target itself.
* Table 1's CUBIC-bg cells (−27 % at 100 ms, +77 % at 300 ms, where the short flow's slow start
  overflows the full 500 ms buffer) and Table 2's BBRv1-bg < CUBIC-bg ratio at 300 ms with them.
* Table 2 at 100 ms: the long BBRv1 flow's queue is 51 ms, half the extra BDP of L450 (within
  tolerance): it paces at an estimate one tbf burst per round lifts by 13 % of the BDP there.
BBRv2 tests (``cca = "bbr2"``) skip when the core has no "bbr2" controller.
"""

import dataclasses
import json

import pytest
from conftest import run_quick

import ccbench
from ccbench.experiments import run_experiment, summarize
from ccbench.experiments.checks import redecide
from ccbench.experiments.rledbat import common, fig16, fig17, fig18, fig19, fig20, fig21, table1, table2, table3, vs_bbr
from ccbench.experiments.rledbat import short_flows as sf

HAS_BBR2 = "bbr2" in ccbench.controllers()
needs_bbr2 = pytest.mark.skipif(not HAS_BBR2, reason='the core has no "bbr2" controller yet')

FIGS = {"rledbat-fig16": fig16, "rledbat-fig17": fig17, "rledbat-fig18": fig18, "rledbat-fig19": fig19,
        "rledbat-fig20": fig20, "rledbat-fig21": fig21}
TABLES = {"rledbat-table1": table1, "rledbat-table2": table2, "rledbat-table3": table3}
BBR2_NAMES = {"rledbat-fig18", "rledbat-fig19", "rledbat-fig21", "rledbat-table3"}


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every quick variant the core can run: name → (out dir, summary)."""
    runnable = [m.EXPERIMENT for name, m in {**TABLES, **FIGS}.items() if HAS_BBR2 or name not in BBR2_NAMES]
    return run_quick(runnable, tmp_path_factory)


def _verdicts(out, what_prefix):
    """The verdicts of comparison.json's rows whose "what" starts with ``what_prefix``."""
    rows = json.loads((out / "comparison.json").read_text())
    return [r["verdict"] for r in rows if r["what"].startswith(what_prefix)]


# ---------------------------------------------------------------- set-up

def _params(names):
    return [pytest.param(name, marks=needs_bbr2 if name in BBR2_NAMES else ()) for name in sorted(names)]


def _assert_environment(sc, env):
    """§5 (L307–L311): the bottleneck's tbf burst (tc-tbf(8)'s rate/HZ at HZ = 100, rounded up to a
    power of two KiB: 32 KiB at 20 Mbps) at a 1 Gbit/s line rate, and GRO at every TCP receiver;
    the contrast arm has neither."""
    burst = env.burst_bytes(20)
    link = sc["links"][0]
    if burst is None:
        assert link["shaper"] is None
    else:
        assert link["shaper"] == {"burst_bytes": burst, "line_rate_bps": 1e9}
    for flow in sc["flows"]:
        assert flow["tcp"]["gro_ns"] == (50_000 if env.gro else 0), (env.key, flow["name"])


def test_testbed_burst_follows_the_tbf_man_page():
    """tc-tbf(8): burst ≥ rate/HZ (its example: 10 kbyte for 10 mbit/s, HZ = 100), in tc's "kb"
    rounded up to a power of two, and never below one frame."""
    assert common.tbf_burst_bytes(20) == 32 * 1024 >= 20e6 / 8 / 100
    assert common.tbf_burst_bytes(10) == 16 * 1024 and common.tbf_burst_bytes(1) == 2048
    assert common.tbf_burst_bytes(500) == 1024 * 1024
    assert common.TESTBED.burst_bytes(20) == 32 * 1024 and common.NO_BURST.burst_bytes(20) is None
    assert (common.HALF_BURST.burst_bytes(20), common.DOUBLE_BURST.burst_bytes(20)) == (16 * 1024, 64 * 1024)
    assert common.NO_GRO.burst_bytes(20) == 32 * 1024 and common.NO_GRO.gro is None


@pytest.mark.parametrize("name", _params(TABLES))
def test_short_flow_scenarios(name):
    """L393: 262 KB with the handshake; notes §5 item 2: 20 Mbps, 500 ms, the background U[10, 20] s
    ahead; L313: MSS 1390 in 1456 B frames; the testbed's environment and the no-burst contrast arm
    (Table 2 also sweeps the burst)."""
    module = TABLES[name]
    exp = module.EXPERIMENT
    assert exp.run_seeds() == list(common.SEEDS) and {p["rtt_ms"] for p in exp.params()} == {20, 100, 200, 300}
    envs = {p["env"] for p in exp.params()}
    sweep = {common.HALF_BURST.key, common.DOUBLE_BURST.key, common.NO_GRO.key} if module is table2 else set()
    assert envs == {common.TESTBED.key, common.NO_BURST.key} | sweep
    assert exp.params()[0]["env"] == common.TESTBED.key
    by_key = {row.key: row for row in module.ROWS}
    for seed, env in ((1, common.TESTBED), (2, common.NO_BURST), (3, common.TESTBED)):
        starts = set()
        for key, row in by_key.items():
            point = {"env": env.key, "row": key, "rtt_ms": 100, "seed": seed}
            sc = ccbench.validate(exp.base, overrides=exp.overrides(point))
            _assert_environment(sc, env)
            link = sc["links"][0]
            assert link["rate_bps"] == 20e6 and link["limit"] == {"bytes": 1_250_000}
            flows = {f["name"]: f for f in sc["flows"]}
            short = flows["short"]
            assert short["size_bytes"] == 262_000 and short["tcp"]["handshake"] and short["cca"] == row.short_cca
            assert short["tcp"]["mss"] == 1390 and short["tcp"]["header_bytes"] == 66
            assert 10e9 <= short["start_ns"] <= 20e9 and short["start_ns"] + 25e9 <= sc["duration_ns"]
            starts.add(short["start_ns"])
            background = flows.get("background")
            if row.background is None:
                assert background is None
                continue
            assert background["size_bytes"] is None and 0 <= background["start_ns"] < 0.1e9
            if row.background == "rledbat":
                assert background["cca"] == "cubic" and background["tcp"]["receiver_cca"] == "rledbat"
            else:
                assert background["cca"] == row.background and background["tcp"]["receiver_cca"] is None
        assert len(starts) == 1, "every row of a seed starts the short flow at the same time"


@pytest.mark.parametrize("name", _params(FIGS))
def test_vs_bbr_scenarios(name):
    """One LBE download (rLEDBAT over a CUBIC sender, or sender LEDBAT++) beside one BBR download,
    the same starts in both arms; the modified target on both arms of Figs. 20–21."""
    fig = FIGS[name].FIGURE
    exp = FIGS[name].EXPERIMENT
    assert exp.base["duration"] == "300s" and exp.run_seeds() == list(common.SEEDS)
    assert {p["rtt_ms"] for p in exp.params()} == set(common.RTTS_MS)
    assert [p["env"] for p in exp.params()][::len(exp.params()) // 2] == [common.TESTBED.key, common.NO_BURST.key]
    for seed, env in ((1, common.TESTBED), (2, common.NO_BURST)):
        arms = {}
        for arm in (vs_bbr.RLEDBAT, vs_bbr.LEDBATPP):
            sc = ccbench.validate(exp.base, overrides=exp.overrides({"env": env.key, "arm": arm, "rtt_ms": 20,
                                                                     "seed": seed}))
            _assert_environment(sc, env)
            assert sc["links"][0]["buffer"] == {"time_ns": int(fig.buffer[:-2]) * 10**6}
            lbe, bbr = sc["flows"]
            assert bbr["cca"] == fig.bbr and lbe["tcp"]["mss"] == 1390 and bbr["tcp"]["header_bytes"] == 66
            if arm == vs_bbr.RLEDBAT:
                assert lbe["cca"] == "cubic" and lbe["tcp"]["receiver_cca"] == "rledbat"
                assert lbe["tcp"]["receiver_cc"] == ({"enhanced_target": True} if fig.enhanced else {})
            else:
                assert lbe["cca"] == "ledbat++" and lbe["tcp"]["receiver_cca"] is None
                assert lbe["cc"] == ({"enhanced_target": True} if fig.enhanced else {})
            arms[arm] = [f["start_ns"] for f in sc["flows"]]
        assert arms[vs_bbr.RLEDBAT] == arms[vs_bbr.LEDBATPP] and all(0 <= s < 0.1e9 for s in arms[vs_bbr.RLEDBAT])
    point = {"env": common.TESTBED.key, "arm": vs_bbr.RLEDBAT, "rtt_ms": 20, "seed": 1}
    quick = ccbench.validate(exp.base, overrides=exp.overrides(point, quick=True))
    assert quick["duration_ns"] == common.QUICK_DURATION_S * 10**9


def test_order_rows_check_the_chain_and_skip_missing_cells():
    """Each link of the chain is the ratio of two cells, in the range both cells within their bands
    of the paper's give, never below the order (or the tie allowed)."""
    import pandas as pd

    summary = pd.DataFrame({"row": [sf.ALONE, sf.RLEDBAT, sf.SAME], "rtt_ms": [300] * 3, "fct_s": [1.82, 1.90, 5.0],
                            "queue_at_start_ms": [float("nan"), 60.0, 400.0], "retransmits": [0, 0, 3.0],
                            "timeouts": [0, 0, 1.0]})
    chain = [(sf.ALONE, ""), (sf.RLEDBAT, "<="), (sf.SAME, "<=")]

    def verdicts(frame, tie=0.0):
        return [r["verdict"] for r in sf.order_rows(frame, "x", "p", "Table 1", chain, 300, table1.PAPER, tie)]

    # 1.90/1.82 is in the range of 1.84/1.82; 5.0/1.90 = 2.6 is in that of 4.99/1.84 = 2.7.
    assert verdicts(summary) == ["agrees", "agrees"]
    swapped = summary.assign(fct_s=[1.90, 1.82, 5.0])
    assert verdicts(swapped) == ["differs", "agrees"]
    assert verdicts(swapped, tie=0.05) == ["agrees", "agrees"]
    # A CUBIC-bg cell far beyond the paper's makes its ratio leave the range: the order alone is not enough.
    assert verdicts(summary.assign(fct_s=[1.82, 1.90, 20.0])) == ["agrees", "differs"]
    assert sf.order_rows(summary, "x", "p", "Table 1", chain, 20, table1.PAPER) == []


# ---------------------------------------------------------------- Tables 1–3

def test_alone_rows_agree_with_the_tables_within_10_percent():
    """The alone rows depend only on IW10 and the handshake: each run within the ±10 % in which a cell
    agrees (notes: ±15 %), at every RTT."""
    for module in (table1, table2) + ((table3,) if HAS_BBR2 else ()):
        exp = dataclasses.replace(module.EXPERIMENT, quick_points=[{"env": common.TESTBED.key, "row": sf.ALONE,
                                                                    "rtt_ms": r} for r in sf.RTTS_MS])
        results = run_experiment(exp, quick=True, jobs=1)  # 5 ms runs: no pool, no figure
        assert list(results["error"]) == [""] * len(results)
        for _, row in results.iterrows():
            paper = module.PAPER[sf.ALONE][sf.RTTS_MS.index(row["rtt_ms"])]
            assert row["fct_s"] == pytest.approx(paper, rel=sf.CELL_AGREE), (exp.name, row["rtt_ms"], row["fct_s"])
        rows = exp.comparison(summarize(exp, results, quick=True))
        assert [r["verdict"] for r in rows if r["what"].startswith("FCT")] == ["agrees"] * len(sf.RTTS_MS)


def _testbed(quick, name, env=common.TESTBED):
    """The quick run's output folder and the summary of one environment (the testbed's by default)."""
    out, summary = quick[name]
    return out, sf.env_summary(summary, env)


def test_table1_rledbat_background_barely_slows_a_cubic_flow(quick):
    """L410: alone ≤ rLEDBAT-bg ≤ CUBIC-bg, CUBIC-bg/alone ≥ 10 at 20 ms and ≥ 2.5 (notes), and the
    rLEDBAT-bg row within the issue's ±25 %, in the testbed."""
    out, summary = _testbed(quick, "rledbat-table1")
    for rtt in sf.QUICK_RTTS_MS:
        alone, rledbat, cubic = (sf.cell(summary, key, rtt) for key in (sf.ALONE, sf.RLEDBAT, sf.SAME))
        assert alone <= rledbat <= cubic, (rtt, alone, rledbat, cubic)
        assert cubic / alone >= (table1.MIN_RATIO_20MS if rtt == 20 else table1.MIN_RATIO), rtt
        paper = table1.PAPER[sf.RLEDBAT][sf.RTTS_MS.index(rtt)]
        assert rledbat == pytest.approx(paper, rel=sf.MIDDLE_TOLERANCE), (rtt, rledbat, paper)
    assert set(_verdicts(out, "alone ≤ rLEDBAT-bg")) == {"agrees"}
    assert set(_verdicts(out, "CUBIC-bg / alone")) == {"agrees"}


def test_table2_bbrv1_background_is_short_at_20ms_and_below_cubic(quick):
    """L450: at 20 ms BBRv1's one-BDP queue is below rLEDBAT's 60 ms, so BBRv1-bg < rLEDBAT-bg; and
    BBRv1-bg is far below CUBIC-bg; in the testbed and without the burst."""
    out, _ = quick["rledbat-table2"]
    for env in (common.TESTBED, common.NO_BURST):
        _, summary = _testbed(quick, "rledbat-table2", env)
        assert sf.cell(summary, sf.SAME, 20) < sf.cell(summary, sf.RLEDBAT, 20), env.key
        for rtt in sf.QUICK_RTTS_MS:
            assert sf.cell(summary, sf.SAME, rtt) < sf.cell(summary, table2.CUBIC_BG, rtt), (env.key, rtt)
    assert _verdicts(out, "BBRv1-bg < rLEDBAT-bg at 20 ms") == ["agrees"]
    assert _verdicts(out, "[no burst, no GRO] BBRv1-bg < rLEDBAT-bg at 20 ms") == ["agrees"]


def test_table2_bbrv1_background_at_100ms_in_the_testbed(quick):
    """Table 2 at 100 ms (L441–L443): behind a long BBRv1 flow the 262 KB flow takes 1.23 s against
    0.68 s alone (agrees within ±10 %), and alone < rLEDBAT-bg < BBRv1-bg (L450). The testbed's tbf
    bursts and GRO are what give BBRv1 the standing queue: without them it takes 0.81 s (see the
    module docstring), which the contrast arm reports."""
    out, summary = _testbed(quick, "rledbat-table2")
    same, rledbat, alone = (sf.cell(summary, key, 100) for key in (sf.SAME, sf.RLEDBAT, sf.ALONE))
    assert same == pytest.approx(table2.PAPER[sf.SAME][1], rel=sf.CELL_AGREE)
    assert alone < rledbat < same
    assert _verdicts(out, "FCT, BBRv1 long background, then BBRv1 short, RTT 100 ms") == ["agrees"]
    assert set(_verdicts(out, "alone < rLEDBAT-bg < BBRv1-bg at 100 ms")) == {"agrees"}


def test_table2_bbrv1_queues_an_extra_bdp_at_20ms_in_the_testbed(quick):
    """L450: BBRv1's extra queue of about one BDP (20 ms at 20 ms), the notes' ±30 % for times."""
    out, summary = _testbed(quick, "rledbat-table2")
    queue = float(summary[(summary["row"] == sf.SAME) & (summary["rtt_ms"] == 20)]["queue_at_start_ms"].iloc[0])
    assert queue == pytest.approx(20, rel=table2.EXTRA_BDP_AGREE)
    assert _verdicts(out, "BBRv1-bg: the long BBRv1 flow's standing queue, at 20 ms") == ["agrees"]


def test_table2_sweeps_the_burst():
    """The burst is a swept contrast arm: half, twice, and without GRO, set beside the testbed's."""
    envs = [p["env"] for p in table2.EXPERIMENT.params(quick=True)]
    assert set(envs) == {e.key for e in (common.TESTBED, common.NO_BURST, common.HALF_BURST,
                                         common.DOUBLE_BURST, common.NO_GRO)}


def test_table2_extra_bdp_rows_state_their_reach_and_bbr_rows_their_mechanism(quick):
    """Issue 39: a quick row left to the full run states how far the missing seeds could move it (3
    seed stds of this run); a queue far outside that is judged; the reason names the missing
    TSO/GSO bursts."""
    out, summary = quick["rledbat-table2"]
    rows = _rows(out, "[no burst, no GRO] BBRv1-bg: the long BBRv1 flow's standing queue")
    assert rows and all(r["movable"] is not None for r in rows)
    for r in rows:
        assert r["verdict"] == "differs" and "TSO/GSO" in r["reason"] and r["of"] == ["queue_at_start_ms"]
    assert set(_verdicts(out, "burst sweep")) == {"contrast"}


@needs_bbr2
def test_table3_bbrv2_rows(quick):
    """Notes' pass rows for Table 3: BBRv2-bg < rLEDBAT-bg at 20 ms; BBRv2-bg ≤ BBRv1-bg at 100 ms
    (BBRv2 less aggressive, L482); in the testbed."""
    out, summary = _testbed(quick, "rledbat-table3")
    assert sf.cell(summary, sf.SAME, 20) < sf.cell(summary, sf.RLEDBAT, 20)
    assert sf.cell(summary, sf.SAME, 100) <= sf.cell(summary, table3.BBR1_BG, 100)
    assert _verdicts(out, "BBRv2-bg < rLEDBAT-bg at 20 ms") == ["agrees"]


# ---------------------------------------------------------------- Figs. 16–21

def _table(quick, name, env=common.TESTBED):
    """The quick run's output folder and one environment's shares by RTT (the testbed's by default)."""
    out, summary = quick[name]
    return out, vs_bbr.wide(summary, env).set_index("rtt_ms")


def _matches_ledbatpp(table):
    gap = (table["rledbat_lbe_share"] - table["ledbatpp_lbe_share"]).abs()
    assert (gap <= vs_bbr.MATCH_BAND).all(), gap.to_dict()


#: A rise in rLEDBAT's share between neighbouring RTTs smaller than this is noise (one seed).
RISE_NOISE = 0.01


def _rows(out, what_prefix):
    rows = json.loads((out / "comparison.json").read_text())
    return [r for r in rows if r["what"].startswith(what_prefix)]


def test_fig16_rledbat_yields_to_bbrv1_at_long_rtts_like_ledbatpp(quick):
    """L448: rLEDBAT yields above T (≤ 0.15 at 200 ms), takes more below, like LEDBAT++ [11]. The
    even split at 20 ms is judged on rLEDBAT's part of the two flows' goodput, from both flows' own
    rates: our 2:1 split differs (a share band [0.35, 0.65] of C passed it before issue 39)."""
    out, table = _table(quick, "rledbat-fig16")
    assert table.loc[200, "rledbat_lbe_share"] <= 0.15
    assert table.loc[20, "rledbat_lbe_share"] > table.loc[200, "rledbat_lbe_share"] + 0.2
    _matches_ledbatpp(table)
    shares = list(table["rledbat_lbe_share"])
    assert all(b <= a + RISE_NOISE for a, b in zip(shares, shares[1:])), "L448: does not increase with RTT"
    assert set(_verdicts(out, "rLEDBAT's share beside our sender LEDBAT++ arm's")) == {"contrast"}
    assert set(_verdicts(out, "RTT ≥ 80 ms: rLEDBAT share ≤ 0.15")) == {"agrees"}
    (even,) = _rows(out, "RTT ≤ 20 ms: an even split")
    lbe, bbr = table.loc[20, "rledbat_lbe_share"], table.loc[20, "rledbat_bbr_share"]
    assert even["value"] == pytest.approx(lbe / (lbe + bbr)) and even["of"] == ["lbe_share", "bbr_share"]
    assert even["claim"]["value"] == 0.5 and even["verdict"] == ("agrees" if abs(even["value"] - 0.5) <= 0.05 else
                                                                  "within tolerance" if abs(even["value"] - 0.5) <= 0.1
                                                                  else "differs")
    assert redecide(even, 2 / 3) == "differs", "a 2:1 split is not an even one"
    assert not _rows(out, "shares at RTT"), "every quick RTT is judged; its shares are shown in the judged row"


def test_fig17_rledbat_takes_part_below_the_buffer_size_and_yields_above(quick):
    """L458: with a 30 ms buffer rLEDBAT yields at 100 ms, like LEDBAT++, in both environments; it
    takes part of the link at 20 ms (≥ 0.25) without the burst. In the testbed it keeps ≈ 0.20 there
    (see the module docstring), so that row is asserted on the contrast arm only."""
    out, table = _table(quick, "rledbat-fig17")
    assert table.loc[100, "rledbat_lbe_share"] <= 0.15
    _matches_ledbatpp(table)
    _, plain = _table(quick, "rledbat-fig17", common.NO_BURST)
    assert plain.loc[20, "rledbat_lbe_share"] >= 0.25
    assert plain.loc[100, "rledbat_lbe_share"] <= 0.15
    _matches_ledbatpp(plain)
    assert _verdicts(out, "[no burst, no GRO] RTT ≤ 20 ms: rLEDBAT share ≥ 0.25") == ["agrees"]


def test_fig20_modified_rledbat_yields_to_bbrv1_at_long_rtts(quick):
    """L506 (at 200 ms; at 20 ms it differs, see the module docstring), like modified LEDBAT++."""
    _, table = _table(quick, "rledbat-fig20")
    assert table.loc[200, "rledbat_lbe_share"] <= 0.15
    _matches_ledbatpp(table)


#: L500: the modified flow refrains from queues larger than one BDP; the notes' BED-num band for
#: times (±30 %) on top of the base RTT.
QUEUE_BAND = 1.3


def test_fig20_modified_target_keeps_the_queue_near_one_base_rtt(quick):
    """L500 (the mechanism, which holds; the yielding that should follow from it does not)."""
    _, table = _table(quick, "rledbat-fig20")
    assert table.loc[20, "rledbat_queue_p90_ms"] <= QUEUE_BAND * 20


@needs_bbr2
def test_fig18_bbrv2_yields_to_rledbat_below_t(quick):
    """L464: BBRv2 yields to rLEDBAT at 20 ms (share > 0.5), like LEDBAT++ [11]."""
    out, table = _table(quick, "rledbat-fig18")
    assert table.loc[20, "rledbat_lbe_share"] > 0.5 > table.loc[20, "rledbat_bbr_share"]
    # The testbed's quick run (one 90 s seed) puts rLEDBAT 0.11 above LEDBAT++ at 20 ms; the full
    # run's 8 seeds agree at every RTT, so the quick run checks the match on the contrast arm.
    _, plain = _table(quick, "rledbat-fig18", common.NO_BURST)
    assert plain.loc[20, "rledbat_lbe_share"] > 0.5 > plain.loc[20, "rledbat_bbr_share"]
    _matches_ledbatpp(plain)
    assert _verdicts(out, "RTT ≤ 40 ms: BBRv2's share ≤ 0.15") == ["agrees"]
    (row,) = _rows(out, "RTT ≤ 40 ms: BBRv2's share ≤ 0.15")
    assert row["of"] == ["lbe_share"] and redecide(row, row["value"] / 2) == "differs"


@needs_bbr2
def test_fig19_bbrv2_yields_below_the_buffer_size_and_takes_more_above(quick):
    """L480: with a 30 ms buffer BBRv2 yields at 20 ms and takes more than rLEDBAT at 60 ms."""
    out, table = _table(quick, "rledbat-fig19")
    assert table.loc[20, "rledbat_lbe_share"] > 0.5
    assert table.loc[60, "rledbat_bbr_share"] > table.loc[60, "rledbat_lbe_share"]
    assert set(_verdicts(out, "RTT ≥ 40 ms")) == {"agrees"}
    # "BBRv2 yields" at 20 ms (L480), in the sense the rLEDBAT rows use (≤ 0.15 of C): judged on
    # rLEDBAT's own share, it fails exactly when BBRv2 keeps more than 0.15
    (row,) = _rows(out, "RTT ≤ 20 ms: BBRv2's share ≤ 0.15")
    bbr = table.loc[20, "rledbat_bbr_share"]
    assert row["verdict"] == ("agrees" if bbr <= 0.15 + 1e-4 else "differs")
    # The match with LEDBAT++ is left to the full run, which agrees at every RTT in the testbed: the
    # quick run's one 90 s seed puts rLEDBAT 0.10–0.22 above LEDBAT++ at 20 ms in both arms.
    _, plain = _table(quick, "rledbat-fig19", common.NO_BURST)
    assert plain.loc[20, "rledbat_lbe_share"] > 0.5


@needs_bbr2
def test_fig21_modified_target_keeps_the_queue_near_one_base_rtt(quick):
    """L500 against BBRv2 (the mechanism, which holds; the yielding does not)."""
    _, table = _table(quick, "rledbat-fig21")
    assert table.loc[20, "rledbat_queue_p90_ms"] <= QUEUE_BAND * 20


def test_table_cells_state_how_far_the_full_runs_seeds_could_move_them(quick):
    """Issue 39 item 3: a cell is a mean over the quick run's 3 seeds, a subset of the full run's 8,
    so its reach is 3·std·√(1/3 − 1/8) from this run's spread; a cell outside its band by more
    than that is judged, by less it is left to the full run."""
    out, summary = quick["rledbat-table1"]
    rows = _rows(out, "FCT, ")
    assert rows and all(r["needs"] == ["seeds"] and r["of"] == ["fct_s"] for r in rows)
    r = summary[(summary["row"] == sf.SAME) & (summary["rtt_ms"] == 100)].iloc[0]
    (cell,) = _rows(out, "FCT, CUBIC long background, then CUBIC short, RTT 100 ms")
    assert cell["movable"] == pytest.approx(3 * r["fct_s_std"] * (1 / 3 - 1 / 8) ** 0.5)
    assert sf.seed_reach({"seeds": 1, "fct_s_std": 0.0}, "fct_s") is None, "one seed has no spread to say it from"
    for row in _rows(out, "alone ≤ rLEDBAT-bg ≤ CUBIC-bg"):
        assert row["needs"] == ["seeds"] and row["movable"] is not None
