"""The run cache never serves a stale or damaged number (issue 25, item 1): a key covers every
Python source of the package beside the core, a segment's bytes are checked against the digest
in its name, a journal tolerates any bytes and folds in only rows whose checksum holds; damage
is dropped with one warning and its runs computed again, and it does not come back."""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ccbench.campaign.cache import Cache, package_fingerprint, package_root
from ccbench.experiments import Experiment, run_experiment

BASE = {
    "duration": "2s",
    "bottleneck": {"rate": "10Mbps", "rtt": "40ms", "buffer": "1bdp"},
    "flows": [{"cca": "cubic", "count": 2}],
}


def utilization(result, point):
    return {"utilization": result.link("bottleneck")["utilization"]}


EXPERIMENT = Experiment(name="cache-trust", base=BASE, metric=utilization,
                        grid={"bottleneck.rate": ["8Mbps", "10Mbps"]}, seeds=(1, 2))

KEY = "ab" * 32


def _run(cache):
    return run_experiment(EXPERIMENT, jobs=1, cache=cache)["utilization"].tolist()


def _only_segment(root: Path) -> Path:
    segments = list(root.glob("seg-*.parquet"))
    assert len(segments) == 1, segments
    return segments[0]


# ----- the key covers the code a run executes ------------------------------------------------

def test_any_source_file_of_the_package_changes_the_fingerprint(tmp_path):
    copy = tmp_path / "ccbench"
    shutil.copytree(package_root(), copy, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    before = package_fingerprint(copy)
    assert before == package_fingerprint(package_root())
    for helper in ("result.py", "experiments/siad/common.py", "experiments/rledbat/common.py"):
        with (copy / helper).open("a") as f:
            f.write("\n# edited\n")
        after = package_fingerprint(copy)
        assert after != before, helper
        before = after


def test_a_run_of_edited_code_is_computed_again(tmp_path):
    """End to end, as a user edits the package: a line appended to result.py in a copy of it,
    and `ccbench experiment` takes none of its runs from the cache."""
    site = tmp_path / "site"
    shutil.copytree(package_root(), site / "ccbench", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(site))

    def cached() -> int:
        out = tmp_path / "out"
        proc = subprocess.run([sys.executable, "-m", "ccbench", "experiment", "abe-fig2", "--quick", "--jobs", "1",
                               "--cache", str(tmp_path / "cache"), "--out", str(out)],
                              capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return json.loads((out / "meta.json").read_text())["cached"]

    assert cached() == 0
    assert cached() > 0  # unchanged code: all from the cache
    with (site / "ccbench" / "result.py").open("a") as f:
        f.write("\n# a user's edit\n")
    assert cached() == 0


# ----- damaged segments ----------------------------------------------------------------------

def test_a_segment_cut_in_half_is_dropped_once_with_a_warning(tmp_path, capsys):
    first = _run(tmp_path)
    segment = _only_segment(tmp_path)
    data = segment.read_bytes()
    segment.write_bytes(data[: len(data) // 2])
    capsys.readouterr()
    assert _run(tmp_path) == first
    err = capsys.readouterr().err
    assert err.count("warning: cache: ") == 1 and segment.name in err and "computed again" in err
    assert not segment.exists()
    _run(tmp_path)
    assert "warning" not in capsys.readouterr().err  # the damage does not come back


def test_one_flipped_byte_in_a_segment_never_serves_a_wrong_number(tmp_path, capsys):
    first = _run(tmp_path)
    segment = _only_segment(tmp_path)
    data = bytearray(segment.read_bytes())
    at = data.find(b'"utilization":0.') + len(b'"utilization":0.')
    assert at > 20, "the metrics are stored as text in the segment"
    data[at] = ord("1") if data[at] != ord("1") else ord("2")
    segment.write_bytes(bytes(data))
    capsys.readouterr()
    assert _run(tmp_path) == first
    assert "warning: cache: " in capsys.readouterr().err


def test_a_segment_of_an_older_ccbench_without_a_digest_is_dropped(tmp_path, capsys):
    _run(tmp_path)
    segment = _only_segment(tmp_path)
    segment.rename(tmp_path / "seg-1-2.parquet")
    capsys.readouterr()
    assert len(Cache(tmp_path)) == 0
    assert "older ccbench" in capsys.readouterr().err


# ----- damaged journals ----------------------------------------------------------------------

def _dead_journal(root: Path) -> Path:
    return root / "journal-999999999.jsonl"


def test_random_bytes_in_a_journal_are_tolerated(tmp_path, capsys):
    cache = Cache(tmp_path)
    cache.put(KEY, {"x": 8.23}, 0.5)
    journal = next(tmp_path.glob("journal-*.jsonl"))
    dead = journal.rename(_dead_journal(tmp_path))
    noise = bytes(random.Random(25).randrange(256) for _ in range(4096))
    with dead.open("ab") as f:
        f.write(noise + b"\n" + noise + b"\n")
    fresh = Cache(tmp_path)
    assert fresh.get(KEY) == ({"x": 8.23}, 0.5)
    assert "damaged line" in capsys.readouterr().err
    fresh.flush()
    assert not dead.exists()
    assert Cache(tmp_path).get(KEY) == ({"x": 8.23}, 0.5)
    assert "warning" not in capsys.readouterr().err


def test_a_well_formed_line_whose_metrics_are_not_json_is_never_folded_in(tmp_path, capsys):
    line = {"k": "cd" * 32, "m": "{not json", "s": 0.1, "c": "0" * 16}
    forged = dict(line, m='{"x": 1.23}')  # a row whose checksum does not hold
    _dead_journal(tmp_path).write_text(json.dumps(line) + "\n" + json.dumps(forged) + "\n")
    cache = Cache(tmp_path)
    assert len(cache) == 0 and cache.get("cd" * 32) is None
    assert "2 damaged lines skipped" in capsys.readouterr().err
    cache.put(KEY, {"x": 1.0}, 0.1)
    cache.flush()
    assert len(Cache(tmp_path)) == 1
    assert "warning" not in capsys.readouterr().err


def test_force_with_a_damaged_journal_recomputes_without_error(tmp_path, capsys):
    first = _run(tmp_path)
    _dead_journal(tmp_path).write_bytes(b"\xff\xfe\x00garbage\n" * 10)
    again = run_experiment(EXPERIMENT, jobs=1, cache=tmp_path, force=True)["utilization"].tolist()
    assert again == first
    assert "damaged lines skipped" in capsys.readouterr().err


@pytest.mark.parametrize("cut", [1, 17, 40])
def test_a_torn_last_line_is_skipped_silently(tmp_path, capsys, cut):
    cache = Cache(tmp_path)
    cache.put(KEY, {"x": 1.0}, 0.1)
    journal = next(tmp_path.glob("journal-*.jsonl")).rename(_dead_journal(tmp_path))
    text = journal.read_bytes()
    journal.write_bytes(text + text[:cut])
    assert Cache(tmp_path).get(KEY) == ({"x": 1.0}, 0.1)
    assert "warning" not in capsys.readouterr().err
