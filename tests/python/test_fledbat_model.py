"""The LEDBAT and fLEDBAT fluid models (``ccbench.models.ledbat``) against the worked numbers of
the notes (``shared/reference/experiments-fledbat.md`` §3, Fig. 2) and their own closed forms.

Reference case throughout: C = 10 Mbps of 1500 B packets (833.33 pkt/s), τ = 25 ms, R = 50 ms,
α = 1, ζ = 0.1, N = 2. The notes' tolerance class for the fluid model (EXACT/NUM) is a relative
error of 1e-3; it is used wherever the notes print a value, with half a unit of the last printed
digit as a floor where that is wider.
"""

import math

import numpy as np
import pytest

from ccbench.models import (
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

C = 10e6 / 8 / 1500
TAU, R = 0.025, 0.050
NUM = 1e-3  # the notes' EXACT/NUM class


def close(ours, paper, printed_step):
    """Within the notes' 1e-3 relative, or half the printed value's last digit."""
    return abs(ours - paper) <= max(NUM * abs(paper), printed_step / 2)


@pytest.fixture(scope="module")
def fig2():
    """Fig. 2 (right): two flows from X = 0, the second switched on at t = 2 s (1 ms samples)."""
    return fledbat_fluid(C, TAU, R, alpha=1, zeta=0.1, starts=(0.0, 2.0), t_end=60.0, dt=0.001)


def _at(frame, t):
    return frame.iloc[int(round(t / 0.001))]


def test_equilibrium_reference_case():
    star = fledbat_equilibrium(C, TAU, R, 2)
    assert close(star.X, 416.67, 0.01) and close(star.Q, 30.83, 0.01)
    assert star.X == pytest.approx(C / 2, rel=1e-12)


@pytest.mark.parametrize("N, zeta, q_star", [
    (2, 0.1, 30.83), (2, 1, 21.83), (2, 5, 21.03), (2, 0.01, 120.83), (5, 0.1, 45.83), (10, 0.1, 70.83),
])
def test_equilibrium_table(N, zeta, q_star):
    """Notes §3.3, the table of Q* (eq. 10) for N and ζ."""
    assert close(fledbat_equilibrium(C, TAU, R, N, zeta=zeta).Q, q_star, 0.01)


def test_corrected_rates_reference_case():
    rates = fledbat_rates(C, TAU, R, 2, zeta=0.1)
    assert rates.fairness == pytest.approx(0.96, rel=NUM)
    assert rates.theta == pytest.approx(0.48, rel=NUM)
    assert rates.zeta_star == pytest.approx(2.88e-4, rel=NUM)
    assert rates.omega == pytest.approx(8.93, abs=0.005)


def test_printed_rates_reference_case():
    """Transcription of Prop. 5.7 as printed (L243–L248): Θ = 0.24, ζ* = 0.030."""
    rates = fledbat_rates(C, TAU, R, 2, zeta=0.1, printed=True)
    assert rates.theta == pytest.approx(0.24, rel=NUM)
    assert rates.zeta_star == pytest.approx(0.030, rel=NUM)
    assert fledbat_rates(C, TAU, R, 2, zeta=1e-4, printed=True).theta == pytest.approx(0.4796, abs=5e-5)


@pytest.mark.parametrize("N, zeta, theta", [(2, 1e-4, 0.0922), (2, 2e-4, 0.2147), (5, 0.1, 1.2000),
                                            (5, 1e-3, 0.4000)])
def test_corrected_theta_table(N, zeta, theta):
    """The "corrected Θ" column of the notes' table (§3.3)."""
    assert fledbat_rates(C, TAU, R, N, zeta=zeta).theta == pytest.approx(theta, abs=5e-5)


def test_ledbat_eigen_frequency():
    """Notes §3.1: ω = √(N/(CτR²)) = 6.197 rad/s; printed ±i√(N/(Rτ)) = 40 rad/s."""
    assert ledbat_eigen_frequency(C, TAU, R, 2) == pytest.approx(6.197, abs=5e-4)
    assert ledbat_eigen_frequency(C, TAU, R, 2, printed=True) == pytest.approx(40.0, rel=1e-12)


@pytest.mark.parametrize("t, x1, x2, q", [(2.0, 800.0, 0.0, 0.0), (2.5, 667.5, 142.0, 49.8),
                                          (4.0, 470.8, 348.2, 40.3), (6.0, 438.2, 419.6, 33.1)])
def test_fig2_samples_match_the_notes_euler_run(fig2, t, x1, x2, q):
    """The notes' Euler run (dt = 1e-4 s) printed to 0.1; Euler's own O(dt) error is ~0.2 pkt/s
    on X₁ at t = 2.5 s, inside the 1e-3 relative class."""
    row = _at(fig2, t)
    for ours, paper in ((row.X_1, x1), (row.X_2, x2), (row.Q, q)):
        assert close(ours, paper, 0.1), (t, ours, paper)


def test_fig2_fairness_reaches_0_99_near_4_39_s(fig2):
    after = fig2[fig2.t > 2.0]
    jain = np.array([jain_index(pair) for pair in zip(after.X_1, after.X_2)])
    first = float(after.t.to_numpy()[np.argmax(jain >= 0.99)])
    assert abs(first - 4.39) <= 0.01, first


def test_fig2_end_state_is_the_closed_form(fig2):
    """Prop. 5.1: the ODE settles on eq. (10) (1e-3 relative; after 58 s at Θ = 0.48 it is ~1e-12)."""
    star = fledbat_equilibrium(C, TAU, R, 2)
    end = fig2.iloc[-1]
    assert end.X_1 == pytest.approx(star.X, rel=NUM) and end.X_2 == pytest.approx(star.X, rel=NUM)
    assert end.Q == pytest.approx(star.Q, rel=NUM)


@pytest.mark.parametrize("N, zeta", [(2, 0.1), (2, 1.0), (3, 5.0), (5, 0.1)])
def test_end_state_is_the_closed_form_for_other_cases(N, zeta):
    frame = fledbat_fluid(C, TAU, R, zeta=zeta, starts=[2.0 * k for k in range(N)], t_end=60.0, dt=0.1)
    star = fledbat_equilibrium(C, TAU, R, N, zeta=zeta)
    end = frame.iloc[-1]
    for i in range(1, N + 1):
        assert end[f"X_{i}"] == pytest.approx(star.X, rel=NUM)
    assert end.Q == pytest.approx(star.Q, rel=NUM)


@pytest.mark.parametrize("zeta, window, fitted", [(0.1, (8.0, 30.0), 0.4799), (1e-4, (100.0, 200.0), 0.0920)])
def test_fitted_decay_is_the_corrected_theta(zeta, window, fitted):
    """The notes' fitted decay (N = 2): the queue's distance from Q* decays at the corrected Θ
    (not the printed one, 0.24 / 0.4796). Tolerance 1 %: the envelope fit of an oscillation
    sampled every 5 ms, and (ζ = 1e-4) the faster root's residue early in the window."""
    frame = fledbat_fluid(C, TAU, R, zeta=zeta, starts=(0.0, 2.0), t_end=window[1], dt=0.005,
                          rtol=1e-11, atol=1e-11)
    late = frame[(frame.t >= window[0]) & (frame.t <= window[1])]
    rate = decay_rate(late.t, late.Q - fledbat_equilibrium(C, TAU, R, 2, zeta=zeta).Q)
    theta = fledbat_rates(C, TAU, R, 2, zeta=zeta).theta
    assert rate == pytest.approx(theta, rel=0.01) and rate == pytest.approx(fitted, rel=0.01)
    assert abs(rate - fledbat_rates(C, TAU, R, 2, zeta=zeta, printed=True).theta) > 0.1


def test_fitted_fairness_decay_is_d(fig2):
    """Differences between flows decay at d = Nα/(CR²) = 0.96 /s whatever ζ (notes: 0.960)."""
    window = fig2[(fig2.t >= 6.0) & (fig2.t <= 16.0)]
    assert decay_rate(window.t, window.X_1 - window.X_2) == pytest.approx(0.96, rel=0.01)


def test_lyapunov_worked_example():
    star = fledbat_equilibrium(C, TAU, R, 2)
    X = (500.0, 1000.0 / 3)
    # 17.009 exactly; the notes add their rounded terms (7.37 + 9.65 = 17.02): inside 1e-3.
    assert close(fledbat_lyapunov(X, star.Q, C, TAU, R), 17.02, 0.01)
    assert close(fledbat_lyapunov_derivative(X, C, TAU, R), -33.3, 0.1)
    assert fledbat_lyapunov((star.X, star.X), star.Q, C, TAU, R) == pytest.approx(0.0, abs=1e-9)


def test_lyapunov_decreases_along_the_trajectory(fig2):
    """Eq. (13) with X_i*: outside region A (Q ≥ Cτ) dV/dt along the solution equals eq. (15) and
    is ≤ 0. Compared by central differences on the 1 ms samples (5 % or 1e-3 /s)."""
    both = fig2[(fig2.t >= 2.1) & (fig2.t <= 20.0)]
    V = np.array([fledbat_lyapunov((a, b), q, C, TAU, R) for a, b, q in zip(both.X_1, both.X_2, both.Q)])
    slope = np.gradient(V, both.t.to_numpy())
    outside = (both.Q.to_numpy() >= C * TAU)[1:-1]
    formula = np.array([fledbat_lyapunov_derivative((a, b), C, TAU, R) for a, b in zip(both.X_1, both.X_2)])
    assert outside.sum() > 10_000
    assert np.all(formula <= 0)
    numeric, closed = slope[1:-1][outside], formula[1:-1][outside]
    assert np.all(np.abs(numeric - closed) <= np.maximum(0.05 * np.abs(closed), 1e-3))
    assert V[-1] < 1e-3 * V[0]


def test_ledbat_oscillates_at_the_corrected_frequency():
    """Eqs. (3)–(4) from rest: an undamped orbit touching Q = 0, period 2π/ω = 1.014 s (not 0.157 s)."""
    frame = ledbat_fluid(C, TAU, R, starts=(0.0, 0.0), t_end=12.0, dt=0.001)
    q, t = frame.Q.to_numpy(), frame.t.to_numpy()
    peaks = np.flatnonzero((q[1:-1] >= q[:-2]) & (q[1:-1] > q[2:])) + 1
    period = 2 * math.pi / ledbat_eigen_frequency(C, TAU, R, 2)
    assert np.mean(np.diff(t[peaks])) == pytest.approx(period, rel=1e-3)
    assert q[peaks] == pytest.approx(2 * C * TAU, rel=1e-3)  # every peak at 2Cτ: no damping


def test_ledbat_latecomer_starves_the_first_flow():
    """Prop. 4.1's mechanism, Fig. 1(b)'s setting (τ = 100 ms, latecomer at 10 s): the latecomer's
    base delay holds the queue it found (≈ τ), its target moves to ≈ 2τ, and flow 1 is driven to
    zero and stays there, while fLEDBAT's multiplicative decrease shares the link."""
    frame = ledbat_fluid(C, 0.100, R, starts=(0.0, 10.0), t_end=60.0, dt=0.01)
    error = frame.attrs["base_errors"][1]
    assert 0.5 * 0.100 <= error <= 2 * 0.100
    late = frame[frame.t >= 30.0]
    assert late.X_1.max() <= 0.01 * C and late.X_2.mean() == pytest.approx(C, rel=0.05)
    fair = fledbat_fluid(C, 0.100, R, starts=(0.0, 10.0), t_end=60.0, dt=0.01).iloc[-1]
    assert jain_index((fair.X_1, fair.X_2)) > 0.999


@pytest.mark.parametrize("call, field", [
    (lambda: fledbat_equilibrium(-1, TAU, R, 2), "C"),
    (lambda: fledbat_equilibrium(C, TAU, R, 0), "N"),
    (lambda: fledbat_rates(C, TAU, R, 2, zeta=0), "zeta"),
    (lambda: fledbat_fluid(C, TAU, R, starts=()), "starts"),
    (lambda: fledbat_fluid(C, TAU, R, starts=(0, -1)), "starts"),
    (lambda: fledbat_fluid(C, TAU, R, t_end=float("nan")), "t_end"),
    (lambda: ledbat_fluid(C, TAU, R, starts=(0, 1), base_errors=(0.0,)), "base_errors"),
    (lambda: decay_rate([0, 1], [0, 0]), "deviation"),
])
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        call()
