"""Shared fixtures. Importing ccbench here (not inside a skip) makes a missing `_core` a hard
failure of the whole suite rather than silently skipped tests."""

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ccbench  # fails loudly when the extension is not built

#: The directory holding the ccbench package the tests import; subprocesses must use it too.
PYTHON_DIR = Path(ccbench.__file__).resolve().parents[1]

#: Every registered experiment's quick results this session has computed, by name: the can-fail
#: test (test_zz_can_fail.py, last) perturbs them instead of running the experiments again.
QUICK_RESULTS: dict = {}


def _recording_quick_runs():
    """Wrap run_experiment (before any test module imports it) so each quick run of a registered,
    unmodified experiment leaves its results in QUICK_RESULTS."""
    import ccbench.experiments as package
    from ccbench.experiments import runner
    from ccbench.experiments.registry import experiments

    real = runner.run_experiment

    def run_experiment(experiment, *args, **kwargs):
        results = real(experiment, *args, **kwargs)
        name = experiment if isinstance(experiment, str) else getattr(experiment, "name", None)
        registered = experiments().get(name) if isinstance(name, str) else None
        if kwargs.get("quick") and registered is not None and (experiment is registered or isinstance(experiment, str)):
            QUICK_RESULTS[name] = results
        return results

    runner.run_experiment = package.run_experiment = run_experiment


_recording_quick_runs()


def python_code(code: str, *args: str, cwd=None) -> subprocess.CompletedProcess:
    """Run ``python -c code`` in a fresh interpreter that imports this ccbench."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


def run_quick(experiments, tmp_path_factory) -> dict:
    """Each experiment's quick variant once (two workers), every run required to succeed:
    name → (output folder, summary as the runner computes it, the experiment's compare included)."""
    from ccbench.experiments import run_experiment, summarize

    done = {}
    for exp in experiments:
        out = tmp_path_factory.mktemp(exp.name)
        results = run_experiment(exp, quick=True, jobs=2, out=out)
        assert list(results["error"]) == [""] * len(results), results["error"].tolist()
        done[exp.name] = (out, summarize(exp, results, quick=True))
    return done


#: A short two-flow scenario, as a dict; TOML_SCENARIO is the same scenario as TOML text.
SMALL = {
    "duration": "5s",
    "warmup": "1s",
    "seed": 7,
    "bottleneck": {"rate": "10Mbps", "rtt": "40ms", "buffer": "1bdp", "aqm": "droptail"},
    "flows": [{"cca": "cubic", "name": "a"}, {"cca": "newreno", "name": "b", "start": "0.5s"}],
}

TOML_SCENARIO = """\
duration = "5s"
warmup = "1s"
seed = 7

[bottleneck]
rate = "10Mbps"
rtt = "40ms"
buffer = "1bdp"
aqm = "droptail"

[[flows]]
cca = "cubic"
name = "a"

[[flows]]
cca = "newreno"
name = "b"
start = "0.5s"
"""


@pytest.fixture
def small():
    return copy.deepcopy(SMALL)


@pytest.fixture
def scenario_file(tmp_path):
    path = tmp_path / "small.toml"
    path.write_text(TOML_SCENARIO)
    return path


def validated_dumbbell(ccas=("cubic",), rate_bps=20e6, rtt_ns=100_000_000, limit=None,
                       duration_ns=100_000_000_000):
    """A scenario as ``ccbench.validate`` returns it (the documented shape), for a ``[bottleneck]``
    dumbbell with greedy TCP flows. Written out literally so tests do not depend on the core's
    validate_* being built."""
    limit = limit or {"bytes": int(rate_bps * rtt_ns / 1e9 / 8)}
    link = {"from": "r1", "to": "r2", "rate_bps": rate_bps, "delay_ns": 0, "jitter_ns": 0,
            "loss": 0.0, "buffer": {"bdp": 1.0}, "limit": limit, "rtt_ns": rtt_ns,
            "aqm": "droptail", "aqm_params": {}, "ecn": False, "changes": []}
    tcp = {"mss": 1448, "header_bytes": 52, "initial_window": 10, "sack": True,
           "delayed_ack": True, "timestamps": True, "ecn": False}
    flows = [{"name": f"{cca}-{i}", "type": "tcp", "cca": cca, "cc": {}, "from": f"s{i}",
              "to": f"d{i}", "path": ["bottleneck"], "ack_path": ["bottleneck-rev"],
              "access_delay_ns": rtt_ns // 2, "rtt_ns": rtt_ns, "start_ns": 0, "stop_ns": None,
              "size_bytes": None, "tcp": dict(tcp), "cbr": None}
             for i, cca in enumerate(ccas)]
    return {
        "name": None, "duration_ns": duration_ns, "warmup_ns": 0, "seed": 1,
        "output": {"bin_ns": 100_000_000, "sojourn_samples": False},
        "topology": {"generator": "dumbbell", "nodes": ["r1", "r2"]},
        "links": [{"name": "bottleneck", "reverse_of": None, **link},
                  {"name": "bottleneck-rev", "reverse_of": "bottleneck",
                   **{**link, "from": "r2", "to": "r1", "limit": {"packets": 10000}}}],
        "flows": flows,
    }


def assert_rledbat_environment(name: str, shaped: bool) -> None:
    """Every point of rLEDBAT experiment ``name`` runs in the testbed's environment (§5, L307–L311:
    the tbf burst by tc-tbf(8)'s rule at the point's rate, 32 KiB at 20 Mbps, on a 1 Gbit/s line,
    GRO at every TCP receiver), or, unless ``shaped``, in the ideal one (no bucket, no GRO)."""
    from ccbench.experiments import registry
    from ccbench.experiments.rledbat import common

    exp = registry.get(name)
    for point in exp.params():
        point = {**point, "seed": 1} if exp.seed_in_point else point
        sc = ccbench.validate(exp.base, overrides=exp.overrides(point))
        link = sc["links"][0]
        rate = link["rate_bps"] / 1e6
        tcp = [f for f in sc["flows"] if f.get("type", "tcp") == "tcp" and f.get("cca")]
        if not shaped:
            assert link["shaper"] is None and all(f["tcp"]["gro_ns"] == 0 for f in tcp), point
            continue
        assert link["shaper"] == {"burst_bytes": common.tbf_burst_bytes(rate), "line_rate_bps": 1e9}, point
        assert rate != 20 or link["shaper"]["burst_bytes"] == 32 * 1024
        assert tcp and all(f["tcp"]["gro_ns"] == 50_000 for f in tcp), point
