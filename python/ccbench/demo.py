"""``ccbench demo``: every example scenario, both seed experiments (quick), and the HTML report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from ccbench.api import ScenarioError, run


def examples_dir() -> Path:
    """``examples/`` of the source tree (the package is installed in development mode), else of
    the current directory."""
    repo = Path(__file__).resolve().parents[2] / "examples"
    return repo if repo.is_dir() else Path("examples")


def demo(out="out", jobs: Optional[int] = None) -> int:
    """Returns the number of failed steps (0 = all good); the report is written regardless."""
    from ccbench.experiments import experiments, run_experiment
    from ccbench.plot import plot_run
    from ccbench.report import write_report

    root = Path(out)
    failures = 0
    for scenario in sorted(examples_dir().glob("*.toml")):
        run_dir = root / "runs" / scenario.stem
        try:
            result = run(scenario, out=run_dir)
            plot_run(result, run_dir)
            print(f"{scenario.name}: {result!r}")
        except ScenarioError as exc:
            failures += 1
            print(f"warning: {exc}", file=sys.stderr)
    for name, exp in experiments().items():
        reason = exp.unavailable() if exp.unavailable else None
        if reason:
            print(f"{name}: skipped: {reason}")
            continue
        exp_dir = root / "experiments" / name
        results = run_experiment(name, quick=True, jobs=jobs, out=exp_dir, progress=print)
        failures += int((results["error"] != "").sum())
        print(f"{name}: wrote {exp_dir}")
    print(f"report: {write_report(root)}")
    return failures
