"""What an experiment is: a base scenario, a grid of parameters, and how to score one run.

A grid point becomes ``--set``-style overrides (``"flows[0].cc.beta=0.7"``) that the core
applies to the base scenario, exactly as ``ccbench run --set`` does: Python only formats the
values as TOML literals, all parsing stays in the core.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple

from ccbench.toml_values import toml_literal


def override(key: str, value: Any) -> str:
    """One ``--set`` string: ``override("bottleneck.buffer", "0.5bdp")`` → ``bottleneck.buffer="0.5bdp"``."""
    return f"{key}={toml_literal(value)}"


def expand_grid(grid: Mapping[str, Sequence[Any]]) -> List[dict]:
    """All combinations of a grid, the first key varying slowest (so results group naturally)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]


@dataclass
class Experiment:
    """One sweep. Only ``name``, ``base``, ``grid`` (or ``points``) and ``metric`` are required.

    ``points`` (and ``quick_points``), when given, replace the product ``grid`` by an explicit
    list of points, for sweeps whose parts share only some runs. With ``seed_in_point`` every
    run's point also carries its ``"seed"``, so ``apply`` can draw per-seed scenario values (a
    start time, an RTT offset) deterministically from it.

    ``apply(point)`` maps a grid point to ``{override key: value}``; by default every point key
    is itself an override key (``{"bottleneck.rate": "5Mbps"}``). ``quick_overrides`` are applied
    first in quick mode. ``metric(result, point)`` returns the dict of numbers recorded for a run
    (it runs in a worker process, so it must be a module-level function). ``reference`` holds the
    paper's values as ``{column: values}`` keyed by grid columns and is joined into the summary;
    ``compare(summary)`` may add derived columns (model values, differences);
    ``figure(summary, out_dir)`` draws the PNG and returns its path; ``comparison(summary)``
    returns the rows of ``comparison.md``: ``what``, ``paper``, ``ours``, ``verdict``, ``reason``.
    ``unavailable()`` says why the experiment cannot run here (real-stack runs need root), or
    ``None``; the runner then refuses it with that reason, and ``ccbench demo`` skips it.
    """

    name: str
    base: Mapping[str, Any]
    grid: Mapping[str, Sequence[Any]]
    metric: Callable[[Any, dict], dict]
    description: str = ""
    quick_grid: Optional[Mapping[str, Sequence[Any]]] = None
    seeds: Sequence[int] = (1,)
    quick_seeds: Optional[Sequence[int]] = None
    quick_overrides: Mapping[str, Any] = field(default_factory=dict)
    apply: Optional[Callable[[dict], Mapping[str, Any]]] = None
    reference: Optional[Mapping[str, Sequence[Any]]] = None
    compare: Optional[Callable[[Any], Any]] = None
    figure: Optional[Callable[[Any, Path], Path]] = None
    comparison: Optional[Callable[[Any], List[dict]]] = None
    points: Optional[Sequence[dict]] = None
    quick_points: Optional[Sequence[dict]] = None
    seed_in_point: bool = False
    #: Why the experiment cannot run on this machine (e.g. root needed), or ``None``.
    unavailable: Optional[Callable[[], Optional[str]]] = None
    #: The work it reproduces (``abe``, ``fledbat``, ``rledbat``, ``siad``): by default the
    #: package it is found in (``experiments/<work>/<figure>.py``).
    work: str = ""

    def params(self, quick: bool = False) -> List[dict]:
        if self.points is not None:
            chosen = self.quick_points if quick and self.quick_points is not None else self.points
            return [dict(point) for point in chosen]
        grid = self.quick_grid if quick and self.quick_grid is not None else self.grid
        return expand_grid(grid)

    def run_seeds(self, quick: bool = False) -> List[int]:
        return list(self.quick_seeds if quick and self.quick_seeds is not None else self.seeds)

    def overrides(self, point: Mapping[str, Any], quick: bool = False) -> List[str]:
        """The ``--set`` strings that turn ``base`` into the scenario of ``point``."""
        changes = dict(self.quick_overrides) if quick else {}
        changes.update(self.apply(dict(point)) if self.apply else point)
        return [override(key, value) for key, value in changes.items()]

    def rerun(self, point: Mapping[str, Any], seed: int, extra: Sequence[str] = ()):
        """One run of the sweep again, in this process, with its time series (a figure that
        draws traces re-runs the few runs it shows: the runner keeps only the metrics)."""
        from ccbench.api import run

        point = {**point, "seed": seed} if self.seed_in_point else dict(point)
        return run(dict(self.base), seed=seed, overrides=self.overrides(point) + list(extra))

    def runs(self, quick: bool = False) -> List[Tuple[dict, int]]:
        """The (point, seed) pairs of a sweep in their fixed order."""
        runs = [(point, seed) for point in self.params(quick) for seed in self.run_seeds(quick)]
        return [({**point, "seed": seed}, seed) for point, seed in runs] if self.seed_in_point else runs


def mean_spread(row: Mapping[str, Any], metric: str, fmt: str = ".3f", unit: str = "",
                note: str = "") -> str:
    """A summary row's ``metric`` as written in ``comparison.md``: ``"0.912 ± 0.004 (5 seeds)"``
    over several seeds, just ``"0.912"`` over one (or when the row has no spread columns).
    ``unit`` goes after the numbers and ``note`` into the parentheses:
    ``"1.230 ± 0.010 s (3 seeds, +2%)"``, ``"1.230 s (+2%)"``."""
    unit = f" {unit}" if unit else ""
    text = f"{row[metric]:{fmt}}"
    n = row.get("seeds")
    std = row.get(f"{metric}_std")
    notes = [note] if note else []
    if n is not None and std is not None and n > 1:
        text += f" ± {std:{fmt}}"
        notes.insert(0, f"{int(n)} seeds")
    return text + unit + (f" ({', '.join(notes)})" if notes else "")


def comparison_markdown(title: str, rows: Sequence[Mapping[str, Any]]) -> str:
    """``comparison.md``: the paper's value or claim beside ours, with a verdict and its reason."""
    lines = [f"# {title}", "", "| what | paper | ours | tolerance | verdict | reason |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['what']} | {r['paper']} | {r['ours']} | {r.get('tolerance') or '—'} | {r['verdict']} | "
                     f"{r.get('reason') or '—'} |")
    return "\n".join(lines) + "\n"
