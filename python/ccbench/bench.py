"""``ccbench bench``: simulator speed on a fixed set of scenarios.

Wall time is the core's own ``summary["wall_s"]`` (simulation only, no Python conversion), the
median over ``repeat`` runs so one noisy run does not skew it.

With ``ns3=True`` (``ccbench bench --ns3``) the scenarios in ``NS3_SCENARIOS`` are also run in
ns-3 3.44 in the same invocation (``ccbench.ns3_reference``, one child process per scenario, run
once) and a side-by-side table gives both wall times, the speed-up and both goodputs,
utilisations and drop counts. ns-3's wall time is ``Simulator::Run()`` alone, the counterpart of
ccbench's ``wall_s``; loading the bindings and building the topology are reported apart. The
answers are reported, not asserted: the two simulators model TCP differently in detail.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Callable, List, Optional

from ccbench.api import run

#: The issue's reference figure for ns-3 3.44 on scenario 1 (~15 s). Measured side by side, that
#: is the whole ns-3 process (binding import + setup + run); see ``--ns3`` for the split.
NS3_SCENARIO1_WALL_S = 15.0


def _scenario(rate: str, duration: str, cca: str, flows: int) -> dict:
    return {
        "duration": duration,
        "warmup": "0s",
        "seed": 1,
        "bottleneck": {"rate": rate, "rtt": "100ms", "buffer": "1bdp", "aqm": "droptail"},
        "flows": [{"cca": cca} for _ in range(flows)],
        # Per-packet sojourn samples dominate memory and conversion time; not what we measure.
        "output": {"sojourn_samples": False},
    }


SCENARIOS = {
    "cubic-1x20Mbps-100s": _scenario("20Mbps", "100s", "cubic", 1),
    "cubic-10x100Mbps-30s": _scenario("100Mbps", "30s", "cubic", 10),
    "newreno-1x10Mbps-300s": _scenario("10Mbps", "300s", "newreno", 1),
}

#: Scenarios also run in ns-3 by ``--ns3``: each costs ~10 s of binding import plus a 5-10 s run
#: (measured on the 2-core dev machine), so all three fit in about a minute.
NS3_SCENARIOS = tuple(SCENARIOS)

#: Give up on one ns-3 run after this many seconds of wall time.
NS3_TIMEOUT_S = 600.0


def run_bench(repeat: int = 3) -> List[dict]:
    rows = []
    for name, scenario in SCENARIOS.items():
        summaries = [run(scenario).summary for _ in range(max(1, repeat))]
        wall = statistics.median(s["wall_s"] for s in summaries)
        last = summaries[-1]
        sim = last["sim_s"]
        bottleneck = last["links"][0]
        goodputs = [f["goodput_mbps"] for f in last["flows"]]
        rows.append({
            "scenario": name,
            "sim_s": sim,
            "wall_s": wall,
            "sim_per_wall": sim / wall if wall > 0 else float("inf"),
            "packets_per_s": last["packets"] / wall if wall > 0 else float("inf"),
            "events_per_s": last["events"] / wall if wall > 0 else float("inf"),
            "packets": last["packets"],
            "events": last["events"],
            "goodput_mbps": goodputs,
            "total_goodput_mbps": sum(goodputs),
            "utilization": bottleneck["utilization"],
            "drops": bottleneck["drops"],
        })
    return rows


def add_ns3(rows: List[dict], names=None, runner: Optional[Callable] = None,
            progress: Optional[Callable[[str], None]] = None) -> List[dict]:
    """Run the rows' scenarios named in ``names`` (default ``NS3_SCENARIOS``) in ns-3 and store the results under ``ns3``.

    A failed ns-3 run is recorded as ``{"error": message}`` and does not stop the others.
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
            res = runner(SCENARIOS[row["scenario"]], timeout=NS3_TIMEOUT_S)
        except (RuntimeError, ValueError) as exc:
            row["ns3"] = {"error": str(exc)}
            continue
        goodputs = list(res["goodput_mbps"])
        row["ns3"] = {
            "wall_s": res["wall_s"],
            "import_s": res.get("import_s"),
            "setup_s": res.get("setup_s"),
            "process_s": res.get("process_s"),
            "events": res.get("events"),
            "goodput_mbps": goodputs,
            "total_goodput_mbps": sum(goodputs),
            "utilization": res.get("utilization"),
            "drops": res.get("drops"),
            "config": res.get("config"),
        }
        row["ns3_speedup"] = res["wall_s"] / row["wall_s"] if row["wall_s"] > 0 else float("inf")
    return rows


def format_table(rows: List[dict]) -> str:
    head = f"{'scenario':<24} {'sim s':>7} {'wall s':>8} {'sim-s/wall-s':>13} {'pkts/s':>12} {'events/s':>12}"
    lines = [head, "-" * len(head)]
    for r in rows:
        lines.append(f"{r['scenario']:<24} {r['sim_s']:>7.1f} {r['wall_s']:>8.3f} "
                     f"{r['sim_per_wall']:>13.1f} {r['packets_per_s']:>12.3g} {r['events_per_s']:>12.3g}")
    if rows:
        wall = rows[0]["wall_s"]
        speedup = NS3_SCENARIO1_WALL_S / wall if wall > 0 else float("inf")
        lines.append(f"issue's reference figure: ns-3 3.44 takes ~{NS3_SCENARIO1_WALL_S:g} s wall "
                     f"for scenario 1 ⇒ speed-up ≈ {speedup:.0f}× (not measured in this run)")
    return "\n".join(lines)


def format_ns3_table(rows: List[dict]) -> str:
    """The side-by-side table of the rows that carry an ``ns3`` result."""
    rows = [r for r in rows if "ns3" in r]
    head = (f"{'scenario':<24} {'ccbench s':>9} {'ns-3 s':>8} {'speed-up':>9} "
            f"{'ns-3 import+setup s':>20}  {'goodput Mbps ccb / ns-3':>23}  "
            f"{'util ccb / ns-3':>15}  {'drops ccb / ns-3':>16}")
    lines = ["side by side with ns-3 3.44, measured in this run "
             "(wall = simulation loop only: ccbench core, ns-3 Simulator::Run(); ns-3 run once)",
             head, "-" * len(head)]
    for r in rows:
        n = r["ns3"]
        if "error" in n:
            lines.append(f"{r['scenario']:<24} {r['wall_s']:>9.3f}  ns-3 failed: {n['error']}")
            continue
        overhead = (n.get("import_s") or 0.0) + (n.get("setup_s") or 0.0)
        goodput = f"{r['total_goodput_mbps']:.2f} / {n['total_goodput_mbps']:.2f}"
        util = f"{r['utilization']:.3f} / {n['utilization']:.3f}"
        drops = f"{r['drops']} / {n['drops']}"
        lines.append(f"{r['scenario']:<24} {r['wall_s']:>9.3f} {n['wall_s']:>8.2f} "
                     f"{r['ns3_speedup']:>8.0f}× {overhead:>20.1f}  {goodput:>23}  "
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
            from ccbench.cli import UsageError

            raise UsageError(f"bench --ns3: {exc}") from None
    rows = run_bench(repeat)
    print(format_table(rows), flush=True)
    if ns3:
        add_ns3(rows, progress=lambda m: print(m, flush=True))
        print()
        print(format_ns3_table(rows))
    if out is not None:
        path = Path(out)
        path.mkdir(parents=True, exist_ok=True)
        (path / "bench.json").write_text(json.dumps({"repeat": repeat, "results": rows}, indent=2) + "\n")
    return rows
