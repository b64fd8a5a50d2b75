"""The experiments by name, found on first use.

Each experiment is a module ``ccbench/experiments/<paper>/<figure>.py`` that defines
``EXPERIMENT``; this module walks the package for them (pkgutil) instead of importing them by
hand, and imports no experiment itself, so adding a figure is adding a file.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Dict, Optional

from ccbench.experiments.base import Experiment

_FOUND: Optional[Dict[str, Experiment]] = None


def _discover() -> Dict[str, Experiment]:
    found: Dict[str, Experiment] = {}
    package = __name__.rsplit(".", 1)[0]
    for info in pkgutil.walk_packages([str(Path(__file__).parent)], prefix=package + "."):
        # Only <paper>.<figure> modules: the package's own modules (base, runner, …) are no figure.
        if info.ispkg or info.name.count(".") < package.count(".") + 2:
            continue
        experiment = getattr(importlib.import_module(info.name), "EXPERIMENT", None)
        if isinstance(experiment, Experiment):
            if not experiment.work:
                experiment.work = info.name.split(".")[-2]
            _add(found, experiment, info.name)
    return found


def _add(found: Dict[str, Experiment], experiment: Experiment, where: str) -> None:
    if experiment.name in found:
        raise ValueError(f"experiment {experiment.name!r} is defined twice ({where})")
    found[experiment.name] = experiment


def experiments() -> Dict[str, Experiment]:
    """All known experiments by name, in name order."""
    global _FOUND
    if _FOUND is None:
        _FOUND = dict(sorted(_discover().items()))
    return _FOUND


def register(experiment: Experiment) -> Experiment:
    """Add an experiment defined elsewhere (a notebook, a user's package) under its name."""
    _add(experiments(), experiment, "register()")
    return experiment


def get(name: str) -> Experiment:
    try:
        return experiments()[name]
    except KeyError:
        known = ", ".join(experiments()) or "none"
        raise KeyError(f"unknown experiment {name!r} (known: {known})") from None
