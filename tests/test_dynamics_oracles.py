"""The 3D solver against independent formulations (issue 3, proofs 2 and 3).

- Planar closed forms (seed 001 two-link, seed 002 three-link eqs 24-44 as corrected in
  :mod:`gaitid.dynamics.multibody.planar`, and its Jacobian form for any n) embedded in a tilted
  3D plane, driven by smooth trajectories with analytic derivatives: the moment about the
  plane normal equals tau = M q'' + C + G + E to 1e-9, term by term.
- Seed 003's twist-wrench recursive Newton-Euler (:func:`gaitid.dynamics.multibody.screw.rnea`) on
  a three-segment chain with six-degree-of-freedom joints (3 prismatic + 3 revolute 1-DOF
  joints joined by massless links), random 3D motion: same joint forces and moments.

Mapping: the planar chain is ordered proximal to distal (link 0 on the ground), gaitid's
distal to proximal, so gaitid joint j is planar joint n-1-j; planar tau_i is the moment of
link i-1 on link i, i.e. gaitid's internal moment.

On the decomposition: gaitid splits each joint load by the terms of seed 000's right-hand
side (segment-level: m a and I alpha; omega x I omega; m g; external). The joint-space
split M q'' + C differs: C (centripetal/Coriolis) comes from the velocity-product part of
the segments' centre-of-mass accelerations, which seed 000 counts as inertial. So:
gravity == G and external == E term by term; inertial + velocity == M q'' + C, the velocity
part has no component about the plane normal (omega x I omega is in-plane-orthogonal), and
the inertial part, fed the q''-only or the q'-only accelerations, gives M q'' and C.
"""

from __future__ import annotations

import numpy as np
import pytest
from chain_segments import Seg, split
from scipy.spatial.transform import Rotation

from gaitid.dynamics import ExternalLoad, inverse_dynamics

planar = pytest.importorskip("gaitid.dynamics.multibody.planar")
screw = pytest.importorskip("gaitid.dynamics.multibody.screw")

G = 9.81
T = np.linspace(0.0, 1.3, 61)


def trajectories(rng, n_links):
    """Smooth joint angles q(t) = a + b sin(w t + phi) + c t^2, with exact q', q''."""
    a = rng.uniform(-1.0, 1.0, n_links)
    b = rng.uniform(0.3, 1.0, n_links)
    w = rng.uniform(1.0, 6.0, n_links)
    phi = rng.uniform(0, 2 * np.pi, n_links)
    c = rng.uniform(-1.0, 1.0, n_links)
    t = T[:, None]
    q = a + b * np.sin(w * t + phi) + c * t**2
    qd = b * w * np.cos(w * t + phi) + 2 * c * t
    qdd = -b * w**2 * np.sin(w * t + phi) + 2 * c
    return q, qd, qdd


def embed(chain, q, qd, qdd, Q, origin, rng, tip_force=None, tip_distance=None, tip_moment=None):
    """gaitid segments and loads (distal first) for the planar chain moving in the plane Q[:, :2].

    Exact kinematics: theta_i = sum q, u = (cos, sin), u' = (-sin, cos); the centre of mass
    of link i is at sum_{k<i} L_k u_k + d_i u_i, so its acceleration is
    sum_{k<i} L_k (theta_k'' u'_k - theta_k'^2 u_k) + d_i (theta_i'' u'_i - theta_i'^2 u_i).
    Each link frame is Q Rz(theta_i); omega_seg = (0, 0, theta'), alpha_seg = (0, 0, theta'').
    Inertia tensors get random products of inertia about x, y (no effect about the normal).
    """
    n = chain.n_links
    th, thd, thdd = (np.cumsum(x, axis=1) for x in (q, qd, qdd))
    u = np.stack([np.cos(th), np.sin(th)], -1)  # (f, n, 2)
    up = np.stack([-np.sin(th), np.cos(th)], -1)
    acc_link = thdd[..., None] * up - thd[..., None] ** 2 * u  # per unit length
    joints = np.concatenate([np.zeros_like(u[:, :1]), np.cumsum(chain.length[:, None] * u, axis=1)], axis=1)
    acc_joints = np.concatenate([np.zeros_like(u[:, :1]), np.cumsum(chain.length[:, None] * acc_link, axis=1)], axis=1)

    def lab(p2):  # planar (f, 2) -> lab (f, 3)
        return origin + p2 @ Q[:, :2].T

    def lab_vec(v2):
        return v2 @ Q[:, :2].T

    segs = []
    for i in range(n):
        com2 = joints[:, i] + chain.com[i] * u[:, i]
        acc2 = acc_joints[:, i] + chain.com[i] * acc_link[:, i]
        Rz = Rotation.from_euler("z", th[:, i, None]).as_matrix()
        inertia = np.diag([rng.uniform(0.01, 0.1), rng.uniform(0.01, 0.1), chain.inertia[i]])
        inertia[0, 2] = inertia[2, 0] = rng.uniform(-0.005, 0.005)
        inertia[1, 2] = inertia[2, 1] = rng.uniform(-0.005, 0.005)
        zeros = np.zeros_like(th[:, i])
        segs.append(Seg(
            name=f"link{i}", mass=float(chain.mass[i]), inertia_seg=inertia, R=Q @ Rz,
            com_lab=lab(com2), com_acc_lab=lab_vec(acc2),
            omega_seg=np.stack([zeros, zeros, thd[:, i]], 1), alpha_seg=np.stack([zeros, zeros, thdd[:, i]], 1),
            proximal_lab=lab(joints[:, i]), distal_lab=lab(joints[:, i + 1])))
    loads = []
    if tip_force is not None or tip_moment is not None:
        f = len(T)
        r = chain.length[-1] if tip_distance is None else tip_distance
        F2 = np.broadcast_to(np.zeros(2) if tip_force is None else np.asarray(tip_force, float), (f, 2))
        Mz = np.broadcast_to(0.0 if tip_moment is None else np.asarray(tip_moment, float), (f,))
        loads.append(ExternalLoad(0, lab_vec(F2), lab(joints[:, n - 1] + r * u[:, n - 1]), Mz[:, None] * Q[:, 2]))
    return segs[::-1], loads


