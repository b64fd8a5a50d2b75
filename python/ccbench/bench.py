"""``ccbench bench``: simulator speed on a fixed set of scenarios.

Two times are reported. ``wall_s`` is the core's own ``summary["wall_s"]`` (simulation loop
only, no Python), the median over ``repeat`` runs so one noisy run does not skew it.
``process_s`` is what a user waits for: the whole ``ccbench run --out DIR`` process (Python
start-up, imports, simulation, output files), timed from outside as the median of ``repeat``
child processes, for the first scenario.

The scale rows (``SCALE_ROWS``) run one set-up with 1 (or one per path), about 1,000 and about
10,000 flows: a 10 Gbps dumbbell and a 10-hop parking lot of 10 Gbps links. The table gives each
row's packets per second against the set-up's fewest flows (the aim: within 2×).

With ``ns3=True`` (``ccbench bench --ns3``) the scenarios in ``NS3_SCENARIOS`` are also run in
ns-3 3.44 in the same invocation (``ccbench.ns3_reference``, one child process per scenario, run
once), and a side-by-side table compares like with like: simulation loop against ns-3's
``Simulator::Run()``, whole process against ns-3's whole child process (binding import + set-up
+ run), plus both goodputs, utilisations and drop counts. The answers are reported, not
asserted: the two simulators model TCP differently in detail.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, List, Optional

from ccbench.api import run, validate
from ccbench.errors import UsageError


def _scenario(rate: str, duration: str, cca: str, flows: int) -> str:
    """A dumbbell as TOML text: the same text runs in-process and as a ``ccbench run`` file."""
    # Per-packet sojourn samples dominate memory and conversion time; not what we measure.
    return (f'duration = "{duration}"\nwarmup = "0s"\nseed = 1\n\n'
            f'[output]\nsojourn_samples = false\n\n'
            f'[bottleneck]\nrate = "{rate}"\nrtt = "100ms"\nbuffer = "1bdp"\naqm = "droptail"\n\n'
            f'[[flows]]\ncca = "{cca}"\ncount = {flows}\n')


def _swarm() -> dict:
    """The fLEDBAT paper's 100-peer FTTH swarm for 60 s (issue 9: it must run in under a minute):
    1000 chunked fLEDBAT connections, 5 upload slots per peer, 100 access links each way."""
    from ccbench.topology import swarm

    scenario = swarm(100, duration="60s", start_spread=5.0)
    scenario["output"] = {"sojourn_samples": False}
    return scenario


def _scale_dumbbell(flows: int) -> Callable[[], dict]:
    """``flows`` CUBIC flows on a 10 Gbps dumbbell (RTT 20 ms, 1 BDP) for 2 s: the scale rows."""
    def build() -> dict:
        return {"duration": "2s", "warmup": "0s", "seed": 1, "output": {"sojourn_samples": False},
                "bottleneck": {"rate": "10Gbps", "rtt": "20ms", "buffer": "1bdp"},
                "flows": [{"cca": "cubic", "count": flows}]}
    return build


def _scale_parking_lot(flows: int) -> Callable[[], dict]:
    """A 10-hop parking lot of 10 Gbps links (1 ms, 1000 packets each) for 0.5 s, ``flows`` CUBIC
    flows spread evenly over its 11 paths (the long one and each hop's cross path)."""
    def build() -> dict:
        from ccbench.topology import parking_lot

        scenario = parking_lot(SCALE_HOPS, rate="10Gbps", delay="1ms", buffer="1000p", duration="0.5s")
        for flow in scenario["flows"]:
            flow["count"] = flows // (SCALE_HOPS + 1)
        scenario["output"] = {"sojourn_samples": False}
        return scenario
    return build


#: Links of the scale rows' parking lot.
SCALE_HOPS = 10
#: Flow counts of the scale rows: 1, 1,000 and 10,000 on the dumbbell; on the parking lot the
#: nearest multiples of its 11 paths (one flow per path, then 91 and 910).
SCALE_FLOWS = {"dumbbell": (1, 1_000, 10_000), "parkinglot": (11, 1_001, 10_010)}

#: Name → scenario (TOML text, or a function building a scenario dict when first needed).
SCENARIOS = {
    "cubic-1x20Mbps-100s": _scenario("20Mbps", "100s", "cubic", 1),
    "cubic-10x100Mbps-30s": _scenario("100Mbps", "30s", "cubic", 10),
    "newreno-1x10Mbps-300s": _scenario("10Mbps", "300s", "newreno", 1),
    "swarm-100peers-60s": _swarm,
    **{f"scale-dumbbell-{n}flows": _scale_dumbbell(n) for n in SCALE_FLOWS["dumbbell"]},
    **{f"scale-parkinglot-{n}flows": _scale_parking_lot(n) for n in SCALE_FLOWS["parkinglot"]},
}

#: Rows that scale one set-up by its flow count: set-up → its rows, fewest flows first.
SCALE_ROWS = {"10 Gbps dumbbell": [f"scale-dumbbell-{n}flows" for n in SCALE_FLOWS["dumbbell"]],
              "10-hop parking lot": [f"scale-parkinglot-{n}flows" for n in SCALE_FLOWS["parkinglot"]]}

#: The link whose utilisation and drops a scenario reports, where it is not "bottleneck".
MEASURED_LINK = {"swarm-100peers-60s": "up-0", **{f"scale-parkinglot-{n}flows": "l1" for n in SCALE_FLOWS["parkinglot"]}}

#: Scenarios also run in ns-3 by ``--ns3``: each costs ~10 s of binding import plus a 5-10 s run
#: (measured on the 2-core dev machine), so all three fit in about a minute. The swarm has no
#: ns-3 counterpart (ns-3 has no LEDBAT family nor chunked peers).
NS3_SCENARIOS = ("cubic-1x20Mbps-100s", "cubic-10x100Mbps-30s", "newreno-1x10Mbps-300s")

#: Give up on one ns-3 run after this many seconds of wall time.
NS3_TIMEOUT_S = 600.0

#: The link whose utilisation and drops are reported.
BOTTLENECK = "bottleneck"


def process_time(scenario: str, repeat: int = 3) -> float:
    """Median wall time of ``repeat`` whole ``ccbench run FILE --out DIR`` processes."""
    package_root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ)
    # The children must run this very package, whatever the environment's install points at.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="ccbench-bench-") as tmp:
        path = Path(tmp) / "scenario.toml"
        path.write_text(scenario)
        command = [sys.executable, "-m", "ccbench", "run", str(path), "--out", str(Path(tmp) / "out")]
        times = []
        for attempt in range(max(1, repeat) + 1):
            start = time.perf_counter()
            proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
            elapsed = time.perf_counter() - start
            if proc.returncode != 0:
                raise RuntimeError(f"ccbench run failed: {proc.stderr.strip()}")
            if attempt:  # the first run only warms the file cache
                times.append(elapsed)
    return statistics.median(times)


