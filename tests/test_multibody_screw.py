"""Twist-wrench dynamics (seed 003): RNEA, closed forms, joint wrenches, against independent oracles.

Typos found in seed 003 (demonstrated below): eqs 9.73, 9.78 and 9.83 carry the wrong sign on
the [ad_{A theta'}] term (9.55 gives [V_i, A_i] theta_i' = -[ad_{A_i theta_i'}] Ad(V_{i-1}));
the initialisation "dV_0 = (0, g)" must be (0, -g) (the text itself says the base is given
acceleration -g).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import expm

from gaitid.core.errors import DataError, ModelError
from gaitid.dynamics.multibody import planar as P
from gaitid.dynamics.multibody import screw as S
from gaitid.dynamics.skew import skew

RNG = np.random.default_rng(314159)
G_PLANAR = np.array([0.0, -9.81, 0.0])


def random_3d_chain(n: int, rng=RNG, prismatic=()) -> S.ScrewChain:
    return S.sample_chain(n, rng, prismatic)


def test_se3_machinery_against_scipy_and_identities():
    V = RNG.normal(size=(5, 6))
    V[0, :3] = 0.0  # a pure translation
    np.testing.assert_allclose(S.matrix_exp6(S.vec_to_se3(V)), np.stack([expm(S.vec_to_se3(v)) for v in V]), atol=1e-12)
    w, x = RNG.normal(size=(2, 5, 3))
    np.testing.assert_allclose(np.einsum("fij,fj->fi", skew(w), x), np.cross(w, x), atol=1e-14)
    np.testing.assert_array_equal(S.so3_to_vec(skew(w)), w)
    np.testing.assert_array_equal(S.vec_to_se3(V)[:, :3, :3], skew(V[:, :3]))  # [V]'s rotation block is S(w)
    T1, T2 = S.matrix_exp6(S.vec_to_se3(RNG.normal(size=(2, 4, 6))))
    np.testing.assert_allclose(S.adjoint(T1 @ T2), S.adjoint(T1) @ S.adjoint(T2), atol=1e-12)
    np.testing.assert_allclose(S.trans_inv(T1) @ T1, np.broadcast_to(np.eye(4), T1.shape), atol=1e-12)
    V1, V2 = RNG.normal(size=(2, 4, 6))
    np.testing.assert_allclose(np.einsum("fij,fj->fi", S.ad(V1), V2), -np.einsum("fij,fj->fi", S.ad(V2), V1), atol=1e-14)
    # ad_V1(V2) is the se(3) commutator [V1][V2] - [V2][V1] (seed 003 eq 9.28)
    X1, X2 = S.vec_to_se3(V1), S.vec_to_se3(V2)
    np.testing.assert_allclose(S.vec_to_se3(np.einsum("fij,fj->fi", S.ad(V1), V2)), X1 @ X2 - X2 @ X1, atol=1e-13)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_rnea_equals_planar_derivation_and_closed_forms(n):
    chain = P.PlanarChain(RNG.uniform(0.5, 5, n), RNG.uniform(0.2, 0.6, n), RNG.uniform(0.05, 0.2, n), RNG.uniform(0.01, 0.1, n))
    sc = S.planar_screw_chain(chain.mass, chain.length, chain.com, chain.inertia)
    q, qd, qdd = RNG.uniform(-3, 3, (6, n)), RNG.normal(0, 3, (6, n)), RNG.normal(0, 20, (6, n))
    F_on_tip_lab = RNG.normal(0, 40, (6, 2))
    ref = P.inverse_dynamics(chain, q, qd, qdd, tip_force=F_on_tip_lab)
    th = P.absolute_angles(q)[:, -1]  # tip frame rotated by th about Z
    f_tip_frame = np.stack([np.cos(th) * F_on_tip_lab[:, 0] + np.sin(th) * F_on_tip_lab[:, 1],
                            -np.sin(th) * F_on_tip_lab[:, 0] + np.cos(th) * F_on_tip_lab[:, 1]], 1)
    F_tip = np.zeros((6, 6))
    F_tip[:, 3:5] = -f_tip_frame  # the wrench the tip exerts on the environment
    out = S.rnea(sc, q, qd, qdd, g=G_PLANAR, F_tip=F_tip)
    np.testing.assert_allclose(out.tau, ref.tau, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(S.mass_matrix(sc, q), ref.M, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S.coriolis_terms(sc, q, qd), ref.C, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S.gravity_terms(sc, q, G_PLANAR), ref.G, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S.tip_terms(sc, q, F_tip), ref.E, rtol=1e-10, atol=1e-10)
    if n == 2:
        cf = P.two_link_closed_form(chain, q, qd, qdd, tip_force=F_on_tip_lab)
        np.testing.assert_allclose(out.tau, cf.tau, rtol=1e-9, atol=1e-9)
    if n == 3:
        cf = P.three_link_closed_form(chain, q, qd, qdd)
        np.testing.assert_allclose(S.rnea(sc, q, qd, qdd, g=G_PLANAR).tau, cf.tau, rtol=1e-9, atol=1e-9)


def test_closed_form_terms_equal_rnea_on_3d_chain_and_printed_983_sign_is_wrong():
    sc = random_3d_chain(5, prismatic=(2,))
    th, thd, thdd = RNG.uniform(-3, 3, (4, 5)), RNG.normal(0, 2, (4, 5)), RNG.normal(0, 10, (4, 5))
    g = RNG.normal(0, 9.81, 3)
    F_tip = RNG.normal(0, 20, (4, 6))
    zero = np.zeros_like(th)
    M = S.mass_matrix(sc, th)
    # M column j = RNEA with theta'' = e_j, no velocity, gravity or tip load (MR MassMatrix)
    for j in range(5):
        e = np.zeros_like(th)
        e[:, j] = 1
        np.testing.assert_allclose(M[:, :, j], S.rnea(sc, th, zero, e, g=np.zeros(3)).tau, rtol=1e-10, atol=1e-12)
    c = S.coriolis_terms(sc, th, thd)
    np.testing.assert_allclose(c, S.rnea(sc, th, thd, zero, g=np.zeros(3)).tau, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S.gravity_terms(sc, th, g), S.rnea(sc, th, zero, zero, g=g).tau, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S.tip_terms(sc, th, F_tip), S.rnea(sc, th, zero, zero, g=np.zeros(3), F_tip=F_tip).tau, rtol=1e-10, atol=1e-10)
    # J^T F_tip with MR's body Jacobian of the tip: B_i = Ad_{M^-1}(S_i), M = home pose of the tip
    M_home = np.linalg.multi_dot(list(sc.M_list))
    B_list = S.adjoint(S.trans_inv(M_home)) @ sc.S_list.T
    J_b = S.jacobian_body(B_list.T, th)
    np.testing.assert_allclose(S.tip_terms(sc, th, F_tip), np.einsum("fan,fa->fn", J_b, F_tip), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(S.fkin_body(M_home, B_list.T, th), S.fkin_space(M_home, sc.S_list, th), atol=1e-12)
    np.testing.assert_allclose(S.rnea(sc, th, thd, thdd, g=g, F_tip=F_tip).T_0tip, S.fkin_space(M_home, sc.S_list, th), atol=1e-12)
    J_s = S.jacobian_space(sc.S_list, th)
    T_tip = S.fkin_space(M_home, sc.S_list, th)
    np.testing.assert_allclose(J_s, S.adjoint(T_tip) @ J_b, atol=1e-12)
    # total: tau = M theta'' + c + g + J^T F_tip (9.81)
    tau = S.rnea(sc, th, thd, thdd, g=g, F_tip=F_tip).tau
    np.testing.assert_allclose(tau, np.einsum("fij,fj->fi", M, thdd) + c + S.gravity_terms(sc, th, g) + S.tip_terms(sc, th, F_tip), rtol=1e-10, atol=1e-10)
    # the printed 9.83 sign (+[ad_{A theta'}] term) is measurably different
    X, Ad_back, _ = S._body_jacobians(sc, th)
    V = np.einsum("ifan,fn->ifa", X, thd)
    dV_wrong, prev = np.zeros_like(V), np.zeros_like(V[0])
    for i in range(5):
        y = np.zeros_like(prev) if i == 0 else np.einsum("fab,fb->fa", S.ad(sc.A_list[i] * thd[:, i : i + 1]), np.einsum("fab,fb->fa", Ad_back[i], V[i - 1]))
        prev = np.einsum("fab,fb->fa", Ad_back[i], prev) + y
        dV_wrong[i] = prev
    local = np.einsum("iab,ifb->ifa", sc.G_list, dV_wrong) - np.einsum("ifba,ifb->ifa", S.ad(V), np.einsum("iab,ifb->ifa", sc.G_list, V))
    c_printed = np.einsum("ifan,ifa->fn", X, local)
    assert np.max(np.abs(c_printed - c)) > 1e-2


def test_mass_matrix_symmetric_positive_and_kinetic_energy():
    sc = random_3d_chain(6)
    th, thd = RNG.uniform(-3, 3, (5, 6)), RNG.normal(0, 2, (5, 6))
    M = S.mass_matrix(sc, th)
    np.testing.assert_allclose(M, np.swapaxes(M, 1, 2), atol=1e-12)
    assert np.all(np.linalg.eigvalsh(M) > 0)
    np.testing.assert_allclose(S.kinetic_energy(sc, th, thd), 0.5 * np.einsum("fi,fij,fj->f", thd, M, thd), rtol=1e-12)


def test_forward_dynamics_inverts_rnea_on_3d_chain():
    sc = random_3d_chain(4)
    th, thd, thdd = RNG.uniform(-3, 3, (5, 4)), RNG.normal(0, 2, (5, 4)), RNG.normal(0, 10, (5, 4))
    F_tip = RNG.normal(0, 20, 6)
    tau = S.rnea(sc, th, thd, thdd, F_tip=F_tip).tau
    np.testing.assert_allclose(S.forward_dynamics(sc, th, thd, tau, F_tip=F_tip), thdd, rtol=1e-9, atol=1e-9)


def _finite_difference_kinematics(sc: S.ScrewChain, theta_fun, t0: float, h: float = 1e-3):
    """Link poses and lab-frame COM acceleration, angular velocity and acceleration, by
    4th-order central differences of the forward kinematics (no twists involved)."""
    ts = t0 + h * np.arange(-2, 3)
    T = S.rnea(sc, theta_fun(ts), np.zeros((5, sc.n_joints)), np.zeros((5, sc.n_joints))).T_0i  # (5, n, 4, 4)
    w1 = np.array([1, -8, 0, 8, -1]) / (12 * h)
    w2 = np.array([-1, 16, -30, 16, -1]) / (12 * h**2)
    p, R = T[:, :, :3, 3], T[:, :, :3, :3]
    acc = np.einsum("t,tia->ia", w2, p)
    Rd = np.einsum("t,tiab->iab", w1, R)
    Rdd = np.einsum("t,tiab->iab", w2, R)
    R0 = R[2]
    W = Rd @ np.swapaxes(R0, 1, 2)  # [w]_lab = R' R^T
    omega = S.so3_to_vec(W)
    dW = Rdd @ np.swapaxes(R0, 1, 2) + Rd @ np.swapaxes(Rd, 1, 2)  # d/dt (R' R^T)
    alpha = S.so3_to_vec(0.5 * (dW - np.swapaxes(dW, 1, 2)))
    return T[2], acc, omega, alpha


def test_joint_wrenches_equal_lab_frame_newton_euler_on_3d_chain():
    """F_i (wrench of link i-1 on link i, in {i}, about the COM) against Newton-Euler written
    link by link in the lab frame, with accelerations by finite differences of the poses."""
    n = 4
    sc = random_3d_chain(n)
    a, b, c = RNG.uniform(-1, 1, (3, n))

    def theta_fun(t):
        t = np.atleast_1d(t)[:, None]
        return a + b * np.sin(2.0 * t) + c * t**2

    t0 = 0.3
    th = theta_fun(t0)
    thd = 2.0 * b * np.cos(2.0 * t0) + 2 * c * t0
    thdd = -4.0 * b * np.sin(2.0 * t0) + 2 * c
    g = np.array([0.0, 0.0, -9.81])
    F_tip = RNG.normal(0, 30, 6)
    out = S.rnea(sc, th, thd[None], thdd[None], g=g, F_tip=F_tip)
    T, acc, omega, alpha = _finite_difference_kinematics(sc, theta_fun, t0)
    np.testing.assert_allclose(out.T_0i[0], T, atol=1e-12)

    # the tip's wrench on the environment, in the lab about the tip-frame origin
    T_tip = out.T_0tip[0]
    next_force = T_tip[:3, :3] @ F_tip[3:]
    next_moment = T_tip[:3, :3] @ F_tip[:3]
    next_point = T_tip[:3, 3]
    for i in range(n - 1, -1, -1):
        R, com = T[i, :3, :3], T[i, :3, 3]
        m, I_lab = sc.G_list[i, 3, 3], R @ sc.G_list[i, :3, :3] @ R.T
        force = m * (acc[i] - g) + next_force  # m a = F_i - F_{i+1} + m g
        moment = I_lab @ alpha[i] + np.cross(omega[i], I_lab @ omega[i]) + next_moment + np.cross(next_point - com, next_force)
        f_lab, m_lab = S.wrench_in_base(out.wrench[0, i], T[i], com)
        np.testing.assert_allclose(f_lab, force, rtol=1e-6, atol=1e-6 * np.abs(force).max())
        np.testing.assert_allclose(m_lab, moment, rtol=1e-6, atol=1e-6 * np.abs(moment).max())
        next_force, next_moment, next_point = f_lab, m_lab, com


def test_joint_wrench_sign_frame_and_reference_point_static_link():
    """A still horizontal link along +X, hinged at the origin about Y, COM at d, gravity -Z:
    the base pushes it up with m g and holds it with the moment (0, -m g d, 0) about the hinge."""
    m, d = 2.0, 0.3
    M_list = np.stack([np.eye(4), np.eye(4)])
    M_list[0, 0, 3] = d
    M_list[1, 0, 3] = 0.2
    sc = S.ScrewChain(M_list, S.spatial_inertia(m, np.diag([0.01, 0.02, 0.02]))[None], np.array([[0, 1, 0, 0, 0, 0.0]]))
    out = S.rnea(sc, [0.0], [0.0], [0.0])
    force, moment = S.wrench_in_base(out.wrench, out.T_0i, np.zeros(3))
    np.testing.assert_allclose(force[0], [0, 0, m * 9.81], atol=1e-12)
    np.testing.assert_allclose(moment[0], [0, -m * 9.81 * d, 0], atol=1e-12)
    np.testing.assert_allclose(out.tau, [-m * 9.81 * d], atol=1e-12)  # tau_i = F_i . A_i
    # in {1} about the COM: same force, no moment
    np.testing.assert_allclose(out.wrench[0], [0, 0, 0, 0, 0, m * 9.81], atol=1e-12)


def test_moving_base_equals_extra_joint_and_shifted_gravity():
    sc = random_3d_chain(3)
    th, thd, thdd = RNG.uniform(-3, 3, (4, 3)), RNG.normal(0, 2, (4, 3)), RNG.normal(0, 10, (4, 3))
    # a base translating with acceleration a (at rest now) is gravity g - a
    acc = np.array([1.0, -2.0, 0.5])
    g = np.array([0.0, 0.0, -9.81])
    dV0 = np.concatenate([np.zeros(3), acc])
    np.testing.assert_allclose(S.rnea(sc, th, thd, thdd, g=g, base_twist_dot=dV0).tau,
                               S.rnea(sc, th, thd, thdd, g=g - acc).tau, rtol=1e-10, atol=1e-10)
    # a base spinning about joint 1's axis adds to joint 1's rate (gravity along that axis)
    axis = sc.S_list[0]
    spin = 1.7
    ref = S.rnea(sc, th, thd + spin * np.eye(3)[0], thdd, g=9.81 * axis[:3])
    out = S.rnea(sc, th, thd, thdd, g=9.81 * axis[:3], base_twist=spin * axis)
    np.testing.assert_allclose(out.tau, ref.tau, rtol=1e-10, atol=1e-10)


def test_single_configuration_and_bad_input():
    sc = random_3d_chain(3)
    one = S.rnea(sc, np.zeros(3), np.zeros(3), np.zeros(3))
    assert one.tau.shape == (3,) and one.wrench.shape == (3, 6) and one.T_0i.shape == (3, 4, 4)
    with pytest.raises(DataError, match="theta must have shape"):
        S.rnea(sc, np.zeros((2, 4)), np.zeros((2, 4)), np.zeros((2, 4)))
    with pytest.raises(DataError, match="different numbers of frames"):
        S.rnea(sc, np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)))
    with pytest.raises(ModelError, match="M_list"):
        S.ScrewChain(sc.M_list[:-1], sc.G_list, sc.S_list)
    with pytest.raises(ModelError, match="screw axis"):
        S.ScrewChain(sc.M_list, sc.G_list, sc.S_list * 2)


def test_rnea_joint_wrenches_equal_block_matrix_solver_on_3d_chain():
    """gaitid.dynamics (seed 000's block system) fed with the chain's motion gives the same
    joint forces and moments (proximal on distal, lab frame, about the joint centres)."""
    from chain_segments import Seg, split

    from gaitid.dynamics import ExternalLoad, inverse_dynamics

    n, f = 3, 6
    sc = random_3d_chain(n)
    th, thd, thdd = RNG.uniform(-2, 2, (f, n)), RNG.normal(0, 2, (f, n)), RNG.normal(0, 10, (f, n))
    g = np.array([0.0, 0.0, -9.81])
    F_tip = RNG.normal(0, 50, (f, 6))
    out = S.rnea(sc, th, thd, thdd, g=g, F_tip=F_tip)
    # a point on each joint axis, fixed in link i: q = w x v for v = -w x q
    Mi, joint_in_link = np.eye(4), []
    for i in range(n):
        Mi = Mi @ sc.M_list[i]
        w, v = sc.S_list[i, :3], sc.S_list[i, 3:]
        joint_in_link.append(S.trans_inv(Mi) @ np.append(np.cross(w, v), 1.0))
    segments = []
    for i in range(n):
        T = out.T_0i[:, i]
        R = T[:, :3, :3]
        V, dV = out.twist[:, i], out.twist_dot[:, i]
        acc_lab = np.einsum("fij,fj->fi", R, dV[:, 3:] + np.cross(V[:, :3], V[:, 3:])) + g
        segments.append(Seg(
            name=f"link{i}", mass=float(sc.G_list[i, 3, 3]), inertia_seg=sc.G_list[i, :3, :3], R=R,
            com_lab=T[:, :3, 3], com_acc_lab=acc_lab, omega_seg=V[:, :3], alpha_seg=dV[:, :3],
            proximal_lab=(T @ joint_in_link[i])[:, :3], distal_lab=None))
    segments[-1].distal_lab = out.T_0tip[:, :3, 3]
    segments = segments[::-1]  # the solver wants distal to proximal
    R_tip = out.T_0tip[:, :3, :3]
    load = ExternalLoad(segment=0, force_lab=-np.einsum("fij,fj->fi", R_tip, F_tip[:, 3:]),
                        point_lab=out.T_0tip[:, :3, 3], free_moment_lab=-np.einsum("fij,fj->fi", R_tip, F_tip[:, :3]))
    for method in ("block", "recursive"):
        res = inverse_dynamics(*split(segments), [load], gravity_lab=g, frame="lab", method=method, contributions=False)
        for j in range(n):
            i = n - 1 - j
            force, moment = S.wrench_in_base(out.wrench[:, i], out.T_0i[:, i], segments[j].proximal_lab)
            np.testing.assert_allclose(res.force_lab[j], force, rtol=1e-9, atol=1e-9 * np.abs(force).max())
            np.testing.assert_allclose(res.moment[j], moment, rtol=1e-9, atol=1e-9 * np.abs(moment).max())


def test_moving_base_interface_equals_floating_base_with_six_virtual_joints():
    """A leg hanging from a moving pelvis: RNEA with base_twist/base_twist_dot/g in pelvis
    coordinates gives the same leg wrenches as the whole chain with a floating pelvis built
    from three prismatic and three revolute massless joints."""
    leg = random_3d_chain(3)
    f = 5
    virtual = np.zeros((6, 6))
    virtual[0, 3] = virtual[1, 4] = virtual[2, 5] = 1.0  # P_x, P_y, P_z
    virtual[3, 2] = virtual[4, 1] = virtual[5, 0] = 1.0  # R_z, R_y, R_x through the pelvis origin
    G_pelvis = S.spatial_inertia(10.0, np.diag([0.1, 0.08, 0.09]))
    full = S.ScrewChain(
        np.concatenate([np.broadcast_to(np.eye(4), (6, 4, 4)), leg.M_list]),
        np.concatenate([np.zeros((5, 6, 6)), G_pelvis[None], leg.G_list]),
        np.concatenate([virtual, leg.S_list]),
    )
    th, thd, thdd = RNG.uniform(-2, 2, (f, 9)), RNG.normal(0, 2, (f, 9)), RNG.normal(0, 10, (f, 9))
    g = np.array([0.0, 0.0, -9.81])
    F_tip = RNG.normal(0, 50, (f, 6))
    ref = S.rnea(full, th, thd, thdd, g=g, F_tip=F_tip)
    R_pelvis = ref.T_0i[:, 5, :3, :3]
    g_pelvis = np.einsum("fji,j->fi", R_pelvis, g)
    V_pelvis = ref.twist[:, 5]
    dV_pelvis = ref.twist_dot[:, 5] + np.concatenate([np.zeros((f, 3)), g_pelvis], axis=1)  # true d/dt
    out = S.rnea(leg, th[:, 6:], thd[:, 6:], thdd[:, 6:], g=g_pelvis, F_tip=F_tip,
                 base_twist=V_pelvis, base_twist_dot=dV_pelvis)
    np.testing.assert_allclose(out.wrench, ref.wrench[:, 6:], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(ref.T_0i[:, 5, None] @ out.T_0i, ref.T_0i[:, 6:], atol=1e-12)


def test_missing_frames_stay_missing_in_their_frame_only():
    sc = random_3d_chain(3)
    th, thd, thdd = RNG.uniform(-2, 2, (4, 3)), RNG.normal(0, 2, (4, 3)), RNG.normal(0, 10, (4, 3))
    th[2, 1] = np.nan
    out = S.rnea(sc, th, thd, thdd)
    assert np.isnan(out.tau[2]).all() and np.isfinite(out.tau[[0, 1, 3]]).all()
    np.testing.assert_allclose(out.tau[[0, 1, 3]], S.rnea(sc, th[[0, 1, 3]], thd[[0, 1, 3]], thdd[[0, 1, 3]]).tau)


def test_coriolis_power_identity_from_passivity():
    """Seed 003 Prop. 9.1 (M' - 2C skew) implies theta'^T c = 1/2 theta'^T M' theta';
    M' by central differences of the closed-form mass matrix along theta'."""
    sc = S.sample_chain(5, 11, prismatic=(1,))
    th, thd = RNG.uniform(-2, 2, (4, 5)), RNG.normal(0, 2, (4, 5))
    h = 1e-5
    Mdot = (S.mass_matrix(sc, th + h * thd) - S.mass_matrix(sc, th - h * thd)) / (2 * h)
    c = S.coriolis_terms(sc, th, thd)
    np.testing.assert_allclose(np.einsum("fi,fi->f", thd, c), 0.5 * np.einsum("fi,fij,fj->f", thd, Mdot, thd), rtol=1e-7)
