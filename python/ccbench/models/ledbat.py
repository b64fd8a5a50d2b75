"""Fluid models of LEDBAT and fLEDBAT (Carofiglio, Muscariello, Rossi, Testa, Valenti, *Rethinking
the Low Extra Delay Background Transport (LEDBAT) Protocol*, Computer Networks 2013).

``Lnnn`` is a line of the paper's text (``shared/seeds/003_f568696438f6a57a.txt``); the notes are
``shared/reference/experiments-fledbat.md`` §3. Units throughout: windows and queue ``Q`` in
packets, rates ``X`` and capacity ``C`` in packets/s, ``tau`` (target τ) and ``R`` (RTT) in
seconds, ``alpha`` in packets per RTT, ``zeta`` dimensionless. ``q = Q/C`` is the queueing delay.

Where the printed paper is wrong, the seed's own derivation wins and the printed form is kept
behind ``printed=True`` for transcription checks (notes §5): the convergence rate of Prop. 5.7
(sign and ζ*), the Jacobian's diagonal, the Lyapunov function (13) (the factor X_i*), LEDBAT's
eigenfrequency (units of eq. 3), and the queue indicator of eqs. (7)/(9), read as 1{Q > 0}.
"""

from __future__ import annotations

import math
from typing import Callable, List, NamedTuple, Optional, Sequence


class Equilibrium(NamedTuple):
    """Eq. (10): per-flow rate X* (packets/s) and queue Q* (packets)."""

    X: float
    Q: float


class ConvergenceRates(NamedTuple):
    """Linear convergence of eqs. (8)–(9) at P* (Prop. 5.5–5.7), all in 1/s except ``zeta_star``.

    ``fairness``: decay rate of the differences between flows; ``theta``: the slowest decay rate
    (the efficiency mode, Θ); ``zeta_star``: the ζ below which that mode is overdamped;
    ``omega``: its angular frequency (rad/s) above ζ*, 0 at or below it.
    """

    fairness: float
    theta: float
    zeta_star: float
    omega: float


def _positive(**values: float) -> None:
    for name, value in values.items():
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise ValueError(f"{name}: must be a finite number > 0, got {value!r}")


def _flows(N) -> int:
    if not isinstance(N, int) or isinstance(N, bool) or N < 1:
        raise ValueError(f"N: must be an integer >= 1, got {N!r}")
    return N


def fledbat_equilibrium(C: float, tau: float, R: float, N: int, alpha: float = 1.0,
                        zeta: float = 0.1) -> Equilibrium:
    """Prop. 5.1, eq. (10) (L173–L176): ``X_i* = C/N`` and ``Q* = Cτ + Nατ/(ζR)``.

    The queue overshoots the target Cτ by Nατ/(ζR) packets (Obs. 5.9, L255). Reference case
    (C = 833.33 pkt/s, τ = 25 ms, R = 50 ms, N = 2, α = 1, ζ = 0.1): X* = 416.67, Q* = 30.83.
    """
    _positive(C=C, tau=tau, R=R, alpha=alpha, zeta=zeta)
    N = _flows(N)
    return Equilibrium(C / N, C * tau + N * alpha * tau / (zeta * R))


def fledbat_rates(C: float, tau: float, R: float, N: int, alpha: float = 1.0, zeta: float = 0.1,
                  printed: bool = False) -> ConvergenceRates:
    """Convergence of eqs. (8)–(9) near P*: Props. 5.5/5.7 corrected (notes §3.3), or as printed.

    Corrected (the Jacobian at P* with ∂f_i/∂X_i = −Nα/(CR²), the value proof (11) itself uses,
    and ∂f_i/∂Q = −ζ/(NτR)): the polynomial is (λ + d)^(N−1)·(λ² + dλ + ζ/(τR)) with
    d = Nα/(CR²). Differences between flows decay at ``d``; the efficiency mode at
    Θ = (d/2)(1 − 1{ζ ≤ ζ*}·√(1 − ζ/ζ*)), ζ* = N²α²τ/(4C²R³) (dimensionless), oscillating at
    √(ζ/(τR) − d²/4) above ζ*. Reference case: d = 0.96, Θ = 0.48, ζ* = 2.88e-4, ω = 8.93.

    ``printed=True`` gives L235–L248 as printed: diagonal α/(CR²), Θ with a "+",
    ζ* = α²τ/(4NCR³) (which has units of packets/s), and the frequency of the printed
    polynomial λ² + (α/(CR²))λ + Nζ/(CτR). Reference case: Θ = 0.24, ζ* = 0.030.
    """
    _positive(C=C, tau=tau, R=R, alpha=alpha, zeta=zeta)
    N = _flows(N)
    if printed:
        diagonal = alpha / (C * R ** 2)
        zeta_star = alpha ** 2 * tau / (4 * N * C * R ** 3)
        sign, stiffness = +1.0, N * zeta / (C * tau * R)
    else:
        diagonal = N * alpha / (C * R ** 2)
        zeta_star = N ** 2 * alpha ** 2 * tau / (4 * C ** 2 * R ** 3)
        sign, stiffness = -1.0, zeta / (tau * R)
    overdamped = zeta <= zeta_star
    root = math.sqrt(1 - zeta / zeta_star) if overdamped else 0.0
    theta = diagonal * (1 + sign * root) / 2
    omega = 0.0 if overdamped else math.sqrt(max(stiffness - diagonal ** 2 / 4, 0.0))
    return ConvergenceRates(diagonal, theta, zeta_star, omega)


