import numpy as np
import pytest

from ccbench.models import aimd_utilization


def test_beta_half_without_buffer_is_three_quarters():
    assert aimd_utilization(0.5, 0.0) == 0.75


@pytest.mark.parametrize("beta", [0.5, 0.7, 0.9])
def test_full_utilization_at_and_above_threshold(beta):
    threshold = (1 - beta) / beta
    for b in (threshold, threshold + 1e-9, threshold * 2, 10.0):
        assert aimd_utilization(beta, b) == 1.0
    assert aimd_utilization(beta, threshold * 0.5) < 1.0


@pytest.mark.parametrize("beta", [0.3, 0.5, 0.7, 0.9])
def test_continuous_at_threshold(beta):
    threshold = (1 - beta) / beta
    assert aimd_utilization(beta, threshold - 1e-9) == pytest.approx(1.0, abs=1e-6)


def test_known_values_and_monotonic():
    # b = 0.25, beta = 0.5: 1 - (1 - 0.625)^2 / (2 * 0.5 * 1.25) = 0.8875
    assert aimd_utilization(0.5, 0.25) == pytest.approx(0.8875)
    b = np.linspace(0, 2, 101)
    u = aimd_utilization(0.5, b)
    assert u.shape == b.shape
    assert np.all(np.diff(u) >= 0)
    # A gentler back-off keeps the link busier with the same buffer.
    assert aimd_utilization(0.9, 0.0) > aimd_utilization(0.7, 0.0) > aimd_utilization(0.5, 0.0)


def test_rejects_bad_inputs():
    with pytest.raises(ValueError):
        aimd_utilization(0.0, 0.5)
    with pytest.raises(ValueError):
        aimd_utilization(0.5, -0.1)


def test_worked_example_of_the_notes():
    """experiments-abe.md §4.1: 10 Mbps, 100 ms (δ = 83.33 packets), b = 0.25 δ."""
    from ccbench.models import aimd_beta_needed, aimd_buffer_needed, aimd_cycle

    delta = 10e6 * 0.1 / 8 / 1500
    data, lost, rtts = aimd_cycle(0.5, 0.25 * delta, delta)
    assert data == pytest.approx(4340.3, abs=0.1) and lost == pytest.approx(488.3, abs=0.1)
    assert rtts == pytest.approx(52.08, abs=0.01)
    assert 1 - lost / data == pytest.approx(aimd_utilization(0.5, 0.25))
    assert aimd_utilization(0.7, 0.25) == pytest.approx(0.97917, abs=1e-5)
    assert aimd_utilization(0.8, 0.25) == 1.0
    assert aimd_beta_needed(0.25) == pytest.approx(0.8) and aimd_buffer_needed(0.8) == pytest.approx(0.25)
    assert aimd_buffer_needed(0.5) == 1.0 and aimd_buffer_needed(0.7) == pytest.approx(0.4286, abs=1e-4)
    assert aimd_cycle(0.8, 0.25 * delta, delta)[1] == 0.0, "cwnd never falls below δ"


@pytest.mark.parametrize("beta,row", [
    (0.5, [0.7500, 0.8159, 0.8875, 0.9583, 1]), (0.7, [0.8500, 0.9198, 0.9792, 1, 1]),
    (0.85, [0.9250, 0.9872, 1, 1, 1]), (0.95, [0.9750, 1, 1, 1, 1]),
])
def test_reference_table_of_the_notes(beta, row):
    """experiments-abe.md §4.2: U(β, b/δ) for b/δ = 0, 0.1, 0.25, 0.5, 1."""
    assert aimd_utilization(beta, [0, 0.1, 0.25, 0.5, 1.0]) == pytest.approx(row, abs=5e-5)


def test_aqm_target_as_buffer_gives_the_fig7_cross_check():
    """Notes Fig. 7: CoDel's 5 ms at 400 ms RTT: U(0.5) = 0.759 and gains of 13.3/23.3/29.8 %."""
    from ccbench.models import aqm_utilization

    base = aqm_utilization(0.5, 0.005, 0.4)
    assert base == pytest.approx(0.759, abs=5e-4)
    gains = [100 * (aqm_utilization(b, 0.005, 0.4) / base - 1) for b in (0.7, 0.85, 0.95)]
    assert gains == pytest.approx([13.3, 23.3, 29.8], abs=0.1)
