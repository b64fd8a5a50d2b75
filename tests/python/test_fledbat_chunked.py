"""fLEDBAT paper, chunk-by-chunk experiments (quick variants): Fig. 3(a), 4(a), 4(b), 5(a), 5(b).

fLEDBAT runs the decrease once per RTT, the main reading of the missing eq. (5) (``common.DECREASE``).

Asserted: the set-up (250 kB chunks over one kept connection, the reference flow settings, the
drawn start times and jitter), the helpers' arithmetic, and the notes' pass rows that quick runs
can check and that hold. Reported in comparison.md with reasons, not asserted (they differ from
the paper here): fLEDBAT beside NewReno still takes > 10 % for 10⁻³ ≤ ζ ≲ 0.1 (Fig. 4(a)); the
fLEDBAT/LEDBAT crossover near ζ ≈ 0.2–0.3 instead of [2, 10], and F above 0.9 near it (Fig. 4(b));
η just under 0.9 at ζ = 0.5 with two 250 kB-chunked flows (Fig. 5(a); chunk pauses) and at N = 2 in
Fig. 5(b). Not asserted from the quick run: Fig. 5(a)'s F ≥ 0.95 at ζ = 0.01 (two seeds; the full
run agrees).
"""

import json
import math

import pytest
from conftest import run_quick
from test_fledbat_checks_can_fail import assert_checks_can_fail

import ccbench
from ccbench.experiments import registry
from ccbench.experiments.fledbat import common, fig3a, fig4a, fig4b, fig5a, fig5b

