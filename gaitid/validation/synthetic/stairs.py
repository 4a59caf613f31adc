"""A stair trial: step-over-step ascent or descent of a staircase whose first four
steps stand on force plates, with exact truth.

Unlike the level walk (joint-angle curves first, pelvis path fitted), the stair motion is
prescribed where it touches the world and solved for the joints:

- the staircase (walking along lab +X): step k's tread spans x in [k g, (k+1) g] (g = ``tread``)
  at height z_k = k h (ascent) or (3 - k) h (descent), h = ``riser``; steps 0..3 stand on plates
  1..4, so the plates' surfaces are at 0, h, 2h, 3h (0 to 0.58 m by default), each plate's
  corners and origin at its own height; the staircase continues (without plates) beyond them;
- the feet: the right foot on the even steps, the left on the odd ones. In stance a foot is flat
  on its tread or turns about its front contact (the metatarsal heads, or the step's nosing when
  the toes overhang it); in swing that contact point travels to the step after next on a path
  clearing the nosings, with a pitch curve per direction (ascent: flat landing, heel rise;
  descent: forefoot landing, heel lowered, heel rise). The left foot overhangs its steps by
  ``overhang`` (ascent: its heel behind the nosing; descent: its toes beyond the nosing) while
  the centre of pressure stays on the tread;
- the pelvis: rises (or falls) one riser and advances one tread per step, with sway, tilt,
  obliquity and rotation;
- inverse kinematics gives the hip flexion/adduction, knee flexion and the three ankle angles
  (hip rotation and the knee's varus and rotation are prescribed small curves); every angle is
  then a truncated Fourier series of the stride (``STAIR_HARMONICS``), so the motion, and through
  the RNEA the truth, is exact; the stance foot follows its prescription to a few mm.

Published ranges the default motion falls in (Riener et al. 2002; Protopapadaki et al. 2007):
ascent hip flexion about 60-65 deg at foot contact / swing, knee flexion about 60 deg at contact
and 90-100 deg in swing, ankle plantarflexion about 15-20 deg at toe-off; descent knee flexion
about 85-95 deg in late stance and swing, ankle plantarflexed about 20 deg at contact
(docs/synthetic.md gives the values of the generated motion).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from scipy.spatial.transform import Rotation

from gaitid.core.errors import GaitIDError
from gaitid.validation.synthetic.body import PelvisPath, elementary_rotation
from gaitid.validation.synthetic.fourier import (
    Fourier,
    fourier_from_samples,
    keypoint_samples,
    smoothstep5,
)
from gaitid.validation.synthetic.params import SIDE_SIGN, SIDES, GaitParams, davis_hjc
from gaitid.validation.synthetic.plate_split import (
    SOLE_FRONT,
    SOLE_REAR,
    PlateOutline,
    rectangle_corners,
)
from gaitid.validation.synthetic.scenario import (
    GeneratedTrial,
    GroundModel,
    Scenario,
    Support,
    generate,
)

STAIR_HARMONICS = 16  # harmonics of the stride kept in every stair joint-angle curve
N_SAMPLES = 1024  # samples per stride of the inverse kinematics (before the Fourier fit)
TOE_OUT = np.deg2rad(6.0)  # foot heading outwards (rad)
FOOT_Y = 0.09  # m, lateral position of each foot's line
PLATE_ORIGINS_MM = (np.array([0.8, -1.2, -45.0]), np.array([-1.1, 0.6, -43.0]),
                    np.array([0.4, 1.3, -47.0]), np.array([-0.7, -0.9, -44.0]))


@dataclass(frozen=True)
class StairParams:
    """Stair trial settings (SI). The trial ends during the stance on the last plated step."""

    direction: str = "ascent"
    riser: float = 0.58 / 3.0  # m
    tread: float = 0.29  # m (going)
    plate_width: float = 0.6  # m, along Y (each plate is one tread deep)
    overhang: float = 0.04  # m, how far the left foot's heel (ascent) or toes (descent) overhang the nosing
    stride_time: float = 1.3  # s (cadence 92 steps/min)
    stance_fraction: float = 0.62
    first_strike: float = 0.6  # s, right foot strike on plated step 0
    end_phase: float = 0.4  # the trial ends this far (fraction of stance) into the last plated stance

    def __post_init__(self):
        problems = []
        if self.direction not in ("ascent", "descent"):
            problems.append(f"direction must be 'ascent' or 'descent', not {self.direction!r}")
        if not (0.10 <= self.riser <= 0.22 and 0.22 <= self.tread <= 0.40):
            problems.append(f"riser {self.riser} m / tread {self.tread} m outside 0.10-0.22 / 0.22-0.40 m")
        if not 0.0 <= self.overhang <= 0.08:
            problems.append(f"overhang {self.overhang} m outside 0-0.08 m")
        if not 0.0 < self.end_phase < 1.0:
            problems.append("end_phase must be in (0, 1)")
        if problems:
            raise GaitIDError("invalid stair parameters: " + "; ".join(problems))

    @property
    def sign(self) -> float:
        return 1.0 if self.direction == "ascent" else -1.0

    def step_height(self, k):
        """Height (m) of step k's tread (plated steps k = 0..3)."""
        k = np.asarray(k, float)
        return k * self.riser if self.direction == "ascent" else (3.0 - k) * self.riser


