"""Parameter sweeps ("experiments") reproducing figures and tables of the reference papers.

An :class:`Experiment` is a base scenario dict plus a grid of parameters; :func:`run_experiment`
expands grid × seeds into scenarios, runs them in local worker processes, and writes

* ``results.csv`` — one row per run (grid point × seed), in grid order whatever the completion order;
* ``summary.csv`` — the mean over seeds per grid point, joined with the paper's values and any model;
* ``<name>.png`` — the experiment's figure.

New experiments live in their own module in this package and use the :func:`register` decorator
(or call it directly), then are importable by name from :data:`EXPERIMENTS`.
"""

from __future__ import annotations

import copy
import itertools
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import pandas as pd

#: Registry of known experiments by name.
EXPERIMENTS: Dict[str, "Experiment"] = {}


def set_path(scenario: dict, dotted: str, value: Any) -> None:
    """Set ``scenario["a"]["b"][0]["c"] = value`` from ``"a.b.0.c"``, creating tables as needed."""
    keys = dotted.split(".")
    node: Any = scenario
    for key in keys[:-1]:
        if isinstance(node, list):
            node = node[int(key)]
        else:
            node = node.setdefault(key, {})
    last = keys[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def expand_grid(grid: Mapping[str, Sequence[Any]]) -> List[dict]:
    """All combinations of a grid, the first key varying slowest (so results group naturally)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


def _apply_dotted(scenario: dict, point: Mapping[str, Any]) -> dict:
    for key, value in point.items():
        set_path(scenario, key, value)
    return scenario


@dataclass
class Experiment:
    """One sweep. Only ``name``, ``base``, ``grid`` and ``metric`` are required.

    ``apply(scenario, point)`` turns a grid point into a scenario (it gets a deep copy of ``base``,
    already adjusted by ``quick_overrides`` in quick mode); the default treats every point key as a
    dotted scenario path. ``metric(result, point)`` returns the dict of numbers recorded for a run
    (it runs in the worker process, so it must be a module-level function). ``reference`` holds
    the paper's values keyed by grid columns and is joined into the summary; ``compare(summary)``
    may add derived columns (model values, differences); ``figure(summary, out_dir)`` draws the
    PNG and returns its path.
    """

    name: str
    base: dict
    grid: Mapping[str, Sequence[Any]]
    metric: Callable[[Any, dict], dict]
    description: str = ""
    quick_grid: Optional[Mapping[str, Sequence[Any]]] = None
    seeds: Sequence[int] = (1,)
    quick_seeds: Optional[Sequence[int]] = None
    quick_overrides: Mapping[str, Any] = field(default_factory=dict)
    apply: Callable[[dict, dict], dict] = _apply_dotted
    reference: Optional[pd.DataFrame] = None
    compare: Optional[Callable[[pd.DataFrame], pd.DataFrame]] = None
    figure: Optional[Callable[[pd.DataFrame, Path], Path]] = None

    def params(self, quick: bool = False) -> List[dict]:
        grid = self.quick_grid if quick and self.quick_grid is not None else self.grid
        return expand_grid(grid)

    def run_seeds(self, quick: bool = False) -> List[int]:
        return list(self.quick_seeds if quick and self.quick_seeds is not None else self.seeds)

    def scenario(self, point: Mapping[str, Any], quick: bool = False) -> dict:
        scenario = copy.deepcopy(self.base)
        if quick:
            _apply_dotted(scenario, self.quick_overrides)
        return self.apply(scenario, dict(point))

    def runs(self, quick: bool = False) -> List[Tuple[dict, int]]:
        """The (point, seed) pairs of a sweep in their fixed order."""
        return [(point, seed) for point in self.params(quick) for seed in self.run_seeds(quick)]


def register(experiment: Experiment) -> Experiment:
    """Add an experiment to :data:`EXPERIMENTS` (usable as ``register(Experiment(...))``)."""
    if experiment.name in EXPERIMENTS:
        raise ValueError(f"experiment {experiment.name!r} is registered twice")
    EXPERIMENTS[experiment.name] = experiment
    return experiment


def get(name: str) -> Experiment:
    try:
        return EXPERIMENTS[name]
    except KeyError:
        known = ", ".join(sorted(EXPERIMENTS)) or "none"
        raise KeyError(f"unknown experiment {name!r} (known: {known})") from None


def _run_one(metric, scenario: dict, point: dict, seed: int) -> Tuple[Optional[dict], Optional[str]]:
    """Worker: run one scenario and extract its metrics. Errors come back as text, so one bad
    point never brings down the pool (and unpicklable exceptions are not an issue)."""
    from ccbench.api import run

    try:
        return dict(metric(run(scenario, seed=seed), point)), None
    except Exception as exc:  # noqa: BLE001 - reported per run by the caller
        return None, f"{type(exc).__name__}: {exc}"


def summarize(experiment: Experiment, results: pd.DataFrame, quick: bool = False) -> pd.DataFrame:
    """Mean of every metric over the successful seeds of each grid point, joined with the
    reference values and passed through ``experiment.compare``."""
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
            values = pd.to_numeric(sel[column], errors="coerce")
            row[column] = values.mean() if len(values) else float("nan")
        row["seeds"] = len(sel)
        rows.append(row)
    summary = pd.DataFrame(rows)
    if experiment.reference is not None:
        on = [c for c in experiment.reference.columns if c in keys]
        summary = summary.merge(experiment.reference, on=on, how="left")
    if experiment.compare is not None:
        summary = experiment.compare(summary)
    return summary


def run_experiment(experiment, *, quick: bool = False, jobs: Optional[int] = None,
                   out=None, progress: Optional[Callable[[str], None]] = None) -> pd.DataFrame:
    """Run every (grid point, seed) of ``experiment`` (an :class:`Experiment` or a name).

    Runs go to ``jobs`` worker processes (default: one per CPU; ``jobs=1`` runs in-process).
    Returns one row per run in grid order (columns: ``run``, the grid keys, ``seed``, the metrics,
    ``error`` — empty when the run succeeded). With ``out`` also writes ``results.csv``,
    ``summary.csv`` and the figure there; failed runs are reported on stderr but the rest of the
    sweep is still run and written.
    """
    exp = experiment if isinstance(experiment, Experiment) else get(experiment)
    runs = exp.runs(quick)
    jobs = max(1, jobs or os.cpu_count() or 1)
    outcomes: Dict[int, Tuple[Optional[dict], Optional[str]]] = {}

    def done(index: int, outcome) -> None:
        outcomes[index] = outcome
        if progress is not None:
            point, seed = runs[index]
            what = ", ".join(f"{k}={v}" for k, v in point.items())
            status = "failed" if outcome[1] else ", ".join(
                f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in outcome[0].items())
            progress(f"[{len(outcomes)}/{len(runs)}] {exp.name} {what} seed={seed}: {status}")

    tasks = [(exp.metric, exp.scenario(point, quick), point, seed) for point, seed in runs]
    if jobs == 1 or len(tasks) <= 1:
        for index, task in enumerate(tasks):
            done(index, _run_one(*task))
    else:
        with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
            futures = {pool.submit(_run_one, *task): index for index, task in enumerate(tasks)}
            for future in as_completed(futures):
                try:
                    outcome = future.result()
                except Exception as exc:  # noqa: BLE001 - e.g. a worker killed by the OS
                    outcome = (None, f"{type(exc).__name__}: {exc}")
                done(futures[future], outcome)

    rows = []
    for index, (point, seed) in enumerate(runs):
        metrics, error = outcomes[index]
        if error:
            print(f"warning: {exp.name} run {index} ({point}, seed {seed}) failed: {error}",
                  file=sys.stderr)
        rows.append({"run": index, **point, "seed": seed, **(metrics or {}), "error": error or ""})
    results = pd.DataFrame(rows)

    if out is not None:
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        results.to_csv(out_dir / "results.csv", index=False)
        summary = summarize(exp, results, quick)
        summary.to_csv(out_dir / "summary.csv", index=False)
        if exp.figure is not None and not summary.empty:
            try:
                exp.figure(summary, out_dir)
            except Exception as exc:  # noqa: BLE001 - the numbers are written; report the plot
                print(f"warning: {exp.name}: figure failed: {type(exc).__name__}: {exc}",
                      file=sys.stderr)
    return results


# Built-in experiments register themselves on import.
from ccbench.experiments import abe, rledbat  # noqa: E402,F401
