"""A comparison row as data: what is checked, the paper's value or claim with its source, ours,
the tolerance, and a verdict that one function computes (:func:`decide`), never a string typed
by a figure's code.

A :class:`Check`'s claim is what the paper says of one number of ours: that it is about a value
(``≈``, with the band in which it *agrees* and a wider one in which it is *within tolerance*),
or that it lies on one side of a bound (``≤``, ``≥``), or in a range. A row with no number of
ours, or no number from the paper, is ``reported``: shown, never judged. Because the claim and
our number are both in the row, ``comparison.json`` is enough to decide it again: the tests
re-decide every row with our number perturbed, so a check that cannot fail is found
mechanically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

#: Every verdict a row may carry, in the report's order. ``full run decides`` is a quick run's
#: verdict for a row that differs where its number needs what only the full run has (more seeds,
#: a longer run) and could move that far: see :func:`settle_quick`. ``contrast`` is a row that
#: puts a model's value or a sibling arm beside ours: it is not the paper's, so it is shown and
#: never counted as a paper claim either way (the paper column holds only the paper).
VERDICTS = ("agrees", "within tolerance", "differs", "full run decides", "reported", "contrast")

#: What a quick run may lack that a check's number can depend on (a check's ``needs``).
NEEDS = ("seeds", "duration")

#: The relations a claim may state between our number and the paper's.
RELATIONS = ("≈", "≤", "≥", "in")


@dataclass(frozen=True)
class Claim:
    """What the paper says of one number of ours.

    ``relation`` is ``≈`` (ours is ``value``: agrees within ``agree``, within tolerance within
    ``within``), ``≤`` / ``≥`` (ours is at most / at least ``value``, with ``within`` as the
    slack that still counts as within tolerance), or ``in`` (``value`` is a ``(low, high)``
    range, ``within`` the slack on either side). Bands are fractions of the paper's value when
    ``relative`` (the default), else in the number's own unit.
    """

    relation: str
    value: Union[float, Tuple[float, float]]
    agree: float = 0.0
    within: float = 0.0
    relative: bool = True

    def __post_init__(self):
        if self.relation not in RELATIONS:
            raise ValueError(f"claim: relation {self.relation!r} is not one of {', '.join(RELATIONS)}")
        if self.relation == "in":
            low, high = self.value  # type: ignore[misc]
            if not low <= high:
                raise ValueError(f"claim: range {self.value!r} is empty")
        if not 0 <= self.agree <= max(self.within, self.agree) or self.within < 0:
            raise ValueError(f"claim: bands must be non-negative (agree {self.agree}, within {self.within})")

    def _band(self, band: float, at: float) -> float:
        return band * abs(at) if self.relative else band

    def decide(self, ours: float) -> str:
        """The verdict for ``ours`` (see :func:`decide`)."""
        if self.relation == "≈":
            target = float(self.value)  # type: ignore[arg-type]
            off = abs(ours - target)
            if off <= self._band(self.agree, target):
                return "agrees"
            return "within tolerance" if off <= self._band(max(self.within, self.agree), target) else "differs"
        low, high = {"≤": (-math.inf, self.value), "≥": (self.value, math.inf)}.get(self.relation, self.value)
        low, high = float(low), float(high)  # type: ignore[arg-type]
        if low <= ours <= high:
            return "agrees"
        edge = low if ours < low else high
        return "within tolerance" if abs(ours - edge) <= self._band(self.within, edge) else "differs"

    def distance(self, ours: float) -> float:
        """How far ``ours`` lies outside the claim's within-tolerance band, in the number's unit
        (0 when it passes): what a longer run or more seeds would have to move it by."""
        if self.relation == "≈":
            target = float(self.value)  # type: ignore[arg-type]
            return max(0.0, abs(ours - target) - self._band(max(self.within, self.agree), target))
        low, high = {"≤": (-math.inf, self.value), "≥": (self.value, math.inf)}.get(self.relation, self.value)
        low, high = float(low), float(high)  # type: ignore[arg-type]
        if low <= ours <= high:
            return 0.0
        edge = low if ours < low else high
        return max(0.0, abs(ours - edge) - self._band(self.within, edge))

    def text(self) -> str:
        """The claim as the table shows it: ``≈ 8.23 (agrees ±5 %, within ±10 %)``."""
        unit = "%" if self.relative else ""
        scale = 100 if self.relative else 1

        def band(b: float) -> str:
            return f"±{b * scale:g}{' ' + unit if unit else ''}"

        if self.relation == "in":
            low, high = self.value  # type: ignore[misc]
            head = f"in [{low:g}, {high:g}]"
        else:
            head = f"{self.relation} {float(self.value):g}"  # type: ignore[arg-type]
        bands = []
        if self.relation == "≈" and self.agree > 0:
            bands.append(f"agrees {band(self.agree)}")
        if self.within > (self.agree if self.relation == "≈" else 0):
            bands.append(f"within {band(self.within)}")
        return head + (f" ({', '.join(bands)})" if bands else "")

    def as_dict(self) -> Dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"relation": self.relation, "value": value, "agree": self.agree, "within": self.within,
                "relative": self.relative}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Claim":
        value = tuple(d["value"]) if isinstance(d["value"], list) else d["value"]
        return cls(d["relation"], value, d.get("agree", 0.0), d.get("within", 0.0), d.get("relative", True))


def decide(claim: Optional[Claim], ours: Optional[float]) -> str:
    """The one function that gives a verdict: ``reported`` without a claim or a finite number of
    ours; otherwise what the claim says of it."""
    if claim is None or ours is None:
        return "reported"
    try:
        ours = float(ours)
    except (TypeError, ValueError):
        return "reported"
    if not math.isfinite(ours):
        return "reported"
    return claim.decide(ours)


@dataclass
class Check:
    """One row of ``comparison.md`` / ``comparison.json``.

    ``paper`` is the paper's value or claim as a reader finds it, ``source`` where (section,
    figure or table, equation, line of the seed); ``ours`` our number (None: nothing to judge),
    ``shown`` how ours is written (with spread and unit; default: the number); ``claim`` what the
    paper's number says of ours (None: reported). ``reason`` says why a row differs or is only
    reported; a number it quotes must come from this run's data. ``needs`` names what of the full
    run our number depends on (:data:`NEEDS`: the paper's seeds, its duration), and ``movable`` how
    far (in the number's unit) those could move it, from this run's data (the spread over seeds, the
    drift between the run's halves): a quick run that lacks them leaves a difference to the full run
    only when it lies within that reach; farther, it is judged (:func:`settle_quick`). ``contrast``
    marks a row that sets a model or a sibling arm beside ours (verdict ``contrast``): its
    ``paper`` column names that value and where it comes from, and it carries no claim. ``of``
    names the measured columns of ``results.parquet`` the row is about (``("cubic_mbps",)``): the
    can-fail test requires the row to move, and to be able to fail, when those are perturbed, so
    a row about one flow computed from the other's complement is found.
    """

    what: str
    paper: str
    source: str
    ours: Optional[float]
    claim: Optional[Claim] = None
    shown: str = ""
    reason: str = ""
    extra: Dict[str, Any] = field(default_factory=dict)
    needs: Tuple[str, ...] = ()
    movable: Optional[float] = None
    contrast: bool = False
    of: Tuple[str, ...] = ()

    def __post_init__(self):
        unknown = [n for n in self.needs if n not in NEEDS]
        if unknown:
            raise ValueError(f"check {self.what[:60]!r}: needs {unknown!r}: not one of {', '.join(NEEDS)}")
        if self.contrast and self.claim is not None:
            raise ValueError(f"check {self.what[:60]!r}: a contrast row sets a model or an arm beside ours; "
                             "it states no paper claim")

    @property
    def verdict(self) -> str:
        return "contrast" if self.contrast else decide(self.claim, self.ours)

    def row(self) -> Dict[str, Any]:
        """The row as the report, the tests and ``comparison.md`` read it."""
        ours = self.shown or ("—" if self.ours is None else f"{self.ours:.4g}")
        paper = f"{self.paper} ({self.source})" if self.source else self.paper
        return {"what": self.what, "paper": paper, "ours": ours,
                "tolerance": "" if self.claim is None else self.claim.text(), "verdict": self.verdict,
                "reason": self.reason, "source": self.source, "value": _json_number(self.ours),
                "claim": None if self.claim is None else self.claim.as_dict(), "needs": list(self.needs),
                "movable": _json_number(self.movable), "of": list(self.of), **self.extra}


def _json_number(value: Optional[float]) -> Optional[float]:
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def redecide(row: Mapping[str, Any], ours: Optional[float]) -> str:
    """A ``comparison.json`` row's verdict with ``ours`` in place of its number (for the tests
    that perturb our numbers)."""
    claim = row.get("claim")
    verdict = decide(None if claim is None else Claim.from_dict(claim), ours)
    if verdict != "differs" or not row.get("unsettled"):
        return verdict
    reach = row.get("movable")
    off = Claim.from_dict(claim).distance(float(ours))  # type: ignore[arg-type]
    return "full run decides" if reach is not None and off <= abs(float(reach)) else verdict


def quick_lacks(quick_seeds: int, full_seeds: int, quick_duration: Any, full_duration: Any) -> Dict[str, str]:
    """What a quick run lacks of the full one, by :data:`NEEDS` name, as the reason says it."""
    lacks = {}
    if quick_seeds < full_seeds:
        lacks["seeds"] = f"{quick_seeds} seed{'s' * (quick_seeds != 1)} (full run: {full_seeds})"
    if quick_duration is not None and str(quick_duration) != str(full_duration):
        lacks["duration"] = f"{quick_duration} runs (full run: {full_duration})"
    return lacks


def settle_quick(rows: Sequence[Mapping[str, Any]], lacks: Mapping[str, str]) -> list:
    """A quick run's rows: where a row's number needs what this run lacks, the row says so
    (``unsettled``). If it differs by no more than its ``movable`` (how far the missing seeds or
    duration could move it, from this run's data), its verdict is "full run decides" — the full
    run, with the paper's seeds and duration, judges it. A row that differs by more, or states no
    reach, stays "differs": more of the same could not bring it back. Every other row keeps its
    verdict."""
    settled = []
    for row in rows:
        missing = [lacks[n] for n in row.get("needs") or () if n in lacks]
        if not missing:
            settled.append(dict(row))
            continue
        row = dict(row, unsettled="; ".join(missing))
        if row["verdict"] == "differs":
            off, reach = _off_and_reach(row)
            if reach is not None and off <= reach:
                row["verdict"] = "full run decides"
                row["reason"] = (f"quick run: {row['unsettled']}; ours is {off:.3g} outside the claim, within the "
                                 f"{reach:.3g} those could move it; the full run decides. "
                                 f"{row.get('reason', '')}").strip()
            else:
                beyond = "no reach stated" if reach is None else f"beyond the {reach:.3g} those could move it"
                row["reason"] = (f"quick run: {row['unsettled']}, but ours is {off:.3g} outside the claim, {beyond}. "
                                 f"{row.get('reason', '')}").strip()
        settled.append(row)
    return settled


def _off_and_reach(row: Mapping[str, Any]) -> Tuple[float, Optional[float]]:
    """How far a differing row's number lies outside its claim, and its ``movable`` (or None)."""
    claim = Claim.from_dict(row["claim"])
    reach = row.get("movable")
    return claim.distance(float(row["value"])), (None if reach is None else abs(float(reach)))


def check_rows(experiment: str, rows: Sequence[Mapping[str, Any]]) -> None:
    """Every row has the columns of the table and a verdict of :data:`VERDICTS`: a misspelt
    verdict is an error, not a row the report files under "reported"."""
    for i, r in enumerate(rows):
        missing = [c for c in ("what", "paper", "ours", "verdict") if c not in r]
        if missing:
            raise ValueError(f"{experiment}: comparison row {i} has no {', '.join(missing)}")
        if r["verdict"] not in VERDICTS:
            raise ValueError(f"{experiment}: comparison row {i} ({str(r['what'])[:60]!r}): verdict "
                             f"{r['verdict']!r} is not one of {', '.join(VERDICTS)}")
        if r["verdict"] == "full run decides" and not r.get("unsettled"):
            raise ValueError(f"{experiment}: comparison row {i} ({str(r['what'])[:60]!r}): only a quick "
                             "run that lacks what the row needs leaves it to the full run")
        if r["verdict"] == "contrast" and r.get("claim") is not None:
            raise ValueError(f"{experiment}: comparison row {i} ({str(r['what'])[:60]!r}): a contrast row "
                             "states no paper claim")
        if r.get("claim") is not None and r["verdict"] != redecide(r, r.get("value")):
            raise ValueError(f"{experiment}: comparison row {i} ({str(r['what'])[:60]!r}): verdict "
                             f"{r['verdict']!r} is not what its claim decides")
