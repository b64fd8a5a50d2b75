"""ccbench: a congestion-control laboratory.

The simulator is the Rust extension ``ccbench._core``; this package is the thin Python front end
around it (scenario loading, results as DataFrames, CLI, plots, experiment sweeps).

>>> import ccbench
>>> r = ccbench.run("examples/cubic.toml", seed=2)
>>> r.flow_summary[["name", "goodput_mbps"]]
"""

from ccbench.api import Result, ScenarioError, controllers, run, version

__all__ = ["Result", "ScenarioError", "controllers", "run", "version"]
