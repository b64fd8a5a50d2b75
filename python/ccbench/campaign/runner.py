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
import contextlib
import hashlib
import logging
import os
import sys
import time
import uuid
import warnings
from typing import Callable, Dict, Iterable, List, Optional, Sequence

from ccbench.campaign.cache import Cache, cacheable_identity, core_fingerprint, real_stack_fingerprint, run_key
from ccbench.campaign.progress import Progress
from ccbench.campaign.tasks import Outcome, Task, execute, execute_batch

#: Most runs in one Dask task; a group of n runs goes in batches of about n / 100.
MAX_BATCH = 64

#: Embedded clusters by size, kept for the life of the process.
_LOCAL: Dict[int, object] = {}

#: Most embedded workers per CPU. A run is single-threaded and CPU-bound, so workers beyond the
#: cores only share them; the margin is for a user who knows better, not for `--jobs 100000`
#: (which spent minutes at 100 % CPU starting processes and ignored Ctrl-C).
JOBS_PER_CPU = 4

#: Available memory counted per embedded worker: an idle one with ccbench, pandas and pyarrow
#: imported holds ~130 MB (measured), and a run's series need room on top.
WORKER_BYTES = 256 << 20

#: Seconds a ``--scheduler`` gets to answer as a Dask scheduler (connect, handshake, identity).
#: A port that accepts and never answers hung a campaign for 90 s (Dask's own handshake has no
#: timeout); a remote scheduler on a slow link may need more: ``CCBENCH_SCHEDULER_TIMEOUT``.
SCHEDULER_TIMEOUT_S = 10.0

Done = Callable[[Task, Outcome], None]


class Offload:
    """Where follow-up work (an experiment's analysis and figures) runs: on the embedded cluster's
    workers while the campaign's runs are under way, so the coordinating process only keys,
    caches and schedules; here, in order, when there is no such cluster (every run cached, one
    job, or a remote scheduler, whose workers may not share this file system). ``done(value,
    error)`` is called in this process with the function's return value or its exception."""

    def __init__(self) -> None:
        self.client = None
        self.completed = None
        self.pending: Dict[object, Callable[[object, Optional[BaseException]], None]] = {}

    def __call__(self, function: Callable, args: tuple,
                 done: Callable[[object, Optional[BaseException]], None]) -> None:
        if self.client is None:
            try:
                value = function(*args)
            except Exception as exc:  # noqa: BLE001 - reported through done, like a worker's
                done(None, exc)
                return
            done(value, None)
            return
        # Ahead of queued run batches, so an experiment's outputs appear as soon as it is complete.
        future = self.client.submit(function, *args, key=f"ccbench-analysis-{uuid.uuid4().hex}", pure=False,
                                    priority=1)
        self.pending[future] = done
        self.completed.add(future)

    def collect(self, future, result) -> bool:
        """Hand a finished follow-up to its ``done``; False if ``future`` is not one of ours."""
        done = self.pending.pop(future, None)
        if done is None:
            return False
        if future.status == "finished":
            done(result, None)
        else:
            done(None, _failure(result))
        return True


def _failure(result) -> BaseException:
    """The exception of a future that did not finish, from what ``as_completed`` gives with
    ``raise_errors=False`` (the ``(type, exception, traceback)`` triple, or the exception)."""
    exc = result[1] if isinstance(result, tuple) and len(result) == 3 else result
    return exc if isinstance(exc, BaseException) else RuntimeError(str(exc))


def _shipped(base) -> tuple:
    """``(kind, payload, source)`` of a task's scenario as it leaves this process: a file's text,
    and relative paths (a link's ``trace``) made absolute here, beside the scenario file or in
    this folder, never on a worker whose folder is another. The files they name enter the run's
    key by content (the core's canonical form carries each trace's digest)."""
    from ccbench import _core
    from ccbench.api import _read

    kind, payload, source = _read(base)
    if kind == "toml" or "trace" in repr(payload):  # a dict naming no trace has no path to resolve
        return "toml", _core.resolved_toml(payload, source), source
    return kind, payload, source