# ------------------------------------------------------------------------- the prescription

# Foot pitch (deg, toes up positive) at fractions of the stride from the foot's strike; piecewise
# quintic between knots (each knot an extremum or the end of a plateau: zero rate there).
PITCH_KNOTS = {
    "ascent": [(0.0, 0.0), (0.30, 0.0), (0.74, -50.0), (1.0, 0.0)],
    "descent": [(0.0, -24.0), (0.14, -4.0), (0.74, -62.0), (1.0, -24.0)],
}


# Swing of the front contact point (w = swing progress 0..1): forward over [x_start, x_end], up or
# down over [z_start, z_end] (quintic steps), plus a clearance bump clear * 64 w^3 (1 - w)^3 (m)
# and a medial excursion of the same shape.
SWING = {
    "ascent": dict(x_start=0.2, x_end=1.0, z_start=0.0, z_end=0.75, clear=0.03, medial=0.03),
    "descent": dict(x_start=0.1, x_end=1.0, z_start=0.2, z_end=1.0, clear=0.03, medial=0.03),
}


def _knot_curve(knots, u):
    """Piecewise-quintic (C2, zero rate at the knots) through (u_k, value_k); u in [0, 1)."""
    uk = np.array([k[0] for k in knots])
    vk = np.array([k[1] for k in knots])
    i = np.clip(np.searchsorted(uk, u, side="right") - 1, 0, len(uk) - 2)
    s, _, _ = smoothstep5((u - uk[i]) / (uk[i + 1] - uk[i]))
    return vk[i] + (vk[i + 1] - vk[i]) * s


def _bump(w):
    """64 w^3 (1 - w)^3: 0 with zero rate and curvature at w = 0 and 1, 1 at w = 1/2."""
    w = np.clip(w, 0.0, 1.0)
    return 64.0 * w**3 * (1.0 - w) ** 3


@dataclass(frozen=True)
class _Geometry:
    sp: StairParams
    gait: GaitParams

    def pivot_local(self, side: str) -> np.ndarray:
        """The foot's front contact point in the foot frame (m): the metatarsal heads, or the point
        above the nosing when the toes overhang it (left foot, descent)."""
        x = SOLE_FRONT
        if side == "L" and self.sp.direction == "descent":
            x = SOLE_FRONT - self.sp.overhang / np.cos(TOE_OUT)
        return np.array([x, 0.0, -self.gait.ankle_height])

    def heading(self, side: str) -> float:
        """Toe-out: the left foot turned towards +Y, the right towards -Y."""
        return SIDE_SIGN[side] * TOE_OUT

    def pivot_lab(self, side: str, k: np.ndarray) -> np.ndarray:
        """(n, 3) lab position of the front contact point of ``side``'s foot flat on step k."""
        sp = self.sp
        k = np.asarray(k, float)
        c, s = np.cos(self.heading(side)), np.sin(self.heading(side))
        xl = self.pivot_local(side)[0]
        if sp.direction == "ascent":  # sole heel 3 cm in front of the nosing, or overhanging it
            heel_gap = -sp.overhang if side == "L" else 0.01
            x = k * sp.tread + heel_gap + (xl - SOLE_REAR) * c
        else:  # metatarsal heads 1 cm behind the nosing, or (left) the sole resting on the nosing
            x = (k + 1.0) * sp.tread + (0.0 if side == "L" else -0.0)
        y = SIDE_SIGN[side] * FOOT_Y + (xl - SOLE_REAR) * s  # FOOT_Y: the sole heel's line
        return np.column_stack([x, np.full_like(x, y), sp.step_height(k)])


