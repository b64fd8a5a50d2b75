"""Hostile files at every path `ccbench` (and `ccbench-emu`'s scenario input) reads or writes:
symbolic links and hard links to a victim, FIFOs, character devices and folders. An input that
is no regular file is refused in one line with status 2, at once (a FIFO is never waited on); an
output is written beside its path and renamed into place, so a planted link is replaced and its
target keeps its bytes; a FIFO, device or folder where a file goes is left alone with one line.

The daemons' paths (`rledbatd`, `ccbench-quic`) are in test_planted_paths_daemons.py.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CCBENCH = [sys.executable, "-m", "ccbench"]
EMU = ROOT / "target" / "release" / "ccbench-emu"

SCENARIO = 'duration = "2s"\n[bottleneck]\nrate = "10Mbps"\nrtt = "20ms"\n[[flows]]\ncca = "cubic"\n'
TRACE_SCENARIO = ('duration = "2s"\n[bottleneck]\ntrace = "lte.trace"\nrtt = "40ms"\nbuffer = "100ms"\n'
                  '[[flows]]\ncca = "cubic"\n')
VICTIM = b"the user's own bytes\n"
LINKS = ("symlink", "hardlink")
SPECIALS = ("fifo", "device", "directory")


def plant(path: Path, kind: str, victim: Path) -> None:
    """Put a hostile `kind` of file at `path`; links lead to `victim`."""
    if kind == "symlink":
        os.symlink(victim, path)
    elif kind == "hardlink":
        os.link(victim, path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "device":
        if os.geteuid() != 0:
            pytest.skip("making a device node needs root")
        os.mknod(path, stat.S_IFCHR | 0o644, os.makedev(1, 3))  # like /dev/null
    elif kind == "directory":
        path.mkdir()
        (path / "inside").write_bytes(VICTIM)
    else:
        raise ValueError(kind)


def still_planted(path: Path, kind: str) -> bool:
    mode = os.lstat(path).st_mode
    return {"fifo": stat.S_ISFIFO, "device": stat.S_ISCHR, "directory": stat.S_ISDIR}[kind](mode) and (
        kind != "directory" or (path / "inside").read_bytes() == VICTIM)


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_bytes(VICTIM)
    return path


def ccbench(*args, cwd=None, timeout=120) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.run([*CCBENCH, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env)


def one_line_refusal(proc: subprocess.CompletedProcess, names: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert names in proc.stderr, proc.stderr


def a_run_folder(tmp_path: Path) -> Path:
    """A previous run's folder (what `--out` may replace)."""
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "run"
    done = ccbench("run", str(scenario), "--out", str(out))
    assert done.returncode == 0, done.stderr
    return out


# --- outputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["summary.json", "flows.parquet"])
@pytest.mark.parametrize("kind", LINKS)
def test_a_link_planted_in_a_run_folder_never_changes_its_target(tmp_path, kind, name):
    out = a_run_folder(tmp_path)
    target = victim(tmp_path)
    (out / name).unlink()
    plant(out / name, kind, target)
    done = ccbench("run", str(tmp_path / "s.toml"), "--out", str(out), "--seed", "7")
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == VICTIM
    assert stat.S_ISREG(os.lstat(out / name).st_mode)
    assert os.lstat(out / name).st_ino != os.lstat(target).st_ino


@pytest.mark.parametrize("kind", SPECIALS)
def test_a_fifo_device_or_folder_in_a_run_folder_is_refused_and_left_alone(tmp_path, kind):
    out = a_run_folder(tmp_path)
    (out / "summary.json").unlink()
    plant(out / "summary.json", kind, victim(tmp_path))
    done = ccbench("run", str(tmp_path / "s.toml"), "--out", str(out), timeout=30)
    one_line_refusal(done, "summary.json")
    assert still_planted(out / "summary.json", kind)


@pytest.mark.parametrize("kind", LINKS + SPECIALS)
def test_the_trace_command_writes_its_file_whole_or_refuses(tmp_path, kind):
    out = tmp_path / "lte.trace"
    target = victim(tmp_path)
    plant(out, kind, target)
    done = ccbench("trace", str(out), "--seconds", "2", timeout=30)
    if kind in LINKS:
        assert done.returncode == 0, done.stderr
        assert target.read_bytes() == VICTIM
        assert out.read_text().startswith("# ccbench synthetic cellular trace")
    else:
        one_line_refusal(done, "lte.trace")
        assert still_planted(out, kind)


