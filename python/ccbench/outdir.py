"""Checking an output folder before any work: a bad ``--out`` must fail in a second with one
line naming the flag, not after an hour of runs with ``[Errno 17] File exists``.

The check creates nothing: a command that then fails for another reason leaves no empty folder
behind. It can only say that creating the folder should work (a race or a full disk can still
make it fail later; that is reported as an ordinary OSError).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from ccbench.errors import ArgumentError, ArgumentTypeError

#: Longest path shown in a message (a 100 kB argument would otherwise become a 100 kB line).
SHOW_AT_MOST = 120

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def show(path) -> str:
    """``path`` for a one-line message: shortened in the middle when very long."""
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else repr(path)
    if len(text) > SHOW_AT_MOST:
        half = SHOW_AT_MOST // 2
        text = f"{text[:half]}…{text[-half:]} ({len(text)} characters)"
    # Control characters (a newline, a NUL) would break the one line or hide in it.
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], text)


def _stat(path: str, flag: str):
    """``os.stat(path)``, or ``None`` when nothing is there; other failures name the flag."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path):  # a symbolic link to nothing: mkdir would say "File exists"
            raise ArgumentError(f"{flag}: {show(path)} is a broken symbolic link") from None
        return None
    except NotADirectoryError:
        return None  # an ancestor is a file: the walk up finds and names it
    except OSError as exc:
        reason = "path too long" if exc.errno == errno.ENAMETOOLONG else exc.strerror
        raise ArgumentError(f"{flag}: {show(path)}: {reason}") from None


def _kind(mode: int) -> str:
    return "a file, not a folder" if stat.S_ISREG(mode) else "not a folder"


def _writable(path: str) -> bool:
    # W to add entries, X to reach them.
    return os.access(path, os.W_OK | os.X_OK)


def check_out_dir(path: "str | os.PathLike[str]", flag: str = "--out") -> Path:
    """``path`` as a :class:`~pathlib.Path` if it is a folder this process can write, or one it
    can create; otherwise raise :class:`~ccbench.errors.UsageError` with a message starting with
    ``flag`` (``--out: /tmp/x is a file, not a folder``): an ``ArgumentTypeError`` (also a
    TypeError) for what is no path, an ``ArgumentError`` (also a ValueError) for a path that
    will not do. Creates nothing."""
    if not isinstance(path, (str, os.PathLike)):
        raise ArgumentTypeError(f"{flag}: expected a folder path, not {type(path).__name__} ({show(path)})")
    text = os.fspath(path)
    if isinstance(text, bytes):
        raise ArgumentTypeError(f"{flag}: expected a folder path as text, not bytes")
    if not text.strip():
        raise ArgumentError(f"{flag}: empty path; give a folder")
    if "\0" in text:
        raise ArgumentError(f"{flag}: {show(text)}: a path cannot contain a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # bytes that are not UTF-8, from argv: the writers need UTF-8
        shown = show(text).encode("utf-8", "backslashreplace").decode("utf-8")
        raise ArgumentError(f"{flag}: {shown}: not valid UTF-8; give a folder name in UTF-8") from None
    found = _stat(text, flag)
    if found is not None:
        if not stat.S_ISDIR(found.st_mode):
            raise ArgumentError(f"{flag}: {show(text)} is {_kind(found.st_mode)}")
        if not _writable(text):
            raise ArgumentError(f"{flag}: {show(text)}: folder not writable")
        return Path(text)
    _check_creatable(text, flag)
    return Path(text)


def _check_creatable(text: str, flag: str) -> None:
    """The nearest existing ancestor of ``text`` must be a writable folder."""
    absolute = Path(os.path.abspath(text))
    for ancestor in absolute.parents:
        found = _stat(str(ancestor), flag)
        if found is None:
            continue
        if not stat.S_ISDIR(found.st_mode):
            raise ArgumentError(f"{flag}: cannot create {show(text)}: {show(ancestor)} is "
                                f"{_kind(found.st_mode)}")
        if not _writable(str(ancestor)):
            raise ArgumentError(f"{flag}: cannot create {show(text)}: {show(ancestor)} is not writable")
        return


def _entries(folder: Path, flag: str) -> "list[str] | None":
    try:
        return os.listdir(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ArgumentError(f"{flag}: {show(folder)}: {exc.strerror}") from None


def _listed(names) -> str:
    names = sorted(names)
    return ", ".join(show(e) for e in names[:3]) + (", …" if len(names) > 3 else "")


def check_run_dir(path, flag: str = "--out") -> Path:
    """:func:`check_out_dir` for one run's folder, which must also be new, empty or a previous
    run's (only a run's files, each a regular file): a run is swapped in for the whole folder, so
    ``--out ~`` must not take a home folder with it. The rule is the core's
    (``ccbench._core.check_run_folder``), as for every program of ours."""
    from ccbench import _core

    folder = check_out_dir(path, flag)
    try:
        _core.check_run_folder(os.fspath(folder))
    except ValueError as exc:
        raise ArgumentError(f"{flag}: {' '.join(str(exc).split())}") from None
    return folder


#: What marks an experiment's folder: written last, in the folder swapped in whole.
EXPERIMENT_MARK = "meta.json"


def check_experiment_dir(path, flag: str = "--out") -> Path:
    """:func:`check_out_dir` for an experiment's folder, which is replaced whole: new, empty, or
    a previous experiment's (it holds ``meta.json``)."""
    folder = check_out_dir(path, flag)
    entries = _entries(folder, flag)
    if entries and EXPERIMENT_MARK not in entries:
        raise ArgumentError(f"{flag}: {show(folder)} holds files ({_listed(entries)}) but is no experiment's "
                            f"folder (no {EXPERIMENT_MARK}); give a new or empty folder, or a previous "
                            f"experiment's")
    return folder
