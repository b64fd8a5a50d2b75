"""``ccbench trace`` and trace-driven links from the front end: the synthetic cellular trace the
examples use is the generator's output (regenerate it with the command in its header), a
scenario names a trace beside it, and bad arguments are one-line errors with status 2."""

from pathlib import Path

from test_cli import ccbench_cli

import ccbench
from ccbench import _core

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_example_trace_is_the_generators_output():
    text = (EXAMPLES / "traces" / "cellular-12mbps.trace").read_text()
    assert text == _core.synthetic_trace(12e6, 60.0, 1), (
        "examples/traces/cellular-12mbps.trace is stale: ccbench trace examples/traces/cellular-12mbps.trace")


def test_the_cellular_example_runs_on_its_trace():
    result = ccbench.run(EXAMPLES / "cellular.toml", overrides=["duration=20s"])
    bottleneck = result.link("bottleneck")
    opportunities = sum(1 for line in (EXAMPLES / "traces" / "cellular-12mbps.trace").read_text().splitlines()
                        if line and not line.startswith("#"))
    last_ms = int((EXAMPLES / "traces" / "cellular-12mbps.trace").read_text().split()[-1])
    assert bottleneck["rate_mbps"] == opportunities * 1504 * 8 / last_ms / 1e3
    # A bulk CUBIC flow keeps the queue busy: it delivers most of what the trace offers.
    assert result.flow("cubic-0")["goodput_mbps"] > 0.8 * bottleneck["rate_mbps"] * 1448 / 1504


def test_ccbench_trace_writes_a_trace_a_scenario_can_name(tmp_path):
    out = tmp_path / "lte.trace"
    proc = ccbench_cli("trace", str(out), "--mean-mbps", "5", "--seconds", "10", "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert out.read_text() == _core.synthetic_trace(5e6, 10.0, 3)
    scenario = tmp_path / "s.toml"
    scenario.write_text('duration = "5s"\n[bottleneck]\ntrace = "lte.trace"\nrtt = "40ms"\n[[flows]]\n')
    assert ccbench.run(scenario).link("bottleneck")["rate_mbps"] > 0


def test_bad_arguments_and_bad_traces_are_one_line_errors(tmp_path):
    for args in (["--seconds", "0"], ["--mean-mbps", "nan"], ["--seed", "-1"]):
        proc = ccbench_cli("trace", str(tmp_path / "t.trace"), *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, (args, proc.stderr)
    (tmp_path / "bad.trace").write_text("5\n3\n")
    scenario = tmp_path / "s.toml"
    scenario.write_text('duration = "5s"\n[bottleneck]\ntrace = "bad.trace"\n[[flows]]\n')
    proc = ccbench_cli("run", str(scenario), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"error: {scenario}: bottleneck.trace: {tmp_path / 'bad.trace'}: "
                                   "line 2: 3 ms is earlier than the line before")