def normal_moments(out, Q, part=None):
    """(f, n) moments about the plane normal, planar joint order (proximal first)."""
    moments = out.moment if part is None else out.moment_parts[part]
    return np.stack([m @ Q[:, 2] for m in moments[::-1]], axis=1)


def close(a, b, scale):
    err = np.max(np.abs(a - b)) / np.max(np.abs(scale))
    assert err < 1e-9, err


def setup(seed):
    rng = np.random.default_rng(seed)
    Q = Rotation.random(random_state=rng).as_matrix()
    origin = rng.standard_normal(3)
    return rng, Q, origin


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_two_link_seed001_closed_form(method):
    rng, Q, origin = setup(1)
    chain = planar.PlanarChain(mass=[2.0, 1.5], length=[0.35, 0.3], com=[0.16, 0.13], inertia=[0.021, 0.012])
    q, qd, qdd = trajectories(rng, 2)
    F = np.stack([30 * np.sin(3 * T), 50 + 20 * np.cos(2 * T)], 1)  # N, on the tip
    ref = planar.two_link_closed_form(chain, q, qd, qdd, tip_force=F, g=G)
    segs, loads = embed(chain, q, qd, qdd, Q, origin, rng, tip_force=F)
    out = inverse_dynamics(*split(segs), loads, gravity_lab=Q @ [0, -G, 0], frame="lab", method=method)
    scale = ref.tau
    check_terms(out, Q, ref, scale)
    close(normal_moments(out, Q, "velocity"), 0 * ref.C, scale)
    only_qdd, only_qd = _split_runs(chain, q, qd, qdd, Q, origin, 1, method, tip_force=F)
    close(normal_moments(only_qdd, Q, "inertial"), ref.inertial, scale)
    close(normal_moments(only_qd, Q, "inertial"), ref.C, scale)


def check_terms(out, Q, ref, scale):
    """Total, gravity (G) and external (E) moments term by term, and inertial + velocity = M q'' + C."""
    close(normal_moments(out, Q), ref.tau, scale)
    close(normal_moments(out, Q, "gravity"), ref.G, scale)
    close(normal_moments(out, Q, "external"), ref.E, scale)
    close(normal_moments(out, Q, "inertial") + normal_moments(out, Q, "velocity"), ref.inertial + ref.C, scale)


def _split_runs(chain, q, qd, qdd, Q, origin, seed, method, **load):
    """The inertial part driven by q'' alone (q' = 0) and by q' alone (q'' = 0)."""
    outs = []
    for d1, d2 in ((0 * qd, qdd), (qd, 0 * qdd)):
        segs, loads = embed(chain, q, d1, d2, Q, origin, np.random.default_rng(seed), **load)
        outs.append(inverse_dynamics(*split(segs), loads, gravity_lab=Q @ [0, -G, 0], frame="lab", method=method))
    return outs


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_three_link_seed002_closed_form(method):
    rng, Q, origin = setup(2)
    # upper arm, forearm, hand (seed 002), spring pulling the hand along -X beyond its centre of mass
    chain = planar.PlanarChain(mass=[2.1, 1.2, 0.45], length=[0.30, 0.27, 0.18], com=[0.13, 0.12, 0.07],
                               inertia=[0.016, 0.0065, 0.0011])
    q, qd, qdd = trajectories(rng, 3)
    FS, dS = 15 + 5 * np.sin(4 * T), 0.04
    ref = planar.three_link_closed_form(chain, q, qd, qdd, spring_force=FS, spring_distance=dS, g=G)
    load = dict(tip_force=np.stack([-FS, 0 * FS], 1), tip_distance=chain.com[2] + dS)
    segs, loads = embed(chain, q, qd, qdd, Q, origin, rng, **load)
    out = inverse_dynamics(*split(segs), loads, gravity_lab=Q @ [0, -G, 0], frame="lab", method=method)
    scale = ref.tau
    check_terms(out, Q, ref, scale)
    only_qdd, only_qd = _split_runs(chain, q, qd, qdd, Q, origin, 2, method, **load)
    close(normal_moments(only_qdd, Q, "inertial"), ref.inertial, scale)
    close(normal_moments(only_qd, Q, "inertial"), ref.C, scale)


