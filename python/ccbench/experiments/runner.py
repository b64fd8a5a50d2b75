"""Running a sweep: every (grid point, seed) of an :class:`Experiment` through the campaign
runner (``ccbench.campaign``: cache, Dask, progress), written as

* ``results.csv`` / ``results.parquet`` — one row per run (grid point × seed), in grid order
  whatever the completion order;
* ``summary.csv`` — per grid point, every metric's mean over the successful seeds and its spread
  (``<metric>_std``, ``<metric>_min``, ``<metric>_max``; ``seeds`` counts them), joined with the
  paper's values and any model;
* ``comparison.md`` / ``comparison.json`` — the paper's value or claim beside ours, with a verdict;
* ``<name>.png`` — the experiment's figure;
* ``meta.json`` — scenario, grid, seeds, code version, run counts, failures and times.

Every file is written under a temporary name and renamed into place.
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional, Sequence, Union

from ccbench.campaign.tasks import Outcome, Task
from ccbench.experiments.base import Experiment
from ccbench.experiments.registry import get


def summarize(experiment: Experiment, results, quick: bool = False):
    """Per grid point, every metric over the successful seeds (:func:`aggregate`), joined with the
    reference values and passed through ``experiment.compare`` (:func:`finish_summary`)."""
    table, keys, metrics = aggregate(experiment, results, quick)
    return finish_summary(experiment, table, keys, bool(metrics))


def aggregate(experiment: Experiment, results, quick: bool = False):
    """Per grid point, every metric over the successful seeds: its mean (column ``<metric>``),
    sample standard deviation (``<metric>_std``, 0 for one seed), ``<metric>_min`` and
    ``<metric>_max``; ``seeds`` counts the successful seeds. Returns the table, the point's keys
    and the metrics."""
    import pandas as pd

    points = experiment.params(quick)
    keys = list(points[0]) if points else []
    ok = results[results["error"] == ""] if "error" in results else results
    skip = set(keys) | {"run", "seed", "error"}
    metrics = [c for c in results.columns if c not in skip]
    # Each column as floats once (non-numbers missing), each point's runs as a mask once: the
    # can-fail test summarizes hundreds of perturbed tables, so this is numpy, not a Series a cell.
    numbers = {c: pd.to_numeric(pd.Series(ok[c], dtype=object), errors="coerce").to_numpy(dtype=float)
               for c in metrics}
    rows = []
    for point in points:
        mask = pd.Series(True, index=ok.index)
        for key in keys:
            mask &= ok[key] == point[key]
        chosen = mask.to_numpy()
        row = dict(point)
        for column in metrics:
            stats = _spread_of(numbers[column][chosen])
            row[column] = stats["mean"]
            for stat in ("std", "min", "max"):
                row[f"{column}_{stat}"] = stats[stat]
        row["seeds"] = int(chosen.sum())
        rows.append(row)
    return pd.DataFrame(rows), keys, metrics


def finish_summary(experiment: Experiment, summary, keys: List[str], measured: bool = True):
    """The per-point table joined with the paper's reference values and passed through the
    experiment's ``compare`` (the can-fail test calls this on perturbed tables)."""
    import pandas as pd

    if experiment.reference is not None:
        reference = pd.DataFrame(experiment.reference)
        on = [c for c in reference.columns if c in keys]
        summary = summary.merge(reference, on=on, how="left")
    if experiment.compare is not None and measured:  # with every run failed there is nothing to compare
        summary = experiment.compare(summary)
    return summary


def _spread_of(values) -> dict:
    """Mean, sample standard deviation (0 for one value), min and max of a float array (NaN
    counts as missing); all NaN when none is left."""
    import numpy as np

    values = values[~np.isnan(values)]
    n = len(values)
    if n == 0:
        nan = float("nan")
        return {"mean": nan, "std": nan, "min": nan, "max": nan}
    return {"mean": float(values.mean()), "std": float(values.std(ddof=1)) if n > 1 else 0.0,
            "min": float(values.min()), "max": float(values.max())}


