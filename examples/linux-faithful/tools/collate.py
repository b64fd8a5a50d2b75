"""Collect OUT/{<case>-seed<k>, sim/<case>-seed<k>}/summary.json into OUT/table.md (OUT: argv[1], default out/linux-reference)."""
import json, statistics, subprocess
from pathlib import Path

import sys
OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "out/linux-reference")
KERNEL = subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout.strip()
CASES = [("overshoot", "overshoot", "100 s"),
         ("overshoot", "overshoot-15s", "15 s"),
         ("two-equal-cubic", "two-equal-cubic", "100 s"),
         ("rtt-fairness-cubic", "rtt-fairness-cubic", "90 s"),
         ("rtt-fairness-cubic", "rtt-fairness-cubic-600s", "600 s"),
         ("rtt-fairness-newreno", "rtt-fairness-newreno", "90 s"),
         ("rtt-fairness-newreno", "rtt-fairness-newreno-600s", "600 s")]
THESIS = {"rtt-fairness-cubic": "12.73 / 7.27", "rtt-fairness-newreno": "15.13 / 4.87"}


def load(d):
    p = d / "summary.json"
    return json.loads(p.read_text()) if p.exists() else None


def row(case, source, seed, s, mib, duration):
    flows = s["flows"]
    gp = " / ".join(f"{f['goodput_mbps']:.2f}" for f in flows)
    rtx = " / ".join(str(f["retransmits"]) for f in flows)
    notes = [f"{duration}", f"total {sum(f['goodput_mbps'] for f in flows):.2f} Mbps"]
    if len(flows) > 1:
        notes.append(f"Jain {s['jain_index']:.4f}")
    bn = next(l for l in s["links"] if l["name"] == "bottleneck")
    notes.append(f"util {bn['utilization']:.3f}, drops {bn['drops']}")
    if case == "overshoot":
        if mib is None:
            notes.append("timeouts " + " / ".join(str(f["timeouts"]) for f in flows))
        else:
            notes.append(f"timeouts {mib['TcpExtTCPTimeouts']} (kernel TcpExtTCPTimeouts)")
    if mib is not None and case != "overshoot":
        notes.append(f"RTOs {mib['TcpExtTCPTimeouts']} (kernel)")
    if mib is not None:
        notes.append(f"SACK recoveries {mib['TcpExtTCPSackRecovery']}, TLPs {mib['TcpExtTCPLossProbes']}")
    elif case != "overshoot":
        notes.append("timeouts " + " / ".join(str(f["timeouts"]) for f in flows))
    return f"| {case} | {source} | {seed} | {gp} | {rtx} | {'; '.join(notes)} |"


def mib_total(d):
    p = d / "mib.json"
    if not p.exists():
        return None
    ns = json.loads(p.read_text())["namespaces"]
    tot = {}
    for c in ns.values():
        for k, v in c.items():
            if k != "t_wall_s" and v is not None:
                tot[k] = tot.get(k, 0) + v
    return tot


lines = ["| case | source | seed | per-flow goodput (Mbps) | per-flow retransmits | notes |",
         "|---|---|---|---|---|---|"]
means = []
for case, tag, duration in CASES:
    for k in range(1, 6):
        d = OUT / f"{tag}-seed{k}"
        s = load(d)
        if s:
            lines.append(row(case, f"real Linux {KERNEL}", k, s, mib_total(d), duration))
    sims = [(k, row(case, "sim-before", "SEED", s, None, duration))
            for k in range(1, 6) if (s := load(OUT / "sim" / f"{tag}-seed{k}"))]
    if sims and len({r for _, r in sims}) == 1:
        ks = [k for k, _ in sims]
        lines.append(sims[0][1].replace("| SEED |", f"| {ks[0]}–{ks[-1]} (identical) |"))
    else:
        lines.extend(r.replace("| SEED |", f"| {k} |") for k, r in sims)
    if case in THESIS and tag != case:
        lines.append(f"| {case} | SIAD thesis Table 4.4 | — | {THESIS[case]} | — | 600 s, short / long RTT flow |")

# mean ± std per case/source
summ = ["| case | source | runs | per-flow goodput, mean ± std (Mbps) | per-flow retransmits, mean | Jain (mean) |",
        "|---|---|---|---|---|---|"]
for case, tag, duration in CASES:
    for src, dirs in ((f"real Linux {KERNEL} ({duration})", [OUT / f"{tag}-seed{k}" for k in range(1, 6)]),
                      (f"sim-before ({duration})", [OUT / "sim" / f"{tag}-seed{k}" for k in range(1, 6)])):
        runs = [s for s in (load(d) for d in dirs) if s]
        if not runs:
            continue
        n = len(runs[0]["flows"])
        gp = []
        for i in range(n):
            v = [r["flows"][i]["goodput_mbps"] for r in runs]
            sd = statistics.stdev(v) if len(v) > 1 else 0.0
            gp.append(f"{statistics.mean(v):.2f} ± {sd:.2f}")
        rtx = " / ".join(f"{statistics.mean([r['flows'][i]['retransmits'] for r in runs]):.0f}" for i in range(n))
        jain = f"{statistics.mean([r['jain_index'] for r in runs]):.4f}" if n > 1 else "—"
        summ.append(f"| {case} | {src} | {len(runs)} | {' / '.join(gp)} | {rtx} | {jain} |")
text = "\n".join(lines) + "\n\n" + "\n".join(summ) + "\n"
(OUT / "table.md").write_text(text)
print(text)
