"""Shared fixtures. Importing ccbench here (not inside a skip) makes a missing `_core` a hard
failure of the whole suite rather than silently skipped tests."""

import copy

import pytest

import ccbench  # noqa: F401  - fails loudly when the extension is not built

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
