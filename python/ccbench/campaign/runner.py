"""Runs a list of :class:`Task` s: from the cache where it has them, the rest on Dask.

With ``jobs=1`` and no scheduler the runs go one by one in this process. Otherwise they go to a
Dask cluster: ``scheduler="tcp://host:8786"`` names an existing one, else an embedded
``LocalCluster`` of ``jobs`` single-threaded worker processes is started on first use and kept
for the rest of the process (a notebook or a test session pays its start once). Results stream
back as runs finish; each success is written to the cache at once, so an interrupted campaign
keeps everything finished before the interruption.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import uuid
from typing import Callable, Dict, List, Optional, Sequence

from ccbench.campaign.cache import Cache, metric_identity, run_key
from ccbench.campaign.progress import Progress
from ccbench.campaign.tasks import Outcome, Task, execute

#: Embedded clusters by size, kept for the life of the process.
_LOCAL: Dict[int, object] = {}


def prepare(tasks: Sequence[Task]) -> None:
    """Give every task its cache key from the scenario as the core validates it (a task whose
    scenario does not validate keeps an empty key and carries the core's message)."""
    from ccbench.api import ScenarioError, validate, version

    core = version()
    identities: Dict[int, str] = {}
    for task in tasks:
        if task.key or task.invalid:
            continue
        try:
            scenario = validate(task.base, seed=task.seed, overrides=task.overrides)
        except (ScenarioError, TypeError, ValueError) as exc:
            task.invalid = " ".join(str(exc).split())
            continue
        ident = identities.get(id(task.metric))
        if ident is None:
            ident = identities[id(task.metric)] = metric_identity(task.metric)
        task.key = run_key(scenario, core, task.engine, task.point, ident)


def _close_local() -> None:
    for client in list(_LOCAL.values()):
        try:
            client.close()
            client.cluster.close()
        except Exception:  # noqa: BLE001 - shutting down anyway
            pass
    _LOCAL.clear()


def _pickle_by_value(tasks: Sequence[Task]) -> None:
    """Metrics defined outside ccbench (a test module, a notebook, a user's package) travel by
    value, since a worker may not be able to import their module."""
    import cloudpickle

    for module_name in {getattr(t.metric, "__module__", "") for t in tasks}:
        module = sys.modules.get(module_name)
        if module is not None and not module_name.startswith("ccbench") and module_name != "__main__":
            try:
                cloudpickle.register_pickle_by_value(module)
            except ValueError:
                pass


def client(jobs: int, scheduler: Optional[str] = None):
    """A Dask client: connected to ``scheduler``, or to this process's embedded cluster of
    ``jobs`` workers. Raises :class:`ccbench.errors.UsageError` when the scheduler cannot be
    reached."""
    from ccbench.errors import UsageError

    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as exc:
        raise UsageError(f"--jobs/--scheduler need dask.distributed: {exc}") from None
    if scheduler:
        try:
            return Client(scheduler, timeout="15s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"--scheduler {scheduler}: cannot connect: {' '.join(str(exc).split())}") from None
    found = _LOCAL.get(jobs)
    if found is not None and found.status == "running":
        return found
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    made = Client(cluster, set_as_default=False)
    if not _LOCAL:
        atexit.register(_close_local)
    _LOCAL[jobs] = made
    return made


def _dask(pending: Dict[str, List[Task]], jobs: int, scheduler: Optional[str],
          finished: Callable[[str, Outcome], None]) -> None:
    from dask.distributed import as_completed

    dask_client = client(jobs, scheduler)
    _pickle_by_value([group[0] for group in pending.values()])
    futures = {}
    try:
        for key, group in pending.items():
            future = dask_client.submit(execute, group[0], key=f"ccbench-run-{key}", pure=False)
            futures[future] = key
        for future in as_completed(futures, loop=dask_client.loop):
            try:
                outcome = future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. a worker killed by the OS
                outcome = Outcome(None, f"{type(exc).__name__}: {exc}")
            finished(futures.pop(future), outcome)
    except BaseException:
        dask_client.cancel(list(futures))
        if not scheduler:  # an interrupted embedded cluster is not reused half-cancelled
            _close_local()
        raise
    finally:
        if scheduler:
            dask_client.close()


def run_tasks(tasks: Sequence[Task], *, jobs: Optional[int] = None, scheduler: Optional[str] = None,
              cache: Optional[Cache] = None, force: bool = False, progress: Optional[Progress] = None,
              on_done: Optional[Callable[[Task, Outcome], None]] = None) -> List[Outcome]:
    """Every task's :class:`Outcome`, in task order. Cached runs are not recomputed unless
    ``force``; identical runs (same key) are computed once. ``on_done(task, outcome)`` is called
    as each task finishes (cached ones first), in this process."""
    prepare(tasks)
    outcomes: List[Optional[Outcome]] = [None] * len(tasks)
    pending: Dict[str, List[int]] = {}
    hits = []
    for index, task in enumerate(tasks):
        found = cache.get(task.key) if cache is not None and task.key and not force else None
        if found is not None:
            outcomes[index] = Outcome(found[0], None, found[1], cached=True)
            hits.append(index)
        else:
            pending.setdefault(task.key or f"invalid-{uuid.uuid4().hex}", []).append(index)
    if progress is not None:
        progress.from_cache(len(hits))
    if on_done is not None:
        for index in hits:
            on_done(tasks[index], outcomes[index])

    def finished(key: str, outcome: Outcome) -> None:
        if cache is not None and outcome.error is None and tasks[pending[key][0]].key:
            cache.put(key, outcome.metrics, outcome.seconds)
        for index in pending[key]:
            outcomes[index] = outcome
            if progress is not None:
                task = tasks[index]
                progress.advance(f"{task.group} #{task.index} seed={task.seed}", outcome)
            if on_done is not None:
                on_done(tasks[index], outcome)

    emulated = {k: g for k, g in pending.items() if tasks[g[0]].engine == "emu"}
    simulated = {k: g for k, g in pending.items() if k not in emulated}
    workers = max(1, jobs or os.cpu_count() or 1)
    if scheduler or (workers > 1 and len(simulated) > 1):
        _dask({key: [tasks[i] for i in group] for key, group in simulated.items()}, workers,
              scheduler, finished)
    else:
        for key, group in simulated.items():
            finished(key, execute(tasks[group[0]]))
    # Real-time runs on the real stack go last, one at a time, here: they must not share the
    # CPUs with anything.
    for key, group in emulated.items():
        finished(key, execute(tasks[group[0]]))
    return outcomes  # type: ignore[return-value]
