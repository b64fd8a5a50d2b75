"""The Python API: :func:`run` a scenario and get a :class:`Result`.

Everything numeric comes from the Rust core; this module only moves it into pandas and onto disk.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

import pandas as pd

try:
    from ccbench import _core
except ImportError as exc:  # pragma: no cover - only when the extension was never built
    raise ImportError(
        "ccbench._core (the Rust simulator) is not built; run `make build` in the repository"
    ) from exc

ScenarioError = _core.ScenarioError

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]

#: Names of the time-series tables, in the order they are saved.
SERIES = ("flows", "links", "sojourn", "owd")

#: Documented columns of each series (the core returns them; used for empty tables too).
SERIES_COLUMNS = {
    "flows": ["t_s", "flow", "goodput_mbps", "throughput_mbps", "cwnd_bytes", "ssthresh_bytes",
              "srtt_ms", "inflight_bytes", "retransmits"],
    "links": ["t_s", "link", "queue_bytes", "queue_packets", "utilization", "throughput_mbps",
              "drops", "ecn_marks"],
    "sojourn": ["t_s", "link", "flow", "sojourn_ms"],
    "owd": ["t_s", "flow", "owd_ms"],
}

# Summary entries that are {"mean","p50","p90","p99"} dicts (or null); flattened to
# `<key>_<stat>` columns so the summary tables stay rectangular.
_STAT_KEYS = ("owd_ms", "queue_delay_ms")
_STATS = ("mean", "p50", "p90", "p99")


def controllers() -> list:
    """Names of the congestion controllers the core knows."""
    return list(_core.controllers())


def version() -> str:
    """Version of the Rust core."""
    return _core.version()


def _looks_like_path(text: str) -> bool:
    # A TOML document always has a newline or an `=`; a file name never needs either.
    return text.endswith(".toml") or ("\n" not in text and "=" not in text)


def run(scenario: Scenario, *, seed: Optional[int] = None, overrides: Iterable[str] = (),
        out: Union[str, "os.PathLike[str]", None] = None) -> "Result":
    """Run one scenario and return its :class:`Result`.

    ``scenario`` is a path to a TOML file (a ``PathLike``, or a ``str`` naming an existing file or
    ending in ``.toml``), a TOML document as a string, or a dict with the same structure.
    ``overrides`` are ``"key=value"`` strings (``"bottleneck.rate=20Mbps"``) applied by the core;
    ``seed`` replaces the scenario's seed. With ``out`` the result is also saved there.
    Invalid scenarios raise :class:`ScenarioError` whose message names the source and field.
    """
    overrides = [str(o) for o in overrides]
    if isinstance(scenario, Mapping):
        raw = _core.run_dict(dict(scenario), "<dict>", overrides, seed)
    elif isinstance(scenario, os.PathLike) or (
            isinstance(scenario, str) and (os.path.isfile(scenario) or _looks_like_path(scenario))):
        source = os.fspath(scenario)
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ScenarioError(f"{source}: cannot read file: {reason}") from None
        raw = _core.run_toml(text, source, overrides, seed)
    elif isinstance(scenario, str):
        raw = _core.run_toml(scenario, "<string>", overrides, seed)
    else:
        raise TypeError(f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}")
    result = Result(raw["summary"], {name: _frame(name, raw["series"].get(name)) for name in SERIES})
    if out is not None:
        result.save(out)
    return result


def _frame(name: str, columns: Optional[Mapping[str, list]]) -> pd.DataFrame:
    columns = dict(columns or {})
    if not columns or all(len(v) == 0 for v in columns.values()):
        # Keep the documented columns even when there are no rows, so callers can always select.
        names = list(columns) or SERIES_COLUMNS[name]
        return pd.DataFrame({c: pd.Series([], dtype=float) for c in names})
    return pd.DataFrame(columns)


def _flatten(entry: Mapping[str, Any]) -> dict:
    row = {}
    for key, value in entry.items():
        if key in _STAT_KEYS:
            value = value or {}
            for stat in _STATS:
                row[f"{key}_{stat}"] = value.get(stat, math.nan)
        else:
            row[key] = value
    return row


def _json_safe(value: Any) -> Any:
    """NaN/inf are not JSON; store them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


class Result:
    """Outcome of one simulation run.

    ``summary`` is the core's summary dict; ``flows``, ``links``, ``sojourn`` and ``owd`` are the
    time series as DataFrames; ``flow_summary`` and ``link_summary`` are the summary's per-flow and
    per-link entries as DataFrames (percentile dicts flattened to ``owd_ms_p99`` etc.).
    """

    def __init__(self, summary: dict, series: Mapping[str, pd.DataFrame]):
        self.summary = summary
        self.flows = series["flows"]
        self.links = series["links"]
        self.sojourn = series["sojourn"]
        self.owd = series["owd"]

    @property
    def flow_summary(self) -> pd.DataFrame:
        return pd.DataFrame([_flatten(f) for f in self.summary.get("flows", [])])

    @property
    def link_summary(self) -> pd.DataFrame:
        return pd.DataFrame([_flatten(link) for link in self.summary.get("links", [])])

    def save(self, directory: Union[str, "os.PathLike[str]"]) -> Path:
        """Write ``summary.json`` and one Parquet file per series into ``directory``."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        (path / "summary.json").write_text(json.dumps(_json_safe(self.summary), indent=2) + "\n")
        for name in SERIES:
            table = pa.Table.from_pandas(getattr(self, name), preserve_index=False)
            pq.write_table(table, path / f"{name}.parquet")
        return path

    @classmethod
    def load(cls, directory: Union[str, "os.PathLike[str]"]) -> "Result":
        """Read back a directory written by :meth:`save`."""
        path = Path(directory)
        summary = json.loads((path / "summary.json").read_text())
        series = {name: pd.read_parquet(path / f"{name}.parquet") for name in SERIES}
        return cls(summary, series)

    def table(self) -> str:
        """A short plain-text table of the per-flow and per-link results (used by the CLI)."""
        lines = []
        flows = self.flow_summary
        if not flows.empty:
            cols = [c for c in ("name", "cca", "rtt_ms", "goodput_mbps", "retransmits", "fct_s")
                    if c in flows]
            lines.append(flows[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        links = self.link_summary
        if not links.empty:
            cols = [c for c in ("name", "rate_mbps", "utilization", "drops", "ecn_marks",
                                "queue_delay_ms_mean", "queue_delay_ms_p99") if c in links]
            lines.append(links[cols].to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        jain = self.summary.get("jain_index")
        if jain is not None:
            lines.append(f"Jain index {jain:.4f}   "
                         f"{self.summary.get('sim_s', 0):.1f} s simulated in "
                         f"{self.summary.get('wall_s', 0):.2f} s wall")
        return "\n\n".join(lines)

    def __repr__(self) -> str:
        scen = self.summary.get("scenario", {})
        flows = ", ".join(f"{f.get('name')} {f.get('goodput_mbps', math.nan):.2f} Mbps"
                          for f in self.summary.get("flows", [])[:4])
        more = len(self.summary.get("flows", [])) - 4
        if more > 0:
            flows += f", … (+{more})"
        links = ", ".join(f"{link.get('name')} util {link.get('utilization', math.nan):.3f}"
                          for link in self.summary.get("links", []))
        jain = self.summary.get("jain_index")
        jain_text = f", jain {jain:.3f}" if isinstance(jain, (int, float)) else ""
        return (f"<ccbench.Result {scen.get('duration_s')} s (seed {scen.get('seed')}): "
                f"{flows}; {links}{jain_text}>")
