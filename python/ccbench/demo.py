"""``ccbench demo``: every example scenario, then ``reproduce all --quick`` into the same folder,
whose report covers both."""

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
    from ccbench.campaign.reproduce import reproduce
    from ccbench.plot import plot_run

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
    campaign = reproduce("all", quick=True, jobs=jobs, out=root)
    for name, reason in campaign.skipped.items():
        print(f"{name}: skipped: {reason}")
    print(f"report: {campaign.report}")
    return failures + campaign.failures
