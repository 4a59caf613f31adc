"""The EMG processing chain: offset, band-pass, full-wave rectification, linear envelope; bad channels.

Each step is a setting (:class:`~gaitid.core.settings.Settings`, docs/emg.md). The filters are
Butterworth, run forward and backward (zero lag), each pass of order ``emg_filter_order`` / 2, with
their corners those of the single-pass design, as ``scipy.signal.butter`` + ``filtfilt`` and most EMG
software give them (the two-pass filter is -6 dB there); they are gaitid's numpy filters
(:mod:`gaitid.core.butterworth`: importing scipy.signal would cost more than the whole EMG stage),
checked against scipy in tests/test_emg.py.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.butterworth import butter_highpass_sections, butter_sections
from gaitid.core.settings import Settings
from gaitid.core.signal import zero_lag

MOSTLY_MISSING = 0.5  # a channel with more than this fraction of its samples NaN is not drawn
SATURATED = 0.01  # a channel with more than this fraction of its samples at its extreme values is clipped


def channel_problem(x: np.ndarray, unit: str) -> str:
    """Why a raw channel ``x`` (n,) is not EMG data to draw ('' if it is): mostly missing, flat
    (constant), or saturated (more than 1 % of its samples on its minimum or maximum: the amplifier's
    or converter's rail)."""
    finite = np.isfinite(x)
    n = x.shape[0]
    if n == 0 or finite.sum() <= MOSTLY_MISSING * n:
        return f"mostly missing ({100.0 * (1 - finite.mean()) if n else 100:.0f} % of its samples NaN)"
    v = x[finite]
    lo, hi = float(v.min()), float(v.max())
    if hi - lo <= 1e-12 * max(abs(lo), abs(hi), 1e-300):
        return f"flat (every sample {lo:.6g} {unit})".rstrip()
    tol = 1e-6 * (hi - lo)
    at_rail = max(np.count_nonzero(v <= lo + tol), np.count_nonzero(v >= hi - tol)) / v.size
    if at_rail > SATURATED:
        return (f"saturated ({100.0 * at_rail:.1f} % of its samples on its extreme {lo:.4g} or {hi:.4g} {unit}; "
                f"lower the amplifier's gain)")
    return ""


def band_pass(x: np.ndarray, rate: float, settings: Settings) -> tuple[np.ndarray, list[str]]:
    """``x`` (n, k) with each column's mean removed, then high-pass at ``emg_highpass_hz`` and low-pass
    at ``emg_lowpass_hz`` (each skipped when None; the low-pass also where not below the Nyquist
    frequency, with a note), zero lag."""
    order = settings.emg_filter_order
    y = x - np.nanmean(x, axis=0)
    notes = []
    if settings.emg_highpass_hz is not None:
        y = zero_lag(y, butter_highpass_sections(order // 2, settings.emg_highpass_hz, rate), order)
    lp = settings.emg_lowpass_hz
    if lp is not None and lp < rate / 2:
        y = zero_lag(y, butter_sections(order // 2, lp, rate), order)
    elif lp is not None:
        notes.append(f"EMG at {rate:g} Hz: no {lp:g} Hz low-pass (not below the Nyquist frequency {rate / 2:g} Hz)")
    return y, notes


def linear_envelope(x: np.ndarray, rate: float, settings: Settings, cutoff: float | None = None) -> np.ndarray:
    """The linear envelope of band-passed ``x`` (n, k): full-wave rectified, then low-pass at
    ``cutoff`` Hz (default ``emg_envelope_hz``; the on-off edges use ``emg_onset_hz``), zero lag."""
    order = settings.emg_filter_order
    fc = settings.emg_envelope_hz if cutoff is None else cutoff
    return zero_lag(np.abs(x), butter_sections(order // 2, fc, rate), order)
