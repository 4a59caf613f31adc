"""Forward dynamics (seeds 000, 001, 003): energy conservation, round trips, seed 000's typo."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from gaitid.core.errors import DataError
from gaitid.dynamics.multibody import forward as Fw
from gaitid.dynamics.multibody import planar as P
from gaitid.dynamics.multibody import screw as S

SEED000 = dict(m1=1.0, m2=1.0, l1=1.0, l2=0.5)  # seed 000 In [139]
THETA0 = np.array([np.pi / 10, np.pi / 3])
OMEGA0 = np.array([2 * np.pi, -6 * np.pi])


def test_double_pendulum_energy_conserved_over_10s():
    """Seed 000's chaotic double pendulum, free: relative energy drift < 1e-6 over 10 s."""
    t = np.linspace(0.0, 10.0, 2001)
    theta, omega = Fw.integrate(Fw.double_pendulum_accel(**SEED000), THETA0, OMEGA0, t, rtol=1e-10, atol=1e-10)
    E = Fw.double_pendulum_energy(theta, omega, **SEED000)
    E_rest = Fw.double_pendulum_energy([0.0, 0.0], [0.0, 0.0], **SEED000)[0]
    drift = np.max(np.abs(E - E[0])) / (E[0] - E_rest)
    assert drift < 1e-6
    # and it really moved: bar 2 turned several times
    assert np.ptp(theta[:, 1]) > 4 * np.pi


def test_double_pendulum_equals_planar_chain_and_printed_gravity_typo():
    """Seed 000's matrices (corrected) equal the planar derivation with uniform rods; its
    printed code (m2 g l2 instead of m2 g l1 in G[0]) does not, unless l1 = l2."""
    rng = np.random.default_rng(0)
    theta, omega = rng.uniform(-3, 3, (6, 2)), rng.normal(0, 4, (6, 2))
    m1, m2, l1, l2 = SEED000.values()
    M, C, G = Fw.double_pendulum_matrices(theta, omega, m1, m2, l1, l2)
    acc_seed = np.linalg.solve(M, (C + G)[..., None])[..., 0]
    chain = P.PlanarChain.uniform_rods([m1, m2], [l1, l2])
    q, qd = Fw.double_pendulum_to_planar(theta, omega)
    qdd = Fw.planar_forward_dynamics(chain, q, qd, np.zeros(2))
    # absolute accelerations: theta1'' = q0'', theta2'' = q0'' + q1''
    np.testing.assert_allclose(acc_seed, np.stack([qdd[:, 0], qdd[:, 0] + qdd[:, 1]], 1), rtol=1e-10, atol=1e-10)
    G_printed = G.copy()
    G_printed[:, 0] = -m1 * 9.81 * l1 / 2 * np.sin(theta[:, 0]) - m2 * 9.81 * l2 * np.sin(theta[:, 0])
    acc_printed = np.linalg.solve(M, (C + G_printed)[..., None])[..., 0]
    assert np.max(np.abs(acc_printed - acc_seed)) > 1.0


def test_explicit_euler_is_first_order_and_drifts():
    t_end = 1.0
    accel = Fw.double_pendulum_accel(**SEED000)
    t_ref = np.array([0.0, t_end])
    ref, _ = Fw.integrate(accel, THETA0, OMEGA0, t_ref, rtol=1e-12, atol=1e-12)
    errors = []
    for h in (1e-3, 5e-4):
        t = np.arange(0.0, t_end + h / 2, h)
        q, qd = Fw.euler(accel, THETA0, OMEGA0, t)
        errors.append(np.max(np.abs(q[-1] - ref[-1])))
    assert 1.7 < errors[0] / errors[1] < 2.3  # error halves with the step: first order
    E = Fw.double_pendulum_energy(q, qd, **SEED000)
    E_rest = Fw.double_pendulum_energy([0.0, 0.0], [0.0, 0.0], **SEED000)[0]
    assert np.max(np.abs(E - E[0])) / (E[0] - E_rest) > 1e-3  # far worse than solve_ivp's 1e-9


