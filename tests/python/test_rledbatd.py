"""``rledbatd`` on real Linux TCP (issue 11): a download marked LBE by the receiver's daemon
over our emulated 10 Mbps / 40 ms bottleneck (500 ms buffer, the rLEDBAT paper's Fig. 12
setting), against an unmarked CUBIC download; and what killing the daemon mid-transfer leaves.

The namespaces, the bottleneck and the daemon are ``ccbench emu``'s: everything stays inside
namespaces the run creates and removes. Root only (skipped with the reason otherwise)."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from test_emu import _emu_unavailable

LINK_MBPS = 10.0

YIELD = """\
duration = "22s"
warmup = "0s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "500ms"
[[flows]]
name = "marked"
cca = "cubic"
receiver_cca = "rledbat"
[[flows]]
name = "cubic"
cca = "cubic"
start = "8s"
stop = "22s"
"""

ALONE = """\
duration = "14s"
warmup = "0s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "500ms"
[[flows]]
name = "marked"
cca = "cubic"
receiver_cca = "rledbat"
"""


def _unavailable():
    reason = _emu_unavailable()
    if reason:
        return reason
    from ccbench import emu

    daemon = Path(emu.binary()).with_name("rledbatd")
    if not os.environ.get("CCBENCH_RLEDBATD") and not daemon.is_file():
        return "rledbatd is not built (make build)"
    if subprocess.run(["sh", "-c", "command -v iptables"], capture_output=True).returncode != 0:
        return "no iptables (make build installs it)"
    return None


def _goodput(out, flow, t0, t1):
    """Mean goodput (Mbps) of `flow` over bins starting in [t0, t1)."""
    import pandas as pd

    f = pd.read_parquet(out / "flows.parquet")
    f = f[(f["flow"] == flow) & (f["t_s"] >= t0) & (f["t_s"] < t1)]
    return float(f["goodput_mbps"].mean())


def _bins(out, flow, t0, t1):
    import pandas as pd

    f = pd.read_parquet(out / "flows.parquet")
    return f[(f["flow"] == flow) & (f["t_s"] >= t0) & (f["t_s"] < t1)]


def _run(tmp_path, text):
    from ccbench import emu

    path = tmp_path / "s.toml"
    path.write_text(text)
    out = tmp_path / "out"
    return path, out, [emu.binary(), "run", str(path), "--out", str(out)]


def test_marked_download_takes_the_link_alone_and_yields_to_cubic(tmp_path):
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    _, out, cmd = _run(tmp_path, YIELD)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    alone = _goodput(out, "marked", 2, 8)
    shared = _goodput(out, "marked", 11, 22)
    cubic = _goodput(out, "cubic", 11, 22)
    assert alone > 0.85 * LINK_MBPS, f"marked download alone: {alone:.2f} Mbps"
    assert shared < 0.2 * LINK_MBPS, f"marked download beside CUBIC: {shared:.2f} Mbps"
    assert cubic > 0.75 * LINK_MBPS, f"CUBIC beside it: {cubic:.2f} Mbps"
    # The daemon's log shows why: the queueing delay it measured passed its 60 ms target.
    import pandas as pd

    log = pd.read_csv(next(out.glob("rledbatd-*.csv")))
    late = log[log["t_s"] > 12]
    assert (late["queuing_delay_ms"] > 60).mean() > 0.5
    assert set(late["state"]) <= {"avoidance", "freeze", "ramp", "slow-start"}


def _daemons():
    """Pids of running `rledbatd run` processes."""
    pids = set()
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            argv = (p / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[0].endswith(b"rledbatd") and argv[1] == b"run":
            pids.add(int(p.name))
    return pids


def test_killing_rledbatd_mid_transfer_leaves_the_download_running(tmp_path):
    reason = _unavailable()
    if reason:
        pytest.skip(reason)
    _, out, cmd = _run(tmp_path, ALONE)
    before = _daemons()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 15
        started = set()
        while not started and time.monotonic() < deadline:
            started = _daemons() - before
            time.sleep(0.05)
        assert started, "rledbatd did not start"
        time.sleep(5)
        for pid in started:
            os.kill(pid, signal.SIGKILL)  # no chance to remove its rules: they fail open
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    import pandas as pd

    log = pd.read_csv(next(out.glob("rledbatd-*.csv")))
    killed_at = float(log["t_s"].max())
    assert 3 < killed_at < 8, f"daemon's last log row at {killed_at:.2f} s"
    after = _bins(out, "marked", killed_at + 0.5, 14)
    assert len(after) > 40
    # Data keeps arriving in every half second after the kill, and the link stays full.
    halves = after.groupby((after["t_s"] // 0.5))["goodput_mbps"].sum()
    assert (halves > 0).all(), halves[halves <= 0]
    assert after["goodput_mbps"].mean() > 0.85 * LINK_MBPS
