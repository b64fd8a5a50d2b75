"""``ccbench reproduce``: every experiment of one work, or of all four, as one campaign.

All runs of all chosen experiments go to the runner together (so two workers never idle between
experiments); each experiment's outputs are written as soon as its last run is in, under
``OUT/experiments/<name>/``; then ``OUT/campaign.json`` (counts, failures, where the time went)
and ``OUT/report.html``. Finished runs are kept in ``OUT/cache/``: a rerun, after an interruption
or a change, computes only what is missing, and rewrites an experiment's outputs only when its
runs changed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ccbench.campaign.tasks import Outcome, Task
from ccbench.campaign.works import WORKS


@dataclass
class Campaign:
    """What a campaign did: experiments written, skipped (with the reason), failed runs."""

    out: Path
    experiments: List[str] = field(default_factory=list)
    skipped: Dict[str, str] = field(default_factory=dict)
    failed_runs: Dict[str, int] = field(default_factory=dict)
    broken: Dict[str, str] = field(default_factory=dict)
    report: Optional[Path] = None
    info: dict = field(default_factory=dict)

    @property
    def failures(self) -> int:
        return sum(self.failed_runs.values()) + len(self.broken)


def _only(only) -> List[str]:
    """``only`` as a list of experiment names (one string would be read letter by letter)."""
    from ccbench.errors import ArgumentTypeError

    if only is None:
        return []
    if isinstance(only, (str, bytes)) or not isinstance(only, (list, tuple, set, frozenset)):
        raise ArgumentTypeError(f"reproduce: only must be a list of experiment names, not "
                                f"{type(only).__name__} ({str(only)[:40]!r})")
    for name in only:
        if not isinstance(name, str):
            raise ArgumentTypeError(f"reproduce: only must hold experiment names, not {type(name).__name__}")
    return list(only)


def choose(work: str, only: Sequence[str] = ()):
    """The experiments of ``work`` (a key of :data:`WORKS`, or ``"all"``), in report order;
    with ``only``, just those of them."""
    from ccbench.errors import ArgumentError, ArgumentTypeError
    from ccbench.experiments.registry import experiments

    if not isinstance(work, str):
        raise ArgumentTypeError(f"reproduce: work must be one of {', '.join(WORKS)}, all; not {type(work).__name__}")
    if work != "all" and work not in WORKS:
        raise ArgumentError(f"reproduce: unknown work {work[:40]!r} (choose from {', '.join(WORKS)}, all)")
    wanted = list(WORKS) if work == "all" else [work]
    chosen = [exp for w in wanted for exp in experiments().values() if exp.work == w]
    names = {exp.name for exp in chosen}
    unknown = [name for name in only if name not in names]
    if unknown:
        raise ArgumentError(f"reproduce: --only {unknown[0][:80]!r} is no experiment of {work} "
                         f"(see `ccbench experiment --list`)")
    return [exp for exp in chosen if not only or exp.name in only]


def _up_to_date(out_dir: Path, info: dict) -> bool:
    """Whether ``out_dir`` already holds outputs of exactly these runs and outcomes."""
    try:
        from ccbench.files import read_json

        old = read_json(out_dir / "meta.json")
    except (OSError, ValueError):
        return False
    same = all(old.get(k) == info.get(k) for k in ("runs_digest", "failures", "quick", "core"))
    return same and (out_dir / "results.csv").is_file() and (out_dir / "summary.csv").is_file()


def write_experiment(name: str, results, out_dir: Path, quick: bool, info: dict) -> float:
    """Write experiment ``name``'s outputs from its runs' ``results`` (on a worker of the campaign's
    cluster, or here); returns the seconds it took."""
    from ccbench.experiments.registry import experiments
    from ccbench.experiments.runner import write_outputs

    start = time.perf_counter()
    write_outputs(experiments()[name], results, out_dir, quick, info)
    return time.perf_counter() - start


class _Tracker:
    """Collects outcomes per experiment and, once an experiment's last run is in, has its outputs
    written (by :func:`write_experiment`, through ``offload``)."""

    def __init__(self, out: Path, quick: bool, force: bool, campaign: Campaign, offload):
        self.out, self.quick, self.force, self.campaign = out, quick, force, campaign
        self.offload = offload
        self.exps: Dict[str, object] = {}
        self.tasks: Dict[str, List[Task]] = {}
        self.outcomes: Dict[str, List[Optional[Outcome]]] = {}
        self.left: Dict[str, int] = {}
        self.output_seconds = 0.0

    def groups(self, chosen):
        """Each experiment's tasks, built only when the runner asks for them."""
        from ccbench.experiments.runner import tasks_for

        for exp in chosen:
            tasks = tasks_for(exp, self.quick)
            self.exps[exp.name], self.tasks[exp.name] = exp, tasks
            self.outcomes[exp.name] = [None] * len(tasks)
            self.left[exp.name] = len(tasks)
            if not tasks:
                self.finish(exp.name)
            yield tasks

    def __call__(self, task: Task, outcome: Outcome) -> None:
        self.outcomes[task.group][task.index] = outcome
        self.left[task.group] -= 1
        if self.left[task.group] == 0:
            self.finish(task.group)

    def finish(self, name: str) -> None:
        from ccbench.experiments.runner import meta, report_failures, results_frame

        exp, tasks, outcomes = self.exps[name], self.tasks[name], self.outcomes[name]
        out_dir = self.out / "experiments" / name
        info = meta(exp, tasks, outcomes, self.quick)
        failed = info["failed"]
        if failed:
            self.campaign.failed_runs[name] = failed
            report_failures(exp, tasks, outcomes)
        self.campaign.experiments.append(name)
        if self.force or not _up_to_date(out_dir, info):
            args = (name, results_frame(tasks, outcomes), out_dir, self.quick, info)
            self.offload(write_experiment, args, lambda seconds, error: self.written(name, seconds, error))

    def written(self, name: str, seconds, error: Optional[BaseException]) -> None:
        if error is None:
            self.output_seconds += seconds
            return
        message = f"{type(error).__name__}: {' '.join(str(error).split())}"
        self.campaign.broken[name] = message
        print(f"warning: {name}: writing its outputs failed: {message}")


