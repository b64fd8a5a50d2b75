"""A deterministic fuzzer over the CLI's flags and the Python API (issue 24: "keep extending
your own with a fuzzer over the CLI flags and the Python API, not only the scenario parser").

Each CLI vector goes through ``ccbench.cli.main(argv)`` in this process (a subprocess per vector
would cost 0.3 s). The contract checked: ``main`` returns 0, 1, 2 or 130 and lets no exception
out; on 2, stderr is exactly one line ``error: …``; never a traceback; nothing is created
outside the test's folder. Vectors are built from valid templates by ``random.Random(seed)``
mutations with hostile values: huge and negative numbers, empty strings, NUL bytes, unicode,
100 kB strings, /dev/zero, folders, files, unknown flags.

What would make this slow or touch the machine is replaced, not the argument handling: runs of
experiments fail at once instead of simulating (``runner.execute``), nothing starts a Dask
cluster (``runner._on_dask`` runs in this process), ``bench`` measures nothing, the emulator only
validates its scenario. ``run`` simulates for real, with a 1 s scenario.
"""

import os
import random
from pathlib import Path

import pytest

import ccbench
from ccbench import cli
from ccbench.errors import UsageError

SEED = 24

TINY = """\
duration = "1s"
warmup = "0s"
seed = 1

[output]
sojourn_samples = false

[bottleneck]
rate = "2Mbps"
rtt = "20ms"
buffer = "1bdp"

[[flows]]
cca = "cubic"
name = "a"
"""

NUMBERS = ["0", "1", "2", "-1", "-0", "3.5", "1e3", "nan", "inf", "0x10", "1_000", " 1", "１", "٣",
           str(2**63), str(2**64), str(2**70), "9" * 400]
TEXTS = ["", " ", "\x00", "a\x00b", "é", "🙂" * 8, "x" * 100_000, "-", "--", "--out", "\n", "\t",
         "$(touch pwned)", "%s%n", "\udcff", "NaN", "None", "null", "tcp://", "tcp://127.0.0.1:0",
         "tcp://[::1", "http://x", "abe-fig2", "all", "experiments"]
SETS = ["seed=3", "name=\"x\"", "bottleneck.buffer=\"0.5bdp\"", "bottleneck.aqm=\"codel\"",
        "flows[0].cca=\"newreno\"", "=", "", "seed", "seed=", "a.b.c.d=1", "flows[99999999999].cca=\"cubic\"",
        "bottleneck.rate=\"abc\"", "x" * 100_000 + "=1", "seed=-1", f"seed={2**70}", "flows[0].cc.beta=nan",
        "bottleneck.buffer=\"0p\"", "\x00=1", "flows[0]=1", "flows=[]"]
SIZES = ["", "0", "-1", "1B", "1e99GB", "x", "40GB", "1KB", "nan"]


class World:
    """The test's folder with what vectors may name: a scenario, a run folder, files, folders."""

    def __init__(self, root: Path):
        self.root = root
        (root / "tiny.toml").write_text(TINY)
        (root / "a-file").write_text("not a folder")
        (root / "a-folder").mkdir()
        (root / "empty.toml").write_text("")
        (root / "binary.toml").write_bytes(bytes(range(256)))
        self.run_dir = root / "a-run"
        ccbench.run(root / "tiny.toml", out=self.run_dir)
        self.paths = ["tiny.toml", str(root / "tiny.toml"), "a-file", "a-folder", "empty.toml",
                      "binary.toml", "missing.toml", "a-file/sub", "new/deeper", "sub/../inside",
                      "/dev/zero", "/dev/null", "/etc/passwd", "/proc/self/status", "a-run", "."]
        # Outside the test's folder only files (any of them may land after --out): a vector must
        # not make a command write a run into / or /etc as root.

    def value(self, rng: random.Random) -> str:
        pool = rng.choice((NUMBERS, TEXTS, self.paths))
        return rng.choice(pool)

    def out(self, rng: random.Random) -> str:
        return rng.choice(["o/" + str(rng.randrange(4)), "a-file", "a-file/sub", "", "/dev/null",
                           "/dev/zero/sub", "o/" + "é" * 3, "x" * 5000, "\x00", "a-run"])