def prepare(tasks: Sequence[Task]) -> None:
    """Give every task its cache key from the scenario as the core validates it (a task whose
    scenario does not validate keeps an empty key and carries the core's message; a task whose
    metric cannot be keyed keeps an empty key too, and its run is computed and not cached)."""
    from ccbench import _core
    from ccbench.api import ScenarioError

    core = core_fingerprint()
    stack = ""  # the real stack's programs, hashed once, when a task runs there
    identities: Dict[int, Optional[str]] = {}
    read: Dict[int, tuple] = {}
    for task in tasks:
        if task.key or task.invalid:
            continue
        try:
            kind, payload, source = read.get(id(task.base)) or read.setdefault(id(task.base), _shipped(task.base))
            task.base = payload  # what the worker runs: relative paths already resolved here
            canonical = _core.canonical_dict if kind == "dict" else _core.canonical_toml
            scenario = canonical(payload, source, list(task.overrides), task.seed)
        except (ScenarioError, TypeError, ValueError) as exc:
            task.invalid = " ".join(str(exc).split())
            continue
        if id(task.metric) not in identities:
            identities[id(task.metric)] = cacheable_identity(task.metric)
        ident = identities[id(task.metric)]
        if ident is None:  # a metric the cache cannot key (noted once): computed, never cached
            continue
        code = core
        if task.engine == "emu":
            stack = stack or real_stack_fingerprint()
            code = f"{core}+{stack}"
        task.key = run_key(hashlib.sha256(scenario.encode()).hexdigest(), code, task.engine, task.point, ident)


def _close_local() -> None:
    """Close the embedded clusters, quietly: workers stopped in the middle of a run are no news,
    nor is a Ctrl-C while closing (a second one, or one as the process exits)."""
    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        for made in list(_LOCAL.values()):
            try:
                made.close()
                made.cluster.close()
            except BaseException:  # noqa: BLE001 - shutting down anyway
                pass
        _LOCAL.clear()
    finally:
        logger.setLevel(level)


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


def check_jobs(jobs, name: str = "jobs") -> Optional[int]:
    """``jobs`` if it is ``None`` or a positive int; else an error naming ``name``."""
    from numbers import Integral

    from ccbench.errors import ArgumentError, ArgumentTypeError

    if jobs is None:
        return None
    if isinstance(jobs, bool) or not isinstance(jobs, Integral):
        raise ArgumentTypeError(f"{name} must be a positive int (worker processes) or None, "
                                f"not {type(jobs).__name__} ({jobs!r:.40})")
    if jobs < 1:
        raise ArgumentError(f"{name} must be at least 1 (1 runs in this process), got {jobs}")
    return int(jobs)


def check_scheduler(scheduler, name: str = "scheduler") -> Optional[str]:
    """``scheduler`` if it is ``None`` or looks like a Dask address (``tcp://host:8786``)."""
    from ccbench.errors import ArgumentError, ArgumentTypeError

    if scheduler is None:
        return None
    if not isinstance(scheduler, str):
        raise ArgumentTypeError(f"{name} must be a Dask scheduler address like tcp://host:8786, "
                                f"not {type(scheduler).__name__}")
    if "://" not in scheduler or not scheduler.split("://", 1)[1] or "\0" in scheduler:
        raise ArgumentError(f"{name} must be a Dask scheduler address like tcp://host:8786, "
                            f"got {scheduler!r:.80}")
    return scheduler


def check_progress(progress, name: str = "progress"):
    """``progress`` if it is what :class:`~ccbench.campaign.progress.Progress` takes: a bool,
    ``None`` or a callable receiving each line."""
    from ccbench.errors import ArgumentTypeError

    if progress is None or isinstance(progress, bool) or callable(progress):
        return progress
    raise ArgumentTypeError(f"{name} must be True, False or a function receiving each line, "
                            f"not {type(progress).__name__}")


