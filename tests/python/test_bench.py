"""``ccbench bench`` machinery on a tiny scenario, and ``--ns3`` without ns-3.

None of these tests needs ns-3 or runs it: the ns-3 side is either a stand-in runner or
made unimportable with monkeypatch (nothing is uninstalled). The scenario reaches ns-3 as the
core validated it; where the core's validate_* is not built yet, a literal validated dict of the
documented shape stands in (``validated_dumbbell``).
"""

import copy
import json
import sys

import pytest
from conftest import validated_dumbbell

import ccbench
from ccbench import bench, cli, ns3_reference
from ccbench.ns3_reference import NS3_MISSING, run_ns3, translate

TINY = bench._scenario("10Mbps", "2s", "cubic", 2)
ROW_FIELDS = {"scenario", "sim_s", "wall_s", "sim_per_wall", "packets_per_s", "events_per_s",
              "packets", "events", "goodput_mbps", "total_goodput_mbps", "utilization", "drops"}


@pytest.fixture
def tiny_bench(monkeypatch):
    monkeypatch.setattr(bench, "SCENARIOS", {"tiny-2x10Mbps-2s": TINY})
    monkeypatch.setattr(bench, "NS3_SCENARIOS", ("tiny-2x10Mbps-2s",))


@pytest.fixture
def stand_in_validate(monkeypatch):
    """bench hands ns-3 the validated scenario; stand in for the core's validate_* here."""
    monkeypatch.setattr(bench, "validate", lambda scenario: validated_dumbbell(("cubic", "cubic")))


@pytest.fixture
def no_ns3(monkeypatch):
    """Make ``ns3`` (and the wheel's ``ns`` stub) unimportable in this process."""
    monkeypatch.delenv("CCBENCH_NS3_PYTHON", raising=False)
    monkeypatch.setitem(sys.modules, "ns3", None)
    monkeypatch.setitem(sys.modules, "ns", None)


def fake_ns3(scenario, timeout=None):
    """Stands in for run_ns3: the shape of its answer, with made-up numbers."""
    flows = len(translate(scenario)["ccas"])
    return {"wall_s": 0.5, "import_s": 9.0, "setup_s": 0.8, "process_s": 10.5, "events": 1000,
            "goodput_mbps": [4.5] * flows, "utilization": 0.95, "drops": 12, "config": {}}


def test_run_bench_rows(tiny_bench):
    rows = bench.run_bench(repeat=2)
    assert [r["scenario"] for r in rows] == ["tiny-2x10Mbps-2s"]
    row = rows[0]
    assert ROW_FIELDS <= set(row)
    assert row["sim_s"] == pytest.approx(2.0)
    assert row["wall_s"] > 0 and row["events"] > 0 and row["packets"] > 0
    assert len(row["goodput_mbps"]) == 2
    assert 0 < row["total_goodput_mbps"] <= 10.0
    assert 0 < row["utilization"] <= 1.0
    assert row["process_s"] > row["wall_s"] and row["process_repeat"] == 2
    assert "ns3" not in row


def test_table_reports_whole_process_not_a_fixed_figure(tiny_bench):
    text = bench.format_table(bench.run_bench(repeat=1))
    lines = text.splitlines()
    assert lines[0].split() == ["scenario", "sim", "s", "wall", "s", "sim-s/wall-s", "pkts/s",
                                "events/s"]
    assert lines[2].startswith("tiny-2x10Mbps-2s")
    assert "whole `ccbench run --out` process for tiny-2x10Mbps-2s" in lines[-1]
    assert "reference figure" not in text and not hasattr(bench, "NS3_SCENARIO1_WALL_S")


def test_process_time_failure_is_reported():
    with pytest.raises(RuntimeError, match="ccbench run failed: error: "):
        bench.process_time('duration = "-1s"\n', repeat=1)


def test_main_writes_json_and_prints_table(tiny_bench, tmp_path, capsys):
    rows = bench.main(repeat=1, out=str(tmp_path))
    out = capsys.readouterr().out
    assert "tiny-2x10Mbps-2s" in out and "side by side" not in out
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["repeat"] == 1
    assert data["results"] == json.loads(json.dumps(rows))
    assert ROW_FIELDS | {"process_s"} <= set(data["results"][0])


def test_side_by_side_with_stand_in_runner(tiny_bench, stand_in_validate):
    rows = bench.add_ns3(bench.run_bench(repeat=1), runner=fake_ns3)
    row = rows[0]
    assert row["ns3"]["wall_s"] == 0.5 and row["ns3"]["process_s"] == 10.5
    assert row["ns3"]["total_goodput_mbps"] == pytest.approx(9.0)
    assert row["ns3_speedup"] == pytest.approx(0.5 / row["wall_s"])
    text = bench.format_ns3_table(rows)
    assert "side by side with ns-3" in text
    line = next(l for l in text.splitlines() if l.startswith("tiny-2x10Mbps-2s"))
    assert "9.00" in line and "0.950" in line and "/ 12" in line and "×" in line
    # Whole process beside whole process: ccbench's measured run, ns-3's child.
    assert f"{row['process_s']:.3f}" in line and "10.50" in line


def test_failed_ns3_run_is_reported_not_raised(tiny_bench, stand_in_validate):
    def broken(scenario, timeout=None):
        raise RuntimeError("ns-3 run failed (exit status 1): boom")

    rows = bench.add_ns3(bench.run_bench(repeat=1, process=False), runner=broken)
    assert rows[0]["ns3"] == {"error": "ns-3 run failed (exit status 1): boom"}
    assert "ns-3 failed: ns-3 run failed" in bench.format_ns3_table(rows)


