"""Segment frames: rotation matrices R (n, 3, 3) mapping segment to lab coordinates.

Columns of R are the segment axes in the lab. Plug-in Gait convention for every
lower-limb segment of both sides: x anterior, y left, z proximal (up); the foot is
the exception: z points from the toe back to the ankle, x up, y left.
A frame whose inputs are NaN or degenerate (parallel vectors) is NaN.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.rotation import cross, unit
from gaitid.model.joint_centres import is_left

_AXIS = {"x": 0, "y": 1, "z": 2}


def frame_from_vectors(primary: np.ndarray, secondary: np.ndarray, axes: str = "zy") -> np.ndarray:
    """R (n, 3, 3) whose axis ``axes[0]`` is unit(primary) and axis ``axes[1]`` lies in the
    plane of primary and secondary, on secondary's side. The third axis completes a
    right-handed frame. Vectors (n, 3) in the lab."""
    if len(axes) != 2 or axes[0] == axes[1] or any(a not in _AXIS for a in axes):
        raise ValueError(f"axes must be two different letters of 'xyz', not {axes!r}")
    i, j = _AXIS[axes[0]], _AXIS[axes[1]]
    k = 3 - i - j
    e_i = unit(np.asarray(primary, float))
    sec = np.asarray(secondary, float)
    # right-handed: e_k = e_i x e_j when (i, j, k) is cyclic, else e_j x e_i
    cyclic = (j - i) % 3 == 1
    e_k = unit(cross(e_i, sec) if cyclic else cross(sec, e_i))
    e_j = cross(e_k, e_i) if cyclic else cross(e_i, e_k)
    R = np.empty(e_i.shape[:-1] + (3, 3))
    R[..., :, i], R[..., :, j], R[..., :, k] = e_i, e_j, e_k
    R[~np.isfinite(R).all(axis=(-2, -1))] = np.nan  # a frame is whole or NaN, never partial
    return R


def frame_from_axis_points(origin, x_point, y_point, z_point) -> np.ndarray:
    """R from a segment's origin and three axis points (Plug-in Gait's ``O/A/L/P``).

    Plug-in Gait writes O + L e_x, O + L e_y, O + L e_z (A = anterior x, L = left y,
    P = proximal z). The three directions are re-orthonormalised (z kept, x made normal
    to z) to remove the file's single-precision rounding."""
    o = np.asarray(origin, float)
    return frame_from_vectors(np.asarray(z_point) - o, np.asarray(x_point) - o, "zx")


def rotation_about(axis: str, angle: float | np.ndarray) -> np.ndarray:
    """Elementary rotation matrix (3, 3) (or (n, 3, 3)) about the x, y or z axis, right-handed."""
    a = np.asarray(angle, float)
    c, s = np.cos(a), np.sin(a)
    one, zero = np.ones_like(a), np.zeros_like(a)
    i = _AXIS[axis]
    rows = {
        0: [[one, zero, zero], [zero, c, -s], [zero, s, c]],
        1: [[c, zero, s], [zero, one, zero], [-s, zero, c]],
        2: [[c, -s, zero], [s, c, zero], [zero, zero, one]],
    }[i]
    return np.moveaxis(np.array(rows, float), (0, 1), (-2, -1))


