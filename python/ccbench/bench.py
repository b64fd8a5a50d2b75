"""``ccbench bench``: simulator speed on a fixed set of scenarios.

Wall time is the core's own ``summary["wall_s"]`` (simulation only, no Python conversion), the
median over ``repeat`` runs so one noisy run does not skew it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import List, Optional

from ccbench.api import run

#: ns-3 3.44's wall time for scenario 1 (measured by the project; see README).
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


def run_bench(repeat: int = 3) -> List[dict]:
    rows = []
    for name, scenario in SCENARIOS.items():
        summaries = [run(scenario).summary for _ in range(max(1, repeat))]
        wall = statistics.median(s["wall_s"] for s in summaries)
        last = summaries[-1]
        sim = last["sim_s"]
        rows.append({
            "scenario": name,
            "sim_s": sim,
            "wall_s": wall,
            "sim_per_wall": sim / wall if wall > 0 else float("inf"),
            "packets_per_s": last["packets"] / wall if wall > 0 else float("inf"),
            "events_per_s": last["events"] / wall if wall > 0 else float("inf"),
            "packets": last["packets"],
            "events": last["events"],
        })
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
        lines.append(f"ns-3 3.44 reference for scenario 1: ~{NS3_SCENARIO1_WALL_S:g} s wall "
                     f"⇒ speed-up ≈ {speedup:.0f}×")
    return "\n".join(lines)


def main(repeat: int = 3, out: Optional[str] = None) -> List[dict]:
    rows = run_bench(repeat)
    print(format_table(rows))
    if out is not None:
        path = Path(out)
        path.mkdir(parents=True, exist_ok=True)
        (path / "bench.json").write_text(json.dumps({"repeat": repeat, "results": rows}, indent=2) + "\n")
    return rows
