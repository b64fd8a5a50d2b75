"""``ccbench compare-emu``: the same scenarios in the simulator and on real Linux TCP.

Each case runs once in each (the emulator in real time), and ``comparison.md`` / ``agreement.csv``
put goodput per flow, bottleneck utilization, queueing delay and retransmissions side by side
with the difference. A case whose controller the simulator lacked would show the emulator alone;
every case here runs in both.

``--quic`` runs the QUIC cases instead: every sender controller of the registry as the
simulator's TCP flow against the emulator's QUIC flow (quinn, ``transport = "quic"``), alone and
beside a kernel CUBIC flow, behind a 30 ms and a 500 ms drop-tail buffer at 10 Mbps and 40 ms.
QUIC's recovery is RFC 9002's, not Linux's, and each controller's registry row says what it
misses on quinn; the table is where those differences show.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional

BASE = {"warmup": "5s", "seed": 1, "output": {"sojourn_samples": True}}


def _case(rate: str, rtt: str, buffer: str, *flows: dict, **bottleneck) -> dict:
    return {**BASE, "bottleneck": {"rate": rate, "rtt": rtt, "buffer": buffer, **bottleneck},
            "flows": list(flows)}


#: A kernel CUBIC flow with classic ECN (RFC 3168: ECT(0), so DualPI2's classic queue).
_ECN_CUBIC = {"cca": "cubic", "ecn": True}


#: The issue's shared scenarios: 10–50 Mbps, 20–200 ms, 0.5–2 BDP drop-tail.
CASES: Dict[str, dict] = {
    "cubic": _case("20Mbps", "40ms", "1bdp", {"cca": "cubic"}),
    "newreno": _case("10Mbps", "100ms", "1bdp", {"cca": "newreno"}),
    "bbr": _case("20Mbps", "40ms", "1bdp", {"cca": "bbr"}),
    "cubic-vs-newreno": _case("20Mbps", "40ms", "1bdp", {"cca": "cubic"}, {"cca": "newreno"}),
    "two-cubic": _case("50Mbps", "20ms", "2bdp", {"cca": "cubic", "count": 2}),
    "rtt-100-vs-200": _case("20Mbps", "100ms", "0.5bdp", {"cca": "cubic", "rtt": "100ms"},
                            {"cca": "cubic", "rtt": "200ms"}),
    # The RFC 8290 / RFC 9332 queues, marking ECN-capable CUBIC (this kernel has no L4S sender).
    "cubic-dualpi2": _case("20Mbps", "40ms", "2bdp", {**_ECN_CUBIC, "count": 2}, aqm="dualpi2", ecn=True),
    "cubic-pi2": _case("20Mbps", "40ms", "2bdp", {**_ECN_CUBIC, "count": 2}, aqm="pi2", ecn=True),
    "cubic-fq-codel": _case("20Mbps", "40ms", "2bdp", {**_ECN_CUBIC, "rtt": "20ms"},
                            {**_ECN_CUBIC, "rtt": "80ms"}, aqm="fq_codel", ecn=True),
}


def quic_cases() -> Dict[str, dict]:
    """Four cases per sender controller: alone and beside kernel CUBIC, 30 ms and 500 ms buffers;
    and ABE's NewReno and CUBIC over CoDel and PIE."""
    from ccbench.listing import entries

    cases = {}
    for entry in entries("controllers"):
        ours = {"name": "ours", "cca": entry["name"], "transport": "quic"}
        for buffer in ("30ms", "500ms"):
            cases[f"quic-{entry['name']}-{buffer}"] = _case("10Mbps", "40ms", buffer, ours)
            cubic = {"name": "cubic", "cca": "cubic", "start": "2s"}
            cases[f"quic-{entry['name']}-cubic-{buffer}"] = _case("10Mbps", "40ms", buffer, ours, cubic)
    # ABE's settings (RFC 8511 §3: beta_ecn 0.8 for Reno-like, 0.85 for CUBIC) over CoDel and
    # PIE marking ECN; quinn uses ECN wherever the path carries it, the simulator's TCP is told to.
    for cca, beta_ecn in (("newreno", 0.8), ("cubic", 0.85)):
        for aqm in ("codel", "pie"):
            ours = {"name": "ours", "cca": cca, "cc": {"beta_ecn": beta_ecn}, "transport": "quic", "ecn": True}
            cases[f"quic-abe-{cca}-{aqm}"] = _case("10Mbps", "40ms", "500ms", ours, aqm=aqm, ecn=True)
    return cases


def _for_simulator(scenario: dict) -> dict:
    """The simulator runs the QUIC cases' flows on its TCP."""
    flows = [{k: v for k, v in f.items() if k != "transport"} for f in scenario["flows"]]
    return {**scenario, "flows": flows}


def _for_emulator(scenario: dict) -> dict:
    """A QUIC flow takes no TCP option: quinn turns ECN on by itself where the path carries it."""
    flows = [{k: v for k, v in f.items() if not (k == "ecn" and f.get("transport") == "quic")}
             for f in scenario["flows"]]
    return {**scenario, "flows": flows}


