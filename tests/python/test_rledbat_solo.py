"""rLEDBAT paper: rLEDBAT with VoIP and alone (quick variants): Figs. 5, 6, 7, 8, 9, 22.

Asserted: the set-ups (the testbed's environment at every point: tbf burst by tc-tbf(8)'s rule,
GRO at the receivers; the paper's segment sizes, buffers in bytes, arms, start jitter, the VoIP
flow), the trace helpers on hand-made series, and the notes' pass rows that the quick runs check
and that hold: Fig. 5's rLEDBAT rate, idle VoIP RTT and visible slowdowns; Fig. 6's ≈ 90 % at every
capacity with no trend; Fig. 7's ≈ 90 % below 200 ms and the drop at 300 ms, LEDBAT++ ≈ 90 % below
300 ms and the two similar at short RTTs; Fig. 8's slowdowns, ramps past T followed by a decrease,
a window left below the old one and below the BDP (both arms); Fig. 9's fall with RTT under the
AIMD bound; Fig. 22's enhanced variant unchanged solo.

Reported in comparison.json with reasons, not asserted (they differ here; a test that pinned them
would fail when the model gets better):
* Fig. 5: only ≈ 77 % of VoIP packets (not ≥ 85 %, paper 91.7 %) are under 60 ms extra delay in the
  testbed (57 % with the ideal shaper, whose base RTT counts a frame's 11.6 ms serialisation): the
  queue settles at the target, since LEDBAT++'s decrease just above T is under one packet per RTT,
  and at 1 Mbps a frame is 11.6 ms of queue (40 Mbps: ≈ 95 %); of the details the paper leaves
  open only turning delayed ACKs off reaches 85 % (89 %). The long-RTT spot points' rate
  over 40 s is low (start-up losses, then GAIN packets per RTT).
* Fig. 7: U(300 ms) under the notes' soft 0.65, and rLEDBAT more than 0.07 below LEDBAT++ at 300 ms
  (rlwnd starts at its maximum, so CUBIC's slow start overshoots and rLEDBAT's decreases leave the
  window far below the BDP; both then settle ≈ 20 % under the BDP: ramps past T, then decreases).
* Fig. 9: rLEDBAT below LEDBAT++ − 0.02 at long RTTs, not slightly above (L362): its receiver
  halves once per RTT while retransmissions keep arriving, so one overflow costs it more than one
  halving (the reason quotes the flight after and before a loss episode). Both arms sit far
  under the AIMD bound, below the 0.83 of it that the slowdowns leave: GAIN < 1 below 120 ms, and at long RTTs the ramps
  after slowdowns overflow the 30 ms buffer far below BDP + buffer.
"""

import json

import pandas as pd
import pytest
from conftest import assert_rledbat_environment, run_quick

import ccbench
from ccbench.experiments import registry
from ccbench.experiments.rledbat import common, fig5, fig6, fig7, fig8, fig9, fig22, solo, voip

