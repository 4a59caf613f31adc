"""Static calibrations recomputed for every column: Plug-in Gait's foot offsets.

A landmark or joint-centre error is the same in the static and the walking trial (the marker
stays where it was stuck), so a lab's static calibration was made with it. For each column the
static trial is evaluated with the column's landmark and centre errors (:mod:`gaitid.uncertainty.points`)
and the calibration recomputed; the segments it rotates (the foot) get the change.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import ModelError
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import side_key
from gaitid.model import frames as fr
from gaitid.model.calibration import flat_foot_of
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model
from gaitid.uncertainty.design import Design
from gaitid.uncertainty.points import PerturbedEvaluator, column_offsets, joint_geometry, stacked

STATIC_FRAMES = 20  # frames of the static trial the recalibration of every column uses


def static_corrections(model: Model, design: Design, side: str, static_pts: dict, params: dict,
                       static_trial: Trial) -> dict[str, np.ndarray]:
    """Per segment whose ``rotate`` uses statically calibrated parameters (Plug-in Gait's foot),
    the rotation (C, 3, 3) taking its nominal calibration to each column's: the static
    calibration recomputed on the static trial with the column's landmark and centre errors (on
    STATIC_FRAMES frames spread over it: the calibration is a mean over a standing posture, and
    only its change from the nominal column is used)."""
    if not model.static or static_pts is None:
        return {}
    C = design.n_columns
    n_all = next(iter(static_pts.values())).shape[0]  # a standing trial: STATIC_FRAMES spread over it suffice
    static_pts = {k: v[:: max(1, n_all // STATIC_FRAMES)] for k, v in static_pts.items()}
    cal_params = {k: (0.0 if model.parameters.get(k, {}).get("static") else v) for k, v in params.items()}
    nominal = PointEvaluator(model, static_pts, cal_params, side, {}, static_trial)
    frames = {seg: nominal.segment(seg)[0] for _, _, seg in joint_geometry(model)}
    centres, landmarks = column_offsets(model, design, side, frames, set(static_pts))
    ev = PerturbedEvaluator(model, stacked(static_pts, C, landmarks=landmarks), cal_params, side, static_trial,
                            {k: v.reshape(-1, 3) for k, v in centres.items()}, {})
    n_st = next(iter(static_pts.values())).shape[0]
    new = {}  # parameter -> (C,) change from the nominal column
    for cal_name, spec in model.static.items():
        if spec.get("method", "pig_foot") != "pig_foot":
            raise ModelError(f"static calibration '{cal_name}': uncertainty supports method 'pig_foot' only",
                             model.path)
        names = [k for k, p in model.parameters.items() if p.get("static") == cal_name]
        heel = ev.point(spec["heel"])
        pf, rot = foot_offsets_by_column(ev.point(spec["ankle"]), ev.point(spec["toe"]), heel,
                                         ev.segment(spec["shank"])[0], side, n_st, C,
                                         flat_foot_of(spec, params), float(spec.get("sole_delta", 0.0)))
        if len(names) == 2:
            new[names[0]], new[names[1]] = pf - pf[design.nominal], rot - rot[design.nominal]
    out = {}
    for seg, spec in model.segments.items():
        rots = spec.get("rotate", [])
        if not any(r["param"] in new for r in rots):
            continue
        N, P = np.eye(3), np.broadcast_to(np.eye(3), (C, 3, 3))
        for r in rots:
            sign = float(r.get(side_key(side), 1.0))
            value = float(params[r["param"]])
            N = N @ fr.rotation_about(r["axis"], sign * value)
            P = P @ fr.rotation_about(r["axis"], sign * (value + new.get(r["param"], np.zeros(C))))
        out[seg] = N.T @ P  # (C, 3, 3): nominal rotations undone, the column's applied
    return out


def foot_offsets_by_column(ankle, toe, heel, shank_R, side: str, n: int, C: int, flat_foot: bool,
                           sole_delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Plug-in Gait's static foot offsets (plantar flexion, rotation; rad) of each column, from
    (n C, ...) static-trial arrays: :func:`gaitid.model.frames.static_foot_offsets` averaged per
    column instead of over all rows."""
    heel = np.array(heel, float)
    if flat_foot:
        heel[:, 2] = toe[:, 2] + sole_delta
    R_unc = fr.foot_frame_uncorrected(ankle, toe, shank_R)
    R_cor = fr.frame_from_vectors(heel - toe, shank_R[..., :, 1], "zy")
    rel = (np.swapaxes(R_unc, -1, -2) @ R_cor).reshape(n, C, 3, 3)
    b = np.arcsin(np.clip(-rel[..., 1, 2], -1, 1))  # YXZ decomposition, as static_foot_offsets
    a = np.arctan2(rel[..., 0, 2], rel[..., 2, 2])
    return -np.nanmean(a, axis=0), np.nanmean(b, axis=0) * (-1.0 if side == "Left" else 1.0)
