"""The ``ccbench`` command.

Bad input (an invalid scenario, a missing file, an unknown experiment, bad arguments) ends with
exit status 2 and exactly one line ``error: <message>`` on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path
from typing import List, Optional

from ccbench.campaign.works import WORKS
from ccbench.errors import UsageError
from ccbench.listing import FAMILIES, listing
from ccbench.outdir import check_experiment_dir, check_out_dir, check_run_dir

#: Works `reproduce` takes: the table the report titles them from (a module of constants only, so
#: --help stays fast).
WORK_CHOICES = (*WORKS, "all")


class _Parser(argparse.ArgumentParser):
    # argparse would print the whole usage text; keep bad-input reports to one line.
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def _cmd_run(args) -> int:
    from ccbench.api import SetFlags, run

    out = check_run_dir(args.out if args.out is not None else str(Path("out") / "runs" / Path(args.scenario).stem))
    result = run(args.scenario, seed=args.seed, overrides=SetFlags(args.set), out=out, max_memory=args.max_memory,
                 progress=sys.stderr.isatty())
    print(result.table())
    print(f"\nwrote {out}/summary.json and {{flows,links,sojourn,owd}}.parquet")
    return 0


def _cmd_emu(args) -> int:
    from ccbench.api import SetFlags
    from ccbench.emu import run

    out = check_run_dir(args.out if args.out is not None else str(Path("out") / "emu" / Path(args.scenario).stem))
    try:
        result = run(args.scenario, out=out, seed=args.seed, overrides=SetFlags(args.set))
    except KeyboardInterrupt:
        print("error: interrupted; the emulator stopped and removed its namespaces; nothing written",
              file=sys.stderr)
        return 130
    print(result.table())
    print(f"\nwrote {out}/summary.json and {{flows,links,sojourn,owd}}.parquet")
    return 0


def _cmd_compare_emu(args) -> int:
    from ccbench.compare_emu import main as compare

    out = check_out_dir(args.out)
    return compare(out=out, duration=args.duration, only=args.case, quic=args.quic)


def _cmd_plot(args) -> int:
    from ccbench.plot import plot_run

    if not (Path(args.dir) / "summary.json").is_file():
        raise UsageError(f"{args.dir}: not a run directory (no summary.json; see `ccbench run --out`)")
    for path in plot_run(args.dir):
        print(f"wrote {path}")
    return 0


def _cmd_experiment(args) -> int:
    from ccbench.experiments.registry import experiments

    known = experiments()
    if args.list or args.name is None:
        if args.name is None and not args.list:
            raise UsageError("experiment: give an experiment NAME or --list")
        for name, exp in known.items():
            print(f"{name:<18} {exp.description}")
        return 0
    if args.name not in known:
        raise UsageError(f"unknown experiment {args.name!r} (known: {', '.join(known)})")
    from ccbench.experiments.runner import run_experiment

    # Output paths are checked before the first run, not found bad after the last one.
    out = check_experiment_dir(args.out if args.out is not None else str(Path("out") / "experiments" / args.name))
    cache = check_out_dir(args.cache if args.cache is not None else str(Path("out") / "cache"), "--cache")
    results = run_experiment(args.name, quick=args.quick, jobs=args.jobs, out=out, progress=True,
                             scheduler=args.scheduler, cache=cache, force=args.force)
    failed = int((results["error"] != "").sum())
    print(f"wrote {out}/results.csv, summary.csv and figure")
    if failed:
        print(f"error: {failed} of {len(results)} runs failed (see results.csv)", file=sys.stderr)
        return 1
    return 0


def _cmd_reproduce(args) -> int:
    from ccbench.campaign.reproduce import reproduce
    from ccbench.report import where_time_went

    out = check_out_dir(args.out)
    check_out_dir(str(out / "cache"))  # the run cache lives there
    campaign = reproduce(args.work, quick=args.quick, jobs=args.jobs, scheduler=args.scheduler,
                         out=out, force=args.force, only=args.only or ())
    info = campaign.info
    print(f"{len(campaign.experiments)} experiments, {info['runs']} runs ({info['cached']} from the "
          f"cache) in {info['wall_s']:.1f} s; report: {campaign.report}")
    print(f"where the time went: {where_time_went(info)}")
    for name, reason in campaign.skipped.items():
        print(f"skipped {name}: {reason}")
    if campaign.failures:
        failed = [f"{name} ({n} runs)" for name, n in campaign.failed_runs.items()]
        failed += [f"{name} (analysis)" for name in campaign.broken]
        print(f"error: failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _cmd_can_fail(args) -> int:
    """Every judged row under DIR (an experiment's folder or a campaign's) perturbed through its
    measurements: exit 1 when a row is found that cannot fail."""
    from ccbench.experiments.can_fail import findings_under

    found, folders = findings_under(Path(args.dir))
    for finding in found:
        print(finding)
    print(f"{len(found)} finding{'s' * (len(found) != 1)} in {folders} experiment folder{'s' * (folders != 1)}",
          file=sys.stderr)
    return 1 if found else 0


def _cmd_list(args) -> int:
    print(listing(args.family))
    return 0


def _cmd_bench(args) -> int:
    from ccbench.bench import main as bench

    out = check_out_dir(args.out) if args.out is not None else None
    bench(repeat=args.repeat, out=out, ns3=args.ns3)
    return 0


def _cmd_trace(args) -> int:
    """Write a synthetic cellular delivery trace (mahimahi's format) for a link's ``trace`` key."""
    from ccbench import _core

    try:
        text = _core.synthetic_trace(args.mean_mbps * 1e6, args.seconds, args.seed)
    except ValueError as exc:
        raise UsageError(f"--{str(exc).replace('mean:', 'mean-mbps:').replace('duration:', 'seconds:')}") from None
    out = Path(args.out)
    if out.is_dir():
        raise UsageError(f"{out}: is a folder; give the trace file's name")
    from ccbench.files import write_text

    write_text(out, text)
    lines = sum(1 for line in text.splitlines() if line and not line.startswith("#"))
    print(f"wrote {out}: {lines} delivery opportunities over {args.seconds:g} s "
          f"(mean about {args.mean_mbps:g} Mbit/s); use it as trace = \"{out}\" on a link")
    return 0


def _finite_positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and value < float("inf")):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _cmd_demo(args) -> int:
    from ccbench.demo import demo

    failures = demo(check_out_dir(args.out), jobs=args.jobs)
    if failures:
        print(f"error: {failures} demo step(s) failed", file=sys.stderr)
        return 1
    return 0


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _scenario_arguments(p: argparse.ArgumentParser, default_out: str) -> None:
    """What `run` and `emu` both take: a scenario file, an output folder, a seed, overrides."""
    p.add_argument("scenario", metavar="SCENARIO.toml")
    p.add_argument("--out", metavar="DIR", help=f"output directory (default {default_out})")
    p.add_argument("--seed", type=_seed, help="replace the scenario's seed (0 to 2**64-1)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field, e.g. --set bottleneck.rate=20Mbps (repeatable)")


def _seed(text: str) -> int:
    value = _non_negative(text)
    if value >= 2**64:
        raise argparse.ArgumentTypeError(f"expected an integer below 2**64, got {text}")
    return value


def _memory(text: str) -> int:
    from ccbench import _core

    try:
        return _core.memory_limit(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("max_memory: ")) from None


def _scheduler(text: str) -> str:
    if "://" not in text or not text.split("://", 1)[1]:
        raise argparse.ArgumentTypeError(f"expected a Dask scheduler address like tcp://host:8786, got {text!r}")
    return text


def _campaign_arguments(p: argparse.ArgumentParser) -> None:
    """What `experiment` and `reproduce` both take: where runs go and whether to reuse them."""
    p.add_argument("--jobs", type=_positive,
                   help="worker processes of the embedded Dask cluster (default: CPU count; 1: this process)")
    p.add_argument("--scheduler", type=_scheduler, metavar="ADDR",
                   help="send the runs to the Dask cluster at ADDR (tcp://host:8786) instead")
    p.add_argument("--force", action="store_true", help="recompute runs found in the cache")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="ccbench", description="Congestion-control laboratory.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("run", help="run one scenario file")
    _scenario_arguments(p, "out/runs/<name>")
    p.add_argument("--max-memory", metavar="SIZE", type=_memory,
                   help="refuse a run whose estimated memory exceeds SIZE (e.g. 40GB; default: three "
                        "quarters of this machine's memory)")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser("emu", help="run one scenario on real Linux TCP through our bottleneck (root)")
    _scenario_arguments(p, "out/emu/<name>")
    p.set_defaults(func=_cmd_emu)

    p = sub.add_parser("compare-emu", help="run shared scenarios in the simulator and the emulator, "
                                           "write the agreement table (root)")
    p.add_argument("--out", metavar="DIR", default="out/compare-emu")
    p.add_argument("--duration", default="30s", help="length of each run (default 30s)")
    p.add_argument("--case", action="append", help="only these cases (repeatable)")
    p.add_argument("--quic", action="store_true",
                   help="the QUIC cases: every sender controller as the simulator's TCP against the emulator's "
                        "QUIC, alone and beside kernel CUBIC, 30 ms and 500 ms buffers")
    p.set_defaults(func=_cmd_compare_emu)

    p = sub.add_parser("plot", help="draw cwnd.png, rate.png and queue.png for a run directory")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser("experiment", help="run a registered parameter sweep")
    p.add_argument("name", nargs="?", metavar="NAME")
    p.add_argument("--list", action="store_true", help="list the experiments")
    p.add_argument("--quick", action="store_true", help="smaller grid and shorter runs")
    _campaign_arguments(p)
    p.add_argument("--out", metavar="DIR", help="output directory (default out/experiments/NAME)")
    p.add_argument("--cache", metavar="DIR", help="run cache (default out/cache)")
    p.set_defaults(func=_cmd_experiment)

    p = sub.add_parser("reproduce", help="run every experiment of a work (or all four) as one cached, "
                                         "resumable campaign; write report.html")
    p.add_argument("work", choices=WORK_CHOICES, metavar="WORK", help=f"one of {', '.join(WORK_CHOICES)}")
    p.add_argument("--quick", action="store_true", help="smaller grids and shorter runs")
    _campaign_arguments(p)
    p.add_argument("--only", action="append", metavar="NAME",
                   help="only this experiment of the work (repeatable)")
    p.add_argument("--out", metavar="DIR", default="out/reproduce",
                   help="output directory, with the run cache in DIR/cache (default out/reproduce)")
    p.set_defaults(func=_cmd_reproduce)

    p = sub.add_parser("can-fail", help="perturb the measurements behind every judged row of an experiment's "
                                        "or a campaign's folder; list the rows that cannot fail")
    p.add_argument("dir", metavar="DIR")
    p.set_defaults(func=_cmd_can_fail)

    p = sub.add_parser("list", help="list what scenarios can name: controllers, receivers, queues, "
                                    "topologies, the TCP stack's options; and the experiments")
    p.add_argument("family", nargs="?", choices=FAMILIES, metavar="FAMILY",
                   help=f"one of {', '.join(FAMILIES)} (default: all)")
    p.set_defaults(func=_cmd_list)

    p = sub.add_parser("bench", help="measure simulator speed on fixed scenarios")
    p.add_argument("--repeat", type=_positive, default=3, help="runs per scenario (median taken)")
    p.add_argument("--out", metavar="DIR", help="also write DIR/bench.json")
    p.add_argument("--ns3", action="store_true",
                   help="also run the scenarios in ns-3 3.44, side by side (pip install ns3==3.44.post0)")
    p.set_defaults(func=_cmd_bench)

    p = sub.add_parser("trace", help="write a synthetic cellular packet-delivery trace (mahimahi format) "
                                     "for a link's trace key")
    p.add_argument("out", metavar="FILE")
    p.add_argument("--mean-mbps", type=_finite_positive, default=12.0, help="average capacity (default 12)")
    p.add_argument("--seconds", type=_finite_positive, default=60.0, help="length; the trace repeats (default 60)")
    p.add_argument("--seed", type=_non_negative, default=1)
    p.set_defaults(func=_cmd_trace)

    p = sub.add_parser("demo", help="run the examples and quick experiments, write report.html")
    p.add_argument("--out", metavar="DIR", default="out")
    p.add_argument("--jobs", type=_positive, help="worker processes (default: CPU count)")
    p.set_defaults(func=_cmd_demo)
    return parser


def _terminate(signum, frame):
    # SIGTERM ends a campaign like Ctrl-C: workers cancelled, finished runs already cached.
    raise KeyboardInterrupt


def main(argv: Optional[List[str]] = None) -> int:
    from ccbench._startup import started

    started()  # Ctrl-C is a KeyboardInterrupt again, reported below
    try:
        from ccbench.api import Interrupted, ScenarioError
    except ImportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    signal.signal(signal.SIGTERM, _terminate)
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except (UsageError, ScenarioError, OSError) as exc:
        # ScenarioError messages already read "<file>: <field>: <message>"; OSError covers an
        # output directory that cannot be written.
        message = " ".join(str(exc).split("\n"))
        print(f"error: {message}", file=sys.stderr)
        return 2
    except RuntimeError as exc:
        # A run that failed (e.g. the emulator's traffic programs): reported, not a traceback.
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 1
    except Interrupted as stop:
        summary = stop.result.summary
        done = f"at {summary['sim_s']:.2f} s of {summary['scenario']['duration_s']:g} s simulated"
        where = (f"wrote the partial run to {stop.out} (summary.json: \"partial\": true)" if stop.out
                 else "nothing written")
        print(f"error: interrupted {done}; {where}", file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
