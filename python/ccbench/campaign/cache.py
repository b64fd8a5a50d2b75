"""The run cache: every finished run's metrics by the run's key, in Parquet segments.

A key is the SHA-256 of everything a run's numbers depend on: the scenario as the core validated
it (unit-free, defaults filled in, seed applied, in canonical JSON), the code that runs it (the
core's version and compiled library, and every Python source of the ccbench package, so editing
a helper module, a shared constant or ``result.py`` recomputes the runs that use it), the engine,
the grid point the metric sees, and the metric's code (its module's source, or a notebook
function's own). Two campaigns that ask for the same run share it.

A run is journaled the moment it finishes and folded into Parquet in batches (:class:`Cache`),
so a campaign killed at any moment keeps every finished run and leaves no half-written segment.
Failed runs are not cached: a rerun tries them again.

Nothing damaged is ever served: a segment's name carries the SHA-256 of its bytes and every
journal line a checksum of its row, both checked on reading; a damaged segment or line is dropped
with a one-line warning and its runs are computed again.
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
    """The code a run executes: the core's version and a digest of its compiled library (the
    version number alone moves only at releases), and a digest of the ccbench package's Python
    sources (:func:`package_fingerprint`)."""
    return _core_fingerprint()


@lru_cache(maxsize=None)
def _core_fingerprint() -> str:
    from ccbench import _core

    path = getattr(_core, "__file__", None)
    digest = _file_digest(path)[:16] if path and os.path.isfile(path) else "unknown"
    return f"{_core.version()}+{digest}+py{package_fingerprint()[:16]}"


def package_root() -> Path:
    """The folder of the ccbench package this process runs (this file is ``campaign/cache.py``)."""
    return Path(__file__).resolve().parents[1]


def package_fingerprint(root: Optional[Path] = None) -> str:
    """SHA-256 over every ``.py`` file of the package (its path inside the package and its
    bytes, in path order). A metric reaches helpers in other modules (``siad/cbr.py`` calls
    ``single_flow_traces``; ``rledbat/solo.py`` reads a constant of ``rledbat/common.py``) and
    every run goes through ``api.py`` and ``result.py``: hashing them all is the one key that
    cannot miss one. (Computed once a process, by :func:`core_fingerprint`.)"""
    root = package_root() if root is None else Path(root)
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


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


def _row_checksum(key: str, metrics: str, seconds: float) -> str:
    """A journal line's checksum: a flipped byte anywhere in the row is caught."""
    return hashlib.sha256(f"{key}\0{metrics}\0{seconds!r}".encode()).hexdigest()[:16]


def _valid_row(key: Any, metrics: Any, seconds: Any) -> bool:
    """A row that can be served: a 64-hex key, metrics that are a JSON object, a finite time."""
    if not (isinstance(key, str) and len(key) == 64 and isinstance(metrics, str)):
        return False
    try:
        int(key, 16)
        parsed = json.loads(metrics)
        seconds = float(seconds)
    except (ValueError, TypeError):
        return False
    return isinstance(parsed, dict) and seconds == seconds and 0 <= seconds < float("inf")


def _warn(message: str) -> None:
    print(f"warning: {' '.join(message.split())}", file=sys.stderr)


class Cache:
    """Finished runs under ``root``, by key: each run's metrics (as JSON text) and its wall time.

    A finished run is appended at once to this process's journal (``journal-<pid>.jsonl``, one
    JSON object a line with a checksum of its row), so a kill loses nothing that finished; every
    :data:`SEGMENT_ROWS` runs, and when the campaign ends, the journal is folded into a Parquet
    segment (``seg-<time>-<pid>-<sha256>.parquet``: ``key``, ``metrics``, ``seconds``; the name
    carries the digest of the file's bytes), written under a temporary name and renamed.
    Journals of killed processes are read like segments and folded into the next one; a torn
    last line is skipped. A segment whose bytes do not match its digest, or a journal line that
    does not match its checksum or is not a valid row, is dropped with a one-line warning: its
    runs are computed again, and the damage does not come back on the next rerun.
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
        index: dict = {}
        for segment in sorted(self.root.glob("seg-*.parquet")):
            rows = self._read_segment(segment)
            if rows is None:
                segment.unlink(missing_ok=True)  # recomputed; never read again
                continue
            index.update(rows)
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
    def _read_segment(path: Path) -> Optional[dict]:
        """The rows of a segment whose bytes match the digest in its name, else None (warned)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        expected = path.stem.rsplit("-", 1)[-1]
        try:
            data = path.read_bytes()
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return None
        if len(expected) != 64 or hashlib.sha256(data).hexdigest() != expected:
            _warn(f"cache: {path.name} is damaged or was written by an older ccbench (its bytes do not "
                  f"match its checksum); dropped, its runs will be computed again")
            return None
        try:
            table = pq.read_table(pa.BufferReader(data)).to_pydict()
            rows = list(zip(table["key"], table["metrics"], table["seconds"]))
        except Exception as exc:  # noqa: BLE001 - whatever pyarrow says of a bad file
            _warn(f"cache: {path.name} cannot be read ({type(exc).__name__}); dropped, its runs will be "
                  f"computed again")
            return None
        # The rows themselves were checked when they were journaled (a bad row is never folded
        # in), and the digest says these are the bytes written then.
        return {key: (metrics, seconds) for key, metrics, seconds in rows}

    @staticmethod
    def _read_journal(path: Path) -> list:
        """The good rows of a journal: any bytes are tolerated, a line that is not a checksummed
        row is skipped (a warning counts them, except a last line a kill cut short)."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return []
        lines = data.split(b"\n")
        torn = lines.pop() if lines else b""  # after the last newline: empty, or cut short by a kill
        rows, bad = [], 0
        for line in lines:
            row = Cache._journal_row(line)
            if row is None:
                bad += 1
            else:
                rows.append(row)
        if torn and Cache._journal_row(torn) is not None:
            rows.append(Cache._journal_row(torn))
        if bad:
            _warn(f"cache: {path.name}: {bad} damaged line{'s' if bad > 1 else ''} skipped; "
                  f"their runs will be computed again")
        return rows

    @staticmethod
    def _journal_row(line: bytes) -> Optional[tuple]:
        try:
            entry = json.loads(line.decode("utf-8"))
            key, metrics, seconds, checksum = entry["k"], entry["m"], entry["s"], entry["c"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return None
        if not _valid_row(key, metrics, seconds) or checksum != _row_checksum(key, metrics, float(seconds)):
            return None
        return key, metrics, float(seconds)

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
        line = {"k": key, "m": text, "s": row[2], "c": _row_checksum(*row)}
        self._journal.write(json.dumps(line) + "\n")
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
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        path = self.root / f"seg-{time.time_ns()}-{os.getpid()}-{hashlib.sha256(data).hexdigest()}.parquet"
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_bytes(data)
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