def tasks_for(exp: Experiment, quick: bool = False) -> List[Task]:
    """The experiment's runs as campaign tasks, in grid order."""
    base = dict(exp.base)
    return [Task(exp.metric, base, exp.overrides(point, quick), dict(point), seed, group=exp.name,
                 index=index, engine=str(point.get("engine", "sim")))
            for index, (point, seed) in enumerate(exp.runs(quick))]


def results_frame(tasks: Sequence[Task], outcomes: Sequence[Outcome]):
    """One row per run in grid order: ``run``, the grid keys, ``seed``, the metrics, ``error``."""
    import pandas as pd

    rows = [{"run": t.index, **t.point, "seed": t.seed, **(o.metrics or {}), "error": o.error or ""}
            for t, o in zip(tasks, outcomes)]
    return pd.DataFrame(rows)


def _code_version() -> dict:
    from ccbench.api import version

    info = {"core": version()}
    try:
        import subprocess

        repo = Path(__file__).resolve().parents[3]
        head = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty"],
                              capture_output=True, text=True, timeout=5)
        if head.returncode == 0:
            info["git"] = head.stdout.strip()
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return info


def meta(exp: Experiment, tasks: Sequence[Task], outcomes: Sequence[Outcome], quick: bool) -> dict:
    """What ``meta.json`` records: the scenario, grid and seeds, the code, run counts and times."""
    failures = [{"run": t.index, "point": t.point, "seed": t.seed, "error": o.error}
                for t, o in zip(tasks, outcomes) if o.error]
    return {
        "name": exp.name, "work": exp.work, "description": exp.description, "quick": quick,
        "base": dict(exp.base), "quick_overrides": dict(exp.quick_overrides) if quick else {},
        "points": exp.params(quick), "seeds": exp.run_seeds(quick), **_code_version(),
        "runs": len(tasks), "cached": sum(o.cached for o in outcomes),
        "failed": len(failures), "failures": failures,
        "run_seconds": round(sum(o.seconds for o in outcomes), 3),
        # What the outputs were computed from: a rerun with the same digest rewrites nothing.
        "runs_digest": hashlib.sha256("".join(t.key or "-" for t in tasks).encode()).hexdigest(),
    }


