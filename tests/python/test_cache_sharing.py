"""A cache shared safely (issue 38, item 3): several processes on one cache folder never lose
each other's runs (folding and merging under the folder's lock, removing only what was read
there); a cached value never depends on anything outside its key (a metric is keyed by its code
and everything it reads, or not cached, with a note); values come back as they went in, or are
not cached."""

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import ccbench
from ccbench.campaign import metric_key
from ccbench.campaign.cache import Cache, UncacheableMetric, metric_identity
from ccbench.sweep import Select

BASE = {
    "name": "cache-sharing",
    "duration": "2s",
    "bottleneck": {"rate": "10Mbps", "rtt": "40ms", "buffer": "1bdp"},
    "flows": [{"cca": "cubic", "count": 2}],
}


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _sweep(metric, cache_dir, seeds=(1,)):
    return ccbench.sweep(BASE, {}, seeds=list(seeds), metric=metric, jobs=1, cache=cache_dir, progress=False)


def _notes(err: str, what: str) -> list:
    return [line for line in err.splitlines() if line.startswith("note: cache:") and what in line]


# ----- several processes on one cache ----------------------------------------------------------

WRITER = textwrap.dedent("""
    import hashlib, sys, time
    from pathlib import Path
    from ccbench.campaign.cache import Cache

    root, sync, tag = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    count, every, fresh = int(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == "fresh"
    Cache.MAX_SEGMENTS = 3  # merges at almost every other flush
    cache = Cache(root)
    len(cache)  # this writer's index as the folder was before the other wrote anything
    (sync / f"ready-{tag}").touch()
    while not (sync / "go").exists():
        time.sleep(0.001)
    for i in range(count):
        cache.put(hashlib.sha256(f"{tag}-{i}".encode()).hexdigest(), {"tag": tag, "i": i}, 0.01)
        if i % every == every - 1:
            cache.flush()
            if fresh:  # a writer that reads the folder again, while the other merges
                cache = Cache(root)
                len(cache)
    cache.flush()
""")


def _writers(root: Path, sync: Path, specs):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(root), str(sync), tag, str(count), str(every), mode],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag, count, every, mode in specs]
    deadline = time.monotonic() + 60
    while not all((sync / f"ready-{spec[0]}").exists() for spec in specs):
        assert time.monotonic() < deadline and all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.01)
    (sync / "go").touch()
    errors = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        errors.append(err)
    return "".join(errors)


def test_interleaved_writers_keep_every_run_of_all(tmp_path):
    root, sync = tmp_path / "cache", tmp_path / "sync"
    root.mkdir()
    sync.mkdir()
    Cache(root).put(_key("before"), {"x": 1}, 0.1)  # an older campaign's journal: a dead writer's
    journal = next(root.glob("journal-*.jsonl"))
    journal.rename(root / "journal-999999999.jsonl")
    count = 100
    err = _writers(root, sync, [("a", count, 2, "same"), ("b", count, 3, "same"), ("c", count, 3, "fresh")])
    fresh = Cache(root)
    lost = [(tag, i) for tag in "abc" for i in range(count)
            if fresh.get(_key(f"{tag}-{i}")) != ({"tag": tag, "i": i}, 0.01)]
    assert not lost, f"{len(lost)} runs lost, such as {lost[:5]}"
    assert fresh.get(_key("before")) == ({"x": 1}, 0.1)
    assert len(fresh) == 3 * count + 1
    assert "warning" not in err, err
    assert not list(root.glob("journal-*")) and not list(root.glob(".*.tmp"))
    assert len(list(root.glob("seg-*.parquet"))) <= 4  # merged as they went


def test_dead_writers_journals_are_folded_once_by_concurrent_flushes(tmp_path):
    root = tmp_path / "cache"
    for n in range(6):  # journals of killed campaigns
        writer = Cache(root)
        writer.put(_key(f"dead-{n}"), {"n": n}, 0.0)
        live = [j for j in root.glob("journal-*.jsonl") if not j.name.startswith("journal-99999999")]
        live[0].rename(root / f"journal-99999999{n}.jsonl")
        writer._journal.close()
        writer._journal = None
    sync = tmp_path / "sync"
    sync.mkdir()
    err = _writers(root, sync, [("a", 10, 1, "same"), ("b", 10, 1, "same"), ("c", 10, 1, "fresh")])
    fresh = Cache(root)
    assert len(fresh) == 6 + 30
    assert all(fresh.get(_key(f"dead-{n}")) == ({"n": n}, 0.0) for n in range(6))
    assert not list(root.glob("journal-*"))
    assert "warning" not in err, err


def test_a_merge_never_unlinks_a_segment_it_did_not_read(tmp_path, monkeypatch):
    """In one process, the same race the two writers run: a Cache that loaded its index before
    another wrote its segments merges, and the other's runs survive."""
    monkeypatch.setattr(Cache, "MAX_SEGMENTS", 3)
    early = Cache(tmp_path)
    assert len(early) == 0
    other = Cache(tmp_path)
    for i in range(3):
        other.put(_key(f"other-{i}"), {"i": i}, 0.0)
        other.flush()
    early.put(_key("early"), {"i": -1}, 0.0)
    early.flush()  # merges the three segments it never loaded
    fresh = Cache(tmp_path)
    assert len(fresh) == 4 and fresh.get(_key("other-2")) == ({"i": 2}, 0.0)
    assert len(list(tmp_path.glob("seg-*.parquet"))) == 1


