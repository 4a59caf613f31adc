"""Forward dynamics: q'' = M(q)^-1 (tau - C - G - E), integrated in time (seeds 000, 001, 003).

- :func:`integrate` -- any second-order system with scipy's ``solve_ivp`` (default DOP853).
- :func:`euler` -- the seeds' explicit Euler scheme (seed 000 In [139], seed 003 section 9.5),
  kept for comparison: it is first order and drifts.
- :func:`planar_forward_dynamics`, :func:`simulate_planar` -- planar chains of
  :mod:`gaitid.dynamics.multibody.planar`; :func:`simulate_chain` -- twist-wrench chains of
  :mod:`gaitid.dynamics.multibody.screw`.
- ``double_pendulum_*`` -- seed 000's double pendulum, with its printed typo corrected.

Units: SI, rad; arrays batch-first (n_frames, n).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy.integrate import solve_ivp

from gaitid.core.errors import DataError
from gaitid.dynamics.multibody import planar as P

Accel = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


def integrate(
    accel: Accel,
    q0,
    qd0,
    t_eval,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
    max_step: float = np.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """Integrate q'' = accel(t, q, q') with ``solve_ivp`` from t_eval[0] to t_eval[-1].

    q0, qd0: (n,) initial positions and velocities. t_eval: (n_t,) increasing times (s).
    Returns q, qd sampled at t_eval, each (n_t, n). Raises DataError when the solver fails.
    """
    q0 = np.atleast_1d(np.asarray(q0, float))
    qd0 = np.atleast_1d(np.asarray(qd0, float))
    t_eval = np.asarray(t_eval, float)
    if q0.shape != qd0.shape or q0.ndim != 1:
        raise DataError(f"q0 and qd0 must be two (n,) vectors, got {q0.shape} and {qd0.shape}")
    if t_eval.ndim != 1 or t_eval.size < 2 or np.any(np.diff(t_eval) <= 0):
        raise DataError("t_eval must be at least two strictly increasing times")
    n = q0.shape[0]

    def rhs(t, y):
        return np.concatenate([y[n:], accel(t, y[:n], y[n:])])

    sol = solve_ivp(rhs, (t_eval[0], t_eval[-1]), np.concatenate([q0, qd0]), method=method,
                    t_eval=t_eval, rtol=rtol, atol=atol, max_step=max_step)
    if not sol.success:
        raise DataError(f"forward dynamics integration failed: {sol.message}")
    return sol.y[:n].T, sol.y[n:].T


def euler(accel: Accel, q0, qd0, t) -> tuple[np.ndarray, np.ndarray]:
    """Explicit Euler, seed 003 section 9.5: q[k+1] = q[k] + h q'[k]; q'[k+1] = q'[k] + h q''[k].

    t: (n_t,) equally or unequally spaced times (s). Returns q, qd (n_t, n). A per-step loop
    is inherent to the scheme (each step needs the previous one).
    """
    t = np.asarray(t, float)
    q = np.zeros((t.size, np.size(q0)))
    qd = np.zeros_like(q)
    q[0], qd[0] = q0, qd0
    for k in range(t.size - 1):
        h = t[k + 1] - t[k]
        qdd = accel(t[k], q[k], qd[k])
        q[k + 1] = q[k] + h * qd[k]
        qd[k + 1] = qd[k] + h * qdd
    return q, qd


# ----------------------------------------------------------------------------------------
# Planar chains
# ----------------------------------------------------------------------------------------


def planar_forward_dynamics(chain: P.PlanarChain, q, qd, tau, tip_force=None, g: float = P.G_STANDARD) -> np.ndarray:
    """q'' = M^-1 (tau - C - G - E) (seed 001), batched: (n_frames, n) rad/s^2.

    tau: (n,) or (n_frames, n) N.m joint torques; tip_force as in planar.external_terms.
    """
    q2, single = P.as_frames(q, chain.n_links, "q")
    qd2, _ = P.as_frames(qd, chain.n_links, "qd")
    tau2 = np.broadcast_to(np.asarray(tau, float), q2.shape)
    J = P.com_jacobians(chain, q2)
    G = g * np.einsum("i,fik->fk", chain.mass, J[:, :, 1, :])
    rhs = tau2 - P.velocity_terms_from_jacobians(chain, q2, qd2, J) - G
    if tip_force is not None:
        rhs = rhs - P.external_terms(chain, q2, tip_force)
    qdd = np.linalg.solve(P.mass_matrix_from_jacobians(chain, J), rhs[..., None])[..., 0]
    return qdd[0] if single else qdd


def simulate_planar(
    chain: P.PlanarChain,
    q0,
    qd0,
    t_eval,
    tau: Callable[[float], np.ndarray] | None = None,
    g: float = P.G_STANDARD,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate a planar chain driven by joint torques ``tau(t)`` (N.m, (n,); None = passive).

    Returns q, qd (n_t, n) at t_eval (see :func:`integrate`).
    """
    zero = np.zeros(chain.n_links)

    def accel(t, q, qd):
        return planar_forward_dynamics(chain, q, qd, zero if tau is None else tau(t), None, g)

    return integrate(accel, q0, qd0, t_eval, method=method, rtol=rtol, atol=atol)


def simulate_chain(
    chain,
    theta0,
    dtheta0,
    t_eval,
    tau: Callable[[float], np.ndarray] | None = None,
    g=None,
    F_tip: Callable[[float], np.ndarray] | None = None,
    method: str = "DOP853",
    rtol: float = 1e-10,
    atol: float = 1e-10,
) -> tuple[np.ndarray, np.ndarray]:
    """Simulate a :class:`gaitid.dynamics.multibody.screw.ScrewChain` (seed 003 section 9.5, GetJointAccel).

    tau(t) -> (n,) joint torques/forces (None: passive); F_tip(t) -> (6,) wrench the tip exerts
    on the environment (tip frame; None: none); g: (3,) m/s^2, base frame (default lab -Z).
    Returns theta, dtheta (n_t, n) at t_eval.
    """
    from gaitid.dynamics.multibody import screw

    g = screw.GRAVITY_Z if g is None else g
    zero = np.zeros(chain.n_joints)

    def accel(t, th, thd):
        return screw.forward_dynamics(chain, th, thd, zero if tau is None else tau(t), g=g,
                                      F_tip=None if F_tip is None else F_tip(t))

    return integrate(accel, theta0, dtheta0, t_eval, method=method, rtol=rtol, atol=atol)


# ----------------------------------------------------------------------------------------
# Seed 000's double pendulum
# ----------------------------------------------------------------------------------------


def double_pendulum_matrices(theta, omega, m1: float, m2: float, l1: float, l2: float, g: float = P.G_STANDARD):
    """Seed 000's double pendulum written M(q) q'' = C(q, q') + G(q) + Q (its sign convention).

    Two thin uniform bars (COM at mid-length, I = m l^2 / 12), hinged at the origin; theta_1,
    theta_2 (rad) are the *absolute* angles of the bars from the downward vertical,
    counter-clockwise positive; omega their rates. theta, omega: (n_frames, 2) or (2,).
    Returns M (.., 2, 2), C (.., 2), G (.., 2).

    Typo corrected: seed 000's code has ``G[0] = -m1 g l1/2 sin(theta1) - m2 g l2 sin(theta1)``;
    the second term is ``m2 g l1 sin(theta1)`` (the bar-2 weight acts at the end of bar 1, as
    the printed equations above the code say).
    """
    theta = np.asarray(theta, float)
    omega = np.asarray(omega, float)
    t1, t2 = theta[..., 0], theta[..., 1]
    w1, w2 = omega[..., 0], omega[..., 1]
    diff = t1 - t2
    k = m2 * l1 * l2 / 2
    M = np.stack(
        [np.stack([np.full_like(t1, m1 * l1**2 / 3 + m2 * l1**2), k * np.cos(diff)], -1),
         np.stack([k * np.cos(diff), np.full_like(t1, m2 * l2**2 / 3)], -1)],
        -2,
    )
    C = np.stack([-k * w2**2 * np.sin(diff), k * w1**2 * np.sin(diff)], -1)
    G = np.stack([-(m1 / 2 + m2) * g * l1 * np.sin(t1), -m2 * g * l2 / 2 * np.sin(t2)], -1)
    return M, C, G


def double_pendulum_accel(m1, m2, l1, l2, g: float = P.G_STANDARD, torques: Callable[[float], np.ndarray] | None = None) -> Accel:
    """theta'' = M^-1 (C + G + Q) for :func:`integrate` or :func:`euler` (seed 000).

    torques(t) -> (M1, M12) N.m: M1 at the shoulder hinge on bar 1, M12 of bar 1 on bar 2,
    so Q = (M1 - M12, M12). None means free swinging.
    """

    def accel(t, theta, omega):
        M, C, G = double_pendulum_matrices(theta, omega, m1, m2, l1, l2, g)
        rhs = C + G
        if torques is not None:
            M1, M12 = torques(t)
            rhs = rhs + np.array([M1 - M12, M12])
        return np.linalg.solve(M, rhs)

    return accel


def double_pendulum_energy(theta, omega, m1, m2, l1, l2, g: float = P.G_STANDARD) -> np.ndarray:
    """Total energy (J) of seed 000's double pendulum, zero potential at the hinge height."""
    theta = np.atleast_2d(np.asarray(theta, float))
    omega = np.atleast_2d(np.asarray(omega, float))
    M, _, _ = double_pendulum_matrices(theta, omega, m1, m2, l1, l2, g)
    kinetic = 0.5 * np.einsum("fi,fij,fj->f", omega, M, omega)
    y1 = -l1 / 2 * np.cos(theta[:, 0])
    y2 = -l1 * np.cos(theta[:, 0]) - l2 / 2 * np.cos(theta[:, 1])
    return kinetic + g * (m1 * y1 + m2 * y2)


def double_pendulum_to_planar(theta, omega) -> tuple[np.ndarray, np.ndarray]:
    """Seed 000's absolute angles from the downward vertical -> planar joint angles (seed 001).

    q_0 = theta_1 - pi/2 (from +X), q_1 = theta_2 - theta_1; same for the rates.
    """
    theta = np.asarray(theta, float)
    omega = np.asarray(omega, float)
    q = np.stack([theta[..., 0] - np.pi / 2, theta[..., 1] - theta[..., 0]], -1)
    qd = np.stack([omega[..., 0], omega[..., 1] - omega[..., 0]], -1)
    return q, qd
