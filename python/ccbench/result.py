""":class:`Result`: the outcome of one run, as the core returned it.

The time series stay in the core's columns (``ccbench._core.Table``) until first asked for as a
DataFrame, so a caller that only prints the summary or saves the run never imports pandas.
Saving goes through the core's writer (``_core.write_run``): one writer for ``ccbench run --out``
and :meth:`Result.save`.
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any, Iterable, List, Mapping, Sequence, Union

from ccbench import _core

#: Names of the time-series tables, in the order they are saved.
SERIES = ("flows", "links", "sojourn", "owd")

#: Documented columns of each series (the core returns them; used for empty tables too).
SERIES_COLUMNS = {
    "flows": ["t_s", "flow", "goodput_mbps", "throughput_mbps", "cwnd_bytes", "ssthresh_bytes",
              "srtt_ms", "inflight_bytes", "retransmits", "losses", "ecn_reductions"],
    "links": ["t_s", "link", "queue_bytes", "queue_packets", "utilization", "throughput_mbps",
              "drops", "arrivals", "random_losses", "ecn_marks", "departed_bytes", "aqm_probability"],
    "sojourn": ["t_s", "link", "flow", "sojourn_ms"],
    "owd": ["t_s", "flow", "owd_ms"],
}

# Summary entries that are {"mean","p50","p90","p99"} dicts (or null); flattened to
# `<key>_<stat>` columns so the summary tables stay rectangular.
_STAT_KEYS = ("owd_ms", "queue_delay_ms", "queue_at_signal_packets")
_STATS = ("mean", "p50", "p90", "p99")
# Entries that are {"mean","std"} dicts (or null): `<key>_mean`, `<key>_std`.
_SPREAD_KEYS = ("loss_event_distance_s", "oscillation")
_SPREADS = ("mean", "std")

# Columns of the CLI's plain-text tables.
_FLOW_TEXT = ("name", "cca", "rtt_ms", "goodput_mbps", "retransmits", "fct_s")
_LINK_TEXT = ("name", "rate_mbps", "utilization", "drops", "ecn_marks", "queue_delay_ms_mean",
              "queue_delay_ms_p99")

# Core column kinds → pandas dtypes (str: pandas' own string dtype, as read_parquet gives).
_DTYPES = {"f64": "float64", "i64": "int64", "str": str}

PathLike = Union[str, "os.PathLike[str]"]


def _is_raw(value: Any) -> bool:
    """Core table or ``{column: list}``: not yet a DataFrame (which is not a Mapping)."""
    return isinstance(value, (_core.Table, Mapping))


def _frame(name: str, raw: Any):
    import pandas as pd

    if isinstance(raw, _core.Table):
        data = raw.to_dict()
        return pd.DataFrame({c: _column(data[c], kind) for c, kind in raw.schema()})
    columns = dict(raw)
    if not columns or all(len(v) == 0 for v in columns.values()):
        # Keep the documented columns even when there are no rows, so callers can always select.
        names = list(columns) or SERIES_COLUMNS[name]
        return pd.DataFrame({c: pd.Series([], dtype=float) for c in names})
    return pd.DataFrame(columns)


def _column(values: list, kind: str):
    """One core column as a pandas Series. Text goes through Arrow: pandas' own string dtype
    built from a Python list costs ~10 µs a row (a 40 000-row series took 0.4 s), Arrow's
    conversion gives the same dtype in well under a millisecond."""
    import pandas as pd

    if kind == "str":
        import pyarrow as pa

        return pa.array(values, type=pa.string()).to_pandas()
    return pd.Series(values, dtype=_DTYPES[kind])


def _writable(frame) -> dict:
    """A DataFrame as ``{column: (kind, values)}`` for the core's writer."""
    out = {}
    for column in frame.columns:
        series = frame[column]
        kind = {"f": "f64", "i": "i64", "u": "i64", "b": "i64"}.get(series.dtype.kind, "str")
        values = series.astype(str).tolist() if kind == "str" else series.tolist()
        out[str(column)] = (kind, values)
    return out


def _flatten(entry: Mapping[str, Any]) -> dict:
    row = {}
    for key, value in entry.items():
        if key in _STAT_KEYS or key in _SPREAD_KEYS:
            value = value or {}
            for stat in _STATS if key in _STAT_KEYS else _SPREADS:
                row[f"{key}_{stat}"] = value.get(stat, math.nan)
        else:
            row[key] = value
    return row


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else f"{value:.3f}"
    return "NaN" if value is None else str(value)


