"""`ccbench reproduce` end to end, in subprocesses: killed twice at random moments and rerun it
ends with the numbers of an uninterrupted campaign; a separately started Dask scheduler with two
workers gives the same numbers; the report opens in headless Chromium with every image loaded.

The campaign is two fLEDBAT experiments (22 runs, about 10 s), so the whole module stays short."""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import ccbench
from ccbench.campaign.reproduce import choose
from ccbench.campaign.works import WORKS
from ccbench.cli import WORK_CHOICES

PYTHON_DIR = Path(ccbench.__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
CAMPAIGN = ["fledbat", "--quick", "--only", "fledbat-fig2", "--only", "fledbat-fig6b"]


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return env


def _start(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "ccbench", *args], env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, **kw)


def _reproduce(out, *extra, timeout=300):
    proc = subprocess.run([sys.executable, "-m", "ccbench", "reproduce", *CAMPAIGN, "--out", str(out), *extra],
                          capture_output=True, text=True, env=_env(), timeout=timeout)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return proc


def _numbers(out):
    """Every experiment's results, without the metrics that time the machine (wall_s)."""
    frames = {}
    for folder in sorted((Path(out) / "experiments").iterdir()):
        frame = pd.read_csv(folder / "results.csv", keep_default_na=False)
        frames[folder.name] = frame.drop(columns=[c for c in frame.columns if "wall" in c])
    return frames


def _same(a, b):
    assert list(a) == list(b)
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], obj=name)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    out = tmp_path_factory.mktemp("whole")
    proc = _reproduce(out)
    assert "22 runs (0 from the cache)" in proc.stdout
    assert "where the time went: Starting the cluster took" in proc.stdout
    return out


def test_works_are_one_table():
    assert list(WORK_CHOICES) == [*WORKS, "all"]
    for work in WORKS:
        assert choose(work), work
    assert len(choose("all")) == sum(len(choose(w)) for w in WORKS)


def test_campaign_writes_every_output_and_a_rerun_computes_nothing(uninterrupted, tmp_path):
    for name in ("fledbat-fig2", "fledbat-fig6b"):
        folder = uninterrupted / "experiments" / name
        for file in ("results.csv", "results.parquet", "summary.csv", "comparison.md", "comparison.json",
                     "meta.json", f"{name}.png"):
            assert (folder / file).is_file(), (name, file)
        meta = json.loads((folder / "meta.json").read_text())
        assert meta["work"] == "fledbat" and meta["quick"] and meta["failed"] == 0 and meta["core"]
    info = json.loads((uninterrupted / "campaign.json").read_text())
    assert info["runs"] == 22 and info["profile"]["event_loop_s"] > 0
    # Where the time went: no real-time runs here, a coordinator that did work, in the report too.
    assert info["real_stack_s"] == 0 and info["coordinator_cpu_s"] > 0 and info["cluster_start_s"] > 0
    assert "coordinating process used" in (uninterrupted / "report.html").read_text()
    assert not list((uninterrupted / "cache").glob("journal-*"))
    copy = tmp_path / "again"
    shutil.copytree(uninterrupted, copy)
    before = (copy / "experiments" / "fledbat-fig2" / "meta.json").stat().st_mtime_ns
    proc = _reproduce(copy)
    assert "22 runs (22 from the cache)" in proc.stdout
    assert (copy / "experiments" / "fledbat-fig2" / "meta.json").stat().st_mtime_ns == before  # nothing rewritten


def test_killed_twice_then_rerun_gives_the_same_numbers(uninterrupted, tmp_path):
    rng = random.Random(int(os.environ.get("CCBENCH_KILL_SEED", "13")))
    out = tmp_path / "killed"
    for _ in range(2):
        # A random moment once runs are finishing (before that, a kill only tests the start).
        proc = _start("reproduce", *CAMPAIGN, "--out", str(out))
        for line in proc.stdout:
            if " seed=" in line:
                break
        time.sleep(rng.uniform(0.0, 2.5))
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    proc = _reproduce(out)
    cached = int(proc.stdout.split(" from the cache)")[0].rsplit("(", 1)[1])
    assert cached > 0, proc.stdout[-1500:]
    _same(_numbers(uninterrupted), _numbers(out))
    assert not list(out.rglob(".*.tmp")) and not list((out / "cache").glob("journal-*"))


