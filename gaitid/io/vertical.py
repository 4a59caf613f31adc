"""Which lab axis is vertical, and the rotation that makes it +Z (right-handed, a proper rotation).

Detection, in order:

1. Force plates: the ground reaction force on the subject points up, so the
   mean GRF over the loaded samples (|F| above 50 N) of all plates, expressed
   in the file's lab, is nearest to the up axis. Robust to plate sign
   conventions only as far as the file's channels follow the C3D spec.
2. No loaded plate: marker layout. The vertical axis is the one along which
   the labelled markers are spread most within a frame (20th-80th percentile
   range, so a few stray markers do not count; body height beats body width,
   depth and step length), median over frames; its sign is the sign of the
   median marker coordinate along it (labs put the origin on the floor, so
   markers sit on the positive side of the up axis).

The answer is snapped to the nearest signed lab axis (±X, ±Y, ±Z) and
:func:`rotation_to_z_up` gives the 90°/180° rotation ``R`` (file lab -> Z-up lab,
``v_new = R @ v_file``) that turns it into +Z. A file that is already Z-up gets
the identity.
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.core.signal import column_nanmedian, median

LOADED_N = 50.0  # |GRF| above which a plate sample counts as loaded (N)


def up_from_forces(forces_lab: list[np.ndarray]) -> np.ndarray | None:
    """Unit up direction from plate forces ((n, 3) N, file lab), or None without a loaded sample."""
    if not forces_lab:
        return None
    f = np.concatenate(forces_lab, axis=0)
    mag = np.linalg.norm(f, axis=1)
    loaded = np.isfinite(mag) & (mag > LOADED_N)
    if loaded.sum() < 10:
        return None
    mean = f[loaded].mean(axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else None


def up_from_markers(markers: np.ndarray, dominance: float = 1.0, min_markers: int = 3) -> np.ndarray | None:
    """Unit up direction from marker positions (n_frames, n_markers, 3), or None with fewer than
    ``min_markers`` markers, or when the spread along the up axis is not ``dominance`` times the
    next axis's (1: the largest wins)."""
    if markers.ndim != 3 or markers.shape[1] < max(3, min_markers):
        return None
    markers = markers[:: max(1, markers.shape[0] // 50)]  # 50 frames are plenty
    # 20th-80th percentile range per frame and axis, NaN-aware without np.nanpercentile's slow per-row path
    ordered = np.sort(markers, axis=1)  # NaN last
    n_valid = (~np.isnan(markers)).sum(axis=1)  # (n_frames, 3)
    usable = n_valid >= 3
    last = np.maximum(n_valid, 1) - 1  # the last number's index
    lo_i = np.floor(0.2 * last).astype(int)
    hi_i = np.ceil(0.8 * last).astype(int)
    frame, axes = np.arange(markers.shape[0])[:, None], np.arange(3)
    spread = np.where(usable, ordered[frame, hi_i, axes] - ordered[frame, lo_i, axes], np.nan)
    with np.errstate(all="ignore"):  # infinite coordinates
        spread_med = column_nanmedian(spread).tolist()  # NaN for an axis without a usable frame
        if not all(map(math.isfinite, spread_med)):
            return None
        axis = spread_med.index(max(spread_med))  # (the first of equals, as np.argmax)
        if spread_med[axis] < dominance * sorted(spread_med)[-2]:
            return None
        along = markers[:, :, axis]
        along = along[~np.isnan(along)]  # not empty: the axis has usable frames
        sign = np.sign(median(along))  # np.nanmedian's value, without its NaN handling
    if sign == 0 or not np.isfinite(sign):
        sign = 1.0
    up = np.zeros(3)
    up[axis] = sign
    return up


def snap_to_axis(direction: np.ndarray) -> np.ndarray:
    """Nearest signed lab axis to ``direction`` (3,)."""
    axis = int(np.argmax(np.abs(direction)))
    out = np.zeros(3)
    out[axis] = np.sign(direction[axis])
    return out


def rotation_to_z_up(up: np.ndarray) -> np.ndarray:
    """Proper rotation (3, 3), integers, mapping the signed axis ``up`` to +Z (file lab -> Z-up lab).

    +Z: identity; -Z: 180° about X; ±X or ±Y: 90° about ``up × Z``.
    """
    up = snap_to_axis(np.asarray(up, dtype=float))
    z = np.array([0.0, 0.0, 1.0])
    if up[2] == 1:
        return np.eye(3)
    if up[2] == -1:
        return np.diag([1.0, -1.0, -1.0])
    k = np.cross(up, z)  # unit rotation axis; Rodrigues with sin = 1, cos = 0: R = I + K + K^2
    kx = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + kx + kx @ kx


def body_up(markers: np.ndarray) -> np.ndarray | None:
    """The up axis the markers show beyond doubt (a person's: at least 8 markers spread along it
    1.5 times more than along any other axis, median over frames), else None."""
    return up_from_markers(markers, dominance=1.5, min_markers=8)


def detect_up(forces_lab: list[np.ndarray], markers: np.ndarray) -> tuple[np.ndarray, str]:
    """Signed up axis of the file lab and how it was found ('force plates', 'markers' or 'default')."""
    up = up_from_forces(forces_lab)
    if up is not None:
        return snap_to_axis(up), "force plates"
    up = up_from_markers(markers)
    if up is not None:
        return up, "markers"
    return np.array([0.0, 0.0, 1.0]), "default"

