"""Issue 24, the core's half: hostile scenarios and signals. Deep or cyclic input is a one-line
error, not a segfault; Ctrl-C and SIGTERM stop the event loop and keep what it simulated; a run
whose estimated memory cannot fit is refused before it starts; a bad --out is found before any
work; and the smaller parser holes are closed. Each case once crashed, hung or lied."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import PYTHON_DIR

import ccbench
from ccbench import _core
from ccbench.cli import main

SHORT = """\
duration = "2s"
[bottleneck]
rate = "10Mbps"
rtt = "20ms"
[[flows]]
cca = "cubic"
"""

#: About 7 s of wall time on this machine: long enough to be interrupted mid-way.
LONG = SHORT.replace('"2s"', '"300s"').replace('"10Mbps"', '"1Gbps"')


@pytest.fixture
def short(tmp_path):
    path = tmp_path / "short.toml"
    path.write_text(SHORT)
    return path


def one_error(capsys, argv) -> str:
    """``ccbench argv`` in this process: exit 2 and exactly one line ``error: …``."""
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ----- deep and cyclic input (item 2) --------------------------------------------------------

def test_a_dict_that_contains_itself_is_an_error():
    d = {"duration": "1s", "bottleneck": {"rate": "10Mbps"}}
    d["x"] = d
    with pytest.raises(ccbench.ScenarioError, match=r"<dict>: x\.x: contains itself"):
        ccbench.run(d)


def test_a_flows_list_that_contains_itself_is_an_error():
    flows = []
    flows.append({"cca": "cubic", "more": flows})
    with pytest.raises(ccbench.ScenarioError, match=r"flows\[0\]\.more: contains itself"):
        ccbench.run({"duration": "1s", "bottleneck": {"rate": "10Mbps"}, "flows": flows})


def test_a_dict_nested_200000_deep_is_an_error():
    top = cur = {}
    for _ in range(200_000):
        cur["a"] = {}
        cur = cur["a"]
    with pytest.raises(ccbench.ScenarioError, match="nested deeper than 32 levels") as info:
        ccbench.validate(top)
    assert len(str(info.value)) < 200


def test_a_key_that_is_not_a_string_is_named():
    with pytest.raises(ccbench.ScenarioError, match=r"<dict>: <top level>: key 1 is not a string"):
        ccbench.run({1: 2})


def test_a_20000_part_override_key_is_one_line(capsys, short):
    key = ".".join(["a"] * 20_000)
    line = one_error(capsys, ["run", short, "--set", f"{key}=1"])
    assert "at most 16" in line and len(line) < 300


# ----- signals (item 3) ----------------------------------------------------------------------

def _default_sigint():
    # A shell starts background jobs with SIGINT ignored, and Python then never turns SIGINT
    # into KeyboardInterrupt: give the child the default a user's terminal gives it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args, cwd):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    return subprocess.Popen([sys.executable, "-m", "ccbench", *args], cwd=cwd, env=env,
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=_default_sigint)


def _wait_for_output_of_the_loop(proc, seconds=1.5):
    # The CLI starts in well under a second; the run itself takes several.
    time.sleep(seconds)
    assert proc.poll() is None, "the run ended before it could be interrupted"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_stops_the_loop_and_keeps_what_it_simulated(tmp_path, sig):
    (tmp_path / "long.toml").write_text(LONG)
    proc = _start(["run", "long.toml", "--out", "o"], tmp_path)
    _wait_for_output_of_the_loop(proc)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: interrupted at "), err
    assert "wrote the partial run to o" in lines[0]
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["partial"] is True
    assert 0 < summary["sim_s"] < summary["scenario"]["duration_s"] == 300
    flow = summary["flows"][0]
    assert flow["goodput_mbps"] > 100, flow  # a real partial result, not zeros
    import pandas as pd
    series = pd.read_parquet(tmp_path / "o" / "flows.parquet")
    assert series["t_s"].max() <= summary["sim_s"]


def test_the_api_raises_interrupted_with_the_partial_result(tmp_path):
    calls = []

    def stop_after_a_few(now_ns):
        calls.append(now_ns)
        if len(calls) == 3:
            raise KeyboardInterrupt

    raw = _core.run_toml(LONG, "long", progress=stop_after_a_few)
    assert raw["summary"]["partial"] is True
    assert raw["summary"]["sim_s"] == pytest.approx(calls[-1] / 1e9)
    # Another exception from the callback is the caller's bug: raised, not swallowed.
    with pytest.raises(ZeroDivisionError):
        _core.run_toml(LONG, "long", progress=lambda now: 1 / 0)


def test_a_complete_run_is_not_marked_partial(short, tmp_path):
    result = ccbench.run(short, out=tmp_path / "o", progress=True)
    assert "partial" not in result.summary
    assert "partial" not in json.loads((tmp_path / "o" / "summary.json").read_text())


# ----- output paths before work (item 4) ------------------------------------------------------

def test_out_that_is_a_file_is_refused_before_the_run(capsys, tmp_path):
    # The scenario would be refused for its cost; --out is checked first, before anything.
    (tmp_path / "huge.toml").write_text(LONG.replace('"300s"', '"3000000s"').replace(
        "[bottleneck]", '[output]\nbin = "10s"\n[bottleneck]'))
    (tmp_path / "file").write_text("keep me")
    line = one_error(capsys, ["run", tmp_path / "huge.toml", "--out", tmp_path / "file"])
    assert line.startswith("error: --out: ") and "not a folder" in line
    assert (tmp_path / "file").read_text() == "keep me"


def test_an_empty_out_is_refused(capsys, short):
    assert one_error(capsys, ["run", short, "--out", ""]).startswith("error: --out: ")


def test_the_api_checks_out_before_running(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(Exception, match="^out: "):
        ccbench.run(LONG, out=tmp_path / "file")


# ----- runaway resources (item 5) -------------------------------------------------------------

def test_a_cbr_flood_is_refused_by_its_estimated_memory(capsys, tmp_path):
    path = tmp_path / "cbr.toml"
    path.write_text(SHORT.replace('cca = "cubic"', 'type = "cbr"\ninterval = "1ns"\npacket_size = 65507'))
    line = one_error(capsys, ["run", path])
    assert "flows[0].interval: this run would hold about" in line and "billion packets" in line
    assert "--max-memory" in line


def test_a_long_run_with_a_fine_bin_is_refused_naming_duration(capsys, tmp_path):
    path = tmp_path / "long.toml"
    path.write_text(SHORT.replace('"2s"', '"1000000s"').replace("[bottleneck]", '[output]\nbin = "1s"\n[bottleneck]'))
    line = one_error(capsys, ["run", path])
    assert ": duration: this run would hold about" in line


def test_an_explicit_limit_lets_a_run_through_or_stops_it(capsys, short, tmp_path):
    line = one_error(capsys, ["run", short, "--max-memory", "10kB"])
    assert "more than the memory limit of 10 kB" in line
    assert main(["run", str(short), "--max-memory", "1GB", "--out", str(tmp_path / "o")]) == 0
    assert "expected a size" in one_error(capsys, ["run", short, "--max-memory", "banana"])
    with pytest.raises(ccbench.ScenarioError, match="max_memory"):
        ccbench.run(short, max_memory=-1)


def test_scenario_files_are_read_with_a_size_cap(capsys, tmp_path):
    assert "not a regular file" in one_error(capsys, ["run", "/dev/zero"])
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (2 << 20) + "\n" + SHORT)
    assert "larger than 1 MiB" in one_error(capsys, ["run", big])
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    assert "not UTF-8" in one_error(capsys, ["run", binary])


# ----- smaller ones (item 8) ------------------------------------------------------------------

def test_a_huge_seed_is_blamed_on_the_flag(capsys, short):
    line = one_error(capsys, ["run", short, "--seed", str(2**70)])
    assert "--seed" in line and "short.toml" not in line


def test_a_date_time_is_shown_as_written(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("name = 1979-05-27T07:32:00Z\n" + SHORT)
    line = one_error(capsys, ["run", path])
    assert line.endswith("name: expected a string, got the date-time 1979-05-27T07:32:00Z")


def test_a_missing_topology_names_the_array_of_tables(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('duration = "1s"\n')
    assert "[[links]] (links)" in one_error(capsys, ["run", path])


@pytest.mark.parametrize("override, field", [
    ("bottleneck.rate=0.0000001bps", "bottleneck.rate: must be at least 512bps"),
    ("flows[0].rcv_buf=1B", "flows[0].rcv_buf: must hold at least one segment"),
])
def test_what_cannot_carry_one_packet_is_refused(capsys, short, override, field):
    assert field in one_error(capsys, ["run", short, "--set", override])


def test_a_path_that_crosses_a_link_twice_is_refused():
    scenario = {
        "duration": "1s",
        "links": [{"name": "ab", "from": "a", "to": "b", "rate": "10Mbps"},
                  {"name": "bc", "from": "b", "to": "c", "rate": "10Mbps"}],
        "flows": [{"from": "a", "to": "c", "path": ["ab", "ab-rev", "ab", "bc"]}],
    }
    with pytest.raises(ccbench.ScenarioError, match=r"flows\[0\]\.path: .*\"ab\" appears twice"):
        ccbench.validate(scenario)


def test_traces_that_would_fill_the_disk_are_refused_before_the_run(monkeypatch, tmp_path):
    import ccbench.api

    scenario = LONG.replace("[bottleneck]", '[output]\npcap = ["bottleneck"]\n[bottleneck]')
    need = ccbench.estimate(scenario)["pcap_bytes"]
    assert need > 1e9  # 25 million packets' headers
    monkeypatch.setattr(ccbench.api, "_free_bytes", lambda path: 10**8)
    with pytest.raises(ccbench.ScenarioError, match=r"output\.pcap: the traces would take about 2\.\d GB, "
                                                     r"more than the 0\.1 GB free on "):
        ccbench.run(scenario, out=tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_a_folder_of_other_files_is_not_written_into(capsys, short, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "summary.json").write_text("my own notes")
    (home / "thesis.tex").write_text("")
    line = one_error(capsys, ["run", short, "--out", home])
    assert line.startswith(f"error: --out: {home}: holds files that are not a run's (thesis.tex)")
    assert (home / "summary.json").read_text() == "my own notes"
    # A previous run's folder is fine to run into again, and so is an empty one.
    assert main(["run", str(short), "--out", str(tmp_path / "o")]) == 0
    assert main(["run", str(short), "--out", str(tmp_path / "o")]) == 0
    with pytest.raises(ValueError, match="^out: .* holds files that are not a run's"):
        ccbench.run(short, out=home)


@pytest.mark.parametrize("duration, says", [("0s", "duration: must be > 0"),
                                            ("3s", "warmup: must be less than duration")])
def test_compare_emu_names_a_bad_duration_before_any_run(capsys, tmp_path, duration, says):
    line = one_error(capsys, ["compare-emu", "--duration", duration, "--out", tmp_path / "ce"])
    assert line == f"error: --duration {duration}: {line.split(': ', 2)[2]}" and says in line
    assert not (tmp_path / "ce").exists()


@pytest.mark.parametrize("overrides, says", [(5, "not int"), ("a=1", "not one string"),
                                             ([5], r"got 5 \(int\)")])
def test_overrides_of_the_wrong_type_are_named(short, overrides, says):
    with pytest.raises(TypeError, match=rf"^overrides\b.*{says}"):
        ccbench.run(short, overrides=overrides)


def test_the_progress_line_says_where_the_run_is(monkeypatch, capsys):
    import ccbench.api

    clock = iter([0.0, 1.0, 1.2, 2.0])
    monkeypatch.setattr(ccbench.api.time, "monotonic", lambda: next(clock))
    show = ccbench.api._progress_printer(duration_ns=600 * 10**9)
    show(150 * 10**9)  # at 1.0 s of wall time: a line
    show(160 * 10**9)  # 0.2 s later: too soon to redraw
    show(300 * 10**9)  # at 2.0 s
    lines = capsys.readouterr().err.split("\r")[1:]
    assert lines == ["  simulated 150.0 of 600.0 s (25%), wall 1.0 s, ETA 3 s ",
                     "  simulated 300.0 of 600.0 s (50%), wall 2.0 s, ETA 2 s "]
