"""The synthetic walking trial and the standing calibration trial, assembled."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaitid.validation.synthetic.body import Frame, PelvisPath, body_kinematics, fit_pelvis_path, marker_trajectories
from gaitid.validation.synthetic.fourier import KEYPOINTS, Fourier, joint_curves, keypoint_samples
from gaitid.validation.synthetic.ground import (
    PLATE_ORIGINS,
    GroundReaction,
    Plate,
    grf_aim,
    ground_reaction,
    plate_channels,
    plate_corners,
)
from gaitid.validation.synthetic.params import DISTAL, SIDES, GaitParams, segment_parameters
from gaitid.validation.synthetic.truth import LegLoads, rnea_leg


@dataclass
class SyntheticTrial:
    """Everything :func:`make_gait_trial` builds (SI, lab frame Z up, X forward).

    time: (n,) s on the Vicon clock (time = (frame - 1) / rate, first frame 1).
    markers: label -> (n, 3) m. kinematics: frames of pelvis and ``{side}_{segment}``.
    grf: side -> exact ground reaction at the point rate (every stance, plated or not).
    plates: the two plates (plate 1 right, plate 2 left). events: (label, context, time s).
    truth: side -> :class:`LegLoads` (twist-wrench RNEA). contact: side -> (n,) 0 swing,
    1 stance on a plate, 2 stance off the plates (its load is not in the C3D).
    """

    params: GaitParams
    time: np.ndarray
    curves: dict[str, Fourier]
    path: PelvisPath
    kinematics: dict[str, Frame]
    markers: dict[str, np.ndarray]
    grf: dict[str, GroundReaction]
    plates: list[Plate]
    events: list[tuple[str, str, float]]
    truth: dict[str, LegLoads]
    contact: dict[str, np.ndarray]
    subject: dict[str, float] = field(default_factory=dict)

    @property
    def segments(self) -> dict[str, dict]:
        return segment_parameters(self.params)

    def joint_centres(self, side: str) -> dict[str, np.ndarray]:
        """HJC, KJC, AJC (n, 3) m lab."""
        k = self.kinematics
        return {"hip": k[f"{side}_thigh"].o, "knee": k[f"{side}_shank"].o, "ankle": k[f"{side}_foot"].o}

    def moment_distal(self, side: str, joint: str) -> np.ndarray:
        """Net internal moment (n, 3) N.m in the distal segment's frame (foot, shank, thigh)."""
        R = self.kinematics[f"{side}_{DISTAL[joint]}"].R
        return np.einsum("nji,nj->ni", R, self.truth[side].moment_lab[joint])


def gait_events(p: GaitParams) -> list[tuple[str, str, float]]:
    """Foot Strike / Foot Off of both sides inside the trial, sorted by time (s, frame-aligned)."""
    end = (p.n_frames - 1) / p.point_rate
    out = []
    for side, ctx in (("R", "Right"), ("L", "Left")):
        t0 = p.first_strike + (0.0 if side == "R" else p.stride_time / 2.0)
        for k in range(-2, int(end / p.stride_time) + 3):
            for label, dt in (("Foot Strike", 0.0), ("Foot Off", p.stance_fraction * p.stride_time)):
                t = round((t0 + k * p.stride_time + dt) * p.point_rate) / p.point_rate
                if 0.0 <= t <= end:
                    out.append((label, ctx, t))
    return sorted(out, key=lambda e: (e[2], e[1]))


