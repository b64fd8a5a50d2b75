"""ccbench: a congestion-control laboratory.

The simulator is the Rust extension ``ccbench._core``; this package is the thin Python front end
around it (scenario loading, results as DataFrames, CLI, plots, experiment sweeps). Importing it
loads no heavy library: pandas comes in only when a DataFrame is asked for.

>>> import ccbench
>>> r = ccbench.run("examples/dumbbell-cubic.toml", seed=2)
>>> r.flow_summary[["name", "goodput_mbps"]]
"""

import ccbench._startup  # noqa: F401 - first: the command's Ctrl-C while it imports is one line
from ccbench.api import (
           Interrupted,
           MemoryLimitExceeded,
           Result,
           ScenarioError,
           controllers,
           estimate,
           registry,
           run,
           validate,
           version,
)
from ccbench.sweep import sweep

__all__ = ["Interrupted", "MemoryLimitExceeded", "Result", "ScenarioError", "controllers", "estimate", "registry", "run", "sweep",
           "validate", "version"]