def _available_memory() -> Optional[int]:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def max_jobs() -> int:
    """The most embedded workers this machine can hold: :data:`JOBS_PER_CPU` per CPU, and no
    more than one per :data:`WORKER_BYTES` of available memory."""
    most = (os.cpu_count() or 1) * JOBS_PER_CPU
    memory = _available_memory()
    if memory is not None:
        most = min(most, memory // WORKER_BYTES)
    return max(1, most)


def cap_jobs(jobs: Optional[int]) -> int:
    """Worker processes for ``jobs`` (default: one per CPU), capped at :func:`max_jobs` with a
    one-line note on stderr."""
    wanted = max(1, jobs or os.cpu_count() or 1)
    most = max_jobs()
    if wanted <= most:
        return wanted
    print(f"note: --jobs {wanted} is more than this machine can hold; using {most} workers "
          f"(at most {JOBS_PER_CPU} per CPU and one per {WORKER_BYTES >> 20} MB of available memory)",
          file=sys.stderr)
    return most


def _scheduler_timeout() -> float:
    try:
        value = float(os.environ.get("CCBENCH_SCHEDULER_TIMEOUT", SCHEDULER_TIMEOUT_S))
    except ValueError:
        return SCHEDULER_TIMEOUT_S
    return value if 0 < value < 3600 else SCHEDULER_TIMEOUT_S


def _unreachable(scheduler: str, why: str):
    from ccbench.errors import UsageError

    why = " ".join(why.split())
    return UsageError(f"--scheduler {scheduler}: cannot reach a Dask scheduler ({why[:200]})")


def _tcp_reachable(scheduler: str, timeout: float) -> None:
    """A refused port or an unknown host fails at once, not after Dask's retries."""
    import socket

    from distributed.comm.addressing import parse_address, parse_host_port

    scheme, location = parse_address(scheduler)
    if scheme != "tcp":
        return  # tls://, ucx://: Dask's own probe below
    host, port = parse_host_port(location)
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except socket.timeout:
        raise _unreachable(scheduler, f"no connection within {timeout:g} s") from None
    except OSError as exc:
        raise _unreachable(scheduler, f"cannot connect: {exc.strerror or exc}") from None


def _ask_identity(scheduler: str, timeout: float):
    """The scheduler's answer to Dask's ``identity`` call, all of it within ``timeout``."""
    import asyncio

    from distributed.comm import connect

    async def ask():
        comm = await connect(scheduler, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    return asyncio.run(asyncio.wait_for(ask(), timeout))


def probe_scheduler(scheduler: str, timeout: Optional[float] = None) -> None:
    """Make sure a Dask scheduler answers at ``scheduler`` within ``timeout`` seconds (default
    :data:`SCHEDULER_TIMEOUT_S`); else raise :class:`ccbench.errors.UsageError`, one line.

    The probe runs in its own thread and event loop: Dask's handshake waits forever on a port
    that accepts and never answers, and garbage bytes make it try to allocate exabytes; neither
    must reach the caller as a hang or a traceback. A thread also keeps it usable from a
    notebook, whose own event loop is running."""
    import asyncio
    import threading

    timeout = _scheduler_timeout() if timeout is None else timeout
    try:
        _tcp_reachable(scheduler, timeout)
    except ValueError as exc:  # an address Dask cannot parse
        raise _unreachable(scheduler, str(exc)) from None
    answer: dict = {}

    def ask() -> None:
        try:
            answer["reply"] = _ask_identity(scheduler, timeout)
        except BaseException as exc:  # noqa: BLE001 - reported below, whatever it is
            answer["error"] = exc

    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)  # garbage is logged as an error before it is raised
    try:
        thread = threading.Thread(target=ask, name="ccbench-probe-scheduler", daemon=True)
        thread.start()
        thread.join(timeout + 2)  # the probe's own timeout ends it first; this is a backstop
    finally:
        logger.setLevel(level)
    error, reply = answer.get("error"), answer.get("reply")
    if thread.is_alive() or isinstance(error, (TimeoutError, asyncio.TimeoutError)):
        raise _unreachable(scheduler, f"no answer within {timeout:g} s")
    if error is not None:
        raise _unreachable(scheduler, f"something else answers there: {type(error).__name__}: {error}")
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise _unreachable(scheduler, f"the answer is not a Dask scheduler's: {reply!r:.60}")


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
        probe_scheduler(scheduler)
        timeout = _scheduler_timeout()
        try:
            return Client(scheduler, timeout=f"{timeout}s", set_as_default=False)
        except Exception as exc:  # noqa: BLE001 - it answered the probe; whatever failed since
            raise _unreachable(scheduler, f"{type(exc).__name__}: {exc}") from None
    found = _LOCAL.get(jobs)
    if found is not None and found.status == "running":
        return found
    refuse_in_a_starting_child("jobs > 1")
    with _starting_workers():
        with warnings.catch_warnings():
            # With no dashboard the scheduler still serves its health page, on 8787 when free; a
            # second campaign on the machine takes another port, which is not worth a warning.
            warnings.filterwarnings("ignore", message="Port .* is already in use")
            cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.ERROR)
        made = Client(cluster, set_as_default=False)
        _no_gc_diagnosis()
        if not _LOCAL:
            atexit.register(_close_local)
        _LOCAL[jobs] = made  # before a Ctrl-C held back while starting is raised: it closes this
    return made


def _no_gc_diagnosis() -> None:
    """Remove the embedded scheduler's garbage-collection timer from this process: it runs as a
    gc callback, where Python ignores exceptions, so a Ctrl-C landing in it was lost (printed as
    "Exception ignored in GCDiagnosis._gc_callback") and the campaign went on. It only logs."""
    try:
        from distributed.gc import disable_gc_diagnosis

        disable_gc_diagnosis(force=True)
    except Exception:  # noqa: BLE001 - another Dask version: a diagnosis left running is harmless
        pass