def _profile(outcomes: Sequence[Outcome]) -> dict:
    """Where the computed runs' time went, summed over runs (seconds of worker time)."""
    computed = [o for o in outcomes if not o.cached and o.profile]
    total = sum(o.seconds for o in computed)
    loop = sum(o.profile["loop"] for o in computed)
    run = sum(o.profile["run"] for o in computed)
    metric = sum(o.profile["metric"] for o in computed)
    return {"runs": len(computed), "worker_s": round(total, 2), "event_loop_s": round(loop, 2),
            "scenario_and_results_s": round(run - loop, 2), "metric_s": round(metric, 2)}


def _cpu_seconds() -> float:
    """CPU time of this process: the campaign's coordinator (keying, the cache, progress, the
    embedded Dask scheduler, analysis and figures), all of it taken from the workers' cores."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def reproduce(work: str = "all", *, quick: bool = False, jobs: Optional[int] = None,
              scheduler: Optional[str] = None, out="out/reproduce", force: bool = False,
              progress=True, only: Sequence[str] = ()) -> Campaign:
    """Run every experiment of ``work`` (``"abe"``, ``"fledbat"``, ``"rledbat"``, ``"siad"`` or
    ``"all"``; ``only`` narrows it to named experiments) as one campaign and write
    ``out/report.html``. Returns what happened; failed runs
    are recorded there, in each experiment's ``meta.json`` and in the report."""
    from ccbench.campaign.cache import CACHE_DIR, Cache
    from ccbench.campaign.files import staged_folder, write_json
    from ccbench.campaign.progress import Progress
    from ccbench.campaign.runner import Offload, check_jobs, check_progress, check_scheduler, run_groups
    from ccbench.outdir import check_experiment_dir, check_out_dir
    from ccbench.report import write_report

    only = _only(only)
    jobs, scheduler, progress = check_jobs(jobs), check_scheduler(scheduler), check_progress(progress)
    root = check_out_dir(out, "out")  # before any work, not after the last run
    check_out_dir(root / CACHE_DIR, "out")
    started = time.time()
    campaign = Campaign(root)
    chosen = []
    for exp in choose(work, only):
        reason = exp.unavailable() if exp.unavailable else None
        if reason:
            campaign.skipped[exp.name] = reason
        else:
            chosen.append(exp)
    for exp in chosen:  # each is replaced whole: it must be an experiment's folder, or new
        check_experiment_dir(root / "experiments" / exp.name, "out")
    total = sum(len(exp.params(quick)) * len(exp.run_seeds(quick)) for exp in chosen)
    # The campaign's folder is staged beside it and swapped in whole at the end: a kill leaves
    # the previous campaign's outputs and report, or this one's. It starts from hard links to
    # the previous folder (experiments not rerun stay), and the run cache is moved over, never
    # copied, just before the swap (other processes may be using it; every finished run is in
    # it whatever happens to the outputs).
    with staged_folder(root, keep_previous=True, carry=(CACHE_DIR,)) as stage:
        offload = Offload()
        tracker = _Tracker(stage, quick, force, campaign, offload)
        bar = Progress(total, f"reproduce {work}", progress) if progress else None
        run_start, cpu_start = time.perf_counter(), _cpu_seconds()
        timings: dict = {}
        try:
            found = run_groups(tracker.groups(chosen), jobs=jobs, scheduler=scheduler,
                               cache=Cache(root / CACHE_DIR), force=force, progress=bar, on_done=tracker,
                               timings=timings, offload=offload)
        finally:
            if bar is not None:
                bar.close()
        run_wall = time.perf_counter() - run_start
        outcomes = list(found.values())
        campaign.info = {
            "work": work, "quick": quick, "jobs": jobs, "scheduler": scheduler,
            "started": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(started)),
            "experiments": len(chosen), "skipped": campaign.skipped,
            "runs": len(outcomes), "cached": sum(o.cached for o in outcomes),
            "failed_runs": campaign.failed_runs, "broken": campaign.broken,
            "runs_wall_s": round(run_wall, 2), **timings,
            "coordinator_cpu_s": round(_cpu_seconds() - cpu_start, 2),
            "outputs_s": round(tracker.output_seconds, 2), "profile": _profile(outcomes),
        }
        campaign.info["wall_s"] = round(time.time() - started, 2)
        write_json(stage / "campaign.json", campaign.info)  # the report shows it
        report_start = time.perf_counter()
        write_report(stage)
        campaign.info["report_s"] = round(time.perf_counter() - report_start, 2)
        campaign.info["wall_s"] = round(time.time() - started, 2)
        write_json(stage / "campaign.json", campaign.info)
    campaign.report = root / "report.html"
    return campaign
