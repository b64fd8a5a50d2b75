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
