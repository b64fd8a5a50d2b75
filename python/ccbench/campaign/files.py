"""Writing outputs so that a kill at any moment leaves the old file or the new one, never half
of one: write beside the target under a temporary name, then rename over it."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def _tmp(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def write_text(path, text: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp(path)
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def write_json(path, data: Any) -> Path:
    return write_text(path, json.dumps(data, indent=1, default=str, allow_nan=True) + "\n")


def _write_with(path, write) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _tmp(path)
    write(tmp)
    os.replace(tmp, path)
    return path


def write_csv(path, frame) -> Path:
    return _write_with(path, lambda tmp: frame.to_csv(tmp, index=False))


def write_parquet(path, frame) -> Path:
    return _write_with(path, lambda tmp: frame.to_parquet(tmp, index=False))


@contextmanager
def staged(directory) -> Iterator[Path]:
    """A scratch folder inside ``directory`` whose files are renamed into ``directory`` one by
    one when the block ends without error (for writers, like figures, that take a folder)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".staging-", dir=directory))
    try:
        yield scratch
        for item in sorted(scratch.rglob("*")):
            if item.is_file():
                target = directory / item.relative_to(scratch)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(item, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
