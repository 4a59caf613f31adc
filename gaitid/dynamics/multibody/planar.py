"""Planar n-link open chains: tau = M(q) q'' + C(q, q') + G(q) + E(q) (seed 001, seed 002).

Conventions (seed 001):
- The chain moves in the lab X-Y plane; gravity is -g along Y (g > 0, m/s^2).
- ``q[:, i]`` is the *joint* angle alpha_i (rad): q_0 is the angle of link 0 from the
  +X axis (counter-clockwise positive), q_i (i > 0) the angle of link i relative to
  link i-1. The absolute (segmental) angle is theta_i = q_0 + ... + q_i. Hanging chains
  use theta near -pi/2, inverted chains theta near +pi/2; nothing else changes.
- Link i (0 = proximal, fixed to the ground at the origin by joint 0) has mass m_i (kg),
  length L_i (m), centre of mass at distance d_i (m) from its proximal joint along the
  link, and moment of inertia I_i (kg.m^2) about its centre of mass (Z axis).
- ``tau[:, i]`` (N.m) is the net moment of joint i exerted by link i-1 (or the ground)
  on link i, counter-clockwise positive (seed 001's T_i).
- The external force ``tip_force`` (N, lab X-Y) acts ON the last link at the distance
  ``tip_distance`` from its proximal joint (default: its length, the tip); an optional
  pure moment ``tip_moment`` (N.m, about Z) acts on the last link too.
- E is the joint torque needed to balance the external load: E = -J_p^T F - J_w^T M_z.

Every function is batched over frames: q, qd, qdd are (n_frames, n_links) (a single
(n_links,) configuration is accepted and the result squeezed back).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.errors import DataError, ModelError

G_STANDARD = 9.81  # m/s^2, the value the seeds use


@dataclass(frozen=True)
class PlanarChain:
    """Inertial and geometric parameters of a planar open chain, proximal link first.

    mass: (n,) kg. length: (n,) m. com: (n,) m, distance from the proximal joint to the
    centre of mass along the link. inertia: (n,) kg.m^2 about the centre of mass.
    """

    mass: np.ndarray
    length: np.ndarray
    com: np.ndarray
    inertia: np.ndarray

    def __post_init__(self):
        arrays = {}
        for name in ("mass", "length", "com", "inertia"):
            try:
                value = np.atleast_1d(np.asarray(getattr(self, name), dtype=float))
            except (TypeError, ValueError) as exc:
                raise ModelError(f"PlanarChain.{name} is not numeric: {exc}") from None
            if value.ndim != 1:
                raise ModelError(f"PlanarChain.{name} must be one value per link, got shape {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ModelError(f"PlanarChain.{name} has non-finite values: {value}")
            arrays[name] = value
        n = {a.shape[0] for a in arrays.values()}
        if len(n) != 1:
            shapes = {k: v.shape[0] for k, v in arrays.items()}
            raise ModelError(f"PlanarChain parameters have different numbers of links: {shapes}")
        if np.any(arrays["mass"] < 0) or np.any(arrays["inertia"] < 0) or np.any(arrays["length"] < 0):
            raise ModelError("PlanarChain mass, length and inertia must be non-negative")
        for name, value in arrays.items():
            value.setflags(write=False)
            object.__setattr__(self, name, value)

    @property
    def n_links(self) -> int:
        return self.mass.shape[0]

    @classmethod
    def uniform_rods(cls, mass, length) -> "PlanarChain":
        """Thin uniform rods: d = L/2, I = m L^2 / 12 (seed 000's double pendulum)."""
        mass = np.atleast_1d(np.asarray(mass, float))
        length = np.atleast_1d(np.asarray(length, float))
        return cls(mass, length, length / 2.0, mass * length**2 / 12.0)


@dataclass
class PlanarDynamics:
    """The terms of tau = M q'' + C + G + E, per frame (seed 001).

    M: (n_frames, n, n) kg.m^2. C, G, E, tau: (n_frames, n) N.m.
    ``inertial`` = M q'' (n_frames, n) N.m, so tau = inertial + C + G + E.
    """

    M: np.ndarray
    C: np.ndarray
    G: np.ndarray
    E: np.ndarray
    inertial: np.ndarray
    tau: np.ndarray


def as_frames(x, n: int, name: str) -> tuple[np.ndarray, bool]:
    """(n_frames, n) float array and whether the input was a single configuration."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{name} is not numeric: {exc}") from None
    single = a.ndim == 1
    a = np.atleast_2d(a)
    if a.ndim != 2 or a.shape[1] != n:
        raise DataError(f"{name} must have shape (n_frames, {n}) or ({n},), got {np.shape(x)}")
    return a, single


def absolute_angles(q: np.ndarray) -> np.ndarray:
    """Segmental angles theta_i = q_0 + ... + q_i (rad), from the +X axis; (n_frames, n)."""
    return np.cumsum(q, axis=-1)


def _cs(theta):
    return np.cos(theta), np.sin(theta)


def joint_positions(chain: PlanarChain, q) -> np.ndarray:
    """Lab X-Y positions (m) of joints 0..n-1 and the tip: (n_frames, n+1, 2)."""
    q, single = as_frames(q, chain.n_links, "q")
    c, s = _cs(absolute_angles(q))
    steps = np.stack([chain.length * c, chain.length * s], axis=-1)  # (f, n, 2)
    pts = np.concatenate([np.zeros_like(steps[:, :1]), np.cumsum(steps, axis=1)], axis=1)
    return pts[0] if single else pts


def com_positions(chain: PlanarChain, q) -> np.ndarray:
    """Lab X-Y positions (m) of the links' centres of mass: (n_frames, n, 2)."""
    q, single = as_frames(q, chain.n_links, "q")
    joints = joint_positions(chain, q)[:, :-1]
    c, s = _cs(absolute_angles(q))
    out = joints + np.stack([chain.com * c, chain.com * s], axis=-1)
    return out[0] if single else out


def point_jacobian(chain: PlanarChain, q: np.ndarray, link: int, distance) -> np.ndarray:
    """d p / d q for the point of ``link`` at ``distance`` (m) from its proximal joint.

    p = sum_{k<link} L_k u(theta_k) + distance * u(theta_link), u = (cos, sin); since
    d theta_k / d q_j = 1 for j <= k, column j is
    sum_{j<=k<link} L_k u'(theta_k) + distance * u'(theta_link) for j <= link, else 0,
    with u' = (-sin, cos). q: (n_frames, n). distance: scalar or (n_frames,).
    Returns (n_frames, 2, n).
    """
    n = chain.n_links
    c, s = _cs(absolute_angles(q))
    f = q.shape[0]
    arm = np.zeros((f, n))  # lever of each link's own angle for this point
    arm[:, :link] = chain.length[:link]
    arm[:, link] = distance
    du = np.stack([-arm * s, arm * c], axis=1)  # (f, 2, n): contribution of theta_k
    # column j sums the contributions of theta_k for k >= j (reverse cumulative sum)
    return np.cumsum(du[:, :, ::-1], axis=2)[:, :, ::-1]


def com_jacobians(chain: PlanarChain, q: np.ndarray) -> np.ndarray:
    """Jacobians of all the centres of mass at once, (n_frames, n_links, 2, n): entry i is
    :func:`point_jacobian` of link i at distance d_i."""
    n = chain.n_links
    c, s = _cs(absolute_angles(q))
    arm = np.tril(np.broadcast_to(chain.length, (n, n)), -1) + np.diag(chain.com)  # (link i, angle k)
    du = np.stack([-arm * s[:, None, :], arm * c[:, None, :]], axis=2)  # (f, i, 2, k)
    return np.cumsum(du[..., ::-1], axis=-1)[..., ::-1]


def mass_matrix_from_jacobians(chain: PlanarChain, J: np.ndarray) -> np.ndarray:
    """M(q) from the centre-of-mass Jacobians J (n_frames, n, 2, n) already computed."""
    n = chain.n_links
    Jw = np.tril(np.ones((n, n)))  # J_wi[j] = 1 for j <= i
    return np.einsum("i,fiak,fial->fkl", chain.mass, J, J) + np.einsum("i,ik,il->kl", chain.inertia, Jw, Jw)


def mass_matrix(chain: PlanarChain, q) -> np.ndarray:
    """M(q) = sum_i m_i J_vi^T J_vi + I_i J_wi^T J_wi (kg.m^2), (n_frames, n, n).

    J_vi: Jacobian of the centre of mass of link i; J_wi[j] = 1 for j <= i (planar).
    """
    q, single = as_frames(q, chain.n_links, "q")
    M = mass_matrix_from_jacobians(chain, com_jacobians(chain, q))
    return M[0] if single else M


def velocity_terms_from_jacobians(chain: PlanarChain, q: np.ndarray, qd: np.ndarray, J: np.ndarray) -> np.ndarray:
    """C(q, q') from the centre-of-mass Jacobians J already computed (see :func:`velocity_terms`)."""
    c, s = _cs(absolute_angles(q))
    w2 = absolute_angles(qd) ** 2
    n = chain.n_links
    arm = np.tril(np.broadcast_to(chain.length, (n, n)), -1) + np.diag(chain.com)  # (i, k)
    # Jdot_vi q' = -sum_k arm[i, k] w_k^2 u(theta_k)
    acc = -np.stack([np.einsum("ik,fk->fi", arm, w2 * c), np.einsum("ik,fk->fi", arm, w2 * s)], axis=2)  # (f, i, 2)
    return np.einsum("i,fiak,fia->fk", chain.mass, J, acc)


def velocity_terms(chain: PlanarChain, q, qd) -> np.ndarray:
    """C(q, q') (N.m), centripetal and Coriolis torques, (n_frames, n).

    From the velocity-product part of the centre-of-mass accelerations,
    a_i = J_vi q'' + Jdot_vi q', with Jdot_vi q' = -(sum_{k<i} L_k w_k^2 u(theta_k)
    + d_i w_i^2 u(theta_i)) (w_k = theta_k' the absolute angular velocities):
    C = sum_i m_i J_vi^T (Jdot_vi q'). Planar rotation adds no gyroscopic term.
    """
    q, single = as_frames(q, chain.n_links, "q")
    qd, _ = as_frames(qd, chain.n_links, "qd")
    if qd.shape[0] != q.shape[0]:
        raise DataError(f"q and qd have different numbers of frames: {q.shape[0]} and {qd.shape[0]}")
    C = velocity_terms_from_jacobians(chain, q, qd, com_jacobians(chain, q))
    return C[0] if single else C


def gravity_terms(chain: PlanarChain, q, g: float = G_STANDARD) -> np.ndarray:
    """G(q) = -sum_i J_vi^T m_i (0, -g) = g sum_i m_i d y_i / d q (N.m), (n_frames, n)."""
    q, single = as_frames(q, chain.n_links, "q")
    G = g * np.einsum("i,fik->fk", chain.mass, com_jacobians(chain, q)[:, :, 1, :])
    return G[0] if single else G


def external_terms(chain: PlanarChain, q, tip_force=None, tip_distance=None, tip_moment=None) -> np.ndarray:
    """E(q) = -J_p^T F - J_w^T M (N.m), (n_frames, n): the torques balancing the external load.

    tip_force: (2,) or (n_frames, 2) N in the lab X-Y frame, acting on the last link at
    ``tip_distance`` m from its proximal joint (default its length). tip_moment: scalar or
    (n_frames,) N.m about Z, acting on the last link. None means zero.
    """
    q, single = as_frames(q, chain.n_links, "q")
    n, f = chain.n_links, q.shape[0]
    E = np.zeros_like(q)
    if tip_force is not None:
        F = np.broadcast_to(np.asarray(tip_force, float), (f, 2))
        r = chain.length[-1] if tip_distance is None else np.broadcast_to(np.asarray(tip_distance, float), (f,))
        J = point_jacobian(chain, q, n - 1, r)
        E -= np.einsum("fki,fk->fi", J, F)
    if tip_moment is not None:
        E -= np.broadcast_to(np.asarray(tip_moment, float), (f,))[:, None]
    return E[0] if single else E


def inverse_dynamics(
    chain: PlanarChain, q, qd, qdd, tip_force=None, g: float = G_STANDARD, tip_distance=None, tip_moment=None
) -> PlanarDynamics:
    """tau = M(q) q'' + C(q, q') + G(q) + E(q), each term returned (seed 001).

    q, qd, qdd: (n_frames, n) rad, rad/s, rad/s^2 (joint space). tip_force: (2,) or
    (n_frames, 2) N on the last link (lab X-Y). g: m/s^2 (0 for a horizontal plane).
    """
    n = chain.n_links
    q2, single = as_frames(q, n, "q")
    qd2, _ = as_frames(qd, n, "qd")
    qdd2, _ = as_frames(qdd, n, "qdd")
    if not (q2.shape[0] == qd2.shape[0] == qdd2.shape[0]):
        raise DataError(f"q, qd, qdd have different numbers of frames: {q2.shape[0]}, {qd2.shape[0]}, {qdd2.shape[0]}")
    M = mass_matrix(chain, q2)
    C = velocity_terms(chain, q2, qd2)
    G = gravity_terms(chain, q2, g)
    E = external_terms(chain, q2, tip_force, tip_distance, tip_moment)
    inertial = np.einsum("fij,fj->fi", M, qdd2)
    out = PlanarDynamics(M, C, G, E, inertial, inertial + C + G + E)
    if single:
        out = PlanarDynamics(*(a[0] for a in (out.M, out.C, out.G, out.E, out.inertial, out.tau)))
    return out


def energy(chain: PlanarChain, q, qd, g: float = G_STANDARD) -> np.ndarray:
    """Total mechanical energy (J): 1/2 q'^T M q' + g sum_i m_i y_i, (n_frames,)."""
    q2, single = as_frames(q, chain.n_links, "q")
    qd2, _ = as_frames(qd, chain.n_links, "qd")
    M = mass_matrix(chain, q2)
    kinetic = 0.5 * np.einsum("fi,fij,fj->f", qd2, M, qd2)
    potential = g * np.einsum("i,fi->f", chain.mass, com_positions(chain, q2)[:, :, 1])
    e = kinetic + potential
    return e[0] if single else e


def inverse_kinematics_2link(tip_xy, length1: float, length2: float) -> np.ndarray:
    """Joint angles (n_frames, 2) rad of a two-link chain whose tip is at ``tip_xy`` (m).

    Elbow-up branch with q_1 >= 0, q_0 in [-pi, pi) (the forearm flexes counter-clockwise), as seed 001's
    ``invkin``. Points outside the workspace are coerced to its boundary (the cosine of
    q_1 is clipped to [-1, 1]), as seed 001 does.
    """
    p = np.atleast_2d(np.asarray(tip_xy, float))
    x, y = p[:, 0], p[:, 1]
    c2 = np.clip((x**2 + y**2 - length1**2 - length2**2) / (2 * length1 * length2), -1.0, 1.0)
    q2 = np.arccos(c2)
    q1 = np.arctan2(y, x) - np.arctan2(length2 * np.sin(q2), length1 + length2 * c2)
    q1 = np.mod(q1 + np.pi, 2 * np.pi) - np.pi  # wrapped to [-pi, pi)
    return np.stack([q1, q2], axis=1)


# ----------------------------------------------------------------------------------------
# The printed closed forms (corrected), kept as separate oracles.
# ----------------------------------------------------------------------------------------


def one_link_closed_form(m, L, d, I, q, qd, qdd, tip_force=(0.0, 0.0), g: float = G_STANDARD) -> PlanarDynamics:
    """One link, seed 001: T = I_o a'' + m g d cos a + L F_ex sin a - L F_ey cos a.

    I_o = I + m d^2 (parallel axes). Arrays (n_frames,) or scalars; returns (n_frames, 1) terms.
    """
    q, qd, qdd = (np.atleast_1d(np.asarray(x, float)) for x in (q, qd, qdd))
    F = np.broadcast_to(np.asarray(tip_force, float), q.shape + (2,))
    Io = I + m * d**2
    M = np.full(q.shape + (1, 1), Io)
    C = np.zeros(q.shape + (1,))
    G = (m * g * d * np.cos(q))[:, None]
    E = (L * F[:, 0] * np.sin(q) - L * F[:, 1] * np.cos(q))[:, None]
    inertial = (Io * qdd)[:, None]
    return PlanarDynamics(M, C, G, E, inertial, inertial + C + G + E)


def two_link_closed_form(chain: PlanarChain, q, qd, qdd, tip_force=(0.0, 0.0), g: float = G_STANDARD) -> PlanarDynamics:
    """Two links, seed 001's printed M, C, G, E (In [22]), tip force at the end of link 2.

    The printed matrices are correct. The one typo found in seed 001 is in its printed
    Newton-Euler moment equation for link 2 (before In [18]): the term
    ``-(L2-d2) F_ey cos(a1+a2)`` must be ``+(L2-d2) F_ey cos(a1+a2)`` (the sympy code
    that follows uses the right sign).
    """
    if chain.n_links != 2:
        raise ModelError(f"two_link_closed_form needs a 2-link chain, got {chain.n_links} links")
    q, single = as_frames(q, 2, "q")
    qd, _ = as_frames(qd, 2, "qd")
    qdd, _ = as_frames(qdd, 2, "qdd")
    m1, m2 = chain.mass
    L1, L2 = chain.length
    d1, d2 = chain.com
    I1, I2 = chain.inertia
    q1, q2 = q[:, 0], q[:, 1]
    q1d, q2d = qd[:, 0], qd[:, 1]
    F = np.broadcast_to(np.asarray(tip_force, float), (q.shape[0], 2))
    Fex, Fey = F[:, 0], F[:, 1]
    c2, s2 = np.cos(q2), np.sin(q2)
    c1, s1, c12, s12 = np.cos(q1), np.sin(q1), np.cos(q1 + q2), np.sin(q1 + q2)
    M11 = I1 + I2 + L1**2 * m2 + 2 * L1 * d2 * m2 * c2 + d1**2 * m1 + d2**2 * m2
    M12 = I2 + L1 * d2 * m2 * c2 + d2**2 * m2
    M22 = np.full_like(q1, I2 + d2**2 * m2)
    M = np.stack([np.stack([M11, M12], -1), np.stack([M12, M22], -1)], -2)
    C = np.stack([-L1 * d2 * m2 * (2 * q1d + q2d) * s2 * q2d, L1 * d2 * m2 * s2 * q1d**2], -1)
    G = np.stack([g * (L1 * m2 * c1 + d1 * m1 * c1 + d2 * m2 * c12), d2 * g * m2 * c12], -1)
    E = np.stack(
        [Fex * (L1 * s1 + L2 * s12) - Fey * (L1 * c1 + L2 * c12), L2 * (Fex * s12 - Fey * c12)],
        -1,
    )
    inertial = np.einsum("fij,fj->fi", M, qdd)
    out = PlanarDynamics(M, C, G, E, inertial, inertial + C + G + E)
    if single:
        out = PlanarDynamics(*(a[0] for a in (out.M, out.C, out.G, out.E, out.inertial, out.tau)))
    return out


def three_link_closed_form(
    chain: PlanarChain, q, qd, qdd, spring_force=0.0, spring_distance: float = 0.0, g: float = G_STANDARD
) -> PlanarDynamics:
    """Three links (shoulder, elbow, wrist), seed 002 eqs 24-44 with its typos corrected.

    ``spring_force`` F_S (N, scalar or (n_frames,)) pulls the hand along -X (seed 002 eq 15:
    m3 x3'' = F_x3 - F_S) at ``spring_distance`` d_S (m) beyond the hand's centre of mass
    (eq 17 uses d_S as the lever from the centre of mass, so the force acts at d3 + d_S from
    the wrist, as eqs 42-44 show; the text's "from the wrist joint" contradicts its equations).

    Typo corrected in eqs 24-44: eq 31, M_22 = m2 d2^2 + I2 + m3 (l2^2 + d3^2 + **2** l2 d3
    cos a3) + I3 (printed without the factor 2). Eqs 27-30, 32-44 are correct as printed.
    Typos outside 24-44 (not used here): eq 10 (signs of the d2 terms in the a1'^2 bracket and
    of the last term), eq 14 (``d3 cos`` must be ``d3 sin`` in the 2 a1' a2' bracket), eq 23
    (the last term is F_x1 d1 sin a1, printed F_y1), eqs 18-19 (F_r2, F_v2 stand for F_x2, F_y2).
    """
    if chain.n_links != 3:
        raise ModelError(f"three_link_closed_form needs a 3-link chain, got {chain.n_links} links")
    q, single = as_frames(q, 3, "q")
    qd, _ = as_frames(qd, 3, "qd")
    qdd, _ = as_frames(qdd, 3, "qdd")
    m1, m2, m3 = chain.mass
    l1, l2, _l3 = chain.length
    d1, d2, d3 = chain.com
    I1, I2, I3 = chain.inertia
    a1, a2, a3 = q.T
    a1d, a2d, a3d = qd.T
    FS = np.broadcast_to(np.asarray(spring_force, float), a1.shape)
    dS = spring_distance
    c1, c12, c123 = np.cos(a1), np.cos(a1 + a2), np.cos(a1 + a2 + a3)
    s1, s12, s123 = np.sin(a1), np.sin(a1 + a2), np.sin(a1 + a2 + a3)
    c2, c3, c23 = np.cos(a2), np.cos(a3), np.cos(a2 + a3)
    s2, s3, s23 = np.sin(a2), np.sin(a3), np.sin(a2 + a3)
    M11 = (
        m1 * d1**2 + I1 + m2 * (l1**2 + d2**2 + 2 * l1 * d2 * c2) + I2
        + m3 * (l1**2 + l2**2 + d3**2 + 2 * l1 * l2 * c2 + 2 * l1 * d3 * c23 + 2 * l2 * d3 * c3) + I3
    )  # eq 27
    M12 = m2 * (d2**2 + l1 * d2 * c2) + I2 + m3 * (l2**2 + d3**2 + l1 * l2 * c2 + l1 * d3 * c23 + 2 * l2 * d3 * c3) + I3  # 28
    M13 = m3 * (d3**2 + l1 * d3 * c23 + l2 * d3 * c3) + I3  # eq 29
    M21 = m2 * (d2**2 + l1 * d2 * c2) + I2 + m3 * (l2**2 + d3**2 + l1 * l2 * c2 + 2 * l2 * d3 * c3 + l1 * d3 * c23) + I3  # 30
    M22 = m2 * d2**2 + I2 + m3 * (l2**2 + d3**2 + 2 * l2 * d3 * c3) + I3  # eq 31, corrected (factor 2)
    M23 = m3 * (d3**2 + l2 * d3 * c3) + I3  # eq 32
    M31 = m3 * (d3**2 + l1 * d3 * c23 + l2 * d3 * c3) + I3  # eq 33
    M32 = m3 * (d3**2 + l2 * d3 * c3) + I3  # eq 34
    M33 = np.full_like(a1, m3 * d3**2 + I3)  # eq 35
    M = np.stack(
        [np.stack([M11, M12, M13], -1), np.stack([M21, M22, M23], -1), np.stack([M31, M32, M33], -1)], -2
    )
    v1 = -((m2 * l1 * d2 + m3 * l1 * l2) * s2 + m3 * l1 * d3 * s23) * (2 * a1d * a2d + a2d**2) - (
        m3 * l1 * d3 * s23 + m3 * l2 * d3 * s3
    ) * (2 * a1d * a3d + 2 * a2d * a3d + a3d**2)  # eq 36
    v2 = ((m3 * l1 * l2 + m2 * d2 * l1) * s2 + m3 * d3 * l1 * s23) * a1d**2 - m3 * d3 * l2 * s3 * (
        2 * a1d * a3d + 2 * a2d * a3d + a3d**2
    )  # eq 37
    v3 = (m3 * l1 * d3 * s23 + m3 * l2 * d3 * s3) * a1d**2 + m3 * l2 * d3 * s3 * (2 * a1d * a2d + a2d**2)  # eq 38
    G1 = m1 * g * d1 * c1 + m2 * g * (l1 * c1 + d2 * c12) + m3 * g * (l1 * c1 + l2 * c12 + d3 * c123)  # eq 39
    G2 = m2 * g * d2 * c12 + m3 * g * (l2 * c12 + d3 * c123)  # eq 40
    G3 = m3 * g * d3 * c123  # eq 41
    T1 = -FS * l1 * s1 - FS * l2 * s12 - FS * (d3 + dS) * s123  # eq 42
    T2 = -FS * l2 * s12 - FS * (d3 + dS) * s123  # eq 43
    T3 = -FS * (d3 + dS) * s123  # eq 44
    C = np.stack([v1, v2, v3], -1)
    G = np.stack([G1, G2, G3], -1)
    E = np.stack([T1, T2, T3], -1)
    inertial = np.einsum("fij,fj->fi", M, qdd)
    out = PlanarDynamics(M, C, G, E, inertial, inertial + C + G + E)
    if single:
        out = PlanarDynamics(*(a[0] for a in (out.M, out.C, out.G, out.E, out.inertial, out.tau)))
    return out