NAMES = ["fledbat-fig3a", "fledbat-fig4a", "fledbat-fig4b", "fledbat-fig5a", "fledbat-fig5b"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """Every quick variant once: name → (out dir, summary)."""
    return run_quick([registry.get(name) for name in NAMES], tmp_path_factory)


def _at(summary, **where):
    rows = summary
    for key, value in where.items():
        rows = rows[rows[key] == value]
    assert len(rows) == 1, where
    return rows.iloc[0]


# ---------------------------------------------------------------- set-up and helpers

def test_chunked_flows_keep_one_connection_and_send_250kb_chunks():
    """L290: 250 kB chunks, the window kept (P_P = 1: one connection); L263: 1500 B packets."""
    result = ccbench.run(fig3a.EXPERIMENT.base, overrides=["duration=\"20s\"", "warmup=\"10s\""])
    for flow in result.summary["flows"]:
        assert flow["connections"] == 1 and flow["chunks"] > 10
        assert flow["bytes_delivered"] >= flow["chunks"] * 250_000
        # L271: 50 ms with the transmission delays (the core's rtt is propagation only), plus U[0, 1] ms.
        base = common.PROPAGATION_RTT_S * 1e3
        assert base <= flow["rtt_ms"] <= base + 1.0
    sc = ccbench.validate(fig3a.EXPERIMENT.base)
    for flow in sc["flows"]:
        assert flow["tcp"]["mss"] == 1460 and flow["tcp"]["header_bytes"] == 40
        assert not flow["tcp"]["delayed_ack"] and flow["tcp"]["initial_window"] == 2
        assert flow["cc"] == {"target": "25ms", "alpha": 1.0, "zeta": 0.01, "decrease": "per-rtt"}
    # F and η over the last 50 % are the core's: the warm-up is half the run, quick or full.
    assert sc["warmup_ns"] * 2 == sc["duration_ns"] == 300 * 10**9
    exp = fig3a.EXPERIMENT
    quick = ccbench.validate(exp.base, overrides=exp.overrides({"zeta": 0.01}, quick=True))
    assert quick["warmup_ns"] * 2 == quick["duration_ns"] == 100 * 10**9


def test_fig4_competitors_and_start_times():
    exp = fig4a.EXPERIMENT
    for seed in (1, 2, 3):
        sc = ccbench.validate(exp.base, overrides=exp.overrides({"arm": fig4a.MIXED, "zeta": 0.1, "seed": seed}))
        assert [f["cca"] for f in sc["flows"]] == ["fledbat", "newreno"] and sc["flows"][1]["tcp"]["sack"]
        assert all(0 <= f["start_ns"] <= 1e9 for f in sc["flows"])
        alone = ccbench.validate(exp.base, overrides=exp.overrides({"arm": fig4a.TCP_ALONE, "zeta": 0.0, "seed": seed}))
        assert alone["flows"][0]["start_ns"] == sc["flows"][1]["start_ns"], "the same TCP start in both arms"
        # Measured from the last start (notes §4 item 9): the core's window.
        assert sc["warmup_ns"] == max(f["start_ns"] for f in sc["flows"])
        assert alone["warmup_ns"] == alone["flows"][0]["start_ns"]
    exp = fig4b.EXPERIMENT
    sc = ccbench.validate(exp.base, overrides=exp.overrides({"zeta": 5.0, "seed": 4}))
    ledbat = sc["flows"][1]
    assert ledbat["cca"] == "ledbat" and ledbat["cc"]["target"] == "25ms", "footnote 10: a shared target"
    assert all(0 <= f["start_ns"] <= 10e9 for f in sc["flows"])
    assert sc["warmup_ns"] == max(f["start_ns"] for f in sc["flows"])


def test_fig5a_measured_from_the_latecomers_arrival():
    exp = fig5a.EXPERIMENT
    sc = ccbench.validate(exp.base, overrides=exp.overrides({"chunk": fig5a.PAPER_CHUNK, "zeta": 0.1}))
    assert sc["warmup_ns"] == sc["flows"][1]["start_ns"] == 10e9, "measured from the latecomer's arrival"


def test_fig5b_flows_arrive_every_10_s_and_run_200_s_after_the_last():
    exp = fig5b.EXPERIMENT
    sc = ccbench.validate(exp.base, overrides=exp.overrides({"flows_n": 4, "zeta": 0.2, "measure_s": 200.0}))
    assert [f["start_ns"] for f in sc["flows"]] == [0, 10e9, 20e9, 30e9]
    assert sc["duration_ns"] == 230e9 and sc["warmup_ns"] == 30e9, "measured after the last arrival"
    assert len(fig5b.EXPERIMENT.params()) == 9 * 4


def test_log_crossing_and_loop_rtt_equilibrium():
    assert common.log_crossing([0.1, 1.0, 10.0], [0.2, 0.4, 0.6], 0.5) == pytest.approx(math.sqrt(10))
    assert math.isnan(common.log_crossing([0.1, 1.0], [0.1, 0.2], 0.5))
    # (Q − Cτ)(R + Q/C) = Nατ/ζ, C = 833.33 packets/s: ζ = 0.01 → 61.3 packets (eq. 10 alone: 120.8).
    capacity = 1e7 / 8 / 1500
    for zeta in (0.01, 0.1, 5.0):
        q = common.queue_at_loop_rtt_packets(zeta)
        assert (q - capacity * 0.025) * (0.05 + q / capacity) == pytest.approx(2 * 0.025 / zeta, rel=1e-9)
    assert common.queue_at_loop_rtt_packets(0.01) == pytest.approx(61.3, abs=0.05)


# ---------------------------------------------------------------- quick runs

def test_every_experiment_writes_its_outputs(quick):
    for name in NAMES:
        out, _ = quick[name]
        for file in ("results.csv", "summary.csv", "comparison.md", "comparison.json", f"{name}.png"):
            assert (out / file).stat().st_size > 0, (name, file)
        rows = json.loads((out / "comparison.json").read_text())
        assert rows and all(r["source"] and r["paper"] and r["ours"] for r in rows), name


@pytest.mark.parametrize("name", NAMES)
def test_every_check_can_fail(quick, name):
    assert_checks_can_fail(quick[name][0], name)


def test_fig4a_tiny_zeta_is_judged_and_fig5a_contrasts_are_contrasts(quick):
    """L324: below ζ = 10⁻³ the low-priority goal is lost, judged as a breakdown above the 10 %
    the yielding ζ's meet (far from it here, and said so); the 1 MB chunks are not the paper's: a
    contrast beside it."""
    rows = json.loads((quick["fledbat-fig4a"][0] / "comparison.json").read_text())
    tiny = [r for r in rows if "< 10⁻³" in r["what"]]
    assert tiny and all(r["claim"] == {"relation": "≥", "value": 0.1, "agree": 0.0, "within": 0.0, "relative": True}
                        for r in tiny)
    assert all(r["verdict"] == "agrees" and (not r.get("far") or "far inside" in r["reason"]) for r in tiny)
    rows = json.loads((quick["fledbat-fig5a"][0] / "comparison.json").read_text())
    contrast = [r for r in rows if r["what"].startswith("contrast")]
    assert contrast and all(r["verdict"] == "contrast" for r in contrast)


def test_fig3a_latecomer_corrects_its_base_and_shares_fairly(quick):
    """Notes' pass rows: base error ≤ 2 ms within 30 s (every seed); F(last 50 %) ≥ 0.9."""
    row = quick["fledbat-fig3a"][1].iloc[0]
    assert row["late_base_fixed_s_max"] <= fig3a.BASE_WITHIN_S
    assert row["jain_last_half"] >= fig3a.JAIN_MIN
    assert row["q_star_packets"] == pytest.approx(120.83, abs=0.01) and row["q_reference_packets"] == 100


def test_fig4a_low_priority_beside_tcp_for_large_zeta_and_lost_for_tiny(quick):
    summary = quick["fledbat-fig4a"][1]
    alone = _at(summary, arm=fig4a.TCP_ALONE)["eta"]
    assert alone < 0.9, "chunk pauses leave a lone TCP below the capacity"
    large = _at(summary, arm=fig4a.MIXED, zeta=5.0)
    assert large["breakdown"] <= fig4a.BREAKDOWN_MAX and large["jain"] <= fig4a.JAIN_MAX
    assert large["eta"] >= alone - fig4a.ETA_SLACK
    tiny = _at(summary, arm=fig4a.MIXED, zeta=1e-4)
    assert tiny["breakdown"] > fig4a.BREAKDOWN_MAX, "L324: ζ < 10⁻³ loses low priority"


def test_fig4b_ledbat_starved_at_small_zeta_and_never_fair(quick):
    summary = quick["fledbat-fig4b"][1]
    small = summary[summary["zeta"] <= fig4b.SMALL_ZETA]
    assert (small["ledbat_share"] < fig4b.LEDBAT_MAX).all()
    assert (summary["jain"] <= fig4b.JAIN_MAX).all()
    shares = summary.sort_values("zeta")["ledbat_share"].tolist()
    assert shares[-1] > 0.5 > shares[0], "LEDBAT's share rises with ζ past one half (L331)"
    assert summary["crossover_zeta"].iloc[0] == summary["crossover_zeta"].iloc[0]


def test_fig5a_fair_and_efficient_in_the_band_and_fair_with_fewer_restarts(quick):
    """L337: fair (F ≥ 0.95) and efficient (η ≥ 0.9) over the band ζ ∈ [0.01, 0.5], the notes'
    rows, where the quick run holds them: F at ζ ≥ 0.1 (at 0.01 two seeds decide, see the module
    docstring), η below 0.5 (at 0.5 the chunk pauses idle the link just under 0.9)."""
    summary = quick["fledbat-fig5a"][1]
    band = summary[(summary["chunk"] == fig5a.PAPER_CHUNK) & summary["zeta"].between(*fig5a.BAND)]
    assert len(band) >= 3
    assert (band[band["zeta"] >= 0.1]["jain"] >= fig5a.JAIN_MIN).all()
    assert (band[band["zeta"] < fig5a.BAND[1]]["eta"] >= fig5a.ETA_MIN).all()
    contrast = _at(summary, chunk=fig5a.CONTRAST_CHUNK, zeta=0.1)
    assert contrast["jain"] >= fig5a.JAIN_MIN and contrast["eta"] >= fig5a.ETA_MIN


def test_fig5b_some_zeta_is_fair_beyond_two_flows(quick):
    summary = quick["fledbat-fig5b"][1]
    for n in (4, 6):
        part = summary[summary["flows_n"] == n]
        assert part["jain"].max() >= fig5b.BEST_JAIN_MIN, n
        assert (part["eta"] >= fig5b.ETA_MIN).all(), n


def test_fig5b_every_zeta_of_the_range_is_fair_for_few_flows(quick):
    """L344: for every N some ζ is fair (F ≥ 0.95, two flows included), and any ζ of the range
    works for BitTorrent's flow counts: the notes' F ≥ 0.9 for ζ ∈ {0.1, 0.2}, N ≤ 6."""
    summary = quick["fledbat-fig5b"][1]
    for n, part in summary.groupby("flows_n"):
        assert part["jain"].max() >= fig5b.BEST_JAIN_MIN, n
    mid = summary[summary["zeta"].isin(fig5b.MID_ZETAS) & (summary["flows_n"] <= fig5b.MID_MAX_FLOWS)]
    assert len(mid) and (mid["jain"] >= fig5b.MID_JAIN_MIN).all()
