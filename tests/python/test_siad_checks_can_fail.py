"""Issue 25 item 3 for the SIAD thesis, mechanically: every comparison row that is judged (it has a
claim) and passes changes verdict when our number is halved or doubled, so no check passes whatever
the model does. A row that already differs is a failure the check has found; it is not asked to
fail again.

The quick runs are the ones the other SIAD test modules make (test_siad_sharing.py,
test_siad_single.py, test_siad_robust.py): each calls :func:`assert_rows_can_fail` on its
experiments' comparison.json, so no experiment runs twice. This module checks the helper itself
on hand-made rows, and that the migrated modules type no verdict by hand."""

import inspect
import json
from pathlib import Path

import pytest

from ccbench.experiments.checks import Check, Claim, redecide
from ccbench.experiments.siad import (
    aqm,
    capacity_change,
    cbr,
    cbr_onoff,
    common,
    components,
    delay_jitter,
    inter_protocol,
    random_loss,
    rate_jitter,
    rtt_change,
    short_flows,
    single_flow,
    staggered,
    table4_2,
    table4_3,
    table4_4,
    table4_5,
    ten_flows,
    timestamps,
    two_flows,
)

#: The SIAD experiments whose rows are checks (issue 25 item 2): all of them.
MIGRATED = {"siad-two-flows": two_flows, "siad-table4-2": table4_2, "siad-table4-3": table4_3,
            "siad-table4-4": table4_4, "siad-table4-5": table4_5, "siad-ten-flows": ten_flows,
            "siad-inter-protocol": inter_protocol, "siad-components": components,
            "siad-single-flow": single_flow, "siad-rtt-change": rtt_change, "siad-rate-jitter": rate_jitter,
            "siad-delay-jitter": delay_jitter, "siad-cbr": cbr, "siad-timestamps": timestamps,
            "siad-capacity-change": capacity_change, "siad-cbr-onoff": cbr_onoff, "siad-staggered": staggered,
            "siad-short-flows": short_flows, "siad-random-loss": random_loss, "siad-aqm": aqm}


def rows_that_cannot_fail(rows):
    """The judged rows that pass (agree or within tolerance) and whose verdict neither halving nor
    doubling our number changes."""
    return [(r["what"], r["value"], r["verdict"]) for r in rows if r.get("claim") is not None
            and r["verdict"] not in ("differs", "full run decides")
            and redecide(r, r["value"] * 0.5) == r["verdict"] and redecide(r, r["value"] * 2) == r["verdict"]]


def assert_rows_can_fail(name: str, out: Path) -> None:
    """``name``'s comparison.json in ``out``: every judged row carries a number and can fail, and
    its reason is computed without error on this run's data whatever its verdict."""
    rows = json.loads((Path(out) / "comparison.json").read_text())
    judged = [r for r in rows if r.get("claim") is not None]
    assert judged, f"{name}: no row with a claim"
    assert all(isinstance(r["value"], (int, float)) for r in judged), name
    assert rows_that_cannot_fail(rows) == [], name
    assert all(r["reason"] for r in rows if r["verdict"] in ("differs", "reported")), name
    assert every_reason(name, Path(out)) == len(rows), name


def every_reason(name: str, out: Path) -> int:
    """Rebuild ``name``'s rows from the results in ``out`` with every judged row's reason
    computed, not only those that differ (a reason is computed lazily, so a wrong call in one
    showed only on data where its row failed: siad-delay-jitter's full run). Returns the rows."""
    import pandas as pd

    from ccbench.experiments.registry import experiments
    from ccbench.experiments.runner import summarize

    lazy = common.check

    def eager(what, paper, source, ours, claim, shown="", why=None, reported="", needs=(), movable=None, of=()):
        if why is not None and claim is not None:
            text = why() if callable(why) else why
            assert isinstance(text, str) and text, (name, what)
        return lazy(what, paper, source, ours, claim, shown=shown, why=why, reported=reported, needs=needs,
                    movable=movable, of=of)

    users = [m for m in MIGRATED.values() if getattr(m, "check", None) is lazy]
    quick = json.loads((out / "meta.json").read_text())["quick"]
    exp = experiments()[name]
    try:
        common.check = eager
        for module in users:
            module.check = eager
        return len(exp.comparison(summarize(exp, pd.read_parquet(out / "results.parquet"), quick)))
    finally:
        common.check = lazy
        for module in users:
            module.check = lazy


def test_the_helper_finds_a_check_that_cannot_fail(tmp_path):
    fine = Check("x", "1.0", "s", 1.1, Claim("≈", 1.0, within=0.25)).row()
    lenient = Check("y", "> 0", "s", 5.0, Claim("≥", 0.0)).row()
    found = Check("z", "1.0", "s", 3.0, Claim("≈", 1.0, within=0.25), reason="r").row()
    assert rows_that_cannot_fail([fine, found]) == []
    assert rows_that_cannot_fail([fine, lenient]) == [("y", 5.0, "agrees")]
    (tmp_path / "comparison.json").write_text(json.dumps([fine, lenient]))
    with pytest.raises(AssertionError):
        assert_rows_can_fail("e", tmp_path)


def test_counts_of_every_case_can_fail():
    """"Every cell" claims count the cells that hold: one cell short is a difference."""
    assert common.every("w", "every cell", "s", 3, 3).verdict == "agrees"
    assert common.every("w", "every cell", "s", 2, 3).verdict == "differs"
    assert rows_that_cannot_fail([common.every("w", "every cell", "s", 1, 1).row()]) == []


@pytest.mark.parametrize("name", sorted(MIGRATED))
def test_no_hand_typed_verdicts_remain(name):
    """Rows are built as checks: the module has no verdict helper of its own."""
    source = inspect.getsource(MIGRATED[name])
    assert "_verdict(" not in source and "verdict(" not in source and '"verdict":' not in source, name


def test_no_figure_imports_another_figures_helpers():
    """Shared helpers live in common.py (issue 25 item 2), not inside one figure's module."""
    for module in MIGRATED.values():
        source = inspect.getsource(module)
        assert "from ccbench.experiments.siad.two_flows import" not in source, module.__name__
        assert "from ccbench.experiments.siad.single_flow import" not in source, module.__name__
        assert "from ccbench.experiments.siad.capacity_change import" not in source, module.__name__
