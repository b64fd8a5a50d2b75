"""Issue 38, item 5 (the Python half): the API speaks Python, a plain script may call
``ccbench.sweep(jobs=2)``, and Ctrl-C is one line.

- ``overrides`` takes a mapping as well as ``"key=value"`` strings, and an error about one names
  it as the caller wrote it (``overrides["duration"]``, ``overrides[0]``), never the CLI's
  ``--set``; the CLI still says ``--set``.
- A script calling ``ccbench.sweep(jobs=2)`` with no ``if __name__ == "__main__":`` guard runs
  (its worker processes do not re-run it); a process that does re-run it while starting is
  refused in one line.
- Ctrl-C at a terminal (SIGINT to the whole process group) during a campaign on two workers is
  one line and exit status 130, no worker tracebacks, no worker left behind; during the
  command's imports, one line too.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import PYTHON_DIR

import ccbench
from ccbench.cli import main

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two-cubic.toml"
GUARD = 'if __name__ == "__main__":'


def _env(**extra) -> dict:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PYTHON_DIR), extra.get("PYTHONPATH")]))
    return env


def _default_sigint():
    # A background job starts with SIGINT ignored; a terminal's foreground job has the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# ----- overrides: a mapping, and errors naming the argument ------------------------------------

def test_a_mapping_of_overrides_is_applied_like_the_strings():
    by_map = ccbench.validate(EXAMPLE, overrides={"duration": "20s", "flows[0].cca": "newreno",
                                                  "bottleneck.loss": 0.01, "flows[0].count": 3})
    by_strings = ccbench.validate(EXAMPLE, overrides=["duration=20s", "flows[0].cca=newreno",
                                                      "bottleneck.loss=0.01", "flows[0].count=3"])
    assert by_map == by_strings
    assert by_map["duration_ns"] == 20_000_000_000
    assert [f["cca"] for f in by_map["flows"]] == ["newreno"] * 3
    assert ccbench.estimate(EXAMPLE, overrides={"duration": "20s"}) == \
        ccbench.estimate(EXAMPLE, overrides=["duration=20s"])


def test_run_takes_a_mapping():
    result = ccbench.run(EXAMPLE, overrides={"duration": "1s"})
    assert result.summary["scenario"]["duration_s"] == 1


@pytest.mark.parametrize("call", ["run", "validate", "estimate"])
def test_an_error_names_the_mapping_key_not_the_cli_flag(call):
    with pytest.raises(ccbench.ScenarioError) as info:
        getattr(ccbench, call)(EXAMPLE, overrides={"duration": "1s", "flows[9].cca": "bbr"})
    message = str(info.value)
    assert message.startswith(f'{EXAMPLE}: overrides["flows[9].cca"]: index 9 out of range'), message
    assert "--set" not in message


@pytest.mark.parametrize("call", ["run", "validate", "estimate"])
def test_an_error_names_the_list_index_not_the_cli_flag(call):
    with pytest.raises(ccbench.ScenarioError) as info:
        getattr(ccbench, call)(EXAMPLE, overrides=["duration=1s", "flows..cca=bbr"])
    message = str(info.value)
    assert message.startswith(f"{EXAMPLE}: overrides[1]: malformed key"), message
    assert "--set" not in message


def test_a_string_without_a_value_names_its_index():
    # The core said "--set duration: expected key=value" for the Python call.
    with pytest.raises(ccbench.ScenarioError) as info:
        ccbench.run(EXAMPLE, overrides=["duration=1s", "duration"])
    message = str(info.value)
    assert message.startswith("overrides[1]: expected 'key=value'") and "--set" not in message
    with pytest.raises(ccbench.ScenarioError, match=r"^overrides\[0\]: not an override key"):
        ccbench.validate(EXAMPLE, overrides=["=3"])
    with pytest.raises(ccbench.ScenarioError, match=r'^overrides\["a=b"\]: not an override key'):
        ccbench.validate(EXAMPLE, overrides={"a=b": 1})


def test_a_long_key_is_named_cut_short():
    key = "x" * 300 + "[5]"
    with pytest.raises(ccbench.ScenarioError) as info:
        ccbench.validate(EXAMPLE, overrides={key: 1})
    message = str(info.value)
    assert f'overrides["{"x" * 80}…"]: index 5 out of range' in message and "--set" not in message
    assert len(message) < 600


def test_wrong_types_are_type_errors_naming_the_argument():
    with pytest.raises(TypeError, match=r"^overrides must be a mapping .* not int"):
        ccbench.validate(EXAMPLE, overrides=5)
    with pytest.raises(TypeError, match=r"^overrides must be a mapping .* not one string"):
        ccbench.validate(EXAMPLE, overrides="duration=1s")
    with pytest.raises(TypeError, match=r"^overrides\[0\]: expected a 'key=value' string, got 3 \(int\)"):
        ccbench.validate(EXAMPLE, overrides=[3])
    with pytest.raises(TypeError, match=r"^overrides\[3\]: an override key is text"):
        ccbench.validate(EXAMPLE, overrides={3: "1s"})
    with pytest.raises(TypeError, match=r'^overrides\["duration"\]: cannot write'):
        ccbench.validate(EXAMPLE, overrides={"duration": object()})
    with pytest.raises(ValueError, match=r'^overrides\["duration"\]: nan has no override form'):
        ccbench.validate(EXAMPLE, overrides={"duration": float("nan")})


def test_an_endless_generator_of_overrides_is_refused():
    def endless():
        while True:
            yield "duration=1s"

    with pytest.raises(ccbench.ScenarioError, match="^overrides: more than"):
        ccbench.validate(EXAMPLE, overrides=endless())


def test_the_cli_still_names_its_flag(capsys, tmp_path):
    assert main(["run", str(EXAMPLE), "--out", str(tmp_path / "o"), "--set", "flows[9].cca=bbr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {EXAMPLE}: --set flows[9].cca: index 9"), err
    assert main(["run", str(EXAMPLE), "--out", str(tmp_path / "o"), "--set", "duration"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {EXAMPLE}: --set duration: expected key=value"], err


@pytest.fixture
def fake_emulator(tmp_path, monkeypatch):
    """A ``ccbench-emu`` that records its arguments and refuses the override as the real one
    does (the same scenario crate): ``error: <file>: --set <key>: <message>``, exit status 2."""
    program = tmp_path / "fake-emu"
    program.write_text(textwrap.dedent(f"""\
        #!{sys.executable}
        import sys
        args = sys.argv[1:]
        open({str(tmp_path / "args")!r}, "w").write("\\n".join(args))
        key = args[args.index("--set") + 1].split("=", 1)[0]
        print(f"error: {{args[1]}}: --set {{key}}: index 9 out of range (flows has 1 entries)", file=sys.stderr)
        sys.exit(2)
        """))
    program.chmod(0o755)
    monkeypatch.setenv("CCBENCH_EMU", str(program))
    return tmp_path / "args"


def test_the_emulator_takes_a_mapping_and_names_it(fake_emulator, tmp_path):
    from ccbench import emu

    with pytest.raises(ccbench.ScenarioError) as info:
        emu.run(EXAMPLE, out=tmp_path / "o", overrides={"flows[9].cca": "bbr"})
    assert str(info.value) == f'{EXAMPLE}: overrides["flows[9].cca"]: index 9 out of range (flows has 1 entries)'
    assert 'flows[9].cca="bbr"' in fake_emulator.read_text().splitlines()
    with pytest.raises(ccbench.ScenarioError, match=r"overrides\[0\]: index 9"):
        emu.run(EXAMPLE, out=tmp_path / "o", overrides=["flows[9].cca=bbr"])


def test_the_emulator_command_still_names_its_flag(fake_emulator, capsys, tmp_path):
    assert main(["emu", str(EXAMPLE), "--out", str(tmp_path / "o"), "--set", "flows[9].cca=bbr"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {EXAMPLE}: --set flows[9].cca: index 9 out of range (flows has 1 entries)"], err


# ----- a plain script calling sweep(jobs=2) -----------------------------------------------------

def _script(tmp_path, body: str) -> Path:
    path = tmp_path / "script.py"
    path.write_text(textwrap.dedent(body))
    assert GUARD not in path.read_text()
    return path


def test_an_unguarded_script_can_sweep_on_two_workers(tmp_path):
    # A metric defined in the script reaches the workers by value: they never import the script.
    script = _script(tmp_path, f"""\
        import os
        import ccbench

        SCALE = 10

        def scaled(result, point):
            return {{"scaled": SCALE * result.summary["jain_index"], "pid": os.getpid()}}

        grid = {{"duration": ["1s"], "bottleneck.rate": ["10Mbps", "20Mbps"]}}
        df = ccbench.sweep({str(EXAMPLE)!r}, grid, seeds=[1, 2], metric=scaled, jobs=2, cache=False,
                           progress=False)
        assert list(df["error"]) == [""] * 4, list(df["error"])
        assert all(5 < v <= 10 for v in df["scaled"]), list(df["scaled"])
        assert os.getpid() not in set(df["pid"]), "the runs went to workers"
        print("ROWS", len(df))
        """)
    other_dir = tmp_path / "elsewhere"
    other_dir.mkdir()
    proc = subprocess.run([sys.executable, str(script)], cwd=other_dir, env=_env(), capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "ROWS 4"
    assert "Traceback" not in proc.stderr and "Nanny" not in proc.stderr, proc.stderr[-3000:]


def test_a_process_re_running_the_script_while_starting_is_refused_in_one_line(tmp_path):
    # What a worker restarted by Dask would do with an unguarded script: re-run it as it starts.
    script = _script(tmp_path, f"""\
        import multiprocessing
        import ccbench

        ccbench.sweep({str(EXAMPLE)!r}, {{"duration": ["1s"]}}, jobs=1, cache=False, progress=False)
        print("SWEPT", multiprocessing.parent_process() is None, flush=True)
        child = multiprocessing.get_context("spawn").Process(target=print, args=("child ran",))
        child.start()
        child.join(120)
        print("CHILD", child.exitcode, flush=True)
        """)
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["SWEPT", "True", "CHILD", "1"], proc.stdout
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr[-3000:]
    assert err[0].startswith("error: sweep: ") and err[0].endswith(f"put the call under {GUARD}"), err


# ----- Ctrl-C --------------------------------------------------------------------------------

def _workers_of(pid: int) -> list:
    import psutil

    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for child in children:
        try:
            if "spawn_main" in " ".join(child.cmdline()):
                found.append(child)
        except psutil.Error:
            pass
    return found


def _interrupt_when_workers_run(proc, count: int = 2, timeout: float = 120) -> list:
    """Wait until ``proc`` has ``count`` Dask worker processes, then send SIGINT to its whole
    process group, as a terminal's Ctrl-C does. Returns the workers."""
    deadline = time.monotonic() + timeout
    workers: list = []
    while time.monotonic() < deadline and proc.poll() is None:
        workers = _workers_of(proc.pid)
        if len(workers) >= count:
            break
        time.sleep(0.05)
    assert len(workers) >= count, "the campaign never started its workers"
    time.sleep(0.5)  # the workers are up and running their first runs
    assert proc.poll() is None, "the campaign ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    return workers