def _row(name: str, results: list) -> dict:
    wall = statistics.median(r.summary["wall_s"] for r in results)
    last = results[-1]
    summary = last.summary
    bottleneck = last.link(MEASURED_LINK.get(name, BOTTLENECK))
    goodputs = [f["goodput_mbps"] for f in summary["flows"]]
    per_wall = (lambda n: n / wall) if wall > 0 else (lambda n: float("inf"))
    return {
        "scenario": name,
        "sim_s": summary["sim_s"],
        "wall_s": wall,
        "sim_per_wall": per_wall(summary["sim_s"]),
        "packets_per_s": per_wall(summary["packets"]),
        "events_per_s": per_wall(summary["events"]),
        "packets": summary["packets"],
        "events": summary["events"],
        "flows": len(goodputs),
        "goodput_mbps": goodputs,
        "total_goodput_mbps": sum(goodputs),
        "utilization": bottleneck["utilization"],
        "drops": bottleneck["drops"],
    }


def run_bench(repeat: int = 3, process: bool = True) -> List[dict]:
    """One row per scenario; the first row also gets ``process_s`` when ``process`` is true."""
    rows = []
    for name, scenario in SCENARIOS.items():
        scenario = scenario() if callable(scenario) else scenario
        rows.append(_row(name, [run(scenario) for _ in range(max(1, repeat))]))
    if process and rows:
        rows[0]["process_s"] = process_time(SCENARIOS[rows[0]["scenario"]], repeat)
        rows[0]["process_repeat"] = max(1, repeat)
    return rows


def _ns3_entry(res: dict) -> dict:
    goodputs = list(res["goodput_mbps"])
    keys = ("wall_s", "import_s", "setup_s", "process_s", "events", "utilization", "drops", "config")
    return {**{k: res.get(k) for k in keys}, "goodput_mbps": goodputs,
            "total_goodput_mbps": sum(goodputs)}


def add_ns3(rows: List[dict], names=None, runner: Optional[Callable] = None,
            progress: Optional[Callable[[str], None]] = None) -> List[dict]:
    """Run the rows' scenarios named in ``names`` (default ``NS3_SCENARIOS``) in ns-3 and store
    the results under ``ns3``.

    The scenario goes to ns-3 as the core validated it. A failed ns-3 run (or one the core
    cannot validate) is recorded as ``{"error": message}`` and does not stop the others.
    ``runner`` replaces ``ns3_reference.run_ns3`` (tests).
    """
    if runner is None:
        from ccbench.ns3_reference import run_ns3 as runner
    names = NS3_SCENARIOS if names is None else names
    for row in rows:
        if row["scenario"] not in names:
            continue
        if progress:
            progress(f"ns-3: running {row['scenario']} ...")
        try:
            res = runner(validate(SCENARIOS[row["scenario"]]), timeout=NS3_TIMEOUT_S)
        except (RuntimeError, ValueError) as exc:
            row["ns3"] = {"error": str(exc)}
            continue
        row["ns3"] = _ns3_entry(res)
        row["ns3_speedup"] = res["wall_s"] / row["wall_s"] if row["wall_s"] > 0 else float("inf")
    return rows