def pelvis_frame(lasi: np.ndarray, rasi: np.ndarray, sacrum: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in Gait pelvis: origin mid-ASIS, y from RASI to LASI, x towards the ASIS from
    the sacrum (SACR or mid-PSIS) made normal to y, z up. Returns (origin (n, 3), R)."""
    origin = (np.asarray(lasi) + np.asarray(rasi)) / 2.0
    return origin, frame_from_vectors(np.asarray(lasi) - np.asarray(rasi), origin - np.asarray(sacrum), "yx")


def limb_frame(proximal_jc: np.ndarray, distal_jc: np.ndarray, lateral_marker: np.ndarray, side: str) -> np.ndarray:
    """Plug-in Gait thigh / shank frame: z from the distal to the proximal joint centre, y towards
    the lateral marker for the left side (away from it for the right: y points left on both sides),
    x = y cross z anterior. Joint centres and marker (n, 3) lab."""
    sign = 1.0 if is_left(side) else -1.0
    distal_jc = np.asarray(distal_jc)
    return frame_from_vectors(np.asarray(proximal_jc) - distal_jc, sign * (np.asarray(lateral_marker) - distal_jc), "zy")


def foot_frame_uncorrected(ankle_jc: np.ndarray, toe: np.ndarray, shank_R: np.ndarray) -> np.ndarray:
    """Plug-in Gait uncorrected foot: z from the toe marker to the ankle centre, y in the plane of
    z and the shank's y axis (ankle flexion axis), x = y cross z (up)."""
    return frame_from_vectors(np.asarray(ankle_jc) - toe, shank_R[..., :, 1], "zy")


def apply_foot_offsets(R_uncorrected: np.ndarray, plantar_flexion: float, rotation: float, side: str) -> np.ndarray:
    """Plug-in Gait corrected foot from the uncorrected one and the static offsets (rad):
    R = R_unc Ry(-plantar_flexion) Rx(-/+rotation) (- left, + right), i.e. Plug-in Gait's
    ``StaticPlantFlex`` / ``StaticRotOff``. Matched to 1e-5 rad on five real PiG files."""
    s = -1.0 if is_left(side) else 1.0
    return R_uncorrected @ rotation_about("y", -plantar_flexion) @ rotation_about("x", s * rotation)


def static_foot_offsets(
    ankle_jc: np.ndarray, toe: np.ndarray, heel: np.ndarray, shank_R: np.ndarray, side: str, flat_foot: bool = True,
    sole_delta: float = 0.0,
) -> tuple[float, float]:
    """Static-trial foot offsets (plantar_flexion, rotation) in rad, Plug-in Gait's ``StaticPlantFlex``
    and ``StaticRotOff``: the corrected foot's z runs from the toe to the heel marker (with
    ``flat_foot`` the heel is lowered to the toe's height plus ``sole_delta`` (m)), its y axis from the
    shank; the offsets are the Y-X Cardan angles of the corrected foot in the uncorrected one,
    averaged over the valid frames."""
    heel = np.array(heel, float)
    if flat_foot:
        heel[:, 2] = toe[:, 2] + sole_delta
    R_unc = foot_frame_uncorrected(ankle_jc, toe, shank_R)
    R_cor = frame_from_vectors(heel - toe, shank_R[..., :, 1], "zy")
    rel = np.swapaxes(R_unc, -1, -2) @ R_cor
    ok = np.isfinite(rel).all(axis=(1, 2))
    if not ok.any():
        return float("nan"), float("nan")
    # rel = Ry(a) Rx(b) Rz(c): a = atan2(rel02... ) via the YXZ decomposition
    r = rel[ok]
    b = np.arcsin(np.clip(-r[:, 1, 2], -1, 1))
    a = np.arctan2(r[:, 0, 2], r[:, 2, 2])
    pf = -float(np.mean(a))
    rot = float(np.mean(b)) * (-1.0 if is_left(side) else 1.0)
    return pf, rot


def progression_frame(origin: np.ndarray, R_segment: np.ndarray, min_travel: float = 0.2) -> np.ndarray:
    """Plug-in Gait's progression frame (n, 3, 3), constant: x along the horizontal lab axis (+/-X or
    +/-Y) the ``origin`` (n, 3) m travelled along most between its first and last finite frames, y
    left, z up (lab Z). When it travelled less than ``min_travel`` m (a static trial) the axis is the
    one closest to the mean facing direction, the segment's x axis. NaN when nothing is finite."""
    n = np.asarray(origin).shape[0]
    ok = np.isfinite(origin).all(axis=1)
    out = np.full((n, 3, 3), np.nan)
    if not ok.any():
        return out
    first, last = np.flatnonzero(ok)[[0, -1]]
    d = origin[last] - origin[first]
    if np.hypot(d[0], d[1]) < min_travel:
        d = np.nanmean(R_segment[..., :, 0], axis=0)
    if not np.isfinite(d[:2]).all():
        return out
    i = int(np.argmax(np.abs(d[:2])))
    fwd = np.zeros(3)
    fwd[i] = np.sign(d[i])
    up = np.array([0.0, 0.0, 1.0])
    out[:] = np.stack([fwd, cross(up, fwd), up], axis=1)
    return out
