"""Can a verdict fail? Perturb the measurements a row is computed from and see (issue 39 item 3).

A check that passes whatever the model does is no check. Halving a row's own number (the first
version of this test) misses the ways a row can be built so that it never moves: a share of one
flow computed as the complement of the other's, one number judged twice with opposite verdicts,
two arms that are identical by construction compared with each other. So this module perturbs
the *measurements*: each measured column of ``results.parquet`` (a flow's rate, the queue, a
time), at sets of grid points (halved, doubled, a hundredfold, zeroed, shifted) and one run at
a time; the experiment's own ``summarize`` and
``comparison`` turn each perturbed table into rows again, and every judged row is asked:

- **cannot fail**: it passes, and no perturbation of what it is computed from changes its
  verdict (of the columns its ``of`` names, when it names any);
- **not about its measurement**: it names in ``of`` a column whose perturbation never moves it
  (a complement share);
- **judged twice**: another judged row holds the same number under every perturbation, with the
  opposite verdict;
- **identical arms**: it moves with two grid points whose measurements are identical run for
  run (arms equal by construction).

A row that already differs has failed: it is not asked to fail again. The perturbations are
applied to sets of grid points chosen so any two points are apart in one of them (the bits of
a point's index), which keeps the cost to log2 of the points per column and factor.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ccbench.experiments.base import Experiment

#: How each measurement is perturbed at a set of points, every run alike: halved, doubled, a
#: hundredfold (a bound far from ours is still a claim, so it must be reachable), zeroed (a flow
#: that starves), and shifted by the column's largest magnitude (a zero, such as a queue that
#: drains, moves under no factor).
OPS = (("×", 0.5), ("×", 2.0), ("×", 100.0), ("×", 0.0), ("+", 1.0))
#: Then one run of each point alone (a claim about outliers among the seeds is blind to the
#: points' means): a hundredfold and zeroed.
ONE_RUN_OPS = (("one run ×", 100.0), ("one run ×", 0.0))
PASSING = ("agrees", "within tolerance")
FAILING = ("differs", "full run decides")
NOT_MEASURED = {"run", "seed", "error"}


@dataclass(frozen=True)
class Finding:
    """A judged row that the perturbations show to be no check."""

    experiment: str
    what: str
    kind: str  # "cannot fail", "not about its measurement", "judged twice", "identical arms"
    detail: str

    def __str__(self) -> str:
        return f"{self.experiment}: {self.what[:80]!r}: {self.kind} ({self.detail})"


class _Rows:
    """The rows of ``exp`` for ``results`` with perturbations applied. A measurement scaled by
    ``f`` in every run of a point scales that point's mean, spread, min and max by ``f``, so the
    per-point table is perturbed instead of the runs (the same rows, without re-aggregating)."""

    def __init__(self, exp: Experiment, results, quick: bool):
        from ccbench.experiments.runner import aggregate

        self.exp, self.quick = exp, quick
        self.error = ""
        self.results = results[results["error"] == ""] if "error" in results else results
        self.table, self.keys, metrics = aggregate(exp, results, quick)
        self.points = exp.params(quick)
        self.columns = [c for c in metrics if c in self.table and _numeric(self.table[c])]
        for column in self.columns:  # a count halved is no longer an integer
            for name in _stats(column):
                self.table[name] = self.table[name].astype(float)
        self.base = self.rows(self.table)

    def rows(self, table) -> Optional[List[Dict[str, Any]]]:
        import warnings

        import numpy as np

        from ccbench.experiments.runner import comparison_rows, finish_summary

        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore", RuntimeWarning)  # a zeroed rate divides by zero
                return comparison_rows(self.exp, finish_summary(self.exp, table, self.keys), self.quick)
        except Exception as exc:  # noqa: BLE001 - numbers no run gives may break a figure's arithmetic
            self.error = f"{type(exc).__name__}: {exc}"
            return None

    def perturbed(self, points: Sequence[int], columns: Sequence[str], op: Tuple[str, float]):
        """The rows with ``op`` applied to ``columns`` in every run of ``points``."""
        kind, by = op
        if kind == "one run ×":
            return self._one_run(points, columns, by)
        table = self.table.copy()
        index = table.index[list(points)]
        for column in columns:
            if kind == "+":  # a shift moves the mean, min and max, not the spread
                shift = by * (float(self.table[column].abs().max()) or 1.0)
                for name in (column, f"{column}_min", f"{column}_max"):
                    table.loc[index, name] = table.loc[index, name] + shift
                continue
            for name in _stats(column):
                table.loc[index, name] = table.loc[index, name] * abs(by) if name.endswith("_std") \
                    else table.loc[index, name] * by
        return self.rows(table)

    def _one_run(self, points: Sequence[int], columns: Sequence[str], factor: float):
        from ccbench.experiments.runner import aggregate

        runs = self.results.copy()
        for point in points:
            first = self._runs_of(point).index[:1]
            for column in columns:
                runs[column] = runs[column].astype(float)
                runs.loc[first, column] = runs.loc[first, column] * factor
        table, _, _ = aggregate(self.exp, runs, self.quick)
        return self.rows(table)

    def _runs_of(self, point: int):
        mask = None
        for key in self.keys:
            m = self.results[key] == self.points[point][key]
            mask = m if mask is None else mask & m
        return self.results if mask is None else self.results[mask]

    def measurements(self, point: int):
        """The runs of one point, measured columns only, in seed order."""
        return self._runs_of(point)[self.columns].reset_index(drop=True)


def _stats(column: str) -> Tuple[str, ...]:
    return (column, f"{column}_std", f"{column}_min", f"{column}_max")


def _numeric(series) -> bool:
    import pandas as pd

    return bool(pd.api.types.is_numeric_dtype(series)) and not pd.api.types.is_bool_dtype(series)


def _value(row: Optional[Dict[str, Any]]) -> Optional[float]:
    if row is None or row.get("value") is None:
        return None
    value = float(row["value"])
    return value if math.isfinite(value) else None


def _moved(base: Dict[str, Any], other: Optional[Dict[str, Any]]) -> bool:
    a, b = _value(base), _value(other)
    if a is None or b is None:
        return a != b
    return not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _aligned(base: List[Dict[str, Any]], rows: Optional[List[Dict[str, Any]]]) -> List[Optional[Dict[str, Any]]]:
    """``rows`` matched to ``base`` by position (a perturbation that breaks the table moves all)."""
    if rows is None or len(rows) != len(base):
        return [None] * len(base)
    return list(rows)


def findings(exp: Experiment, results, quick: bool, budget: Optional[int] = None) -> List[Finding]:
    """Every judged row of ``exp`` on ``results`` that the perturbations show to be no check.
    ``budget`` caps the perturbed tables tried (each is one pass of the experiment's comparison):
    a row not yet shown to fail by then is a finding, with the budget in its detail."""
    table = _Rows(exp, results, quick)
    base = table.base
    if base is None:
        raise ValueError(f"{exp.name}: its comparison fails on its own results: {table.error}")
    judged = [i for i, r in enumerate(base) if r.get("claim") is not None]
    trials: Dict[Tuple[str, Tuple[int, ...], Tuple[str, float]], List[Optional[Dict[str, Any]]]] = {}
    open_rows = {i: _Needs(base[i]) for i in judged}
    for n, key in enumerate(_trial_order(table)):
        if not open_rows or (budget is not None and n >= budget):
            break
        trials[key] = rows = _aligned(base, table.perturbed(key[1], [key[0]], key[2]))
        for i in list(open_rows):
            if open_rows[i].met(key[0], base[i], rows[i]):
                del open_rows[i]
    found = []
    cut = f" (within {budget} perturbed tables)" if budget is not None and len(trials) >= budget else ""
    for i in judged:
        found += [Finding(f.experiment, f.what, f.kind, f.detail + cut) for f in _row_findings(exp.name, base, i, trials)]
    found += _twice_judged(exp.name, base, judged, trials)
    found += _identical_arms(exp.name, table, base, judged)
    return found


def _trial_order(table: _Rows):
    """Every column at every point first (each operation), then the sets of points, then one run
    at a time: most rows fail in the first trials, and the search stops once every row has."""
    everywhere = tuple(range(len(table.points)))
    parts = [everywhere] + [p for p in _partitions(len(table.points)) if p != everywhere]
    # With one run a point, a run alone is the point: its trials would repeat the ones before.
    several = any(len(table.measurements(g)) > 1 for g in everywhere)
    for ops in (OPS, ONE_RUN_OPS) if several else (OPS,):
        for part in parts:
            for op in ops:
                for column in table.columns:
                    yield column, part, op


class _Needs:
    """What a judged row has yet to show: a passing one, that a perturbation of its own columns
    fails it; each column it names, that it moves it."""

    def __init__(self, row: Dict[str, Any]):
        self.of = set(row.get("of") or ())
        self.to_fail = row["verdict"] in PASSING
        self.to_move = set(self.of)

    def met(self, column: str, base: Dict[str, Any], row: Optional[Dict[str, Any]]) -> bool:
        if column in self.to_move and _moved(base, row):
            self.to_move.discard(column)
        if self.to_fail and (not self.of or column in self.of) and _fails(row):
            self.to_fail = False
        return not self.to_fail and not self.to_move


def _partitions(n: int) -> List[Tuple[int, ...]]:
    """Sets of grid points to perturb together: for each bit of a point's index, the points with
    it set and those without. Any two points are apart in one of them, so a row comparing two
    points moves in some trial, at a cost that grows with log2 of the points, not with them."""
    if n <= 1:
        return [tuple(range(n))]
    parts = []
    for bit in range(max(1, (n - 1).bit_length())):
        with_bit = tuple(g for g in range(n) if g >> bit & 1)
        without = tuple(g for g in range(n) if not g >> bit & 1)
        parts += [p for p in (with_bit, without) if p and p not in parts]
    return parts


def _fails(row: Optional[Dict[str, Any]]) -> bool:
    return row is not None and row.get("verdict") in FAILING


def _row_findings(name: str, base, i: int, trials) -> List[Finding]:
    row = base[i]
    of = list(row.get("of") or ())
    found = []
    for column in of:
        if not any(_moved(row, rows[i]) for (c, _, _), rows in trials.items() if c == column):
            found.append(Finding(name, row["what"], "not about its measurement",
                                 f"perturbing {column} never moves it"))
    if row["verdict"] not in PASSING:
        return found
    tried = [rows[i] for (c, _, _), rows in trials.items() if not of or c in of]
    if not any(_fails(r) for r in tried):
        what = f"the columns it names ({', '.join(of)})" if of else "every measured column"
        moved = any(_moved(row, r) for r in tried)
        found.append(Finding(name, row["what"], "cannot fail",
                             f"{row['verdict']} with {what} halved, doubled, ×100, zeroed or shifted, point by point and run by run"
                             + ("" if moved else "; nothing moves it")))
    return found


def _twice_judged(name: str, base, judged, trials) -> List[Finding]:
    found = []
    for a, i in enumerate(judged):
        for j in judged[a + 1:]:
            if base[i]["verdict"] == base[j]["verdict"] or _moved(base[i], base[j]) or _value(base[i]) is None:
                continue
            if all(not _moved(rows[i] or {}, rows[j]) for rows in trials.values() if rows[i] is not None):
                found.append(Finding(name, base[j]["what"], "judged twice",
                                     f"the number of {base[i]['what'][:60]!r}, judged {base[i]['verdict']} "
                                     f"there and {base[j]['verdict']} here"))
    return found


def _identical_arms(name: str, table: _Rows, base, judged) -> List[Finding]:
    """For each two points that measure the same run for run, the judged rows that move with
    both: a comparison of arms equal by construction. Points are grouped by their measurements
    first, and each point of a group is perturbed once."""
    groups: Dict[Any, List[int]] = {}
    for g in range(len(table.points)):
        runs = table.measurements(g)
        if len(runs):
            groups.setdefault(tuple(map(tuple, runs.astype(float).fillna(-1.5e308).to_numpy())), []).append(g)
    found = []
    for members in (m for m in groups.values() if len(m) > 1):
        moved = {g: _aligned(base, table.perturbed([g], table.columns, ("×", 2.0))) for g in members}
        for a, g in enumerate(members):
            for h in members[a + 1:]:
                found += [Finding(name, base[i]["what"], "identical arms",
                                  f"it compares {table.points[g]} with {table.points[h]}, which measure the same, "
                                  "run for run")
                          for i in judged if _moved(base[i], moved[g][i]) and _moved(base[i], moved[h][i])]
    return found


def findings_in(out: Path) -> List[Finding]:
    """:func:`findings` for an experiment's output folder (its ``meta.json`` and results)."""
    from ccbench.errors import UsageError
    from ccbench.experiments.registry import experiments
    from ccbench.files import read_json, read_parquet

    meta = read_json(Path(out) / "meta.json")
    name = meta.get("name") if isinstance(meta, dict) else None
    if name not in experiments():
        raise UsageError(f"{out}/meta.json: 'name' {name!r} is no registered experiment")
    return findings(experiments()[name], read_parquet(Path(out) / "results.parquet"), bool(meta.get("quick")))


def findings_under(root: Path) -> Tuple[List[Finding], int]:
    """:func:`findings_in` for ``root`` if it is an experiment's folder, else for each one under
    it (a campaign's ``experiments/*``); with how many folders were read."""
    from ccbench.errors import UsageError

    folders = [root] if (root / "meta.json").is_file() else sorted(p.parent for p in root.glob("**/meta.json"))
    folders = [f for f in folders if (f / "results.parquet").is_file()]
    if not folders:
        raise UsageError(f"{root}: no experiment folder (meta.json and results.parquet) in it")
    found: List[Finding] = []
    for folder in folders:
        found += findings_in(folder)
    return found, len(folders)