def _diff(sim: float, emu: float) -> float:
    return (sim - emu) / emu * 100 if emu and not math.isnan(emu) else math.nan


def _rows(name: str, sim, emu) -> List[dict]:
    """One row per flow, plus the bottleneck's utilization and queueing delay on each."""
    link_e = emu.link("bottleneck")
    link_s = sim.link("bottleneck") if sim is not None else None
    rows = []
    for f in emu.summary["flows"]:
        s = sim.flow(f["name"]) if sim is not None else None
        get = (lambda key, s=s: s[key]) if s is not None else (lambda key: math.nan)
        rows.append({
            "case": name, "flow": f["name"], "cca": f["cca"], "transport": f["kind"],
            "goodput_sim": get("goodput_mbps"), "goodput_emu": f["goodput_mbps"],
            "goodput_diff_pct": _diff(get("goodput_mbps"), f["goodput_mbps"]),
            "retx_sim": get("retransmits"), "retx_emu": f["retransmits"],
            "util_sim": link_s["utilization"] if link_s else math.nan,
            "util_emu": link_e["utilization"],
            "qdelay_sim_ms": (link_s["queue_delay_ms"] or {}).get("mean", math.nan) if link_s else math.nan,
            "qdelay_emu_ms": (link_e["queue_delay_ms"] or {}).get("mean", math.nan),
        })
    return rows


def _markdown(rows: List[dict], duration: str) -> str:
    head = ("| case | flow | goodput sim / emu (Mbps) | diff | retransmits sim / emu | "
            "utilization sim / emu | queueing delay sim / emu (ms) |")
    lines = [f"# Simulator vs emulator ({duration} runs, warm-up 5 s)", "", head, "|" + "---|" * 7]
    quic = any(r["transport"] == "quic" for r in rows)
    for r in rows:
        sim_note = "—" if math.isnan(r["goodput_sim"]) else f"{r['goodput_sim']:.2f}"
        diff = "—" if math.isnan(r["goodput_diff_pct"]) else f"{r['goodput_diff_pct']:+.1f}%"
        retx = "—" if math.isnan(r["retx_sim"]) else f"{int(r['retx_sim'])}"
        lines.append(
            f"| {r['case']} | {r['flow']} ({r['cca']}{', QUIC in emu' if r['transport'] == 'quic' else ''}) | "
            f"{sim_note} / {r['goodput_emu']:.2f} | {diff} | "
            f"{retx} / {r['retx_emu']} | {r['util_sim']:.3f} / {r['util_emu']:.3f} | "
            f"{r['qdelay_sim_ms']:.1f} / {r['qdelay_emu_ms']:.1f} |")
    lines += ["", "— : the simulator has no such controller.",
              "Retransmissions count the measurement window in both (the emulator from TCP_INFO)."]
    if quic:
        lines += ["QUIC flows: the simulator runs the controller on its TCP (Linux's recovery), the emulator on "
                  "quinn (RFC 9002: no PRR, no undo, its own pacing); their retransmissions are packets "
                  "declared lost over the whole run. Each controller's registry row (`ccbench list "
                  "controllers`, \"on QUIC\") says what else it misses there."]
    return "\n".join(lines) + "\n"


def _check_duration(duration: str) -> None:
    """A bad ``--duration`` named as such before any run (the emulator would blame its temporary
    scenario file, after the simulator's runs)."""
    from ccbench.api import ScenarioError, validate
    from ccbench.errors import UsageError

    try:
        validate({**next(iter(CASES.values())), "duration": duration})
    except ScenarioError as exc:
        raise UsageError(f"--duration {duration}: {str(exc).removeprefix('<dict>: ')}") from None


def main(out: Path, duration: str = "30s", only: Optional[List[str]] = None, quic: bool = False) -> int:
    from ccbench.api import ScenarioError, run
    from ccbench.emu import run as emulate
    from ccbench.errors import UsageError

    cases = quic_cases() if quic else CASES
    unknown = sorted(set(only or []) - set(cases))
    if unknown:
        raise UsageError(f"compare-emu: unknown case(s) {', '.join(unknown)} (known: {', '.join(cases)})")
    _check_duration(duration)
    rows: List[dict] = []
    for name, scenario in cases.items():
        if only and name not in only:
            continue
        scenario = {**scenario, "duration": duration}
        try:
            sim = run(_for_simulator(scenario), out=out / name / "sim")
        except ScenarioError:
            sim = None  # a controller only the kernel has
        emu = emulate(_for_emulator(scenario), out=out / name / "emu")
        rows.extend(_rows(name, sim, emu))
        print(f"{name}: done", flush=True)
    import pandas as pd

    from ccbench.files import write_csv, write_text

    write_csv(out / "agreement.csv", pd.DataFrame(rows))
    write_text(out / "comparison.md", _markdown(rows, duration))
    print(_markdown(rows, duration))
    print(f"wrote {out}/comparison.md and agreement.csv")
    return 0