def _foot_pose(geo: _Geometry, t: np.ndarray, side: str):
    """Prescribed foot orientation R (n, 3, 3) and ankle centre (n, 3) of ``side`` at times t."""
    sp, g = geo.sp, geo.gait
    T, beta = g.stride_time, g.stance_fraction
    t0 = g.first_strike + (0.0 if side == "R" else T / 2.0)
    j = np.floor((t - t0) / T)
    u = (t - t0) / T - j
    k = 2.0 * j + (0.0 if side == "R" else 1.0)  # the step of this stride's stance
    pitch = np.deg2rad(_knot_curve(PITCH_KNOTS[sp.direction], u))
    P0, P2 = geo.pivot_lab(side, k), geo.pivot_lab(side, k + 2.0)
    w = np.clip((u - beta) / (1.0 - beta), 0.0, 1.0)
    sw = SWING[sp.direction]
    wx, _, _ = smoothstep5((w - sw["x_start"]) / (sw["x_end"] - sw["x_start"]))
    wz, _, _ = smoothstep5((w - sw["z_start"]) / (sw["z_end"] - sw["z_start"]))
    P = P0.copy()
    P[:, 0] += (P2[:, 0] - P0[:, 0]) * wx
    P[:, 1] -= SIDE_SIGN[side] * sw["medial"] * _bump(w)  # the swing foot passes closer to the midline
    P[:, 2] += (P2[:, 2] - P0[:, 2]) * wz + sw["clear"] * _bump(w)
    R = elementary_rotation(2, np.full_like(t, geo.heading(side))) @ elementary_rotation(1, -pitch)
    ajc = P - np.einsum("nij,j->ni", R, geo.pivot_local(side))
    return R, ajc, k


# pelvis: (mean, amplitude, phase in strides) of sinusoids at the stride frequency (obliquity, rotation, sway)
# or the step frequency (tilt, height); angles deg, lengths m. Right-leg cycle.
PELVIS = {
    "ascent": dict(height=0.85, ahead=-0.16, bob=0.01, bob_peak=0.25, sway=0.02, tilt=(11.0, 2.0),
                   obliquity=4.0, rotation=5.0),
    "descent": dict(height=1.052, ahead=0.08, bob=0.01, bob_peak=0.25, sway=0.02, tilt=(8.0, 1.5),
                    obliquity=4.0, rotation=5.0),
}


def _pelvis(sp: StairParams, g: GaitParams):
    """Pelvis path (PelvisPath) and angle curves (rad) of the stair motion."""
    d = PELVIS[sp.direction]
    T = g.stride_time
    def fourier(a0, a=(0.0, 0.0), b=(0.0, 0.0), slope=0.0):
        return Fourier(T, a0, np.array(a, float), np.array(b, float), slope, g.first_strike)

    v = 2.0 * sp.tread / T
    vz = sp.sign * 2.0 * sp.riser / T
    # at the right strike (phase 0) the pelvis stands above the middle of the two stance feet
    x0 = sp.tread * 0.5 + d["ahead"] - v * 0.0
    z0 = float(sp.step_height(0.0)) + d["height"] - vz * 0.0
    path = PelvisPath(
        fourier(x0, slope=v),
        fourier(0.0, a=(0.0, 0.0), b=(-d["sway"], 0.0)),  # toward the right foot in its stance
        # height: the rise is fastest bob_peak (fraction of the stride) after each foot strike
        fourier(z0, a=(0.0, -d["bob"] * np.sin(4.0 * np.pi * d["bob_peak"])),
                b=(0.0, d["bob"] * np.cos(4.0 * np.pi * d["bob_peak"])), slope=vz),
    )
    tilt0, tilt_amp = d["tilt"]
    curves = {
        "pelvis_tilt": fourier(np.deg2rad(tilt0), a=(0.0, np.deg2rad(tilt_amp))),
        "pelvis_obl": fourier(0.0, b=(np.deg2rad(-d["obliquity"]), 0.0)),
        "pelvis_rot": fourier(0.0, a=(np.deg2rad(d["rotation"]), 0.0)),
    }
    return path, curves


