"""Subject, gait and model parameters of the synthetic trial, and the Plug-in Gait geometry
(Davis 1991 hip centre, marker offsets, Dempster segment parameters). SI units."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.errors import GaitIDError

G = 9.81  # m/s^2, gravity along lab -Z
GRAVITY_LAB = np.array([0.0, 0.0, -G])
SIDES = ("R", "L")
SIDE_SIGN = {"L": 1.0, "R": -1.0}  # +1 where the lateral direction is +Y
JOINTS = ("ankle", "knee", "hip")
DISTAL = {"ankle": "foot", "knee": "shank", "hip": "thigh"}
SEGMENTS = ("thigh", "shank", "foot")
MARKERS = ("LASI", "RASI", "LPSI", "RPSI", "LTHI", "LKNE", "LTIB", "LANK", "LHEE", "LTOE",
           "RTHI", "RKNE", "RTIB", "RANK", "RHEE", "RTOE")


# ---------------------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GaitParams:
    """Subject, gait and lab parameters of the synthetic trial (SI; widths as measured by PiG)."""

    mass: float = 72.0  # kg
    height: float = 1.75  # m
    leg_length: float = 0.94  # m, ASIS to medial malleolus (PROCESSING:LLegLength/RLegLength)
    knee_width: float = 0.105  # m
    ankle_width: float = 0.070  # m
    inter_asis: float = 0.25  # m
    marker_diameter: float = 0.014  # m
    thigh_length: float = 0.43  # m, HJC to KJC
    shank_length: float = 0.42  # m, KJC to AJC
    ankle_height: float = 0.08  # m, AJC above the sole
    stride_time: float = 1.0  # s (cadence 120 steps/min)
    stance_fraction: float = 0.6  # of the stride
    first_strike: float = 0.1  # s, first right foot strike (on a frame)
    point_rate: float = 100.0  # Hz
    analog_rate: float = 1000.0  # Hz
    n_frames: int = 380  # 3.8 s, 3.7 strides
    plated_strike: int = 1  # the right strike k (0-based) on plate 1; the next left strike on plate 2

    def __post_init__(self):
        problems = []
        if not (self.mass > 0 and self.height > 0 and self.stride_time > 0):
            problems.append("mass, height and stride_time must be positive")
        if not 0.5 < self.stance_fraction < 1.0:
            problems.append(f"stance_fraction {self.stance_fraction} must be in (0.5, 1) (double support)")
        ratio = self.analog_rate / self.point_rate
        if not (self.point_rate > 0 and ratio >= 1 and abs(ratio - round(ratio)) < 1e-9):
            problems.append("analog_rate must be a whole multiple of point_rate")
        end = (self.n_frames - 1) / self.point_rate if self.point_rate > 0 else 0.0
        last_plated = self.first_strike + (self.plated_strike + 0.5 + self.stance_fraction) * self.stride_time
        if last_plated > end:
            problems.append(f"the plated stances end at {last_plated:.3f} s, after the trial's last frame ({end:.3f} s)")
        if problems:
            raise GaitIDError("invalid synthetic gait parameters: " + "; ".join(problems))


# Dempster (via Winter 2009, table 4.1): mass fraction, COM fraction from the proximal end,
# radius of gyration about the COM / length (transverse axes). Longitudinal radii (not in
# Dempster) approximated from de Leva (1996). Foot: length = |AJC -> TOE marker|, COM at
# its midpoint; its long (X) axis gets the longitudinal radius.
DEMPSTER = {
    "thigh": dict(mass=0.100, com=0.433, r_transverse=0.323, r_long=0.150),
    "shank": dict(mass=0.0465, com=0.433, r_transverse=0.302, r_long=0.100),
    "foot": dict(mass=0.0145, com=0.500, r_transverse=0.475, r_long=0.200),
}

# Marker and landmark positions (m) in segment frames, for the RIGHT side (Y mirrored for the left).
FOOT_TOE = np.array([0.15, 0.0, -0.05])  # 2nd metatarsal head marker, from AJC
FOOT_HEE = np.array([-0.065, 0.0, -0.045])  # calcaneus marker, from AJC
SOLE_X = np.linspace(-0.05, 0.17, 23)  # sole contact points (x; z = -ankle_height) heel -> met heads
COP_START, COP_END = -0.04, 0.15  # centre of pressure travel along the sole (foot x, m)
THI_WAND = (0.09, 0.20)  # lateral offset, height above KJC (m), thigh frame
TIB_WAND = (0.08, 0.20)  # lateral offset, height above AJC (m), shank frame
PSIS_X, PSIS_HALF = -0.155, 0.045  # pelvis frame (m): PSIS at (PSIS_X, +-PSIS_HALF, 0)


def segment_parameters(p: GaitParams) -> dict[str, dict]:
    """Inertial parameters of thigh, shank and foot (same both sides).

    Returns per segment: mass (kg), length (m), com_seg (3,) m from the segment origin
    (its proximal joint centre) in the RIGHT segment frame (the foot's Y is 0, so both sides
    share it), inertia_seg (3, 3) kg.m^2 about the COM in the segment frame.
    """
    out = {}
    lengths = {"thigh": p.thigh_length, "shank": p.shank_length, "foot": float(np.linalg.norm(FOOT_TOE))}
    for name, d in DEMPSTER.items():
        m, L = d["mass"] * p.mass, lengths[name]
        it, il = m * (d["r_transverse"] * L) ** 2, m * (d["r_long"] * L) ** 2
        if name == "foot":
            com = d["com"] * FOOT_TOE
            inertia = np.diag([il, it, it])
        else:
            com = np.array([0.0, 0.0, -d["com"] * L])
            inertia = np.diag([it, it, il])
        out[name] = dict(mass=m, length=L, com_seg=com, inertia_seg=inertia)
    return out


def davis_hjc(p: GaitParams, side: str) -> np.ndarray:
    """Hip joint centre (m) in the pelvis frame, Davis et al. (1991) as Plug-in Gait computes it.

    C = 0.115 LL - 15.3 mm, theta = 0.5 rad, beta = 0.314 rad (Vicon's float32 values, 28.4 and 18 deg),
    AsisTrocDist = 0.1288 LL - 48.56 mm,
    r = marker radius; X = C cos(theta) sin(beta) - (AsisTrocDist + r) cos(beta),
    Y = s (inter_asis/2 - C sin(theta)), Z = -C cos(theta) cos(beta) - (AsisTrocDist + r) sin(beta).
    """
    ll = p.leg_length * 1000.0
    c = 0.115 * ll - 15.3
    theta, beta = 0.500000178813934, 0.314000427722931
    atd = 0.1288 * ll - 48.56
    r = p.marker_diameter * 1000.0 / 2.0
    x = c * np.cos(theta) * np.sin(beta) - (atd + r) * np.cos(beta)
    y = SIDE_SIGN[side] * (p.inter_asis * 1000.0 / 2.0 - c * np.sin(theta))
    z = -c * np.cos(theta) * np.cos(beta) - (atd + r) * np.sin(beta)
    return np.array([x, y, z]) / 1000.0


def marker_offsets(p: GaitParams, side: str) -> dict[str, tuple[str, np.ndarray]]:
    """Each marker of one side: (segment, position in that segment's frame from its origin, m)."""
    s = SIDE_SIGN[side]
    knee = (p.knee_width + p.marker_diameter) / 2.0
    ankle = (p.ankle_width + p.marker_diameter) / 2.0
    return {
        f"{side}ASI": ("pelvis", np.array([0.0, s * p.inter_asis / 2.0, 0.0])),
        f"{side}PSI": ("pelvis", np.array([PSIS_X, s * PSIS_HALF, 0.0])),
        f"{side}THI": ("thigh", np.array([0.0, s * THI_WAND[0], -p.thigh_length + THI_WAND[1]])),
        f"{side}KNE": ("thigh", np.array([0.0, s * knee, -p.thigh_length])),
        f"{side}TIB": ("shank", np.array([0.0, s * TIB_WAND[0], -p.shank_length + TIB_WAND[1]])),
        f"{side}ANK": ("shank", np.array([0.0, s * ankle, -p.shank_length])),
        f"{side}HEE": ("foot", FOOT_HEE.copy()),
        f"{side}TOE": ("foot", FOOT_TOE.copy()),
    }