def test_sigterm_stops_a_campaign_at_once_and_keeps_its_runs(tmp_path):
    proc = _start("reproduce", *CAMPAIGN, "--out", str(tmp_path))
    for line in proc.stdout:
        if " seed=" in line:
            break
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130 and output.strip().endswith("error: interrupted"), output[-800:]
    assert list((tmp_path / "cache").glob("seg-*.parquet")) and not list((tmp_path / "cache").glob("journal-*"))


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_separate_dask_scheduler_and_two_workers_give_the_same_numbers(uninterrupted, tmp_path):
    dask = BIN / "dask"
    if not dask.exists():
        pytest.skip("no dask command in this environment")
    address = f"tcp://127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    procs = [subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", port, "--no-dashboard"],
                              env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([str(dask), "worker", address, "--nthreads", "1", "--no-dashboard"],
                                          env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
        _reproduce(tmp_path, "--scheduler", address)
        _same(_numbers(uninterrupted), _numbers(tmp_path))
        info = json.loads((tmp_path / "campaign.json").read_text())
        assert info["scheduler"] == address and info["cached"] == 0
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)


def test_bad_campaign_arguments_are_one_line_errors(tmp_path):
    for args, needle in ((["nope"], "WORK"), (["abe", "--only", "fledbat-fig2"], "fledbat-fig2"),
                         (["abe", "--scheduler", "nowhere"], "scheduler"),
                         (["abe", "--jobs", "0"], "jobs")):
        proc = subprocess.run([sys.executable, "-m", "ccbench", "reproduce", *args, "--out", str(tmp_path)],
                              capture_output=True, text=True, env=_env(), timeout=60)
        assert proc.returncode == 2 and needle in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, \
            proc.stderr
    refused = subprocess.run([sys.executable, "-m", "ccbench", "reproduce", *CAMPAIGN, "--out", str(tmp_path),
                              "--scheduler", f"tcp://127.0.0.1:{_free_port()}"],
                             capture_output=True, text=True, env=_env(), timeout=120)
    assert refused.returncode == 2 and "cannot connect" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_report_opens_in_headless_chromium_with_every_image(uninterrupted, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("no chromium (make build installs it as root)")
    page = (uninterrupted / "report.html").as_uri()
    flags = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000"]
    dom = subprocess.run([*flags, "--dump-dom", page], capture_output=True, text=True, timeout=120).stdout
    assert 'data-broken-images="0"' in dom, dom[:500]
    images = int(dom.split('data-images="')[1].split('"')[0])
    assert images >= 2  # one figure per experiment at least
    for name in ("fledbat-fig2", "fledbat-fig6b"):
        assert f'id="{name}"' in dom
    assert "Verdicts" in dom and "fLEDBAT" in dom
    shot = tmp_path / "report.png"
    subprocess.run([*flags, "--window-size=1400,1800", f"--screenshot={shot}", page], capture_output=True,
                   timeout=120)
    import matplotlib.image as mpimg

    pixels = mpimg.imread(shot)
    assert pixels.shape[0] == 1800 and pixels.std() > 0.05  # a page was drawn, not a blank one


def test_a_campaign_is_swapped_in_whole(uninterrupted, tmp_path, monkeypatch):
    """A campaign writes into a folder staged beside its own and swaps it in at the end (issue
    38): one that dies before then leaves the previous campaign's outputs and report as they
    were, and its runs in the cache; one that reruns a single experiment keeps the others'
    folders (hard links to the previous ones) and its cache, moved over, never copied."""
    from ccbench.campaign import reproduce as campaign_module

    copy = tmp_path / "copy"
    shutil.copytree(uninterrupted, copy)
    report = (copy / "report.html").read_bytes()
    fig2 = (copy / "experiments" / "fledbat-fig2" / "results.csv").read_bytes()

    def broken(_root):
        raise RuntimeError("the machine went away")

    monkeypatch.setattr("ccbench.report.write_report", broken)
    with pytest.raises(RuntimeError, match="went away"):
        campaign_module.reproduce("fledbat", quick=True, only=["fledbat-fig2"], jobs=1, out=copy, force=True,
                                  progress=False)
    monkeypatch.undo()
    assert (copy / "report.html").read_bytes() == report
    assert (copy / "experiments" / "fledbat-fig2" / "results.csv").read_bytes() == fig2
    assert [p.name for p in tmp_path.iterdir()] == ["copy"], "the staged folder went with the failure"
    segments = sorted((copy / "cache").glob("seg-*.parquet"))
    assert segments, "the rerun's runs are kept in the cache"
    inode = segments[0].stat().st_ino
    done = campaign_module.reproduce("fledbat", quick=True, only=["fledbat-fig2"], jobs=1, out=copy,
                                     progress=False)
    assert done.report == copy / "report.html" and done.report.read_bytes() != report
    assert (copy / "experiments" / "fledbat-fig6b" / "meta.json").is_file(), "not rerun, kept"
    assert segments[0].stat().st_ino == inode, "the cache was moved, not copied"
