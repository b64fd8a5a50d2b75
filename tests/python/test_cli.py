import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ccbench
from ccbench.listing import FAMILIES

PYTHON_DIR = Path(ccbench.__file__).resolve().parents[1]


def ccbench_cli(*args, cwd=None):
    env = dict(os.environ)
    # The subprocess must import the same package as the tests do.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "ccbench", *args], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=300)


def _one_error_line(proc):
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: ")
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_run_writes_outputs(scenario_file, tmp_path):
    out = tmp_path / "out"
    proc = ccbench_cli("run", str(scenario_file), "--out", str(out), "--seed", "5",
                       "--set", "bottleneck.rate=20Mbps")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario"]["seed"] == 5
    rates = {link["name"]: link["rate_mbps"] for link in summary["links"]}
    assert rates["bottleneck"] == pytest.approx(20.0)
    for name in ("flows", "links", "sojourn", "owd"):
        assert (out / f"{name}.parquet").is_file()
    assert "goodput_mbps" in proc.stdout


def test_same_seed_gives_identical_output_files(scenario_file, tmp_path):
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        proc = ccbench_cli("run", str(scenario_file), "--out", str(d), "--set", "bottleneck.jitter=2ms",
                           "--set", "bottleneck.loss=0.01")
        assert proc.returncode == 0, proc.stderr
    for name in ("flows", "links", "sojourn", "owd"):
        assert (dirs[0] / f"{name}.parquet").read_bytes() == (dirs[1] / f"{name}.parquet").read_bytes()
    summaries = [json.loads((d / "summary.json").read_text()) for d in dirs]
    for s in summaries:
        s.pop("wall_s")  # wall-clock time is the one thing that may differ
    assert summaries[0] == summaries[1]


def test_bad_rate_is_one_line_error(scenario_file, tmp_path):
    proc = ccbench_cli("run", str(scenario_file), "--out", str(tmp_path / "o"),
                       "--set", "bottleneck.rate=-3")
    line = _one_error_line(proc)
    assert "bottleneck.rate" in line
    assert "small.toml" in line


def test_negative_seed_is_one_line_error(scenario_file, tmp_path):
    line = _one_error_line(ccbench_cli("run", str(scenario_file), "--out", str(tmp_path / "o"), "--seed", "-1"))
    assert "--seed" in line


def test_api_rejects_bad_seed_with_scenario_error(scenario_file):
    for bad in (-2, 2**64, 1.5, "3", True):
        with pytest.raises(ccbench.ScenarioError, match="seed"):
            ccbench.run(str(scenario_file), seed=bad)


def test_unknown_key_is_error(scenario_file, tmp_path):
    proc = ccbench_cli("run", str(scenario_file), "--out", str(tmp_path / "o"),
                       "--set", "bottleneck.colour=blue")
    assert "colour" in _one_error_line(proc)


def test_unknown_cca_is_error(scenario_file, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(scenario_file.read_text().replace('cca = "newreno"', 'cca = "warp-drive"'))
    line = _one_error_line(ccbench_cli("run", str(bad), "--out", str(tmp_path / "o")))
    assert "warp-drive" in line and "bad.toml" in line


def test_missing_file_is_error(tmp_path):
    line = _one_error_line(ccbench_cli("run", str(tmp_path / "x.toml"), "--out", str(tmp_path / "o")))
    assert "x.toml: cannot read file" in line


def test_bad_arguments_and_unknown_experiment(tmp_path):
    _one_error_line(ccbench_cli("run"))
    assert "no-such" in _one_error_line(ccbench_cli("experiment", "no-such", "--out", str(tmp_path)))
    _one_error_line(ccbench_cli("plot", str(tmp_path / "nothing")))


def test_experiment_list():
    proc = ccbench_cli("experiment", "--list")
    assert proc.returncode == 0
    assert "abe-fig2" in proc.stdout and "rledbat-table1" in proc.stdout


def test_plot_creates_pngs(scenario_file, tmp_path):
    out = tmp_path / "run"
    assert ccbench_cli("run", str(scenario_file), "--out", str(out)).returncode == 0
    proc = ccbench_cli("plot", str(out))
    assert proc.returncode == 0, proc.stderr
    for name in ("cwnd.png", "rate.png", "queue.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_list_experiments_and_controllers():
    proc = ccbench_cli("list", "experiments")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "experiments:"
    assert "abe-fig2" in proc.stdout and "rledbat-table1" in proc.stdout
    proc = ccbench_cli("list", "controllers")
    assert proc.returncode == 0, proc.stderr
    assert "cubic" in proc.stdout and "newreno" in proc.stdout


def test_list_all_families():
    proc = ccbench_cli("list")
    assert proc.returncode == 0, proc.stderr
    for family in FAMILIES:
        assert f"\n{family}:" in "\n" + proc.stdout, family


def test_list_unknown_family_is_one_line_error():
    assert "colours" in _one_error_line(ccbench_cli("list", "colours"))


def test_list_core_families_from_the_registry():
    """Every family lists names (with aliases, params)."""
    registry = ccbench.registry()
    for family in ("controllers", "receivers", "queues", "topologies", "stack"):
        proc = ccbench_cli("list", family)
        assert proc.returncode == 0, proc.stderr
        for entry in registry[family]:
            assert entry["name"] in proc.stdout
            for param in entry["params"]:
                assert param["key"] in proc.stdout
    assert "dumbbell" in ccbench_cli("list", "topologies").stdout
    assert 'rto_min: duration in [1ns, 86400s] = "200ms"' in ccbench_cli("list", "stack").stdout


@pytest.mark.parametrize("override, field", [
    ("flows[0].cca=ledbat", None),
    ("flows[0].cc={ target = \"-5ms\" }", "flows[0].cc.target"),
    ("flows[0].cc={ zeta = 0 }", "flows[0].cc.zeta"),
    ("flows[0].cc={ zeta = -1 }", "flows[0].cc.zeta"),
    ("flows[0].chunk_size=\"0B\"", "flows[0].chunk_size"),
    ("flows[0].persistence=1.5", "flows[0].persistence"),
])
def test_bad_ledbat_family_parameters_are_one_line_errors(scenario_file, tmp_path, override, field):
    """Issue 9: a negative target, zeta ≤ 0, a zero chunk size, P_P outside [0, 1]."""
    cca = "ledbat" if field is None or "target" in field else "fledbat"
    sets = ["--set", f"flows[0].cca={cca}", "--set", "flows[0].chunk_size=250KB"]
    if field is None:
        proc = ccbench_cli("run", str(scenario_file), "--out", str(tmp_path / "o"), *sets,
                           "--set", "duration=2s")
        assert proc.returncode == 0, proc.stderr
        return
    if field.endswith("chunk_size"):
        sets = ["--set", "flows[0].cca=fledbat"]
    proc = ccbench_cli("run", str(scenario_file), "--out", str(tmp_path / "o"), *sets, "--set", override)
    line = _one_error_line(proc)
    assert f": {field}: " in line, line
