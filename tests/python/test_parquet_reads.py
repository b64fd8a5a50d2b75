"""Every Parquet file ccbench reads is decoded without Arrow's thread pool: with pyarrow 26 a
process that decoded on it aborts at exit about one time in eight (status -6, "terminate called
without an active exception", apache/arrow#34314), which failed a cache-sharing writer in CI."""

import re
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

import ccbench
from ccbench.campaign.cache import Cache
from ccbench.files import write_parquet

PACKAGE = Path(ccbench.__file__).parent


def _spy(monkeypatch):
    calls = []
    real = pq.read_table

    def read_table(source, *args, **kwargs):
        calls.append(kwargs)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pq, "read_table", read_table)
    return calls


def test_a_run_folder_and_a_cache_segment_are_read_on_this_thread(tmp_path, monkeypatch):
    calls = _spy(monkeypatch)
    write_parquet(tmp_path / "frame.parquet", pd.DataFrame({"a": [1, 2]}))
    from ccbench.files import read_parquet

    assert read_parquet(tmp_path / "frame.parquet")["a"].tolist() == [1, 2]
    Cache(tmp_path / "cache").put("0" * 64, {"x": 1.0}, 0.5)
    Cache(tmp_path / "cache").flush()
    writer = Cache(tmp_path / "cache")
    writer.put("1" * 64, {"x": 2.0}, 0.5)
    writer.flush()
    assert Cache(tmp_path / "cache").get("1" * 64) == ({"x": 2.0}, 0.5)
    assert len(calls) >= 2
    assert all(kw.get("use_threads") is False and kw.get("pre_buffer") is False for kw in calls), calls


def test_no_other_parquet_reader_in_the_package():
    """A new reader goes through ccbench.files (parquet_table / read_parquet), not around it."""
    readers = re.compile(r"\b(pd|pandas|pq|parquet|dd)\.(read_table|read_parquet|ParquetFile|ParquetDataset)\(")
    around = [f"{path.relative_to(PACKAGE)}:{n}" for path in PACKAGE.rglob("*.py") if path.name != "files.py"
              for n, line in enumerate(path.read_text().splitlines(), 1)
              if readers.search(line)]
    assert not around, around