@pytest.mark.parametrize("n_links", [1, 4])
def test_n_link_jacobian_form_with_tip_moment(n_links):
    rng, Q, origin = setup(3 + n_links)
    chain = planar.PlanarChain(mass=rng.uniform(0.5, 8, n_links), length=rng.uniform(0.1, 0.5, n_links),
                               com=rng.uniform(0.05, 0.1, n_links), inertia=rng.uniform(0.001, 0.1, n_links))
    q, qd, qdd = trajectories(rng, n_links)
    F, Mz = np.array([20.0, 400.0]), 3 * np.cos(T)
    ref = planar.inverse_dynamics(chain, q, qd, qdd, tip_force=F, g=G, tip_distance=0.07, tip_moment=Mz)
    segs, loads = embed(chain, q, qd, qdd, Q, origin, rng, tip_force=F, tip_distance=0.07, tip_moment=Mz)
    out = inverse_dynamics(*split(segs), loads, gravity_lab=Q @ [0, -G, 0], frame="lab")
    close(normal_moments(out, Q), ref.tau, ref.tau)
    close(normal_moments(out, Q, "external"), ref.E, ref.tau)
    close(normal_moments(out, Q, "gravity"), ref.G, ref.tau)
    # forces are in the plane (no out-of-plane load anywhere)
    for f in out.force_lab:
        assert np.max(np.abs(f @ Q[:, 2])) < 1e-9 * np.max(np.abs(f))


# --- seed 003: twist-wrench RNEA with six-degree-of-freedom joints --------------------------

