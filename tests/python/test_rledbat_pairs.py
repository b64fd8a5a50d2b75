"""rLEDBAT paper, two-flow figures (quick variants): Figs. 10–15.

Asserted: the set-ups (the testbed's environment, tbf burst and GRO, at every point but Fig. 15's;
the paper's segment sizes, rLEDBAT at the receiver of a CUBIC sender,
sender-side LEDBAT++ as the comparison arm, the per-seed start jitter, Fig. 11's 40 s gap and its
both-active window), the helpers' arithmetic, and the pass rows of the notes that quick runs can
check and that hold in the full runs: two rLEDBAT flows are fair together and 40 s apart, with no
latecomer advantage (Figs. 10, 11); rLEDBAT yields to CUBIC with a 500 ms buffer at 20 and
500 Mbps and at every capacity, like sender-side LEDBAT++ (Figs. 12, 13); with a 30 ms buffer
CUBIC keeps the larger share, rLEDBAT about 20 % on average, less above 120 ms (the seed's L422)
(Fig. 14); at 500 Mbps CUBIC keeps the larger share (Fig. 15).

Reported in comparison.md with reasons, not asserted (they differ from the notes here):
Fig. 14's per-RTT band [10 %, 30 %] at the grid's ends (10 ms: GAIN = 1/12 slows rLEDBAT's
increase; 300 ms: the 30 ms buffer is a tenth of the BDP); the notes' reading of L422 (rLEDBAT
larger above 120 ms), which reverses the seed; "rLEDBAT more aggressive than LEDBAT++" (L422:
in the testbed grid means 19.3 % and 18.5 %, +0.9 ± 0.2 %, of either sign at a few RTTs; with the
ideal shaper 18.7 % and 18.5 %, within twice the seed standard error; the rLEDBAT download is
mostly bounded by its CUBIC sender's window, cut at loss detection like LEDBAT++'s); Fig. 15's "share(500) ≤ 0.7 × share(20)"
at 10–20 ms (rLEDBAT keeps about 20 % of 500 Mbps, 15–17 % over the run's last third; it holds
from 60 ms up) and "CUBIC > 80 %" at 10–60 ms (CUBIC 75–79 % of a full link, the rest rLEDBAT's).
"""

import json
import math

import pytest
from conftest import assert_rledbat_environment, run_quick

import ccbench
from ccbench.experiments import registry
from ccbench.experiments.rledbat import common, fig11, fig14, fig15, pairs

