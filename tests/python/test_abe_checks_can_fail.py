"""Issue 25, item 3, for ABE: every check of every migrated ABE experiment can fail.

Each experiment's quick variant runs once; every row of its comparison.json that carries a claim
is decided again with our number halved and doubled, and one of the two must change the verdict
(a check that still agrees when our number collapses or doubles checks nothing). A row that
already differs has failed; for it the claim must be one that our number could meet (decided at
the paper's own value it is not "differs"). An order or a trend (a claim ≥ 0 or ≤ 0 on a
difference of our numbers) must fail when the order reverses; a bound far from ours may pass both
perturbations only when its reason says it is far (issue 39: it is still a claim). Contrast rows
carry no claim; other rows without a claim must be "reported" with a reason.
"""

import json

import pytest
from conftest import run_quick

from ccbench.experiments.abe import (
    fig2,
    fig3,
    fig4,
    fig5,
    fig6,
    fig7,
    fig8,
    fig9,
    fig10,
    fig11,
    fig12_13,
    fig14_15,
    fig16_18,
    fig19,
)
from ccbench.experiments.checks import VERDICTS, redecide

#: Every ABE experiment: their rows are checks (issue 25, item 2); quick variants run in seconds.
MIGRATED = [m.EXPERIMENT for m in (fig2, fig3, fig4, fig5, fig6, fig7, fig8, fig9, fig10, fig11,
                                       fig12_13, fig14_15, fig16_18, fig19)]


@pytest.fixture(scope="module")
def quick_rows(tmp_path_factory):
    done = run_quick(MIGRATED, tmp_path_factory)
    return {name: json.loads((out / "comparison.json").read_text()) for name, (out, _) in done.items()}


def _paper_value(claim) -> float:
    value = claim["value"]
    return sum(value) / 2 if isinstance(value, list) else float(value)


def _is_order(claim) -> bool:
    """An order or a trend of our numbers ("A ≥ B", "grows with"): one side of a bound at 0 on a
    difference, which scaling our number never crosses; it fails when the order reverses."""
    return claim["relation"] in ("≤", "≥") and claim["value"] == 0


def _reversed(row, value: float) -> str:
    """The verdict with the order reversed: our difference mirrored, and at least a step of the
    claim's band plus 1 % of the unit beyond it (a difference of 0 reverses too)."""
    claim = row["claim"]
    step = abs(value) + claim["within"] + 0.01
    return redecide(row, -step if claim["relation"] == "≥" else step)


@pytest.mark.parametrize("name", [exp.name for exp in MIGRATED])
def test_every_check_can_fail(quick_rows, name):
    rows = quick_rows[name]
    assert rows, name
    weak = []
    for row in rows:
        assert row["verdict"] in VERDICTS, row
        if row["verdict"] == "contrast":
            # a model or a sibling beside ours: no claim, and the paper column says whose value it is
            assert row.get("claim") is None and row["paper"] and row["source"], row
            continue
        if row.get("claim") is None:
            assert row["verdict"] == "reported" and row["reason"], row
            continue
        value = row["value"]
        assert value is not None, row  # a claim needs a number of ours to judge
        assert row["verdict"] == redecide(row, value), row
        assert row["paper"] and row["source"] and row["tolerance"], row
        if row["verdict"] in ("differs", "full run decides"):
            assert row["reason"], row
            if redecide(row, _paper_value(row["claim"])) in ("differs", "full run decides"):
                weak.append((row["what"], "cannot agree even at the paper's value"))
            continue
        if _is_order(row["claim"]):
            if _reversed(row, value) == row["verdict"]:
                weak.append((row["what"], value, row["tolerance"], "an order that cannot reverse"))
            continue
        assert value != 0, row
        if redecide(row, value * 0.5) == row["verdict"] and redecide(row, value * 2) == row["verdict"]:
            # issue 39: a bound far from ours is still the paper's (or the notes') claim, counted;
            # the row must say that it is far
            if "far from ours" not in row["reason"]:
                weak.append((row["what"], value, row["tolerance"], row["verdict"]))
    assert not weak, weak


def test_no_reason_is_a_placeholder(quick_rows):
    for name, rows in quick_rows.items():
        text = json.dumps(rows, ensure_ascii=False)
        assert "[MISSING]" not in text, name
        for row in rows:
            if row["verdict"] in ("agrees", "contrast"):  # a contrast row's paper column says whose value
                continue
            assert row["reason"], (name, row["what"])


@pytest.mark.parametrize("exp", MIGRATED, ids=lambda e: e.name)
def test_no_hand_typed_verdicts_remain(exp):
    """Rows are built as checks: no verdict helper, no verdict written by a figure's code."""
    import importlib
    import inspect

    source = inspect.getsource(importlib.import_module(exp.comparison.__module__))
    assert "_verdict" not in source and '"verdict":' not in source, exp.name
