"""Issue 24, the Python side: hostile input to the CLI and the API ends in one line, before any
work, never a traceback or a hang.

A: a bad output folder is refused before any run. B: Dask — an absurd --jobs is capped, a
--scheduler that is no Dask scheduler times out with one line. C: a damaged run folder under
`ccbench plot` / Result.load. D: wrong argument types and values in the Python API.
"""

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import ccbench
from ccbench import cli
from ccbench.errors import UsageError
from ccbench.outdir import check_out_dir

PYTHON_DIR = Path(ccbench.__file__).resolve().parents[1]

TINY = """\
duration = "1s"
warmup = "0s"
seed = 1

[bottleneck]
rate = "2Mbps"
rtt = "20ms"
buffer = "1bdp"

[[flows]]
cca = "cubic"
name = "a"
"""


def one_error(capsys, code):
    """The CLI's contract for bad input: exit 2, exactly one stderr line `error: …`."""
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# --- A: output folders are checked before any work ---------------------------------------------

@pytest.fixture
def no_work(monkeypatch):
    """Every command's work replaced by a recorder: a bad --out must stop before it."""
    calls = []

    def record(name):
        def stub(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} ran despite a bad output folder")
        return stub

    import ccbench.bench
    import ccbench.campaign.reproduce
    import ccbench.compare_emu
    import ccbench.demo
    import ccbench.experiments.runner

    monkeypatch.setattr(ccbench.experiments.runner, "run_experiment", record("experiment"))
    monkeypatch.setattr(ccbench.campaign.reproduce, "reproduce", record("reproduce"))
    monkeypatch.setattr(ccbench.demo, "demo", record("demo"))
    monkeypatch.setattr(ccbench.bench, "main", record("bench"))
    monkeypatch.setattr(ccbench.compare_emu, "main", record("compare-emu"))
    return calls


def _bad_outs(tmp_path):
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    return {"file": (str(a_file), "is a file, not a folder"),
            "under a file": (str(a_file / "sub"), "cannot create"),
            "empty": ("", "empty path")}


COMMANDS = [
    ["experiment", "abe-fig2", "--quick", "--jobs", "1", "--out"],
    ["experiment", "abe-fig2", "--quick", "--jobs", "1", "--cache"],
    ["reproduce", "abe", "--quick", "--jobs", "1", "--out"],
    ["demo", "--jobs", "1", "--out"],
    ["bench", "--repeat", "1", "--out"],
    ["compare-emu", "--out"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c[0]} {c[-1]}")
def test_bad_output_folder_fails_before_any_work(command, tmp_path, monkeypatch, capsys, no_work):
    monkeypatch.chdir(tmp_path)
    flag = command[-1]
    for what, (path, expected) in _bad_outs(tmp_path).items():
        line = one_error(capsys, cli.main(command + [path]))
        assert line.startswith(f"error: {flag}: ") and expected in line, (what, line)
    assert no_work == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # nothing created


def test_reproduce_refuses_a_file_where_its_cache_goes(tmp_path, capsys, no_work):
    (tmp_path / "cache").write_text("")
    line = one_error(capsys, cli.main(["reproduce", "abe", "--out", str(tmp_path)]))
    assert line.startswith("error: --out: ") and "cache is a file" in line
    assert no_work == []


def test_check_out_dir_accepts_folders_it_could_create(tmp_path):
    assert check_out_dir(str(tmp_path)) == tmp_path
    assert check_out_dir(str(tmp_path / "new" / "deeper")) == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # the check creates nothing


def test_check_out_dir_messages(tmp_path):
    a_file = tmp_path / "f"
    a_file.write_text("")
    with pytest.raises(UsageError, match=rf"^--out: {a_file} is a file, not a folder$"):
        check_out_dir(str(a_file))
    with pytest.raises(UsageError, match=r"^--cache: /dev/null is not a folder$"):
        check_out_dir("/dev/null", "--cache")
    with pytest.raises(UsageError, match=rf"^--out: cannot create {a_file}/x/y: {a_file} is a file"):
        check_out_dir(str(a_file / "x" / "y"))
    with pytest.raises(UsageError, match="^--out: empty path"):
        check_out_dir("")
    with pytest.raises(UsageError, match="NUL"):
        check_out_dir("a\0b")
    with pytest.raises(UsageError, match="path too long"):
        check_out_dir(str(tmp_path / ("x" * 100_000)))
    link = tmp_path / "dangling"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="broken symbolic link"):
        check_out_dir(str(link))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: os.access is always true")