def make_gait_trial(p: GaitParams | None = None) -> SyntheticTrial:
    """Build the synthetic walking trial: exact kinematics, markers, plates, events, truth."""
    p = p or GaitParams()
    curves = joint_curves(p)
    path = fit_pelvis_path(p, curves)
    t = np.arange(p.n_frames) / p.point_rate
    kin = body_kinematics(p, t, curves, path)
    markers = marker_trajectories(p, kin)
    grf = {side: ground_reaction(p, t, kin[f"{side}_foot"], side, grf_aim(kin)) for side in SIDES}
    truth = {side: rnea_leg(p, t, curves, path, kin, grf[side], side) for side in SIDES}

    # plates: under the right strike number ``plated_strike`` and the next left strike
    n_an = p.n_frames * int(round(p.analog_rate / p.point_rate))
    ta = np.arange(n_an) / p.analog_rate
    kin_a = body_kinematics(p, ta, curves, path)
    strikes = {"R": p.first_strike + p.plated_strike * p.stride_time}
    strikes["L"] = strikes["R"] + p.stride_time / 2.0
    plates, contact = [], {}
    for i, side in enumerate(SIDES):
        g = ground_reaction(p, ta, kin_a[f"{side}_foot"], side, grf_aim(kin_a))
        stance = (ta >= strikes[side] - 1e-9) & (ta <= strikes[side] + p.stance_fraction * p.stride_time + 1e-9)
        g = GroundReaction(np.where(stance[:, None], g.force, 0.0), np.where(stance[:, None], g.cop, np.nan),
                           np.where(stance[:, None], g.free_moment, 0.0), np.where(stance, g.phase, np.nan))
        cop = g.cop[stance]
        cx = np.round((np.nanmin(cop[:, 0]) + np.nanmax(cop[:, 0])) / 2.0, 3)
        corners = plate_corners(float(cx), 0.0, flipped=(i == 1))
        pl = Plate(corners, PLATE_ORIGINS[i], np.zeros((n_an, 6)), side, g)
        pl.analog = plate_channels(g, pl.R, pl.centre, pl.origin)
        plates.append(pl)
        on_plate = (t >= strikes[side] - 1e-9) & (t <= strikes[side] + p.stance_fraction * p.stride_time + 1e-9)
        c = np.where(np.isnan(grf[side].phase), 0, 2)
        contact[side] = np.where(on_plate & (c == 2), 1, c)
    subject = {
        "Bodymass": p.mass, "Height": p.height * 1000, "LLegLength": p.leg_length * 1000,
        "RLegLength": p.leg_length * 1000, "LKneeWidth": p.knee_width * 1000, "RKneeWidth": p.knee_width * 1000,
        "LAnkleWidth": p.ankle_width * 1000, "RAnkleWidth": p.ankle_width * 1000,
        "InterAsisDistance": p.inter_asis * 1000, "MarkerDiameter": p.marker_diameter * 1000,
    }
    return SyntheticTrial(p, t, curves, path, kin, markers, grf, plates, gait_events(p), truth, contact, subject)


def make_static_trial(p: GaitParams | None = None, n_frames: int = 100) -> dict[str, np.ndarray]:
    """Markers (n, 3) m of a standing calibration trial: pelvis tilted like in walking (mean tilt),
    hips flexed by the same angle so thighs and shanks are vertical, feet flat on the floor,
    facing +X, pelvis origin above the lab origin."""
    p = p or GaitParams()
    t = np.arange(n_frames) / p.point_rate
    tilt = float(np.mean(keypoint_samples(KEYPOINTS["pelvis_tilt"], 512)))
    const = lambda v: Fourier(1.0, v, np.zeros(1), np.zeros(1))  # noqa: E731
    curves = {name: const(0.0) for name in ("pelvis_rot", "pelvis_obl")}
    curves["pelvis_tilt"] = const(tilt)
    for side in SIDES:
        for name in ("hip_add", "hip_rot", "knee_flex", "knee_var", "knee_rot", "ankle_dorsi", "ankle_inv", "ankle_add"):
            curves[f"{side}_{name}"] = const(0.0)
        curves[f"{side}_hip_flex"] = const(tilt)
    kin0 = body_kinematics(p, t[:1], curves, None)
    height = -(kin0["R_foot"].o[0, 2] - p.ankle_height)
    path = PelvisPath(const(0.0), const(0.0), const(height))
    kin = body_kinematics(p, t, curves, path)
    return marker_trajectories(p, kin)
