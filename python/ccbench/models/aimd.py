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


def aimd_buffer_needed(beta):
    """Eq. (1): the smallest buffer, in BDPs, that keeps the link busy through a back-off by
    ``beta``: ``b >= δ (1 - β) / β`` (β = 0.5 gives the rule of thumb b = δ)."""
    import numpy as np

    beta = np.asarray(beta, dtype=float)
    need = (1 - beta) / beta
    return float(need) if need.ndim == 0 else need


def aimd_beta_needed(buffer_over_bdp):
    """Eq. (2): the gentlest back-off that a buffer of ``b`` BDPs still covers: ``β >= δ / (b + δ)``."""
    import numpy as np

    b = np.asarray(buffer_over_bdp, dtype=float)
    beta = 1 / (b + 1)
    return float(beta) if beta.ndim == 0 else beta


def aimd_cycle(beta, buffer, bdp):
    """Eqs. (3) and (4) for one sawtooth, with α = one packet per RTT and ``buffer``, ``bdp`` in
    packets: ``(D, Δ, rtts)`` = the data the link can carry in the cycle, δ (1 - β)(b + δ)
    packet·RTTs, the capacity lost while cwnd < δ, (δ - β (b + δ))² / 2 (0 if it never falls
    below δ), and the cycle's length (1 - β)(b + δ) RTTs."""
    top = buffer + bdp
    lost = max(bdp - beta * top, 0.0) ** 2 / 2
    return bdp * (1 - beta) * top, lost, (1 - beta) * top


def aqm_utilization(beta, target_s, rtt_s):
    """Eq. (6) for an AQM whose marking point is its target delay (ABE §II-B): the AQM acts as a
    drop-tail buffer of ``target × C``, i.e. ``target / RTT`` BDPs. Fig. 4 uses the measured
    queue at the signals instead; this is the a-priori line (notes §3, Fig. 7 cross-check)."""
    import numpy as np

    return aimd_utilization(beta, np.asarray(target_s, dtype=float) / np.asarray(rtt_s, dtype=float))