def _templates(world: World, rng: random.Random):
    """A valid argv for each command, with its optional flags and their value generators."""
    from ccbench.experiments.registry import experiments

    names = list(experiments())
    small = ["abe-fig2", "abe-fig5", "siad-ten-flows", "fledbat-fig3a", "rledbat-fig8"]
    pick = rng.choice
    return {
        "run": (["run", "tiny.toml"], {
            "--out": lambda: world.out(rng), "--seed": lambda: pick(NUMBERS),
            "--set": lambda: pick(SETS), "--max-memory": lambda: pick(SIZES)}),
        "experiment": (["experiment", pick(small), "--quick", "--jobs", "1"], {
            "--out": lambda: world.out(rng), "--cache": lambda: world.out(rng), "--jobs": lambda: pick(NUMBERS),
            "--scheduler": lambda: pick(TEXTS[-8:]), "--force": None, "--list": None,
            "NAME": lambda: pick(names + TEXTS)}),
        "reproduce": (["reproduce", pick(["abe", "siad"]), "--quick", "--jobs", "1", "--only", pick(small[:3])], {
            "--out": lambda: world.out(rng), "--only": lambda: pick(names[:5] + TEXTS),
            "--jobs": lambda: pick(NUMBERS), "--force": None, "WORK": lambda: pick(["abe", "all", "nope"] + TEXTS)}),
        "plot": (["plot", "a-run"], {"DIR": lambda: pick(world.paths + TEXTS)}),
        "list": (["list"], {"FAMILY": lambda: pick(["controllers", "queues", "experiments"] + TEXTS)}),
        "bench": (["bench", "--repeat", "1"], {"--repeat": lambda: pick(NUMBERS), "--out": lambda: world.out(rng)}),
        "demo": (["demo", "--jobs", "1", "--out", "o/demo"], {
            "--out": lambda: world.out(rng), "--jobs": lambda: pick(NUMBERS)}),
        "compare-emu": (["compare-emu", "--case", "cubic", "--out", "o/cmp"], {
            "--out": lambda: world.out(rng), "--duration": lambda: pick(["1s", "0s", "-1s", "1e99s"] + TEXTS),
            "--case": lambda: pick(["cubic", "bbr", "nope"] + TEXTS)}),
    }


def _mutate(template, flags, world: World, rng: random.Random):
    """The template with 1-3 hostile changes: a flag added or repeated, a positional replaced, a
    token dropped or inserted."""
    argv = list(template)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        kind = rng.random()
        flag = rng.choice(list(flags))
        if kind < 0.55 and flag.startswith("--"):
            argv += [flag] if flags[flag] is None else [flag, flags[flag]()]
        elif kind < 0.75 and not flag.startswith("--") and len(argv) > 1:
            argv[1] = flags[flag]()
        elif kind < 0.85 and len(argv) > 1:
            del argv[rng.randrange(1, len(argv))]
        else:
            argv.insert(rng.randrange(1, len(argv) + 1), world.value(rng))
    return argv


@pytest.fixture
def world(tmp_path, monkeypatch):
    """The fuzzing ground: CWD is the test's folder; heavy work replaced (module docstring)."""
    from ccbench.campaign import runner, tasks

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CCBENCH_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.setattr(runner, "execute", lambda task: tasks.Outcome(None, "fuzz: not run"))
    monkeypatch.setattr(runner, "_on_dask", lambda groups, book, emulated, jobs, scheduler, timings, offload:
                        runner._in_process(groups, book, emulated))
    monkeypatch.setattr("ccbench.bench.run_bench", lambda repeat, process=True: [])
    monkeypatch.setattr("ccbench.demo.examples_dir", lambda: tmp_path / "no-examples")

    def emulate(scenario, out=None, **kwargs):
        ccbench.validate(scenario)
        raise RuntimeError("fuzz: no emulation")

    monkeypatch.setattr("ccbench.emu.run", emulate)
    return World(tmp_path)


#: Folders outside the test's own that a vector names or could reach; none may change.
def _watched(root: Path):
    repo = Path(ccbench.__file__).resolve().parents[2]
    return [root.parent, Path("/"), Path("/dev"), Path("/etc"), repo, repo / "out", Path.home() / ".cache"]


def _listing(folders):
    return {str(f): sorted(os.listdir(f)) if f.is_dir() else None for f in folders}


def _short(argv) -> str:
    return repr([a if len(a) < 60 else a[:30] + f"…({len(a)})" for a in argv])


