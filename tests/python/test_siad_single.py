"""SIAD thesis §4.2 (components) and §4.3 (one flow, robustness): each quick variant once, and
the headline claims it can check, with the tolerances the modules name.

Asserted: Fixed_Increase rates within ±15 % of L2221; SI_only's epoch constant with the rate and
×1.5 with Num_RTT 30 (±20 %); AD_only and SIAD_addDecrease drain the queue, Fixed_Decrease
underutilizes 0.5 BDP; one SIAD flow > 95 % busy from 0.2 to 2 BDP with min queue fill 0 and
mean ≈ 0.5; the loss-event distance within 20 % of Num_RTT RTTs and doubling with Num_RTT;
NewReno's standing queue above 1 BDP; the per-packet-rate utilizations of L2409 (±2 points);
CBR raises SIAD's mean queue fill.

SI_trend and SIAD_trend run the printed listings' trend rule (A.6 L4725–4747, A.11 L5904–5921)
and converge within 15 s (L2251, L2309); the prose's rule is a contrast arm, its rows reported
in comparison.json.

Reported in comparison.json, not asserted (they differ here): the delay-jitter utilizations of L2419 (H-TCP, SIAD hardly suffer here), the standing
queue after the RTT drops to 40 ms, and fewer Additional Decreases without timestamps (L2439).
"""

import json

import pytest
from conftest import run_quick

import ccbench
from ccbench.experiments import registry
from ccbench.experiments.siad import cbr, components, rate_jitter, single_flow