def refuse_in_a_starting_child(what: str) -> None:
    """Exit with one line when called from a process that is still starting: a worker process
    that re-runs the main script (multiprocessing's spawn does, as ``__mp_main__``) of a script
    calling ccbench without an ``if __name__ == "__main__":`` guard. Going on would start the
    same work again in every worker, each starting workers of its own."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise SystemExit(f"error: {what}: called in a worker process as it starts, which re-runs the "
                         f"main script: put the call under if __name__ == \"__main__\":")


@contextlib.contextmanager
def _starting_workers():
    """While the embedded cluster starts its worker processes:

    - Ctrl-C waits. A terminal sends it to the whole process group: this process stops the
      campaign and closes the cluster, and workers that got it too would each print pages of
      tracebacks. So SIGINT is blocked in this thread, and thus in the cluster's event-loop
      thread, created now, and in every worker process that thread spawns, now or on a restart
      (a process inherits the mask of the thread that starts it). In this process a Ctrl-C
      meanwhile is only noted, and raised once the cluster is up and registered (so that it is
      closed); raised in the middle of the start, it would leave a half-started cluster.
    - The main script is hidden from multiprocessing: a spawned process re-runs it (as
      ``__mp_main__``) before anything else, so a script calling ``ccbench.sweep(jobs=2)``
      without an ``if __name__ == "__main__":`` guard would call it again in every worker.
      Workers need nothing from it: functions defined there travel to them by value.
    """
    import signal
    import threading

    main = sys.modules.get("__main__")
    hidden = {name: vars(main)[name] for name in ("__file__", "__spec__")
              if main is not None and name in vars(main)}
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        # Started by the first spawn otherwise, and its start unblocks SIGINT in the thread
        # that spawns (multiprocessing.resource_tracker), so the workers would get it again.
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    noted: List[int] = []
    handler = None
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not None:
        handler = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if blocked else None
    try:
        if main is not None:
            main.__spec__ = None  # read by multiprocessing without a default: None, not deleted
            vars(main).pop("__file__", None)
        yield
    finally:
        if main is not None:
            vars(main).update(hidden)
            if "__spec__" not in hidden:
                vars(main).pop("__spec__", None)
        if previous is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        if handler is not None:
            signal.signal(signal.SIGINT, handler)
    if noted and callable(handler):
        handler(signal.SIGINT, None)  # what Ctrl-C does here: KeyboardInterrupt, by default
    elif noted and handler == signal.SIG_DFL:
        signal.raise_signal(signal.SIGINT)


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
             scheduler: Optional[str], timings: dict, offload: Optional[Offload]) -> None:
    from dask.distributed import as_completed

    dask_client, done = None, None  # started with the first run to compute
    running: Dict[object, List[Task]] = {}

    def collect(future, result) -> None:
        if offload is not None and offload.collect(future, result):
            return
        batch = running.pop(future)
        outcomes = result
        if future.status != "finished":  # e.g. a worker killed by the OS, three times
            exc = _failure(result)
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
                if offload is not None and not scheduler:
                    offload.client, offload.completed = dask_client, done
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
        if running or (offload is not None and offload.pending):
            dask_client.cancel(list(running) + list(offload.pending if offload is not None else ()), force=True)
        if not scheduler:  # an interrupted embedded cluster is not reused half-cancelled
            _close_local()
        raise
    finally:
        if offload is not None:  # what follows the runs (the real stack's) runs here
            offload.client = offload.completed = None
        if scheduler and dask_client is not None:
            dask_client.close()


def run_groups(groups: Iterable[Sequence[Task]], *, jobs: Optional[int] = None,
               scheduler: Optional[str] = None, cache: Optional[Cache] = None, force: bool = False,
               progress: Optional[Progress] = None, on_done: Optional[Done] = None,
               timings: Optional[dict] = None, offload: Optional[Offload] = None) -> Dict[int, Outcome]:
    """Run every task of every group (groups may be produced lazily); returns each task's
    :class:`Outcome` by ``id(task)``. Cached runs are not recomputed unless ``force``; identical
    runs (same key) are computed once. ``on_done(task, outcome)`` is called in this process as
    each task finishes. Runs on the real stack (``engine = "emu"``) go last, one at a time, here:
    real-time runs must not share the CPUs with anything. ``timings``, when given, receives
    ``cluster_start_s`` (connecting to or starting the Dask cluster) and ``real_stack_s`` (the
    real-time runs), in seconds of wall time. ``offload``, when given, is connected to the
    embedded cluster while it runs, so that ``on_done`` can hand work to the workers; every piece
    of it is finished, and its ``done`` called, before the real-time runs start."""
    scheduler, jobs = check_scheduler(scheduler), check_jobs(jobs)
    book = _Campaign(cache, force, progress, on_done)
    emulated: List[Task] = []
    workers = 1 if scheduler else cap_jobs(jobs)  # a scheduler's cluster has its own workers
    timings = {} if timings is None else timings
    timings.update(cluster_start_s=0.0, real_stack_s=0.0)
    try:
        if scheduler or workers > 1:
            _on_dask(groups, book, emulated, workers, scheduler, timings, offload)
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
    check_jobs(options.get("jobs"))
    if len(tasks) <= 1 and not options.get("scheduler"):
        options["jobs"] = 1
    outcomes = run_groups([tasks], **options)
    return [outcomes[id(task)] for task in tasks]