def test_three_link_planar_energy_conserved():
    chain = P.PlanarChain([2.0, 1.5, 0.5], [0.45, 0.4, 0.2], [0.2, 0.18, 0.1], [0.04, 0.02, 0.004])
    q0, qd0 = np.array([-1.2, 0.4, 0.3]), np.array([1.0, -2.0, 3.0])
    t = np.linspace(0.0, 5.0, 251)
    q, qd = Fw.simulate_planar(chain, q0, qd0, t, rtol=1e-10, atol=1e-10)
    E = P.energy(chain, q, qd)
    E_rest = P.energy(chain, [-np.pi / 2, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert np.max(np.abs(E - E[0])) / (E[0] - E_rest) < 1e-6


def test_inverse_dynamics_of_simulated_motion_returns_the_input_torques():
    """Planar forward simulation driven by known torques, then the twist-wrench RNEA (an
    independent formulation) on the sampled motion: with q'' from a spline of the simulated
    q' (checks the integration) and with q'' from the planar model (checks the two models)."""
    chain = P.PlanarChain([2.0, 1.5, 0.5], [0.45, 0.4, 0.2], [0.2, 0.18, 0.1], [0.04, 0.02, 0.004])

    def tau(t):
        return np.array([5 * np.sin(3 * t) + 4, 2 * np.cos(2 * t), 0.5 * np.sin(5 * t + 1)])

    t = np.linspace(0.0, 1.5, 1501)
    q, qd = Fw.simulate_planar(chain, [-1.3, 0.5, 0.2], [0.0, 0.0, 0.0], t, tau=tau, rtol=1e-11, atol=1e-11)
    expected = np.stack([tau(ti) for ti in t])
    sc = S.planar_screw_chain(chain.mass, chain.length, chain.com, chain.inertia)
    g = [0.0, -9.81, 0.0]
    qdd_model = Fw.planar_forward_dynamics(chain, q, qd, expected)
    np.testing.assert_allclose(S.rnea(sc, q, qd, qdd_model, g=g).tau, expected, rtol=1e-9, atol=1e-9)
    qdd = CubicSpline(t, qd).derivative()(t)
    inner = slice(10, -10)
    np.testing.assert_allclose(S.rnea(sc, q[inner], qd[inner], qdd[inner], g=g).tau, expected[inner],
                               atol=1e-5 * np.abs(expected).max())


def test_screw_forward_dynamics_conserves_energy_and_matches_planar_simulation():
    rng = np.random.default_rng(5)
    sc = S.sample_chain(3, rng)
    g = np.array([0.0, 0.0, -9.81])
    t = np.linspace(0.0, 1.0, 51)
    th, thd = Fw.simulate_chain(sc, rng.uniform(-1, 1, 3), rng.normal(0, 1, 3), t, g=g)
    E = S.kinetic_energy(sc, th, thd) + S.potential_energy(sc, th, g)
    assert np.max(np.abs(E - E[0])) / np.ptp(S.kinetic_energy(sc, th, thd)) < 1e-6
    # a planar chain simulated by both formulations, driven by torques and a tip force
    chain = P.PlanarChain([2.0, 1.5], [0.45, 0.4], [0.2, 0.18], [0.04, 0.02])
    sc2 = S.planar_screw_chain(chain.mass, chain.length, chain.com, chain.inertia)

    def tau(t):
        return np.array([3 * np.sin(2 * t), np.cos(3 * t)])

    t = np.linspace(0.0, 0.5, 26)
    q_p, _ = Fw.simulate_planar(chain, [-1.0, 0.5], [0.0, 0.0], t, tau=tau)
    q_s, _ = Fw.simulate_chain(sc2, [-1.0, 0.5], [0.0, 0.0], t, tau=tau, g=[0.0, -9.81, 0.0])
    np.testing.assert_allclose(q_s, q_p, atol=1e-8)


def test_integrate_rejects_bad_times():
    with pytest.raises(DataError, match="strictly increasing"):
        Fw.integrate(lambda t, q, qd: -q, [1.0], [0.0], [0.0, 0.0])
