"""Closed-form models the simulations are checked against."""

from __future__ import annotations


def aimd_utilization(beta, buffer_over_bdp, delta: float = 1.0):
    """Bottleneck utilization of one AIMD flow (ABE paper, §II, eq. 6).

    With the buffer ``b`` and the path's delay ``delta`` both in units of the BDP (``delta = 1``),
    the link stays busy through a back-off once ``b >= delta (1 - beta) / beta``; below that the
    queue drains and the link idles until the window grows back, giving
    ``1 - (delta - beta (b + delta))**2 / (2 delta (1 - beta) (b + delta))``.
    Accepts scalars or arrays (broadcast); returns a float for scalar input.
    """
    import numpy as np

    beta = np.asarray(beta, dtype=float)
    b = np.asarray(buffer_over_bdp, dtype=float)
    if np.any((beta <= 0) | (beta > 1)):
        raise ValueError("beta must be in (0, 1]")
    if np.any(b < 0):
        raise ValueError("buffer must be >= 0")
    full = b >= delta * (1 - beta) / beta
    with np.errstate(divide="ignore", invalid="ignore"):
        partial = 1 - (delta - beta * (b + delta)) ** 2 / (2 * delta * (1 - beta) * (b + delta))
    util = np.where(full, 1.0, partial)
    return float(util) if util.ndim == 0 else util
