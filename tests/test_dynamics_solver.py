"""The block-matrix Newton-Euler solver: statics by hand, block == recursive, NaN, frames, errors.

``random_chain`` is shared with the other tests/test_dynamics_*.py files.
"""

from __future__ import annotations

import numpy as np
import pytest
from chain_segments import Seg, split
from scipy.spatial.transform import Rotation

from gaitid.core.errors import DataError, SettingsError
from gaitid.dynamics import CONTRIBUTIONS, ExternalLoad, inverse_dynamics, joint_name, skew

NAMES = ("foot", "shank", "thigh")


def random_chain(rng, n=7, k=3, consistent_joints=True, n_loads=2):
    """k segments with random (instantaneous) motion, and random loads with free moments."""
    segs = []
    prox_prev = None
    for i in range(k):
        A = rng.standard_normal((3, 3))
        inertia = 0.05 * (A @ A.T) + 0.01 * np.eye(3)
        proximal = rng.standard_normal((n, 3))
        distal = prox_prev if (consistent_joints and prox_prev is not None) else rng.standard_normal((n, 3))
        segs.append(Seg(
            name=NAMES[i] if i < 3 else f"seg{i}", mass=float(rng.uniform(0.5, 10.0)), inertia_seg=inertia,
            R=Rotation.random(n, random_state=rng).as_matrix(), com_lab=rng.standard_normal((n, 3)),
            com_acc_lab=3 * rng.standard_normal((n, 3)), omega_seg=5 * rng.standard_normal((n, 3)),
            alpha_seg=20 * rng.standard_normal((n, 3)), proximal_lab=proximal, distal_lab=distal))
        prox_prev = proximal
    loads = [ExternalLoad(0, 300 * rng.standard_normal((n, 3)), rng.standard_normal((n, 3)),
                          5 * rng.standard_normal((n, 3)))]
    for _ in range(n_loads - 1):
        loads.append(ExternalLoad(int(rng.integers(0, k)), 50 * rng.standard_normal((n, 3)),
                                  rng.standard_normal((n, 3))))
    return segs, loads


def rel_err(a, b, scale=None):
    """max |a - b| relative to max |b| (or to ``scale``, e.g. the total a part belongs to)."""
    a, b = np.asarray(a), np.asarray(b)
    ref = np.max(np.abs(b)) if scale is None else np.max(np.abs(scale))
    return np.max(np.abs(a - b)) / max(ref, 1e-300)


# --- skew -------------------------------------------------------------------------------

def test_skew_is_the_cross_product_and_antisymmetric():
    rng = np.random.default_rng(0)
    v, w = rng.standard_normal((50, 3)), rng.standard_normal((50, 3))
    S = skew(v)
    assert S.shape == (50, 3, 3)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", S, w), np.cross(v, w), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(S, -np.swapaxes(S, 1, 2))
    np.testing.assert_array_equal(skew(np.array([1.0, 2.0, 3.0])), [[0, -3, 2], [3, 0, -1], [-2, 1, 0]])


def test_skew_rejects_non_vectors():
    with pytest.raises(DataError, match="skew"):
        skew(np.zeros((4, 2)))


# --- statics by hand ----------------------------------------------------------------------

