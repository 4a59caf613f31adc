"""Planar chains (seeds 001, 002): programmatic M, C, G, E against independent derivations.

Typos found in the printed texts (each is demonstrated by a test below):
- seed 002 eq 31: M_22 is printed with ``l2 d3 cos a3``; it must be ``2 l2 d3 cos a3``.
- seed 001, Newton-Euler moment equation of link 2 (before In [18]): ``-(L2-d2) F_ey cos(a1+a2)``
  must be ``+(L2-d2) F_ey cos(a1+a2)`` (the printed M, C, G, E of In [22] are right).
- seed 003 section 9.1.1 (2R chain with point masses): tau_1's theta_2'' coefficient has
  ``cos theta_1`` for ``cos theta_2``; tau_2's velocity term is ``-m2 L1 L2 th1' th2' sin th2`` for
  ``+m2 L1 L2 th1'^2 sin th2``; tau_2's gravity term has the wrong sign.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.core.errors import DataError, ModelError
from gaitid.dynamics.multibody import planar as P

RNG = np.random.default_rng(20261121)


def random_chain(n: int, rng=RNG) -> P.PlanarChain:
    length = rng.uniform(0.2, 0.6, n)
    return P.PlanarChain(rng.uniform(0.5, 5.0, n), length, length * rng.uniform(0.2, 0.8, n), rng.uniform(0.005, 0.1, n))


def random_state(n: int, frames: int = 7, rng=RNG):
    return rng.uniform(-np.pi, np.pi, (frames, n)), rng.normal(0, 3, (frames, n)), rng.normal(0, 20, (frames, n))


def test_two_link_closed_form_equals_programmatic():
    chain = random_chain(2)
    q, qd, qdd = random_state(2)
    F = RNG.normal(0, 50, (7, 2))
    a = P.inverse_dynamics(chain, q, qd, qdd, tip_force=F)
    b = P.two_link_closed_form(chain, q, qd, qdd, tip_force=F)
    for term in ("M", "C", "G", "E", "inertial", "tau"):
        np.testing.assert_allclose(getattr(a, term), getattr(b, term), rtol=1e-12, atol=1e-12, err_msg=term)


def test_three_link_corrected_closed_form_equals_programmatic_and_printed_m22_is_wrong():
    chain = random_chain(3)
    q, qd, qdd = random_state(3)
    FS = RNG.normal(0, 30, 7)
    dS = 0.04
    # seed 002's spring pulls along -X at d3 + dS from the wrist
    F = np.stack([-FS, np.zeros(7)], axis=1)
    a = P.inverse_dynamics(chain, q, qd, qdd, tip_force=F, tip_distance=chain.com[2] + dS)
    b = P.three_link_closed_form(chain, q, qd, qdd, spring_force=FS, spring_distance=dS)
    for term in ("M", "C", "G", "E", "tau"):
        np.testing.assert_allclose(getattr(a, term), getattr(b, term), rtol=1e-12, atol=1e-12, err_msg=term)
    # the printed eq 31 (single l2 d3 cos a3) misses exactly m3 l2 d3 cos a3
    m3, l2, d3 = chain.mass[2], chain.length[1], chain.com[2]
    printed_m22 = chain.mass[1] * chain.com[1] ** 2 + chain.inertia[1] + m3 * (l2**2 + d3**2 + l2 * d3 * np.cos(q[:, 2])) + chain.inertia[2]
    np.testing.assert_allclose(a.M[:, 1, 1] - printed_m22, m3 * l2 * d3 * np.cos(q[:, 2]), rtol=1e-12)
    assert np.max(np.abs(a.M[:, 1, 1] - printed_m22)) > 1e-3


def test_one_link_closed_form_and_hanging_inverted_statics():
    chain = random_chain(1)
    q, qd, qdd = random_state(1)
    F = RNG.normal(0, 20, (7, 2))
    a = P.inverse_dynamics(chain, q, qd, qdd, tip_force=F)
    m, L, d, I = chain.mass[0], chain.length[0], chain.com[0], chain.inertia[0]
    b = P.one_link_closed_form(m, L, d, I, q[:, 0], qd[:, 0], qdd[:, 0], F)
    np.testing.assert_allclose(a.tau, b.tau, rtol=1e-12, atol=1e-12)
    # hanging (-90 deg) or inverted (+90 deg) and still: no torque; horizontal: m g d
    for angle, expected in ((-np.pi / 2, 0.0), (np.pi / 2, 0.0), (0.0, m * 9.81 * d), (np.pi, -m * 9.81 * d)):
        tau = P.inverse_dynamics(chain, [angle], [0.0], [0.0]).tau
        np.testing.assert_allclose(tau, [expected], atol=1e-12)


def test_seed001_newton_euler_recursion_and_its_printed_sign_typo():
    """Seed 001 In [19]: link-by-link Newton-Euler, written out in numpy, equals tau."""
    chain = random_chain(2)
    q, qd, qdd = random_state(2)
    Fex, Fey = RNG.normal(0, 40, 7), RNG.normal(0, 40, 7)
    (m1, m2), (L1, L2), (d1, d2), (I1, I2), g = chain.mass, chain.length, chain.com, chain.inertia, 9.81
    a1, a2 = q.T
    a1d, a2d = qd.T
    a1dd, a2dd = qdd.T
    x1dd = -d1 * (np.sin(a1) * a1dd + np.cos(a1) * a1d**2)
    y1dd = d1 * (np.cos(a1) * a1dd - np.sin(a1) * a1d**2)
    s12, c12, w12 = np.sin(a1 + a2), np.cos(a1 + a2), a1d + a2d
    x2dd = -L1 * (np.sin(a1) * a1dd + np.cos(a1) * a1d**2) - d2 * (s12 * (a1dd + a2dd) + c12 * w12**2)
    y2dd = L1 * (np.cos(a1) * a1dd - np.sin(a1) * a1d**2) + d2 * (c12 * (a1dd + a2dd) - s12 * w12**2)

    def torques(fey_sign):
        Fr2x = m2 * x2dd - Fex
        Fr2y = m2 * y2dd + m2 * g - Fey
        T2 = (I2 * (a1dd + a2dd) - d2 * Fr2x * s12 + d2 * Fr2y * c12 + (L2 - d2) * Fex * s12
              - fey_sign * (L2 - d2) * Fey * c12)
        Fr1x = m1 * x1dd + Fr2x
        Fr1y = m1 * y1dd + Fr2y + m1 * g
        T1 = (I1 * a1dd + T2 - d1 * Fr1x * np.sin(a1) + d1 * Fr1y * np.cos(a1)
              - (L1 - d1) * Fr2x * np.sin(a1) + (L1 - d1) * Fr2y * np.cos(a1))
        return np.stack([T1, T2], 1)

    tau = P.inverse_dynamics(chain, q, qd, qdd, tip_force=np.stack([Fex, Fey], 1)).tau
    np.testing.assert_allclose(torques(+1), tau, rtol=1e-10, atol=1e-10)
    # the printed equation, T2 + ... - (L2-d2) F_ey cos = I2 (..), moves to T2 = ... + (L2-d2) F_ey cos
    assert np.max(np.abs(torques(-1) - tau)) > 1.0


def test_seed003_two_link_point_masses_corrected():
    m1, m2, L1, L2, g = 1.3, 0.7, 0.5, 0.4, 9.81
    chain = P.PlanarChain([m1, m2], [L1, L2], [L1, L2], [0.0, 0.0])
    q, qd, qdd = random_state(2)
    t1, t2 = q.T
    t1d, t2d = qd.T
    t1dd, t2dd = qdd.T
    tau1 = (((m1 + m2) * L1**2 + m2 * (2 * L1 * L2 * np.cos(t2) + L2**2)) * t1dd
            + m2 * (L1 * L2 * np.cos(t2) + L2**2) * t2dd - 2 * m2 * L1 * L2 * t1d * t2d * np.sin(t2)
            - m2 * L1 * L2 * t2d**2 * np.sin(t2) + (m1 + m2) * L1 * g * np.cos(t1) + m2 * g * L2 * np.cos(t1 + t2))
    tau2 = (m2 * (L1 * L2 * np.cos(t2) + L2**2) * t1dd + m2 * L2**2 * t2dd
            + m2 * L1 * L2 * t1d**2 * np.sin(t2) + m2 * g * L2 * np.cos(t1 + t2))
    np.testing.assert_allclose(P.inverse_dynamics(chain, q, qd, qdd).tau, np.stack([tau1, tau2], 1), rtol=1e-11, atol=1e-11)


def test_lagrangian_derivation_with_sympy_three_links():
    """M from the kinetic energy, C from Christoffel symbols (seed 003 eq 9.13), G = dP/dq."""
    sym = pytest.importorskip("sympy")
    n = 3
    q = sym.symbols("q0:3")
    qd = sym.symbols("qd0:3")
    m = sym.symbols("m0:3")
    L = sym.symbols("L0:3")
    d = sym.symbols("d0:3")
    I = sym.symbols("I0:3")
    g = sym.Symbol("g")
    theta = [sum(q[: i + 1]) for i in range(n)]
    xs, ys, x0, y0 = [], [], 0, 0
    for i in range(n):
        xs.append(x0 + d[i] * sym.cos(theta[i]))
        ys.append(y0 + d[i] * sym.sin(theta[i]))
        x0, y0 = x0 + L[i] * sym.cos(theta[i]), y0 + L[i] * sym.sin(theta[i])
    vel = lambda e: sum(sym.diff(e, q[j]) * qd[j] for j in range(n))  # noqa: E731
    K = sum(m[i] * (vel(xs[i]) ** 2 + vel(ys[i]) ** 2) / 2 + I[i] * vel(theta[i]) ** 2 / 2 for i in range(n))
    Pot = sum(m[i] * g * ys[i] for i in range(n))
    M = sym.Matrix(n, n, lambda i, j: sym.diff(K, qd[i], qd[j]))
    C = [sum((sym.diff(M[i, j], q[k]) + sym.diff(M[i, k], q[j]) - sym.diff(M[j, k], q[i])) / 2 * qd[j] * qd[k]
             for j in range(n) for k in range(n)) for i in range(n)]
    G = [sym.diff(Pot, q[i]) for i in range(n)]
    args = (*q, *qd, *m, *L, *d, *I, g)
    fM, fC, fG = (sym.lambdify(args, e, "numpy") for e in (M, C, G))

    chain = random_chain(3)
    qv, qdv, _ = random_state(3, frames=5)
    out = P.inverse_dynamics(chain, qv, qdv, np.zeros_like(qv))
    for f in range(5):
        vals = (*qv[f], *qdv[f], *chain.mass, *chain.length, *chain.com, *chain.inertia, 9.81)
        np.testing.assert_allclose(out.M[f], np.array(fM(*vals), float), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(out.C[f], np.array(fC(*vals), float), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out.G[f], np.array(fG(*vals), float), rtol=1e-12, atol=1e-12)


def test_n_link_power_balance():
    """d/dt (1/2 q'^T M q' + P) = q'^T (tau - E): checks C against M by finite differences in time."""
    chain = random_chain(5)
    t = np.array([-1e-4, 0.0, 1e-4])
    a0, w0, al = RNG.uniform(-1, 1, 5), RNG.normal(0, 2, 5), RNG.normal(0, 5, 5)
    q = a0 + w0 * t[:, None] + 0.5 * al * t[:, None] ** 2
    qd = w0 + al * t[:, None]
    qdd = np.broadcast_to(al, q.shape)
    F = np.array([3.0, -7.0])
    e = P.energy(chain, q, qd)
    power = (e[2] - e[0]) / 2e-4
    dyn = P.inverse_dynamics(chain, q[1], qd[1], qdd[1], tip_force=F)
    # work of the tip force = -q'.E
    np.testing.assert_allclose(power, qd[1] @ (dyn.tau - dyn.E), rtol=1e-6)