def six_dof_screw_chain(rng, k=3):
    """k bodies (proximal first) each joined to its parent by x, y, z prismatic + x, y, z revolute joints.

    Joint group j sits at a point J_j (on body j-1, or the lab for j = 0); its five
    intermediate links are massless. Body j's frame is at its centre of mass, a constant
    offset and rotation from J_j. Returns the ScrewChain, the body indices in the joint
    list, the masses, inertias, and the proximal joint centre of each body from its COM (body frame).
    """
    n = 6 * k
    M_list = np.tile(np.eye(4), (n + 1, 1, 1))
    G_list = np.zeros((n, 6, 6))
    S_list = np.zeros((n, 6))
    masses, inertias, joint_in_body = [], [], []
    home = np.eye(4)  # pose of the current frame at theta = 0
    body_index = []
    joint_home = np.zeros(3)
    for j in range(k):
        # joint centre J_j (lab, theta = 0): the home origin of frame index 6j
        for a in range(3):
            S_list[6 * j + a, 3 + a] = 1.0  # prismatic along lab x, y, z
            s = np.zeros(6)
            s[a] = 1.0
            s[3:] = -np.cross(s[:3], joint_home)
            S_list[6 * j + 3 + a] = s  # revolute about lab x, y, z through J_j
        # intermediate frames all at J_j with lab axes; body frame: COM offset + rotation
        Rb = Rotation.random(random_state=rng).as_matrix()
        com_from_joint = rng.uniform(-0.3, 0.3, 3)
        body = np.eye(4)
        body[:3, :3] = Rb
        body[:3, 3] = joint_home + com_from_joint
        A = rng.standard_normal((3, 3))
        inertia = 0.05 * A @ A.T + 0.01 * np.eye(3)
        m = float(rng.uniform(1.0, 8.0))
        G_list[6 * j + 5] = screw.spatial_inertia(m, inertia)
        # M_list[i] = pose of frame i+1 in frame i (frames 1..n are the links, 0 the base)
        first = np.eye(4)
        first[:3, 3] = joint_home
        M_list[6 * j] = screw.trans_inv(home) @ first  # parent frame -> J_j (lab axes)
        for a in range(1, 5):
            M_list[6 * j + a] = np.eye(4)  # massless links stacked at J_j
        M_list[6 * j + 5] = screw.trans_inv(first) @ body
        home = body
        body_index.append(6 * j + 5)
        masses.append(m)
        inertias.append(inertia)
        joint_in_body.append(Rb.T @ (joint_home - body[:3, 3]))
        joint_home = joint_home + rng.uniform(-0.5, 0.5, 3)  # the next joint (distal end of this body)
    tip = np.eye(4)
    tip[:3, 3] = rng.uniform(-0.1, 0.1, 3)
    M_list[n] = tip
    return screw.ScrewChain(M_list, G_list, S_list), body_index, masses, inertias, joint_in_body


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_twist_wrench_rnea_six_dof_joints(method):
    rng = np.random.default_rng(21)
    chain, bodies, masses, inertias, joint_in_body = six_dof_screw_chain(rng)
    n_j = chain.n_joints
    q, qd, qdd = trajectories(rng, n_j)
    q, qd, qdd = 0.4 * q, 0.4 * qd, 0.4 * qdd
    g = np.array([0.0, 0.0, -9.81])
    # ground reaction on the foot (the tip body): force, point, free moment (lab)
    f = len(T)
    grf = np.stack([40 * np.sin(2 * T), -25 * np.cos(3 * T), 600 + 100 * np.sin(5 * T)], 1)
    tz = np.stack([0 * T, 0 * T, 2.0 * np.sin(4 * T)], 1)
    # a first pass without load gives the tip pose, to build the tip wrench
    kin = screw.rnea(chain, q, qd, qdd, g=g)
    T_tip = kin.T_0tip
    foot = bodies[-1]
    cop = kin.T_0i[:, foot, :3, 3] + rng.uniform(-0.05, 0.05, (f, 3))
    R_tip, o_tip = T_tip[:, :3, :3], T_tip[:, :3, 3]
    m_on_foot = np.einsum("nji,nj->ni", R_tip, np.cross(cop - o_tip, grf) + tz)
    f_on_foot = np.einsum("nji,nj->ni", R_tip, grf)
    F_tip = -np.concatenate([m_on_foot, f_on_foot], 1)  # MR: the wrench the tip exerts on the world
    res = screw.rnea(chain, q, qd, qdd, g=g, F_tip=F_tip)

    # gaitid inputs from the same motion: body pose, twist and its derivative (seed 003 9.3)
    segs = []
    for j, b in enumerate(bodies):
        Tb = res.T_0i[:, b]
        R, c = Tb[:, :3, :3], Tb[:, :3, 3]
        w, v = res.twist[:, b, :3], res.twist[:, b, 3:]
        dw, dv = res.twist_dot[:, b, :3], res.twist_dot[:, b, 3:]
        # dV's linear part is d/dt(v_b) - R^T g, and c'' = R (d/dt v_b + w x v_b)
        acc = np.einsum("nij,nj->ni", R, dv + np.cross(w, v)) + g
        segs.append(Seg(
            name=("thigh", "shank", "foot")[j], mass=masses[j], inertia_seg=inertias[j], R=R, com_lab=c,
            com_acc_lab=acc, omega_seg=w, alpha_seg=dw,
            proximal_lab=c + np.einsum("nij,j->ni", R, joint_in_body[j]), distal_lab=None))
    # the prismatic joints move the joint centre on the parent body: the force between two
    # bodies acts at one lab point, so the parent's distal point is the child's proximal one
    for j in range(len(segs) - 1):
        segs[j].distal_lab = segs[j + 1].proximal_lab.copy()
    # check the acceleration conversion against central differences of the COM path
    h = 1e-5
    c_at = [screw.rnea(chain, q + s * h * qd + 0.5 * (s * h) ** 2 * qdd, qd, qdd, g=g).T_0i[:, foot, :3, 3]
            for s in (-1, 0, 1)]  # q(t + s h) to second order; the error is O(h) in the difference
    np.testing.assert_allclose((c_at[0] - 2 * c_at[1] + c_at[2]) / h**2, segs[-1].com_acc_lab, rtol=0, atol=2e-3)

    out = inverse_dynamics(*split(segs[::-1]), [ExternalLoad(0, grf, cop, tz)], gravity_lab=g, frame="lab", method=method)
    for j, b in enumerate(bodies[::-1]):  # gaitid joint j: foot (ankle), shank (knee), thigh (hip)
        seg = segs[::-1][j]
        force, moment = screw.wrench_in_base(res.wrench[:, b], res.T_0i[:, b], seg.proximal_lab)
        scale = max(np.max(np.abs(moment)), 1.0)
        assert np.max(np.abs(out.moment[j] - moment)) / scale < 1e-9, (j, np.max(np.abs(out.moment[j] - moment)))
        assert np.max(np.abs(out.force_lab[j] - force)) / np.max(np.abs(force)) < 1e-9
