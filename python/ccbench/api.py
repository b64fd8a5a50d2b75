"""The Python API: :func:`run` a scenario and get a :class:`Result`; :func:`validate` one.

Everything numeric comes from the Rust core, and so does every reading of a scenario (units,
defaults, overrides): this module only hands the scenario over and wraps what comes back.
"""

from __future__ import annotations

import itertools
import os
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

from ccbench.errors import ArgumentTypeError
from ccbench.outdir import check_run_dir
from ccbench.result import SERIES, SERIES_COLUMNS, Result

__all__ = ["Interrupted", "MemoryLimitExceeded", "Result", "SERIES", "SERIES_COLUMNS", "ScenarioError", "controllers",
           "estimate", "registry", "run", "validate", "version"]

ScenarioError = _core.ScenarioError

#: Largest scenario file read: real ones are a few kB, and `ccbench run /dev/zero` must not fill
#: the memory before it is found not to be TOML (the core's cap for the kind "scenario").
MAX_SCENARIO_BYTES = _core.input_cap("scenario")


class Interrupted(KeyboardInterrupt):
    """A run stopped by Ctrl-C (or SIGTERM in the CLI). ``result`` holds what it simulated,
    summarised up to ``result.summary["sim_s"]`` and marked ``summary["partial"] = True``;
    ``out`` is where it was saved (None when :func:`run` had no ``out``)."""

    def __init__(self, result: Result, out: Optional[Path]):
        super().__init__("interrupted")
        self.result = result
        self.out = out

class MemoryLimitExceeded(RuntimeError):
    """A run stopped because this process's resident memory passed ``max_memory`` while it ran
    (the estimate checked before the run did not foresee it). ``result`` holds what it simulated,
    marked ``summary["partial"] = True`` with the reason in ``summary["stopped"]``; ``out`` is
    where it was saved (None without ``out``)."""

    def __init__(self, result: Result, out: Optional[Path]):
        where = f"; the partial run is in {out}" if out is not None else ""
        super().__init__(f"{result.summary['stopped']}{where}")
        self.result = result
        self.out = out


Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]
#: Overrides: ``{"duration": "20s"}`` or ``["duration=20s"]``.
Overrides = Union[Mapping[str, Any], Iterable[str]]


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
    :data:`MAX_SCENARIO_BYTES` (read through :mod:`ccbench.files`: a FIFO is refused at once, a
    device never fills the memory)."""
    from ccbench.files import FileRefused, read_text

    if "\0" in source:
        raise ScenarioError(f"{source!r}: a file name cannot contain a NUL character")
    try:
        return read_text(source, "scenario")
    except FileRefused as exc:
        raise ScenarioError(f"{source}: cannot read file: {exc.why}") from None


class SetFlags(list):
    """Overrides given as the CLI's ``--set`` flags: errors name them ``--set KEY``, as the core
    words them, instead of ``overrides[0]``."""


#: Most overrides one call takes: real ones are a handful, and an endless generator must not
#: fill the memory.
MAX_OVERRIDES = 100_000

#: Longest override key an error shows in full (the core cuts its own there too).
_SHOWN_KEY = 80


def _shown(key: str) -> str:
    return key if len(key) <= _SHOWN_KEY else key[:_SHOWN_KEY] + "…"


class _Overrides:
    """Overrides as the core takes them (``"key=value"`` strings) and, for each, what an error
    calls it: ``overrides["duration"]`` (a mapping), ``overrides[0]`` (a list), or ``None`` for
    the CLI's ``--set`` flags, which the core names itself."""

    def __init__(self, items: List[str], names: Optional[List[str]]):
        self.items, self.names = items, names

    def named(self, message: str, source: str) -> str:
        """The core's message about an override (``<source>: --set KEY: …``) with the override
        named as the caller wrote it; any other message unchanged."""
        prefix = f"{source}: --set "
        if self.names is None or not message.startswith(prefix):
            return message
        rest = message[len(prefix):]
        for item, name in zip(self.items, self.names):
            key = _shown(item.split("=", 1)[0].strip())
            if rest.startswith(f"{key}: "):
                return f"{source}: {name}: {rest[len(key) + 2:]}"
        return message

    def call(self, function: Callable[..., Any], payload: Any, source: str, seed: Optional[int],
             **options: Any) -> Any:
        """``function(payload, source, overrides, seed, **options)`` of the core, its errors
        about an override naming it as the caller wrote it."""
        try:
            return function(payload, source, self.items, seed, **options)
        except ScenarioError as exc:
            message = self.named(str(exc), source)
            if message == str(exc):
                raise
            raise ScenarioError(message) from None