@pytest.mark.parametrize("kind", LINKS)
def test_plot_replaces_a_planted_link_at_a_figure(tmp_path, kind):
    out = a_run_folder(tmp_path)
    target = victim(tmp_path)
    plant(out / "cwnd.png", kind, target)
    done = ccbench("plot", str(out))
    assert done.returncode == 0, done.stderr
    assert target.read_bytes() == VICTIM
    assert (out / "cwnd.png").read_bytes()[:4] == b"\x89PNG"


def test_the_report_replaces_a_planted_link(tmp_path):
    from ccbench.report import write_report

    target = victim(tmp_path)
    os.symlink(target, tmp_path / "report.html")
    write_report(tmp_path)
    assert target.read_bytes() == VICTIM
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_out_naming_a_link_to_a_folder_writes_there(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "s.toml").write_text(SCENARIO)
    os.symlink(real, tmp_path / "out")
    done = ccbench("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert os.path.islink(tmp_path / "out") and (real / "summary.json").is_file()


# --- inputs --------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", LINKS + SPECIALS)
def test_a_scenario_path_is_a_regular_file_or_refused_at_once(tmp_path, kind):
    real = tmp_path / "real.toml"
    real.write_text(SCENARIO)
    given = tmp_path / "given.toml"
    plant(given, kind, real)
    done = ccbench("run", str(given), "--out", str(tmp_path / "out"), timeout=30)
    if kind in LINKS:
        assert done.returncode == 0, done.stderr
    else:
        one_line_refusal(done, "given.toml")
        assert still_planted(given, kind)


@pytest.mark.parametrize("kind", LINKS + SPECIALS)
def test_a_trace_path_is_a_regular_file_or_refused_at_once(tmp_path, kind):
    made = ccbench("trace", str(tmp_path / "real.trace"), "--seconds", "2")
    assert made.returncode == 0, made.stderr
    plant(tmp_path / "lte.trace", kind, tmp_path / "real.trace")
    (tmp_path / "s.toml").write_text(TRACE_SCENARIO)
    done = ccbench("run", str(tmp_path / "s.toml"), "--out", str(tmp_path / "out"), timeout=30)
    if kind in LINKS:
        assert done.returncode == 0, done.stderr
    else:
        one_line_refusal(done, "bottleneck.trace")
        assert still_planted(tmp_path / "lte.trace", kind)


@pytest.mark.parametrize("kind", SPECIALS)
def test_the_emulator_refuses_a_scenario_that_is_no_file_at_once(tmp_path, kind):
    if not EMU.exists():
        pytest.skip("ccbench-emu is not built: run `make build`")
    given = tmp_path / "given.toml"
    plant(given, kind, victim(tmp_path))
    done = subprocess.run([str(EMU), "run", str(given), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=30)
    one_line_refusal(done, "given.toml")
    assert still_planted(given, kind)
    assert not (tmp_path / "out").exists()


def test_a_read_back_summary_that_is_a_fifo_is_refused_at_once(tmp_path):
    from ccbench import Result
    from ccbench.errors import RunFolderError

    out = a_run_folder(tmp_path)
    (out / "summary.json").unlink()
    os.mkfifo(out / "summary.json")
    with pytest.raises(RunFolderError, match="summary.json"):
        Result.load(out)


@pytest.mark.parametrize("kind", LINKS)
def test_the_emulator_replaces_a_previous_run_whole_and_never_writes_through_a_link(tmp_path, kind):
    if os.geteuid() != 0 or not EMU.exists():
        pytest.skip("ccbench-emu needs root and `make build`")
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO.replace('"2s"', '"1s"'))
    out = tmp_path / "out"
    first = subprocess.run([str(EMU), "run", str(scenario), "--out", str(out)], capture_output=True, text=True,
                           timeout=120)
    assert first.returncode == 0, first.stderr
    target = victim(tmp_path)
    (out / "summary.json").unlink()
    plant(out / "summary.json", kind, target)
    (out / "flows.parquet").unlink()  # the previous run's files go with it, as a whole
    again = subprocess.run([str(EMU), "run", str(scenario), "--out", str(out)], capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 0, again.stderr
    assert target.read_bytes() == VICTIM
    assert stat.S_ISREG(os.lstat(out / "summary.json").st_mode) and (out / "flows.parquet").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.")] == [], "no staging left"
