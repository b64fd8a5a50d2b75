"""General topologies from Python: the parking-lot example file and builder, per-link results."""

from pathlib import Path

import pytest

import ccbench
from ccbench.topology import parking_lot

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "parking-lot.toml"


def _by_name(rows):
    return {row["name"]: row for row in rows}


def test_parking_lot_example_reports_every_link_by_name():
    r = ccbench.run(EXAMPLE, overrides=["duration=20s", "warmup=5s"])
    links = _by_name(r.summary["links"])
    assert set(links) == {"l1", "l1-rev", "l2", "l2-rev", "l3", "l3-rev"}
    flows = _by_name(r.summary["flows"])
    assert flows["long"]["path"] == ["l1", "l2", "l3"]
    for i in (1, 2, 3):
        assert links[f"l{i}"]["utilization"] > 0.95
        assert links[f"l{i}"]["from"] == "abcd"[i - 1]
        assert flows["long"]["goodput_mbps"] < flows[f"cross{i}"]["goodput_mbps"]
        assert links[f"l{i}-rev"]["queue_delay_ms"] is None
    # The series name links too: every forward link has its own rows.
    series = r.links
    assert {"l1", "l2", "l3"} <= set(series["link"])


def test_parking_lot_builder_matches_the_example_shape():
    scenario = parking_lot(hops=3, duration="10s")
    r = ccbench.run(scenario)
    flows = _by_name(r.summary["flows"])
    assert flows["long"]["path"] == ["l1", "l2", "l3"]
    assert flows["cross2"]["path"] == ["l2"]
    assert flows["long"]["rtt_ms"] == pytest.approx(60.0)
    assert {link["name"] for link in r.summary["links"]} >= {"l1", "l2", "l3"}


def test_bad_topology_is_a_scenario_error_naming_the_field():
    scenario = parking_lot(hops=2)
    scenario["flows"][0]["to"] = "nowhere"
    with pytest.raises(ccbench.ScenarioError, match=r"flows\[0\]\.to: unknown node \"nowhere\""):
        ccbench.run(scenario)
    with pytest.raises(ValueError, match="hops"):
        parking_lot(hops=0)