NAMES = ["rledbat-fig5", "rledbat-fig6", "rledbat-fig7", "rledbat-fig8", "rledbat-fig9", "rledbat-fig22"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every quick variant once: name → (out dir, summary)."""
    return run_quick([registry.get(name) for name in NAMES], tmp_path_factory)


def _arm(summary, arm, x="rtt_ms"):
    return solo.by_arm(summary, arm, x)["utilisation"]


#: Experiments that keep the ideal shaper with per-segment ACKs.
UNSHAPED = set()


@pytest.mark.parametrize("name", NAMES)
def test_the_testbed_environment_at_every_point(name):
    """§5 (L307–L311), issue 25 item 6: every run in the testbed's environment, the tbf burst by
    tc-tbf(8)'s rule at the point's rate (32 KiB at 20 Mbps) on a 1 Gbit/s line and GRO at every
    TCP receiver."""
    assert_rledbat_environment(name, shaped=name not in UNSHAPED)


# ---------------------------------------------------------------- set-up and helpers

def test_voip_scenario_is_the_papers():
    """L323–L325: 160 B every 20 ms from 0 s, rLEDBAT (CUBIC sender) from 10 s, 1 Mbps, 150 ms
    of buffer in bytes, RTT 20 ms, 50 s; the paper's segment sizes (L313)."""
    exp = fig5.EXPERIMENT
    for seed in (1, 2):
        sc = ccbench.validate(exp.base, overrides=exp.overrides({**fig5.MAIN, "seed": seed}))
        voip, download = sc["flows"]
        assert voip["type"] == "cbr" and voip["cbr"]["packet_size"] == 160
        assert voip["cbr"]["interval_ns"] == 20_000_000 and voip["start_ns"] < 100_000_000
        assert download["cca"] == "cubic" and download["tcp"]["receiver_cca"] == "rledbat"
        assert download["tcp"]["mss"] == 1390 and download["tcp"]["header_bytes"] == 66
        assert 10e9 <= download["start_ns"] < 10.1e9
        assert sc["warmup_ns"] == download["start_ns"], "percentiles and rate over the download's window"
        link = sc["links"][0]
        assert link["rate_bps"] == 1e6 and link["limit"] == {"bytes": 18_750} and link["rtt_ns"] == 20_000_000
        assert sc["duration_ns"] == 50 * 10**9
    first = ccbench.validate(exp.base, overrides=exp.overrides({**fig5.MAIN, "seed": 1}))
    assert first["flows"][1]["start_ns"] != sc["flows"][1]["start_ns"], "the start is drawn per seed"
    noisy = ccbench.validate(exp.base, overrides=exp.overrides({**fig5.MAIN, "variant": "no-delayed-ack", "seed": 1}))
    assert noisy["flows"][1]["tcp"]["delayed_ack"] is False
    with pytest.raises(ValueError, match="variant"):
        exp.overrides({**fig5.MAIN, "variant": "nonsense", "seed": 1})


def test_solo_arms_buffers_and_jitter():
    """One download per arm: rLEDBAT at a CUBIC sender's receiver, the enhanced target, or sender
    LEDBAT++ with a plain receiver; 500 ms and 30 ms of 20 Mbps in bytes (L311)."""
    exp = fig7.EXPERIMENT
    starts = set()
    for arm, cca, receiver in ((solo.RLEDBAT, "cubic", "rledbat"), (solo.LEDBATPP, "ledbat++", None)):
        for seed in (1, 2, 3):
            sc = ccbench.validate(exp.base, overrides=exp.overrides({"rtt_ms": 100, "arm": arm, "seed": seed}))
            (flow,) = sc["flows"]
            assert flow["cca"] == cca and flow["tcp"]["receiver_cca"] == receiver
            assert flow["tcp"]["mss"] == common.MSS and 0 <= flow["start_ns"] < 100_000_000
            assert sc["links"][0]["limit"] == {"bytes": 1_250_000} and sc["links"][0]["rtt_ns"] == 100_000_000
            assert sc["warmup_ns"] == 0, "rates over the whole run (L315)"
            starts.add(flow["start_ns"])
    assert len(starts) == 3, "the start differs per seed, not per arm"
    enhanced = ccbench.validate(fig22.EXPERIMENT.base, overrides=fig22.EXPERIMENT.overrides(
        {"rtt_ms": 20, "arm": solo.ENHANCED, "seed": 1}))
    assert enhanced["flows"][0]["tcp"]["receiver_cc"] == {"enhanced_target": True}
    shallow = ccbench.validate(fig9.EXPERIMENT.base, overrides=fig9.EXPERIMENT.overrides(
        {"rtt_ms": 20, "arm": solo.RLEDBAT, "seed": 1}))
    assert shallow["links"][0]["limit"] == {"bytes": 75_000}
    capacity = ccbench.validate(fig6.EXPERIMENT.base, overrides=fig6.EXPERIMENT.overrides(
        {"capacity_mbps": 50, "arm": solo.RLEDBAT, "seed": 1}))
    assert capacity["links"][0]["rate_bps"] == 50e6 and capacity["links"][0]["limit"] == {"bytes": 3_125_000}
    assert capacity["links"][0]["rtt_ns"] == 20_000_000
    with pytest.raises(ValueError, match="arm"):
        solo.solo_flow("reno", 1)


def test_trace_helpers_on_hand_made_series():
    values = [0, 0, 50] + [100, 2, 2, 3, 50, 100, 100, 100, 100, 100] * 3
    flight = pd.Series(values, index=[round(0.1 * i, 1) for i in range(len(values))], dtype=float)
    events = fig8.slowdowns(flight)
    assert events == [(0.4, 0.6), (1.4, 1.6), (2.4, 2.6)], "the zero flight before the start is no slowdown"
    ramp = fig8.ramp_after(flight, flight * 0, 1.4, 1.6, 0.1)
    assert ramp["pre"] == 100 and ramp["restored"] == 100 and not ramp["decrease"]
    mask = [True, True, False, True, False, False, True]
    assert voip.runs_of(mask, [0, 1, 2, 3, 4, 5, 6], gap_s=2) == [(0, 3), (6, 6)]
    flow = pd.DataFrame({"retransmits": [0, 2, 1, 0, 4, 0, 3]}, index=[0.0, 0.1, 0.2, 0.5, 0.9, 1.5, 2.5])
    assert fig9.loss_episodes(flow) == [(0.1, 0.9), (2.5, 2.5)], "merged across gaps under 1 s"
    assert fig9.AIMD_BOUND[300] == 0.816 and all(fig9.AIMD_BOUND[r] >= fig9.AIMD_BOUND[s]
                                                 for r, s in zip(sorted(fig9.AIMD_BOUND), sorted(fig9.AIMD_BOUND)[1:]))


# ---------------------------------------------------------------- quick runs: the paper's claims

def test_every_quick_variant_writes_its_outputs(quick):
    for name in NAMES:
        out, summary = quick[name]
        assert (out / f"{name}.png").stat().st_size > 0
        rows = json.loads((out / "comparison.json").read_text())
        assert len(rows) >= 2 and all({"what", "paper", "ours", "tolerance", "verdict", "reason"} <= set(r) for r in rows)
        assert any(r.get("claim") for r in rows), "at least one row is judged"
        assert len(summary) >= 2 and not summary.isna().all(axis=None)


def test_fig5_rledbat_takes_what_voip_leaves_and_slows_down(quick):
    _, summary = quick["rledbat-fig5"]
    main = summary[summary.apply(fig5._is_main, axis=1) & (summary["variant"] == fig5.PAPER)].iloc[0]
    assert main["rledbat_kbps"] >= fig5.KBPS_MIN, "notes: ≥ 800 kbps (paper 890, L336)"
    assert main["rledbat_kbps"] <= 954 - 60, "never more than the best goodput less VoIP's 64 kbps"
    assert abs(main["idle_rtt_ms"] - 20) <= fig5.IDLE_SLACK_MS, "L327: the propagation delay alone"
    assert main["dips"] >= fig5.DIPS_MIN, "L334: the periodic slowdowns show in the VoIP delay"


def test_fig6_about_90_percent_at_every_capacity(quick):
    _, summary = quick["rledbat-fig6"]
    u = _arm(summary, solo.RLEDBAT, "capacity_mbps")
    assert (u >= fig6.BAND[0]).all() and (u[u.index > 1] <= fig6.BAND[1]).all(), u.to_dict()
    assert u[u.index >= 5].max() - u[u.index >= 5].min() <= 2 * fig6.TREND_HALF_WIDTH


def test_fig7_90_percent_below_200ms_then_less(quick):
    _, summary = quick["rledbat-fig7"]
    r, p = _arm(summary, solo.RLEDBAT), _arm(summary, solo.LEDBATPP)
    short = r[r.index < fig7.GOOD_BELOW_MS]
    assert ((short >= fig7.BAND[0]) & (short <= fig7.BAND[1])).all(), r.to_dict()
    assert r[300] <= short.mean() - fig7.DROP_MIN, "L348: less above 200 ms"
    assert ((p[p.index < 300] >= fig7.BAND[0]) & (p[p.index < 300] <= fig7.BAND[1])).all(), "L123"
    for rtt in short.index:
        assert abs(r[rtt] - p[rtt]) <= fig7.SIMILAR, f"L348: similar to LEDBAT++ at {rtt} ms"


def test_fig8_ramps_pass_the_target_and_the_window_stays_below(quick):
    _, summary = quick["rledbat-fig8"]
    for _, row in summary.iterrows():
        assert row["slowdowns"] >= 5, "a slowdown every 9·Tss"
        assert row["ramps_over_target"] >= 0.5 and row["decrease_after_ramp"] >= 0.5, row["arm"]
        assert row["settled_ratio"] < fig8.DECREASE_FRACTION, "L358: the window is not restored"
        assert row["plateau_pkts"] < 0.9 * row["bdp_pkts"], "so capacity is left unused"
        assert 0.8 <= row["ai_pkts_per_rtt"] <= 1.2, "GAIN = 1 at 300 ms (eq. 2)"


def test_fig9_utilisation_falls_with_rtt_under_the_aimd_bound(quick):
    _, summary = quick["rledbat-fig9"]
    summary = fig9._compare(summary)
    rows = solo.by_arm(summary, solo.RLEDBAT)
    u = list(rows["utilisation"])
    assert all(b <= a + fig9.NOISE for a, b in zip(u, u[1:])), u
    assert (rows["utilisation"] <= rows["aimd_bound"] + fig9.BOUND_SLACK).all()


def test_fig22_enhanced_target_leaves_solo_rate_unchanged(quick):
    _, summary = quick["rledbat-fig22"]
    m, o = _arm(summary, solo.ENHANCED), _arm(summary, solo.RLEDBAT)
    assert ((m - o).abs() <= fig22.SAME).all(), (m - o).to_dict()
    assert (m[m.index <= fig22.FLOOR_UP_TO_MS] >= fig22.FLOOR).all()


def _comparison(quick, name):
    out, _ = quick[name]
    return json.loads((out / "comparison.json").read_text())


def test_fig7_long_rtt_is_judged_against_l123_and_the_ledbatpp_arm_is_a_contrast(quick):
    """Issue 39: U(300 ms) falls (L348) but stays "similar to LEDBAT++" (L348), which was about 0.8
    at 400 ms (L123): at least 0.8 − 0.07; the 90 s quick run says how far 300 s could move it (the
    drift to the run's second half). Our sender LEDBAT++ arm is a contrast row, never the paper's."""
    _, summary = quick["rledbat-fig7"]
    rows = _comparison(quick, "rledbat-fig7")
    (long,) = [r for r in rows if r["what"].startswith("U(300 ms)")]
    assert long["claim"]["relation"] == "in" and long["claim"]["value"][0] == 0.73
    assert long["needs"] == ["duration"]
    r = solo.by_arm(summary, solo.RLEDBAT).loc[300]
    assert long["movable"] == pytest.approx(abs(r["utilisation_late"] - r["utilisation"]))
    similar = [r for r in rows if r["what"].startswith("rLEDBAT beside our sender LEDBAT++ arm")]
    assert similar and {r["verdict"] for r in similar} == {"contrast"}


def test_fig9_aimd_bound_is_a_contrast_and_fig22_compares_arms_only_below_t(quick):
    """Issue 39: the notes' AIMD bound is a model (contrast rows); from T up min(T, RTT_b) is T, so
    Fig. 22's two arms are the same controller and are not compared there."""
    bounds = [r for r in _comparison(quick, "rledbat-fig9") if r["what"].startswith("rLEDBAT: U / AIMD bound")]
    assert bounds and {r["verdict"] for r in bounds} == {"contrast"}
    same = [r for r in _comparison(quick, "rledbat-fig22") if r["what"].startswith("U_mod about U_orig")]
    assert same and all(float(r["what"].split(" at ")[1].split()[0]) < common.TARGET_MS for r in same)
