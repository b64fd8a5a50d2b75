"""``ccbench emu`` from the front end: a real download through our bottleneck (root only,
skipped with the reason otherwise), and one-line errors for bad input."""

import json
import os

import pytest
from test_cli import ccbench_cli

SCENARIO = """\
duration = "6s"
warmup = "1s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "1bdp"
[[flows]]
cca = "cubic"
"""


def _emu_unavailable():
    from ccbench import emu
    from ccbench.errors import UsageError

    if os.geteuid() != 0:
        return "ccbench emu needs root"
    try:
        emu.binary()
    except UsageError as exc:
        return str(exc)
    return None


def test_emu_cubic_download_through_our_bottleneck(tmp_path):
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO)
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["flows"][0]["goodput_mbps"] > 8.5
    assert "bottleneck" in proc.stdout


def test_emu_bad_scenario_is_one_line_error(tmp_path):
    if _emu_unavailable():
        pytest.skip(_emu_unavailable())
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('"cubic"', '"vegas"'))
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "flows[0].cca" in proc.stderr


def test_emu_without_its_program_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("CCBENCH_EMU", str(tmp_path / "missing"))
    proc = ccbench_cli("emu", "whatever.toml")
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: $CCBENCH_EMU") and proc.stderr.count("\n") == 1


def _emulator_namespaces() -> set:
    import subprocess

    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in listed.splitlines() if line.startswith("ccb-")}


def test_emu_interrupted_removes_its_namespaces_and_says_nothing_was_written(tmp_path):
    """SIGTERM to `ccbench emu` (as Ctrl-C): the emulator is asked to stop, removes its
    namespaces, and the command says that nothing was written (it once killed the emulator
    with its namespaces left behind)."""
    import signal
    import subprocess
    import sys
    import time

    from test_cli import PYTHON_DIR

    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('"6s"', '"60s"'))
    before = _emulator_namespaces()
    env = dict(os.environ, PYTHONPATH=str(PYTHON_DIR))
    proc = subprocess.Popen([sys.executable, "-m", "ccbench", "emu", str(path), "--out", str(tmp_path / "out")],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for _ in range(100):  # until the testbed is up (bounded: 10 s)
        if _emulator_namespaces() - before:
            break
        time.sleep(0.1)
    assert _emulator_namespaces() - before, "the emulator never built its testbed"
    assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == ("error: interrupted; the emulator stopped and removed its namespaces; "
                           "nothing written"), err
    assert not (tmp_path / "out" / "summary.json").exists()
    assert not _emulator_namespaces() - before


TRACED = """\
duration = "6s"
warmup = "1s"
[[links]]
name = "cell"
from = "a"
to = "b"
trace = "step.trace"
delay = "20ms"
buffer = "60p"
jitter = "1ms"
jitter_reorder = true
[links.reverse]
rate = "20Mbps"
rate_max = "40Mbps"
[[flows]]
cca = "cubic"
from = "a"
to = "b"
"""


def test_emu_runs_trace_driven_links_with_reordering_jitter_and_rate_spreads(tmp_path):
    """The emulator drives the simulator's link model, so every link key runs on it: a mahimahi
    trace of one 1,504 B opportunity per ms (12.03 Mbit/s) paces the bottleneck, its jitter may
    reorder, and the ACK direction's rate is drawn per packet up to rate_max."""
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    (tmp_path / "step.trace").write_text("".join(f"{ms}\n" for ms in range(1, 1001)))
    path = tmp_path / "s.toml"
    path.write_text(TRACED)
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    cell = next(link for link in summary["links"] if link["name"] == "cell")
    assert cell["rate_mbps"] == pytest.approx(1504 * 8 / 1e3)
    # A 1,500 B packet per opportunity, 1,448 B of it payload.
    assert summary["flows"][0]["goodput_mbps"] == pytest.approx(12.032 * 1448 / 1504, rel=0.03)


def _emu_program_missing():
    """Refusals come before the emulator needs root: only its program must be built."""
    from ccbench import emu
    from ccbench.errors import UsageError

    try:
        emu.binary()
    except UsageError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("line, field, says", [
    ('cca = "dctcp"', "flows[0].cca", "this kernel offers: "),
    ('cca = "prague"', "flows[0].cca", "this kernel offers: "),
    ('cca = "bbr3"', "flows[0].cca", "this kernel offers: "),
    ('cca = "cubic"\necn = true\naccecn = true', "flows[0].accecn", "classic ECN only"),
    ('cca = "cubic"\necn = true\nect1 = true', "flows[0].ect1", "classic ECN only"),
])
def test_emu_refuses_what_this_kernel_lacks_in_one_line(tmp_path, line, field, says):
    """No DCTCP, Prague or BBRv3 and no AccECN/ECT(1) in this kernel: exit status 2, one line
    naming the key and what the kernel offers, before any namespace is made."""
    reason = _emu_program_missing()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "s.toml"
    path.write_text(SCENARIO.replace('cca = "cubic"', line))
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count("\n") == 1 and field in proc.stderr and says in proc.stderr, proc.stderr
    assert not (tmp_path / "out" / "summary.json").exists()


AQM_SCENARIO = """\
duration = "8s"
warmup = "2s"
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "4bdp"
aqm = "AQM"
ecn = true
[[flows]]
cca = "cubic"
ecn = true
"""


@pytest.mark.parametrize("aqm", ["dualpi2", "pi2", "fq_codel"])
def test_emu_runs_the_rfc9332_and_rfc8290_queues_marking_classic_ecn(tmp_path, aqm):
    """The forwarder takes any queue of the registry: a kernel CUBIC flow with classic ECN is
    CE-marked, not dropped, and the queue holds its delay far below the 160 ms buffer (targets:
    15 ms for PI2 and DualPI2's classic queue, 5 ms for FQ-CoDel)."""
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "s.toml"
    path.write_text(AQM_SCENARIO.replace("AQM", aqm))
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    flow = summary["flows"][0]
    link = next(link for link in summary["links"] if link["name"] == "bottleneck")
    assert flow["ecn_negotiated"] and flow["goodput_mbps"] > 8.0, flow
    assert link["ecn_marks"] > 0 and link["drops"] == 0, link
    assert link["queue_delay_ms"]["mean"] < (10 if aqm == "fq_codel" else 30), link


def test_compare_emu_new_queue_case_agrees(tmp_path):
    """`compare-emu --case cubic-fq-codel`: both flows of different RTTs in both back ends, their
    goodputs within 25 % (a short run; docs/emulator.md has the 30 s table)."""
    import csv

    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    proc = ccbench_cli("compare-emu", "--case", "cubic-fq-codel", "--duration", "12s",
                       "--out", str(tmp_path / "cmp"))
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader((tmp_path / "cmp" / "agreement.csv").open()))
    assert [r["case"] for r in rows] == ["cubic-fq-codel"] * 2
    for r in rows:
        assert abs(float(r["goodput_diff_pct"])) < 25, r
