"""Per-frame signals, batch-first over frames: gaps, zero-lag filtering and derivatives.

- :func:`fill_gaps` -- cubic interpolation of short NaN gaps (scipy.interpolate, imported only
  when a gap is filled: a trial without one imports no scipy);
  :func:`bridge_gaps` -- linear, for event-detection signals.
- :func:`butter_lowpass` -- zero-lag 4th-order Butterworth (2nd-order design, run forward and
  back as scipy.signal.filtfilt does; :mod:`gaitid.core.butterworth`), each contiguous non-NaN run
  filtered on its own.
- :func:`derivative` -- central differences (2nd order; one-sided 2nd order at run ends).
  Both derivatives take stacked samples (n, ..., 3) alike: only along frames.
- :func:`second_derivative` -- the compact second difference (centre-of-mass accelerations).
- :func:`runs`, :func:`nan_runs` -- the runs of a mask.

Times in s; ``rate`` in Hz.
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.core.butterworth import butter_sections, default_padlen, zero_phase_filter
from gaitid.core.errors import SettingsError

__all__ = ["fill_gaps", "butter_lowpass", "zero_lag", "nan_runs", "runs", "bridge_gaps", "derivative", "second_derivative"]


def nan_runs(valid: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs [start, stop) where ``valid`` (n,) bool is True."""
    v = np.zeros(len(valid) + 2, bool)  # False on either side: every run has a start and a stop
    v[1:-1] = valid
    edges = np.flatnonzero(v[1:] != v[:-1])  # (np.concatenate and np.diff cost twice this on a trial's frames)
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and stop (exclusive) indices of the runs of True in a 1-D boolean array."""
    v = np.zeros(mask.size + 2, np.int8)  # 0 on either side: every run has a start and a stop
    v[1:-1] = mask
    d = v[1:] - v[:-1]  # (np.concatenate of lists and np.diff cost half again as much on a trial's frames)
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def column_nanmedian(x: np.ndarray) -> np.ndarray:
    """np.nanmedian(x, axis=0) of an (n, k) array (NaN for a column without a number), by one sort:
    along an axis numpy's nanmedian runs column by column in Python, ten times slower on a trial's
    markers."""
    ordered = np.sort(x, axis=0)  # NaN last
    count = np.isfinite(x).sum(axis=0)
    # each column's two middle numbers by (row, column) pairs: np.take_along_axis's result without its
    # index building, which costs more than the sort on a few columns
    columns = np.arange(x.shape[1])
    lo = ordered[np.maximum((count - 1) // 2, 0), columns]
    hi = ordered[count // 2, columns]
    return np.where(count > 0, (lo + hi) / 2, np.nan)


def median(x: np.ndarray) -> float:
    """np.median(x) of a 1-D float array: the same number (NaN when ``x`` holds a NaN or is empty, without
    numpy's warning), by one sort: np.median's argument handling and partition cost 2-7 times numpy's
    sort, from a step's few hundred samples to 100,000 (a partition at one index is faster on random
    numbers but 20 times slower on the many equal samples of an unloaded plate)."""
    n = x.size
    ordered = np.sort(x)  # NaN last
    if n == 0 or np.isnan(ordered[-1]):
        return float("nan")
    h = n // 2
    return float(ordered[h]) if n % 2 else float((ordered[h - 1] + ordered[h]) / 2)


def column_percentiles(x: np.ndarray, q) -> np.ndarray:
    """np.percentile(x, q, axis=0) of an (n, k) array, n >= 1, (len(q), k), numpy's linear interpolation
    term by term (bit for bit, tested; NaN for a column holding one), without its argument handling
    (which costs more than the sort on a step's few hundred frames); each percentile's index and weight
    as Python numbers (numpy's arithmetic on arrays of a few of them cost ten times the sort)."""
    x = np.asarray(x, float)
    n = x.shape[0]
    ordered = np.sort(x, axis=0)  # NaN last
    rows = []
    for p in q:
        virtual = (n - 1) * (float(p) / 100)
        above = virtual >= n - 1
        below = -1.0 if above else float(math.floor(virtual))  # numpy's previous index: -1 (the last) above the end
        a = ordered[n - 1 if above else int(below)]
        b = ordered[n - 1 if above else int(below) + 1]
        gamma, diff = virtual - below, b - a
        rows.append(b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma)
    out = np.array(rows).reshape(len(rows), x.shape[1])
    out[:, np.isnan(ordered[-1])] = np.nan
    return out


def finite_rows(x: np.ndarray) -> np.ndarray:
    """(...) bool: every number along the last axis of ``x`` (..., k) finite: np.isfinite(x).all(axis=-1)
    a column at a time, for a few columns (a reduction over a short last axis runs element by element:
    5x slower on (n, 3))."""
    x = np.asarray(x)
    if x.shape[-1] > 8:  # many columns: numpy's reduction is the faster
        return np.isfinite(x).all(axis=-1)
    out = np.isfinite(x[..., 0]) if x.shape[-1] else np.ones(x.shape[:-1], bool)
    for j in range(1, x.shape[-1]):
        out &= np.isfinite(x[..., j])
    return out


def column_median_above(x: np.ndarray, level: float) -> np.ndarray:
    """``column_nanmedian(x) > level`` of an (n, k) array, (k,) bool, by counting: a column's median
    lies above ``level`` when fewer than half its numbers are at or below it; only a column whose two
    middle numbers straddle ``level`` is sorted (the median of a and b lies between them)."""
    count = np.isfinite(x).sum(axis=0)
    below = (x <= level).sum(axis=0)  # NaN is neither
    out = below <= (count - 1) // 2  # the lower middle number above level (False for an empty column)
    straddle = (below > (count - 1) // 2) & (below <= count // 2)  # lower middle at or below, upper above
    if straddle.any():
        out[straddle] = column_nanmedian(x[:, straddle]) > level
    return out


def bridge_gaps(x: np.ndarray, max_gap: int) -> np.ndarray:
    """Linear interpolation over interior NaN runs of at most ``max_gap`` samples, along axis 0."""
    x = np.array(x, float, copy=True)
    flat = x.reshape(x.shape[0], -1)
    for k in range(flat.shape[1]):
        col = flat[:, k]
        bad = ~np.isfinite(col)
        if not bad.any() or bad.all():
            continue
        good = np.flatnonzero(~bad)
        starts, stops = runs(bad)
        for a, b in zip(starts, stops):
            if a > 0 and b < col.size and b - a <= max_gap:
                col[a:b] = np.interp(np.arange(a, b), good, col[good])
    return flat.reshape(x.shape)


def _as_2d(x: np.ndarray) -> tuple[np.ndarray, tuple]:
    x = np.asarray(x, float)
    return x.reshape(x.shape[0], -1), x.shape


def fill_gaps(x: np.ndarray, max_gap: int = 10) -> np.ndarray:
    """Fill interior NaN gaps of at most ``max_gap`` frames by cubic-spline interpolation.

    ``x`` (n, ...) is treated column by column; a frame counts as missing in a column when
    that column is NaN. Longer gaps and gaps at the ends stay NaN. Returns a new array."""
    if max_gap < 0:
        raise SettingsError(f"max_gap must be >= 0 frames, not {max_gap}")
    flat, shape = _as_2d(x)
    out = flat.copy()
    t = np.arange(flat.shape[0])
    for c in range(flat.shape[1]):
        col = flat[:, c]
        ok = np.isfinite(col)
        if ok.all() or ok.sum() < 4 or max_gap == 0:
            continue
        runs = nan_runs(~ok)
        fill = [(a, b) for a, b in runs if a > 0 and b < len(col) and b - a <= max_gap]
        if not fill:
            continue
        from scipy.interpolate import CubicSpline  # imported when a gap is filled (scipy imports slowly)

        spline = CubicSpline(t[ok], col[ok])
        for a, b in fill:
            out[a:b, c] = spline(t[a:b])
    return out.reshape(shape)


def butter_lowpass(x: np.ndarray, rate: float, cutoff: float | None = 6.0, order: int = 4) -> np.ndarray:
    """Zero-lag low-pass Butterworth of overall order ``order`` (default 4) at ``cutoff`` Hz.

    Design: the Butterworth of order N = order // 2 at cutoff_c (scipy.signal.butter) run forward
    and backward (scipy.signal.filtfilt's odd padding and start states; computed by
    gaitid.butterworth as second-order sections), so the result has zero lag and order
    ``order``. ``cutoff`` is the -3 dB
    frequency of the *double-pass* filter: the single-pass design cutoff is corrected by
    Winter's factor, cutoff_c = cutoff / (2**(1/2) - 1)**(1/(2 N)) for two passes of an
    N-th order design, N = order / 2 (Winter 2009, sec. 3.4.4.3): 1.247 x cutoff for N = 2.
    Each contiguous run of finite frames of each column is filtered separately (NaN stays NaN,
    never smeared); runs shorter than filtfilt's padding are filtered with a shorter pad.
    ``cutoff=None`` returns a copy unchanged.
    """
    if cutoff is None:
        return np.array(x, float, copy=True)
    if rate <= 0:
        raise SettingsError(f"sampling rate must be positive, not {rate}")
    if order < 2 or order % 2:
        raise SettingsError(f"zero-lag Butterworth order must be an even number >= 2, not {order}")
    correction = (2 ** (1 / 2) - 1) ** (1 / (2 * (order // 2)))  # Winter: C = (2^(1/passes) - 1)^(1/(2 n))
    wc = cutoff / correction
    if not 0 < wc < rate / 2:
        raise SettingsError(
            f"cutoff {cutoff} Hz (corrected {wc:.2f} Hz) must lie between 0 and the Nyquist frequency {rate / 2} Hz"
        )
    return zero_lag(x, butter_sections(order // 2, wc, rate), order)


def zero_lag(x: np.ndarray, sections: list, order: int) -> np.ndarray:
    """``x`` (n, ...) through the filter ``sections`` (:mod:`gaitid.core.butterworth`, each pass of
    order ``order`` // 2) forward and backward along axis 0, each finite run of each column alone
    (NaN stays NaN), scipy.signal.filtfilt's odd padding (shorter for a short run)."""
    flat, shape = _as_2d(x)
    out = np.full_like(flat, np.nan)
    default_pad = default_padlen(order // 2)
    finite = np.isfinite(flat)
    # columns sharing a missing-data pattern (x, y, z of a marker; markers seen together) go together
    patterns: dict[bytes, list[int]] = {}
    for c in range(flat.shape[1]):
        patterns.setdefault(np.packbits(finite[:, c]).tobytes(), []).append(c)
    for cols in patterns.values():
        for s, e in nan_runs(finite[:, cols[0]]):
            n = e - s
            block = flat[s:e][:, cols]
            out[s:e, cols] = block if n < 2 else zero_phase_filter(sections, block, min(default_pad, n - 1))
    return out.reshape(shape)


def derivative(x: np.ndarray, rate: float) -> np.ndarray:
    """Time derivative (n, ...) of samples (n, ...) at ``rate`` Hz, along the frame axis 0 only:
    central differences inside each run of frames finite in every column (O(h^2)), 2nd-order
    one-sided differences at run ends (numpy.gradient, edge_order=2). Runs of 1-2 frames give NaN.
    Stacked samples, e.g. (n, samples, 3, 3), are differentiated along the frames, never across two
    samples; a frame with a NaN anywhere in it ends the run for all of them."""
    flat, shape = _as_2d(x)
    out = np.full_like(flat, np.nan)
    finite = finite_rows(flat)
    dt = 1.0 / rate
    for s, e in nan_runs(finite):
        if e - s >= 3:
            _gradient(flat[s:e], dt, out[s:e])
    return out.reshape(shape)


def _gradient(f: np.ndarray, dx: float, out: np.ndarray | None = None) -> np.ndarray:
    """numpy.gradient(f, dx, axis=0, edge_order=2) for uniform spacing, its arithmetic term by term
    (bit for bit, tested), without its argument handling; written into ``out`` (f's shape) when
    given, with no temporary (the uncertainty stage's wide arrays). f has at least 3 rows."""
    if out is None:
        out = np.empty_like(f)
    np.subtract(f[2:], f[:-2], out=out[1:-1])
    out[1:-1] /= 2. * dx
    out[0] = (-1.5 / dx) * f[0] + (2. / dx) * f[1] + (-0.5 / dx) * f[2]
    out[-1] = (0.5 / dx) * f[-3] + (-2. / dx) * f[-2] + (1.5 / dx) * f[-1]
    return out


def second_derivative(x: np.ndarray, rate: float) -> np.ndarray:
    """Second time derivative (n, ...) of samples at ``rate`` Hz inside each finite run: the compact
    central difference (x[i+1] - 2 x[i] + x[i-1]) / h^2 (error h^2 x^(4) / 12, a quarter of that of
    the central difference of central differences, whose stencil is twice as wide; Plug-in Gait's
    stencil, docs/validation.md), 2nd-order one-sided (2 x0 - 5 x1 + 4 x2 - x3) / h^2 at run ends.
    A run of 3 frames gets the central difference of central differences; of 1-2 frames, NaN."""
    flat, shape = _as_2d(x)
    out = np.full_like(flat, np.nan)
    finite = finite_rows(flat)
    h2 = rate * rate
    for s, e in nan_runs(finite):
        if e - s == 3:
            out[s:e] = np.gradient(np.gradient(flat[s:e], axis=0, edge_order=2), axis=0, edge_order=2) * h2
        elif e - s >= 4:
            r, o = flat[s:e], out[s:e]
            o[1:-1] = (r[2:] - 2 * r[1:-1] + r[:-2]) * h2
            o[0] = (2 * r[0] - 5 * r[1] + 4 * r[2] - r[3]) * h2
            o[-1] = (2 * r[-1] - 5 * r[-2] + 4 * r[-3] - r[-4]) * h2
    return out.reshape(shape)

