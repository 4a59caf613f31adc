"""Signal processing and derivatives of segment kinematics, batch-first over frames.

- :func:`fill_gaps` -- cubic interpolation of short NaN gaps (scipy.interpolate);
  :func:`bridge_gaps` -- linear, for event-detection signals.
- :func:`butter_lowpass` -- zero-lag 4th-order Butterworth (2nd-order design, run forward and
  back as scipy.signal.filtfilt does; gaitid.butterworth), each contiguous non-NaN run filtered
  on its own.
- :func:`derivative` -- central differences (2nd order; one-sided 2nd order at run ends).
- :func:`second_derivative` -- the compact second difference (centre-of-mass accelerations).
- :func:`angular_velocity` -- omega from R: vee(R^T dR/dt) (segment frame), R omega (lab).
- :func:`cardan_angles` / :func:`joint_angles` -- Plug-in Gait / ISB joint angles.

R (n, 3, 3) maps segment to lab coordinates throughout. Times in s, angles in rad unless
a name says ``_deg``.
"""

from __future__ import annotations

import numpy as np

from gaitid.butterworth import butter_sections, default_padlen, zero_phase_filter
from gaitid.errors import SettingsError

__all__ = [
    "fill_gaps",
    "butter_lowpass",
    "nan_runs",
    "runs",
    "bridge_gaps",
    "derivative",
    "angular_velocity",
    "angular_acceleration",
    "cardan_angles",
    "joint_angles",
    "joint_angular_velocity",
    "orthonormalise",
    "unit",
    "norm",
    "cross",
]


def nan_runs(valid: np.ndarray) -> list[tuple[int, int]]:
    """Contiguous runs [start, stop) where ``valid`` (n,) bool is True."""
    v = np.concatenate([[False], np.asarray(valid, bool), [False]])
    edges = np.flatnonzero(np.diff(v.astype(np.int8)))
    return list(zip(edges[::2].tolist(), edges[1::2].tolist()))


def runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and stop (exclusive) indices of the runs of True in a 1-D boolean array."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


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


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b along the last axis (..., 3), broadcast: numpy.cross's arithmetic (a1 b2 - a2 b1,
    a2 b0 - a0 b2, a0 b1 - a1 b0, each product rounded, then the difference), bit for bit, without
    its axis handling, which costs more than the product on trial-sized arrays."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"cross: vectors of 3 components expected, got shapes {a.shape} and {b.shape}")
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b, float))
    a0, a1, a2, b0, b1, b2 = a[..., 0], a[..., 1], a[..., 2], b[..., 0], b[..., 1], b[..., 2]
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def norm(v: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """|v| along the last axis: numpy.linalg.norm's sum of squares, bit for bit, without its
    argument handling (which costs more than the sum on trial-sized arrays)."""
    v = np.asarray(v, float)
    return np.sqrt(np.add.reduce(v * v, axis=-1, keepdims=keepdims))


def unit(v: np.ndarray) -> np.ndarray:
    """v / |v| along the last axis; NaN where v is NaN or shorter than 1e-12."""
    v = np.asarray(v, float)
    n = norm(v, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = v / n
    u[~np.isfinite(u).all(axis=-1) | (n[..., 0] < 1e-12)] = np.nan
    return u


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
    sections = butter_sections(order // 2, wc, rate)
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
    """Time derivative (n, ...) of samples at ``rate`` Hz: central differences inside each finite
    run (O(h^2)), 2nd-order one-sided differences at run ends (numpy.gradient, edge_order=2).
    Runs of 1-2 frames give NaN."""
    flat, shape = _as_2d(x)
    out = np.full_like(flat, np.nan)
    finite = np.isfinite(flat).all(axis=1)
    dt = 1.0 / rate
    for s, e in nan_runs(finite):
        if e - s >= 3:
            out[s:e] = _gradient(flat[s:e], dt)
    return out.reshape(shape)


def _gradient(f: np.ndarray, dx: float) -> np.ndarray:
    """numpy.gradient(f, dx, axis=0, edge_order=2) for uniform spacing, its arithmetic term by term
    (bit for bit, tested), without its argument handling; f has at least 3 rows."""
    out = np.empty_like(f)
    out[1:-1] = (f[2:] - f[:-2]) / (2. * dx)
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
    finite = np.isfinite(flat).all(axis=1)
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


def orthonormalise(R: np.ndarray) -> np.ndarray:
    """Nearest rotation matrices (polar decomposition by SVD), NaN frames kept NaN."""
    R = np.asarray(R, float)
    out = np.full_like(R, np.nan)
    ok = np.isfinite(R).all(axis=(-2, -1))
    if ok.any():
        u, _, vt = np.linalg.svd(R[ok])
        d = np.sign(np.linalg.det(u @ vt))
        u[..., :, -1] *= d[..., None]
        out[ok] = u @ vt
    return out


def _vee(W: np.ndarray) -> np.ndarray:
    """vee of a (near) skew matrix (n, 3, 3) -> (n, 3), using its skew part."""
    return 0.5 * np.stack(
        [W[..., 2, 1] - W[..., 1, 2], W[..., 0, 2] - W[..., 2, 0], W[..., 1, 0] - W[..., 0, 1]], axis=-1
    )


def angular_velocity(R: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Angular velocity of a segment from its R (n, 3, 3) sampled at ``rate`` Hz.

    omega_seg = vee(R^T dR/dt) (segment frame), omega_lab = R omega_seg (lab frame), rad/s,
    dR/dt by :func:`derivative` (central differences, O(h^2)); the skew part of R^T dR/dt is
    used. Returns (omega_seg, omega_lab), NaN where R or its neighbours are NaN."""
    R = np.asarray(R, float)
    dR = derivative(R, rate)
    omega_seg = _vee(np.swapaxes(R, -1, -2) @ dR)
    omega_lab = np.einsum("nij,nj->ni", R, omega_seg)
    return omega_seg, omega_lab


def angular_acceleration(R: np.ndarray, omega_seg: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Angular acceleration (rad/s^2): alpha_lab = d(omega_lab)/dt and alpha_seg = R^T alpha_lab.

    (In the segment frame d(omega_seg)/dt equals R^T d(omega_lab)/dt, because
    omega x omega = 0.) Returns (alpha_seg, alpha_lab)."""
    omega_lab = np.einsum("nij,nj->ni", R, omega_seg)
    alpha_lab = derivative(omega_lab, rate)
    alpha_seg = np.einsum("nji,nj->ni", R, alpha_lab)
    return alpha_seg, alpha_lab


def cardan_angles(R_proximal: np.ndarray, R_distal: np.ndarray, sequence: str = "YXZ") -> np.ndarray:
    """Cardan angles (n, 3) rad of the distal frame relative to the proximal one.

    R_rel = R_proximal^T R_distal = R_a(q1) R_b(q2) R_c(q3) for the intrinsic ``sequence`` abc
    (Plug-in Gait / Grood & Suntay / ISB: 'YXZ' = flexion about y, ab-adduction about the
    floating x, rotation about the distal z). NaN frames stay NaN."""
    seq = sequence.upper()
    if len(seq) != 3 or set(seq) - set("XYZ") or len(set(seq)) != 3:
        raise SettingsError(f"Cardan sequence must name the three axes X, Y, Z once each, not {sequence!r}")
    rel = np.swapaxes(R_proximal, -1, -2) @ R_distal
    # the nearest rotation (as scipy's Rotation.from_matrix takes) only where rel is not one already:
    # gaitid's own segment frames are orthonormal to rounding, a file's stored axes may not be
    skew = np.abs(np.swapaxes(rel, -1, -2) @ rel - np.eye(3)).max(axis=(-2, -1)) > 1e-12
    if skew.any():
        rel[skew] = orthonormalise(rel[skew])
    i, j, k = ("XYZ".index(a) for a in seq)
    s = 1.0 if (j - i) % 3 == 1 else -1.0  # +1 for a cyclic order (XYZ, YZX, ZXY)
    # R = R_i(q1) R_j(q2) R_k(q3): R[i, k] = s sin q2; q1 from column k, q3 from row i
    out = np.stack([np.arctan2(-s * rel[..., j, k], rel[..., k, k]),
                    np.arcsin(np.clip(s * rel[..., i, k], -1.0, 1.0)),
                    np.arctan2(-s * rel[..., i, j], rel[..., i, i])], axis=-1)
    return out


def joint_angular_velocity(omega_proximal_lab: np.ndarray, omega_distal_lab: np.ndarray) -> np.ndarray:
    """Joint angular velocity (n, 3) rad/s in the lab: omega_distal - omega_proximal. Joint power
    is moment_lab . this (W), with the moment the proximal segment exerts on the distal one."""
    return np.asarray(omega_distal_lab, float) - np.asarray(omega_proximal_lab, float)


def joint_angles(
    R_proximal: np.ndarray, R_distal: np.ndarray, sequence: str = "YXZ", outputs=(1, 2, 3), signs=(1, 1, 1)
) -> np.ndarray:
    """Joint angles (n, 3) in degrees: the Cardan angles of ``sequence`` (:func:`cardan_angles`),
    re-ordered by ``outputs`` (1-based) and multiplied by ``signs``. Plug-in Gait's hip and knee:
    'YXZ', (1, 2, 3); signs hip left (-1, -1, -1), right (-1, 1, 1); knee left (1, -1, -1),
    right (1, 1, 1); ankle (shank without its tibial torsion, foot axes (-z, y, x)): 'YZX', (1, 3, 2),
    left (-1, 1, -1), right (-1, -1, 1) -- giving flexion (+), adduction (+), internal rotation (+); ankle
    dorsiflexion (+). Matched to the files' LHipAngles... (see docs/plugin-gait.md)."""
    q = cardan_angles(R_proximal, R_distal, sequence)
    order = [i - 1 for i in outputs]
    return np.degrees(q[:, order] * np.asarray(signs, float))