def _communicate(proc, timeout=90):
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise


def test_ctrl_c_in_a_campaign_is_one_line_and_leaves_no_worker(tmp_path):
    import psutil

    args = [sys.executable, "-m", "ccbench", "experiment", "abe-fig4", "--quick", "--jobs", "2",
            "--out", str(tmp_path / "out"), "--cache", str(tmp_path / "cache"), "--force"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_default_sigint)
    workers = _interrupt_when_workers_run(proc)
    _, err = _communicate(proc)
    assert proc.returncode == 130, err[-3000:]
    assert err.strip().splitlines() == ["error: interrupted"], err[-3000:]
    gone = psutil.wait_procs(workers, timeout=30)[1] == []
    assert gone, "a worker outlived the campaign"


def test_ctrl_c_in_a_script_sweeping_on_two_workers_prints_no_worker_traceback(tmp_path):
    script = _script(tmp_path, f"""\
        import sys
        import ccbench

        try:
            ccbench.sweep({str(EXAMPLE)!r}, {{"duration": ["300s"], "bottleneck.rate": ["1Gbps"]}},
                          seeds=[1, 2, 3, 4], jobs=2, cache=False, progress=False)
        except KeyboardInterrupt:
            print("stopped", file=sys.stderr)
            sys.exit(130)
        """)
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)
    _interrupt_when_workers_run(proc)
    _, err = _communicate(proc)
    assert proc.returncode == 130 and err.strip().splitlines() == ["stopped"], err[-3000:]