def test_run_ns3_without_ns3_raises_clear_error(no_ns3, monkeypatch):
    def no_child(*args, **kwargs):
        raise AssertionError("no ns-3 child process should be started")

    monkeypatch.setattr(ns3_reference.subprocess, "run", no_child)
    with pytest.raises(RuntimeError) as info:
        run_ns3(validated_dumbbell())
    assert str(info.value) == "ns-3 is not installed: pip install ns3==3.44.post0"
    assert str(info.value) == NS3_MISSING


def test_bench_ns3_flag_without_ns3_is_one_line_error(no_ns3, tiny_bench, monkeypatch, capsys):
    def no_bench(*args, **kwargs):
        raise AssertionError("the ccbench runs should not start when ns-3 is missing")

    monkeypatch.setattr(bench, "run_bench", no_bench)
    assert cli.main(["bench", "--ns3", "--repeat", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: bench --ns3: {NS3_MISSING}"]


def test_child_reporting_missing_ns3_maps_to_clear_error(monkeypatch):
    """An interpreter named by CCBENCH_NS3_PYTHON that lacks ns-3: the child's exit status 3."""
    monkeypatch.setenv("CCBENCH_NS3_PYTHON", sys.executable)

    class Proc:
        returncode = 3
        stdout = json.dumps({"error": NS3_MISSING}) + "\n"
        stderr = ""

    monkeypatch.setattr(ns3_reference.subprocess, "run", lambda *a, **k: Proc())
    with pytest.raises(RuntimeError, match=r"^ns-3 is not installed: pip install ns3==3\.44\.post0"):
        run_ns3(validated_dumbbell())


def test_translate_reads_the_validated_dumbbell():
    p = translate(validated_dumbbell())
    assert p["rate_bps"] == 20e6 and p["rtt_s"] == pytest.approx(0.1)
    assert p["bottleneck_delay_s"] == 0.0
    assert p["queue_limit"] == "250000B" and p["buffer_bytes"] == 250_000
    assert p["duration_s"] == 100.0 and p["ccas"] == ["cubic"] and p["seed"] == 1
    assert translate(validated_dumbbell(["cubic"] * 10))["ccas"] == ["cubic"] * 10
    packets = translate(validated_dumbbell(["newreno"], limit={"packets": 100}))
    assert packets["ccas"] == ["newreno"] and packets["queue_limit"] == "100p"


def test_translate_finds_the_bottleneck_by_name():
    sc = validated_dumbbell()
    sc["links"].reverse()  # position must not matter
    assert translate(sc)["rate_bps"] == 20e6
    for link in sc["links"]:
        link["name"] = link["name"].replace("bottleneck", "core")
    with pytest.raises(ValueError, match="no link named 'bottleneck'"):
        translate(sc)


def _link(sc, name):
    return next(link for link in sc["links"] if link["name"] == name)


def _with(change):
    sc = validated_dumbbell()
    change(sc)
    return sc


@pytest.mark.parametrize("scenario, message", [
    (_with(lambda s: _link(s, "bottleneck").update(aqm="codel")), "droptail"),
    (_with(lambda s: _link(s, "bottleneck").update(loss=0.01)), "loss"),
    (_with(lambda s: _link(s, "bottleneck-rev").update(rate_bps=1e6)), "rate_bps"),
    (_with(lambda s: s["topology"].update(generator="links")), "dumbbell"),
    (_with(lambda s: s["flows"][0].update(cca="bbr")), "bbr"),
    (_with(lambda s: s["flows"][0].update(start_ns=1_000_000_000)), "from time 0"),
    (_with(lambda s: s["flows"][0].update(cc={"beta": 0.5})), "beta"),
    (_with(lambda s: s["flows"][0]["tcp"].update(delayed_ack=False)), "delayed_ack"),
    (_with(lambda s: s.update(warmup_ns=5)), "warmup"),
])
def test_translate_rejects_what_it_cannot_model(scenario, message):
    with pytest.raises(ValueError, match=f"ns-3 reference: .*{message}"):
        translate(copy.deepcopy(scenario))


def test_translate_of_the_core_validated_bench_scenarios():
    """Enabled once the core has validate_toml: the bench scenarios as the core resolves them."""
    p = translate(ccbench.validate(bench.SCENARIOS["cubic-1x20Mbps-100s"]))
    assert p["rate_bps"] == 20e6 and p["rtt_s"] == pytest.approx(0.1)
    assert p["buffer_bytes"] == 250_000  # 1 BDP = 20 Mbps × 100 ms / 8
    assert p["duration_s"] == 100.0 and p["ccas"] == ["cubic"]
    assert translate(ccbench.validate(bench.SCENARIOS["cubic-10x100Mbps-30s"]))["ccas"] == ["cubic"] * 10
    assert translate(ccbench.validate(bench.SCENARIOS["newreno-1x10Mbps-300s"]))["ccas"] == ["newreno"]


def test_scale_rows_are_named_by_their_flows_and_compared_with_the_fewest(monkeypatch):
    """The scale rows (issue: packets per second within 2× from 1 to 10,000 flows) validate with
    the flow counts their names give, and the table gives each against its set-up's smallest."""
    import ccbench

    for names in bench.SCALE_ROWS.values():
        for name in names:
            flows = int(name.split("-")[-1].removesuffix("flows"))
            assert len(ccbench.validate(bench.SCENARIOS[name]())["flows"]) == flows, name
    rows = [{"scenario": n, "flows": f, "packets_per_s": p} for n, f, p in
            (("scale-dumbbell-1flows", 1, 3e6), ("scale-dumbbell-1000flows", 1000, 2e6),
             ("scale-dumbbell-10000flows", 10000, 1e6))]
    (line,) = bench.format_scale(rows)
    assert "1 flows 3.00 M packets/s" in line and "10,000 flows 1.00 M (3.00× slower)" in line
