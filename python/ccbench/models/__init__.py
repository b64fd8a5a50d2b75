"""Closed-form and fluid models the simulations are checked against.

* :mod:`ccbench.models.aimd` — the AIMD/AQM utilization models of the ABE paper (§II).
* :mod:`ccbench.models.ledbat` — the LEDBAT and fLEDBAT fluid models of Carofiglio et al. 2013
  (eqs. 3–4, 6–10, Props. 5.1–5.7), their equilibrium and convergence rates.

Nothing heavy is imported here: numpy, scipy and pandas load inside the functions that use them.
"""

from ccbench.models.aimd import aimd_beta_needed, aimd_buffer_needed, aimd_cycle, aimd_utilization, aqm_utilization
from ccbench.models.ledbat import (
                                 ConvergenceRates,
                                 Equilibrium,
                                 decay_rate,
                                 fledbat_equilibrium,
                                 fledbat_fluid,
                                 fledbat_lyapunov,
                                 fledbat_lyapunov_derivative,
                                 fledbat_rates,
                                 jain_index,
                                 ledbat_eigen_frequency,
                                 ledbat_fluid,
)

__all__ = [
    "ConvergenceRates", "Equilibrium", "aimd_beta_needed", "aimd_buffer_needed", "aimd_cycle",
    "aimd_utilization", "aqm_utilization", "decay_rate", "fledbat_equilibrium", "fledbat_fluid",
    "fledbat_lyapunov", "fledbat_lyapunov_derivative", "fledbat_rates", "jain_index",
    "ledbat_eigen_frequency", "ledbat_fluid",
]
