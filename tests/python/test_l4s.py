"""The L4S work (issue 27): the issue's own claims on the DualPI2 dumbbell, and the quick runs of
its experiments, whose judged rows must be able to fail (halving or doubling our number changes
the verdict) and carry a reason where they do not agree.

The numbers asserted here: over DualPI2 at 40 Mbps and 20 ms a Prague flow runs at the rate real
Linux Prague runs at against CUBIC (about twice CUBIC's: heistp/l4s-tests' Scenario 1 Fairness
Table, 2.05 and 2.17 at 50 Mbps, 20 ms, within the spread of those measurements), Prague's
queueing delay stays around a millisecond and CUBIC's around the 15 ms target; over one PIE queue
marking both the rates drift far apart. No factor of two: it was our guess at "roughly
equivalent", and Linux does not meet it either (issue 39 item 7).
"""

import json

import pytest
from conftest import run_quick

import ccbench
from ccbench.experiments.l4s import bbr3, coupling, dctcp_step, delay
from ccbench.experiments.l4s.common import classic_flow, dumbbell, scalable_flow


def _pair(aqm: str, scalable: str = "prague"):
    scenario = dumbbell([scalable_flow(scalable), classic_flow("cubic")], aqm=aqm)
    result = ccbench.run(scenario, overrides=["duration=\"40s\"", "warmup=\"10s\""])
    return {f["name"]: f for f in result.summary["flows"]}


def _window(flow, base_rtt_ms: float = 20.0) -> float:
    """Rate × (base RTT + the flow's mean queueing delay): its mean window, in Mbit."""
    return flow["goodput_mbps"] * (base_rtt_ms + flow["queue_delay_ms"]["mean"]) / 1e3


def test_dualpi2_gives_prague_the_rate_linux_prague_gets_and_keeps_the_queues_apart():
    """At 40 Mbps, 20 ms Prague runs at the ratio to CUBIC that real Linux Prague ran at over
    DualPI2 at 50 Mbps, 20 ms (2.05 and 2.17), within the spread of those measurements, at about
    equal windows (the coupling's aim); its queue stays under a millisecond and CUBIC's near the
    15 ms target."""
    flows = _pair("dualpi2")
    prague, cubic = flows["l4s"], flows["classic"]
    assert 2 / 3 <= _window(prague) / _window(cubic) <= 1.5, (prague, cubic)
    claim, _, _ = coupling.measured(40, 20)
    ratio = prague["goodput_mbps"] / cubic["goodput_mbps"]
    assert claim.decide(ratio) in ("agrees", "within tolerance"), (ratio, claim.text())
    assert prague["queue_delay_ms"]["p99"] < 1.0, prague["queue_delay_ms"]
    assert 10.0 < cubic["queue_delay_ms"]["mean"] < 20.0, cubic["queue_delay_ms"]
    assert prague["ecn_negotiated"] and cubic["ecn_negotiated"]


def test_prague_rows_are_held_to_linux_where_it_was_measured():
    """A Prague point near a real measurement (same RTT, rate within 25 %) is held to it, with the
    measurements' own spread as tolerance; where none exists the Abstract's claim stays."""
    claim, paper, source = coupling.measured(40, 20)
    assert claim.value == pytest.approx((32.39 / 14.94, 31.85 / 15.51)[::-1], abs=1e-9)
    assert claim.within == pytest.approx(coupling.SPREAD) and 0.02 < coupling.SPREAD < 0.03
    assert "Scenario 1 Fairness Table" in source and "2.05 and 2.17" in paper
    assert claim.decide(2.10) == "agrees" and claim.decide(1.9) == "differs" and claim.decide(2.4) == "differs"
    assert coupling.measured(4, 20) is None and coupling.measured(40, 5) is None
    assert coupling.measured(120, 20)[0].value == 1.9


def test_one_pie_queue_lets_the_rates_drift_far_apart():
    flows = _pair("pie")
    assert flows["l4s"]["goodput_mbps"] > 5 * flows["classic"]["goodput_mbps"], flows


def test_the_scenario_puts_prague_in_l_and_cubic_in_c():
    sc = ccbench.validate(dumbbell([scalable_flow("prague"), classic_flow("cubic")]))
    prague, cubic = sc["flows"]
    assert prague["tcp"]["ect1"] and prague["tcp"]["accecn"] and prague["tcp"]["ecn"]
    assert cubic["tcp"]["ecn"] and not cubic["tcp"]["ect1"] and not cubic["tcp"]["accecn"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    return run_quick([coupling.EXPERIMENT, delay.EXPERIMENT, dctcp_step.EXPERIMENT, bbr3.EXPERIMENT], tmp_path_factory)


@pytest.mark.parametrize("name", ["l4s-coupling", "l4s-delay", "l4s-dctcp-step", "l4s-bbr3"])
def test_every_judged_row_can_fail_and_every_difference_says_why(quick, name):
    from ccbench.experiments.can_fail import findings_in

    rows = json.loads((quick[name][0] / "comparison.json").read_text())
    assert [str(f) for f in findings_in(quick[name][0])] == [], name
    assert all(r["reason"] for r in rows if r["verdict"] in ("differs", "reported", "full run decides")), name


def test_dualpi2_holds_the_l4s_delays_in_the_quick_runs(quick):
    rows = json.loads((quick["l4s-delay"][0] / "comparison.json").read_text())
    p99 = [r for r in rows if r["what"].startswith("L queue delay, 99th")]
    assert p99 and all(r["value"] < 2.0 for r in p99), p99


def test_a_bound_far_away_is_judged_and_says_so():
    """Issue 39: a bound far from ours is still a claim; the reason says how far."""
    from ccbench.experiments.l4s.common import bound_check

    far = bound_check("w", "p", "s", 0.5, "≤", 2.0, "0.5")
    assert far.verdict == "agrees" and far.reason == "far inside the bound: 4.0 times inside 2"
    assert bound_check("w", "p", "s", 1.5, "≤", 2.0, "1.5").verdict == "agrees"
    assert bound_check("w", "p", "s", 2.5, "≤", 2.0, "2.5").verdict == "differs"
    assert bound_check("w", "p", "s", 6.0, "≥", 1.25, "6").verdict == "agrees"
    assert bound_check("w", "p", "s", 1.0, "≥", 1.25, "1").verdict == "differs"


def test_bbrv3_has_lower_queues_than_cubic_in_a_deep_buffer(quick):
    """The draft's claim, far beyond its bound in our model: reported there, asserted here."""
    rows = json.loads((quick["l4s-bbr3"][0] / "comparison.json").read_text())
    deep = next(r for r in rows if r["what"].startswith("one flow, 8 BDP"))
    assert deep["value"] < 0.5, deep


ISSUE_FORM = """
duration = "30s"
warmup = "10s"
[bottleneck]
rate = "40Mbps"
rtt = "20ms"
buffer = "1000p"
aqm = "dualpi2"
[[flows]]
name = "l4s"
cca = "prague"
[[flows]]
name = "classic"
cca = "cubic"
ecn = true
"""


def test_the_issues_scenario_form_marks_without_saying_ecn():
    """DualPI2 marks by default, as Linux's does (it has no switch): Prague gets marks, not
    drops, with no `ecn = true` on the link."""
    result = ccbench.run(ISSUE_FORM)
    link = result.link("bottleneck")
    assert link["ecn_marks"] > 0 and link["drops"] == 0, link
    prague = result.flow("l4s")
    assert prague["retransmits"] == 0 and prague["goodput_mbps"] > 10, prague
