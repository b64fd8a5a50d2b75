"""The campaign runner (ccbench.campaign): cache keys, the journaled Parquet cache, failures,
Dask against in-process, progress, and ccbench.sweep. The command-line campaigns (kills,
a separate Dask cluster, the report in Chromium) are in test_reproduce.py."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest

import ccbench
from ccbench.campaign.cache import Cache
from ccbench.campaign.progress import Progress
from ccbench.campaign.runner import prepare, run_tasks
from ccbench.campaign.tasks import Task
from ccbench.experiments import Experiment, run_experiment

BASE = {
    "name": "campaign-test",
    "duration": "2s",
    "bottleneck": {"rate": "10Mbps", "rtt": "40ms", "buffer": "1bdp"},
    "flows": [{"cca": "cubic", "count": 2}],
}


def utilization(result, point):
    return {"utilization": result.link("bottleneck")["utilization"], "drops": result.link("bottleneck")["drops"]}


def goodput(result, point):
    return {"goodput": sum(f["goodput_mbps"] for f in result.summary["flows"])}


def _task(overrides=(), seed=1, metric=utilization, base=BASE):
    return Task(metric, base, list(overrides), {}, seed)


def test_key_follows_the_validated_scenario_not_its_spelling():
    same = [_task(["bottleneck.rate=\"10Mbps\""]), _task(["bottleneck.rate=\"10000kbps\""]), _task()]
    other = [_task(seed=2), _task(["bottleneck.rate=\"20Mbps\""]), _task(metric=goodput)]
    prepare(same + other)
    assert len({t.key for t in same}) == 1
    assert len({t.key for t in same + other}) == 4
    assert all(len(t.key) == 64 for t in same + other)


def test_invalid_scenario_gets_no_key_and_fails_alone():
    tasks = [_task(["bottleneck.rate=\"fast\""]), _task()]
    outcomes = run_tasks(tasks, jobs=1)
    assert tasks[0].key == "" and "bottleneck.rate" in outcomes[0].error
    assert outcomes[1].error is None and outcomes[1].metrics["utilization"] > 0.5


def test_cache_keeps_runs_a_kill_interrupted_and_skips_a_torn_line(tmp_path):
    cache = Cache(tmp_path)
    cache.put("a" * 64, {"x": 1.5, "n": 3, "none": None, "nan": float("nan")}, 0.25)
    cache.put("b" * 64, {"x": 2.5}, 0.5)
    journal = next(tmp_path.glob("journal-*.jsonl"))
    # As a SIGKILL leaves it: no segment yet, and a last line cut short (as from another pid).
    dead = journal.with_name("journal-999999999.jsonl")
    journal.rename(dead)
    with dead.open("a") as f:
        f.write('{"k": "cccc", "m": "{\\"x\\"')
    fresh = Cache(tmp_path)
    metrics, seconds = fresh.get("a" * 64)
    assert metrics["x"] == 1.5 and metrics["n"] == 3 and metrics["none"] is None and metrics["nan"] != metrics["nan"]
    assert seconds == 0.25 and fresh.get("c" * 4) is None and len(fresh) == 2
    fresh.flush()
    assert not list(tmp_path.glob("journal-*")) and len(list(tmp_path.glob("seg-*.parquet"))) == 1
    assert Cache(tmp_path).get("b" * 64) == ({"x": 2.5}, 0.5)


def test_many_segments_are_merged(tmp_path):
    cache = Cache(tmp_path)
    for i in range(Cache.MAX_SEGMENTS + 1):
        cache.put(f"{i:064x}", {"i": i}, 0.0)
        cache.flush()
    segments = list(tmp_path.glob("seg-*.parquet"))
    assert len(segments) == 1
    assert all(Cache(tmp_path).get(f"{i:064x}")[0] == {"i": i} for i in range(Cache.MAX_SEGMENTS + 1))


EXPERIMENT = Experiment(
    name="campaign-test",
    base=BASE,
    grid={"bottleneck.buffer": ["0.5bdp", "1bdp"], "flows[0].cca": ["cubic", "newreno"]},
    seeds=(1, 2),
    metric=utilization,
)


def test_experiment_cache_reuse_force_and_failures(tmp_path):
    broken = Experiment(name="campaign-broken", base=BASE, metric=utilization,
                        grid={"bottleneck.rate": ["10Mbps", "fast"]})
    lines = []
    first = run_experiment(EXPERIMENT, jobs=1, cache=tmp_path, progress=lines.append)
    assert len(first) == 8 and (first["error"] == "").all() and len(lines) == 8
    lines.clear()
    again = run_experiment(EXPERIMENT, jobs=1, cache=tmp_path, progress=lines.append)
    pd.testing.assert_frame_equal(first, again)
    assert lines == ["[8/8] 8 run(s) from the cache"]
    lines.clear()
    forced = run_experiment(EXPERIMENT, jobs=1, cache=tmp_path, force=True, progress=lines.append)
    pd.testing.assert_frame_equal(first, forced)
    assert len(lines) == 8 and not any("cache" in line for line in lines)

    failed = run_experiment(broken, jobs=1, cache=tmp_path)
    assert list(failed["error"] == "") == [True, False] and "bottleneck.rate" in failed["error"][1]
    lines.clear()
    run_experiment(broken, jobs=1, cache=tmp_path, progress=lines.append)
    assert lines[0] == "[1/2] 1 run(s) from the cache" and "failed" in lines[1]  # retried, not cached


def test_dask_workers_give_the_in_process_numbers(tmp_path):
    local = run_experiment(EXPERIMENT, jobs=1)
    on_dask = run_experiment(EXPERIMENT, jobs=2, out=tmp_path)
    pd.testing.assert_frame_equal(local, on_dask)
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["runs"] == 8 and meta["failed"] == 0 and meta["points"][0] == {"bottleneck.buffer": "0.5bdp",
                                                                             "flows[0].cca": "cubic"}
    assert pd.read_parquet(tmp_path / "results.parquet")["utilization"].tolist() == local["utilization"].tolist()


def test_progress_is_plain_lines_off_a_terminal(capsys):
    from ccbench.campaign.tasks import Outcome

    progress = Progress(3, "x", True)
    assert progress.mode == "lines"
    progress.from_cache(1)
    progress.advance("x #1 seed=1", Outcome({"u": 0.91234}, None, 1.0))
    progress.advance("x #2 seed=1", Outcome(None, "ValueError: bad", 1.0))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[1/3] 1 run(s) from the cache"
    assert out[1].startswith("[2/3") and out[1].endswith("x #1 seed=1: u=0.9123")
    assert out[2] == "[3/3, 1 failed] x #2 seed=1: failed: ValueError: bad"


def test_sweep_returns_a_frame_and_reuses_the_cache(tmp_path):
    grid = {"bottleneck.buffer": ["0.5bdp", "2bdp"]}
    frame = ccbench.sweep(BASE, grid, seeds=[1, 2], metric=goodput, jobs=2, cache=tmp_path, progress=False)
    assert list(frame.columns) == ["bottleneck.buffer", "seed", "goodput", "error"]
    assert frame["bottleneck.buffer"].tolist() == ["0.5bdp", "0.5bdp", "2bdp", "2bdp"]
    assert frame["seed"].tolist() == [1, 2, 1, 2] and (frame["goodput"] > 5).all()
    lines = []
    paths = ccbench.sweep(BASE, grid, seeds=[1, 2], metric=goodput, jobs=2, cache=tmp_path, progress=lines.append)
    pd.testing.assert_frame_equal(frame, paths)
    assert lines == ["[4/4] 4 run(s) from the cache"]
    by_path = ccbench.sweep(BASE, grid, metric=["links.bottleneck.utilization", "jain_index"], jobs=1, cache=False,
                            progress=False)
    assert by_path["links.bottleneck.utilization"].between(0.5, 1.0).all() and by_path["jain_index"].notna().all()


def test_sweep_bad_input():
    with pytest.raises(ccbench.ScenarioError, match="duration"):
        ccbench.sweep({**BASE, "duration": "soon"}, {}, progress=False)
    with pytest.raises(RuntimeError, match="no 'nope'"):
        ccbench.sweep(BASE, {}, metric="links.nope.utilization", jobs=1, cache=False, progress=False)
    with pytest.raises(TypeError, match="metric"):
        ccbench.sweep(BASE, {}, metric=42, progress=False)
    with pytest.raises(ValueError, match="seeds"):
        ccbench.sweep(BASE, {}, seeds=[], progress=False)


def test_sweep_default_cache_honours_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CCBENCH_CACHE", str(tmp_path / "c"))
    ccbench.sweep(BASE, {}, metric=goodput, jobs=1, progress=False)
    assert len(Cache(tmp_path / "c")) == 1 and not list((tmp_path / "c").glob("journal-*"))
    assert os.environ["CCBENCH_CACHE"].endswith("c")


def test_example_notebook_runs_top_to_bottom(tmp_path, monkeypatch):
    """examples/sweep.ipynb, cell by cell, as Jupyter would (on a cold cache, then a warm one)."""
    import matplotlib

    matplotlib.use("Agg")
    notebook = json.loads((Path(__file__).resolve().parents[2] / "examples" / "sweep.ipynb").read_text())
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    monkeypatch.setenv("CCBENCH_CACHE", str(tmp_path))
    for _ in range(2):
        namespace = {}
        for cell in cells:
            exec(compile(cell, "sweep.ipynb", "exec"), namespace)  # our own notebook
        runs, table = namespace["runs"], namespace["table"]
        assert len(runs) == 24 and (runs["error"] == "").all()
        codel = table.loc["codel"]["utilization"]
        assert codel[0.85] > codel[0.5]  # ABE's claim, as the notebook says


def _offloaded(jobs):
    """Run two tasks with ``on_done`` handing follow-up work to an :class:`Offload`: a function
    that returns and one that raises. Returns what ``done`` saw, and whether a cluster was up."""
    from ccbench.campaign.runner import Offload, run_groups

    offload, seen, on_workers = Offload(), [], []

    def on_done(task, outcome):
        on_workers.append(offload.client is not None)
        offload(len, ([1, 2, 3],), lambda value, error: seen.append(("len", value, error)))
        offload(int, ("not a number",), lambda value, error: seen.append(("int", value, type(error))))

    run_groups([[_task(), _task(seed=2)]], jobs=jobs, on_done=on_done, offload=offload)
    return sorted(seen, key=repr), on_workers, offload


@pytest.mark.parametrize("jobs", [1, 2])
def test_follow_up_work_runs_on_the_workers_and_reports_here(jobs):
    """An experiment's analysis goes to the embedded cluster's workers while runs are under way
    (one job: here); either way its value or its exception comes back to ``done``, every piece
    before run_groups returns, and the offload is disconnected after."""
    seen, on_workers, offload = _offloaded(jobs)
    assert seen == sorted([("len", 3, None), ("len", 3, None), ("int", None, ValueError), ("int", None, ValueError)],
                          key=repr)
    assert all(on_workers) == (jobs > 1) and offload.client is None and not offload.pending
