"""Run folders are whole or absent: `ccbench run --out` into a previous run's folder, killed with
SIGKILL at random moments, leaves a folder whose files all belong to one run — the previous one
or the new one — never the new series beside the old summary (issue 38: the run is written into
a folder staged beside the target and swapped in with one rename)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ('duration = "20s"\n[bottleneck]\nrate = "20Mbps"\nrtt = "40ms"\n[[flows]]\ncca = "cubic"\ncount = 2\n'
            '[output]\nbin = "10ms"\n')
#: Kills and how long after the start each may land: the run takes about a second here, so the
#: kills spread over starting up, simulating, writing and swapping in.
KILLS = 50


def _run(scenario: Path, out: Path, seed: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    return subprocess.Popen([sys.executable, "-m", "ccbench", "run", str(scenario), "--out", str(out),
                             "--seed", str(seed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


def _fingerprint(folder: Path) -> dict:
    """Each series file's digest and the seed its summary names."""
    files = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.glob("*.parquet")}
    summary = json.loads((folder / "summary.json").read_text())
    return {"series": files, "seed": summary["scenario"]["seed"]}


def test_a_run_killed_at_any_moment_leaves_one_whole_run(tmp_path):
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    runs = {}
    for seed in (1, 2):  # what each run leaves when it finishes (the simulator is deterministic)
        folder = tmp_path / f"ref{seed}"
        started = time.monotonic()
        assert _run(scenario, folder, seed).wait(timeout=120) == 0
        runs[seed] = (_fingerprint(folder), time.monotonic() - started)
    assert runs[1][0]["series"] != runs[2][0]["series"], "the two runs must be told apart"
    out = tmp_path / "out"
    assert _run(scenario, out, 1).wait(timeout=120) == 0
    rng = random.Random(38)
    longest = max(t for _, t in runs.values()) * 1.2
    seen = {1: 0, 2: 0}
    for i in range(KILLS):
        seed = 1 + (i % 2)
        proc = _run(scenario, out, seed)
        time.sleep(rng.uniform(0, longest))
        proc.kill()
        proc.wait(timeout=30)
        found = _fingerprint(out)
        matches = [s for s, (fp, _) in runs.items() if fp == found]
        assert matches, f"kill {i}: the folder mixes runs: {found}"
        seen[matches[0]] += 1
        extra = {p.name for p in out.iterdir()} - {"summary.json", "flows.parquet", "links.parquet",
                                                   "sojourn.parquet", "owd.parquet"}
        assert not extra, f"kill {i}: {extra}"
    # Some kills landed after the swap (the new run is there) and some before it.
    assert seen[1] and seen[2], seen