def _override_key(key: Any, name: str) -> str:
    if not isinstance(key, str):
        raise ArgumentTypeError(f"{name}: an override key is text such as 'bottleneck.rate', not "
                                f"{type(key).__name__}")
    if not key.strip() or "=" in key or "\0" in key:
        raise ScenarioError(f"{name}: not an override key such as 'bottleneck.rate' or 'flows[0].cca'")
    return key


def _overrides(overrides: Any) -> _Overrides:
    """``overrides`` checked: a mapping of override keys to values (written as TOML literals,
    as :func:`ccbench.sweep` writes its grid), or a list of ``"key=value"`` strings. Errors name
    the argument: ``overrides["duration"]: …``, ``overrides[0]: …``."""
    if isinstance(overrides, SetFlags):
        return _Overrides([str(item) for item in overrides], None)
    if isinstance(overrides, Mapping):
        from ccbench.toml_values import toml_literal

        if len(overrides) > MAX_OVERRIDES:
            raise ScenarioError(f"overrides: {len(overrides)} of them, more than {MAX_OVERRIDES}")
        items, names = [], []
        for key, value in overrides.items():
            name = f'overrides["{_shown(key)}"]' if isinstance(key, str) else f"overrides[{key!r:.80}]"
            key = _override_key(key, name)
            try:
                literal = toml_literal(value)
            except TypeError as exc:
                raise ArgumentTypeError(f"{name}: {exc}") from None
            except (ValueError, RecursionError) as exc:
                raise ScenarioError(f"{name}: {exc}") from None
            items.append(f"{key}={literal}")
            names.append(name)
        return _Overrides(items, names)
    what = "a mapping {'key': value} or a list of 'key=value' strings"
    if isinstance(overrides, (str, bytes)):
        raise ArgumentTypeError(f"overrides must be {what}, not one string ({overrides!r:.60})")
    try:
        items = list(itertools.islice(overrides, MAX_OVERRIDES + 1))
    except TypeError:
        raise ArgumentTypeError(f"overrides must be {what}, not {type(overrides).__name__}") from None
    if len(items) > MAX_OVERRIDES:
        raise ScenarioError(f"overrides: more than {MAX_OVERRIDES} of them")
    names = [f"overrides[{i}]" for i in range(len(items))]
    for item, name in zip(items, names):
        if not isinstance(item, str):
            raise ArgumentTypeError(f"{name}: expected a 'key=value' string, got {item!r:.60} "
                                    f"({type(item).__name__})")
        if "=" not in item:
            raise ScenarioError(f"{name}: expected 'key=value' (e.g. 'duration=20s'), got {item!r:.80}; "
                                f"or pass a mapping {{'key': value}}")
        _override_key(item.split("=", 1)[0], name)
    return _Overrides(items, names)


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

    estimate = overrides.call(_core.estimate_dict if kind == "dict" else _core.estimate_toml, payload, source, seed)
    need = estimate["pcap_bytes"]
    places = [Path(tempfile.gettempdir())] + ([Path(out)] if out is not None else [])
    for place in places:
        free = _free_bytes(place)
        if need and free is not None and need > free:
            raise ScenarioError(f"{source}: output.pcap: the traces would take about {need / 1e9:.1f} GB, "
                                f"more than the {free / 1e9:.1f} GB free on {place}; trace fewer links "
                                f"or a shorter run")


