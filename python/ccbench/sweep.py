"""``ccbench.sweep``: a grid of overrides × seeds on one base scenario, as a DataFrame — for
notebooks. The runs go through the campaign runner (Dask, the run cache, the progress bar), so a
re-executed cell computes only what changed.

>>> import ccbench
>>> df = ccbench.sweep("examples/dumbbell-cubic.toml",
...                    {"bottleneck.buffer": ["0.5bdp", "1bdp"], "flows[0].cc": ["cubic", "newreno"]},
...                    seeds=[1, 2], metric="links.bottleneck.utilization")
"""

from __future__ import annotations

import itertools
import os
from numbers import Integral
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from ccbench.errors import ArgumentError, ArgumentTypeError

Metric = Union[str, Sequence[str], Callable[[Any, dict], Mapping[str, Any]]]

#: Most runs one sweep may ask for (grid points × seeds): a million runs is days of CPU, and
#: more is a mistake (a grid of 1000 two-valued keys would otherwise be expanded until the
#: memory runs out).
MAX_RUNS = 1_000_000

#: Seeds are the core's unsigned 64-bit integers.
SEED_LIMIT = 2**64


class Select:
    """A metric that reads entries of the run's summary by path: ``"jain_index"``,
    ``"links.bottleneck.utilization"``, ``"flows.lbe.owd_ms.p99"`` (in ``links`` and ``flows``
    the part after the list names the link or flow). The column is the path."""

    def __init__(self, paths: Sequence[str]):
        self.paths = tuple(paths)

    def __repr__(self) -> str:  # part of the cache key: no addresses in it
        return f"Select({', '.join(self.paths)})"

    def __call__(self, result, point) -> dict:
        return {path: _lookup(result.summary, path) for path in self.paths}


def _lookup(summary: Mapping[str, Any], path: str) -> Any:
    node: Any = summary
    for part in path.split("."):
        if isinstance(node, list):
            named = {str(e.get("name")): e for e in node if isinstance(e, Mapping)}
            if part not in named:
                raise KeyError(f"metric {path!r}: no {part!r} (have: {', '.join(named)})")
            node = named[part]
        elif isinstance(node, Mapping):
            if part not in node:
                raise KeyError(f"metric {path!r}: no {part!r} (have: {', '.join(map(str, node))})")
            node = node[part]
        else:
            what = "null in this run" if node is None else f"a plain value ({node!r})"
            raise KeyError(f"metric {path!r}: nothing below {part!r}: the entry above is {what}")
    return node


def _metric(metric: Metric):
    if isinstance(metric, str):
        return Select([metric])
    if callable(metric):
        return metric
    if isinstance(metric, Sequence) and metric and all(isinstance(m, str) for m in metric):
        return Select(list(metric))
    raise ArgumentTypeError("sweep: metric must be a summary path ('links.bottleneck.utilization'), "
                            "a list of them, or a function (result, point) -> dict, not "
                            f"{type(metric).__name__}")


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _bounded(values: Iterable[Any], what: str) -> list:
    """``list(values)``, refusing an endless or enormous iterable instead of filling memory."""
    items = list(itertools.islice(values, MAX_RUNS + 1))
    if len(items) > MAX_RUNS:
        raise ArgumentError(f"sweep: {what} has more than {MAX_RUNS} values")
    return items


def _values(key: str, values: Any) -> list:
    """One grid entry's values: a list (or tuple, range, …) of TOML-writable values."""
    from ccbench.experiments.base import toml_literal

    where = f"grid[{key!r}]"
    if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
        raise ArgumentTypeError(f"sweep: {where} must be a list of values, not {type(values).__name__} "
                                f"({_show(values)}); for one value write [{_show(values)}]")
    items = _bounded(values, where)
    if not items:
        raise ArgumentError(f"sweep: {where} is empty; give at least one value")
    for i, value in enumerate(items):
        try:
            toml_literal(value)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ArgumentError(f"sweep: {where}[{i}] = {_show(value)}: {exc}") from None
    return items


def _grid(grid: Any) -> Dict[str, list]:
    """``grid`` checked: override keys (text) to non-empty lists of values."""
    if not isinstance(grid, Mapping):
        raise ArgumentTypeError(f"sweep: grid must map override keys to lists of values, "
                                f"not {type(grid).__name__}")
    checked = {}
    for key, values in grid.items():
        if not isinstance(key, str):
            raise ArgumentTypeError(f"sweep: grid key {_show(key)} must be an override key (text) such "
                                    f"as 'bottleneck.rate', not {type(key).__name__}")
        if not key.strip() or "=" in key or "\0" in key:
            raise ArgumentError(f"sweep: grid key {_show(key)} is no override key such as 'bottleneck.rate'")
        checked[key] = _values(key, values)
    return checked