def text_table(rows: Sequence[Mapping[str, Any]], wanted: Iterable[str]) -> str:
    """Right-aligned plain-text table of ``rows`` over the ``wanted`` columns that occur."""
    columns = [c for c in wanted if any(c in r for r in rows)]
    cells = [list(columns)] + [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(columns))]
    return "\n".join(" ".join(v.rjust(w) for v, w in zip(row, widths)) for row in cells)


def _named(entries: List[Mapping[str, Any]], name: str, what: str) -> dict:
    for entry in entries:
        if entry.get("name") == name:
            return dict(entry)
    known = ", ".join(str(e.get("name")) for e in entries) or "none"
    raise KeyError(f"no {what} named {name!r} (known: {known})")


class _Series:
    """A time series attribute: a DataFrame built from the core's columns on first access."""

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, result, owner=None):
        if result is None:
            return self
        value = result._series.get(self.name, {})
        if _is_raw(value):
            value = result._series[self.name] = _frame(self.name, value)
        return value

    def __set__(self, result, frame):
        result._series[self.name] = frame


class Result:
    """Outcome of one simulation run.

    ``summary`` is the core's summary dict; ``flows``, ``links``, ``sojourn`` and ``owd`` are the
    time series as DataFrames; ``flow_summary`` and ``link_summary`` are the summary's per-flow and
    per-link entries as DataFrames (percentile dicts flattened to ``owd_ms_p99`` etc., mean/std
    dicts to ``oscillation_mean``, ``oscillation_std``).
    ``series`` maps each series name to a DataFrame, a core table or ``{column: list}``.
    """

    flows = _Series()
    links = _Series()
    sojourn = _Series()
    owd = _Series()

    def __init__(self, summary: dict, series: Mapping[str, Any]):
        self.summary = summary
        self._series = dict(series)

    def __getstate__(self) -> dict:
        # Core tables live in Rust memory and do not pickle; their DataFrames do.
        return {"summary": self.summary, "_series": {name: getattr(self, name) for name in SERIES}}

    def link(self, name: str) -> dict:
        """The summary entry of the link called ``name`` (e.g. ``"bottleneck"``)."""
        return _named(self.summary.get("links", []), name, "link")

    def flow(self, name: str) -> dict:
        """The summary entry of the flow called ``name``."""
        return _named(self.summary.get("flows", []), name, "flow")

    @property
    def flow_summary(self):
        import pandas as pd

        return pd.DataFrame([_flatten(f) for f in self.summary.get("flows", [])])

    @property
    def link_summary(self):
        import pandas as pd

        return pd.DataFrame([_flatten(link) for link in self.summary.get("links", [])])

    def save(self, directory: PathLike) -> Path:
        """Write ``summary.json`` (NaN/inf as null) and one Parquet file per series into a folder
        staged beside ``directory`` and swapped in whole: a kill at any moment leaves the previous
        run there or this one. ``directory`` must be new, empty or a previous run's."""
        from ccbench.outdir import check_run_dir

        check_run_dir(directory, "directory")
        path = Path(directory)
        tables = {}
        for name in SERIES:
            value = self._series.get(name, {})
            # An untouched core table is written as it is; anything else via its DataFrame.
            tables[name] = value if isinstance(value, _core.Table) else _writable(getattr(self, name))
        _core.write_run(os.fspath(path), self.summary, tables)
        return path

    @classmethod
    def load(cls, directory: PathLike) -> "Result":
        """Read back a directory written by :meth:`save`. A missing or damaged file raises
        :class:`ccbench.errors.RunFolderError` (a ValueError) naming it."""
        from ccbench.errors import ArgumentTypeError, RunFolderError

        if not isinstance(directory, (str, os.PathLike)):
            raise ArgumentTypeError(f"directory must be a run folder path, not {type(directory).__name__}")
        path = Path(directory)
        try:
            folder = stat.S_ISDIR(path.stat().st_mode)
        except (OSError, ValueError):  # missing, a name too long, a NUL byte
            folder = False
        if not folder:
            raise RunFolderError(f"{_shown(path)}: not a run folder (no such folder; see `ccbench run --out`)")
        summary = _read_summary(path / "summary.json")
        return cls(summary, {name: _read_series(path / f"{name}.parquet") for name in SERIES})

    def table(self) -> str:
        """A short plain-text table of the per-flow and per-link results (used by the CLI)."""
        parts = []
        for entries, wanted in (("flows", _FLOW_TEXT), ("links", _LINK_TEXT)):
            rows = [_flatten(e) for e in self.summary.get(entries, [])]
            if rows:
                parts.append(text_table(rows, wanted))
        jain = self.summary.get("jain_index")
        if jain is not None:
            parts.append(f"Jain index {jain:.4f}   "
                         f"{self.summary.get('sim_s', 0):.1f} s simulated in "
                         f"{self.summary.get('wall_s', 0):.2f} s wall")
        notes = [f"note: flow {f.get('name')}: {note}" for f in self.summary.get("flows", [])
                 for note in f.get("notes") or ()]
        if notes:
            parts.append("\n".join(notes))
        return "\n\n".join(parts)

    def __repr__(self) -> str:
        scen = self.summary.get("scenario", {})
        flows = ", ".join(f"{f.get('name')} {_num(f.get('goodput_mbps')):.2f} Mbps"
                          for f in self.summary.get("flows", [])[:4])
        more = len(self.summary.get("flows", [])) - 4
        if more > 0:
            flows += f", … (+{more})"
        links = ", ".join(f"{link.get('name')} util {_num(link.get('utilization')):.3f}"
                          for link in self.summary.get("links", []))
        jain = self.summary.get("jain_index")
        jain_text = f", jain {jain:.3f}" if isinstance(jain, (int, float)) else ""
        return (f"<ccbench.Result {scen.get('duration_s')} s (seed {scen.get('seed')}): "
                f"{flows}; {links}{jain_text}>")


