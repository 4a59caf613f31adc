"""Vectors and rotations per frame, batch-first: the batched cross product and norms, rotation
matrices' angular velocity and acceleration, joint (Cardan) angles.

- :func:`cross`, :func:`norm`, :func:`unit` -- numpy's arithmetic without its per-call overhead
  (used by the reader, the model, the solver and the loads).
- :func:`angular_velocity` -- omega from R: vee(R^T dR/dt) (segment frame), R omega (lab).
- :func:`cardan_angles` / :func:`joint_angles` -- Plug-in Gait / ISB joint angles.

R (n, 3, 3) maps segment to lab coordinates throughout (the angular velocity and acceleration
also take stacked samples (n, ..., 3, 3), frames first). Times in s, angles in rad unless
a name says ``_deg``.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import SettingsError
from gaitid.core.signal import derivative

__all__ = ["angular_velocity", "angular_acceleration", "cardan_angles", "joint_angles", "joint_angular_velocity",
           "orthonormalise", "unit", "norm", "cross"]


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b along the last axis (..., 3), broadcast: numpy.cross's arithmetic (a1 b2 - a2 b1,
    a2 b0 - a0 b2, a0 b1 - a1 b0, each product rounded, then the difference), bit for bit, without
    its axis handling, which costs more than the product on trial-sized arrays."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"cross: vectors of 3 components expected, got shapes {a.shape} and {b.shape}")
    shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)  # (pure Python, costly)
    out = np.empty(shape, np.result_type(a, b, float))
    a0, a1, a2, b0, b1, b2 = a[..., 0], a[..., 1], a[..., 2], b[..., 0], b[..., 1], b[..., 2]
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def norm(v: np.ndarray, keepdims: bool = False) -> np.ndarray:
    """|v| along the last axis: numpy.linalg.norm's sum of squares, bit for bit, without its
    argument handling (which costs more than the sum on trial-sized arrays)."""
    v = np.asarray(v, float)
    k = v.shape[-1] if v.ndim else 0
    if v.ndim < 2 or not 2 <= k <= 3 or v.size < 300:  # few vectors: one reduction is cheaper
        return np.sqrt(np.add.reduce(v * v, axis=-1, keepdims=keepdims))
    # 2 or 3 components: their squares added in order, as add.reduce does (bit for bit, tested), at a
    # third of its cost (a reduction over a short last axis runs element by element)
    s = v[..., 0] * v[..., 0]
    for j in range(1, k):
        s += v[..., j] * v[..., j]
    np.sqrt(s, out=s)
    return s[..., None] if keepdims else s


def unit(v: np.ndarray) -> np.ndarray:
    """v / |v| along the last axis; NaN where v is NaN or shorter than 1e-12."""
    v = np.asarray(v, float)
    n = norm(v, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = v / n
    u[~np.isfinite(u).all(axis=-1) | (n[..., 0] < 1e-12)] = np.nan
    return u


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
    used. Returns (omega_seg, omega_lab), each (n, 3), NaN where R or its neighbours are NaN.
    Stacked samples R (n, ..., 3, 3) give (n, ..., 3), differentiated along the frames only."""
    R = np.asarray(R, float)
    dR = derivative(R, rate)
    omega_seg = _vee(np.swapaxes(R, -1, -2) @ dR)
    omega_lab = np.einsum("...ij,...j->...i", R, omega_seg)
    return omega_seg, omega_lab


def angular_acceleration(R: np.ndarray, omega_seg: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray]:
    """Angular acceleration (rad/s^2): alpha_lab = d(omega_lab)/dt and alpha_seg = R^T alpha_lab.

    (In the segment frame d(omega_seg)/dt equals R^T d(omega_lab)/dt, because
    omega x omega = 0.) R (n, 3, 3) or stacked (n, ..., 3, 3), omega_seg (n, [...,] 3) as
    :func:`angular_velocity` gives it. Returns (alpha_seg, alpha_lab), each shaped as omega_seg."""
    omega_lab = np.einsum("...ij,...j->...i", R, omega_seg)
    alpha_lab = derivative(omega_lab, rate)
    alpha_seg = np.einsum("...ji,...j->...i", R, alpha_lab)
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

