"""Run `ccbench emu` and, while it runs, poll the TCP MIB counters (/proc/net/netstat and
/proc/net/snmp) of every namespace the run creates, every 0.25 s. The emulator reports
`timeouts` as 0 (no RTO count in TCP_INFO); the per-namespace counter TcpExtTCPTimeouts is
the kernel's own count of retransmission timeouts. Writes <out>/mib.json: the last sample of
each namespace. Counters start at 0 in a fresh namespace, so the values cover the whole run.

usage: python emu_with_mib.py SCENARIO --out DIR [--set ...] [--seed N]
"""
import json, os, subprocess, sys, time
from pathlib import Path

KEYS = ["TcpExtTCPTimeouts", "TcpExtTCPLossProbes", "TcpExtTCPLossProbeRecovery",
        "TcpExtTCPSackRecovery", "TcpExtTCPSpuriousRTOs", "TcpExtTCPLostRetransmit",
        "TcpExtTCPFastRetrans", "TcpExtTCPSlowStartRetrans", "TcpExtTCPDSACKRecv",
        "TcpExtTCPSACKReorder", "TcpRetransSegs", "TcpOutSegs", "TcpExtTCPLossUndo",
        "TcpExtTCPSackRecoveryFail", "TcpExtTCPRenoRecovery"]

def counters(ns):
    try:
        text = subprocess.run(["nsenter", f"--net=/var/run/netns/{ns}", "cat",
                               "/proc/net/netstat", "/proc/net/snmp"],
                              capture_output=True, text=True, timeout=2).stdout
    except subprocess.TimeoutExpired:
        return None
    lines = text.splitlines()
    out = {}
    for head, vals in zip(lines[0::2], lines[1::2]):
        h, v = head.split(), vals.split()
        if not h or h[0] != v[0]:
            return None
        prefix = h[0].rstrip(":")
        for k, x in zip(h[1:], v[1:]):
            out[prefix + k] = int(x)
    return {k: out.get(k) for k in KEYS} if out else None

args = sys.argv[1:]
out = Path(args[args.index("--out") + 1])
cmd = [sys.executable, "-m", "ccbench", "emu", *args]
t0 = time.time()
proc = subprocess.Popen(cmd)
last = {}
emu_pid = None
while proc.poll() is None:
    if emu_pid is None:
        kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        emu_pid = kids[0] if kids else None
    if emu_pid:
        try:
            names = [n for n in os.listdir("/var/run/netns") if n.startswith(f"ccb-{emu_pid}-")]
        except FileNotFoundError:
            names = []
        for ns in names:
            c = counters(ns)
            if c is not None:
                last[ns] = {"t_wall_s": round(time.time() - t0, 2), **c}
    time.sleep(0.25)
rc = proc.returncode
out.mkdir(parents=True, exist_ok=True)
(out / "mib.json").write_text(json.dumps({"command": cmd, "returncode": rc,
                                          "wall_s": round(time.time() - t0, 1),
                                          "namespaces": last}, indent=1))
print(f"mib: {json.dumps({ns: {k: v for k, v in c.items() if v} for ns, c in last.items()})}")
sys.exit(rc)
