"""Minimum-jerk trajectories and seed 001's arm anthropometry."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import trapezoid

from gaitid.core.errors import DataError, ModelError
from gaitid.dynamics.multibody.anthropometry import arm_chain, segment_parameters
from gaitid.dynamics.multibody.trajectories import minimum_jerk


def test_minimum_jerk_boundary_values_peak_speed_and_derivatives():
    start, end, T = np.array([0.0, -0.75]), np.array([0.32, 0.43]), 0.5
    mj = minimum_jerk(start, end, T, n_samples=2001)
    np.testing.assert_allclose(mj.position[[0, -1]], [start, end], atol=1e-15)
    for d in (mj.velocity, mj.acceleration):
        np.testing.assert_allclose(d[[0, -1]], 0.0, atol=1e-12)
    # closed forms: peak speed 15/8 D/T at mid-time; jerk at start 60 D/T^3
    np.testing.assert_allclose(mj.velocity[1000], 1.875 * (end - start) / T, rtol=1e-12)
    np.testing.assert_allclose(mj.jerk[0], 60 * (end - start) / T**3, rtol=1e-12)
    h = mj.time[1] - mj.time[0]
    for f, df in ((mj.position, mj.velocity), (mj.velocity, mj.acceleration), (mj.acceleration, mj.jerk)):
        np.testing.assert_allclose(np.gradient(f, h, axis=0)[1:-1], df[1:-1], atol=1e-5 * np.abs(df).max())


def test_minimum_jerk_cost_is_the_minimum():
    """Integral of squared jerk = 720 D^2 / T^5; a rest-to-rest perturbation only adds to it."""
    D, T = 0.3, 0.8
    mj = minimum_jerk(0.0, D, T, n_samples=4001)
    cost = trapezoid(mj.jerk[:, 0] ** 2, mj.time)
    np.testing.assert_allclose(cost, 720 * D**2 / T**5, rtol=1e-6)
    s = mj.time / T
    # p = s^3 (1 - s)^3 keeps position, velocity and acceleration at both ends
    jerk_p = np.gradient(np.gradient(np.gradient(s**3 * (1 - s) ** 3, mj.time), mj.time), mj.time)
    for eps in (-0.05, 0.05):
        assert trapezoid((mj.jerk[:, 0] + eps * jerk_p) ** 2, mj.time) > cost


def test_minimum_jerk_sampling_and_errors():
    assert minimum_jerk(0, 1, 4.0).time.size == 401  # 100 Hz by default
    with pytest.raises(DataError, match="duration"):
        minimum_jerk(0, 1, 0.0)
    with pytest.raises(DataError, match="same size"):
        minimum_jerk([0, 0], [1, 1, 1], 1.0)


def test_seed001_arm_parameters():
    p = segment_parameters("upper_arm", 1.70, 70.0)
    np.testing.assert_allclose([p["length"], p["com"], p["mass"]], [0.3196, 0.1393456, 1.96], rtol=1e-12)
    np.testing.assert_allclose(p["inertia"], 1.96 * (0.322 * 0.3196) ** 2, rtol=1e-12)
    chain = arm_chain(1.70, 70.0)
    np.testing.assert_allclose(chain.length, [0.188 * 1.7, 0.253 * 1.7])
    np.testing.assert_allclose(chain.mass, [1.96, 1.54])
    with pytest.raises(ModelError, match="no segment 'thigh'"):
        segment_parameters("thigh", 1.7, 70)
    with pytest.raises(ModelError, match="positive"):
        arm_chain(-1.7, 70)
