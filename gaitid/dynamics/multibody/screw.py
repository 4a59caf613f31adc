"""Open chains in twist-wrench form: recursive Newton-Euler and closed-form dynamics (seed 003).

Seed 003 is chapter 9 of Lynch & Park, *Modern Robotics* (preprint). Names and equation
numbers follow it; the Modern Robotics (MR) library name is given in each docstring.

Conventions (MR):
- A twist V = (omega, v) (6,), angular part first; a wrench F = (m, f) (6,), moment first.
- A homogeneous transform T (4, 4) maps coordinates in its child frame to its parent frame:
  ``T_ab`` is frame {b} seen from {a}; its rotation block maps {b} to {a} coordinates (the
  project's "R maps segment to lab" convention, with {a} = lab, {b} = segment).
- A chain of n joints: link frame {i} (i = 1..n) sits at link i's centre of mass; {0} is the
  fixed base ("lab"); {n+1} is the end-effector (tip) frame fixed to link n.
- Joints are 1-DOF, revolute (unit omega) or prismatic (omega = 0, unit v).

Everything is batched over frames (leading axis ``n_frames``): theta etc. are
(n_frames, n); a single configuration (n,) is accepted and the result squeezed back.
The loops run over joints, never over frames.

Length: one text, seed 003's chapter, in one place: the so(3)/se(3) operators, the chain, the
RNEA and the closed-form M, c, g they are checked against refer to each other by equation number.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from gaitid.core.errors import DataError, ModelError
from gaitid.dynamics.multibody.planar import as_frames
from gaitid.dynamics.skew import skew

GRAVITY_Z = np.array([0.0, 0.0, -9.81])  # m/s^2, lab Z up


# ----------------------------------------------------------------------------------------
# so(3) / se(3) machinery (seed 003 ch. 3, MR library); MR ``VecToso3`` [w] is seed 000's
# skew operator S(w), :func:`gaitid.dynamics.skew.skew`
# ----------------------------------------------------------------------------------------


def so3_to_vec(W: np.ndarray) -> np.ndarray:
    """(..., 3, 3) skew-symmetric -> (..., 3) vector (MR ``so3ToVec``)."""
    W = np.asarray(W, float)
    return np.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)


def vec_to_se3(V: np.ndarray) -> np.ndarray:
    """[V]: twist (..., 6) -> (..., 4, 4) se(3) matrix [[w], v; 0, 0] (MR ``VecTose3``)."""
    V = np.asarray(V, float)
    out = np.zeros(V.shape[:-1] + (4, 4))
    out[..., :3, :3] = skew(V[..., :3])
    out[..., :3, 3] = V[..., 3:]
    return out


def se3_to_vec(X: np.ndarray) -> np.ndarray:
    """(..., 4, 4) se(3) matrix -> twist (..., 6) (MR ``se3ToVec``)."""
    X = np.asarray(X, float)
    return np.concatenate([so3_to_vec(X[..., :3, :3]), X[..., :3, 3]], -1)


def trans_inv(T: np.ndarray) -> np.ndarray:
    """Inverse of homogeneous transforms (..., 4, 4): [R^T, -R^T p; 0, 1] (MR ``TransInv``)."""
    T = np.asarray(T, float)
    Rt = np.swapaxes(T[..., :3, :3], -1, -2)
    out = np.zeros_like(T)
    out[..., :3, :3] = Rt
    out[..., :3, 3] = -np.einsum("...ij,...j->...i", Rt, T[..., :3, 3])
    out[..., 3, 3] = 1.0
    return out


def adjoint(T: np.ndarray) -> np.ndarray:
    """[Ad_T] (..., 6, 6) = [[R, 0], [[p] R, R]]: V_a = [Ad_Tab] V_b (MR ``Adjoint``).

    Wrenches change frame with the transpose: F_b = [Ad_Tab]^T F_a.
    """
    T = np.asarray(T, float)
    R, p = T[..., :3, :3], T[..., :3, 3]
    out = np.zeros(T.shape[:-2] + (6, 6))
    out[..., :3, :3] = R
    out[..., 3:, 3:] = R
    out[..., 3:, :3] = skew(p) @ R
    return out


def ad(V: np.ndarray) -> np.ndarray:
    """[ad_V] (..., 6, 6) = [[[w], 0], [[v], [w]]], the Lie bracket [V, .] (seed 003 eq 9.29, MR ``ad``)."""
    V = np.asarray(V, float)
    W = skew(V[..., :3])
    out = np.zeros(V.shape[:-1] + (6, 6))
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = skew(V[..., 3:])
    return out


def matrix_exp6(X: np.ndarray) -> np.ndarray:
    """exp of se(3) matrices (..., 4, 4) -> SE(3) (..., 4, 4) (MR ``MatrixExp6``).

    With X = [S] theta, omega theta = w: if |w| ~ 0, exp = [I, v theta; 0, 1]; otherwise
    R = I + sin(t) [u] + (1 - cos t) [u]^2 (u = w / t, t = |w|) and
    p = (I t + (1 - cos t) [u] + (t - sin t) [u]^2) (v theta / t).
    """
    X = np.asarray(X, float)
    w = so3_to_vec(X[..., :3, :3])
    vt = X[..., :3, 3]
    t = np.linalg.norm(w, axis=-1)
    small = t < 1e-12
    ts = np.where(small, 1.0, t)
    U = skew(w / ts[..., None])
    U2 = U @ U
    eye = np.broadcast_to(np.eye(3), U.shape)
    st, ct = np.sin(ts)[..., None, None], np.cos(ts)[..., None, None]
    R = eye + st * U + (1 - ct) * U2
    G = eye * ts[..., None, None] + (1 - ct) * U + (ts[..., None, None] - st) * U2
    p = np.einsum("...ij,...j->...i", G, vt / ts[..., None])
    R = np.where(small[..., None, None], eye, R)
    p = np.where(small[..., None], vt, p)
    out = np.zeros(X.shape)
    out[..., :3, :3] = R
    out[..., :3, 3] = p
    out[..., 3, 3] = 1.0
    return out




def _per_frame(x, f: int, width: int, name: str) -> np.ndarray:
    a = np.asarray(x, dtype=float)
    try:
        return np.broadcast_to(a, (f, width))
    except ValueError:
        raise DataError(f"{name} must have shape ({width},) or (n_frames={f}, {width}), got {a.shape}") from None


def fkin_space(M: np.ndarray, S_list: np.ndarray, theta) -> np.ndarray:
    """T = e^[S1]t1 ... e^[Sn]tn M (seed 003 eq 9.36, MR ``FKinSpace``).

    M: (4, 4) home configuration; S_list: (n, 6) space-frame screw axes; theta: (n_frames, n).
    Returns (n_frames, 4, 4) (or (4, 4) for a single configuration).
    """
    S_list = np.asarray(S_list, float)
    theta, single = as_frames(theta, S_list.shape[0], "theta")
    T = np.broadcast_to(np.eye(4), (theta.shape[0], 4, 4))
    for i in range(S_list.shape[0]):
        T = T @ matrix_exp6(vec_to_se3(S_list[i] * theta[:, i : i + 1]))
    T = T @ np.asarray(M, float)
    return T[0] if single else T


def fkin_body(M: np.ndarray, B_list: np.ndarray, theta) -> np.ndarray:
    """T = M e^[B1]t1 ... e^[Bn]tn (MR ``FKinBody``); B_list (n, 6) body-frame screw axes."""
    B_list = np.asarray(B_list, float)
    theta, single = as_frames(theta, B_list.shape[0], "theta")
    T = np.broadcast_to(np.asarray(M, float), (theta.shape[0], 4, 4))
    for i in range(B_list.shape[0]):
        T = T @ matrix_exp6(vec_to_se3(B_list[i] * theta[:, i : i + 1]))
    return T[0] if single else T


def jacobian_space(S_list: np.ndarray, theta) -> np.ndarray:
    """Space Jacobian (n_frames, 6, n): column i = Ad(e^[S1]t1...e^[S_{i-1}]t_{i-1}) S_i (MR ``JacobianSpace``)."""
    S_list = np.asarray(S_list, float)
    theta, single = as_frames(theta, S_list.shape[0], "theta")
    f, n = theta.shape
    J = np.zeros((f, 6, n))
    T = np.broadcast_to(np.eye(4), (f, 4, 4))
    for i in range(n):
        J[:, :, i] = adjoint(T) @ S_list[i]
        T = T @ matrix_exp6(vec_to_se3(S_list[i] * theta[:, i : i + 1]))
    return J[0] if single else J


def jacobian_body(B_list: np.ndarray, theta) -> np.ndarray:
    """Body Jacobian (n_frames, 6, n): column i = Ad(e^-[Bn]tn...e^-[B_{i+1}]t_{i+1}) B_i (MR ``JacobianBody``)."""
    B_list = np.asarray(B_list, float)
    theta, single = as_frames(theta, B_list.shape[0], "theta")
    f, n = theta.shape
    J = np.zeros((f, 6, n))
    T = np.broadcast_to(np.eye(4), (f, 4, 4))
    for i in range(n - 1, -1, -1):
        J[:, :, i] = adjoint(T) @ B_list[i]
        T = T @ matrix_exp6(vec_to_se3(-B_list[i] * theta[:, i : i + 1]))
    return J[0] if single else J


# ----------------------------------------------------------------------------------------
# The chain
# ----------------------------------------------------------------------------------------


def spatial_inertia(mass: float, inertia_com) -> np.ndarray:
    """G = [[I_b, 0], [0, m I]] (6, 6), I_b (3, 3) kg.m^2 about the COM in the link frame (eq 9.52)."""
    G = np.zeros((6, 6))
    G[:3, :3] = np.asarray(inertia_com, float)
    G[3:, 3:] = mass * np.eye(3)
    return G


@dataclass(frozen=True)
class ScrewChain:
    """An open chain in MR form (seed 003 section 9.3, MR ``Mlist``, ``Glist``, ``Slist``).

    M_list: (n+1, 4, 4), M_list[i] = M_{i,i+1}, the pose of link frame {i+1} in {i} at
    theta = 0 ({0} = base, {n+1} = tip frame); link frames sit at the centres of mass.
    G_list: (n, 6, 6) spatial inertias (eq 9.52) in the link frames.
    S_list: (n, 6) joint screw axes in the base frame at theta = 0 (rows, not MR's columns).
    """

    M_list: np.ndarray
    G_list: np.ndarray
    S_list: np.ndarray

    def __post_init__(self):
        M = np.asarray(self.M_list, float)
        G = np.asarray(self.G_list, float)
        S = np.asarray(self.S_list, float)
        n = S.shape[0] if S.ndim == 2 else -1
        if S.ndim != 2 or S.shape[1] != 6:
            raise ModelError(f"ScrewChain.S_list must be (n, 6), got {S.shape}")
        if M.shape != (n + 1, 4, 4):
            raise ModelError(f"ScrewChain.M_list must be (n+1={n + 1}, 4, 4), got {M.shape}")
        if G.shape != (n, 6, 6):
            raise ModelError(f"ScrewChain.G_list must be (n={n}, 6, 6), got {G.shape}")
        for name, a in (("M_list", M), ("G_list", G), ("S_list", S)):
            if not np.all(np.isfinite(a)):
                raise ModelError(f"ScrewChain.{name} has non-finite values")
        if not np.allclose(np.swapaxes(G, 1, 2), G):
            raise ModelError("ScrewChain.G_list spatial inertias must be symmetric")
        for i, s in enumerate(S):
            nw, nv = np.linalg.norm(s[:3]), np.linalg.norm(s[3:])
            if not (abs(nw - 1) < 1e-9 or (nw < 1e-12 and abs(nv - 1) < 1e-9)):
                raise ModelError(f"ScrewChain joint {i}: screw axis must have |omega| = 1 (revolute) or omega = 0, |v| = 1 (prismatic), got {s}")
        Mi = np.eye(4)
        A = np.zeros_like(S)
        for i in range(n):
            Mi = Mi @ M[i]
            A[i] = adjoint(trans_inv(Mi)) @ S[i]  # eq 9.51: A_i = Ad_{M_i^-1}(S_i)
        for name, a in (("M_list", M), ("G_list", G), ("S_list", S), ("A_list", A)):
            a.setflags(write=False)
            object.__setattr__(self, name, a)

    @property
    def n_joints(self) -> int:
        return self.S_list.shape[0]


def planar_screw_chain(mass, length, com, inertia) -> ScrewChain:
    """A planar chain (gaitid.dynamics.multibody.planar conventions) as a ScrewChain.

    Joints about the lab Z axis; at theta = 0 the links lie along +X from the origin; link
    frame {i} at the COM, axes parallel to the lab's at theta = 0 and rotating with link i;
    tip frame {n+1} at the end of the last link. The planar joint angles q equal theta.
    Link inertia about X and Y is set to the Z value (it does not affect planar motion).
    Gravity for the planar convention is g = (0, -9.81, 0).
    """
    mass, length, com, inertia = (np.atleast_1d(np.asarray(x, float)) for x in (mass, length, com, inertia))
    n = mass.shape[0]
    starts = np.concatenate([[0.0], np.cumsum(length)[:-1]])
    coms = starts + com
    points = np.concatenate([coms, [starts[-1] + length[-1]]])
    M_list = np.zeros((n + 1, 4, 4))
    prev = 0.0
    for i, x in enumerate(points):
        M_list[i] = np.eye(4)
        M_list[i, 0, 3] = x - prev
        prev = x
    G_list = np.stack([spatial_inertia(m, np.eye(3) * I) for m, I in zip(mass, inertia)])
    S_list = np.zeros((n, 6))
    S_list[:, 2] = 1.0
    S_list[:, 4] = -starts  # v = -w x q, q = (start, 0, 0)
    return ScrewChain(M_list, G_list, S_list)


def sample_chain(n: int, rng=None, prismatic=()) -> ScrewChain:
    """A random spatial chain for tests and benchmarks (like pinocchio's sample models).

    n joints with random unit axes (``prismatic``: indices of prismatic joints), link frames
    with random orientations within 0.3 m of each other, masses 0.5-5 kg, random inertias
    (positive definite, not always physically realisable: fine for the mathematics).
    rng: a numpy Generator or a seed.
    """
    rng = np.random.default_rng(rng)
    M_list = np.zeros((n + 1, 4, 4))
    S_list = np.zeros((n, 6))
    G_list = np.zeros((n, 6, 6))
    T = np.eye(4)
    for i in range(n + 1):
        M = np.eye(4)
        M[:3, :3] = Rotation.random(random_state=rng).as_matrix()
        M[:3, 3] = rng.uniform(-0.3, 0.3, 3)
        M_list[i] = M
        if i == n:
            break
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        joint_point = T[:3, 3] + rng.uniform(-0.1, 0.1, 3)  # somewhere near link i-1
        if i in prismatic:
            S_list[i] = np.concatenate([np.zeros(3), axis])
        else:
            S_list[i] = np.concatenate([axis, -np.cross(axis, joint_point)])
        T = T @ M
        Rb = Rotation.random(random_state=rng).as_matrix()
        inertia = Rb @ np.diag(rng.uniform(0.01, 0.2, 3)) @ Rb.T
        G_list[i] = spatial_inertia(rng.uniform(0.5, 5.0), inertia)
    return ScrewChain(M_list, G_list, S_list)


@dataclass
class RneaResult:
    """Output of :func:`rnea` (seed 003 eqs 9.53-9.57), per frame.

    tau: (n_frames, n) joint torques (N.m) or forces (N): tau_i = F_i . A_i (eq 9.57).
    wrench: (n_frames, n, 6), ``wrench[:, i]`` (0-based; the seed's F_{i+1}) = (m, f): the
      wrench transmitted through joint i FROM link i-1 (the base for i = 0) TO link i,
      expressed in link frame {i} (axes of link i,
      origin at its centre of mass), moment m_i (N.m) taken ABOUT THE CENTRE OF MASS of link
      i, force f_i (N). It is the true joint load: gravity enters through the base
      acceleration but F_i balances the real gravity on the links. To get the force and
      moment at a joint centre in the lab, use :func:`wrench_in_base`.
    twist: (n_frames, n, 6) V_i = (omega_i, v_i), link i's angular velocity and its COM's
      linear velocity, in {i} coordinates.
    twist_dot: (n_frames, n, 6) dV_i, time derivative of V_i's coordinates MINUS gravity:
      dV_i = d/dt V_i - (0, R_0i^T g) (the base is given acceleration -g, seed 003 9.3).
    T_0i: (n_frames, n, 4, 4) poses of the link frames in the base frame.
    T_0tip: (n_frames, 4, 4) pose of the tip frame {n+1} in the base frame.
    """

    tau: np.ndarray
    wrench: np.ndarray
    twist: np.ndarray
    twist_dot: np.ndarray
    T_0i: np.ndarray
    T_0tip: np.ndarray


def _relative_transforms(chain: ScrewChain, theta: np.ndarray) -> np.ndarray:
    """T_{i-1,i} = M_{i-1,i} e^[A_i] theta_i (eq 9.53), (n, n_frames, 4, 4)."""
    return np.stack(
        [chain.M_list[i] @ matrix_exp6(vec_to_se3(chain.A_list[i] * theta[:, i : i + 1])) for i in range(chain.n_joints)]
    )


def rnea(
    chain: ScrewChain,
    theta,
    dtheta,
    ddtheta,
    g=GRAVITY_Z,
    F_tip=None,
    base_twist=None,
    base_twist_dot=None,
) -> RneaResult:
    """Recursive Newton-Euler inverse dynamics, seed 003 eqs 9.53-9.57 (MR ``InverseDynamics``).

    theta, dtheta, ddtheta: (n_frames, n) joint positions (rad or m), velocities, accelerations.
    g: (3,) or (n_frames, 3) gravity (m/s^2) in base coordinates (default lab Z up).
    F_tip: (6,) or (n_frames, 6) wrench (moment about the tip-frame origin first) that the
      tip EXERTS ON THE ENVIRONMENT, in tip-frame {n+1} coordinates (MR convention; a load
      applied TO the chain, such as a ground reaction, enters with a minus sign).
    base_twist, base_twist_dot: (6,) or (n_frames, 6), body twist V_0 of a moving base (e.g.
      a pelvis frame) in base coordinates, and the time derivative of those coordinates
      (without gravity); default: a fixed base. With a moving base, give g in base
      coordinates per frame (R_lab_base^T g_lab) and read T_0i as poses relative to the base
      (lab pose = T_lab_base @ T_0i). Tested against a floating base made of six joints.

    Forward: V_i = Ad_{T_i,i-1}(V_{i-1}) + A_i theta_i' (9.54);
      dV_i = Ad_{T_i,i-1}(dV_{i-1}) + [V_i, A_i] theta_i' + A_i theta_i'' (9.55), dV_0 = (0, -g).
    Backward: F_i = Ad^T_{T_i+1,i}(F_{i+1}) + G_i dV_i - ad^T_{V_i}(G_i V_i) (9.56), F_{n+1} = F_tip;
      tau_i = F_i^T A_i (9.57).
    """
    n = chain.n_joints
    theta, single = as_frames(theta, n, "theta")
    f = theta.shape[0]
    dtheta, _ = as_frames(dtheta, n, "dtheta")
    ddtheta, _ = as_frames(ddtheta, n, "ddtheta")
    if not (dtheta.shape[0] == ddtheta.shape[0] == f):
        raise DataError(f"theta, dtheta, ddtheta have different numbers of frames: {f}, {dtheta.shape[0]}, {ddtheta.shape[0]}")
    g = _per_frame(g, f, 3, "g")
    F_next = np.zeros((f, 6)) if F_tip is None else np.array(_per_frame(F_tip, f, 6, "F_tip"))
    V = np.zeros((f, 6)) if base_twist is None else np.array(_per_frame(base_twist, f, 6, "base_twist"))
    dV = np.zeros((f, 6)) if base_twist_dot is None else np.array(_per_frame(base_twist_dot, f, 6, "base_twist_dot"))
    dV[:, 3:] -= g

    T_rel = _relative_transforms(chain, theta)  # T_{i-1,i}
    twist = np.zeros((f, n, 6))
    twist_dot = np.zeros((f, n, 6))
    T_0i = np.zeros((f, n, 4, 4))
    T0 = np.broadcast_to(np.eye(4), (f, 4, 4))
    Ad_back = []  # [Ad_{T_i,i-1}]
    for i in range(n):
        A = chain.A_list[i]
        T0 = T0 @ T_rel[i]
        T_0i[:, i] = T0
        AdT = adjoint(trans_inv(T_rel[i]))
        Ad_back.append(AdT)
        V = np.einsum("fij,fj->fi", AdT, V) + A * dtheta[:, i : i + 1]
        dV = (
            np.einsum("fij,fj->fi", AdT, dV)
            + np.einsum("fij,j->fi", ad(V), A) * dtheta[:, i : i + 1]
            + A * ddtheta[:, i : i + 1]
        )
        twist[:, i], twist_dot[:, i] = V, dV

    wrench = np.zeros((f, n, 6))
    tau = np.zeros((f, n))
    Ad_next = np.broadcast_to(adjoint(trans_inv(chain.M_list[n])), (f, 6, 6))  # Ad_{T_n+1,n}
    for i in range(n - 1, -1, -1):
        Gi = chain.G_list[i]
        Vi, dVi = twist[:, i], twist_dot[:, i]
        F = (
            np.einsum("fji,fj->fi", Ad_next, F_next)
            + dVi @ Gi.T
            - np.einsum("fji,fj->fi", ad(Vi), Vi @ Gi.T)
        )
        wrench[:, i] = F
        tau[:, i] = F @ chain.A_list[i]
        F_next, Ad_next = F, Ad_back[i]
    T_0tip = T0 @ chain.M_list[n]
    out = RneaResult(tau, wrench, twist, twist_dot, T_0i, T_0tip)
    if single:
        out = RneaResult(tau[0], wrench[0], twist[0], twist_dot[0], T_0i[0], T_0tip[0])
    return out


def wrench_in_base(wrench: np.ndarray, T_0i: np.ndarray, point_base: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Re-express RNEA wrenches F_i as (force, moment about ``point_base``) in base (lab) axes.

    wrench: (..., 6) F_i = (m, f) in {i} about the origin of {i} (the COM); T_0i: (..., 4, 4);
    point_base: (..., 3) m, e.g. the joint centre in the lab. Returns force_base (..., 3) N
    and moment_base (..., 3) N.m: f_0 = R f; m_0 = R m + (o_i - p) x f_0, o_i = origin of {i}.
    For F_i from :func:`rnea` this is the force and moment of link i-1 on link i (the
    "internal" joint load on the distal link, gaitid.dynamics.JointLoads' sign).
    """
    wrench = np.asarray(wrench, float)
    T_0i = np.asarray(T_0i, float)
    R, o = T_0i[..., :3, :3], T_0i[..., :3, 3]
    force = np.einsum("...ij,...j->...i", R, wrench[..., 3:])
    moment = np.einsum("...ij,...j->...i", R, wrench[..., :3]) + np.cross(o - np.asarray(point_base, float), force)
    return force, moment


# ----------------------------------------------------------------------------------------
# Closed form (seed 003 section 9.4) and forward dynamics (section 9.5)
# ----------------------------------------------------------------------------------------


def _body_jacobians(chain: ScrewChain, theta: np.ndarray):
    """L(theta) A stacked per link: X[i] (n_frames, 6, n) = J_ib, link i's body Jacobian (eq 9.61).

    Also returns the lists [Ad_{T_i,i-1}] and T_{i-1,i}. Block row i of L(theta) A (eq 9.76)
    is sum_{j<=i} [Ad_{T_ij}] A_j e_j^T, built recursively: X_i = Ad_{T_i,i-1} X_{i-1} + A_i e_i^T.
    """
    n = chain.n_joints
    f = theta.shape[0]
    T_rel = _relative_transforms(chain, theta)
    X = np.zeros((n, f, 6, n))
    Ad_back = []
    prev = np.zeros((f, 6, n))
    for i in range(n):
        AdT = adjoint(trans_inv(T_rel[i]))
        Ad_back.append(AdT)
        cur = AdT @ prev
        cur[:, :, i] = chain.A_list[i]
        X[i] = prev = cur
    return X, Ad_back, T_rel


def mass_matrix(chain: ScrewChain, theta) -> np.ndarray:
    """M(theta) = A^T L^T G L A = sum_i J_ib^T G_i J_ib (seed 003 eqs 9.82, 9.61), (n_frames, n, n)."""
    theta, single = as_frames(theta, chain.n_joints, "theta")
    X, _, _ = _body_jacobians(chain, theta)
    GX = chain.G_list[:, None] @ X  # (n, f, 6, n)
    f, n = theta.shape
    Xs = X.transpose(1, 0, 2, 3).reshape(f, 6 * n, n)
    M = np.swapaxes(Xs, 1, 2) @ GX.transpose(1, 0, 2, 3).reshape(f, 6 * n, n)
    return M[0] if single else M


def coriolis_terms(chain: ScrewChain, theta, dtheta) -> np.ndarray:
    """c(theta, theta') (n_frames, n), seed 003 eq 9.83 with its sign corrected.

    c = -A^T L^T (G L [ad_{A theta'}] Gamma + [ad_V]^T G) L A theta'. The printed 9.83 reads
    A^T L^T (G L [ad_{A theta'}] Gamma - [ad_V]^T G) L A theta': the [ad_{A theta'}] term has
    the wrong sign, inherited from 9.73/9.78 (by 9.55, [V_i, A_i theta_i'] =
    -[ad_{A_i theta_i'}] Ad_{T_i,i-1}(V_{i-1})). Computed with the stacked matrices.
    """
    n = chain.n_joints
    theta, single = as_frames(theta, n, "theta")
    dtheta, _ = as_frames(dtheta, n, "dtheta")
    X, Ad_back, _ = _body_jacobians(chain, theta)
    V = np.einsum("ifan,fn->ifa", X, dtheta)  # V = L A theta' (9.77), fixed base
    # y = -[ad_{A theta'}] Gamma V, block i: -ad(A_i theta_i') Ad_{T_i,i-1} V_{i-1}
    y = np.zeros_like(V)
    for i in range(1, n):
        y[i] = -np.einsum("fab,fb->fa", ad(chain.A_list[i] * dtheta[:, i : i + 1]), np.einsum("fab,fb->fa", Ad_back[i], V[i - 1]))
    # dV = L y: propagate down the chain
    dV = np.zeros_like(V)
    prev = np.zeros_like(V[0])
    for i in range(n):
        prev = np.einsum("fab,fb->fa", Ad_back[i], prev) + y[i]
        dV[i] = prev
    # F = L^T (G dV - [ad_V]^T G V); c = A^T F = sum_i J_ib^T (...)_i
    local = np.einsum("iab,ifb->ifa", chain.G_list, dV) - np.einsum(
        "ifba,ifb->ifa", ad(V), np.einsum("iab,ifb->ifa", chain.G_list, V)
    )
    c = np.einsum("ifan,ifa->fn", X, local)
    return c[0] if single else c


def gravity_terms(chain: ScrewChain, theta, g=GRAVITY_Z) -> np.ndarray:
    """g(theta) = A^T L^T G L dV_base (seed 003 eq 9.84), dV_base = (Ad_{T_10}(0, -g), 0, ...); (n_frames, n)."""
    theta, single = as_frames(theta, chain.n_joints, "theta")
    f = theta.shape[0]
    X, Ad_back, _ = _body_jacobians(chain, theta)
    g = _per_frame(g, f, 3, "g")
    acc = np.zeros((f, 6))
    acc[:, 3:] = -g
    out = np.zeros((f, chain.n_joints))
    for i in range(chain.n_joints):
        acc = np.einsum("fab,fb->fa", Ad_back[i], acc)  # the base acceleration seen in {i}
        out += np.einsum("fan,fa->fn", X[i], acc @ chain.G_list[i].T)
    return out[0] if single else out


def tip_terms(chain: ScrewChain, theta, F_tip) -> np.ndarray:
    """J^T(theta) F_tip (seed 003 eq 9.81), J the body Jacobian of the tip frame; (n_frames, n).

    F_tip: (6,) or (n_frames, 6), the wrench the tip exerts on the environment, tip frame.
    """
    theta, single = as_frames(theta, chain.n_joints, "theta")
    f = theta.shape[0]
    X, _, _ = _body_jacobians(chain, theta)
    J_tip = np.einsum("ab,fbn->fan", adjoint(trans_inv(chain.M_list[-1])), X[-1])
    out = np.einsum("fan,fa->fn", J_tip, _per_frame(F_tip, f, 6, "F_tip"))
    return out[0] if single else out


def forward_dynamics(chain: ScrewChain, theta, dtheta, tau, g=GRAVITY_Z, F_tip=None) -> np.ndarray:
    """theta'' = M^-1 (tau - c - g - J^T F_tip) (seed 003 ``GetJointAccel``, MR ``ForwardDynamics``).

    c + g + J^T F_tip is one RNEA call with theta'' = 0; M from eq 9.82. (n_frames, n).
    """
    n = chain.n_joints
    theta, single = as_frames(theta, n, "theta")
    dtheta, _ = as_frames(dtheta, n, "dtheta")
    tau, _ = as_frames(np.broadcast_to(np.asarray(tau, float), theta.shape), n, "tau")
    bias = rnea(chain, theta, dtheta, np.zeros_like(theta), g, F_tip).tau
    out = np.linalg.solve(mass_matrix(chain, theta), (tau - bias)[..., None])[..., 0]
    return out[0] if single else out


def kinetic_energy(chain: ScrewChain, theta, dtheta) -> np.ndarray:
    """1/2 sum_i V_i^T G_i V_i (J), seed 003 eq 9.59; (n_frames,)."""
    theta, single = as_frames(theta, chain.n_joints, "theta")
    dtheta, _ = as_frames(dtheta, chain.n_joints, "dtheta")
    X, _, _ = _body_jacobians(chain, theta)
    V = np.einsum("ifan,fn->ifa", X, dtheta)
    k = 0.5 * np.einsum("ifa,iab,ifb->f", V, chain.G_list, V)
    return k[0] if single else k


def potential_energy(chain: ScrewChain, theta, g=GRAVITY_Z) -> np.ndarray:
    """-sum_i m_i g . p_i (J), p_i the COM (link-frame origin) in base coordinates; (n_frames,)."""
    theta, single = as_frames(theta, chain.n_joints, "theta")
    f = theta.shape[0]
    g = _per_frame(g, f, 3, "g")
    T = np.broadcast_to(np.eye(4), (f, 4, 4))
    T_rel = _relative_transforms(chain, theta)
    p = np.zeros(f)
    for i in range(chain.n_joints):
        T = T @ T_rel[i]
        p -= chain.G_list[i, 3, 3] * np.einsum("fa,fa->f", g, T[:, :3, 3])
    return p[0] if single else p