def test_check_out_dir_refuses_an_unwritable_folder(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(UsageError, match="folder not writable"):
            check_out_dir(str(locked))
        with pytest.raises(UsageError, match="is not writable"):
            check_out_dir(str(locked / "sub"))
    finally:
        locked.chmod(0o700)


# --- B: Dask: an absurd --jobs is capped; a --scheduler that is not Dask ends in one line -------

class _FakeScheduler:
    """A TCP port that accepts and then never answers ("silent") or answers bytes that are not
    Dask's ("garbage": an HTTP reply, whose first 8 bytes read as a frame count of exabytes)."""

    def __init__(self, mode):
        self.mode, self.conns = mode, []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.address = f"tcp://127.0.0.1:{self.sock.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        import random

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return  # closed
            self.conns.append(conn)  # kept open: "silent" must not look like a refusal
            if self.mode == "garbage":
                conn.sendall(b"HTTP/1.1 200 OK\r\n\r\n" + random.Random(24).randbytes(4096))

    def close(self):
        for conn in self.conns:
            conn.close()
        self.sock.close()


def _ccbench(*args, cwd, timeout=60, env=None):
    environ = dict(os.environ, **(env or {}))
    environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "ccbench", *args], capture_output=True, text=True,
                          cwd=cwd, env=environ, timeout=timeout)


