"""Properties of the solver that hold for any input (hypothesis): invariance, linearity, signs."""

from __future__ import annotations

import numpy as np
from chain_segments import Seg, split
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation
from test_dynamics_solver import random_chain

from gaitid.dynamics import CONTRIBUTIONS, ExternalLoad, inverse_dynamics

seeds = st.integers(0, 2**32 - 1)
quaternions = st.tuples(*[st.floats(-1, 1) for _ in range(4)]).filter(lambda q: np.linalg.norm(q) > 0.1)
methods = st.sampled_from(["recursive", "block"])
PROPS = settings(max_examples=25, deadline=None)


def close(a, b, scale=None):
    ref = np.max(np.abs(b if scale is None else scale))
    assert np.max(np.abs(np.asarray(a) - b)) <= 1e-10 * max(ref, 1.0)


def moved(segs, loads, Q, t):
    """The same motion and loads seen from a lab rotated by Q and shifted by t."""
    def pt(p):
        return None if p is None else p @ Q.T + t

    new = [Seg(s.name, s.mass, s.inertia_seg, Q @ s.R, pt(s.com_lab), s.com_acc_lab @ Q.T,
                         s.omega_seg, s.alpha_seg, pt(s.proximal_lab), pt(s.distal_lab)) for s in segs]
    new_loads = [ExternalLoad(ld.segment, ld.force_lab @ Q.T, pt(ld.point_lab),
                              None if ld.free_moment_lab is None else ld.free_moment_lab @ Q.T) for ld in loads]
    return new, new_loads


@PROPS
@given(seed=seeds, quat=quaternions, method=methods)
def test_rotating_the_lab_rotates_lab_outputs_and_keeps_segment_outputs(seed, quat, method):
    rng = np.random.default_rng(seed)
    segs, loads = random_chain(rng, n=4)
    Q = Rotation.from_quat(quat).as_matrix()
    t = rng.standard_normal(3)
    g = np.array([0.0, 0.0, -9.81])
    segs2, loads2 = moved(segs, loads, Q, t)
    for frame in ("lab", "distal", "proximal"):
        a = inverse_dynamics(*split(segs), loads, gravity_lab=g, frame=frame, method=method)
        b = inverse_dynamics(*split(segs2), loads2, gravity_lab=Q @ g, frame=frame, method=method)
        for j in range(3):
            close(b.force_lab[j], a.force_lab[j] @ Q.T)
            expect = a.moment[j] @ Q.T if frame == "lab" else a.moment[j]
            if frame == "proximal" and j == 2:
                assert np.isnan(b.moment[j]).all()
                continue
            close(b.moment[j], expect)
            for p in CONTRIBUTIONS:
                e = a.moment_parts[p][j] @ Q.T if frame == "lab" else a.moment_parts[p][j]
                close(b.moment_parts[p][j], e, a.moment[j])


@PROPS
@given(seed=seeds, s1=st.floats(-3, 3), s2=st.floats(-3, 3), method=methods)
def test_outputs_are_linear_in_the_external_load(seed, s1, s2, method):
    rng = np.random.default_rng(seed)
    segs, _ = random_chain(rng, n=5)
    n = 5
    point = rng.standard_normal((n, 3))
    f1, f2 = 300 * rng.standard_normal((2, n, 3))
    t1, t2 = 5 * rng.standard_normal((2, n, 3))
    seg = int(rng.integers(0, 3))

    def run(f, t):
        return inverse_dynamics(*split(segs), [ExternalLoad(seg, f, point, t)], frame="lab", method=method)

    zero = run(0 * f1, 0 * t1)
    a, b = run(f1, t1), run(f2, t2)
    c = run(s1 * f1 + s2 * f2, s1 * t1 + s2 * t2)
    for j in range(3):
        ext = s1 * a.moment_parts["external"][j] + s2 * b.moment_parts["external"][j]
        close(c.moment_parts["external"][j], ext, c.moment[j])
        close(c.moment[j] - zero.moment[j], s1 * (a.moment[j] - zero.moment[j]) + s2 * (b.moment[j] - zero.moment[j]),
              c.moment[j])
        close(c.force_lab[j] - zero.force_lab[j],
              s1 * (a.force_lab[j] - zero.force_lab[j]) + s2 * (b.force_lab[j] - zero.force_lab[j]), c.force_lab[j])
        for p in ("inertial", "velocity", "gravity"):  # the load changes only its own part
            close(c.moment_parts[p][j], zero.moment_parts[p][j], c.moment[j])


@PROPS
@given(seed=seeds, frame=st.sampled_from(["lab", "distal", "proximal"]), method=methods)
def test_external_convention_flips_every_sign(seed, frame, method):
    rng = np.random.default_rng(seed)
    segs, loads = random_chain(rng, n=4)
    pelvis = Rotation.random(4, random_state=rng).as_matrix()
    a = inverse_dynamics(*split(segs), loads, frame=frame, method=method, proximal_R=pelvis)
    b = inverse_dynamics(*split(segs), loads, frame=frame, method=method, proximal_R=pelvis, convention="external")
    for j in range(3):
        np.testing.assert_array_equal(b.moment[j], -a.moment[j])
        np.testing.assert_array_equal(b.force_lab[j], -a.force_lab[j])
        for p in CONTRIBUTIONS:
            np.testing.assert_array_equal(b.moment_parts[p][j], -a.moment_parts[p][j])
            np.testing.assert_array_equal(b.force_parts[p][j], -a.force_parts[p][j])


@PROPS
@given(seed=seeds, method=methods)
def test_distal_frame_ankle_moment_is_R_foot_transpose_times_lab(seed, method):
    rng = np.random.default_rng(seed)
    segs, loads = random_chain(rng, n=6)
    lab = inverse_dynamics(*split(segs), loads, frame="lab", method=method)
    dist = inverse_dynamics(*split(segs), loads, frame="distal", method=method)
    R_foot = segs[0].R
    close(dist.moment[0], np.einsum("nij,nj->ni", np.swapaxes(R_foot, 1, 2), lab.moment[0]))
    close(np.einsum("nij,nj->ni", R_foot, dist.moment[0]), lab.moment[0])