# small prescribed curves (deg) at % of the cycle (right leg), as the level-walking key points
STAIR_KEYPOINTS = {
    "hip_rot": [(0, -3), (30, -1), (60, 3), (80, 0)],
    "knee_var": [(0, 1), (30, 2), (60, 3), (80, 2)],
    "knee_rot": [(0, -2), (30, 2), (60, 0), (85, -2)],
}


def _leg_ik(geo: _Geometry, t: np.ndarray, side: str, path: PelvisPath, pelvis_curves: dict,
            fixed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Hip flexion/adduction, knee flexion and ankle angles (rad) placing ``side``'s foot at its
    prescribed pose, given the pelvis and the prescribed hip rotation, knee varus and rotation."""
    g = geo.gait
    s = SIDE_SIGN[side]
    L1, L2 = g.thigh_length, g.shank_length
    Rp = (elementary_rotation(2, pelvis_curves["pelvis_rot"](t)) @ elementary_rotation(0, pelvis_curves["pelvis_obl"](t))
          @ elementary_rotation(1, pelvis_curves["pelvis_tilt"](t)))
    hjc = path(t) + Rp @ davis_hjc(g, side)
    Rf, ajc, _ = _foot_pose(geo, t, side)
    D = ajc - hjc
    dist = np.linalg.norm(D, axis=1)
    var, krot, hrot = fixed["knee_var"], fixed["knee_rot"], fixed["hip_rot"]
    cv = np.cos(var)
    ck = (dist**2 - L1**2 - L2**2) / (2.0 * L1 * L2 * cv)
    if np.any(ck > 1.0) or np.any(ck < -1.0):
        raise GaitIDError(f"stair inverse kinematics: the {side} leg cannot reach its foot "
                          f"(hip-ankle distance {dist.min():.3f}-{dist.max():.3f} m)")
    kf = np.arccos(ck)
    # ankle relative to the hip in the thigh frame (see docs/synthetic.md)
    d = np.column_stack([-L2 * cv * np.sin(kf), -s * L2 * np.sin(var), -L1 - L2 * cv * np.cos(kf)])
    e = np.einsum("nij,nj->ni", elementary_rotation(2, -s * hrot), d)
    q = np.einsum("nji,nj->ni", Rp, D)  # pelvis frame
    Rr = np.hypot(e[:, 1], e[:, 2])
    gam = np.arctan2(e[:, 2], e[:, 1])
    beta = np.arccos(np.clip(q[:, 1] / Rr, -1.0, 1.0)) - gam
    beta2 = -np.arccos(np.clip(q[:, 1] / Rr, -1.0, 1.0)) - gam
    beta = np.where(np.abs(np.angle(np.exp(1j * beta))) < np.abs(np.angle(np.exp(1j * beta2))), beta, beta2)
    beta = np.angle(np.exp(1j * beta))
    wv = e[:, 1] * np.sin(beta) + e[:, 2] * np.cos(beta)
    alpha = np.arctan2(q[:, 0], q[:, 2]) - np.arctan2(e[:, 0], wv)
    alpha = np.angle(np.exp(1j * alpha))
    hip_flex, hip_add = -alpha, -s * beta
    Rt = Rp @ elementary_rotation(1, alpha) @ elementary_rotation(0, beta) @ elementary_rotation(2, -s * hrot)
    Rs = Rt @ elementary_rotation(1, kf) @ elementary_rotation(0, -s * var) @ elementary_rotation(2, -s * krot)
    M = np.einsum("nji,njk->nik", Rs, Rf)
    a, b, c = Rotation.from_matrix(M).as_euler("YXZ").T
    return {"hip_flex": hip_flex, "hip_add": hip_add, "knee_flex": kf, "ankle_dorsi": -a, "ankle_inv": -s * b,
            "ankle_add": -s * c}


def stair_curves(sp: StairParams, g: GaitParams) -> tuple[dict, PelvisPath, dict]:
    """Angle curves (Fourier, rad) of both legs and the pelvis, the pelvis path, and the raw
    inverse-kinematics samples of one stride (for checks)."""
    geo = _Geometry(sp, g)
    path, curves = _pelvis(sp, g)
    T = g.stride_time
    raw = {}
    for side in SIDES:
        t0 = g.first_strike + (0.0 if side == "R" else T / 2.0)
        t = t0 + T * np.arange(N_SAMPLES) / N_SAMPLES
        fixed = {}
        for name, pts in STAIR_KEYPOINTS.items():
            f = fourier_from_samples(keypoint_samples(pts, N_SAMPLES), T, 4)
            curves[f"{side}_{name}"] = f.shifted(t0)
            fixed[name] = curves[f"{side}_{name}"](t)
        ik = _leg_ik(geo, t, side, path, curves, fixed)
        raw[side] = ik
        for name, val in ik.items():
            unwrapped = np.unwrap(val)
            curves[f"{side}_{name}"] = fourier_from_samples(unwrapped, T, STAIR_HARMONICS).shifted(t0)
    return curves, path, raw


def stair_scenario(sp: StairParams | None = None, gait: GaitParams | None = None) -> Scenario:
    """The stair trial's :class:`Scenario` (module doc)."""
    sp = sp or StairParams()
    base = gait or GaitParams()
    T, beta = sp.stride_time, sp.stance_fraction
    last = sp.first_strike + 1.5 * T + sp.end_phase * beta * T  # into the left stance on step 3
    n_frames = int(np.floor(last * base.point_rate)) + 1
    g = replace(base, stride_time=T, stance_fraction=beta, first_strike=sp.first_strike, n_frames=n_frames,
                plated_strike=0)
    curves, path, _ = stair_curves(sp, g)
    plates = []
    for k in range(4):
        z = float(sp.step_height(k))
        corners = rectangle_corners(k * sp.tread, (k + 1) * sp.tread, -sp.plate_width / 2, sp.plate_width / 2, z)
        plates.append(PlateOutline(corners, PLATE_ORIGINS_MM[k]))
    geo = _Geometry(sp, g)
    front = {side: geo.pivot_local(side)[0] - 0.01 for side in SIDES}  # 1 cm behind the front contact
    if sp.direction == "ascent":  # flat landing (COP mid-foot), then towards the front contact as the heel rises
        def cop_x(s, side):
            w, _, _ = smoothstep5((s - 0.1) / 0.5)
            return 0.05 + (front[side] - 0.05) * w
        ground = GroundModel(c2=-0.05, aim_offset=(0.10, 0.0, 0.30), cop_x=cop_x)
    else:  # forefoot landing: the COP stays near the front contact, 4 cm back in mid-stance
        def cop_x(s, side):
            return front[side] - 0.04 * np.sin(np.pi * s) ** 2
        ground = GroundModel(c2=0.12, aim_offset=(0.04, 0.0, 0.30), cop_x=cop_x)

    def support(t, kin, side):
        _, _, k = _foot_pose(geo, t, side)
        tread = np.column_stack([k * sp.tread, (k + 1) * sp.tread, np.full_like(k, -1.0), np.full_like(k, 1.0)])
        return Support(sp.step_height(k), tread)

    return Scenario(f"stairs-{sp.direction}", g, curves, path, plates, ground, support,
                    notes={"riser_m": sp.riser, "tread_m": sp.tread, "direction": sp.direction})


def make_stair_trial(direction: str = "ascent", gait: GaitParams | None = None, **kwargs) -> GeneratedTrial:
    """Generate a stair trial in memory; ``kwargs``: the other :class:`StairParams` fields."""
    return generate(stair_scenario(StairParams(direction=direction, **kwargs), gait))


def write_stairs(path, direction: str = "ascent", gait: GaitParams | None = None, truth: bool = True, **kwargs):
    """Write a stair trial (C3D with four plates at the step heights, truth CSV, events CSV,
    segments JSON; bit-for-bit reproducible). Returns the paths."""
    from gaitid.validation.synthetic.write import write_scenario

    return write_scenario(stair_scenario(StairParams(direction=direction, **kwargs), gait), path, truth=truth)