def _still_segment(name, mass, com, proximal, distal, n=2):
    z = np.zeros((n, 3))
    rep = lambda p: np.tile(np.asarray(p, float), (n, 1))  # noqa: E731
    return Seg(name, mass, np.diag([0.01, 0.02, 0.005]), np.tile(np.eye(3), (n, 1, 1)),
                         rep(com), z.copy(), z.copy(), z.copy(), rep(proximal), rep(distal))


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_statics_moment_is_r_cross_f_by_hand(method):
    # motionless foot and shank, no gravity; plate force F at p with free moment Tz on the foot.
    # ankle A = (0, 0, 0.08), knee K = (0.02, 0, 0.5), p = (0.12, 0.03, 0), F = (10, 0, 700) N, Tz = 1.5 N.m.
    # (p - A) x F = (21, -84.8, -0.3); (p - K) x F = (21, -75, -0.3); internal M = -(r x F) - T,
    # so M_A = (-21, 84.8, -1.2) and M_K = (-21, 75, -1.2).
    foot = _still_segment("foot", 1.2, [0.05, 0, 0.04], [0, 0, 0.08], [np.nan] * 3)
    shank = _still_segment("shank", 3.5, [0.01, 0, 0.3], [0.02, 0, 0.5], [0, 0, 0.08])
    n = 2
    load = ExternalLoad(0, np.tile([10.0, 0, 700], (n, 1)), np.tile([0.12, 0.03, 0], (n, 1)),
                        np.tile([0, 0, 1.5], (n, 1)))
    out = inverse_dynamics(*split([foot, shank]), [load], gravity_lab=(0, 0, 0), frame="lab", method=method)
    assert out.joints == ["ankle", "knee"]
    np.testing.assert_allclose(out.moment[0], np.tile([-21.0, 84.8, -1.2], (n, 1)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out.moment[1], np.tile([-21.0, 75.0, -1.2], (n, 1)), rtol=1e-12, atol=1e-12)
    for j in range(2):
        np.testing.assert_allclose(out.force_lab[j], np.tile([-10.0, 0, -700], (n, 1)), rtol=1e-14)
        np.testing.assert_allclose(out.moment_parts["external"][j], out.moment[j], rtol=1e-14)
        for p in ("inertial", "velocity", "gravity"):
            np.testing.assert_array_equal(out.moment_parts[p][j], 0.0)


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_statics_gravity_by_hand(method):
    # foot of 1.2 kg, centre of mass 5 cm in front of and 4 cm above the ankle at the origin:
    # gravity's moment about the ankle is r x (m g) = (0.05, 0, 0.04) x (0, 0, -11.772) = (0, 0.5886, 0);
    # the ankle must give -0.5886 N.m about Y and carry 11.772 N up. The shank (3.5 kg, centre of mass
    # 1 cm in front of the ankle) adds at the knee (0.02, 0, 0.4): r_foot x m g + r_shank x m g about K.
    foot = _still_segment("foot", 1.2, [0.05, 0, 0.04], [0, 0, 0], [np.nan] * 3)
    shank = _still_segment("shank", 3.5, [0.01, 0, 0.2], [0.02, 0, 0.4], [0, 0, 0])
    out = inverse_dynamics(*split([foot, shank]), [], frame="lab", method=method)
    np.testing.assert_allclose(out.moment[0][0], [0, -0.5886, 0], atol=1e-13)
    np.testing.assert_allclose(out.force_lab[0][0], [0, 0, 11.772], rtol=1e-14)
    # about K: foot (0.03, 0, -0.36) x (0, 0, -11.772) -> y: -0.03 * -11.772 = 0.35316;
    # shank (-0.01, 0, -0.2) x (0, 0, -34.335) -> y: 0.01 * -34.335 = -0.34335; internal = -(sum)
    np.testing.assert_allclose(out.moment[1][0], [0, -(0.35316 - 0.34335), 0], atol=1e-13)
    np.testing.assert_allclose(out.force_lab[1][0], [0, 0, 4.7 * 9.81], rtol=1e-14)
    np.testing.assert_allclose(out.moment_parts["gravity"][1], out.moment[1], atol=1e-15)


# --- block == recursive, parts add up -----------------------------------------------------

@pytest.mark.parametrize("k", [1, 2, 3, 5])
@pytest.mark.parametrize("frame", ["lab", "distal", "proximal"])
def test_block_and_recursive_agree(k, frame):
    rng = np.random.default_rng(10 + k)
    segs, loads = random_chain(rng, n=40, k=k, consistent_joints=(k % 2 == 1), n_loads=3)
    pelvis = Rotation.random(40, random_state=rng).as_matrix()
    a = inverse_dynamics(*split(segs), loads, frame=frame, method="recursive", proximal_R=pelvis)
    b = inverse_dynamics(*split(segs), loads, frame=frame, method="block", proximal_R=pelvis)
    for j in range(k):
        assert rel_err(a.moment[j], b.moment[j]) < 1e-10
        assert rel_err(a.force_lab[j], b.force_lab[j]) < 1e-10
        for p in CONTRIBUTIONS:
            assert rel_err(a.moment_parts[p][j], b.moment_parts[p][j], b.moment[j]) < 1e-10, p
            assert rel_err(a.force_parts[p][j], b.force_parts[p][j], b.force_lab[j]) < 1e-10, p


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_contributions_add_up_to_the_total(method):
    rng = np.random.default_rng(3)
    segs, loads = random_chain(rng, n=30)
    full = inverse_dynamics(*split(segs), loads, method=method)
    alone = inverse_dynamics(*split(segs), loads, method=method, contributions=False)
    assert alone.moment_parts == {} and alone.force_parts == {}
    for j in range(3):
        # 'alone' is solved without splitting; the four parts must rebuild it to rounding
        msum = sum(full.moment_parts[p][j] for p in CONTRIBUTIONS)
        fsum = sum(full.force_parts[p][j] for p in CONTRIBUTIONS)
        assert rel_err(msum, alone.moment[j]) < 1e-13
        assert rel_err(fsum, alone.force_lab[j]) < 1e-13
        assert rel_err(full.moment[j], alone.moment[j]) < 1e-13


def test_gravity_force_part_is_the_weight_below_the_joint():
    rng = np.random.default_rng(4)
    segs, loads = random_chain(rng, n=5)
    out = inverse_dynamics(*split(segs), loads, gravity_lab=(0, 0, -9.81))
    below = np.cumsum([s.mass for s in segs])
    for j in range(3):
        np.testing.assert_allclose(out.force_parts["gravity"][j], np.tile([0, 0, 9.81 * below[j]], (5, 1)), rtol=1e-14)
        np.testing.assert_array_equal(out.force_parts["velocity"][j], 0.0)


def test_loads_on_several_segments_and_free_moment_matter():
    rng = np.random.default_rng(5)
    segs, loads = random_chain(rng, n=6, n_loads=1)
    ld = loads[0]
    with_t = inverse_dynamics(*split(segs), [ld], frame="lab")
    without = inverse_dynamics(*split(segs), [ExternalLoad(0, ld.force_lab, ld.point_lab)], frame="lab")
    for j in range(3):  # a free moment passes unchanged up the chain: M_j changes by -T
        np.testing.assert_allclose(with_t.moment[j] - without.moment[j], -ld.free_moment_lab, atol=1e-10)
    # a load on the thigh does not change the ankle or knee
    extra = ExternalLoad(2, 100 * rng.standard_normal((6, 3)), rng.standard_normal((6, 3)))
    both = inverse_dynamics(*split(segs), [ld, extra], frame="lab")
    for j in range(2):
        np.testing.assert_array_equal(both.moment[j], with_t.moment[j])
    assert rel_err(both.moment[2], with_t.moment[2]) > 1e-3


# --- NaN frame by frame -------------------------------------------------------------------

@pytest.mark.parametrize("method", ["recursive", "block"])
@pytest.mark.parametrize("field", ["com_acc_lab", "R", "omega_seg", "proximal_lab"])
def test_nan_frame_stays_in_its_frame(method, field):
    rng = np.random.default_rng(6)
    segs, loads = random_chain(rng, n=12)
    clean = inverse_dynamics(*split(segs), loads, method=method)
    getattr(segs[1], field)[4] = np.nan  # the shank, frame 4
    dirty = inverse_dynamics(*split(segs), loads, method=method)
    ok = np.arange(12) != 4
    for j in range(3):
        assert np.isnan(dirty.moment[j][4]).all() or (j == 0 and method == "recursive")
        np.testing.assert_allclose(dirty.moment[j][ok], clean.moment[j][ok], rtol=1e-12)
        for p in CONTRIBUTIONS:
            np.testing.assert_allclose(dirty.moment_parts[p][j][ok], clean.moment_parts[p][j][ok], rtol=1e-12)
    if method == "recursive":  # the ankle does not depend on the shank
        np.testing.assert_allclose(dirty.moment[0], clean.moment[0], rtol=1e-12)
    for j in (1, 2):  # a joint's loads in a frame are all known or all NaN, parts included
        assert np.isnan(dirty.moment[j][4]).all() and np.isnan(dirty.force_lab[j][4]).all()
        for p in CONTRIBUTIONS:
            assert np.isnan(dirty.force_parts[p][j][4]).all() and np.isnan(dirty.moment_parts[p][j][4]).all()


@pytest.mark.parametrize("method", ["recursive", "block"])
def test_nan_load_gives_nan_in_that_frame_only(method):
    rng = np.random.default_rng(7)
    segs, loads = random_chain(rng, n=10)
    clean = inverse_dynamics(*split(segs), loads, method=method)
    loads[0].force_lab[2] = np.nan
    dirty = inverse_dynamics(*split(segs), loads, method=method)
    for j in range(3):
        assert np.isnan(dirty.moment[j][2]).all() and np.isnan(dirty.force_lab[j][2]).all()
        assert np.isnan(dirty.force_parts["gravity"][j][2]).all()
        np.testing.assert_allclose(np.delete(dirty.moment[j], 2, 0), np.delete(clean.moment[j], 2, 0), rtol=1e-12)


# --- frames, conventions, names -----------------------------------------------------------

def test_frames_and_conventions():
    rng = np.random.default_rng(8)
    segs, loads = random_chain(rng, n=9)
    lab = inverse_dynamics(*split(segs), loads, frame="lab")
    dist = inverse_dynamics(*split(segs), loads, frame="distal")
    prox = inverse_dynamics(*split(segs), loads, frame="proximal")
    ext = inverse_dynamics(*split(segs), loads, frame="distal", convention="external")
    for j in range(3):
        np.testing.assert_allclose(dist.moment[j], np.einsum("nji,nj->ni", segs[j].R, lab.moment[j]), atol=1e-10)
        np.testing.assert_array_equal(ext.moment[j], -dist.moment[j])
        np.testing.assert_array_equal(ext.force_lab[j], -dist.force_lab[j])
        for p in CONTRIBUTIONS:
            np.testing.assert_array_equal(ext.moment_parts[p][j], -dist.moment_parts[p][j])
    for j in range(2):
        np.testing.assert_allclose(prox.moment[j], np.einsum("nji,nj->ni", segs[j + 1].R, lab.moment[j]), atol=1e-10)
    assert np.isnan(prox.moment[2]).all()  # no pelvis given
    pelvis = Rotation.random(9, random_state=rng).as_matrix()
    prox2 = inverse_dynamics(*split(segs), loads, frame="proximal", proximal_R=pelvis)
    np.testing.assert_allclose(prox2.moment[2], np.einsum("nji,nj->ni", pelvis, lab.moment[2]), atol=1e-10)
    assert dist.frame == "distal" and ext.convention == "external"


def test_joint_names():
    assert [joint_name(s) for s in ("foot", "Shank", "thigh")] == ["ankle", "knee", "hip"]
    assert joint_name("left_foot") == "left_ankle" and joint_name("R.shank") == "R.knee"
    assert joint_name("trunk") == "trunk_proximal" and joint_name("bigfoot") == "bigfoot_proximal"


def test_missing_distal_point_uses_the_distal_segments_proximal_joint():
    rng = np.random.default_rng(9)
    segs, loads = random_chain(rng, n=5)
    ref = inverse_dynamics(*split(segs), loads)
    segs[1].distal_lab = None
    segs[2].distal_lab = None
    again = inverse_dynamics(*split(segs), loads, method="block")
    for j in range(3):
        assert rel_err(again.moment[j], ref.moment[j]) < 1e-10


# --- errors -------------------------------------------------------------------------------

def test_bad_settings_raise_settings_error():
    rng = np.random.default_rng(11)
    segs, loads = random_chain(rng, n=3)
    for kw in ({"frame": "global"}, {"convention": "PiG"}, {"method": "inverse"}, {"gravity_lab": (0, 0, np.nan)}):
        with pytest.raises(SettingsError):
            inverse_dynamics(*split(segs), loads, **kw)


def test_bad_data_raise_data_error_naming_the_item():
    rng = np.random.default_rng(12)
    segs, loads = random_chain(rng, n=3)
    segs[1].com_lab = np.zeros((4, 3))
    with pytest.raises(DataError, match=r"segment 1 \(shank\): com_lab"):
        inverse_dynamics(*split(segs), loads)
    segs, loads = random_chain(rng, n=3)
    segs[2].mass = -1.0
    with pytest.raises(DataError, match=r"segment 2 \(thigh\): mass"):
        inverse_dynamics(*split(segs), loads)
    segs, loads = random_chain(rng, n=3)
    loads[0].segment = 3
    with pytest.raises(DataError, match="external load 0"):
        inverse_dynamics(*split(segs), loads)
    segs, loads = random_chain(rng, n=3)
    segs[0].inertia_seg = np.arange(9.0).reshape(3, 3)
    with pytest.raises(DataError, match="not symmetric"):
        inverse_dynamics(*split(segs), loads)
    with pytest.raises(DataError, match="no segments"):
        inverse_dynamics(*split([]), [])
    segs, loads = random_chain(rng, n=3)
    segs[0].inertia_seg = np.diag([0.1, -0.01, 0.1])
    with pytest.raises(DataError, match="positive semi-definite"):
        inverse_dynamics(*split(segs), loads)


def test_rotations_are_checked():
    rng = np.random.default_rng(16)
    segs, loads = random_chain(rng, n=5)
    segs[1].R = segs[1].R.copy()
    segs[1].R[:, :, 2] *= -1  # a left-handed shank frame
    with pytest.raises(DataError, match=r"segment 1 \(shank\): R: not a proper rotation"):
        inverse_dynamics(*split(segs), loads)
    segs, loads = random_chain(rng, n=5)
    segs[2].R = 1.01 * segs[2].R  # unnormalised axes
    with pytest.raises(DataError, match=r"segment 2 \(thigh\): R: not orthonormal"):
        inverse_dynamics(*split(segs), loads)
    segs, loads = random_chain(rng, n=5)
    with pytest.raises(DataError, match="proximal_R: not orthonormal"):
        inverse_dynamics(*split(segs), loads, frame="proximal", proximal_R=np.zeros((5, 3, 3)) + np.eye(3) * 2)
    segs[0].R[2] = np.nan  # missing frames are not an error
    assert np.isnan(inverse_dynamics(*split(segs), loads).moment[0][2]).all()


def test_public_api_and_numpy_scalars():
    import gaitid

    assert gaitid.inverse_dynamics is inverse_dynamics
    rng = np.random.default_rng(15)
    segs, loads = random_chain(rng, n=3)
    ref = inverse_dynamics(*split(segs), loads)
    segs[0].mass = np.array(segs[0].mass)  # 0-d array
    loads[0].segment = np.int64(0)
    again = inverse_dynamics(*split(segs), loads)
    np.testing.assert_array_equal(again.moment[0], ref.moment[0])
    segs[0].mass = "heavy"
    with pytest.raises(DataError, match="mass"):
        inverse_dynamics(*split(segs), loads)


def test_inputs_are_not_modified():
    rng = np.random.default_rng(13)
    segs, loads = random_chain(rng, n=4)
    before = [s.R.copy() for s in segs], [ld.force_lab.copy() for ld in loads]
    inverse_dynamics(*split(segs), loads, method="block")
    inverse_dynamics(*split(segs), loads)
    for s, r in zip(segs, before[0]):
        np.testing.assert_array_equal(s.R, r)
    for ld, f in zip(loads, before[1]):
        np.testing.assert_array_equal(ld.force_lab, f)


# --- chunking -----------------------------------------------------------------------------

@pytest.mark.parametrize("contributions", [True, False])
def test_chunked_solvers_equal_the_unchunked_ones(contributions):
    from gaitid.dynamics.block import solve_block
    from gaitid.dynamics.recursive import recursive_newton_euler

    rng = np.random.default_rng(14)
    segs, loads = random_chain(rng, n=50)
    segs[1].omega_seg[23] = np.nan  # a NaN frame inside a chunk
    g = np.array([0.0, 0.0, -9.81])
    chain, motion = split(segs)  # both solvers work in the lab frame; frames are expressed after
    whole = recursive_newton_euler(chain, motion, loads, g, contributions, chunk=1000)
    parts = recursive_newton_euler(chain, motion, loads, g, contributions, chunk=7)
    for d_whole, d_parts in zip(whole, parts):
        for p in d_whole:
            for a, b in zip(d_whole[p], d_parts[p]):  # equal up to SIMD rounding
                np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-13)
    whole = solve_block(chain, motion, loads, g, contributions, chunk=1000)
    parts = solve_block(chain, motion, loads, g, contributions, chunk=9)
    for d_whole, d_parts in zip(whole, parts):
        for p in d_whole:
            for a, b in zip(d_whole[p], d_parts[p]):
                np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-12)  # NaN where NaN


# --- the seed's own per-frame formulation (benchmarks/bench_solver.py) ----------------------

def test_seed_style_per_frame_inverse_matches_the_solver():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_solver.py"
    spec = importlib.util.spec_from_file_location("bench_solver", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    chain, motion, loads = bench.gait_like_chain(25, seed=3)
    x = bench.per_frame_loop(chain, motion, loads)  # x = inv(B) rhs, frame by frame, as seed 000 prints it
    out = inverse_dynamics(chain, motion, loads, frame="distal")
    for j in range(3):
        assert rel_err(out.force_lab[j], x[:, 6 * j:6 * j + 3]) < 1e-10
        assert rel_err(out.moment[j], x[:, 6 * j + 3:6 * j + 6]) < 1e-10
