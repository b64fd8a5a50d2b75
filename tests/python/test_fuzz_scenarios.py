"""A deterministic fuzzer over whole scenarios, run (not only parsed): each case replaces one or
two fields of a valid scenario with a hostile value (huge, tiny, negative, wrong type, deep,
long, unicode) and runs it through :func:`ccbench.run` under a small memory limit. Every case
must end as a result or a one-line :class:`ccbench.ScenarioError` naming a field: never another
exception, a crash, or a run that eats the machine (the limit refuses those first).

Cases whose estimate is over a few million events are only estimated, to keep the suite fast.
"""

import random

import pytest

import ccbench

BASE = {
    "duration": "1s",
    "warmup": "0.2s",
    "bottleneck": {"rate": "10Mbps", "rtt": "20ms", "buffer": "1bdp"},
    "flows": [{"cca": "cubic", "name": "a"},
              {"type": "cbr", "name": "v", "interval": "20ms", "packet_size": 160}],
    "output": {"bin": "100ms"},
}

#: Where a hostile value goes: (path of keys/indices).
FIELDS = [
    ("duration",), ("warmup",), ("seed",), ("name",),
    ("bottleneck", "rate"), ("bottleneck", "rtt"), ("bottleneck", "buffer"), ("bottleneck", "aqm"),
    ("bottleneck", "loss"), ("bottleneck", "jitter"), ("bottleneck", "delay"), ("bottleneck", "reverse_rate"),
    ("bottleneck", "rate_max"), ("bottleneck", "ecn"),
    ("flows", 0, "cca"), ("flows", 0, "start"), ("flows", 0, "stop"), ("flows", 0, "size"),
    ("flows", 0, "rtt"), ("flows", 0, "mss"), ("flows", 0, "rcv_buf"), ("flows", 0, "initial_window"),
    ("flows", 0, "count"), ("flows", 0, "cc"), ("flows", 0, "delayed_ack_timeout"),
    ("flows", 1, "interval"), ("flows", 1, "packet_size"), ("flows", 1, "start"),
    ("output", "bin"), ("output", "pcap"),
]

VALUES = [
    0, -1, 1, 2**63 - 1, -2**63, 1e308, -1e308, float("nan"), float("inf"), 0.5, True, "",
    " ", "0", "-1s", "1ns", "1000000000s", "1e-300s", "0.0000001bps", "1Tbps", "1e30bps",
    "100000p", "1e12p", "0p", "1B", "1PB", "inf", "nan", "cubic", "nonexistent", "ünïcødé",
    "x" * 100_000, "10Mbps\n", "1s\x00", [], [1, 2], ["bottleneck"], {}, {"a": 1},
    {"beta": 2.0}, [[[[]]]], "2e9ns", "1e-9s", "65507", 65507, 100_000, 1_000_000,
]

#: Plausible values, so that about half the cases get past the parser and run.
PLAUSIBLE = ["5Mbps", "100Mbps", "600kbps", "30ms", "500ms", "0.5s", "50p", "0.5bdp", "100KB",
             "codel", "pie", "red", "newreno", "bbr", "ledbat", 0.01, 3, 1448, 200, "1us", "1ms"]

LIMIT = "300MB"
MAX_RUN_EVENTS = 3_000_000


def _mutated(rng: random.Random) -> dict:
    import copy

    scenario = copy.deepcopy(BASE)
    for _ in range(rng.choice((1, 1, 2))):
        path = rng.choice(FIELDS)
        target = scenario
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = rng.choice(VALUES if rng.random() < 0.5 else PLAUSIBLE)
    return scenario


def _one_line_error(exc: Exception) -> None:
    text = str(exc)
    assert "\n" not in text, text
    assert len(text) < 400, text[:400]
    assert text.startswith("<dict>: ") or text.startswith("max_memory"), text


@pytest.mark.parametrize("chunk", range(8))
def test_hostile_scenarios_run_or_fail_in_one_line(chunk, tmp_path):
    rng = random.Random(24_000 + chunk)
    outcomes = {"ran": 0, "refused": 0, "estimated": 0}
    for _ in range(300):
        scenario = _mutated(rng)
        try:
            cost = ccbench.estimate(scenario)
        except ccbench.ScenarioError as exc:
            _one_line_error(exc)
            outcomes["refused"] += 1
            continue
        assert cost["memory_bytes"] >= 0 and cost["packets"] >= 0
        if cost["events"] > MAX_RUN_EVENTS:
            outcomes["estimated"] += 1
            continue
        try:
            result = ccbench.run(scenario, max_memory=LIMIT)
        except ccbench.ScenarioError as exc:
            _one_line_error(exc)
            outcomes["refused"] += 1
            continue
        assert result.summary["sim_s"] > 0
        outcomes["ran"] += 1
    # The fuzzer must exercise both sides, or it tests nothing.
    assert outcomes["ran"] > 5 and outcomes["refused"] > 5, outcomes
