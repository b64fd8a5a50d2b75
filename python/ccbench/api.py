"""The Python API: :func:`run` a scenario and get a :class:`Result`; :func:`validate` one.

Everything numeric comes from the Rust core, and so does every reading of a scenario (units,
defaults, overrides): this module only hands the scenario over and wraps what comes back.
"""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple, Union

try:
    from ccbench import _core
except ImportError as exc:  # pragma: no cover - only when the extension was never built
    raise ImportError(
        "ccbench._core (the Rust simulator) is not built; run `make build` in the repository"
    ) from exc

from ccbench.outdir import check_run_dir
from ccbench.result import SERIES, SERIES_COLUMNS, Result

__all__ = ["Interrupted", "Result", "SERIES", "SERIES_COLUMNS", "ScenarioError", "controllers",
           "estimate", "registry", "run", "validate", "version"]

ScenarioError = _core.ScenarioError

#: Largest scenario file read: real ones are a few kB, and `ccbench run /dev/zero` must not fill
#: the memory before it is found not to be TOML.
MAX_SCENARIO_BYTES = 1 << 20


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM in the CLI). ``result`` holds what it simulated,
    summarised up to ``result.summary["sim_s"]`` and marked ``summary["partial"] = True``;
    ``out`` is where it was saved (None when :func:`run` had no ``out``)."""

    def __init__(self, result: Result, out: Optional[Path]):
        super().__init__("interrupted")
        self.result = result
        self.out = out

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def controllers() -> list:
    """Names of the congestion controllers the core knows."""
    return list(_core.controllers())


def version() -> str:
    """Version of the Rust core."""
    return _core.version()


def registry() -> dict:
    """What the core can build, by family: ``controllers``, ``receivers``, ``queues``,
    ``topologies``; each entry has ``name``, ``aliases``, ``summary`` and ``params``."""
    return _core.registry()


def _looks_like_path(text: str) -> bool:
    # A TOML document always has a newline or an `=`; a file name never needs either.
    return text.endswith(".toml") or ("\n" not in text and "=" not in text)


def _read(scenario: Scenario) -> Tuple[str, Any, str]:
    """``(kind, payload, source)``: kind ``"dict"`` or ``"toml"``; source names it in errors."""
    if isinstance(scenario, Mapping):
        return "dict", dict(scenario), "<dict>"
    if isinstance(scenario, os.PathLike) or (
            isinstance(scenario, str) and (os.path.isfile(scenario) or _looks_like_path(scenario))):
        source = os.fspath(scenario)
        return "toml", _read_file(source), source
    if isinstance(scenario, str):
        return "toml", scenario, "<string>"
    raise TypeError(f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}")


def _read_file(source: str) -> str:
    """A scenario file's text, refused if it is not a regular file or larger than
    :data:`MAX_SCENARIO_BYTES` (read with that cap, so a device never fills the memory)."""
    if "\0" in source:
        raise ScenarioError(f"{source!r}: a file name cannot contain a NUL character")
    try:
        # Non-blocking, so a FIFO is refused rather than waited on for ever.
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ScenarioError(f"{source}: not a regular file")
            data = f.read(MAX_SCENARIO_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ScenarioError(f"{source}: cannot read file: {reason}") from None
    if len(data) > MAX_SCENARIO_BYTES:
        raise ScenarioError(f"{source}: larger than {MAX_SCENARIO_BYTES >> 20} MiB; a scenario file is "
                            f"a few kB of TOML")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{source}: cannot read file: not UTF-8 text ({exc.reason} at byte "
                            f"{exc.start})") from None


def _overrides(overrides: Iterable[str]) -> List[str]:
    if isinstance(overrides, (str, bytes)):
        raise TypeError("overrides must be a list of 'key=value' strings, not one string")
    try:
        items = list(overrides)
    except TypeError:
        raise TypeError(f"overrides must be a list of 'key=value' strings, not "
                        f"{type(overrides).__name__}") from None
    for item in items:
        if not isinstance(item, str):
            raise TypeError(f"overrides must be 'key=value' strings, got {item!r} "
                            f"({type(item).__name__})")
    return items


def _progress_printer(duration_ns: int) -> Callable[[int], None]:
    """A progress line on stderr (simulated time, wall time, ETA), redrawn at most twice a
    second, for runs the core calls back while they run."""
    start = time.monotonic()
    last = [0.0]

    def show(now_ns: int) -> None:
        wall = time.monotonic() - start
        if wall - last[0] < 0.5:
            return
        last[0] = wall
        done = now_ns / max(duration_ns, 1)
        eta = wall / done - wall if done > 0 else float("nan")
        sys.stderr.write(f"\r  simulated {now_ns / 1e9:.1f} of {duration_ns / 1e9:.1f} s ({done:.0%}), "
                         f"wall {wall:.1f} s, ETA {eta:.0f} s ")
        sys.stderr.flush()

    return show


def _free_bytes(path: Path) -> Optional[int]:
    """Free bytes on the file system holding ``path`` (or its nearest existing ancestor)."""
    import shutil

    for place in [path, *path.absolute().parents]:
        if place.exists():
            try:
                return shutil.disk_usage(place).free
            except OSError:
                return None
    return None


def _check_trace_space(kind, payload, source, overrides, seed, out) -> None:
    """Refuse, before running, pcap traces (``output.pcap``) that would not fit on the disk they
    are written to: first a temporary folder, then ``out``."""
    import tempfile

    estimate = (_core.estimate_dict if kind == "dict" else _core.estimate_toml)(payload, source, overrides, seed)
    need = estimate["pcap_bytes"]
    places = [Path(tempfile.gettempdir())] + ([Path(out)] if out is not None else [])
    for place in places:
        free = _free_bytes(place)
        if need and free is not None and need > free:
            raise ScenarioError(f"{source}: output.pcap: the traces would take about {need / 1e9:.1f} GB, "
                                f"more than the {free / 1e9:.1f} GB free on {place}; trace fewer links "
                                f"or a shorter run")


def run(scenario: Scenario, *, seed: Optional[int] = None, overrides: Iterable[str] = (),
        out: Union[str, "os.PathLike[str]", None] = None,
        max_memory: Union[int, str, None] = None, progress: bool = False) -> Result:
    """Run one scenario and return its :class:`Result`.

    ``scenario`` is a path to a TOML file (a ``PathLike``, or a ``str`` naming an existing file or
    ending in ``.toml``), a TOML document as a string, or a dict with the same structure.
    ``overrides`` are ``"key=value"`` strings (``"bottleneck.rate=20Mbps"``) applied by the core;
    ``seed`` replaces the scenario's seed. With ``out`` the result is also saved there.
    Invalid scenarios raise :class:`ScenarioError` whose message names the source and field.

    Before running, the core estimates what the run will hold in memory; one above
    ``max_memory`` (bytes, or a size like ``"40GB"``; default three quarters of this machine's
    memory) is refused with a :class:`ScenarioError` naming the field that drives the cost.
    ``progress=True`` draws a progress line on stderr. Ctrl-C stops the run within a fraction
    of a second: what it simulated is saved to ``out`` (marked ``"partial": true`` in
    ``summary.json``) and :class:`Interrupted` is raised with it.
    """
    if out is not None:
        out = check_run_dir(out, "out")
    overrides = _overrides(overrides)
    kind, payload, source = _read(scenario)
    function = _core.run_dict if kind == "dict" else _core.run_toml
    if "pcap" in str(payload) or any("pcap" in o for o in overrides):
        _check_trace_space(kind, payload, source, overrides, seed, out)
    watch = None
    if progress:
        check = _core.validate_dict if kind == "dict" else _core.validate_toml
        watch = _progress_printer(check(payload, source, overrides, seed)["duration_ns"])
    try:
        raw = function(payload, source, overrides, seed, max_memory=max_memory, progress=watch)
    finally:
        if watch is not None:
            sys.stderr.write("\r\033[K")
    result = Result(raw["summary"], raw["series"])
    if out is not None:
        result.save(out)
    if result.summary.get("partial"):
        raise Interrupted(result, None if out is None else Path(out))
    return result


def validate(scenario: Scenario, *, seed: Optional[int] = None,
             overrides: Iterable[str] = ()) -> dict:
    """The scenario as the core validated it: unit-free (``duration_ns``, ``rate_bps``, …),
    defaults filled in, overrides applied, topology expanded to ``links`` and ``flows``.

    Takes the same scenario forms as :func:`run`; raises :class:`ScenarioError` likewise.
    """
    kind, payload, source = _read(scenario)
    function = _core.validate_dict if kind == "dict" else _core.validate_toml
    return function(payload, source, _overrides(overrides), seed)


def estimate(scenario: Scenario, *, seed: Optional[int] = None, overrides: Iterable[str] = ()) -> dict:
    """What running the scenario would cost, as the core estimates it before every run (an upper
    bound: links busy all the time): ``packets``, ``events``, ``series_rows``, ``memory_bytes``,
    the ``field`` that drives the memory, and ``memory_limit``, this machine's default limit
    (:func:`run` refuses a scenario above its ``max_memory``, by default that limit)."""
    overrides = _overrides(overrides)
    kind, payload, source = _read(scenario)
    function = _core.estimate_dict if kind == "dict" else _core.estimate_toml
    return function(payload, source, overrides, seed)
