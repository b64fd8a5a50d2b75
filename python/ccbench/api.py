"""The Python API: :func:`run` a scenario and get a :class:`Result`; :func:`validate` one.

Everything numeric comes from the Rust core, and so does every reading of a scenario (units,
defaults, overrides): this module only hands the scenario over and wraps what comes back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

try:
    from ccbench import _core
except ImportError as exc:  # pragma: no cover - only when the extension was never built
    raise ImportError(
        "ccbench._core (the Rust simulator) is not built; run `make build` in the repository"
    ) from exc

from ccbench.result import SERIES, SERIES_COLUMNS, Result

__all__ = ["Result", "SERIES", "SERIES_COLUMNS", "ScenarioError", "controllers", "registry", "run",
           "validate", "version"]

ScenarioError = _core.ScenarioError

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
        try:
            return "toml", Path(source).read_text(encoding="utf-8"), source
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ScenarioError(f"{source}: cannot read file: {reason}") from None
    if isinstance(scenario, str):
        return "toml", scenario, "<string>"
    raise TypeError(f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}")


def _overrides(overrides: Iterable[str]) -> List[str]:
    if isinstance(overrides, str):
        raise TypeError("overrides must be a list of 'key=value' strings, not one string")
    return [str(o) for o in overrides]


def run(scenario: Scenario, *, seed: Optional[int] = None, overrides: Iterable[str] = (),
        out: Union[str, "os.PathLike[str]", None] = None) -> Result:
    """Run one scenario and return its :class:`Result`.

    ``scenario`` is a path to a TOML file (a ``PathLike``, or a ``str`` naming an existing file or
    ending in ``.toml``), a TOML document as a string, or a dict with the same structure.
    ``overrides`` are ``"key=value"`` strings (``"bottleneck.rate=20Mbps"``) applied by the core;
    ``seed`` replaces the scenario's seed. With ``out`` the result is also saved there.
    Invalid scenarios raise :class:`ScenarioError` whose message names the source and field.
    """
    kind, payload, source = _read(scenario)
    function = _core.run_dict if kind == "dict" else _core.run_toml
    raw = function(payload, source, _overrides(overrides), seed)
    result = Result(raw["summary"], raw["series"])
    if out is not None:
        result.save(out)
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