def run(scenario: Scenario, *, seed: Optional[int] = None, overrides: Overrides = (),
        out: Union[str, "os.PathLike[str]", None] = None,
        max_memory: Union[int, str, None] = None, progress: bool = False) -> Result:
    """Run one scenario and return its :class:`Result`.

    ``scenario`` is a path to a TOML file (a ``PathLike``, or a ``str`` naming an existing file or
    ending in ``.toml``), a TOML document as a string, or a dict with the same structure.
    ``overrides`` change fields of the scenario before it is checked: a mapping of keys to values
    (``{"duration": "20s", "flows[0].cca": "bbr"}``; values as in TOML) or a list of
    ``"key=value"`` strings (``["bottleneck.rate=20Mbps"]``, values in TOML or bare text), applied
    by the core; an error about one names it (``overrides["duration"]``, ``overrides[0]``).
    ``seed`` replaces the scenario's seed. With ``out`` the result is also saved there.
    Invalid scenarios raise :class:`ScenarioError` whose message names the source and field.

    Before running, the core estimates what the run will hold in memory; one above
    ``max_memory`` (bytes, or a size like ``"40GB"``; default three quarters of this machine's
    memory) is refused with a :class:`ScenarioError` naming the field that drives the cost.
    ``progress=True`` draws a progress line on stderr. Ctrl-C stops the run within a fraction
    of a second: what it simulated is saved to ``out`` (marked ``"partial": true`` in
    ``summary.json``) and :class:`Interrupted` is raised with it. While it runs, the process's
    resident memory is watched against the same limit: past it, the run stops there, is saved
    likewise (with the reason in ``summary["stopped"]``) and :class:`MemoryLimitExceeded` is
    raised.
    """
    if out is not None:
        out = check_run_dir(out, "out")
    checked = _overrides(overrides)
    kind, payload, source = _read(scenario)
    function = _core.run_dict if kind == "dict" else _core.run_toml
    if "pcap" in str(payload) or any("pcap" in o for o in checked.items):
        _check_trace_space(kind, payload, source, checked, seed, out)
    watch = None
    if progress:
        check = _core.validate_dict if kind == "dict" else _core.validate_toml
        watch = _progress_printer(checked.call(check, payload, source, seed)["duration_ns"])
    try:
        raw = checked.call(function, payload, source, seed, max_memory=max_memory, progress=watch)
    finally:
        if watch is not None:
            sys.stderr.write("\r\033[K")
    result = Result(raw["summary"], raw["series"])
    if out is not None:
        result.save(out)
    if result.summary.get("stopped"):
        raise MemoryLimitExceeded(result, None if out is None else Path(out))
    if result.summary.get("partial"):
        raise Interrupted(result, None if out is None else Path(out))
    return result


def validate(scenario: Scenario, *, seed: Optional[int] = None,
             overrides: Overrides = ()) -> dict:
    """The scenario as the core validated it: unit-free (``duration_ns``, ``rate_bps``, …),
    defaults filled in, overrides applied, topology expanded to ``links`` and ``flows``.

    Takes the same scenario forms as :func:`run`; raises :class:`ScenarioError` likewise.
    """
    checked = _overrides(overrides)
    kind, payload, source = _read(scenario)
    function = _core.validate_dict if kind == "dict" else _core.validate_toml
    return checked.call(function, payload, source, seed)


def estimate(scenario: Scenario, *, seed: Optional[int] = None, overrides: Overrides = ()) -> dict:
    """What running the scenario would cost, as the core estimates it before every run (an upper
    bound: links busy all the time): ``packets``, ``events``, ``series_rows``, ``memory_bytes``,
    the ``field`` that drives the memory, and ``memory_limit``, this machine's default limit
    (:func:`run` refuses a scenario above its ``max_memory``, by default that limit)."""
    checked = _overrides(overrides)
    kind, payload, source = _read(scenario)
    function = _core.estimate_dict if kind == "dict" else _core.estimate_toml
    return checked.call(function, payload, source, seed)
