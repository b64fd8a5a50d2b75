"""``ccbench.sweep``: a grid of overrides × seeds on one base scenario, as a DataFrame — for
notebooks. The runs go through the campaign runner (Dask, the run cache, the progress bar), so a
re-executed cell computes only what changed.

>>> import ccbench
>>> df = ccbench.sweep("examples/dumbbell-cubic.toml",
...                    {"bottleneck.buffer": ["0.5bdp", "1bdp"], "flows[0].cc": ["cubic", "newreno"]},
...                    seeds=[1, 2], metric="links.bottleneck.utilization")
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

Metric = Union[str, Sequence[str], Callable[[Any, dict], Mapping[str, Any]]]


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
    raise TypeError("metric must be a summary path ('links.bottleneck.utilization'), a list of "
                    "them, or a function (result, point) -> dict")


def sweep(base, grid: Mapping[str, Sequence[Any]], seeds: Iterable[int] = (1,),
          metric: Metric = "jain_index", *, jobs: Optional[int] = None, scheduler: Optional[str] = None,
          cache: Union[bool, str, Any] = True, force: bool = False, progress: bool = True):
    """Run ``base`` (a scenario file, TOML text or dict) at every point of ``grid`` (override key
    → values; every combination, the first key varying slowest) and every seed; return a
    DataFrame with one row per run: the grid keys, ``seed``, the metric's columns and ``error``
    (empty when the run succeeded).

    ``metric`` is a summary path or a list of them (see :class:`Select`), or a function
    ``(Result, point) -> dict`` (a notebook's own function works, also on a remote cluster).
    ``jobs``, ``scheduler``: as ``ccbench reproduce`` (default: an embedded Dask cluster with one
    worker per core). ``cache``: ``True`` for ``$CCBENCH_CACHE`` or ``~/.cache/ccbench``, a
    folder, or ``False``; ``force`` recomputes cached runs. Raises :class:`ccbench.ScenarioError`
    when ``base`` does not validate, and ``RuntimeError`` when every run failed.
    """
    from ccbench.api import _read, validate
    from ccbench.campaign.cache import Cache, default_cache_dir
    from ccbench.campaign.progress import Progress
    from ccbench.campaign.runner import run_tasks
    from ccbench.campaign.tasks import Task
    from ccbench.experiments.base import expand_grid, override
    from ccbench.experiments.runner import results_frame

    validate(base)  # a broken base fails here, once, naming its file
    _, payload, _ = _read(base)  # workers get the text: a remote one may not see the file
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("sweep: seeds is empty")
    if not isinstance(grid, Mapping):
        raise TypeError("sweep: grid must map override keys to lists of values")
    score = _metric(metric)
    points = expand_grid({k: list(v) for k, v in grid.items()})
    tasks = [Task(score, payload, [override(k, v) for k, v in point.items()], dict(point), seed,
                  group="sweep", index=i * len(seeds) + j)
             for i, point in enumerate(points) for j, seed in enumerate(seeds)]
    store = None
    if cache is True:
        store = Cache(default_cache_dir())
    elif cache:
        store = Cache(cache)
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