def _seed(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ArgumentTypeError(f"sweep: {where} must be an int, not {type(value).__name__} ({_show(value)})")
    seed = int(value)
    if not 0 <= seed < SEED_LIMIT:
        raise ArgumentError(f"sweep: {where} must be between 0 and 2**64-1, got {seed}")
    return seed


def _seeds(seeds: Any) -> List[int]:
    """``seeds`` as a list: a count ``n`` means seeds 1 … n; else a list of ints."""
    if isinstance(seeds, Integral) and not isinstance(seeds, bool):
        count = int(seeds)
        if not 1 <= count <= MAX_RUNS:
            raise ArgumentError(f"sweep: seeds, as a count, must be between 1 and {MAX_RUNS}, got {count}")
        return list(range(1, count + 1))
    if isinstance(seeds, (str, bytes, Mapping)) or not isinstance(seeds, Iterable):
        raise ArgumentTypeError(f"sweep: seeds must be a count (3: seeds 1, 2, 3) or a list of ints, "
                                f"not {type(seeds).__name__} ({_show(seeds)})")
    chosen = [_seed(s, f"seeds[{i}]") for i, s in enumerate(_bounded(seeds, "seeds"))]
    if not chosen:
        raise ArgumentError("sweep: seeds is empty")
    return chosen


def _cache(cache: Any, default: Callable[[], Any]):
    """The cache folder ``cache`` names (``True``: the default one), or ``None`` for none."""
    from ccbench.outdir import check_out_dir

    if cache is None or cache is False:
        return None
    if cache is True:
        cache = default()
    if not isinstance(cache, (str, os.PathLike)):
        raise ArgumentTypeError(f"sweep: cache must be True, False or a folder path, not {type(cache).__name__}")
    return check_out_dir(cache, "sweep: cache")


def _runs(points: int, seeds: int) -> None:
    if points * seeds > MAX_RUNS:
        raise ArgumentError(f"sweep: grid × seeds is {points} × {seeds} runs, more than {MAX_RUNS}")


def sweep(base, grid: Mapping[str, Sequence[Any]], seeds: Iterable[int] = (1,),
          metric: Metric = "jain_index", *, jobs: Optional[int] = None, scheduler: Optional[str] = None,
          cache: Union[bool, str, Any] = True, force: bool = False, progress: bool = True):
    """Run ``base`` (a scenario file, TOML text or dict) at every point of ``grid`` (override key
    → values; every combination, the first key varying slowest) and every seed; return a
    DataFrame with one row per run: the grid keys, ``seed``, the metric's columns and ``error``
    (empty when the run succeeded).

    ``metric`` is a summary path or a list of them (see :class:`Select`), or a function
    ``(Result, point) -> dict`` (a notebook's own function works, also on a remote cluster).
    ``seeds`` is a list of ints, or a count ``n`` for seeds 1 … n.
    ``jobs``, ``scheduler``: as ``ccbench reproduce`` (default: an embedded Dask cluster with one
    worker per core). ``cache``: ``True`` for ``$CCBENCH_CACHE`` or ``~/.cache/ccbench``, a
    folder, or ``False``; ``force`` recomputes cached runs. Raises :class:`ccbench.ScenarioError`
    when ``base`` does not validate, ``TypeError`` or ``ValueError`` naming the argument when
    one is wrong (an empty grid entry, one string where a list belongs, ``jobs=0``), and
    ``RuntimeError`` when every run failed.
    """
    from ccbench.api import validate
    from ccbench.campaign.cache import Cache, default_cache_dir
    from ccbench.campaign.progress import Progress
    from ccbench.campaign.runner import check_jobs, check_progress, check_scheduler, run_tasks
    from ccbench.campaign.runner import refuse_in_a_starting_child as refuse_in_a_worker
    from ccbench.campaign.tasks import Task
    from ccbench.experiments.base import expand_grid, override
    from ccbench.experiments.runner import results_frame

    refuse_in_a_worker("sweep")  # this script re-run by a starting worker process: one line
    # Every argument is checked before any work, each error naming it.
    grid, seeds, score = _grid(grid), _seeds(seeds), _metric(metric)
    jobs, scheduler = check_jobs(jobs, "sweep: jobs"), check_scheduler(scheduler, "sweep: scheduler")
    progress = check_progress(progress, "sweep: progress")
    store_dir = _cache(cache, default_cache_dir)
    points_count = 1
    for values in grid.values():
        points_count *= len(values)
        _runs(points_count, len(seeds))
    validate(base)  # a broken base fails here, once, naming its file
    # The runner reads `base` once here and ships its text, relative paths resolved beside the
    # file: a worker may not see the file, and its folder is not this one.
    points = expand_grid(grid)
    tasks = [Task(score, base, [override(k, v) for k, v in point.items()], dict(point), seed,
                  group="sweep", index=i * len(seeds) + j)
             for i, point in enumerate(points) for j, seed in enumerate(seeds)]
    store = Cache(store_dir) if store_dir is not None else None
    bar = Progress(len(tasks), "sweep", progress) if progress else None
    try:
        outcomes = run_tasks(tasks, jobs=jobs, scheduler=scheduler, cache=store, force=force, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    frame = results_frame(tasks, outcomes).drop(columns=["run"])
    if outcomes and all(o.error for o in outcomes):
        raise RuntimeError(f"sweep: every run failed; the first: {outcomes[0].error}")
    return frame