NAMES = ["siad-components", "siad-single-flow", "siad-rtt-change", "siad-rate-jitter", "siad-delay-jitter",
         "siad-cbr", "siad-timestamps"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return run_quick([registry.get(name) for name in NAMES], tmp_path_factory)


def _case(summary, case):
    return summary[summary["case"] == case].iloc[0]


def test_component_scenario_is_the_thesis():
    """L2191–L2195: two flows, 10 Mbit/s, 62 500 B, 50 ms each way, no delayed ACKs, the variant."""
    exp = components.EXPERIMENT
    sc = ccbench.validate(exp.base, overrides=exp.overrides({"case": "fixed-1v3-10M", "duration_s": 600.0}))
    link = sc["links"][0]
    assert link["rate_bps"] == 10e6 and link["limit"] == {"bytes": 62_500} and link["delay_ns"] == 50_000_000
    f1, f2 = sc["flows"]
    assert f1["cc"] == {"num_rtt": 20, "variant": "Fixed_Increase", "fixed_alpha": 1} and f2["cc"]["fixed_alpha"] == 3
    assert not f1["tcp"]["delayed_ack"] and f1["tcp"]["initial_window"] == 10
    late = ccbench.validate(exp.base, overrides=exp.overrides({"case": "si-trend-6s", "duration_s": 60.0}))
    assert late["flows"][1]["start_ns"] == 6 * 10**9 and late["warmup_ns"] == 21 * 10**9


def test_cbr_is_full_frames_at_the_rate():
    flow = cbr.cbr_flow(5)
    assert flow["packet_size"] + cbr.CBR_HEADER == 1500 and flow["interval"] == "2400us"


def test_every_quick_variant_writes_its_outputs(quick):
    for name in NAMES:
        out, summary = quick[name]
        assert (out / f"{name}.png").stat().st_size > 0
        rows = json.loads((out / "comparison.json").read_text())
        assert rows and all({"what", "paper", "ours", "verdict", "reason"} <= set(r) for r in rows), name
        assert len(summary) >= 2


def test_fixed_increase_rates_and_epochs(quick):
    _, s = quick["siad-components"]
    for name, case in components.CASES.items():
        if case["group"] == "fixed":
            r = _case(s, name)
            for ours, paper in zip((r["rate1_mbps"], r["rate2_mbps"]), case["ref"]):
                assert abs(ours / paper - 1) <= components.RATE_TOL, (name, ours, paper)
    base = _case(s, "si-only-10M")["loss_distance_s"]
    assert abs(_case(s, "si-only-20M")["loss_distance_s"] / base - 1) <= components.EPOCH_TOL
    assert abs(_case(s, "si-only-n30")["loss_distance_s"] / base / 1.5 - 1) <= components.EPOCH_TOL


def test_trend_variants_run_the_listing_with_the_prose_as_contrast():
    """Issue 25 item 5: the listing's trend is the main arm, the prose's a labelled contrast."""
    for name, case in components.CASES.items():
        if case["variant"] in ("SI_trend", "SIAD_trend"):
            listing = not name.endswith("-prose")
            assert case["rule"] == (components.LISTING if listing else components.PROSE), name
            assert all(p["literal_trend"] is listing for p in case["params"]), name
            if not listing:
                assert name.removesuffix("-prose") in components.CASES, name


def test_trend_converges_within_15_s(quick):
    """L2251, L2309: SI_trend (second flow 0 or 6 s late) and SIAD_trend converge within ≈ 15 s."""
    _, s = quick["siad-components"]
    for name in ("si-trend-0s", "si-trend-6s", "siad-trend-6s"):
        assert _case(s, name)["larger_over_smaller"] <= components.CONVERGED, name


def test_decrease_components_drain_or_not(quick):
    _, s = quick["siad-components"]
    for name in ("ad-only-0.5", "ad-only-1.0", "ad-only-1.5", "siad-adddec-0s", "siad-adddec-5s"):
        assert _case(s, name)["queue_fill_min"] == 0, name
    assert _case(s, "fixed-dec-0.5")["utilization"] < _case(s, "ad-only-0.5")["utilization"]
    assert max(_case(s, f"si-only-{o}s")["larger_over_smaller"] for o in (0, 4, 5, 6)) > components.CONVERGED


def test_one_siad_flow_fills_the_link_and_drains_the_queue(quick):
    _, s = quick["siad-single-flow"]
    siad = s[s["scheme"].str.startswith("SIAD") & (s["rate_mbps"] == 10)]
    assert (siad["utilization"] > single_flow.UTIL_MIN).all(), siad[["scheme", "buffer_bdp", "utilization"]]
    assert (siad["queue_fill_min"] == 0).all()
    assert ((siad["queue_fill_mean"] - 0.5).abs() <= single_flow.FILL_TOL).all()
    newreno = s[(s["scheme"] == "NewReno") & (s["buffer_bdp"] > 1)]
    assert (newreno["queue_fill_min"] > 0).all(), "L2371: a standing queue above 1 BDP"


def test_loss_event_distance_is_num_rtt_rtts_and_doubles(quick):
    _, s = quick["siad-single-flow"]
    rows = s[s["scheme"].str.startswith("SIAD") & (s["buffer_bdp"] == 0.5)]
    assert ((rows["distance_over_expected"] - 1).abs() <= single_flow.DISTANCE_TOL).all()
    for rate in (10, 50):
        d = rows[rows["rate_mbps"] == rate].set_index("scheme")["loss_distance_s"]
        assert abs(d["SIAD(40)"] / d["SIAD(20)"] / 2 - 1) <= single_flow.DISTANCE_TOL, rate


def test_rate_jitter_utilizations(quick):
    _, s = quick["siad-rate-jitter"]
    for _, r in s.iterrows():
        paper = rate_jitter.PAPER.get(r["scheme"])
        if paper is not None:
            assert abs(r["utilization"] - paper) <= rate_jitter.UTIL_TOL, r["scheme"]


def test_cbr_keeps_more_queue_than_siad_alone(quick):
    """L2425–L2431: SIAD cannot empty the queue beside CBR. (The minimum fill over the full
    580 s still touches 0 at 100 Mbit/s, so the standing-queue row differs in comparison.json.)"""
    _, s = quick["siad-cbr"]
    for (rate, cbr_mbps) in cbr.CBR.items():
        rows = s[s["rate_mbps"] == rate].set_index("cbr_mbps")
        assert rows.loc[cbr_mbps, "queue_fill_mean"] > rows.loc[0, "queue_fill_mean"], rate


@pytest.mark.parametrize("name", NAMES)
def test_every_judged_row_can_fail(quick, name):
    """Issue 25 item 3: halving or doubling our number changes every passing row's verdict."""
    from test_siad_checks_can_fail import assert_rows_can_fail

    assert_rows_can_fail(name, quick[name][0])