def ledbat_eigen_frequency(C: float, tau: float, R: float, N: int, alpha: float = 1.0,
                           printed: bool = False) -> float:
    """Angular frequency (rad/s) of LEDBAT's undamped fluid oscillation, eqs. (3)–(4) (L114).

    With eq. (3) in consistent units, dW_i/dt = (α/R)(τ − Q/C)/τ, the polynomial is
    λ^(N−1)(λ² + Nα/(CτR²)): ω = √(Nα/(CτR²)), 6.197 rad/s for N = 2, C = 833.33, τ = 25 ms,
    R = 50 ms. ``printed=True`` gives the paper's ±i√(N/(Rτ)) (40 rad/s there).
    """
    _positive(C=C, tau=tau, R=R, alpha=alpha)
    N = _flows(N)
    return math.sqrt(N / (R * tau)) if printed else math.sqrt(N * alpha / (C * tau * R ** 2))


def fledbat_lyapunov(X: Sequence[float], Q: float, C: float, tau: float, R: float,
                     alpha: float = 1.0, zeta: float = 0.1) -> float:
    """Eq. (13) with the factor X_i* the proof's derivative needs (notes §3.3, §5.6):
    V = Σ[(X_i − X_i*) − X_i*·ln(X_i/X_i*)] + ζ(Q − Q*)²/(2RCτ). V ≥ 0, zero only at P*.
    Example: X = (500, 333.33), Q = Q* → V = 17.02."""
    import numpy as np

    X = np.asarray(X, dtype=float)
    star = fledbat_equilibrium(C, tau, R, len(X), alpha, zeta)
    flows = (X - star.X) - star.X * np.log(X / star.X)
    return float(flows.sum() + zeta * (Q - star.Q) ** 2 / (2 * R * C * tau))


def fledbat_lyapunov_derivative(X: Sequence[float], C: float, tau: float, R: float,
                                alpha: float = 1.0) -> float:
    """Eq. (15) (L211–L220): dV/dt = −(α/R²)·Σ(X_i − X_i*)²/(X_i·X_i*) ≤ 0 along (8)–(9) while
    Q ≥ Cτ (outside region A). Example: X = (500, 333.33) → −33.3."""
    import numpy as np

    X = np.asarray(X, dtype=float)
    star = C / len(X)
    return float(-(alpha / R ** 2) * np.sum((X - star) ** 2 / (X * star)))


def jain_index(rates) -> float:
    """Jain's fairness F = (Σx)²/(N·Σx²) (L306); 1 when all rates are equal, NaN when all are 0."""
    import numpy as np

    x = np.asarray(rates, dtype=float)
    total = float(np.sum(x ** 2))
    return float(np.sum(x) ** 2 / (len(x) * total)) if total > 0 else math.nan


def decay_rate(t, deviation) -> float:
    """Exponential decay rate (1/s) of ``deviation`` over ``t``: the least-squares slope of the
    log of its envelope. An oscillating deviation is reduced to the peaks of its magnitude (the
    envelope); a monotone one uses every sample."""
    import numpy as np

    t, y = np.asarray(t, dtype=float), np.abs(np.asarray(deviation, dtype=float))
    inner = np.flatnonzero((y[1:-1] >= y[:-2]) & (y[1:-1] > y[2:])) + 1
    if len(inner) >= 3:
        t, y = t[inner], y[inner]
    keep = y > 0
    if keep.sum() < 2:
        raise ValueError("deviation: needs at least two nonzero samples")
    return float(-np.polyfit(t[keep], np.log(y[keep]), 1)[0])