def format_table(rows: List[dict]) -> str:
    head = f"{'scenario':<28} {'sim s':>7} {'wall s':>8} {'sim-s/wall-s':>13} {'pkts/s':>12} {'events/s':>12}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['scenario']:<28} {r['sim_s']:>7.1f} {r['wall_s']:>8.3f} "
                     f"{r['sim_per_wall']:>13.1f} {r['packets_per_s']:>12.3g} {r['events_per_s']:>12.3g}")
    lines.append("wall = the core's simulation loop (median of the runs)")
    lines += format_scale(rows)
    for r in rows:
        if "process_s" in r:
            lines.append(f"whole `ccbench run --out` process for {r['scenario']}: {r['process_s']:.3f} s "
                         f"(start-up, imports, simulation, output files; median of "
                         f"{r['process_repeat']})")
    return "\n".join(lines)


def format_scale(rows: List[dict]) -> List[str]:
    """Packets per second of each scale row against its set-up's fewest flows (issue: within 2×)."""
    by_name = {r["scenario"]: r for r in rows}
    lines = []
    for setup, names in SCALE_ROWS.items():
        present = [by_name[n] for n in names if n in by_name]
        if len(present) < 2:
            continue
        base = present[0]
        ratios = ", ".join(f"{r['flows']:,} flows {r['packets_per_s'] / 1e6:.2f} M ({base['packets_per_s'] / r['packets_per_s']:.2f}× slower)"
                           for r in present[1:])
        lines.append(f"scale, {setup}: {base['flows']:,} flows {base['packets_per_s'] / 1e6:.2f} M packets/s; {ratios}")
    return lines


def _fmt(value: Optional[float], spec: str) -> str:
    return "–" if value is None else format(value, spec)


def format_ns3_table(rows: List[dict]) -> str:
    """The side-by-side table of the rows that carry an ``ns3`` result."""
    rows = [r for r in rows if "ns3" in r]
    head = (f"{'scenario':<24} {'loop ccb s':>10} {'ns-3 s':>8} {'speed-up':>9} "
            f"{'process ccb s':>13} {'ns-3 s':>8} {'ns-3 import+setup s':>20}  "
            f"{'goodput Mbps ccb / ns-3':>23}  {'util ccb / ns-3':>15}  {'drops ccb / ns-3':>16}")
    lines = ["side by side with ns-3 3.44, measured in this run "
             "(loop = simulation loop only: ccbench core, ns-3 Simulator::Run(); "
             "process = the whole process: ccbench run --out, ns-3 import + set-up + run; "
             "ns-3 run once)", head, "-" * len(head)]
    for r in rows:
        n = r["ns3"]
        if "error" in n:
            lines.append(f"{r['scenario']:<24} {r['wall_s']:>10.3f}  ns-3 failed: {n['error']}")
            continue
        overhead = (n.get("import_s") or 0.0) + (n.get("setup_s") or 0.0)
        goodput = f"{r['total_goodput_mbps']:.2f} / {n['total_goodput_mbps']:.2f}"
        util = f"{r['utilization']:.3f} / {n['utilization']:.3f}"
        drops = f"{r['drops']} / {n['drops']}"
        lines.append(f"{r['scenario']:<24} {r['wall_s']:>10.3f} {n['wall_s']:>8.2f} "
                     f"{r['ns3_speedup']:>8.0f}× {_fmt(r.get('process_s'), '.3f'):>13} "
                     f"{_fmt(n.get('process_s'), '.2f'):>8} {overhead:>20.1f}  {goodput:>23}  "
                     f"{util:>15}  {drops:>16}")
    lines.append("goodput is the sum over flows for the whole run; the two are expected to agree "
                 "within a few %, which is reported, not checked")
    return "\n".join(lines)


def main(repeat: int = 3, out: Optional[str] = None, ns3: bool = False) -> List[dict]:
    if ns3:
        # Fail before spending time on ccbench runs if ns-3 cannot be run at all.
        from ccbench.ns3_reference import require_ns3

        try:
            require_ns3()
        except RuntimeError as exc:
            raise UsageError(f"bench --ns3: {exc}") from None
    rows = run_bench(repeat)
    print(format_table(rows), flush=True)
    if ns3:
        add_ns3(rows, progress=lambda m: print(m, flush=True))
        print()
        print(format_ns3_table(rows))
    if out is not None:
        from ccbench.files import write_text

        write_text(Path(out) / "bench.json", json.dumps({"repeat": repeat, "results": rows}, indent=2) + "\n")
    return rows
