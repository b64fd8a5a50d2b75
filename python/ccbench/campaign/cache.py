"""The run cache: every finished run's metrics by the run's key, in Parquet segments.

A key is the SHA-256 of everything a run's numbers depend on: the scenario as the core validated
it (unit-free, defaults filled in, seed applied, in canonical JSON), the code that runs it (the
core's version and compiled library, and every Python source of the ccbench package, so editing
a helper module, a shared constant or ``result.py`` recomputes the runs that use it), the engine,
the grid point the metric sees, and the metric (:func:`metric_identity`: its code and everything
that code reads — closures, defaults, the globals it names, the functions and classes those lead
to, the modules it uses by their files' digests). Two campaigns that ask for the same run share
it. A metric that reads something which cannot be keyed faithfully (an open file, a lock, a
generator) is not cached: its runs are computed every time, with a one-line note.

A run is journaled the moment it finishes and folded into Parquet in batches (:class:`Cache`),
so a campaign killed at any moment keeps every finished run and leaves no half-written segment.
Failed runs are not cached: a rerun tries them again; nor are runs whose metrics would not come
back from the cache as they went in (a tuple, a set, an object: one note names the column).

Nothing damaged is ever served: a segment's name carries the SHA-256 of its bytes and every
journal line a checksum of its row, both checked on reading; a damaged segment or line is dropped
with a one-line warning and its runs are computed again.

Several processes may share one cache folder: whatever changes the folder's set of segments
(folding journals, merging segments, dropping damaged ones) happens under an exclusive lock on
``<cache>/lock``, reads what it folds under that lock, and removes only files it read there (or
created), checked by device and inode at the moment of removal. Readers take no lock: segments
appear whole, by rename.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import secrets
import stat
import sys
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, List, Mapping, Optional, Tuple

from ccbench.campaign.metric_key import (  # noqa: F401 - re-exported: the cache's key parts
    UncacheableMetric,
    _file_digest,
    cacheable_identity,
    metric_identity,
    metric_name,
    package_root,
)

#: Folder of the cache under a campaign's output folder, and the default for notebooks.
CACHE_DIR = "cache"

#: The lock file inside a cache folder (held while the set of segments changes).
LOCK_NAME = "lock"

#: Largest segment and journal read; anything bigger is not a cache file (a planted device or a
#: runaway file), and is dropped with a warning like a damaged one.
SEGMENT_LIMIT = 4 << 30
JOURNAL_LIMIT = 1 << 30


def default_cache_dir() -> Path:
    """``$CCBENCH_CACHE``, else ``~/.cache/ccbench`` (for :func:`ccbench.sweep`)."""
    env = os.environ.get("CCBENCH_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ccbench"


def _plain(value: Any) -> Any:
    """JSON-able form of a grid point value (tuples as lists, other objects by repr)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def run_key(scenario: Any, core_version: str, engine: str, point: Mapping[str, Any],
            metric_id: str) -> str:
    """The cache key of one run (hex SHA-256); ``scenario`` is the validated scenario, or its
    digest."""
    document = {"scenario": scenario, "core": core_version, "engine": engine,
                "point": _plain(point), "metric": metric_id}
    text = json.dumps(document, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def real_stack_fingerprint() -> str:
    """The programs a real-stack run (``engine = "emu"``) executes, by content: ``ccbench-emu``
    and, as it finds them, ``rledbatd`` (``$CCBENCH_RLEDBATD``, else beside it) and
    ``ccbench-quic`` beside it. A rebuilt emulator or daemon recomputes those runs."""
    from ccbench.emu import binary
    from ccbench.errors import UsageError

    try:
        emu = Path(binary())
    except UsageError:
        return "no-emulator"
    programs = [emu, Path(os.environ.get("CCBENCH_RLEDBATD") or emu.with_name("rledbatd")),
                emu.with_name("ccbench-quic")]
    return "+".join(f"{p.name}:{_file_digest(str(p))[:16]}" for p in programs if p.is_file())


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


# ----- values that come back as they went in --------------------------------------------------

class _Refused(Exception):
    def __init__(self, column: str, what: str):
        super().__init__(what)
        self.column, self.what = column, what


def _storable(value: Any, column: str) -> Any:
    """``value`` in the form JSON gives back unchanged (numpy scalars as the equal Python
    scalar); :class:`_Refused` when there is none (a tuple comes back a list, a set or an
    object not at all)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        return [_storable(item, column) for item in value]
    if kind is dict:
        for name in value:
            if type(name) is not str:
                raise _Refused(column, f"dict with a {type(name).__name__} key")
        return {name: _storable(item, column) for name, item in value.items()}
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(value, numpy.generic) and not isinstance(value, numpy.timedelta64):
        if isinstance(value, numpy.str_):
            return str(value)
        if isinstance(value, (numpy.bool_, numpy.integer, numpy.floating)):
            item = value.item()
            if type(item) in (bool, int, float):
                return item
    raise _Refused(column, kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}")


def _storable_metrics(metrics: Mapping[str, Any]) -> dict:
    plain = {}
    for column, value in metrics.items():
        if type(column) is not str:
            raise _Refused(repr(column)[:60], f"column name of type {type(column).__name__}")
        plain[column] = _storable(value, column)
    return plain


# ----- the folder ----------------------------------------------------------------------------

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError, ValueError):
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


def _note(message: str) -> None:
    print(f"note: {' '.join(message.split())}", file=sys.stderr)


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

#: A file as it was read: (device, inode). Removal checks the path still names it.
Ident = Tuple[int, int]


def _open_regular(path: Path) -> int:
    """A descriptor of ``path`` for reading: never through a symbolic link, never blocking on a
    FIFO, and only a regular file (``OSError`` otherwise)."""
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _read_fd(fd: int, limit: int) -> bytes:
    size = os.fstat(fd).st_size
    if size > limit:
        raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB")
    chunks: List[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise OSError(errno.EFBIG, f"larger than {limit >> 20} MiB")
        chunks.append(chunk)


def _ident(fd: int) -> Ident:
    found = os.fstat(fd)
    return found.st_dev, found.st_ino


def _remove_if_same(path: Path, ident: Optional[Ident]) -> None:
    """Remove ``path`` if it is still the file that was read or created (same device and
    inode); anything else now at that name is left alone."""
    if ident is None:
        return
    try:
        found = os.lstat(path)
    except OSError:
        return
    if (found.st_dev, found.st_ino) == ident and stat.S_ISREG(found.st_mode):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _token() -> str:
    """Unique per writer: the process and 64 random bits."""
    return f"{os.getpid()}-{secrets.token_hex(8)}"


class Cache:
    """Finished runs under ``root``, by key: each run's metrics (as JSON text) and its wall time.

    A finished run is appended at once to this writer's journal (``journal-<pid>-<random>.jsonl``,
    one JSON object a line with a checksum of its row, held under an exclusive ``flock`` while
    it is written), so a kill loses nothing that finished; every :data:`SEGMENT_ROWS` runs, and
    when the campaign ends, the journal is folded into a Parquet segment
    (``seg-<time>-<pid>-<sha256>.parquet``: ``key``, ``metrics``, ``seconds``; the name carries
    the digest of the file's bytes), written under a unique temporary name and renamed.
    Journals of writers that are gone (no lock on them, or a dead pid in the name) are read like
    segments and folded into the next one; a torn last line is skipped. A segment whose bytes do
    not match its digest, or a journal line that does not match its checksum or is not a valid
    row, is dropped with a one-line warning: its runs are computed again, and the damage does
    not come back on the next rerun.

    Folding and merging happen under the folder's lock (``<root>/lock``): the segments are
    listed again there, and a merge reads each segment it merges there, so another process's
    runs are never unlinked unread. Only files this process read under the lock, or created,
    are removed.
    """

    SEGMENT_ROWS = 5000
    #: Segments merged into one when there are more than this many.
    MAX_SEGMENTS = 32

    def __init__(self, root):
        self.root = Path(root)
        self._index: Optional[dict] = None
        self._pending: list = []
        self._journal = None
        self._journal_path: Optional[Path] = None
        self._journal_ident: Optional[Ident] = None
        self._stale_seen = False
        self._warned: set = set()
        self._refused: set = set()

    # -- reading ------------------------------------------------------------------------------

    def _load(self) -> dict:
        if self._index is not None:
            return self._index
        index: dict = {}
        if self.root.is_dir():
            damaged: List[Tuple[Path, Ident]] = []
            seen: set = set()
            for _ in range(5):  # again while segments vanish under us (merged meanwhile)
                vanished = False
                for segment in sorted(self.root.glob("seg-*.parquet")):
                    if segment.name in seen:
                        continue
                    status, rows, ident = self._read_segment(segment)
                    if status == "gone":
                        vanished = True
                        continue
                    seen.add(segment.name)
                    if rows is None:
                        if ident is not None:
                            damaged.append((segment, ident))
                        continue
                    index.update(rows)
                if not vanished:
                    break
            if damaged:
                self._drop(damaged)
            for journal in sorted(self.root.glob("journal-*.jsonl")):
                stale = self._stale_journal(journal)
                if stale is None:
                    continue
                for key, text, seconds in stale[0]:
                    index[key] = (text, seconds)
                self._stale_seen = True
        self._index = index
        return index

    def _drop(self, damaged: List[Tuple[Path, Ident]]) -> None:
        """Remove damaged segments this process read (so the damage does not come back)."""
        try:
            lock = self._lock()
        except OSError:
            return  # left for a process that can lock; warned again meanwhile
        try:
            for path, ident in damaged:
                _remove_if_same(path, ident)
        finally:
            os.close(lock)

    def _read_segment(self, path: Path) -> Tuple[str, Optional[dict], Optional[Ident]]:
        """``("ok", rows, ident)`` for a segment whose bytes match the digest in its name,
        ``("bad", None, ident)`` when they do not (warned), ``("gone", None, None)`` when it
        vanished before it could be opened."""
        from ccbench.files import parquet_table

        expected = path.stem.rsplit("-", 1)[-1]
        try:
            fd = _open_regular(path)
        except FileNotFoundError:
            return "gone", None, None
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return "bad", None, None
        try:
            ident = _ident(fd)
            data = _read_fd(fd, SEGMENT_LIMIT)
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return "bad", None, None
        finally:
            os.close(fd)
        if len(expected) != 64 or hashlib.sha256(data).hexdigest() != expected:
            _warn(f"cache: {path.name} is damaged or was written by an older ccbench (its bytes do not "
                  f"match its checksum); dropped, its runs will be computed again")
            return "bad", None, ident
        try:
            table = parquet_table(data).to_pydict()
            rows = list(zip(table["key"], table["metrics"], table["seconds"]))
        except Exception as exc:  # noqa: BLE001 - whatever pyarrow says of a bad file
            _warn(f"cache: {path.name} cannot be read ({type(exc).__name__}); dropped, its runs will be "
                  f"computed again")
            return "bad", None, ident
        # The rows themselves were checked when they were journaled (a bad row is never folded
        # in), and the digest says these are the bytes written then.
        return "ok", {key: (metrics, seconds) for key, metrics, seconds in rows}, ident

    def _stale_journal(self, path: Path) -> Optional[Tuple[list, Ident]]:
        """The good rows of a journal no live writer holds, and its identity; ``None`` for a
        journal being written (its writer holds its lock and lives) or gone. Read while holding
        a shared lock on it, so its writer cannot be mid-line."""
        if self._journal_path is not None and path.name == self._journal_path.name:
            return None
        try:
            fd = _open_regular(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                pid = path.stem.split("-")[1] if path.stem.count("-") >= 1 else ""
                if not (pid.isdigit() and not _pid_alive(int(pid))):
                    return None  # another writer is appending to it
            ident = _ident(fd)
            data = _read_fd(fd, JOURNAL_LIMIT)
        except OSError as exc:
            _warn(f"cache: {path}: cannot read ({exc.strerror}); its runs will be computed again")
            return None
        finally:
            os.close(fd)
        return self._journal_rows(path, ident, data), ident

    def _journal_rows(self, path: Path, ident: Ident, data: bytes) -> list:
        """The good rows of a journal's bytes: any bytes are tolerated, a line that is not a
        checksummed row is skipped (a warning counts them, once, except a last line a kill cut
        short)."""
        lines = data.split(b"\n")
        torn = lines.pop() if lines else b""  # after the last newline: empty, or cut short by a kill
        rows, bad = [], 0
        for line in lines:
            row = Cache._journal_row(line)
            if row is None:
                bad += 1
            else:
                rows.append(row)
        last = Cache._journal_row(torn) if torn else None
        if last is not None:
            rows.append(last)
        if bad and ident not in self._warned:
            self._warned.add(ident)
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

    # -- writing ------------------------------------------------------------------------------

    def put(self, key: str, metrics: Mapping[str, Any], seconds: float) -> bool:
        """Journal a finished run; False (with a one-line note per column) when its metrics
        would not come back from the cache as they are — the run is then simply not cached."""
        try:
            plain = _storable_metrics(metrics)
        except _Refused as exc:
            if exc.column not in self._refused:
                self._refused.add(exc.column)
                _note(f"cache: metric column {exc.column!r} holds a {exc.what}, which would not come back from "
                      f"the cache as it went in; runs with it are not cached")
            return False
        index = self._load()
        text = json.dumps(plain, allow_nan=True, separators=(",", ":"))
        row = (key, text, float(seconds))
        if self._journal is None:
            self._open_journal()
        line = {"k": key, "m": text, "s": row[2], "c": _row_checksum(*row)}
        assert self._journal is not None
        self._journal.write(json.dumps(line) + "\n")
        self._journal.flush()
        index[key] = (text, row[2])
        self._pending.append(row)
        if len(self._pending) >= self.SEGMENT_ROWS:
            self.flush()
        return True

    def _open_journal(self) -> None:
        """A journal of this writer's own: created exclusively under a temporary name, locked,
        then renamed into sight, so no one ever sees it unlocked while this process writes it."""
        self.root.mkdir(parents=True, exist_ok=True)
        token = _token()
        tmp = self.root / f".journal-{token}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | _NOFOLLOW | _CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a new file: free
            path = self.root / f"journal-{token}.jsonl"
            os.rename(tmp, path)
            self._journal_ident = _ident(fd)
        except BaseException:
            _remove_if_same(tmp, _ident(fd))
            os.close(fd)
            raise
        self._journal_path = path
        self._journal = os.fdopen(fd, "a", encoding="utf-8")

    def _close_journal(self, remove: bool) -> None:
        if self._journal is not None:
            self._journal.close()  # releases its lock
            if remove and self._journal_path is not None:
                _remove_if_same(self._journal_path, self._journal_ident)
        self._journal = None
        self._journal_path = None
        self._journal_ident = None

    def _lock(self) -> int:
        """The folder's lock, held (a descriptor to close). Never through a planted link, never
        on anything but a regular file."""
        self.root.mkdir(parents=True, exist_ok=True)
        path = self.root / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def flush(self) -> None:
        """Fold this writer's runs and the journals of writers that are gone into a Parquet
        segment (merging segments when there are many), under the folder's lock."""
        if not self._pending and self._journal is None and not self._stale_seen:
            return
        try:
            lock = self._lock()
        except OSError as exc:
            _warn(f"cache: cannot lock {self.root / LOCK_NAME} ({exc.strerror or exc}); finished runs stay "
                  f"in the journal and are folded in by a later campaign")
            self._close_journal(remove=False)
            self._pending, self._stale_seen = [], False
            return
        try:
            self._fold()
        finally:
            os.close(lock)

    def _fold(self) -> None:
        """Under the lock: what is folded is read here, and only what was read here is removed,
        after the segment holding it is in place."""
        consumed: List[Tuple[Path, Ident]] = []
        rows: dict = {}
        for journal in sorted(self.root.glob("journal-*.jsonl")):
            stale = self._stale_journal(journal)
            if stale is None:
                continue
            for key, text, seconds in stale[0]:
                rows[key] = (text, seconds)
            consumed.append((journal, stale[1]))
        for key, text, seconds in self._pending:
            rows[key] = (text, seconds)
        segments = sorted(self.root.glob("seg-*.parquet"))
        if len(segments) >= self.MAX_SEGMENTS:  # one segment of all of them
            merged: dict = {}
            for segment in segments:
                status, found, ident = self._read_segment(segment)
                if status == "gone":
                    continue
                if found is not None:
                    merged.update(found)
                if ident is not None:
                    consumed.append((segment, ident))
            rows = {**merged, **rows}
        if rows:
            self._write_segment(rows)
        for path, ident in consumed:
            _remove_if_same(path, ident)
        self._close_journal(remove=True)
        if self._index is not None:
            self._index.update(rows)
        self._pending, self._stale_seen = [], False

    def _write_segment(self, rows: dict) -> Path:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.table({"key": list(rows), "metrics": [v[0] for v in rows.values()],
                          "seconds": [v[1] for v in rows.values()]})
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        path = self.root / f"seg-{time.time_ns()}-{os.getpid()}-{hashlib.sha256(data).hexdigest()}.parquet"
        tmp = self.root / f".seg-{_token()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
        ident = _ident(fd)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.rename(tmp, path)
        except BaseException:
            _remove_if_same(tmp, ident)
            raise
        return path

    close = flush