# ---------------------------------------------------------------------------------------------
# Integration. The state is (X_1..X_N, Q). Flow i is off (X_i = 0, frozen) before starts[i]
# and switched on with X_i = x0. Components listed as floored stay >= 0: when one reaches 0
# with a negative drift it is pinned there (the indicators 1{Q > 0} of eqs. 4/7/9 and
# 1{W ≥ 0} of eq. 3) until its drift turns positive. Both switches are solve_ivp events, so the
# solver never steps across a discontinuity.
# ---------------------------------------------------------------------------------------------

Drift = Callable[[float, "object", "object"], "object"]  # (t, y, active mask) -> dy/dt

_MAX_SWITCHES = 100_000


def _events(drift, active, floored, pinned):
    events = []
    for i in floored:
        if i in pinned:
            def released(t, y, i=i):
                return drift(t, y, active)[i]
            released.direction = 1.0
            events.append(released)
        else:
            def emptied(t, y, i=i):
                return y[i]
            emptied.direction = -1.0
            events.append(emptied)
        events[-1].terminal = True
    return events


def _segment(drift, y, active, floored, t0, t1, tol):
    """Integrate from t0 to t1 with one activity mask; returns [(t_start, t_end, dense)]."""
    import numpy as np
    from scipy.integrate import solve_ivp

    pieces = []
    pinned = {i for i in floored if y[i] <= 0 and drift(t0, y, active)[i] <= 0}
    t = t0
    while t < t1:
        if len(pieces) > _MAX_SWITCHES:
            raise RuntimeError("fluid model: too many floor switches (chattering)")
        frozen = np.array([i in pinned for i in range(len(y))])

        def rhs(s, z, frozen=frozen):
            return np.where(frozen, 0.0, drift(s, z, active))

        sol = solve_ivp(rhs, (t, t1), y, method="RK45", dense_output=True, rtol=tol["rtol"],
                        atol=tol["atol"], max_step=tol["max_step"],
                        events=_events(drift, active, floored, pinned))
        if sol.status < 0:
            raise RuntimeError(f"fluid model: solver failed at t = {t:.6g} s: {sol.message}")
        pieces.append((t, float(sol.t[-1]), sol.sol))
        t, y = float(sol.t[-1]), sol.y[:, -1].copy()
        if sol.status == 1:
            fired = [k for k, times in enumerate(sol.t_events) if len(times)]
            for k in fired:
                i = floored[k]
                if i in pinned:
                    pinned.discard(i)
                else:
                    pinned.add(i)
                    y[i] = 0.0
    return pieces, y


def _integrate(drift: Drift, n_flows: int, starts: Sequence[float], t_end: float, dt: float,
               x0: float, floored: List[int], tol: dict, on_start=None):
    """The trajectory on the grid 0, dt, …, t_end as an array (rows: time; columns: X_1..X_N, Q)."""
    import numpy as np

    y = np.zeros(n_flows + 1)
    active = np.zeros(n_flows, dtype=bool)
    order = sorted(range(n_flows), key=lambda i: starts[i])
    cuts = sorted({0.0, t_end, *(s for s in starts if s < t_end)})
    pieces = []
    for t0, t1 in zip(cuts[:-1], cuts[1:]):
        for i in order:
            if starts[i] == t0:
                active[i], y[i] = True, x0
                if on_start is not None:
                    on_start(i, y)
        # Only running flows are floored: a flow not yet started has drift 0, and scipy counts
        # an event function that stays at 0 as crossing it.
        live = [i for i in floored if i >= n_flows or active[i]]
        more, y = _segment(drift, y, active.copy(), live, t0, t1, tol)
        pieces += more
    grid = np.arange(0.0, t_end + dt / 2, dt)
    ends = np.array([p[1] for p in pieces])
    which = np.minimum(np.searchsorted(ends, grid, side="left"), len(pieces) - 1)
    out = np.empty((len(grid), n_flows + 1))
    for k, piece in enumerate(pieces):
        rows = which == k
        if rows.any():
            out[rows] = piece[2](grid[rows]).T
    out[:, floored] = np.maximum(out[:, floored], 0.0)  # event location leaves ~atol below 0
    return grid, out


def _frame(grid, out, n_flows: int):
    import pandas as pd

    columns = {"t": grid, **{f"X_{i + 1}": out[:, i] for i in range(n_flows)}, "Q": out[:, -1]}
    return pd.DataFrame(columns)


def _check_run(starts, t_end, dt, x0) -> List[float]:
    _positive(t_end=t_end, dt=dt)
    starts = [float(s) for s in starts]
    if not starts:
        raise ValueError("starts: needs at least one flow")
    if any(not math.isfinite(s) or s < 0 for s in starts):
        raise ValueError(f"starts: must be finite and >= 0, got {starts!r}")
    if not (math.isfinite(x0) and x0 >= 0):
        raise ValueError(f"x0: must be finite and >= 0, got {x0!r}")
    return starts