#: What a damaged run folder's message tells the user to do.
_RERUN = "rerun the scenario with --out"


def _shown(path) -> str:
    from ccbench.outdir import show

    return show(path)


def _short(exc: BaseException, most: int = 150) -> str:
    """An exception's message on one line, cut to ``most`` characters."""
    text = " ".join(str(exc).split())
    return text if len(text) <= most else text[:most - 1] + "…"


def _regular_file(path: Path) -> None:
    """``path`` must be a regular file: missing is said so, and a FIFO or a device is never
    opened (reading one would block or never end)."""
    from ccbench.errors import RunFolderError

    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise RunFolderError(f"{path}: missing; not a complete run folder") from None
    except OSError as exc:
        raise RunFolderError(f"{path}: cannot read ({exc.strerror})") from None
    if not stat.S_ISREG(mode):
        raise RunFolderError(f"{path}: not a regular file; not a run folder's file")


def _read_summary(path: Path) -> dict:
    import json

    from ccbench.errors import RunFolderError
    from ccbench.files import read_bytes

    _regular_file(path)
    try:
        summary = json.loads(read_bytes(path, "summary"))
    except OSError as exc:
        raise RunFolderError(" ".join(str(exc).split())) from None
    except UnicodeDecodeError:
        raise RunFolderError(f"{path}: damaged JSON (not UTF-8 text); {_RERUN}") from None
    except ValueError as exc:  # json.JSONDecodeError
        raise RunFolderError(f"{path}: damaged JSON ({_short(exc)}); {_RERUN}") from None
    except RecursionError:
        raise RunFolderError(f"{path}: damaged JSON (nested too deeply); {_RERUN}") from None
    what = _summary_problem(summary)
    if what:
        raise RunFolderError(f"{path}: not a run summary ({what}); {_RERUN}")
    return summary


def _summary_problem(summary: Any) -> str:
    """What makes ``summary`` unusable as a run's summary, or ``""``."""
    if not isinstance(summary, dict):
        return f"a JSON {type(summary).__name__}, expected an object"
    for key in ("flows", "links"):
        entries = summary.get(key, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            return f"{key!r} must be a list of objects"
    if not isinstance(summary.get("scenario", {}), dict):
        return "'scenario' must be an object"
    return ""


def _read_series(path: Path):
    import pyarrow as pa

    from ccbench.errors import RunFolderError
    from ccbench.files import FileRefused, read_parquet

    _regular_file(path)
    try:
        return read_parquet(path)
    except FileRefused as exc:
        raise RunFolderError(str(exc)) from None
    except (PermissionError, IsADirectoryError) as exc:
        raise RunFolderError(f"{path}: cannot read ({exc.strerror})") from None
    except (OSError, ValueError, pa.ArrowException) as exc:  # ArrowInvalid is a ValueError
        raise RunFolderError(f"{path}: damaged Parquet file ({_short(exc)}); {_RERUN}") from None


def _num(value: Any) -> float:
    return value if isinstance(value, (int, float)) else math.nan
