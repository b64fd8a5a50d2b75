"""Parameter sweeps ("experiments") reproducing figures and tables of the reference papers.

An :class:`Experiment` (``base.py``) is a base scenario plus a grid of parameters whose points
become ``--set`` overrides; :func:`run_experiment` (``runner.py``) runs grid × seeds and writes
the results, a summary and a figure. Each experiment is one file,
``experiments/<paper>/<figure>.py`` defining ``EXPERIMENT``; the registry (``registry.py``)
finds them on first use, so nothing here imports an experiment.
"""

from ccbench.experiments.base import Experiment, expand_grid, override, toml_literal
from ccbench.experiments.registry import experiments, get, register
from ccbench.experiments.runner import run_experiment, summarize

__all__ = ["Experiment", "expand_grid", "experiments", "get", "override", "register",
           "run_experiment", "summarize", "toml_literal"]