def check(argv, capsys, codes=None) -> str:
    """One vector through ``main``; returns what broke the contract, or ``""``. ``codes``
    counts the exit statuses."""
    import sys

    # As the real stderr does: an argument that was not UTF-8 (a surrogate) is shown escaped.
    sys.stderr.reconfigure(errors="backslashreplace")
    try:
        code = cli.main(argv)
    except SystemExit as exc:  # argparse's --help: prints and exits 0, as a CLI should
        capsys.readouterr()
        return "" if exc.code == 0 and ("-h" in argv or "--help" in argv) else f"SystemExit({exc.code})"
    except BaseException as exc:  # noqa: BLE001 - exactly what the fuzzer looks for
        capsys.readouterr()
        return f"escaped: {type(exc).__name__}: {str(exc)[:200]}"
    err = capsys.readouterr().err
    if codes is not None:
        codes[code] = codes.get(code, 0) + 1
    if code not in (0, 1, 2, 130):
        return f"exit {code}"
    if "Traceback" in err:
        return f"traceback: {err[-300:]}"
    lines = err.strip().splitlines()
    if code == 2 and (len(lines) != 1 or not lines[0].startswith("error: ")):
        return f"exit 2 with {len(lines)} stderr lines: {err[:300]!r}"
    return ""


#: Vectors per command; with the heavy work replaced the whole fuzz takes ~15 s.
PER_COMMAND = {"run": 120, "experiment": 150, "reproduce": 60, "plot": 80, "list": 100, "bench": 100,
               "demo": 40, "compare-emu": 60, "junk": 150}


def _vectors(command, world, rng):
    if command == "junk":  # no command, or a random one, and random tokens
        commands = list(PER_COMMAND)[:-1] + ["", "nope", "-h", "--", "RUN"]
        return [[rng.choice(commands)][:rng.randint(0, 1)] + [world.value(rng) for _ in range(rng.randint(0, 4))]
                for _ in range(PER_COMMAND[command])]
    vectors = []
    for _ in range(PER_COMMAND[command]):
        template, flags = _templates(world, rng)[command]
        vectors.append(_mutate(template, flags, world, rng))
    return vectors


#: Contract breaks found in code this fuzzer's author may not change (the Rust core, api.py,
#: `ccbench run`/`emu`): argv predicate → reason. Each is also its own strict xfail below.
def _known(argv) -> str:
    return ""


@pytest.mark.parametrize("command", list(PER_COMMAND))
def test_cli_fuzz(command, world, capsys):
    rng = random.Random(f"{SEED}-{command}")
    folders = _watched(world.root)
    before = _listing(folders)
    broken, codes = [], {}
    for argv in _vectors(command, world, rng):
        if _known(argv):
            continue
        problem = check(argv, capsys, codes)
        if problem:
            broken.append(f"{_short(argv)}: {problem}")
    assert _listing(folders) == before, "a file was created outside the test's folder"
    assert not broken, f"{len(broken)} vectors broke the contract:\n" + "\n".join(broken[:20])
    if command != "junk":  # some vectors must get past the checks, or the fuzz tests little
        assert codes.get(0, 0) + codes.get(1, 0) > 0, codes


# --- the Python API ---------------------------------------------------------------------------

def _hostile_values(world: World):
    loop = []
    loop.append(loop)  # a list that contains itself
    return [None, True, False, 0, -1, 3, 2**70, -2**70, 1.5, float("nan"), float("inf"), 5j, "", " ", "\x00",
            "x" * 100_000, "🙂", "\udcff", b"bytes", bytearray(b"x"), [], [None], [[]], [1.5], ["a", 1], {}, {"a": 1},
            {1: 2}, object(), (lambda *a: None), ("a",), range(3), iter([1, 2]), set(), Ellipsis, type, loop,
            Path("/dev/zero"), Path("a-file"), Path("a-folder"), "a-file/sub", "missing.toml", "/dev/null"]


