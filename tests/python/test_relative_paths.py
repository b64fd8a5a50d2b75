"""A scenario's relative paths mean the same file wherever it runs: a link's `trace` names a file
beside the scenario file, whatever the current folder, in `ccbench run`, `ccbench.sweep` (whose
workers get the scenario's text) and the campaign runner `reproduce` uses. Before issue 38 the
sweep resolved it on the workers against their own folder: a different `lte.trace` there gave
other numbers without a word."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ('duration = "3s"\n[bottleneck]\ntrace = "traces/lte.trace"\nrtt = "40ms"\nbuffer = "100ms"\n'
            '[[flows]]\ncca = "cubic"\n')


@pytest.fixture
def layout(tmp_path):
    """`study/s.toml` beside `study/traces/lte.trace` (12 Mbit/s), and `elsewhere/traces/lte.trace`
    (2 Mbit/s), a decoy where a current-folder reading would find it."""
    from ccbench import _core

    study, elsewhere = tmp_path / "study", tmp_path / "elsewhere"
    for folder, mbps in ((study, 12.0), (elsewhere, 2.0)):
        (folder / "traces").mkdir(parents=True)
        (folder / "traces" / "lte.trace").write_text(_core.synthetic_trace(mbps * 1e6, 10.0, 1))
    (study / "s.toml").write_text(SCENARIO)
    return study / "s.toml", elsewhere


def _goodput(summary: dict) -> float:
    return summary["flows"][0]["goodput_mbps"]


def test_run_sweep_and_the_campaign_runner_read_the_trace_beside_the_scenario(layout, tmp_path, monkeypatch):
    import ccbench
    from ccbench.campaign.runner import run_tasks
    from ccbench.campaign.tasks import Task

    scenario, elsewhere = layout
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cli = subprocess.run([sys.executable, "-m", "ccbench", "run", str(scenario), "--out", str(tmp_path / "r")],
                         cwd=elsewhere, capture_output=True, text=True, timeout=120, env=env)
    assert cli.returncode == 0, cli.stderr
    by_cli = _goodput(json.loads((tmp_path / "r" / "summary.json").read_text()))
    assert 5 < by_cli, "12 Mbit/s, not the decoy's 2"
    monkeypatch.chdir(elsewhere)
    got = {}
    for jobs in (1, 2):
        frame = ccbench.sweep(str(scenario), {"flows[0].cca": ["cubic"]}, seeds=[1, 2], jobs=jobs, cache=False,
                              progress=False, metric=lambda result, point: {"goodput": _goodput(result.summary)})
        got[jobs] = list(frame["goodput"])
    task = Task(lambda result, point: {"goodput": _goodput(result.summary)}, scenario, [], {}, 1)
    (outcome,) = run_tasks([task], jobs=1)
    assert outcome.error is None, outcome.error
    assert got[1] == got[2] and got[1][0] == by_cli == outcome.metrics["goodput"]
    # What left the coordinator names the trace by its absolute path.
    assert str(scenario.parent / "traces" / "lte.trace") in task.base


def test_the_key_follows_the_trace_content(layout, tmp_path):
    """Two different files at one relative path are two different runs to the cache."""
    from ccbench.campaign.runner import prepare
    from ccbench.campaign.tasks import Task

    scenario, elsewhere = layout
    other = elsewhere / "s.toml"
    other.write_text(SCENARIO)
    tasks = [Task(lambda r, p: {}, path, [], {}, 1) for path in (scenario, other)]
    prepare(tasks)
    assert tasks[0].key and tasks[1].key and tasks[0].key != tasks[1].key
