"""Issue 39 item 3: every judged row of every experiment, in every work, can fail when the
measurements it is computed from are perturbed (``ccbench.experiments.can_fail``: each measured
column halved, doubled, ×100, zeroed and shifted at sets of grid points, one run at a time), and
none is a complement share, a number judged twice with opposite verdicts, or a comparison of
identical arms.

This module runs last (its name): it perturbs the quick results the other modules computed
(``conftest.QUICK_RESULTS``) and runs quick only the experiments none of them ran. Each experiment
gets a budget of perturbed tables, so a row that cannot fail costs a bounded time. Experiments on
the real stack are left to ``ccbench can-fail`` over a campaign (see :func:`_runnable`).

``can_fail_known.txt`` lists the findings still open, one ``experiment | kind | what`` a line: a
new finding fails, and so does a listed one that is gone (remove it), so the list only shrinks.
"""

from pathlib import Path

import pytest
from conftest import QUICK_RESULTS

from ccbench.experiments.can_fail import findings
from ccbench.experiments.registry import experiments

#: Perturbed tables tried per experiment: a passing row that fails under none is a finding.
BUDGET = 60
KNOWN = Path(__file__).with_name("can_fail_known.txt")


def _known() -> dict:
    known: dict = {}
    for line in KNOWN.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, kind, what = (part.strip() for part in line.split(" | ", 2))
            known.setdefault(name, set()).add((kind, what))
    return known


def _runnable():
    """Every experiment that runs in the simulator. A real-stack one (``unavailable`` set) takes a
    minute of namespaces for one quick run; its rows are perturbed by ``ccbench can-fail`` over a
    campaign's folder instead (the suite's 15 minutes)."""
    return sorted(name for name, exp in experiments().items() if exp.unavailable is None)


@pytest.mark.parametrize("name", _runnable())
def test_every_judged_row_can_fail(name):
    from ccbench.experiments import run_experiment

    exp = experiments()[name]
    results = QUICK_RESULTS.get(name)
    try:
        found = findings(exp, results, quick=True, budget=BUDGET) if results is not None else None
    except ValueError:  # a module ran it with a metric or grid of its own: these are not its rows
        found = None
    if found is None:
        found = findings(exp, run_experiment(name, quick=True, jobs=2), quick=True, budget=BUDGET)
    found = {(f.kind, f.what[:120]) for f in found}
    known = _known().get(name, set())
    new, gone = sorted(found - known), sorted(known - found)
    assert not new, f"{name}: new rows that are no check (add none to {KNOWN.name}; fix them): {new}"
    assert not gone, f"{name}: fixed, remove from {KNOWN.name}: {gone}"