@pytest.mark.parametrize("mode", ["silent", "garbage"])
def test_scheduler_that_is_not_dask_is_one_line_error(mode, tmp_path):
    fake = _FakeScheduler(mode)
    try:
        # A short timeout keeps the test quick; the default (10 s) is tested below. The
        # subprocess timeout only guards against the old 90 s hang.
        proc = _ccbench("experiment", "abe-fig2", "--quick", "--scheduler", fake.address,
                        "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"),
                        cwd=tmp_path, timeout=40, env={"CCBENCH_SCHEDULER_TIMEOUT": "3"})
    finally:
        fake.close()
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: --scheduler {fake.address}: cannot reach a Dask scheduler (")
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    assert ("no answer within 3 s" if mode == "silent" else "something else answers") in lines[0]


def test_scheduler_probe_in_process(capsys):
    from ccbench.campaign.runner import SCHEDULER_TIMEOUT_S, probe_scheduler

    assert SCHEDULER_TIMEOUT_S == 10.0
    fake = _FakeScheduler("silent")
    try:
        with pytest.raises(UsageError, match=r"cannot reach a Dask scheduler \(no answer within 1 s\)"):
            probe_scheduler(fake.address, timeout=1)
    finally:
        fake.close()
    with socket.socket() as free:  # bound, not listening: the port refuses at once
        free.bind(("127.0.0.1", 0))
        address = f"tcp://127.0.0.1:{free.getsockname()[1]}"
        with pytest.raises(UsageError, match=r"\(cannot connect: Connection refused\)"):
            probe_scheduler(address, timeout=5)
    assert capsys.readouterr().err == ""  # Dask logged nothing of it


@pytest.fixture
def dask_recorder(monkeypatch):
    """Runs that would go to Dask run here instead; records how many workers were asked for."""
    from ccbench.campaign import runner

    asked = []

    def in_process(groups, book, emulated, jobs, scheduler, timings, offload):
        asked.append(jobs)
        runner._in_process(groups, book, emulated)

    monkeypatch.setattr(runner, "_on_dask", in_process)
    return asked


def test_absurd_jobs_are_capped_with_a_note(dask_recorder, capsys):
    from ccbench.campaign.runner import JOBS_PER_CPU, max_jobs

    most = max_jobs()
    assert 1 <= most <= (os.cpu_count() or 1) * JOBS_PER_CPU
    frame = ccbench.sweep(TINY, {"bottleneck.rate": ["2Mbps", "3Mbps"]}, jobs=100_000, cache=False,
                          progress=False)
    assert list(frame["error"]) == ["", ""]
    assert dask_recorder == [most]
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("note: --jobs 100000 is more than this machine can hold; "
                                               f"using {most} workers"), err


def test_cli_experiment_caps_jobs(dask_recorder, tmp_path, monkeypatch, capsys):
    from ccbench.campaign import tasks
    from ccbench.campaign.runner import max_jobs

    # The runs themselves are not the point: each fails at once (and is then not cached).
    monkeypatch.setattr("ccbench.campaign.runner.execute", lambda task: tasks.Outcome(None, "skipped"))
    code = cli.main(["experiment", "abe-fig2", "--quick", "--jobs", "100000", "--out", str(tmp_path / "o"),
                     "--cache", str(tmp_path / "c")])
    assert code == 1  # every run "failed"
    assert dask_recorder == [max_jobs()]
    assert "note: --jobs 100000 is more than this machine can hold" in capsys.readouterr().err


# --- C: a damaged run folder: one line naming the file and what is wrong -----------------------

@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("run") / "good"
    ccbench.run(TINY, out=out)
    return out


def _damaged(run_folder, tmp_path, damage):
    import shutil

    folder = tmp_path / "damaged"
    shutil.copytree(run_folder, folder)
    damage(folder)
    return folder


DAMAGES = {
    "truncated flows": (lambda d: (d / "flows.parquet").write_bytes((d / "flows.parquet").read_bytes()[:100]),
                        "flows.parquet: damaged Parquet file ("),
    "garbage summary": (lambda d: (d / "summary.json").write_bytes(b'{"flows": [1, \x00\xff'),
                        "summary.json: damaged JSON ("),
    "summary a list": (lambda d: (d / "summary.json").write_text("[1, 2]"),
                       "summary.json: not a run summary (a JSON list, expected an object)"),
    "missing links": (lambda d: (d / "links.parquet").unlink(),
                      "links.parquet: missing; not a complete run folder"),
    "links a folder": (lambda d: ((d / "links.parquet").unlink(), (d / "links.parquet").mkdir()),
                       "links.parquet: not a regular file"),
    "owd a device": (lambda d: ((d / "owd.parquet").unlink(), (d / "owd.parquet").symlink_to("/dev/zero")),
                     "owd.parquet: not a regular file"),
    "foreign parquet": (lambda d: (d / "flows.parquet").write_bytes((d / "owd.parquet").read_bytes()),
                        "flows.parquet: no column 'cwnd_bytes'"),
}


@pytest.mark.parametrize("what", DAMAGES)
def test_plot_on_a_damaged_run_folder_is_one_line(what, run_folder, tmp_path, capsys):
    damage, expected = DAMAGES[what]
    folder = _damaged(run_folder, tmp_path, damage)
    line = one_error(capsys, cli.main(["plot", str(folder)]))
    assert line.startswith(f"error: {folder}/") and expected in line, line
    if "damaged" in expected or "not a run summary" in expected:
        assert line.endswith("rerun the scenario with --out"), line


def test_result_load_names_the_damaged_file(run_folder, tmp_path):
    from ccbench.errors import RunFolderError

    folder = _damaged(run_folder, tmp_path, DAMAGES["truncated flows"][0])
    with pytest.raises(ValueError, match=r"flows.parquet: damaged Parquet file") as caught:
        ccbench.Result.load(folder)
    assert isinstance(caught.value, RunFolderError)
    with pytest.raises(RunFolderError, match="not a run folder"):
        ccbench.Result.load(tmp_path / "nowhere")
    with pytest.raises(TypeError, match="directory must be a run folder path"):
        ccbench.Result.load(5)
    assert ccbench.Result.load(run_folder).summary["flows"][0]["name"] == "a"


def test_plot_run_argument_types(run_folder):
    from ccbench.plot import plot_run

    with pytest.raises(TypeError, match="result must be a Result or a run folder path"):
        plot_run(3.5)
    with pytest.raises(ValueError, match="out_dir is required"):
        plot_run(ccbench.Result.load(run_folder))
    with pytest.raises(TypeError, match="out_dir must be a folder path"):
        plot_run(ccbench.Result.load(run_folder), out_dir=7)


# --- D: wrong argument types and values in the Python API name the argument -------------------

SWEEP_BAD = [
    (dict(grid={"bottleneck.rate": []}), ValueError, r"^sweep: grid\['bottleneck.rate'\] is empty"),
    (dict(grid={"bottleneck.rate": "5Mbps"}), TypeError,
     r"^sweep: grid\['bottleneck.rate'\] must be a list of values, not str \('5Mbps'\); for one value write \['5Mbps'\]"),
    (dict(grid={"bottleneck.rate": 5}), TypeError, r"grid\['bottleneck.rate'\] must be a list of values, not int"),
    (dict(grid={"bottleneck.rate": [object()]}), ValueError, r"grid\['bottleneck.rate'\]\[0\] = <object"),
    (dict(grid={"bottleneck.rate": [float("nan")]}), ValueError, r"grid\['bottleneck.rate'\]\[0\] = nan"),
    (dict(grid={1: ["5Mbps"]}), TypeError, r"^sweep: grid key 1 must be an override key"),
    (dict(grid={"": ["5Mbps"]}), ValueError, r"^sweep: grid key '' is no override key"),
    (dict(grid=["bottleneck.rate"]), TypeError, r"^sweep: grid must map override keys"),
    (dict(grid={f"flows[0].k{i}": [1, 2] for i in range(64)}), ValueError, r"more than 1000000"),
    (dict(seeds="12"), TypeError, r"^sweep: seeds must be a count .* or a list of ints, not str \('12'\)"),
    (dict(seeds=["1"]), TypeError, r"^sweep: seeds\[0\] must be an int, not str"),
    (dict(seeds=[1.5]), TypeError, r"^sweep: seeds\[0\] must be an int, not float"),
    (dict(seeds=[-1]), ValueError, r"^sweep: seeds\[0\] must be between 0 and 2\*\*64-1"),
    (dict(seeds=[2**64]), ValueError, r"^sweep: seeds\[0\] must be between"),
    (dict(seeds=0), ValueError, r"^sweep: seeds, as a count, must be between 1"),
    (dict(seeds=True), TypeError, r"^sweep: seeds must be a count"),
    (dict(seeds=[]), ValueError, r"^sweep: seeds is empty"),
    (dict(jobs=0), ValueError, r"^sweep: jobs must be at least 1"),
    (dict(jobs=-3), ValueError, r"^sweep: jobs must be at least 1"),
    (dict(jobs=2.0), TypeError, r"^sweep: jobs must be a positive int"),
    (dict(jobs="4"), TypeError, r"^sweep: jobs must be a positive int"),
    (dict(scheduler=5), TypeError, r"^sweep: scheduler must be a Dask scheduler address"),
    (dict(scheduler="localhost"), ValueError, r"^sweep: scheduler must be a Dask scheduler address"),
    (dict(metric=42), TypeError, r"^sweep: metric must be a summary path"),
    (dict(metric=[]), TypeError, r"^sweep: metric must be a summary path"),
    (dict(cache=5), TypeError, r"^sweep: cache must be True, False or a folder path"),
    (dict(cache=""), UsageError, r"^sweep: cache: empty path"),
    (dict(progress="yes"), TypeError, r"^sweep: progress must be True, False or a function"),
]


@pytest.mark.parametrize("bad,kind,message", SWEEP_BAD, ids=lambda v: repr(v)[:50] if isinstance(v, dict) else "")
def test_sweep_names_the_bad_argument(bad, kind, message, monkeypatch):
    from ccbench.campaign import runner

    # Checked before any run: a sweep that got this far would be a bug of the check.
    monkeypatch.setattr(runner, "run_groups", lambda *a, **k: pytest.fail("a run started"))
    arguments = {"grid": {"bottleneck.rate": ["2Mbps"]}, "jobs": 1, "cache": False, "progress": False, **bad}
    with pytest.raises(kind, match=message) as caught:
        ccbench.sweep(TINY, **arguments)
    assert isinstance(caught.value, UsageError)  # and so one line from the CLI


def test_sweep_seed_count_and_one_value_lists():
    frame = ccbench.sweep(TINY, {"bottleneck.rate": ("2Mbps",)}, seeds=2, jobs=1, cache=False, progress=False)
    assert frame["seed"].tolist() == [1, 2] and frame["error"].tolist() == ["", ""]


def test_run_experiment_and_reproduce_name_the_bad_argument(tmp_path, monkeypatch):
    from ccbench.campaign import runner
    from ccbench.campaign.reproduce import reproduce
    from ccbench.experiments import run_experiment

    monkeypatch.setattr(runner, "run_groups", lambda *a, **k: pytest.fail("a run started"))
    a_file = tmp_path / "f"
    a_file.write_text("")
    cases = [
        (lambda: run_experiment(42), TypeError, "experiment must be an Experiment or a name"),
        (lambda: run_experiment("nope"), ValueError, "experiment: unknown experiment 'nope'"),
        (lambda: run_experiment("abe-fig2", jobs=0), ValueError, "jobs must be at least 1"),
        (lambda: run_experiment("abe-fig2", scheduler="x"), ValueError, "scheduler must be a Dask"),
        (lambda: run_experiment("abe-fig2", out=a_file), UsageError, f"out: {a_file} is a file"),
        (lambda: run_experiment("abe-fig2", cache=a_file), UsageError, f"cache: {a_file} is a file"),
        (lambda: run_experiment("abe-fig2", progress=3), TypeError, "progress must be"),
        (lambda: reproduce("abe", only="abe-fig2", out=tmp_path), TypeError,
         "reproduce: only must be a list of experiment names, not str"),
        (lambda: reproduce(7, out=tmp_path), TypeError, "reproduce: work must be one of .*; not int"),
        (lambda: reproduce("nope", out=tmp_path), ValueError, "reproduce: unknown work 'nope'"),
        (lambda: reproduce("abe", jobs=-3, out=tmp_path), ValueError, "jobs must be at least 1"),
        (lambda: reproduce("abe", out=a_file), UsageError, f"out: {a_file} is a file"),
    ]
    for call, kind, message in cases:
        with pytest.raises(kind, match=message) as caught:
            call()
        assert isinstance(caught.value, UsageError), message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]  # nothing written


# --- found by the fuzzer (test_fuzz_cli.py) ---------------------------------------------------

def test_out_that_is_not_utf8_is_refused_before_the_runs(tmp_path, capsys, no_work):
    # `--out $'o\xff'` reaches Python as a surrogate; pyarrow then failed with a traceback
    # after every run, leaving the folder behind.
    line = one_error(capsys, cli.main(["experiment", "abe-fig2", "--out", str(tmp_path / "o\udcff")]))
    assert line == f"error: --out: {tmp_path}/o\\udcff: not valid UTF-8; give a folder name in UTF-8"
    assert no_work == [] and list(tmp_path.iterdir()) == []


def test_result_load_of_a_very_long_name_is_a_clear_error():
    from ccbench.errors import RunFolderError

    with pytest.raises(RunFolderError, match=r"\(100000 characters\): not a run folder"):
        ccbench.Result.load("x" * 100_000)
