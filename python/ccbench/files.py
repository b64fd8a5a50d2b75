"""The file layer of the Python front end: every file ccbench reads because a user named it, and
every file or folder it writes, goes through here. The rules live once, in Rust
(``crates/files``, bound in ``ccbench._core``), and hold for every program of ours alike:

- an input is a regular file (a FIFO is refused at once, never waited on), read with a cap stated
  per kind (:data:`KINDS`: ``scenario``, ``trace``, ``summary``, …);
- an output is written whole beside its target under a fresh name (``O_CREAT | O_EXCL |
  O_NOFOLLOW``) and renamed over it: a link planted at the target is replaced, its target keeps
  its bytes; a FIFO, a device or a folder there is left alone with a one-line error;
- a run's or an experiment's folder is staged beside its target and swapped in whole
  (:func:`staged_folder`): a kill at any moment leaves the previous folder or the new one.

Errors are :class:`FileRefused` (an ``OSError`` and a :class:`~ccbench.errors.UsageError`): one
line naming the path and why, which the CLI prints with exit status 2.
"""

from __future__ import annotations

import io
import json
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, Union

from ccbench.errors import UsageError

PathLike = Union[str, "os.PathLike[str]"]

#: The kinds of input and their caps, as the core states them (bytes).
KINDS = ("scenario", "trace", "config", "certificate", "summary", "transfer")


class FileRefused(UsageError, OSError):
    """A file that cannot be read or written as asked: the message names it and says why;
    ``why`` is the reason alone."""

    why = ""


def _core():
    from ccbench import _core as core

    return core


def _refused(exc: OSError, label: str = "") -> FileRefused:
    text = " ".join(str(exc).split())
    refused = FileRefused(f"{label} {text}" if label else text)
    # The core's message is "<path>: <why>"; paths may hold ": " too, reasons never start so.
    refused.why = text.rsplit(": ", 1)[-1] if ": " in text else text
    return refused


def read_bytes(path: PathLike, kind: str, label: str = "") -> bytes:
    """The bytes of ``path``, an input of ``kind`` (see :data:`KINDS`)."""
    try:
        return _core().read_input(os.fspath(path), kind)
    except OSError as exc:
        raise _refused(exc, label) from None


def read_text(path: PathLike, kind: str, label: str = "") -> str:
    """:func:`read_bytes` as UTF-8 text."""
    data = read_bytes(path, kind, label)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        why = f"not UTF-8 text ({exc.reason} at byte {exc.start})"
        refused = FileRefused(f"{label + ' ' if label else ''}{os.fspath(path)}: {why}")
        refused.why = why
        raise refused from None


def read_json(path: PathLike, kind: str = "summary", label: str = "") -> Any:
    """A JSON document read as an input of ``kind``; ``ValueError`` when it is not JSON."""
    return json.loads(read_bytes(path, kind, label))


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` whole (its folder is created if missing)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        _core().write_atomic(os.fspath(path), bytes(data))
    except OSError as exc:
        raise _refused(exc) from None
    return path


def write_text(path: PathLike, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: PathLike, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=1, default=str, allow_nan=True) + "\n")


def write_with(path: PathLike, render: Callable[[io.BytesIO], Any]) -> Path:
    """Write what ``render(buffer)`` puts in a buffer (``frame.to_parquet``, ``fig.savefig``) to
    ``path`` whole: writers that want a file get a buffer, never a path anyone could plant."""
    buffer = io.BytesIO()
    render(buffer)
    return write_bytes(path, buffer.getvalue())


def write_csv(path: PathLike, frame) -> Path:
    return write_text(path, frame.to_csv(index=False))


def write_parquet(path: PathLike, frame) -> Path:
    return write_with(path, lambda buffer: frame.to_parquet(buffer, index=False))


def parquet_table(data: bytes):
    """The Arrow table in Parquet ``data``, decoded on this thread. Arrow's thread pool is never
    started: with pyarrow 26, a process that decoded on it aborts at exit about one time in eight
    ("terminate called without an active exception", status -6, after all its work was done;
    apache/arrow#34314), which would lose a run's exit status and a campaign's worker."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return pq.read_table(pa.BufferReader(data), use_threads=False, pre_buffer=False)


def read_parquet(path: PathLike, label: str = ""):
    """The pandas frame in the Parquet file ``path`` (a ``summary`` input), decoded without
    Arrow's thread pool (see :func:`parquet_table`)."""
    import pandas as pd

    return pd.read_parquet(io.BytesIO(read_bytes(path, "summary", label)), use_threads=False, pre_buffer=False)


@contextmanager
def staged_folder(target: PathLike, *, keep_previous: bool = False, carry: Sequence[str] = ()) -> Iterator[Path]:
    """A fresh folder beside ``target`` to write into; when the block ends without error it is
    swapped in for ``target`` whole (the previous folder there, if any, goes), and on error it
    is removed and ``target`` is untouched. A link at ``target`` is followed (``--out`` naming a
    link to a folder writes where it points).

    ``keep_previous`` starts the folder from hard links to what ``target`` holds now (a campaign
    rewriting some experiments keeps the others); the top-level entries named in ``carry`` are
    left out of that and moved over, one rename each, just before the swap (a campaign's run
    cache, which may be in use by other processes and must never be copied)."""
    try:
        staged = _core().StagedDir(os.fspath(target))
        if keep_previous:
            staged.link_previous(list(carry))
    except OSError as exc:
        raise _refused(exc) from None
    try:
        yield Path(staged.path)
    except BaseException:
        staged.discard()
        raise
    try:
        staged.commit(list(carry))
    except OSError as exc:
        raise _refused(exc) from None
