"""Runs :class:`Task` s: from the cache where it has them, the rest on Dask or in this process.

With ``jobs=1`` and no scheduler the runs go one by one in this process. Otherwise they go to a
Dask cluster: ``scheduler="tcp://host:8786"`` names an existing one, else an embedded
``LocalCluster`` of ``jobs`` single-threaded worker processes is started on first use and kept
for the rest of the process (a notebook or a test session pays its start once).

Tasks come in groups (an experiment's runs). Each group is keyed, looked up in the cache and
submitted before the next group is even built, so workers start at once; a big group goes in
batches of up to :data:`MAX_BATCH` runs (one Dask task per run would cost the scheduler more
than a short run costs a worker). Results stream back as batches finish; every success is
journaled in the cache at once, so an interrupted campaign keeps everything that finished.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import sys
import time
import uuid
import warnings
from typing import Callable, Dict, Iterable, List, Optional, Sequence

from ccbench.campaign.cache import Cache, core_fingerprint, metric_identity, run_key
from ccbench.campaign.progress import Progress
from ccbench.campaign.tasks import Outcome, Task, execute, execute_batch

#: Most runs in one Dask task; a group of n runs goes in batches of about n / 100.
MAX_BATCH = 64

#: Embedded clusters by size, kept for the life of the process.
_LOCAL: Dict[int, object] = {}

Done = Callable[[Task, Outcome], None]


def prepare(tasks: Sequence[Task]) -> None:
    """Give every task its cache key from the scenario as the core validates it (a task whose
    scenario does not validate keeps an empty key and carries the core's message)."""
    from ccbench import _core
    from ccbench.api import ScenarioError, _read

    core = core_fingerprint()
    identities: Dict[int, str] = {}
    read: Dict[int, tuple] = {}
    for task in tasks:
        if task.key or task.invalid:
            continue
        try:
            kind, payload, source = read.get(id(task.base)) or read.setdefault(id(task.base), _read(task.base))
            canonical = _core.canonical_dict if kind == "dict" else _core.canonical_toml
            scenario = canonical(payload, source, list(task.overrides), task.seed)
        except (ScenarioError, TypeError, ValueError) as exc:
            task.invalid = " ".join(str(exc).split())
            continue
        ident = identities.get(id(task.metric))
        if ident is None:
            ident = identities[id(task.metric)] = metric_identity(task.metric)
        task.key = run_key(hashlib.sha256(scenario.encode()).hexdigest(), core, task.engine, task.point, ident)


def _close_local() -> None:
    for made in list(_LOCAL.values()):
        try:
            made.close()
            made.cluster.close()
        except Exception:  # noqa: BLE001 - shutting down anyway
            pass
    _LOCAL.clear()


def _pickle_by_value(metric: Callable) -> None:
    """Metrics defined outside ccbench (a test module, a notebook, a user's package) travel by
    value, since a worker may not be able to import their module."""
    import cloudpickle

    name = getattr(metric, "__module__", "") or ""
    module = sys.modules.get(name)
    if module is not None and not name.startswith("ccbench") and name != "__main__":
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
            return Client(scheduler, timeout="10s", set_as_default=False)
        except (OSError, TimeoutError, ValueError) as exc:
            raise UsageError(f"--scheduler {scheduler}: cannot connect: {' '.join(str(exc).split())}") from None
    found = _LOCAL.get(jobs)
    if found is not None and found.status == "running":
        return found
    with warnings.catch_warnings():
        # With no dashboard the scheduler still serves its health page, on 8787 when free; a
        # second campaign on the machine takes another port, which is not worth a warning.
        warnings.filterwarnings("ignore", message="Port .* is already in use")
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
    made = Client(cluster, set_as_default=False)
    if not _LOCAL:
        atexit.register(_close_local)
    _LOCAL[jobs] = made
    return made


class _Campaign:
    """Bookkeeping shared by both ways of running: cache lookups, identical runs computed once,
    outcomes fanned out to every task that asked for them."""

    def __init__(self, cache: Optional[Cache], force: bool, progress: Optional[Progress],
                 on_done: Optional[Done]):
        self.cache, self.force, self.progress, self.on_done = cache, force, progress, on_done
        self.waiting: Dict[str, List[Task]] = {}
        self.outcomes: Dict[int, Outcome] = {}

    def split(self, group: Sequence[Task]) -> List[Task]:
        """Key ``group``, hand out what the cache has, and return the runs still to compute
        (one per key not already in flight)."""
        prepare(group)
        todo, hits = [], []
        for task in group:
            found = None
            if self.cache is not None and task.key and not self.force:
                found = self.cache.get(task.key)
            if found is not None:
                hits.append((task, Outcome(found[0], None, found[1], cached=True)))
                continue
            key = task.slot = task.key or f"invalid-{uuid.uuid4().hex}"
            if key in self.waiting:
                self.waiting[key].append(task)
            else:
                self.waiting[key] = [task]
                todo.append(task)
        if self.progress is not None:
            self.progress.from_cache(len(hits))
        for task, outcome in hits:
            self._deliver(task, outcome)
        return todo

    def finished(self, task: Task, outcome: Outcome) -> None:
        key = task.slot or task.key
        if self.cache is not None and outcome.error is None and task.key:
            self.cache.put(task.key, outcome.metrics, outcome.seconds)
        for waiting in self.waiting.pop(key, [task]):
            if self.progress is not None:
                self.progress.advance(f"{waiting.group} #{waiting.index} seed={waiting.seed}", outcome)
            self._deliver(waiting, outcome)

    def _deliver(self, task: Task, outcome: Outcome) -> None:
        self.outcomes[id(task)] = outcome
        if self.on_done is not None:
            self.on_done(task, outcome)


def _batches(todo: List[Task]) -> List[List[Task]]:
    size = max(1, min(MAX_BATCH, len(todo) // 100))
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def _in_process(groups: Iterable[Sequence[Task]], book: _Campaign, emulated: List[Task]) -> None:
    for group in groups:
        for task in book.split(group):
            if task.engine == "emu":
                emulated.append(task)
            else:
                book.finished(task, execute(task))


def _on_dask(groups: Iterable[Sequence[Task]], book: _Campaign, emulated: List[Task], jobs: int,
             scheduler: Optional[str], timings: dict) -> None:
    from dask.distributed import as_completed

    dask_client, done = None, None  # started with the first run to compute
    running: Dict[object, List[Task]] = {}

    def collect(future, result) -> None:
        batch = running.pop(future)
        outcomes = result
        if future.status != "finished":  # e.g. a worker killed by the OS, three times
            exc = result[1] if isinstance(result, tuple) and len(result) == 3 else result
            outcomes = [Outcome(None, f"{type(exc).__name__}: {exc}")] * len(batch)
        for task, outcome in zip(batch, outcomes):
            book.finished(task, outcome)

    try:
        for group in groups:
            todo = book.split(group)
            emulated.extend(t for t in todo if t.engine == "emu")
            simulated = [t for t in todo if t.engine != "emu"]
            if simulated:
                _pickle_by_value(simulated[0].metric)
            if simulated and dask_client is None:
                started = time.perf_counter()
                dask_client = client(jobs, scheduler)
                timings["cluster_start_s"] = round(time.perf_counter() - started, 2)
                # Results come back with their futures, fetched in the background: one
                # round trip per finished batch instead of one per `future.result()`.
                done = as_completed(loop=dask_client.loop, with_results=True, raise_errors=False)
            for batch in _batches(simulated):
                future = dask_client.submit(execute_batch, batch, key=f"ccbench-runs-{uuid.uuid4().hex}",
                                            pure=False)
                running[future] = batch
                done.add(future)
            for future, result in done.next_batch(block=False) if done is not None and done.has_ready() else ():
                collect(future, result)
        for future, result in done or ():
            collect(future, result)
    except BaseException:
        if running:
            dask_client.cancel(list(running), force=True)
        if not scheduler:  # an interrupted embedded cluster is not reused half-cancelled
            _close_local()
        raise
    finally:
        if scheduler and dask_client is not None:
            dask_client.close()


def run_groups(groups: Iterable[Sequence[Task]], *, jobs: Optional[int] = None,
               scheduler: Optional[str] = None, cache: Optional[Cache] = None, force: bool = False,
               progress: Optional[Progress] = None, on_done: Optional[Done] = None,
               timings: Optional[dict] = None) -> Dict[int, Outcome]:
    """Run every task of every group (groups may be produced lazily); returns each task's
    :class:`Outcome` by ``id(task)``. Cached runs are not recomputed unless ``force``; identical
    runs (same key) are computed once. ``on_done(task, outcome)`` is called in this process as
    each task finishes. Runs on the real stack (``engine = "emu"``) go last, one at a time, here:
    real-time runs must not share the CPUs with anything. ``timings``, when given, receives
    ``cluster_start_s`` (connecting to or starting the Dask cluster) and ``real_stack_s`` (the
    real-time runs), in seconds of wall time."""
    book = _Campaign(cache, force, progress, on_done)
    emulated: List[Task] = []
    workers = max(1, jobs or os.cpu_count() or 1)
    timings = {} if timings is None else timings
    timings.update(cluster_start_s=0.0, real_stack_s=0.0)
    try:
        if scheduler or workers > 1:
            _on_dask(groups, book, emulated, workers, scheduler, timings)
        else:
            _in_process(groups, book, emulated)
        started = time.perf_counter()
        for task in emulated:
            book.finished(task, execute(task))
        timings["real_stack_s"] = round(time.perf_counter() - started, 2)
    finally:
        if cache is not None:
            cache.flush()
    return book.outcomes


def run_tasks(tasks: Sequence[Task], **options) -> List[Outcome]:
    """:func:`run_groups` over one group; the outcomes in task order. A handful of runs stays in
    this process (starting workers would cost more than it saves)."""
    if len(tasks) <= 1 and not options.get("scheduler"):
        options["jobs"] = 1
    outcomes = run_groups([tasks], **options)
    return [outcomes[id(task)] for task in tasks]
