"""QUIC flows (issue 28): our controllers on quinn in `ccbench emu`, refused by the simulator,
and `ccbench-quic`'s file transfer through the emulator's bottleneck (`ccbench-emu testbed`):
resumed after a kill, hash-checked, a bad certificate refused. Root only (namespaces the tests
create and remove), skipped with the reason otherwise."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from test_cli import ccbench_cli
from test_emu import _emu_unavailable

ROOT = Path(__file__).resolve().parents[2]
QUIC = ROOT / "target" / "release" / "ccbench-quic"
EMU = ROOT / "target" / "release" / "ccbench-emu"

#: The issue's path: 10 Mbps, 40 ms, a 500 ms buffer.
LBE_PATH = """\
[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "500ms"
"""


def _emu(tmp_path, text: str) -> dict:
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    path = tmp_path / "s.toml"
    path.write_text(text)
    proc = ccbench_cli("emu", str(path), "--out", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    return json.loads((tmp_path / "out" / "summary.json").read_text())


def test_quic_ledbat_pp_alone_fills_the_link_at_its_target_delay(tmp_path):
    """LEDBAT++ (draft-irtf-iccrg-ledbat-plus-plus §4: 60 ms target) on QUIC, alone: more than
    85 % of the link, the bottleneck's median queueing delay near 60 ms."""
    text = 'duration = "15s"\nwarmup = "5s"\n' + LBE_PATH + '[[flows]]\ntransport = "quic"\ncca = "ledbat++"\n'
    summary = _emu(tmp_path, text)
    flow, link = summary["flows"][0], summary["links"][0]
    assert flow["kind"] == "quic"
    assert flow["goodput_mbps"] > 8.5, flow
    assert 45 <= link["queue_delay_ms"]["p50"] <= 70, link["queue_delay_ms"]


def test_quic_ledbat_pp_yields_to_kernel_cubic(tmp_path):
    """Beside a kernel CUBIC TCP flow the less-than-best-effort QUIC flow takes under 20 %."""
    text = ('duration = "20s"\nwarmup = "6s"\n' + LBE_PATH
            + '[[flows]]\nname = "lbe"\ntransport = "quic"\ncca = "ledbat++"\n'
            + '[[flows]]\nname = "cubic"\ncca = "cubic"\nstart = "2s"\n')
    flows = {f["name"]: f for f in _emu(tmp_path, text)["flows"]}
    assert flows["lbe"]["goodput_mbps"] < 2.0, flows
    assert flows["cubic"]["goodput_mbps"] > 8.0, flows


def test_the_simulator_refuses_quic_in_one_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('duration = "5s"\n' + LBE_PATH + '[[flows]]\ntransport = "quic"\ncca = "ledbat++"\n')
    proc = ccbench_cli("run", str(path))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "flows[0].transport" in proc.stderr, proc.stderr


def _quic(netns: str, *args, **kw) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", netns, str(QUIC), *args], text=True, **kw)


def _fingerprint(receiver: subprocess.Popen) -> str:
    line = receiver.stdout.readline()
    assert "--fingerprint" in line, line
    return line.split("--fingerprint")[1].split()[0]


@pytest.fixture
def testbed(tmp_path):
    """`ccbench-emu testbed` on a 100 Mbps, 20 ms dumbbell: where its flow's two ends are."""
    reason = _emu_unavailable()
    if reason:
        pytest.skip(reason)
    if not QUIC.exists():
        pytest.skip("ccbench-quic is not built: run `make build`")
    scenario = tmp_path / "tb.toml"
    scenario.write_text('duration = "60s"\n[bottleneck]\nrate = "100Mbps"\nrtt = "20ms"\nbuffer = "250ms"\n'
                        '[[flows]]\nname = "transfer"\n')
    proc = subprocess.Popen([str(EMU), "testbed", str(scenario), "--for", "120"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        where = json.loads(proc.stdout.readline())
        yield where["flows"][0]
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)


def test_ccbench_quic_resumes_a_killed_transfer_and_checks_the_hash(tmp_path, testbed):
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(60_000_000))  # 4.8 s at 100 Mbps
    out = tmp_path / "out"
    receiver = _quic(testbed["to_netns"], "recv", "--listen", "0.0.0.0:4433", "--out", str(out),
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        fp = _fingerprint(receiver)
        to = f"{testbed['to_addr']}:4433"
        send = ["send", str(data), "--to", to, "--fingerprint", fp, "--cc", "cubic"]
        first = _quic(testbed["from_netns"], *send, stderr=subprocess.PIPE)
        partial = out / ".ccbench-quic" / "partial"
        for _ in range(200):  # until a fifth has arrived, at most 10 s
            if sum(p.stat().st_size for p in partial.glob("*.part")) > 12_000_000:
                break
            time.sleep(0.05)
        first.kill()
        first.wait(timeout=10)
        assert not (out / "data.bin").exists()
        again = _quic(testbed["from_netns"], *send, "--log", str(tmp_path / "cc.csv"), stderr=subprocess.PIPE)
        _, err = again.communicate(timeout=60)
        assert again.returncode == 0, err
        assert "resumed at byte" in err, err
        assert (out / "data.bin").read_bytes() == data.read_bytes()
        log = (tmp_path / "cc.csv").read_text().splitlines()
        assert log[0].startswith("t_s,cwnd_bytes") and len(log) > 2
        # A receiver whose certificate is not the pinned one is refused, in one line, status 2.
        wrong = ("0" if fp[0] != "0" else "1") + fp[1:]
        bad = _quic(testbed["from_netns"], "send", str(data), "--to", to, "--fingerprint", wrong,
                    stderr=subprocess.PIPE)
        _, err = bad.communicate(timeout=30)
        assert bad.returncode == 2 and err.count("\n") == 1 and "not the pinned" in err, err
    finally:
        receiver.kill()
        receiver.wait(timeout=10)


def test_ccbench_quic_bad_input_is_one_line_status_2(tmp_path):
    if not QUIC.exists():
        pytest.skip("ccbench-quic is not built: run `make build`")
    fp = "ab" * 32
    cases = [
        (["send", str(tmp_path / "missing.bin"), "--to", "127.0.0.1:9", "--fingerprint", fp], "missing.bin"),
        (["send", __file__, "--to", "127.0.0.1:9", "--fingerprint", "xyz"], "--fingerprint"),
        (["send", __file__, "--to", "127.0.0.1:9", "--fingerprint", fp, "--cc", "vegas"], "--cc"),
        (["send", __file__, "--to", "127.0.0.1:9", "--fingerprint", fp, "--cc-param", "target=-1ms",
          "--cc", "ledbat"], "--cc-param target"),
        # The argument parser's own refusals are one line too, without its usage block.
        (["recv"], "--listen"),
        (["send", __file__, "--bogus"], "--bogus"),
        ([], "give a command"),
        (["recv", "--listen", "nowhere", "--out", str(tmp_path)], "--listen"),
    ]
    for args, names in cases:
        proc = subprocess.run([str(QUIC), *args], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and names in proc.stderr, (args, proc.stderr)


def test_the_quic_agreement_cases_cover_every_sender_controller():
    """Four cases per registry controller (alone, beside kernel CUBIC; 30 ms, 500 ms) and ABE's
    settings; each case's simulator form is a valid scenario, its emulator form keeps QUIC and
    drops the TCP options QUIC refuses."""
    from ccbench.api import validate
    from ccbench.compare_emu import _for_emulator, _for_simulator, quic_cases
    from ccbench.listing import entries

    cases = quic_cases()
    for name in (e["name"] for e in entries("controllers")):
        for suffix in ("30ms", "500ms", "cubic-30ms", "cubic-500ms"):
            assert f"quic-{name}-{suffix}" in cases
    for case in cases.values():
        sim, emu = _for_simulator({**case, "duration": "10s"}), _for_emulator(case)
        validate(sim)
        assert all("transport" not in f for f in sim["flows"])
        ours = [f for f in emu["flows"] if f.get("transport") == "quic"]
        assert len(ours) == 1 and "ecn" not in ours[0]


def test_every_controller_says_how_it_runs_on_quic():
    from ccbench.listing import entries, format_family

    rows = entries("controllers")
    assert all(r["quic"] == "faithful" or r["quic"].startswith("approximate: ") for r in rows)
    assert {r["name"] for r in rows if r["quic"] == "faithful"} >= {"newreno", "cubic"}
    assert "on QUIC: approximate: quinn paces" in format_family("controllers")
