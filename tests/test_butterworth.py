"""gaitid's numpy versions of the scipy routines it used on every trial (the Butterworth design
and forward-backward filter, the peak finder, the analog decimation window, the binary dilation,
Cardan angles), checked against scipy itself: they exist so that processing a trial does not
import scipy.signal, scipy.ndimage or scipy.spatial (0.6-1.2 s before any work)."""

import numpy as np
import pytest
from scipy.ndimage import binary_dilation, convolve1d
from scipy.signal import butter, filtfilt, find_peaks, sosfiltfilt
from scipy.spatial.transform import Rotation

from gaitid.core import rotation, signal
from gaitid.core.butterworth import butter_sections, zero_phase_filter
from gaitid.core.errors import SettingsError
from gaitid.events.zeni import peaks_apart
from gaitid.io.forceplates import decimate
from gaitid.subject.bodymass import _widen

DESIGNS = [(100, 6.0 / 0.8022), (100, 6.0), (200, 10.0), (1000, 30.0), (120, 50.0), (150, 12.0)]
LENGTHS = [2, 3, 5, 15, 16, 17, 33, 100, 257, 1000, 4999]


def test_sections_are_scipys_butterworth_in_second_order_sections():
    for order in range(1, 9):
        for rate, cutoff in DESIGNS:
            sos = butter(order, cutoff, fs=rate, output="sos")
            # scipy orders its sections by pole radius; compare the set of denominators and the overall gain
            mine = butter_sections(order, cutoff, rate)
            np.testing.assert_allclose(sorted(tuple(np.pad(a, (0, 3 - len(a)))) for _, a in mine),
                                       sorted(tuple(row[3:]) for row in sos), atol=1e-14)
            gain = np.prod([b.sum() / a.sum() for b, a in mine])
            assert gain == pytest.approx(1.0, abs=1e-12)  # a low-pass: unit gain at 0 Hz


@pytest.mark.parametrize("order", [1, 2, 3, 4, 6])
def test_zero_phase_filter_is_scipys_filtfilt_and_sosfiltfilt(order):
    rng = np.random.default_rng(order)
    default_pad = 3 * (order + 1)  # scipy.signal.filtfilt's default: 3 * max(len(a), len(b))
    for rate, cutoff in DESIGNS:
        b, a = butter(order, cutoff, fs=rate)
        sos = butter(order, cutoff, fs=rate, output="sos")
        sections = butter_sections(order, cutoff, rate)
        for n in LENGTHS:
            x = np.cumsum(rng.standard_normal((n, 3)), axis=0)
            pad = min(default_pad, n - 1)
            got = zero_phase_filter(sections, x, pad)
            scale = max(1.0, np.abs(x).max())
            np.testing.assert_allclose(got, sosfiltfilt(sos, x, axis=0, padlen=pad), atol=1e-13 * scale, rtol=0)
            if order <= 2:  # a single section: scipy's (b, a) filter is as exact
                np.testing.assert_allclose(got, filtfilt(b, a, x, axis=0, padlen=pad), atol=1e-13 * scale, rtol=0)


def test_zero_phase_filter_keeps_shape_handles_no_pad_and_rejects_a_pad_too_long():
    x = np.random.default_rng(0).standard_normal((40, 2, 3))
    sections = butter_sections(2, 6.0, 100.0)
    got = zero_phase_filter(sections, x, 0)
    sos = butter(2, 6.0, fs=100.0, output="sos")
    assert got.shape == x.shape
    np.testing.assert_allclose(got, sosfiltfilt(sos, x, axis=0, padlen=0), atol=1e-13)
    with pytest.raises(SettingsError, match="padding of 40 samples"):
        zero_phase_filter(sections, x, 40)
    with pytest.raises(SettingsError, match="Nyquist frequency 50.0 Hz"):
        butter_sections(2, 60.0, 100.0)


