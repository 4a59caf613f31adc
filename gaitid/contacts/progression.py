"""The direction of progression and the pelvis centre, per frame (gait events, parameters, reports).

:func:`progression_direction` gives the horizontal direction the subject walks per frame. Over
ground it is the pelvis displacement over a +-0.5 s window (so walks in either direction and
gentle turns work); on a treadmill (median pelvis speed below 0.3 m/s) the pelvis forward axis
(mid-ASIS minus mid-PSIS or sacrum), else the mean heel-to-toe direction. The pelvis point is
the mean of the pelvis markers present (:func:`pelvis_centre`). Vectors in the lab frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.signal import bridge_gaps
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.gait_markers import GaitMarkers


def pelvis_centre(trial: Trial, markers: GaitMarkers) -> np.ndarray:
    """(n, 3) m, lab: mean of the pelvis markers present in at least half the frames
    (NaN in frames where one of them is missing)."""
    present = [m for m in markers.pelvis if trial.has_points(m)]
    cover = {m: float(np.isfinite(trial.point(m)[:, 0]).mean()) for m in present}
    present = [m for m in present if cover[m] >= 0.5]
    if not present:
        raise DataError(f"no pelvis marker among {', '.join(markers.pelvis)} with data in half the frames", trial.path)
    return np.mean([trial.point(m) for m in present], axis=0)


def unit_xy(v: np.ndarray) -> np.ndarray:
    """Horizontal unit vectors (..., 3) of v (its Z set to 0), NaN where v is vertical or NaN."""
    v = np.array(v, float, copy=True)
    v[..., 2] = 0.0
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 1e-9, v / n, np.nan)


@dataclass
class Progression:
    """Direction of progression: ``direction_lab`` (n, 3) horizontal unit vectors; ``mode``
    'overground' or 'treadmill'; ``speed`` median horizontal pelvis speed (m/s)."""

    direction_lab: np.ndarray
    mode: str
    speed: float
    notes: list[str] = field(default_factory=list)


def progression_direction(trial: Trial, markers: GaitMarkers, window: float = 0.5,
                          treadmill_speed: float = 0.3) -> Progression:
    """Horizontal direction of progression per frame (see the module docstring)."""
    rate = trial.point_rate
    p = bridge_gaps(pelvis_centre(trial, markers), max_gap=trial.n_frames)
    valid = np.flatnonzero(np.isfinite(p[:, 0]))
    if valid.size < 2:
        raise DataError("pelvis markers missing in (almost) every frame: no direction of progression", trial.path)
    # constant extrapolation beyond the first/last valid frame
    p[: valid[0]] = p[valid[0]]
    p[valid[-1] + 1:] = p[valid[-1]]
    n = trial.n_frames
    h = max(1, int(round(window * rate)))
    i = np.arange(n)
    disp = p[np.minimum(i + h, n - 1)] - p[np.maximum(i - h, 0)]
    span_t = (np.minimum(i + h, n - 1) - np.maximum(i - h, 0)) / rate
    vel = np.diff(p[valid[0]: valid[-1] + 1, :2], axis=0) * rate
    speed = float(np.median(np.linalg.norm(vel, axis=1))) if vel.size else 0.0
    speed_win = np.linalg.norm(disp[:, :2], axis=1) / np.maximum(span_t, 1e-9)
    if np.nanmedian(speed_win) >= treadmill_speed:
        d = unit_xy(disp)
        # frames where the pelvis pauses: hold the nearest defined direction
        bad = ~np.isfinite(d[:, 0]) | (speed_win < 0.1 * treadmill_speed)
        if bad.all():
            raise DataError("the pelvis does not move: no direction of progression", trial.path)
        if bad.any():
            good = np.flatnonzero(~bad)
            nearest = good[np.clip(np.searchsorted(good, i), 0, good.size - 1)]
            d[bad] = d[nearest[bad]]
        return Progression(d, "overground", speed)
    notes = []
    front = [m for m in markers.pelvis_front if trial.has_points(m)]
    back = [m for m in markers.pelvis_back if trial.has_points(m)]
    fwd = None
    if front and back:
        v = np.mean([trial.point(m) for m in front], axis=0) - np.mean([trial.point(m) for m in back], axis=0)
        fwd = np.nanmean(unit_xy(v), axis=0)
        notes.append("treadmill: direction from the pelvis forward axis")
    if fwd is None or not np.all(np.isfinite(fwd)):
        vs = []
        for s in SIDES:
            f = markers.foot(s)
            if trial.has_points(f.heel, f.toe):
                vs.append(unit_xy(trial.point(f.toe) - trial.point(f.heel)))
        if not vs:
            raise DataError("treadmill trial without pelvis or foot markers: no direction of progression", trial.path)
        fwd = np.nanmean(np.concatenate(vs), axis=0)
        notes.append("treadmill: direction from the heel-to-toe axes")
    fwd = unit_xy(fwd)
    return Progression(np.broadcast_to(fwd, (n, 3)).copy(), "treadmill", speed, notes)
