"""Running a sweep: every (grid point, seed) of an :class:`Experiment` in worker processes,
written as

* ``results.csv`` — one row per run (grid point × seed), in grid order whatever the completion order;
* ``summary.csv`` — per grid point, every metric's mean over the successful seeds and its spread
  (``<metric>_std``, ``<metric>_min``, ``<metric>_max``; ``seeds`` counts them), joined with the
  paper's values and any model;
* ``<name>.png`` — the experiment's figure.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union

from ccbench.experiments.base import Experiment
from ccbench.experiments.registry import get

Outcome = Tuple[Optional[dict], Optional[str]]


def _run_one(metric, base: dict, overrides: List[str], point: dict, seed: int) -> Outcome:
    """Worker: run one scenario and extract its metrics. Errors come back as text, so one bad
    point never brings down the pool (and unpicklable exceptions are not an issue). A point
    whose ``engine`` is ``"emu"`` runs on real Linux TCP (``ccbench emu``, root) instead of
    the simulator, its run folder kept only while the metric reads it."""
    from ccbench.api import run

    try:
        if point.get("engine", "sim") == "emu":
            import tempfile

            from ccbench.emu import run as emulate

            with tempfile.TemporaryDirectory(prefix="ccbench-emu-run-") as tmp:
                return dict(metric(emulate(base, out=Path(tmp), seed=seed, overrides=overrides), point)), None
        return dict(metric(run(base, seed=seed, overrides=overrides), point)), None
    except Exception as exc:  # noqa: BLE001 - reported per run by the caller
        return None, f"{type(exc).__name__}: {exc}"


def spread(values) -> dict:
    """Mean, sample standard deviation (0 for one value), min and max of ``values``; NaN when
    there are none. Non-numbers count as missing."""
    import pandas as pd

    values = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").dropna()
    n = len(values)
    if n == 0:
        nan = float("nan")
        return {"mean": nan, "std": nan, "min": nan, "max": nan}
    return {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if n > 1 else 0.0,
            "min": float(values.min()), "max": float(values.max())}


def summarize(experiment: Experiment, results, quick: bool = False):
    """Per grid point, every metric over the successful seeds: its mean (column ``<metric>``),
    sample standard deviation (``<metric>_std``, 0 for one seed), ``<metric>_min`` and
    ``<metric>_max``; ``seeds`` counts the successful seeds. Joined with the reference values
    and passed through ``experiment.compare``."""
    import pandas as pd

    points = experiment.params(quick)
    keys = list(points[0]) if points else []
    ok = results[results["error"] == ""] if "error" in results else results
    skip = set(keys) | {"run", "seed", "error"}
    metrics = [c for c in results.columns if c not in skip]
    rows = []
    for point in points:
        mask = pd.Series(True, index=ok.index)
        for key in keys:
            mask &= ok[key] == point[key]
        sel = ok[mask]
        row = dict(point)
        for column in metrics:
            stats = spread(sel[column])
            row[column] = stats["mean"]
            for stat in ("std", "min", "max"):
                row[f"{column}_{stat}"] = stats[stat]
        row["seeds"] = len(sel)
        rows.append(row)
    summary = pd.DataFrame(rows)
    if experiment.reference is not None:
        reference = pd.DataFrame(experiment.reference)
        on = [c for c in reference.columns if c in keys]
        summary = summary.merge(reference, on=on, how="left")
    if experiment.compare is not None:
        summary = experiment.compare(summary)
    return summary


def _execute(tasks: list, jobs: int, done: Callable[[int, Outcome], None]) -> None:
    if jobs == 1 or len(tasks) <= 1:
        for index, task in enumerate(tasks):
            done(index, _run_one(*task))
        return
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        futures = {pool.submit(_run_one, *task): index for index, task in enumerate(tasks)}
        for future in as_completed(futures):
            try:
                outcome = future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker killed by the OS
                outcome = (None, f"{type(exc).__name__}: {exc}")
            done(futures[future], outcome)


def _write(exp: Experiment, results, out, quick: bool) -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    results.to_csv(out_dir / "results.csv", index=False)
    summary = summarize(exp, results, quick)
    summary.to_csv(out_dir / "summary.csv", index=False)
    if exp.comparison is not None and not summary.empty:
        from ccbench.experiments.base import comparison_markdown

        text = comparison_markdown(exp.description or exp.name, exp.comparison(summary))
        (out_dir / "comparison.md").write_text(text)
    if exp.figure is not None and not summary.empty:
        try:
            exp.figure(summary, out_dir)
        except Exception as exc:  # noqa: BLE001 - the numbers are written; report the plot
            print(f"warning: {exp.name}: figure failed: {type(exc).__name__}: {exc}", file=sys.stderr)


def run_experiment(experiment: Union[Experiment, str], *, quick: bool = False,
                   jobs: Optional[int] = None, out=None,
                   progress: Optional[Callable[[str], None]] = None):
    """Run every (grid point, seed) of ``experiment`` (an :class:`Experiment` or a name).

    Runs go to ``jobs`` worker processes (default: one per CPU; ``jobs=1`` runs in-process).
    Returns a DataFrame with one row per run in grid order (columns: ``run``, the grid keys,
    ``seed``, the metrics, ``error`` — empty when the run succeeded). With ``out`` also writes
    ``results.csv``, ``summary.csv`` and the figure there; failed runs are reported on stderr
    but the rest of the sweep is still run and written.
    """
    import pandas as pd

    exp = experiment if isinstance(experiment, Experiment) else get(experiment)
    reason = exp.unavailable() if exp.unavailable else None
    if reason:
        from ccbench.errors import UsageError

        raise UsageError(f"{exp.name}: {reason}")
    runs = exp.runs(quick)
    outcomes: Dict[int, Outcome] = {}

    def done(index: int, outcome: Outcome) -> None:
        outcomes[index] = outcome
        if progress is not None:
            point, seed = runs[index]
            what = ", ".join(f"{k}={v}" for k, v in point.items())
            status = "failed" if outcome[1] else ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in outcome[0].items())
            progress(f"[{len(outcomes)}/{len(runs)}] {exp.name} {what} seed={seed}: {status}")

    base = dict(exp.base)
    tasks = [(exp.metric, base, exp.overrides(point, quick), point, seed) for point, seed in runs]
    if any(point.get("engine") == "emu" for point, _ in runs):
        jobs = 1  # real-time runs on the real stack must not share the CPUs with anything
    _execute(tasks, max(1, jobs or os.cpu_count() or 1), done)

    rows = []
    for index, (point, seed) in enumerate(runs):
        metrics, error = outcomes[index]
        if error:
            print(f"warning: {exp.name} run {index} ({point}, seed {seed}) failed: {error}",
                  file=sys.stderr)
        rows.append({"run": index, **point, "seed": seed, **(metrics or {}), "error": error or ""})
    results = pd.DataFrame(rows)
    if out is not None:
        _write(exp, results, out, quick)
    return results
