"""Limits that hold while running (issue 38): the estimate is checked before a run, but a run
also watches its process's resident memory and stops past `max_memory` with one line and a
partial summary, instead of growing until the machine kills something. The growth here comes
from the progress callback (the core calls it about ten times a second from inside the loop),
standing in for a scenario the estimate misjudged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = (ROOT / "examples" / "dumbbell-cubic.toml").read_text()
LONG = ["duration=3000s"]
CHUNK = 200_000_000


def _resident() -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0]) * 1024


def _grower(hog: list):
    def grow(now_ns: int) -> None:
        chunk = bytearray(CHUNK)
        chunk[::4096] = b"x" * len(chunk[::4096])  # touched, so it is resident
        hog.append(chunk)
    return grow


def _limit() -> int:
    """Room for the run's estimate and one chunk more than this process holds now."""
    from ccbench import _core

    estimate = _core.estimate_toml(SCENARIO, "s.toml", LONG, None)["memory_bytes"]
    return _resident() + estimate + CHUNK


def test_the_core_stops_a_run_whose_process_passes_the_limit():
    from ccbench import _core

    hog: list = []
    limit = _limit()
    raw = _core.run_toml(SCENARIO, "s.toml", LONG, None, None, limit, _grower(hog))
    summary = raw["summary"]
    assert summary.get("partial") is True
    assert 0 < summary["sim_s"] < 3000
    reason = summary["stopped"]
    assert reason.startswith("max_memory: the process held") and "\n" not in reason
    held = float(reason.split("held ")[1].split(" GB")[0])
    assert held * 1e9 > limit * 0.99, reason
    assert f"{limit / 1e9:.2f} GB" in reason
    assert f"{summary['sim_s']:.3f} s simulated" in reason, "the time quoted is this run's"


def test_the_api_saves_the_partial_run_and_raises(tmp_path, monkeypatch):
    import ccbench
    from ccbench import api

    hog: list = []
    real = api._core.run_toml

    def growing(*args, **kwargs):
        kwargs["progress"] = _grower(hog)
        return real(*args, **kwargs)

    monkeypatch.setattr(api._core, "run_toml", growing)
    out = tmp_path / "run"
    with pytest.raises(ccbench.MemoryLimitExceeded, match="max_memory: .* the partial run is in") as stop:
        ccbench.run(SCENARIO, overrides=LONG, max_memory=_limit(), out=out)
    saved = json.loads((out / "summary.json").read_text())
    assert saved["partial"] is True and saved["stopped"] == stop.value.result.summary["stopped"]
    assert "\n" not in str(stop.value)


def test_without_growth_the_watch_changes_nothing():
    from ccbench import _core

    calls: list = []
    raw = _core.run_toml(SCENARIO, "s.toml", ["duration=20s"], None, None, None, calls.append)
    assert "stopped" not in raw["summary"] and not raw["summary"].get("partial")


def test_trace_generation_is_bounded_before_it_starts():
    """`ccbench trace` at 1 Tbit/s for a day would be 7e12 lines: refused in one line at once,
    by the size a trace file may have when it is read back."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "ccbench", "trace", "/tmp/never.trace", "--mean-mbps", "1000000",
                           "--seconds", "86400"], capture_output=True, text=True, timeout=30, cwd=ROOT)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "--mean-mbps" in done.stderr and "a trace file may hold" in done.stderr, done.stderr
    assert not Path("/tmp/never.trace").exists()