def test_inverse_kinematics_2link_round_trip():
    chain = P.PlanarChain([1, 1], [0.32, 0.43], [0.1, 0.2], [0.01, 0.01])
    q = np.stack([RNG.uniform(-np.pi, np.pi, 20), RNG.uniform(0.05, 3.0, 20)], 1)
    tip = P.joint_positions(chain, q)[:, -1]
    np.testing.assert_allclose(P.inverse_kinematics_2link(tip, 0.32, 0.43), q, atol=1e-10)


def test_bad_parameters_and_shapes_raise_gaitid_errors():
    with pytest.raises(ModelError, match="different numbers of links"):
        P.PlanarChain([1, 2], [0.3], [0.1, 0.1], [0.01, 0.01])
    with pytest.raises(ModelError, match="non-negative"):
        P.PlanarChain([-1.0], [0.3], [0.1], [0.01])
    with pytest.raises(ModelError, match="non-finite"):
        P.PlanarChain([np.nan], [0.3], [0.1], [0.01])
    chain = random_chain(2)
    with pytest.raises(DataError, match=r"q must have shape \(n_frames, 2\)"):
        P.inverse_dynamics(chain, np.zeros((4, 3)), np.zeros((4, 3)), np.zeros((4, 3)))
    with pytest.raises(ModelError, match="2-link"):
        P.two_link_closed_form(random_chain(3), np.zeros(3), np.zeros(3), np.zeros(3))