def test_butter_lowpass_matches_scipy_per_finite_run():
    """kinematics.butter_lowpass through gaitid.core.butterworth: each finite run of each column
    filtered on its own, as scipy.signal.filtfilt of the Winter-corrected design."""
    rng = np.random.default_rng(3)
    x = np.cumsum(rng.standard_normal((500, 6)), axis=0) * 0.01
    x[100:110, :3] = np.nan
    x[300:302, 4] = np.nan
    got = signal.butter_lowpass(x, 100.0, 6.0, 4)
    wc = 6.0 / (2 ** 0.5 - 1) ** (1 / 4)
    b, a = butter(2, wc, fs=100.0)
    for c in range(6):
        finite = np.flatnonzero(np.isfinite(x[:, c]))
        runs = np.split(finite, np.flatnonzero(np.diff(finite) > 1) + 1)
        for r in runs:
            ref = filtfilt(b, a, x[r, c], padlen=min(9, r.size - 1))
            np.testing.assert_allclose(got[r, c], ref, atol=1e-14)
        assert np.isnan(got[~np.isfinite(x[:, c]), c]).all()


def test_peaks_apart_is_find_peaks_with_distance():
    rng = np.random.default_rng(2)
    for t in range(4000):
        n = int(rng.integers(1, 300))
        x = rng.integers(0, 5, n).astype(float) if t % 2 else rng.standard_normal(n)  # flat tops and ties
        d = int(rng.integers(1, 30))
        np.testing.assert_array_equal(peaks_apart(x, d), find_peaks(x, distance=d)[0])


@pytest.mark.parametrize("factor", [1, 2, 3, 4, 5, 10, 20])
def test_decimate_is_the_centred_window_of_convolve1d(factor):
    rng = np.random.default_rng(factor)
    kernel = np.ones(factor + 1 - factor % 2)
    if factor % 2 == 0:
        kernel[[0, -1]] = 0.5
    for n in (1, 2, 3, 9, 10, 11, 100, 1001):
        x = rng.standard_normal((n, 4)) * 500
        if n > 5:
            x[3, 1] = np.nan  # stays local to the frames whose window holds it
        ref = convolve1d(x, kernel / factor, axis=0, mode="nearest")[::factor]
        got = decimate(x, factor)
        assert got.shape == ref.shape
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        np.testing.assert_allclose(got, ref, atol=1e-12, rtol=0)


def test_the_mass_checks_gradient_is_numpys_bit_for_bit():
    from gaitid.subject.bodymass import _gradient

    rng = np.random.default_rng(8)
    for n in (2, 3, 16, 381, 1249):
        x = rng.normal(size=n).cumsum() * 10.0 ** rng.integers(-3, 4)
        np.testing.assert_array_equal(_gradient(x), np.gradient(x))
        np.testing.assert_array_equal(_gradient(_gradient(x)), np.gradient(np.gradient(x)))


def test_widen_is_a_binary_dilation():
    rng = np.random.default_rng(5)
    for n in (1, 2, 7, 50):
        mask = rng.random(n) < 0.15
        for k in (0, 1, 3, 10):
            ref = binary_dilation(mask, np.ones(2 * k + 1, bool)) if k else mask
            np.testing.assert_array_equal(_widen(mask, k), ref)
            both = np.stack([mask, rng.random(n) < 0.15])  # both feet's masks in one call, row by row
            np.testing.assert_array_equal(_widen(both, k), [_widen(row, k) for row in both])


@pytest.mark.parametrize("sequence", ["YXZ", "YZX", "XYZ", "XZY", "ZXY", "ZYX"])
def test_cardan_angles_are_scipys_intrinsic_euler_angles(sequence):
    R1 = Rotation.random(5000, random_state=1).as_matrix()
    R2 = Rotation.random(5000, random_state=2).as_matrix()
    R2n = R2 + np.random.default_rng(0).normal(0, 1e-6, R2.shape)  # slightly non-orthogonal
    for Rd in (R2, R2n):
        ref = Rotation.from_matrix(np.swapaxes(R1, -1, -2) @ Rd).as_euler(sequence)
        got = rotation.cardan_angles(R1, Rd, sequence)
        away = np.abs(ref[:, 1]) < np.radians(85)  # not near gimbal lock, where the split is arbitrary
        np.testing.assert_allclose(np.angle(np.exp(1j * (got - ref)))[away], 0, atol=1e-12)
    with pytest.raises(Exception, match="three axes"):
        rotation.cardan_angles(R1, R2, "YXY")
