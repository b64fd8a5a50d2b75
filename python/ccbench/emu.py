"""``ccbench emu``: a scenario on real Linux TCP, through our own userspace bottleneck.

The work is done by the Rust program ``ccbench-emu`` (built by ``make build`` into
``target/release/``; ``$CCBENCH_EMU`` names another): network namespaces for the hosts, a
forwarder applying each link's rate, delay, jitter, loss and queue discipline (the simulator's
code), the kernel's congestion control per flow. It needs root, and writes the same run
directory as ``ccbench run``, so :class:`~ccbench.result.Result` reads both.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

from ccbench.errors import UsageError

EMU_ENV = "CCBENCH_EMU"


def binary() -> str:
    """Path of the ``ccbench-emu`` program."""
    named = os.environ.get(EMU_ENV)
    if named:
        if not os.access(named, os.X_OK):
            raise UsageError(f"${EMU_ENV} = {named}: not an executable file")
        return named
    built = Path(__file__).resolve().parents[2] / "target" / "release" / "ccbench-emu"
    if built.is_file():
        return str(built)
    found = shutil.which("ccbench-emu")
    if found:
        return found
    raise UsageError("ccbench-emu is not built: run `make build` (or set $CCBENCH_EMU)")


def _scenario_file(scenario, tmp: Path) -> str:
    """A file path for the program: the given file, or the TOML string or dict written out."""
    from ccbench import _core
    from ccbench.api import _read

    kind, payload, source = _read(scenario)
    if kind == "toml" and os.path.isfile(source):
        return source
    text = _core.dict_to_toml(payload, source) if kind == "dict" else payload
    path = tmp / "scenario.toml"
    path.write_text(text)
    return str(path)


#: Seconds the emulator gets to remove its namespaces after Ctrl-C before it is killed.
STOP_GRACE_S = 15


def _run_to_the_end(args) -> subprocess.CompletedProcess:
    """Run the emulator. On Ctrl-C or SIGTERM it is asked to stop (SIGTERM: it removes its
    namespaces and exits) instead of being killed with them left behind."""
    import signal

    with subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        try:
            _, err = proc.communicate()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    return subprocess.CompletedProcess(args, proc.returncode, None, err)


def run(scenario, *, out, seed: Optional[int] = None, overrides: Union[Mapping[str, Any], Iterable[str]] = (),
        echo: bool = False):
    """Run ``scenario`` (a path, TOML string or dict) in the emulator; returns its
    :class:`~ccbench.result.Result`. ``overrides`` as :func:`ccbench.run` takes them. Bad
    scenarios raise ``ScenarioError`` naming the field."""
    from ccbench.api import ScenarioError, _overrides
    from ccbench.result import Result

    checked = _overrides(overrides)
    with tempfile.TemporaryDirectory(prefix="ccbench-emu-") as tmp:
        program = binary()
        source = _scenario_file(scenario, Path(tmp))
        args = [program, "run", source, "--out", str(out)]
        if seed is not None:
            args += ["--seed", str(seed)]
        for o in checked.items:
            args += ["--set", o]
        proc = _run_to_the_end(args)
    message = " ".join(proc.stderr.split("\n")).strip().removeprefix("error: ")
    if proc.returncode == 2:
        raise ScenarioError(checked.named(message, source))
    if proc.returncode != 0:
        raise RuntimeError(f"ccbench-emu failed ({proc.returncode}): {message}")
    if echo and proc.stderr:
        print(proc.stderr, end="")
    return Result.load(out)
