"""A run as a unit of work: what a worker needs to compute one run's metrics.

:func:`execute` runs on a worker (a Dask worker process, or this process when ``jobs=1``). It
never raises: a bad scenario or a panic in the core comes back as the outcome's error text, so
one bad run never stops a campaign.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional


@dataclass
class Task:
    """One run: ``base`` with ``overrides`` at ``seed``, scored by ``metric(result, point)``.

    ``key`` is the cache key (empty when the scenario did not validate: the run is then
    attempted, fails with the core's message, and is not cached). ``group`` names what the run
    belongs to (an experiment) and ``index`` its place there."""

    metric: Callable[[Any, dict], Mapping[str, Any]]
    base: Mapping[str, Any]
    overrides: List[str]
    point: dict
    seed: int
    group: str = ""
    index: int = 0
    key: str = ""
    engine: str = "sim"
    #: Set by the runner: the error that made the key impossible to compute, if any.
    invalid: Optional[str] = field(default=None, repr=False)
    #: Set by the runner: what identifies the run while it is in flight (the key, or a fresh
    #: name for a run that has none).
    slot: str = field(default="", repr=False)


@dataclass
class Outcome:
    """A run's metrics, or the error that stopped it; ``seconds`` of wall time on its worker;
    ``cached`` when it came from the cache."""

    metrics: Optional[dict]
    error: Optional[str]
    seconds: float = 0.0
    cached: bool = False
    #: Where a computed run's time went: ``loop`` (the core's event loop), ``run`` (all of
    #: ``ccbench.run``: scenario building, the loop, the results' conversion), ``metric``.
    profile: Optional[Dict[str, float]] = None


def execute(task: Task) -> Outcome:
    """Run ``task`` and score it. A point whose ``engine`` is ``"emu"`` runs on real Linux TCP
    (``ccbench emu``, root), its run folder kept only while the metric reads it."""
    from ccbench.api import run

    start = time.perf_counter()
    try:
        if task.invalid:
            raise ValueError(task.invalid)
        if task.engine == "emu":
            import tempfile

            from ccbench.emu import run as emulate

            with tempfile.TemporaryDirectory(prefix="ccbench-emu-run-") as tmp:
                result = emulate(task.base, out=Path(tmp), seed=task.seed, overrides=task.overrides)
                metrics = dict(task.metric(result, task.point))
        else:
            result = run(task.base, seed=task.seed, overrides=task.overrides)
            ran = time.perf_counter()
            metrics = dict(task.metric(result, task.point))
            end = time.perf_counter()
            profile = {"loop": float(result.summary.get("wall_s") or 0.0), "run": ran - start,
                       "metric": end - ran}
            return Outcome(metrics, None, end - start, profile=profile)
        return Outcome(metrics, None, time.perf_counter() - start)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as exc:  # noqa: BLE001 - a core panic is a BaseException (PyO3)
        message = " ".join(str(exc).split())
        return Outcome(None, f"{type(exc).__name__}: {message}", time.perf_counter() - start)


def execute_batch(tasks: List[Task]) -> List[Outcome]:
    """:func:`execute` each of ``tasks`` in turn (a Dask task of several short runs)."""
    return [execute(task) for task in tasks]