NAMES = ["rledbat-fig10", "rledbat-fig11", "rledbat-fig12", "rledbat-fig13", "rledbat-fig14", "rledbat-fig15"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every quick variant once: name → (out dir, summary)."""
    return run_quick([registry.get(name) for name in NAMES], tmp_path_factory)


def _rows(summary, **where):
    rows = summary
    for key, value in where.items():
        rows = rows[rows[key] == value]
    assert len(rows) > 0, where
    return rows


#: Experiments that keep the ideal shaper with per-segment ACKs.
UNSHAPED = {"rledbat-fig15"}


@pytest.mark.parametrize("name", NAMES)
def test_the_testbed_environment_at_every_point(name):
    """§5 (L307–L311), issue 25 item 6: every run in the testbed's environment, the tbf burst by
    tc-tbf(8)'s rule at the point's rate (32 KiB at 20 Mbps) on a 1 Gbit/s line and GRO at every
    TCP receiver; Fig. 15 keeps the ideal shaper (its docstring: GRO merges the 500 Mbps stream itself)."""
    assert_rledbat_environment(name, shaped=name not in UNSHAPED)


# ---------------------------------------------------------------- set-up and helpers

def test_versus_cubic_flows_are_the_papers_downloads():
    """L313: MSS 1390 in 1456 B frames; L346: rLEDBAT at the receiver of a CUBIC sender; the
    LEDBAT++ arm is the sender-side controller; both start within the U[0, 100 ms) jitter."""
    for arm, cca, receiver in ((pairs.RLEDBAT, "cubic", "rledbat"), (pairs.LEDBATPP, "ledbat++", None)):
        point = {"arm": arm, "rate_mbps": 20, "rtt_ms": 40, "buffer": "30ms", "seed": 3}
        scenario = ccbench.validate(registry.get("rledbat-fig14").base,
                                    overrides=registry.get("rledbat-fig14").overrides(point))
        lbe, cubic = scenario["flows"]
        assert (lbe["name"], cubic["name"]) == (pairs.LBE, pairs.CUBIC)
        assert lbe["cca"] == cca and cubic["cca"] == "cubic"
        assert lbe["tcp"]["receiver_cca"] == receiver and cubic["tcp"]["receiver_cca"] is None
        for flow in (lbe, cubic):
            assert flow["tcp"]["mss"] == common.MSS and flow["tcp"]["header_bytes"] == common.HEADER_BYTES
            assert flow["tcp"]["timestamps"], "rLEDBAT measures the RTT from TSval/TSecr (L144)"
            assert 0 <= flow["start_ns"] < common.START_JITTER_S * 1e9
        bottleneck = scenario["links"][0]
        assert bottleneck["limit"] == {"bytes": 75_000} and bottleneck["rate_bps"] == 20e6, "L311: 30 ms at 20 Mbps"
    # The arms share each seed's start draws, so they differ only in the controller.
    starts = [pairs.versus_cubic_flows(arm, 5)[0]["start"] for arm in (pairs.RLEDBAT, pairs.LEDBATPP)]
    assert starts[0] == starts[1]


def test_fig11_latecomer_starts_40_s_later_and_the_window_is_both_active():
    point = {"gap_s": fig11.GAP_S, "rate_mbps": 20, "rtt_ms": 100, "seed": 2}
    scenario = ccbench.validate(fig11.EXPERIMENT.base, overrides=fig11.EXPERIMENT.overrides(point))
    first, second = scenario["flows"]
    assert 0 <= first["start_ns"] < common.START_JITTER_S * 1e9
    assert fig11.GAP_S * 1e9 <= second["start_ns"] < (fig11.GAP_S + common.START_JITTER_S) * 1e9
    assert abs(scenario["warmup_ns"] - second["start_ns"]) <= 1_000
    together = ccbench.validate(fig11.EXPERIMENT.base,
                                overrides=fig11.EXPERIMENT.overrides({**point, "gap_s": 0.0}))
    assert together["warmup_ns"] == 0 and together["flows"][1]["start_ns"] < common.START_JITTER_S * 1e9


def test_gain_divisor_follows_eq_2():
    """L89: GAIN = 1/min(16, ⌈2T/RTT_b⌉) with T = 60 ms."""
    assert [common.gain_divisor(r) for r in (5, 10, 20, 60, 100, 120, 300)] == [16, 12, 6, 2, 2, 1, 1]


def test_unknown_arm_is_a_one_line_error_naming_it():
    with pytest.raises(ValueError, match="^arm: "):
        pairs.lbe_flow("vegas", "x", 0.0)


def test_whole_run_and_tail_rates_come_from_the_core():
    """The whole-run rate is the core's delivered payload over the run; the tail rate its per-bin
    goodput over the last third, here a window after the measurement window started."""
    scenario = common.base(duration_s=30, flows=pairs.two_rledbat_flows(1, 5.0))
    scenario["warmup"] = "20s"
    result = ccbench.run(scenario)
    metric = pairs.two_rledbat_metric(result, {"rate_mbps": 20})
    flows = {f["name"]: f for f in result.summary["flows"]}
    assert metric["second_whole_mbps"] == pytest.approx(flows["second"]["bytes_delivered"] * 8 / 30 / 1e6)
    # From 20 s both windows coincide, so the tail (20–30 s) equals the core's window rates.
    tail = pairs.tail_rates_mbps(result, (pairs.FIRST, pairs.SECOND))
    assert tail == pytest.approx([metric["first_mbps"], metric["second_mbps"]], rel=0.02)
    assert metric["first_whole_mbps"] > metric["first_mbps"], "alone for its first 5 s"


# ---------------------------------------------------------------- quick runs: the paper's claims

def test_every_quick_variant_writes_its_figure_and_comparison(quick):
    for name in NAMES:
        out, summary = quick[name]
        assert (out / f"{name}.png").stat().st_size > 0
        rows = json.loads((out / "comparison.json").read_text())
        assert rows and all({"what", "paper", "ours", "verdict"} <= set(r) for r in rows)
        assert any("L3" in r["paper"] or "L4" in r["paper"] for r in rows), "the paper's lines are cited"


def test_fig10_two_simultaneous_rledbat_flows_are_fair(quick):
    """L372, notes: Jain ≥ 0.95 at every RTT."""
    summary = quick["rledbat-fig10"][1]
    assert (summary["jain"] >= 0.95).all(), summary[["rtt_ms", "jain"]]


def test_fig11_latecomer_roughly_fair_without_advantage(quick):
    """L374, notes: Jain over the both-active window ≥ 0.90, ≤ the simultaneous index + 0.02, and
    the latecomer ≤ 65 % of the two rates at the end."""
    summary = quick["rledbat-fig11"][1]
    late = _rows(summary, gap_s=fig11.GAP_S).set_index("rtt_ms")
    together = _rows(summary, gap_s=0.0).set_index("rtt_ms")
    assert (late["jain"] >= fig11.JAIN_MIN).all()
    assert (late["jain"] <= together["jain"] + fig11.JAIN_SLACK).all()
    assert (late["second_tail_part"] <= fig11.LATE_MAX).all()


def test_fig12_rledbat_yields_to_cubic_at_20_and_500_mbps_like_ledbatpp(quick):
    """L389, notes: the LBE flow ≤ 10 % of C and CUBIC ≥ 80 %, for rLEDBAT at 20 and 500 Mbps and
    for sender-side LEDBAT++ beside it."""
    summary = quick["rledbat-fig12"][1]
    assert set(summary["rate_mbps"]) == {20, 500}
    assert (summary["lbe_share"] <= 0.10).all() and (summary["cubic_share"] >= 0.80).all()
    assert set(summary["arm"]) == {pairs.RLEDBAT, pairs.LEDBATPP}


def test_fig13_rledbat_yields_at_every_capacity(quick):
    """L391, notes: rLEDBAT ≤ 10 % of C from 1 to 50 Mbps."""
    summary = quick["rledbat-fig13"][1]
    assert len(summary) == 3 and (summary["lbe_share"] <= 0.10).all()


def test_fig14_rledbat_keeps_about_a_fifth_and_less_above_120_ms(quick):
    """L414: CUBIC takes the larger share at every RTT and rLEDBAT about 20 % on average (within
    ±0.10 of 0.20); L422 as written: CUBIC's part of the two flows' goodput larger above 120 ms,
    from each flow's own rate. The LEDBAT++ arm ran beside it (contrast rows, not asserted)."""
    summary = quick["rledbat-fig14"][1]
    ours, theirs = _rows(summary, arm=pairs.RLEDBAT), _rows(summary, arm=pairs.LEDBATPP)
    assert (ours["cubic_share"] > ours["lbe_share"]).all()
    assert fig14.SHARE_BAND[0] <= ours["lbe_share"].mean() <= fig14.SHARE_BAND[1]
    low, high = fig14.cubic_parts(ours)
    assert high > low
    rows = json.loads((quick["rledbat-fig14"][0] / "comparison.json").read_text())
    split = [r for r in rows if r["what"].startswith("CUBIC's dominance clearer above 120 ms")]
    assert [r["verdict"] for r in split] == ["agrees"] and split[0]["of"] == ["cubic_share", "lbe_share"]
    assert not any(r["what"].startswith("notes §3") for r in rows), "the notes' reversed L422 is not judged again"
    assert list(theirs["rtt_ms"]) == list(ours["rtt_ms"]) and (theirs["cubic_share"] > theirs["lbe_share"]).all()


def test_fig15_cubic_keeps_the_larger_share_at_500_mbps(quick):
    """L424: CUBIC seizes clearly more than rLEDBAT at 500 Mbps; the share ratio is computed."""
    summary = quick["rledbat-fig15"][1]
    fast = _rows(summary, rate_mbps=fig15.FAST_MBPS)
    assert (fast["cubic_share"] > 2 * fast["lbe_share"]).all()
    assert fast["share_ratio"].notna().all()
    assert not math.isnan(float(_rows(summary, rate_mbps=common.CAPACITY_MBPS)["lbe_share"].iloc[0]))
