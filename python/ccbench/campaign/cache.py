"""The run cache: one Parquet file per finished run, named by the run's key.

A key is the SHA-256 of everything a run's numbers depend on: the scenario as the core validated
it (unit-free, defaults filled in, seed applied, in canonical JSON), the core's version, the
engine, the grid point the metric sees, and the metric's code (the source of its module, so
editing an experiment recomputes its runs). Two campaigns that ask for the same run share it.

Files are written to a temporary name and renamed, so a campaign killed at any moment leaves
either a complete file or none; a file that cannot be read is treated as missing. Failed runs are
not cached: a rerun tries them again.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import marshal
import os
import sys
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


class Cache:
    """Finished runs under ``root``: ``root/<key[:2]>/<key>.parquet``, one row of metrics plus
    ``_seconds`` (the run's wall time on its worker)."""

    def __init__(self, root):
        self.root = Path(root)

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.parquet"

    def get(self, key: str) -> Optional[tuple]:
        """``(metrics, seconds)`` of a cached run, or ``None``."""
        path = self._path(key)
        if not path.is_file():
            return None
        import pyarrow.parquet as pq

        try:
            row = pq.read_table(path).to_pylist()[0]
        except Exception:  # noqa: BLE001 - a damaged file is a missing one: recompute it
            return None
        seconds = row.pop("_seconds", 0.0)
        return row, seconds

    def put(self, key: str, metrics: Mapping[str, Any], seconds: float) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        table = pa.Table.from_pylist([{**metrics, "_seconds": float(seconds)}])
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, path)
