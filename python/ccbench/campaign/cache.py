"""The run cache: every finished run's metrics by the run's key, in Parquet segments.

A key is the SHA-256 of everything a run's numbers depend on: the scenario as the core validated
it (unit-free, defaults filled in, seed applied, in canonical JSON), the core's version, the
engine, the grid point the metric sees, and the metric's code (the source of its module, so
editing an experiment recomputes its runs). Two campaigns that ask for the same run share it.

A run is journaled the moment it finishes and folded into Parquet in batches (:class:`Cache`),
so a campaign killed at any moment keeps every finished run and leaves no half-written segment.
Failed runs are not cached: a rerun tries them again.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import marshal
import os
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

#: Folder of the cache under a campaign's output folder, and the default for notebooks.
CACHE_DIR = "cache"


def default_cache_dir() -> Path:
    """``$CCBENCH_CACHE``, else ``~/.cache/ccbench`` (for :func:`ccbench.sweep`)."""
    env = os.environ.get("CCBENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccbench"


@lru_cache(maxsize=None)
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def metric_identity(metric: Callable) -> str:
    """What identifies a metric's code: its qualified name and the source of its module (or,
    for a function typed into a notebook, its own source or byte code)."""
    name = f"{getattr(metric, '__module__', '?')}.{getattr(metric, '__qualname__', repr(metric))}"
    module = sys.modules.get(getattr(metric, "__module__", ""), None)
    path = getattr(module, "__file__", None)
    if path and os.path.isfile(path):
        return f"{name}:{_file_digest(path)}"
    try:
        code = inspect.getsource(metric)
    except (OSError, TypeError):
        code_object = getattr(metric, "__code__", None)
        code = marshal.dumps(code_object).hex() if code_object else repr(metric)
    return f"{name}:{hashlib.sha256(code.encode()).hexdigest()}"


def _plain(value: Any) -> Any:
    """JSON-able form of a grid point value (tuples as lists, other objects by repr)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_key(scenario: Mapping[str, Any], core_version: str, engine: str, point: Mapping[str, Any],
            metric_id: str) -> str:
    """The cache key of one run (hex SHA-256)."""
    document = {"scenario": scenario, "core": core_version, "engine": engine,
                "point": _plain(point), "metric": metric_id}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def core_fingerprint() -> str:
    """The core's version and a digest of its compiled library, so a rebuilt core with changed
    code never reuses runs of the old one (the version number alone moves only at releases)."""
    return _core_fingerprint()


@lru_cache(maxsize=None)
def _core_fingerprint() -> str:
    from ccbench import _core

    path = getattr(_core, "__file__", None)
    digest = _file_digest(path)[:16] if path and os.path.isfile(path) else "unknown"
    return f"{_core.version()}+{digest}"


def _json_default(value: Any) -> Any:
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return item()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return repr(value)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cache:
    """Finished runs under ``root``, by key: each run's metrics (as JSON text) and its wall time.

    A finished run is appended at once to this process's journal (``journal-<pid>.jsonl``), so
    a kill loses nothing that finished; every :data:`SEGMENT_ROWS` runs, and when the campaign
    ends, the journal is folded into a Parquet segment (``seg-*.parquet``: ``key``,
    ``metrics``, ``seconds``), written under a temporary name and renamed. Journals of killed
    processes are read like segments and folded into the next one; a torn last line is skipped.
    """

    SEGMENT_ROWS = 5000
    #: Segments merged into one when there are more than this many.
    MAX_SEGMENTS = 32

    def __init__(self, root):
        self.root = Path(root)
        self._index: Optional[dict] = None
        self._pending: list = []
        self._journal = None
        self._stale: list = []

    def _load(self) -> dict:
        if self._index is not None:
            return self._index
        import pyarrow.parquet as pq

        index: dict = {}
        for segment in sorted(self.root.glob("seg-*.parquet")):
            try:
                table = pq.read_table(segment).to_pydict()
            except Exception:  # noqa: BLE001 - a damaged segment is missing runs: recomputed
                continue
            index.update(zip(table["key"], zip(table["metrics"], table["seconds"])))
        for journal in sorted(self.root.glob("journal-*.jsonl")):
            pid = journal.stem.split("-")[1]
            if pid.isdigit() and int(pid) != os.getpid() and _pid_alive(int(pid)):
                continue  # another campaign is writing it
            for row in self._read_journal(journal):
                index[row[0]] = (row[1], row[2])
                self._pending.append(row)
            self._stale.append(journal)
        self._index = index
        return index

    @staticmethod
    def _read_journal(path: Path) -> list:
        rows = []
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            return rows
        for line in lines:
            try:
                entry = json.loads(line)
                rows.append((entry["k"], entry["m"], float(entry["s"])))
            except (ValueError, KeyError, TypeError):
                continue  # the line a kill cut short
        return rows

    def __len__(self) -> int:
        return len(self._load())

    def get(self, key: str) -> Optional[tuple]:
        """``(metrics, seconds)`` of a cached run, or ``None``."""
        found = self._load().get(key)
        if found is None:
            return None
        return json.loads(found[0]), found[1]

    def put(self, key: str, metrics: Mapping[str, Any], seconds: float) -> None:
        index = self._load()
        text = json.dumps(dict(metrics), default=_json_default, allow_nan=True, separators=(",", ":"))
        row = (key, text, float(seconds))
        if self._journal is None:
            self.root.mkdir(parents=True, exist_ok=True)
            self._journal = open(self.root / f"journal-{os.getpid()}.jsonl", "a", encoding="utf-8")
        self._journal.write(json.dumps({"k": key, "m": text, "s": row[2]}) + "\n")
        self._journal.flush()
        index[key] = (text, row[2])
        self._pending.append(row)
        if len(self._pending) >= self.SEGMENT_ROWS:
            self.flush()

    def flush(self) -> None:
        """Fold the journals into a Parquet segment (merging segments when there are many)."""
        if not self._pending:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        rows = {key: (text, seconds) for key, text, seconds in self._pending}
        segments = sorted(self.root.glob("seg-*.parquet"))
        merge = len(segments) >= self.MAX_SEGMENTS
        if merge:  # one segment of everything known
            rows = {**{k: v for k, v in self._load().items()}, **rows}
        table = pa.table({"key": list(rows), "metrics": [v[0] for v in rows.values()],
                          "seconds": [v[1] for v in rows.values()]})
        path = self.root / f"seg-{time.time_ns()}-{os.getpid()}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, path)
        if self._journal is not None:
            self._journal.close()
            self._journal = None
            (self.root / f"journal-{os.getpid()}.jsonl").unlink(missing_ok=True)
        for journal in self._stale:
            journal.unlink(missing_ok=True)
        self._stale = []
        if merge:
            for segment in segments:
                segment.unlink(missing_ok=True)
        self._pending = []

    close = flush