_TOL = {"rtol": 1e-9, "atol": 1e-9, "max_step": 0.05}


def fledbat_fluid(C: float, tau: float, R: float, alpha: float = 1.0, zeta: float = 0.1,
                  starts: Sequence[float] = (0.0, 2.0), t_end: float = 60.0, dt: float = 0.01,
                  x0: float = 0.0, rtol: float = 1e-9, atol: float = 1e-9):
    """fLEDBAT's fluid model, eqs. (8)–(9) (L161–L166), integrated with scipy's RK45.

    dX_i/dt = α/R² − (ζ/(Rτ))·(Q/C − τ)·X_i·1{Q ≥ Cτ},  dQ/dt = ΣX_i − C·1{Q > 0}.
    Flow i starts at ``starts[i]`` with rate ``x0``. X_i ≥ 0 holds by itself (the decrease is
    proportional to X_i and α/R² > 0); Q is floored at 0, read as 1{Q > 0} (notes §5.7). The
    model's assumptions (L137–L140): R_t ≈ R, exact queueing-delay estimate, no feedback delay.
    Returns a DataFrame sampled every ``dt`` s: ``t``, ``X_1``..``X_N`` (packets/s), ``Q`` (packets).
    """
    import numpy as np

    _positive(C=C, tau=tau, R=R, alpha=alpha, zeta=zeta)
    starts = _check_run(starts, t_end, dt, x0)
    n = len(starts)
    gain, brake = alpha / R ** 2, zeta / (R * tau)

    def drift(t, y, active):
        X, Q = y[:n], y[n]
        excess = max(Q / C - tau, 0.0)  # (Q/C − τ)·1{Q ≥ Cτ}
        return np.append(np.where(active, gain - brake * excess * X, 0.0), X.sum() - C)

    tol = {**_TOL, "rtol": rtol, "atol": atol}
    grid, out = _integrate(drift, n, starts, t_end, dt, x0, [n], tol)
    return _frame(grid, out, n)


def ledbat_fluid(C: float, tau: float, R: float, alpha: float = 1.0,
                 starts: Sequence[float] = (0.0, 10.0), t_end: float = 60.0, dt: float = 0.01,
                 base_errors: Optional[Sequence[float]] = None, x0: float = 0.0,
                 rtol: float = 1e-9, atol: float = 1e-9):
    """LEDBAT's fluid model, eqs. (3)–(4) (L99, L111), in consistent units (notes §3.1), as rates:

    dX_i/dt = (α/R²)·(τ − q_i)/τ,  q_i = Q/C − e_i,  dQ/dt = ΣX_i − C·1{Q > 0}.

    e_i is flow i's base-delay error (the mechanism of Prop. 4.1, L101): by default the queueing
    delay Q/C it finds when it starts, since its first delay sample, taken as its base, already
    holds that queue; the latecomer's target is thus shifted to τ + e_i. ``base_errors`` (seconds,
    one per flow) replaces that. The error is kept for the whole run: the queue never drains
    below it once the latecomer leads, which is the lock-in the proof assumes. X_i and Q are
    floored at 0 (a window cannot be negative). Returns the DataFrame of :func:`fledbat_fluid`
    plus ``e_1``..``e_N`` in its ``attrs["base_errors"]``.
    """
    import numpy as np

    _positive(C=C, tau=tau, R=R, alpha=alpha)
    starts = _check_run(starts, t_end, dt, x0)
    n = len(starts)
    if base_errors is not None and len(base_errors) != n:
        raise ValueError(f"base_errors: needs one value per flow ({n}), got {len(base_errors)}")
    errors = np.zeros(n) if base_errors is None else np.asarray(base_errors, dtype=float)
    gain = alpha / R ** 2

    def drift(t, y, active):
        X, Q = y[:n], y[n]
        own_delay = Q / C - errors
        return np.append(np.where(active, gain * (tau - own_delay) / tau, 0.0), X.sum() - C)

    def found_queue(i, y):
        if base_errors is None:
            errors[i] = y[n] / C

    tol = {**_TOL, "rtol": rtol, "atol": atol}
    grid, out = _integrate(drift, n, starts, t_end, dt, x0, list(range(n + 1)), tol, found_queue)
    frame = _frame(grid, out, n)
    frame.attrs["base_errors"] = [float(e) for e in errors]
    return frame