def test_a_planted_link_at_the_lock_is_never_followed(tmp_path, capsys):
    victim = tmp_path / "victim"
    victim.write_bytes(b"a user's file\n")
    root = tmp_path / "cache"
    root.mkdir()
    (root / "lock").symlink_to(victim)
    cache = Cache(root)
    cache.put(_key("kept"), {"x": 2.5}, 0.5)
    cache.flush()
    assert victim.read_bytes() == b"a user's file\n"
    assert "cannot lock" in capsys.readouterr().err
    assert not list(root.glob("seg-*"))
    (root / "lock").unlink()
    later = Cache(root)  # the run stayed in the journal, and is folded in by the next campaign
    assert later.get(_key("kept")) == ({"x": 2.5}, 0.5)
    later.flush()
    assert Cache(root).get(_key("kept")) == ({"x": 2.5}, 0.5) and not list(root.glob("journal-*"))
    assert (root / "lock").is_file() and not (root / "lock").is_symlink()


def test_a_live_writers_journal_is_left_alone(tmp_path):
    writing = Cache(tmp_path)
    writing.put(_key("live"), {"x": 1}, 0.0)
    other = Cache(tmp_path)
    assert other.get(_key("live")) is None  # being written: not adopted
    other.put(_key("other"), {"x": 2}, 0.0)
    other.flush()
    journal = next(tmp_path.glob("journal-*.jsonl"))
    assert journal == writing._journal_path  # still there, still its writer's
    writing.put(_key("live-2"), {"x": 3}, 0.0)
    writing.flush()
    fresh = Cache(tmp_path)
    assert len(fresh) == 3 and not list(tmp_path.glob("journal-*"))


# ----- a cached value never depends on anything outside its key --------------------------------

def _make(k):
    return lambda result, point: {"x": result.summary["jain_index"] * k}


SCALE = 1.0


def _scaled(result, point):
    return {"x": result.summary["jain_index"] * SCALE}


def test_closures_defaults_and_globals_enter_the_identity(monkeypatch):
    assert metric_identity(_make(1)) != metric_identity(_make(2))
    assert metric_identity(_make(1)) == metric_identity(_make(1))
    defaults = [lambda r, p, k=k: {"x": k} for k in (1, 2)]
    assert metric_identity(defaults[0]) != metric_identity(defaults[1])
    before = metric_identity(_scaled)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 3.0)
    assert metric_identity(_scaled) != before
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 1.0)
    assert metric_identity(_scaled) == before
    assert metric_identity(Select(["jain_index"])) == metric_identity(Select(["jain_index"]))
    assert metric_identity(Select(["jain_index"])) != metric_identity(Select(["links.bottleneck.utilization"]))


def _loop(root):
    """The issue's case: a sweep per value of a loop variable, the metric a lambda over it."""
    values = []
    for k in (1, 2, 3):
        frame = _sweep(lambda result, point: {"x": result.summary["jain_index"] * k}, root)  # noqa: B023
        values.append(frame["x"][0])
    return values


def test_lambdas_over_a_loop_variable_each_get_their_own_values(tmp_path):
    values = _loop(tmp_path)
    assert values[0] > 0.5
    assert values == pytest.approx([values[0], 2 * values[0], 3 * values[0]])
    assert len(Cache(tmp_path)) == 3
    assert _loop(tmp_path) == values and len(Cache(tmp_path)) == 3  # each from its own key


def test_a_global_the_metric_reads_enters_its_key(tmp_path, monkeypatch):
    one = _sweep(_scaled, tmp_path)["x"][0]
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 2.0)
    assert _sweep(_scaled, tmp_path)["x"][0] == pytest.approx(2 * one)
    assert len(Cache(tmp_path)) == 2


HELPER_FACTOR = 1


def _helper(value):
    return value * HELPER_FACTOR


def _via_helper(result, point):
    return {"x": _helper(result.summary["jain_index"])}


def test_what_a_called_function_reads_enters_the_key(monkeypatch):
    before = metric_identity(_via_helper)
    monkeypatch.setattr(sys.modules[__name__], "HELPER_FACTOR", 5)
    assert metric_identity(_via_helper) != before


IDENTITY_SCRIPT = textwrap.dedent("""
    import sys
    from ccbench.campaign.cache import metric_identity
    NAMES = {"alpha", "beta", "gamma", "delta"}
    TABLE = {"a": (1, 2.5, None), "b": frozenset({"x", "y", "z"})}
    class Scale:
        def __init__(self, k):
            self.k = k
        def __call__(self, result, point):
            return {"x": self.k * len(NAMES)}
    def metric(result, point):
        return {name: TABLE for name in sorted(NAMES)}
    print(metric_identity(metric), metric_identity(Scale(2)), metric_identity(lambda r, p: {"n": len(NAMES)}))
""")