def _api_calls(world: World):
    """Function → (call, valid keyword arguments). Valid values are small and cheap."""
    from ccbench.campaign.reproduce import reproduce
    from ccbench.experiments import run_experiment
    from ccbench.plot import plot_run

    tiny = str(world.root / "tiny.toml")
    return {
        "sweep": (ccbench.sweep, dict(base=tiny, grid={"bottleneck.rate": ["2Mbps"]}, seeds=[1],
                                      metric="jain_index", jobs=1, scheduler=None, cache=False, progress=False)),
        "Result.load": (ccbench.Result.load, dict(directory=str(world.run_dir))),
        "plot_run": (plot_run, dict(result=str(world.run_dir), out_dir=None)),
        "run_experiment": (run_experiment, dict(experiment="siad-ten-flows", quick=True, jobs=1, out=None,
                                                progress=None, scheduler=None, cache=None)),
        "reproduce": (reproduce, dict(work="siad", quick=True, jobs=1, out="o/r", progress=False,
                                      only=["siad-ten-flows"])),
        "run": (ccbench.run, dict(scenario=tiny, seed=None, overrides=(), out=None)),
        "validate": (ccbench.validate, dict(scenario=tiny, seed=None, overrides=())),
    }


#: Argument names that may appear as another word in a message (base is the scenario).
_NAMED_AS = {"base": ("base", "scenario", "tiny.toml", "<"), "scenario": ("scenario", "tiny.toml", "<"),
             "directory": ("directory", "run folder", "a-", "/dev", "missing"), "result": ("result", "run folder")}


def _api_problem(name, argument, value, call, kwargs) -> str:
    """What the call did wrong with ``argument=value``, or ``""``."""
    from ccbench.api import ScenarioError

    try:
        call(**{**kwargs, argument: value})
    except ScenarioError:
        return ""  # names its source and field (the core's own fuzzing covers the messages)
    except RuntimeError as exc:  # a sweep whose every run failed (runs do not run here)
        return "" if name == "sweep" and "every run failed" in str(exc) else f"RuntimeError: {exc}"[:200]
    except (TypeError, ValueError, UsageError) as exc:
        message = str(exc)
        names = _NAMED_AS.get(argument, (argument,))
        if not any(n in message for n in names):
            return f"{type(exc).__name__} not naming {argument}: {message[:150]}"
        return ""
    except BaseException as exc:  # noqa: BLE001 - what the fuzzer looks for
        return f"escaped {type(exc).__name__}: {str(exc)[:150]}"
    return ""


#: Calls that break the contract in code this test's author may not change (api.py): (function,
#: argument, which values) → the reason. Left out of the fuzz; each is a strict xfail below.
KNOWN_API: dict = {}


def _known_api(name, argument, value) -> str:
    for (known_name, known_argument, which), reason in KNOWN_API.items():
        if known_name == name and known_argument == argument and which(value):
            return reason
    return ""


def test_api_fuzz(world, capsys):
    rng = random.Random(f"{SEED}-api")
    calls, values = _api_calls(world), _hostile_values(world)
    folders = _watched(world.root)
    before = _listing(folders)
    broken = []
    for _ in range(600):
        name = rng.choice(list(calls))
        call, kwargs = calls[name]
        argument = rng.choice(list(kwargs))
        value = rng.choice(values)
        if _known_api(name, argument, value):
            continue
        if name == "plot_run" and argument == "out_dir" and isinstance(value, (str, Path)):
            continue  # a real plot (0.6 s) into a folder: covered by the CLI fuzz
        problem = _api_problem(name, argument, value, call, kwargs)
        if problem:
            broken.append(f"{name}({argument}={value!r:.40}): {problem}")
    capsys.readouterr()
    assert _listing(folders) == before, "a file was created outside the test's folder"
    assert not broken, f"{len(broken)} calls broke the contract:\n" + "\n".join(sorted(set(broken))[:30])


# --- found by the fuzzer, fixed in api._read_file -------------------------------------------------

def test_nul_in_scenario_path_names_the_scenario():
    from ccbench.api import ScenarioError

    with pytest.raises((ScenarioError, ValueError)) as caught:
        ccbench.validate("a\0b.toml")
    assert "scenario" in str(caught.value) or "a\\x00b.toml" in str(caught.value), str(caught.value)


def test_scenario_that_is_a_fifo_is_refused_not_waited_for(tmp_path):
    import threading

    from ccbench.api import ScenarioError

    fifo = tmp_path / "scenario.toml"
    os.mkfifo(fifo)
    outcome = {}

    def read():
        try:
            ccbench.validate(fifo)
        except ScenarioError as exc:
            outcome["error"] = str(exc)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(3)  # a hang guard, not a timing: a refusal takes milliseconds
    blocked = thread.is_alive()
    if blocked:  # let the reader go: a writer that closes at once gives it an empty file
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
    assert not blocked, "validate() blocked on a FIFO"
    assert "not a regular file" in outcome.get("error", "")
