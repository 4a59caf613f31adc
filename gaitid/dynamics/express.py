"""Joint loads in a frame and under a convention: the one place gaitid expresses them.

The solvers compute every joint force and moment in the lab frame under the internal
convention (the load of the proximal on the distal segment). :func:`express` gives such a
vector in another frame and convention; :func:`joint_rotations` says which frame each joint
uses. The solver (:func:`gaitid.dynamics.inverse_dynamics`) and the output tables
(:mod:`gaitid.cycles.outputs`) both use them.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import SettingsError
from gaitid.core.vocabulary import CONVENTIONS, FRAMES
from gaitid.dynamics.types import SegmentMotion


def in_frame(v_lab: np.ndarray, R: np.ndarray | None) -> np.ndarray:
    """R.T v: lab vectors (..., n, 3) in the frame whose segment -> lab rotation is R (n, 3, 3)
    (leading axes share R, e.g. a load's contributions); ``R=None`` is the lab frame itself (v
    returned as is). Computed component by component over frames, the fast layout."""
    if R is None:
        return v_lab
    v = np.moveaxis(np.asarray(v_lab, float), -1, -2)  # (..., 3, n) view
    Rc = np.ascontiguousarray(np.moveaxis(R, 0, -1))  # (3, 3, n): Rc[j, i] = R[:, j, i]
    out = np.empty(v.shape)
    tmp = np.empty(v.shape[:-2] + v.shape[-1:])
    for i in range(3):  # out_i = sum_j R_ji v_j
        o = out[..., i, :]
        np.multiply(Rc[0, i], v[..., 0, :], out=o)
        o += np.multiply(Rc[1, i], v[..., 1, :], out=tmp)
        o += np.multiply(Rc[2, i], v[..., 2, :], out=tmp)
    return np.moveaxis(out, -2, -1)


def convention_sign(convention: str) -> float:
    """+1 for 'internal' (the proximal segment's load on the distal one), -1 for 'external'."""
    if convention not in CONVENTIONS:
        raise SettingsError(f"convention must be one of {', '.join(CONVENTIONS)}, not {convention!r}")
    return 1.0 if convention == "internal" else -1.0


def express(v_internal_lab: np.ndarray, R: np.ndarray | None, convention: str) -> np.ndarray:
    """An internal-convention lab vector (n, 3) in the frame of R (None: lab) under ``convention``."""
    return convention_sign(convention) * in_frame(v_internal_lab, R)


def joint_rotations(motion: list[SegmentMotion], frame: str,
                    proximal_R: np.ndarray | None = None) -> list[np.ndarray | None]:
    """Per joint j (the proximal joint of segment j), the rotation (segment -> lab) of the frame
    its loads are expressed in: None for 'lab'; segment j's R for 'distal' (seed 000's M_A^F,
    M_K^S); segment j+1's R for 'proximal', ``proximal_R`` for the last joint (e.g. the pelvis
    for the hip), else all-NaN (that joint's moments are then NaN: no frame to express them in)."""
    if frame not in FRAMES:
        raise SettingsError(f"frame must be one of {', '.join(FRAMES)}, not {frame!r}")
    k = len(motion)
    if frame == "lab":
        return [None] * k
    if frame == "distal":
        return [m.R for m in motion]
    last = proximal_R if proximal_R is not None else np.full_like(motion[-1].R, np.nan)
    return [motion[j + 1].R for j in range(k - 1)] + [last]