def test_identities_are_the_same_in_every_process():
    seen = set()
    for seed in ("1", "2", "3"):
        proc = subprocess.run([sys.executable, "-c", IDENTITY_SCRIPT], capture_output=True, text=True,
                              env=dict(os.environ, PYTHONHASHSEED=seed), timeout=60)
        assert proc.returncode == 0, proc.stderr
        seen.add(proc.stdout)
    assert len(seen) == 1


# ----- values come back as they went in, or are not cached ------------------------------------

def _pair(result, point):
    return {"pair": (1, 2), "jain": result.summary["jain_index"]}


def test_a_tuple_is_not_cached_and_the_sweep_still_has_it(tmp_path, capsys):
    frame = _sweep(_pair, tmp_path, seeds=(1, 2))
    assert frame["pair"].tolist() == [(1, 2), (1, 2)] and (frame["jain"] > 0.5).all()
    assert len(Cache(tmp_path)) == 0
    err = capsys.readouterr().err
    assert len(_notes(err, "'pair'")) == 1 and "tuple" in err
    again = _sweep(_pair, tmp_path, seeds=(1, 2))
    assert again["pair"].tolist() == [(1, 2), (1, 2)] and again["jain"].tolist() == frame["jain"].tolist()


def test_numpy_scalars_and_non_finite_floats_round_trip(tmp_path):
    cache = Cache(tmp_path)
    went_in = {"f32": np.float32(0.25), "f64": np.float64(1 / 3), "i": np.int64(7), "b": np.bool_(True),
               "s": np.str_("ok"), "nan": float("nan"), "inf": float("-inf"), "big": 2**80,
               "nested": {"list": [1, 2.5, None, "x", [True]]}}
    assert cache.put(_key("np"), went_in, 0.5)
    cache.flush()
    back, _ = Cache(tmp_path).get(_key("np"))
    assert back["f32"] == 0.25 and type(back["f32"]) is float
    assert back["f64"] == 1 / 3 and back["i"] == 7 and type(back["i"]) is int and back["b"] is True
    assert back["s"] == "ok" and back["nan"] != back["nan"] and back["inf"] == float("-inf")
    assert back["big"] == 2**80 and back["nested"] == {"list": [1, 2.5, None, "x", [True]]}


@pytest.mark.parametrize("value", [(1, 2), {1, 2}, {1: "a"}, b"raw", object(), np.array([1.0]), [1, (2, 3)],
                                   {"inner": {3: 4}}, 1 + 2j, np.timedelta64(5, "s")])
def test_values_that_would_change_are_refused(tmp_path, capsys, value):
    cache = Cache(tmp_path)
    assert cache.put(_key("refused"), {"col": value, "ok": 1.0}, 0.1) is False
    assert cache.put(_key("refused-2"), {"col": value}, 0.1) is False
    cache.flush()
    assert len(Cache(tmp_path)) == 0 and cache.get(_key("refused")) is None
    assert len(_notes(capsys.readouterr().err, "'col'")) == 1


# ----- a metric that cannot be keyed runs uncached --------------------------------------------

GUARD = threading.Lock()


def _locked_metric(result, point):
    with GUARD:
        return {"jain": result.summary["jain_index"]}


def test_an_unkeyable_metric_runs_uncached_with_one_note(tmp_path, capsys):
    with pytest.raises(UncacheableMetric, match="_thread.lock"):
        metric_identity(_locked_metric)
    frame = _sweep(_locked_metric, tmp_path, seeds=(1, 2))
    assert (frame["jain"] > 0.5).all() and (frame["error"] == "").all()
    assert len(Cache(tmp_path)) == 0
    notes = _notes(capsys.readouterr().err, "_locked_metric")
    assert len(notes) == 1 and "GUARD" in notes[0] and "not cached" in notes[0]
    again = _sweep(_locked_metric, tmp_path, seeds=(1, 2))
    assert again["jain"].tolist() == frame["jain"].tolist() and len(Cache(tmp_path)) == 0


def test_unkeyable_things_are_named(tmp_path):
    generator = (i for i in range(3))
    with pytest.raises(UncacheableMetric, match="generator"):
        metric_identity(lambda r, p: {"x": next(generator)})
    with open(tmp_path / "f", "w") as handle:
        with pytest.raises(UncacheableMetric, match="TextIOWrapper"):
            metric_identity(lambda r, p: handle.write("x") and {})
    deep: list = []
    for _ in range(metric_key.KEY_DEPTH + 5):
        deep = [deep]
    with pytest.raises(UncacheableMetric, match="nested"):
        metric_identity(lambda r, p: {"x": len(deep)})


def test_the_journal_format_is_one_checksummed_json_object_a_line(tmp_path):
    cache = Cache(tmp_path)
    cache.put(_key("line"), {"x": 1.5}, 0.25)
    line = json.loads(next(tmp_path.glob("journal-*.jsonl")).read_text().splitlines()[0])
    assert set(line) == {"k", "m", "s", "c"} and json.loads(line["m"]) == {"x": 1.5}
