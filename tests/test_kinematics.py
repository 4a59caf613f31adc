"""Gap filling, zero-lag filtering, derivatives, angular velocity from R, Cardan angles.

Reference values are closed forms: polynomials, sinusoids through a known Butterworth
magnitude response, and rotations R(t) = R1(t) R2(t) about a fixed lab axis then a fixed
body axis, whose angular velocity and acceleration are analytic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from gaitid.core import rotation, signal
from gaitid.core.errors import SettingsError
from gaitid.model.frames import rotation_about

# ------------------------------------------------------------------ gaps

def test_fill_gaps_reproduces_a_cubic_and_leaves_long_and_end_gaps_nan():
    t = np.arange(60, dtype=float)
    x = 0.001 * t**3 - 0.05 * t**2 + t + 2.0
    y = x.copy()
    y[10:15] = np.nan  # 5 frames: filled
    y[30:45] = np.nan  # 15 frames: left NaN
    y[:3] = np.nan  # leading gap: left NaN
    out = signal.fill_gaps(y, max_gap=10)
    np.testing.assert_allclose(out[10:15], x[10:15], rtol=1e-9)
    assert np.isnan(out[30:45]).all() and np.isnan(out[:3]).all()
    assert np.isnan(y[10:15]).all(), "input must not be modified"


def test_fill_gaps_works_per_column_of_a_trajectory_array():
    t = np.arange(40, dtype=float)
    traj = np.stack([np.sin(t / 10), np.cos(t / 10), t / 40], axis=1)[:, None, :].repeat(2, axis=1)  # (n, 2, 3)
    holed = traj.copy()
    holed[20:23, 1, :] = np.nan
    out = signal.fill_gaps(holed, 10)
    np.testing.assert_allclose(out[20:23, 1], traj[20:23, 1], atol=2e-4)
    np.testing.assert_array_equal(out[:, 0], traj[:, 0])


def test_fill_gaps_rejects_negative_length():
    with pytest.raises(SettingsError):
        signal.fill_gaps(np.zeros((5, 3)), -1)


# ------------------------------------------------------------------ filtering

@pytest.mark.parametrize("order", [2, 4])
def test_butterworth_cutoff_is_minus_3db_of_the_double_pass(order):
    rate, fc = 1000.0, 6.0
    t = np.arange(0, 20, 1 / rate)
    x = np.sin(2 * np.pi * fc * t)
    y = signal.butter_lowpass(x, rate, fc, order)
    mid = slice(len(t) // 4, 3 * len(t) // 4)  # away from the edges
    gain = np.sqrt(2 * np.mean(y[mid] ** 2))
    assert gain == pytest.approx(1 / np.sqrt(2), abs=0.01)


def test_butterworth_keeps_slow_signals_and_kills_fast_ones():
    rate = 100.0
    t = np.arange(0, 10, 1 / rate)
    slow = 0.3 * np.sin(2 * np.pi * 0.5 * t) + 1.0
    y = signal.butter_lowpass(slow + 0.01 * np.sin(2 * np.pi * 30 * t), rate, 6.0)
    np.testing.assert_allclose(y[50:-50], slow[50:-50], atol=1e-3)


def test_butterworth_filters_runs_separately_without_smearing_nan():
    rate = 100.0
    t = np.arange(200) / rate
    x = np.sin(2 * np.pi * t)
    x[80:100] = np.nan
    y = signal.butter_lowpass(x, rate, 6.0)
    assert np.isnan(y[80:100]).all() and np.isfinite(y[:80]).all() and np.isfinite(y[100:]).all()
    # each run equals the filter applied to that run alone
    np.testing.assert_allclose(y[:80], signal.butter_lowpass(x[:80], rate, 6.0))
    np.testing.assert_allclose(y[100:], signal.butter_lowpass(x[100:], rate, 6.0))


def test_butterworth_none_is_a_copy_and_bad_cutoffs_raise():
    x = np.arange(10.0)
    y = signal.butter_lowpass(x, 100.0, None)
    assert y is not x and np.array_equal(y, x)
    for bad in (0.0, -1.0, 45.0):  # 45 Hz corrected is above Nyquist at 100 Hz
        with pytest.raises(SettingsError):
            signal.butter_lowpass(x, 100.0, bad)
    with pytest.raises(SettingsError):
        signal.butter_lowpass(x, 100.0, 6.0, order=3)


# ------------------------------------------------------------------ derivatives

def test_central_difference_is_second_order():
    errs = []
    for rate in (50, 100, 200, 400):
        t = np.arange(0, 2, 1 / rate)
        d = signal.derivative(np.sin(3 * t), rate)
        errs.append(np.max(np.abs(d[2:-2] - 3 * np.cos(3 * t[2:-2]))))
    slopes = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
    np.testing.assert_allclose(slopes, 2.0, atol=0.05)


def test_second_derivative_is_exact_for_cubics_and_a_quarter_of_the_wide_stencils_error():
    t = np.arange(50) / 100.0
    cubic = np.stack([2 - 3 * t + 4 * t**2 - 5 * t**3, t**2], axis=1)
    np.testing.assert_allclose(signal.second_derivative(cubic, 100.0),
                               np.stack([8 - 30 * t, np.full_like(t, 2.0)], axis=1), atol=1e-8)
    # on a 6 Hz sine the errors are h^2 w^4 / 12 (compact) and h^2 w^4 / 3 (central of central)
    w, t = 2 * np.pi * 6.0, np.arange(200) / 100.0
    x, exact = np.sin(w * t), -w**2 * np.sin(w * t)
    compact = signal.second_derivative(x, 100.0)[5:-5] - exact[5:-5]
    wide = signal.derivative(signal.derivative(x, 100.0), 100.0)[5:-5] - exact[5:-5]
    peak = w**4 / 100.0**2
    assert np.max(np.abs(compact)) == pytest.approx(peak / 12, rel=0.05)
    assert np.max(np.abs(wide)) == pytest.approx(peak / 3, rel=0.05)


def test_second_derivative_works_per_finite_run():
    x = np.arange(20.0) ** 2
    x[[5, 12, 13]] = np.nan  # runs: 0-4 (5 frames), 6-11 (6), 14-19 (6)
    d2 = signal.second_derivative(x, 1.0)
    assert np.isnan(d2[[5, 12, 13]]).all()
    np.testing.assert_allclose(d2[np.isfinite(x)], 2.0, atol=1e-9)
    assert np.isnan(signal.second_derivative(np.array([0.0, 1.0, np.nan, 3.0]), 1.0)).all()  # runs of 1-2


def test_derivative_is_nan_across_gaps_not_zero():
    x = np.arange(20.0) ** 2
    x[8] = np.nan
    d = signal.derivative(x, 1.0)
    assert np.isnan(d[8])
    np.testing.assert_allclose(d[2:7], 2 * np.arange(2, 7))
    np.testing.assert_allclose(d[10:18], 2 * np.arange(10, 18))


def _gait_rotation(t):
    """R(t) = R1(t) R2(t): R1 about the fixed lab axis a by q1, R2 about the body axis b by q2.

    omega_lab = q1' a + q2' R1 b;  alpha_lab = q1'' a + q2'' R1 b + q2' q1' (a x R1 b).
    Amplitudes chosen so the peak |omega| is about 6 rad/s (a swinging shank)."""
    a = np.array([0.2, 1.0, 0.1]) / np.linalg.norm([0.2, 1.0, 0.1])
    b = np.array([0.0, 0.3, 1.0]) / np.linalg.norm([0.0, 0.3, 1.0])
    w1, w2 = 2 * np.pi * 1.0, 2 * np.pi * 2.0
    q1, dq1, ddq1 = 0.9 * np.sin(w1 * t), 0.9 * w1 * np.cos(w1 * t), -0.9 * w1**2 * np.sin(w1 * t)
    q2, dq2, ddq2 = 0.15 * np.sin(w2 * t + 0.5), 0.15 * w2 * np.cos(w2 * t + 0.5), -0.15 * w2**2 * np.sin(w2 * t + 0.5)
    R1 = Rotation.from_rotvec(q1[:, None] * a).as_matrix()
    R2 = Rotation.from_rotvec(q2[:, None] * b).as_matrix()
    R = R1 @ R2
    R1b = R1 @ b
    omega_lab = dq1[:, None] * a + dq2[:, None] * R1b
    alpha_lab = ddq1[:, None] * a + ddq2[:, None] * R1b + (dq1 * dq2)[:, None] * np.cross(a, R1b)
    omega_seg = np.einsum("nji,nj->ni", R, omega_lab)
    alpha_seg = np.einsum("nji,nj->ni", R, alpha_lab)
    return R, omega_seg, omega_lab, alpha_seg, alpha_lab


def test_angular_velocity_below_0_01_rad_s_at_100_hz_for_a_gait_like_rotation():
    rate = 100.0
    t = np.arange(0, 2, 1 / rate)
    R, w_seg, w_lab, _, _ = _gait_rotation(t)
    assert 5.0 < np.linalg.norm(w_lab, axis=1).max() < 7.0
    got_seg, got_lab = rotation.angular_velocity(R, rate)
    inner = slice(1, -1)  # central differences (the two end frames are one-sided)
    assert np.abs(got_seg[inner] - w_seg[inner]).max() < 0.01
    assert np.abs(got_lab[inner] - w_lab[inner]).max() < 0.01
    np.testing.assert_allclose(got_lab, np.einsum("nij,nj->ni", R, got_seg), atol=1e-12)


def test_angular_velocity_and_acceleration_converge_at_second_order():
    errs_w, errs_a = [], []
    rates = (50.0, 100.0, 200.0, 400.0)
    for rate in rates:
        t = np.arange(0, 2, 1 / rate)
        R, w_seg, _, a_seg, _ = _gait_rotation(t)
        got_w, _ = rotation.angular_velocity(R, rate)
        got_a, _ = rotation.angular_acceleration(R, got_w, rate)
        k = int(rate // 10)  # compare away from the ends
        errs_w.append(np.abs(got_w[k:-k] - w_seg[k:-k]).max())
        errs_a.append(np.abs(got_a[k:-k] - a_seg[k:-k]).max())
    for errs in (errs_w, errs_a):
        slopes = np.log2(np.array(errs[:-1]) / np.array(errs[1:]))
        np.testing.assert_allclose(slopes, 2.0, atol=0.15)


def test_angular_velocity_nan_frames_stay_nan():
    rate = 100.0
    R, *_ = _gait_rotation(np.arange(0, 1, 1 / rate))
    R[40:45] = np.nan
    w, _ = rotation.angular_velocity(R, rate)
    assert np.isnan(w[40:45]).all() and np.isfinite(w[:40]).all() and np.isfinite(w[45:]).all()


def test_stacked_samples_are_differentiated_along_frames_each_as_alone():
    """(n, samples, 3, 3) frames (the uncertainty stage's columns) give each sample's own angular
    velocity and acceleration, as one call per sample does, and the analytic values; a frame
    missing in one sample is missing in all (the runs are the frames finite in every sample)."""
    rate = 100.0
    t = np.arange(0, 1.5, 1 / rate)
    parts = [_gait_rotation(t + 0.13 * c) for c in range(4)]
    R = np.stack([p[0] for p in parts], axis=1)  # (n, 4, 3, 3)
    w_seg, w_lab = rotation.angular_velocity(R, rate)
    a_seg, a_lab = rotation.angular_acceleration(R, w_seg, rate)
    assert w_seg.shape == w_lab.shape == a_seg.shape == a_lab.shape == (len(t), 4, 3)
    k = 10  # away from the one-sided ends
    for c, (Rc, ws, wl, as_, al) in enumerate(parts):
        one_w = rotation.angular_velocity(Rc, rate)
        one_a = rotation.angular_acceleration(Rc, one_w[0], rate)
        for got, alone in zip((w_seg, w_lab, a_seg, a_lab), (*one_w, *one_a)):
            np.testing.assert_allclose(got[:, c], alone, rtol=0, atol=1e-12)
        assert np.abs(w_seg[k:-k, c] - ws[k:-k]).max() < 0.01 and np.abs(w_lab[k:-k, c] - wl[k:-k]).max() < 0.01
        assert np.abs(a_seg[k:-k, c] - as_[k:-k]).max() < 0.25 and np.abs(a_lab[k:-k, c] - al[k:-k]).max() < 0.25
    x = R[..., 0]  # (n, 4, 3) vectors: the derivatives' arithmetic is element-wise, so bit for bit
    for f in (signal.derivative, signal.second_derivative):
        stacked = f(x, rate)
        for c in range(4):
            np.testing.assert_array_equal(stacked[:, c], f(x[:, c], rate))
    R[40:45, 2] = np.nan
    w, _ = rotation.angular_velocity(R, rate)
    assert np.isnan(w[40:45]).all() and np.isfinite(w[:40]).all() and np.isfinite(w[45:]).all()


# ------------------------------------------------------------------ angles

def test_cardan_angles_recover_a_yxz_composition():
    q = np.array([[0.3, -0.2, 0.5], [-1.0, 0.4, -0.1]])
    Rp = Rotation.from_euler("z", [[0.7], [-0.3]]).as_matrix()  # arbitrary proximal frames
    Rd = Rp @ np.stack([rotation_about("y", a) @ rotation_about("x", b) @ rotation_about("z", c) for a, b, c in q])
    np.testing.assert_allclose(rotation.cardan_angles(Rp, Rd, "YXZ"), q, atol=1e-12)


def test_plug_in_gait_signs_flexion_positive():
    eye = np.eye(3)[None]
    # knee: the shank's distal end swings back (rotation +0.5 rad about the left y axis) = flexion
    knee = rotation.joint_angles(eye, rotation_about("y", 0.5)[None], "YXZ", (1, 2, 3), (1, -1, -1))
    assert knee[0, 0] == pytest.approx(np.degrees(0.5))
    # hip: the thigh's distal end swings forward (rotation -0.5 rad about y) = flexion
    hip = rotation.joint_angles(eye, rotation_about("y", -0.5)[None], "YXZ", (1, 2, 3), (-1, -1, -1))
    assert hip[0, 0] == pytest.approx(np.degrees(0.5))
    # left hip adduction: the thigh's distal end moves right (-y): rotation +angle about x
    add = rotation.joint_angles(eye, rotation_about("x", 0.2)[None], "YXZ", (1, 2, 3), (-1, -1, -1))
    assert add[0, 1] == pytest.approx(-np.degrees(0.2))  # left side: x rotation of +0.2 is abduction


def test_joint_angular_velocity_is_distal_minus_proximal():
    wp, wd = np.array([[1.0, 2.0, 3.0]]), np.array([[0.5, 2.5, -1.0]])
    np.testing.assert_allclose(rotation.joint_angular_velocity(wp, wd), [[-0.5, 0.5, -4.0]])


def test_orthonormalise_returns_the_nearest_rotation_and_keeps_nan():
    R = rotation_about("z", np.array([0.3, 1.0]))
    noisy = R + 1e-3 * np.array([[[0.5, -0.2, 0.1], [0.3, 0.0, -0.4], [0.2, 0.1, 0.3]]])
    noisy[1] = np.nan
    out = rotation.orthonormalise(noisy)
    np.testing.assert_allclose(out[0].T @ out[0], np.eye(3), atol=1e-12)
    assert np.linalg.det(out[0]) == pytest.approx(1.0)
    assert np.abs(out[0] - R[0]).max() < 2e-3 and np.isnan(out[1]).all()


def test_cross_and_gradient_are_numpys_arithmetic_bit_for_bit():
    """kinematics.cross and the derivative's gradient reproduce numpy.cross and numpy.gradient
    (uniform spacing, edge_order=2) exactly, broadcasting and NaN included: they only skip numpy's
    argument handling."""
    from gaitid.core.rotation import cross
    from gaitid.core.signal import _gradient

    rng = np.random.default_rng(7)
    for sa, sb in [((500, 3), (500, 3)), ((500, 3), (3,)), ((3,), (3,)), ((4, 5, 3), (5, 3)), ((1, 7, 3), (9, 1, 3))]:
        a = rng.normal(size=sa) * 10 ** rng.uniform(-5, 5, size=sa)
        b = rng.normal(size=sb)
        a.flat[0] = np.nan
        ref = np.cross(a, b)
        got = cross(a, b)
        assert got.shape == ref.shape and got.dtype == ref.dtype
        np.testing.assert_array_equal(got, ref)
    with pytest.raises(ValueError):
        cross(np.zeros((4, 2)), np.zeros((4, 2)))
    for n, c in [(3, 1), (4, 9), (381, 27), (1000, 3)]:
        f = rng.normal(size=(n, c)).cumsum(axis=0)
        for dx in (0.01, 1 / 120, 1 / 148.0):
            np.testing.assert_array_equal(_gradient(f, dx), np.gradient(f, dx, axis=0, edge_order=2))


def test_column_nanmedian_is_numpys_nanmedian_along_the_columns():
    import warnings

    from gaitid.core.signal import column_nanmedian

    rng = np.random.default_rng(7)
    for shape in ((101, 7), (100, 4), (1, 3)):
        x = rng.normal(size=shape)
        x[rng.random(shape) < 0.3] = np.nan
        x[:, 0] = np.nan  # a column without a number: NaN, as numpy's
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.nanmedian(x, axis=0)
        np.testing.assert_array_equal(column_nanmedian(x), expected)


def test_norm_is_numpys_bit_for_bit_in_every_layout():
    """rotation.norm adds the 2 or 3 squares in order on larger arrays: numpy.linalg.norm's figures
    exactly, contiguous, strided or transposed, NaN and magnitudes 1e-8 to 1e8 included."""
    rng = np.random.default_rng(11)
    for k in (2, 3):
        for shape in ((5, k), (99, k), (100, k), (1249, k), (381, 4, k), (200, 12, k)):
            v = rng.normal(size=shape) * 10.0 ** rng.integers(-8, 9, size=shape)
            v[rng.random(shape) < 0.02] = np.nan
            for w in (v, v[::3], np.asfortranarray(v), np.ascontiguousarray(np.moveaxis(v, -1, 0)).transpose(
                    *range(1, v.ndim), 0)):
                np.testing.assert_array_equal(rotation.norm(w), np.linalg.norm(w, axis=-1))
                np.testing.assert_array_equal(rotation.norm(w, keepdims=True),
                                              np.linalg.norm(w, axis=-1, keepdims=True))


def test_column_median_above_is_the_sorted_medians_comparison():
    """signal.column_median_above counts instead of sorting: the same answer as column_nanmedian(x) > level
    on columns of odd and even counts, ties at the level, medians straddling it and empty columns."""
    from gaitid.core.signal import column_median_above, column_nanmedian

    rng = np.random.default_rng(5)
    for shape in ((1, 6), (2, 9), (7, 40), (100, 40), (1249, 38)):
        x = np.round(rng.normal(0.8, 0.05, size=shape), 2)  # many values exactly at the level
        x[rng.random(shape) < 0.3] = np.nan
        x[:, 0] = np.nan
        if shape[0] >= 2:
            x[:, 1] = np.nan
            x[:2, 1] = [0.79, 0.82]  # even count, the middle pair straddles: median 0.805 > 0.8
            x[:, 2] = np.nan
            x[:2, 2] = [0.70, 0.90]  # median 0.8: not above
        with np.errstate(all="ignore"):
            expected = column_nanmedian(x) > 0.8
        np.testing.assert_array_equal(column_median_above(x, 0.8), expected)


def test_median_is_numpys_median_bit_for_bit():
    """signal.median partitions at one index: np.median's number, odd and even lengths, ties, infinities,
    a NaN anywhere (NaN) and one sample."""
    from gaitid.core.signal import median

    rng = np.random.default_rng(17)
    for n in (1, 2, 3, 4, 7, 8, 99, 100, 380, 1249, 20001):
        x = rng.normal(size=n) * 10.0 ** rng.integers(-6, 7, size=n)
        samples = [x, np.round(x, 0), np.full(n, 3.5)]
        if n > 3:
            y = x.copy()
            y[rng.integers(n)] = np.inf
            y[rng.integers(n)] = -np.inf
            z = x.copy()
            z[rng.integers(n)] = np.nan
            samples += [y, z]
        for v in samples:
            got = median(v)
            assert isinstance(got, float)
            np.testing.assert_array_equal(got, np.median(v))
    assert np.isnan(median(np.zeros(0)))


def test_finite_rows_is_isfinite_all_along_the_last_axis():
    from gaitid.core.signal import finite_rows

    rng = np.random.default_rng(9)
    for shape in ((0, 3), (7, 1), (500, 2), (500, 3), (2, 300, 8), (4, 0), (50, 27)):
        x = rng.normal(size=shape)
        x[rng.random(shape) < 0.1] = np.nan
        x[rng.random(shape) < 0.05] = np.inf
        np.testing.assert_array_equal(finite_rows(x), np.isfinite(x).all(axis=-1))


def test_column_percentiles_are_numpys_linear_percentiles_bit_for_bit():
    from gaitid.core.signal import column_percentiles

    rng = np.random.default_rng(13)
    for n in (1, 2, 3, 4, 7, 20, 21, 150, 399):
        for k in (1, 2, 3):
            x = np.round(rng.normal(size=(n, k)) * 10.0 ** rng.integers(-3, 4), int(rng.integers(0, 6)))  # ties
            if k == 3:
                x[rng.integers(0, n), 2] = np.nan  # a column with a NaN: NaN, as numpy's
            for q in ([95, 5], [0, 2, 50, 100], list(rng.uniform(0, 100, size=4))):
                np.testing.assert_array_equal(column_percentiles(x, q), np.percentile(x, q, axis=0))


def test_nan_runs_and_runs_are_the_runs_of_true_frame_by_frame():
    """signal.nan_runs and signal.runs against a loop over the frames: every maximal run of True as
    [start, stop), runs touching either end, single frames, an empty mask and one without a True."""
    from gaitid.core.signal import nan_runs, runs

    def by_loop(mask):
        out, start = [], None
        for i, v in enumerate(list(mask) + [False]):
            if v and start is None:
                start = i
            elif not v and start is not None:
                out.append((start, i))
                start = None
        return out

    rng = np.random.default_rng(3)
    masks = [rng.random(n) < p for n in (1, 2, 7, 380) for p in (0.2, 0.5, 0.9)]
    masks += [np.ones(5, bool), np.zeros(5, bool), np.zeros(0, bool), np.array([True, False, True])]
    for mask in masks:
        assert nan_runs(mask) == by_loop(mask)
        starts, stops = runs(mask)
        assert list(zip(starts.tolist(), stops.tolist())) == by_loop(mask)
    assert nan_runs(np.array([1.0, np.nan, 0.0, 2.0])) == [(0, 2), (3, 4)]  # truthiness, as np.asarray(x, bool)