def write_outputs(exp: Experiment, results, out, quick: bool, info: Optional[dict] = None) -> None:
    """``results``, ``summary``, ``comparison``, the figure and ``meta.json`` (with the time these
    outputs took), written into a folder staged beside ``out`` and swapped in whole: a kill at
    any moment leaves the previous outputs or these, never a mix."""
    from ccbench.campaign import files
    from ccbench.outdir import check_experiment_dir

    start = time.perf_counter()
    check_experiment_dir(out, "out")
    with files.staged_folder(out) as out_dir:
        files.write_csv(out_dir / "results.csv", results)
        files.write_parquet(out_dir / "results.parquet", _parquet_safe(results))
        summary = summarize(exp, results, quick)
        files.write_csv(out_dir / "summary.csv", summary)
        # With every run failed the summary has no metric: no comparison, no figure to draw from it.
        succeeded = "error" not in results or bool((results["error"] == "").any())
        if exp.comparison is not None and not summary.empty and succeeded:
            from ccbench.experiments.base import comparison_markdown

            rows = comparison_rows(exp, summary, quick)
            files.write_text(out_dir / "comparison.md", comparison_markdown(exp.description or exp.name, rows))
            files.write_json(out_dir / "comparison.json", [dict(r) for r in rows])
        if exp.figure is not None and not summary.empty and succeeded:
            try:
                exp.figure(summary, out_dir)
            except Exception as exc:  # noqa: BLE001 - the numbers are written; report the plot
                print(f"warning: {exp.name}: figure failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        if info is not None:
            info["output_seconds"] = round(time.perf_counter() - start, 3)
            files.write_json(out_dir / "meta.json", info)


def comparison_rows(exp: Experiment, summary, quick: bool) -> list:
    """``comparison.json``'s rows of a summary: the experiment's checks, a quick run's settled
    (:func:`~ccbench.experiments.checks.settle_quick`), every row's verdict checked."""
    from ccbench.experiments.checks import check_rows, settle_quick

    rows = exp.comparison(summary)  # type: ignore[misc]
    if quick:
        rows = settle_quick(rows, _quick_lacks(exp))
    check_rows(exp.name, rows)
    return rows


def _quick_lacks(exp: Experiment) -> dict:
    """What ``exp``'s quick variant lacks of its full one (fewer seeds, shorter runs)."""
    from ccbench.experiments.checks import quick_lacks

    return quick_lacks(len(exp.run_seeds(True)), len(exp.run_seeds(False)),
                       exp.quick_overrides.get("duration"), exp.base.get("duration", "the scenario's"))


def _parquet_safe(results):
    """Columns Parquet cannot hold in one type (a metric that is a number in one run and text in
    another) are stored as text."""
    frame = results.copy()
    for column in frame.columns:
        if frame[column].dtype == object:
            kinds = {type(v) for v in frame[column] if v is not None and v == v}
            if len(kinds) > 1 or (kinds and not kinds <= {str}):
                frame[column] = frame[column].map(lambda v: v if isinstance(v, str) else repr(v))
    return frame


def report_failures(exp: Experiment, tasks: Sequence[Task], outcomes: Sequence[Outcome]) -> None:
    for task, outcome in zip(tasks, outcomes):
        if outcome.error:
            print(f"warning: {exp.name} run {task.index} ({task.point}, seed {task.seed}) failed: "
                  f"{outcome.error}", file=sys.stderr)


def _experiment(experiment) -> Experiment:
    """An :class:`Experiment`, or the registered one of that name."""
    from ccbench.errors import ArgumentError, ArgumentTypeError
    from ccbench.experiments.registry import experiments

    if isinstance(experiment, Experiment):
        return experiment
    if not isinstance(experiment, str):
        raise ArgumentTypeError(f"experiment must be an Experiment or a name, not {type(experiment).__name__}")
    if experiment not in experiments():
        raise ArgumentError(f"experiment: unknown experiment {experiment[:80]!r} "
                            f"(known: {', '.join(experiments())})")
    return get(experiment)


def run_experiment(experiment: Union[Experiment, str], *, quick: bool = False,
                   jobs: Optional[int] = None, out=None,
                   progress: Union[bool, None, Callable[[str], None]] = None,
                   scheduler: Optional[str] = None, cache=None, force: bool = False):
    """Run every (grid point, seed) of ``experiment`` (an :class:`Experiment` or a name).

    Runs go to ``jobs`` Dask worker processes (default: one per CPU; ``jobs=1`` runs
    in-process) or to the Dask cluster at ``scheduler``. ``cache`` (a folder) keeps each finished
    run and reuses it on the next call unless ``force``. ``progress`` is ``True`` (a bar in a
    terminal or notebook, lines otherwise), a callable receiving one line per run, or off.
    Returns a DataFrame with one row per run in grid order (columns: ``run``, the grid keys,
    ``seed``, the metrics, ``error`` — empty when the run succeeded). With ``out`` also writes
    the files listed in this module's docstring; failed runs are reported on stderr but the rest
    of the sweep is still run and written.
    """
    from ccbench.campaign.cache import Cache
    from ccbench.campaign.progress import Progress
    from ccbench.campaign.runner import check_jobs, check_progress, check_scheduler, run_tasks
    from ccbench.outdir import check_experiment_dir, check_out_dir

    exp = _experiment(experiment)
    jobs, scheduler = check_jobs(jobs), check_scheduler(scheduler)
    progress = check_progress(progress)
    # Output folders are checked before the first run, not found bad after the last one.
    out = check_experiment_dir(out, "out") if out is not None else None
    cache = check_out_dir(cache, "cache") if cache is not None else None
    reason = exp.unavailable() if exp.unavailable else None
    if reason:
        from ccbench.errors import UsageError

        raise UsageError(f"{exp.name}: {reason}")
    tasks = tasks_for(exp, quick)
    bar = Progress(len(tasks), exp.name, progress) if progress else None
    try:
        outcomes = run_tasks(tasks, jobs=jobs, scheduler=scheduler, force=force, progress=bar,
                             cache=Cache(cache) if cache is not None else None)
    finally:
        if bar is not None:
            bar.close()
    report_failures(exp, tasks, outcomes)
    results = results_frame(tasks, outcomes)
    if out is not None:
        write_outputs(exp, results, out, quick, meta(exp, tasks, outcomes, quick))
    return results