@pytest.fixture
def slow_import(tmp_path):
    """A module the command imports after ccbench's first line (argparse, by ccbench.cli) that
    announces itself on stdout and then takes its time, so Ctrl-C lands in the middle of it."""
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "argparse.py").write_text(textwrap.dedent("""\
        import sys, time
        print("importing", flush=True)
        for _ in range(600):
            time.sleep(0.1)
        sys.exit("the import was not interrupted")
        """))
    return str(shadow)


@pytest.mark.parametrize("how", ["module", "console script"])
def test_ctrl_c_while_the_command_imports_is_one_line(tmp_path, slow_import, how):
    if how == "module":
        args = [sys.executable, "-m", "ccbench", "list"]
    else:  # what pip's `ccbench` wrapper does
        wrapper = tmp_path / "ccbench"
        wrapper.write_text("import re\nimport sys\nfrom ccbench.cli import main\n"
                           "if __name__ == '__main__':\n    sys.exit(main())\n")
        args = [sys.executable, str(wrapper), "list"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=_env(PYTHONPATH=slow_import), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=_default_sigint)
    try:
        assert proc.stdout.readline().strip() == "importing"
    except BaseException:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    os.killpg(proc.pid, signal.SIGINT)
    _, err = _communicate(proc, timeout=60)
    assert proc.returncode == 130, err[-3000:]
    assert err.strip().splitlines() == ["error: interrupted"], err[-3000:]


def test_importing_ccbench_in_a_script_leaves_ctrl_c_alone(tmp_path):
    code = ("import signal, ccbench, ccbench.cli\n"
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    proc = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True, text=True,
                          timeout=120, preexec_fn=_default_sigint)
    assert proc.stdout.strip() == "True", proc.stderr
