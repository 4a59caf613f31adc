"""A synthetic gait trial with exact ground truth (issue 4): known motion -> C3D + joint loads.

A pelvis-thigh-shank-foot model of both legs walks along lab +X (Z up, Y left) at about
1.2 m/s for 3.5 strides. Everything is analytic, so every position, velocity and
acceleration is exact (no finite differences anywhere):

- Joint angles (hip, knee, ankle: flexion, ab/adduction, rotation; pelvis tilt, obliquity,
  rotation) are truncated, tapered Fourier series (8 harmonics of the stride) of textbook
  normal-gait curves (key points below, Perry/Winter-like); the ankle flexion follows from a
  foot-floor pitch curve (flat foot in mid-stance); the left leg lags half a cycle.
- Rotations are products of elementary rotations; angular velocity and acceleration come
  from the exact chain rule  omega = sum_k u_k q_k',  alpha = sum_k (u_k q_k'' + omega_<k x u_k q_k')
  with u_k the k-th axis in the lab.
- The pelvis translation is a Fourier series (plus constant speed) fitted so that the stance
  foot rolls on the floor without sliding (its lowest sole point has zero velocity) and
  touches z = 0; the fit is smooth, so contact is realistic to a few mm, not exact.
- Ground reaction: during each stance a double-hump vertical force (peaks 1.13 BW; the stride's
  vertical impulse equals body weight x time), braking/propulsive shear, small medial force and
  free moment; the centre of pressure moves from heel to metatarsal heads along the sole,
  projected onto the floor (z = 0). Trunk and arms are not modelled.
- Ground truth: ankle, knee and hip reaction forces and net internal moments from the
  twist-wrench recursive Newton-Euler of :mod:`gaitid.multibody.screw` (seed 003 eqs
  9.53-9.57) applied to a 15-joint screw chain (3 prismatic + 12 revolute) per leg;
  :func:`newton_euler_leg` is a plain distal-to-proximal Newton-Euler cross-check.

Segment frames (all segments, both sides, as Plug-in Gait): X anterior, Y to the LEFT,
Z up/proximal; they coincide with the lab axes when every angle is zero (standing
upright facing +X). ``R`` maps segment to lab. Origins: pelvis mid-ASIS, thigh HJC,
shank KJC, foot AJC. Joint angles (Cardan, proximal to distal frame):
hip  R_thigh = R_pelvis Ry(-flex) Rx(-s add) Rz(-s int_rot),
knee R_shank = R_thigh  Ry(+flex) Rx(-s varus) Rz(-s int_rot),
ankle R_foot = R_shank  Ry(-dorsi) Rx(-s inversion) Rz(-s adduction),
pelvis R_pelvis = Rz(rotation) Rx(obliquity) Ry(anterior tilt), with s = +1 left, -1 right.

Plug-in Gait geometry: HJC from Davis et al. (1991) as Plug-in Gait computes it (leg length,
inter-ASIS distance, marker radius, pelvis frame); KNE on the knee flexion axis (thigh Y)
(knee width + marker diameter)/2 lateral to the KJC, ANK likewise on the shank Y axis with
ankle width; THI and TIB in the segment's frontal (Y-Z) plane, so the PiG chord rule
reconstructs KJC and AJC exactly. Units: SI inside; the C3D stores mm and N, N.mm.

Run ``python -m gaitid.synthetic OUTDIR`` to write ``walk_synthetic.c3d``,
``walk_synthetic_truth.csv`` and ``static_synthetic.c3d`` (bit-for-bit reproducible).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from gaitid.errors import GaitIDError

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
        if not (self.mass > 0 and self.height > 0 and self.n_frames > 10):
            raise GaitIDError(f"invalid synthetic gait parameters: {self}")


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


# ---------------------------------------------------------------------------------------
# Periodic curves
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Fourier:
    """f(t) = a0 + slope t + sum_k a_k cos(k w t) + b_k sin(k w t), w = 2 pi / period; exact derivatives."""

    period: float
    a0: float
    a: np.ndarray
    b: np.ndarray
    slope: float = 0.0
    shift: float = 0.0  # evaluates f(t - shift)

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        t = np.asarray(t, float) - self.shift
        w = 2.0 * np.pi / self.period
        k = np.arange(1, len(self.a) + 1)
        kw = k * w
        ph = np.outer(t, kw)
        c, s = np.cos(ph), np.sin(ph)
        # d-th derivative of cos/sin: rotate by d quarter turns
        if d == 0:
            val = c @ self.a + s @ self.b + self.a0 + self.slope * t
        elif d == 1:
            val = (-s * kw) @ self.a + (c * kw) @ self.b + self.slope
        elif d == 2:
            val = (-c * kw**2) @ self.a + (-s * kw**2) @ self.b
        else:
            raise ValueError("Fourier derivative order must be 0, 1 or 2")
        return val

    def shifted(self, dt: float) -> "Fourier":
        return Fourier(self.period, self.a0, self.a, self.b, self.slope, self.shift + dt)


def fourier_from_samples(values: np.ndarray, period: float, n_harmonics: int, taper: float | None = None,
                         slope: float = 0.0) -> Fourier:
    """Truncated Fourier series of ``values`` sampled uniformly over one period (least squares = DFT).

    ``taper``: harmonic k is multiplied by exp(-(k / taper)^2 / 2) (a Gaussian smoothing that keeps
    the spectrum of the motion realistic, so finite differences at 100 Hz stay accurate).
    Coefficients are rounded to 1e-12 so the curves are reproducible bit-for-bit.
    """
    n = len(values)
    c = np.fft.rfft(values) / n
    k = np.arange(1, n_harmonics + 1)
    w = np.ones(n_harmonics) if taper is None else np.exp(-0.5 * (k / taper) ** 2)
    a = 2.0 * c.real[1 : n_harmonics + 1] * w
    b = -2.0 * c.imag[1 : n_harmonics + 1] * w
    r = lambda x: np.round(x, 12)  # noqa: E731
    return Fourier(period, float(r(c.real[0])), r(a), r(b), slope)


def _keypoint_samples(points: list[tuple[float, float]], n: int) -> np.ndarray:
    """Periodic cubic spline through (percent of cycle, degrees) key points, sampled at
    ``n`` uniform phases from 0 (radians)."""
    pc = np.array([q[0] for q in points] + [points[0][0] + 100.0], float)
    val = np.array([q[1] for q in points] + [points[0][1]], float)
    spline = CubicSpline(pc, np.deg2rad(val), bc_type="periodic")
    return spline(np.mod(100.0 * np.arange(n) / n - pc[0], 100.0) + pc[0])


# Spectrum of the motion: 8 harmonics of the stride (8 Hz) with a Gaussian taper (width 5) for the
# joint angles, 7 untapered harmonics for the pelvis path. Richer spectra make the no-slip fit
# tighter but push the O(h^2) error of 100 Hz finite differences above 0.01 N.m/kg at the hip.
N_HARMONICS = 8  # harmonics kept in every joint-angle curve
ANGLE_TAPER = 5.0  # Gaussian taper width (harmonics) of the joint-angle curves
PATH_HARMONICS = 7  # harmonics of the pelvis translation
PATH_TAPER = None

# Normal-gait joint angles (deg) at % of the gait cycle from foot strike (Perry 1992 / Winter 2009 shapes).
KEYPOINTS = {
    "hip_flex": [(0, 27), (10, 25), (20, 19), (30, 11), (40, 2), (50, -7), (56, -10), (62, -2),
                 (70, 14), (80, 27), (88, 30), (95, 29)],
    "hip_add": [(0, 1), (12, 6), (30, 4), (50, -1), (62, -6), (72, -7), (85, -2)],
    "hip_rot": [(0, 3), (25, 4), (50, -2), (65, -5), (85, 1)],
    "knee_flex": [(0, 4), (6, 11), (14, 18), (22, 15), (32, 8), (42, 4), (50, 7), (56, 15),
                  (62, 33), (68, 55), (73, 60), (80, 50), (88, 25), (95, 6)],
    "knee_var": [(0, 1), (20, 2), (50, 1), (72, 4), (90, 1)],
    "knee_rot": [(0, 1), (20, 4), (50, 2), (70, -4), (90, -1)],
    "ankle_inv": [(0, 3), (15, -3), (40, -2), (60, 4), (80, 3)],
    "ankle_add": [(0, 0), (30, -2), (60, 2), (80, 1)],
    # pelvis, in the right leg's cycle
    "pelvis_tilt": [(0, 10), (20, 11.5), (30, 10.5), (50, 10), (70, 11.5), (80, 10.5)],
    "pelvis_obl": [(0, 0), (12, -3), (30, -1.5), (50, 0), (62, 3), (80, 1.5)],
    "pelvis_rot": [(0, 5), (25, 0), (50, -5), (75, 0)],
}


# Desired foot-floor pitch (deg, toes up positive): heel strike, foot flat 10-40 %, heel rise, toe off at 60 %.
FOOT_PITCH = [(0, 12), (4, 6), (9, 1), (12, 0), (38, 0), (44, -4), (50, -14), (55, -31), (60, -58),
              (65, -70), (72, -54), (80, -22), (88, 2), (94, 14)]


def joint_curves(p: GaitParams) -> dict[str, Fourier]:
    """Angle curves (rad vs time) per ``{side}_{name}`` and ``pelvis_*``; right strikes at ``first_strike``.

    The ankle dorsiflexion is not a key-point curve: it is derived from a desired foot-floor
    pitch (``FOOT_PITCH``, toes up positive) so that the foot is flat in mid-stance:
    dorsi = pitch + tilt - hip_flex + knee_flex (the sagittal rotation sum, mean pelvis tilt).
    """
    out = {}
    n = 512
    samples = {name: _keypoint_samples(pts, n) for name, pts in KEYPOINTS.items()}
    tilt = float(np.mean(samples["pelvis_tilt"]))
    samples["ankle_dorsi"] = (_keypoint_samples(FOOT_PITCH, n) + tilt - samples["hip_flex"] + samples["knee_flex"])
    for name, val in samples.items():
        f = fourier_from_samples(val, p.stride_time, N_HARMONICS, ANGLE_TAPER)
        if name.startswith("pelvis"):
            out[name] = f.shifted(p.first_strike)
        else:
            out[f"R_{name}"] = f.shifted(p.first_strike)
            out[f"L_{name}"] = f.shifted(p.first_strike + p.stride_time / 2.0)
    return out


# ---------------------------------------------------------------------------------------
# Rigid-body kinematics (exact)
# ---------------------------------------------------------------------------------------


def elementary_rotation(axis: int, angle: np.ndarray) -> np.ndarray:
    """(n, 3, 3) rotation by ``angle`` (rad) about coordinate axis 0/1/2 (right-handed)."""
    c, s = np.cos(angle), np.sin(angle)
    R = np.zeros(angle.shape + (3, 3))
    i, j = (axis + 1) % 3, (axis + 2) % 3
    R[..., axis, axis] = 1.0
    R[..., i, i] = c
    R[..., j, j] = c
    R[..., j, i] = s
    R[..., i, j] = -s
    return R


@dataclass
class Frame:
    """Exact motion of one rigid frame: R (n,3,3) segment->lab, origin o/v/a (n,3) lab,
    omega/alpha (n,3) lab (rad/s, rad/s^2)."""

    R: np.ndarray
    o: np.ndarray
    v: np.ndarray
    a: np.ndarray
    omega: np.ndarray
    alpha: np.ndarray

    def point(self, r_seg: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Position, velocity, acceleration (lab) of the point fixed at ``r_seg`` (3,) in this frame."""
        r = self.R @ r_seg
        w = self.omega
        return (self.o + r, self.v + np.cross(w, r),
                self.a + np.cross(self.alpha, r) + np.cross(w, np.cross(w, r)))

    def child(self, r_seg: np.ndarray, rotations: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]) -> "Frame":
        """Frame at point ``r_seg`` of this one, turned by successive elementary rotations
        (axis, q, q', q'') about the current axes: omega = sum u_k q_k',
        alpha = sum (u_k q_k'' + omega_<k x u_k q_k')."""
        o, v, a = self.point(r_seg)
        R, w, al = self.R, self.omega, self.alpha
        for axis, q, qd, qdd in rotations:
            u = R[:, :, axis]
            al = al + u * qdd[:, None] + np.cross(w, u) * qd[:, None]
            w = w + u * qd[:, None]
            R = R @ elementary_rotation(axis, q)
        return Frame(R, o, v, a, w, al)


def _angles(curves: dict[str, Fourier], t: np.ndarray, names: list[tuple[str, float]], axes=(1, 0, 2)):
    """[(axis, q, q', q'')] for Cardan Y-X-Z rotations from curve names with signs."""
    out = []
    for axis, (name, sign) in zip(axes, names):
        f = curves[name]
        out.append((axis, sign * f(t), sign * f(t, 1), sign * f(t, 2)))
    return out


@dataclass
class PelvisPath:
    """Pelvis origin (mid-ASIS) translation, lab (m): three Fourier series, x with a constant speed."""

    x: Fourier
    y: Fourier
    z: Fourier

    def __call__(self, t: np.ndarray, d: int = 0) -> np.ndarray:
        return np.column_stack([self.x(t, d), self.y(t, d), self.z(t, d)])


def body_kinematics(p: GaitParams, t: np.ndarray, curves: dict[str, Fourier], path: PelvisPath | None) -> dict[str, Frame]:
    """Exact frames of pelvis and ``{side}_{thigh,shank,foot}`` at times ``t`` (s).

    ``path`` None puts the pelvis origin at the lab origin (used to fit the path)."""
    n = len(t)
    zero = np.zeros((n, 3))
    if path is None:
        o = v = a = zero
    else:
        o, v, a = path(t), path(t, 1), path(t, 2)
    lab = Frame(np.broadcast_to(np.eye(3), (n, 3, 3)), o, v, a, zero, zero)
    pelvis = lab.child(np.zeros(3), _pelvis_rotations(curves, t))
    out = {"pelvis": pelvis}
    for side in SIDES:
        s = SIDE_SIGN[side]
        thigh = pelvis.child(davis_hjc(p, side), _angles(curves, t, [(f"{side}_hip_flex", -1.0), (f"{side}_hip_add", -s),
                                                                       (f"{side}_hip_rot", -s)]))
        shank = thigh.child(np.array([0.0, 0.0, -p.thigh_length]),
                            _angles(curves, t, [(f"{side}_knee_flex", 1.0), (f"{side}_knee_var", -s), (f"{side}_knee_rot", -s)]))
        foot = shank.child(np.array([0.0, 0.0, -p.shank_length]),
                           _angles(curves, t, [(f"{side}_ankle_dorsi", -1.0), (f"{side}_ankle_inv", -s), (f"{side}_ankle_add", -s)]))
        out[f"{side}_thigh"], out[f"{side}_shank"], out[f"{side}_foot"] = thigh, shank, foot
    return out


def _pelvis_rotations(curves, t):
    """R_pelvis = Rz(rotation) Rx(obliquity) Ry(anterior tilt)."""
    return [(2,) + tuple(curves["pelvis_rot"](t, d) for d in (0, 1, 2)),
            (0,) + tuple(curves["pelvis_obl"](t, d) for d in (0, 1, 2)),
            (1,) + tuple(curves["pelvis_tilt"](t, d) for d in (0, 1, 2))]


def stance_phase(p: GaitParams, t: np.ndarray, side: str) -> np.ndarray:
    """Progress through stance in [0, 1] (NaN in swing) of ``side`` at times t."""
    t0 = p.first_strike + (0.0 if side == "R" else p.stride_time / 2.0)
    ph = np.mod(t - t0, p.stride_time) / (p.stride_time * p.stance_fraction)
    return np.where(ph <= 1.0, ph, np.nan)


def _stance_weights(p: GaitParams, t: np.ndarray) -> dict[str, np.ndarray]:
    """Smooth share of support per foot (sums to 1), ramping over double support (fit target only)."""
    ds = p.stance_fraction - 0.5
    w = {}
    for side in SIDES:
        s = stance_phase(p, t, side) * p.stance_fraction  # fraction of the stride into stance
        up = np.clip(s / ds, 0.0, 1.0)
        down = np.clip((p.stance_fraction - s) / ds, 0.0, 1.0)
        w[side] = np.nan_to_num(np.minimum(up, down), nan=0.0)
    tot = w["R"] + w["L"]
    return {k: v / tot for k, v in w.items()}


def fit_pelvis_path(p: GaitParams, curves: dict[str, Fourier]) -> PelvisPath:
    """Pelvis translation such that the stance foot rolls without sliding on the floor z = 0.

    Over one stride (uniform grid), the target pelvis velocity cancels the velocity of the
    stance foot's lowest sole point (weighted over double support), and the target height puts
    that point on the floor; both are fitted by truncated Fourier series (x with a mean speed).
    """
    n = 440
    T = p.stride_time
    t = p.first_strike + T * np.arange(n) / n
    kin = body_kinematics(p, t, curves, None)
    w = _stance_weights(p, t)
    vel = np.zeros((n, 3))
    low = np.zeros(n)
    sole = np.column_stack([SOLE_X, np.zeros_like(SOLE_X), np.full_like(SOLE_X, -p.ankle_height)])
    rows = np.arange(n)
    for side in SIDES:
        foot = kin[f"{side}_foot"]
        pos = np.stack([foot.point(r)[0] for r in sole], axis=1)  # (n, k, 3)
        k = np.argmin(pos[:, :, 2], axis=1)
        v_contact = np.stack([foot.point(r)[1] for r in sole], axis=1)[rows, k]
        vel += w[side][:, None] * v_contact
        low += w[side] * pos[rows, k, 2]
    u = -vel  # required pelvis velocity
    speed = float(np.round(u[:, 0].mean(), 12))
    fx = fourier_from_samples(u[:, 0], T, PATH_HARMONICS, PATH_TAPER)
    fy = fourier_from_samples(u[:, 1], T, PATH_HARMONICS, PATH_TAPER)
    fz = fourier_from_samples(-low, T, PATH_HARMONICS, PATH_TAPER)
    x = _integrate(fx, speed).shifted(p.first_strike)
    y = _integrate(fy, 0.0).shifted(p.first_strike)
    return PelvisPath(x, y, fz.shifted(p.first_strike))


def _integrate(f: Fourier, slope: float) -> Fourier:
    """Antiderivative of the oscillating part of ``f`` (zero mean), with a linear ``slope`` term."""
    w = 2.0 * np.pi / f.period
    k = np.arange(1, len(f.a) + 1) * w
    return Fourier(f.period, 0.0, np.round(-f.b / k, 12), np.round(f.a / k, 12), slope)


# ---------------------------------------------------------------------------------------
# Ground reaction
# ---------------------------------------------------------------------------------------

# Vertical force over stance s in [0, 1]: BW (c1 sin(pi s) + c3 sin(3 pi s)), c3 = 0.438 and c1 set so
# that the two feet's vertical impulse over a stride equals body weight times the stride time
# (steady walking: c1 = 1.163 for 60 % stance); peaks 1.13 BW near s = 0.25 and 0.75, 0.72 BW at
# mid-stance. Shear: braking then propulsion, -0.18 BW sin(2 pi s) (lab X, zero net impulse);
# medial 0.04 BW sin(pi s) (cancels between the feet); free moment 0.004 BW.m sin(2 pi s).
GRF_C3 = 0.438
GRF_AP, GRF_ML, FREE_MOMENT = 0.18, 0.04, 0.004


def vertical_c1(p: GaitParams) -> float:
    """c1 such that 2 * stance_fraction * integral_0^1 (c1 sin(pi s) + c3 sin(3 pi s)) ds = 1:
    c1 = pi/2 (1 / (2 f) - 2 c3 / (3 pi)), f the stance fraction."""
    return float(np.pi / 2.0 * (1.0 / (2.0 * p.stance_fraction) - 2.0 * GRF_C3 / (3.0 * np.pi)))


@dataclass
class GroundReaction:
    """Load of the floor on one foot (lab): force (n,3) N, cop (n,3) m on z = 0, free_moment (n,3) N.m
    (Z only); zeros in swing, cop NaN in swing. ``phase`` is the stance progress (NaN in swing)."""

    force: np.ndarray
    cop: np.ndarray
    free_moment: np.ndarray
    phase: np.ndarray


def ground_reaction(p: GaitParams, t: np.ndarray, foot: Frame, side: str) -> GroundReaction:
    """Analytic ground reaction of ``side`` at times ``t`` given the foot's exact frame."""
    s = stance_phase(p, t, side)
    on = ~np.isnan(s)
    sz = np.where(on, s, 0.0)
    bw = p.mass * G
    fz = bw * (vertical_c1(p) * np.sin(np.pi * sz) + GRF_C3 * np.sin(3 * np.pi * sz))
    fx = -GRF_AP * bw * np.sin(2 * np.pi * sz)
    fy = -SIDE_SIGN[side] * GRF_ML * bw * np.sin(np.pi * sz)  # toward the midline
    force = np.where(on[:, None], np.column_stack([fx, fy, fz]), 0.0)
    tz = -SIDE_SIGN[side] * FREE_MOMENT * bw * np.sin(2 * np.pi * sz)
    free = np.column_stack([np.zeros_like(tz), np.zeros_like(tz), np.where(on, tz, 0.0)])
    x_sole = COP_START + (COP_END - COP_START) * sz
    local = np.column_stack([x_sole, np.zeros_like(sz), np.full_like(sz, -p.ankle_height)])
    cop = foot.o + np.einsum("nij,nj->ni", foot.R, local)
    cop[:, 2] = 0.0
    cop[~on] = np.nan
    return GroundReaction(force, cop, free, s)


# ---------------------------------------------------------------------------------------
# Inverse dynamics: twist-wrench RNEA (ground truth) and plain Newton-Euler (cross-check)
# ---------------------------------------------------------------------------------------


@dataclass
class LegLoads:
    """Joint loads of one leg (ankle, knee, hip), each (n, 3): reaction force of the proximal on
    the distal segment (lab, N) and net internal moment about the joint centre (lab, N.m)."""

    force_lab: dict[str, np.ndarray]
    moment_lab: dict[str, np.ndarray]


def segment_com_motion(p: GaitParams, kin: dict[str, Frame], side: str) -> dict[str, tuple]:
    """(com, com_acc) lab of thigh, shank, foot of ``side``."""
    sp = segment_parameters(p)
    out = {}
    for seg in SEGMENTS:
        pos, _, acc = kin[f"{side}_{seg}"].point(sp[seg]["com_seg"])
        out[seg] = (pos, acc)
    return out


def newton_euler_leg(p: GaitParams, kin: dict[str, Frame], grf: GroundReaction, side: str) -> LegLoads:
    """Plain distal-to-proximal Newton-Euler (Winter 2009 ch. 5) from exact kinematics.

    Per segment: F_prox = m a_com - m g - F_dist_ext; M_prox = dH/dt - sum r x F - M_ext, with
    dH/dt = R (I alpha_seg + omega_seg x I omega_seg) about the COM; loads of the distal joint
    enter with opposite sign.
    """
    sp = segment_parameters(p)
    com = segment_com_motion(p, kin, side)
    F_ext, M_ext, P_ext = grf.force, grf.free_moment, np.where(np.isnan(grf.cop), 0.0, grf.cop)
    forces, moments = {}, {}
    joint_of = {"foot": "ankle", "shank": "knee", "thigh": "hip"}
    for seg in ("foot", "shank", "thigh"):
        f = kin[f"{side}_{seg}"]
        m, inertia = sp[seg]["mass"], sp[seg]["inertia_seg"]
        c, a = com[seg]
        w = np.einsum("nji,nj->ni", f.R, f.omega)
        al = np.einsum("nji,nj->ni", f.R, f.alpha)
        hdot = np.einsum("nij,nj->ni", f.R, al @ inertia.T + np.cross(w, w @ inertia.T))
        F = m * a - m * GRAVITY_LAB - F_ext
        M = hdot - np.cross(f.o - c, F) - np.cross(P_ext - c, F_ext) - M_ext
        j = joint_of[seg]
        forces[j], moments[j] = F, M
        F_ext, M_ext, P_ext = -F, -M, f.o  # the joint load on the next segment, at this joint centre
    return LegLoads(forces, moments)


def screw_chain_leg(p: GaitParams, side: str):
    """The leg as an open chain in twist-wrench form (seed 003), for gaitid.multibody.screw.

    Joints: 3 prismatic (pelvis translation, lab x y z), pelvis Rz Rx Ry, hip Ry Rx Rz,
    knee Ry Rx Rz, ankle Ry Rx Rz (15 joints). At theta = 0 every frame is aligned with the lab
    and the pelvis origin is at the lab origin. Massless links except the thigh (after the
    hip's 3rd joint), shank (knee 3rd) and foot (ankle 3rd); link frames at the COMs; tip frame
    at the foot COM. Returns (chain, index of thigh/shank/foot links).
    """
    from gaitid.multibody.screw import ScrewChain, spatial_inertia

    sp = segment_parameters(p)
    hjc = davis_hjc(p, side)
    kjc = hjc + np.array([0.0, 0.0, -p.thigh_length])
    ajc = kjc + np.array([0.0, 0.0, -p.shank_length])
    centres = {"thigh": hjc + sp["thigh"]["com_seg"], "shank": kjc + sp["shank"]["com_seg"], "foot": ajc + sp["foot"]["com_seg"]}
    eye = np.eye(3)
    S, frames, G_list = [], [], []  # frames: position of link frame i at theta = 0
    for k in range(3):
        S.append(np.concatenate([np.zeros(3), eye[k]]))
        frames.append(np.zeros(3))
    for axis in (2, 0, 1):
        S.append(np.concatenate([eye[axis], np.zeros(3)]))
        frames.append(np.zeros(3))
    links = {}
    for seg, q in (("thigh", hjc), ("shank", kjc), ("foot", ajc)):
        for axis in (1, 0, 2):
            S.append(np.concatenate([eye[axis], -np.cross(eye[axis], q)]))
            frames.append(q)
        frames[-1] = centres[seg]
        links[seg] = len(S) - 1
    n = len(S)
    for i in range(n):
        seg = next((k for k, v in links.items() if v == i), None)
        G_list.append(spatial_inertia(sp[seg]["mass"], sp[seg]["inertia_seg"]) if seg else np.zeros((6, 6)))
    M_list = np.zeros((n + 1, 4, 4))
    prev = np.zeros(3)
    for i, pos in enumerate(frames + [frames[-1]]):
        M_list[i] = np.eye(4)
        M_list[i, :3, 3] = pos - prev
        prev = pos
    return ScrewChain(M_list, np.stack(G_list), np.stack(S)), links


def _joint_coordinates(p: GaitParams, t: np.ndarray, curves: dict[str, Fourier], path: PelvisPath, side: str):
    """theta, theta', theta'' (n, 15) of :func:`screw_chain_leg` from the exact curves."""
    s = SIDE_SIGN[side]
    spec = [("pelvis_rot", 1.0), ("pelvis_obl", 1.0), ("pelvis_tilt", 1.0),
            (f"{side}_hip_flex", -1.0), (f"{side}_hip_add", -s), (f"{side}_hip_rot", -s),
            (f"{side}_knee_flex", 1.0), (f"{side}_knee_var", -s), (f"{side}_knee_rot", -s),
            (f"{side}_ankle_dorsi", -1.0), (f"{side}_ankle_inv", -s), (f"{side}_ankle_add", -s)]
    out = []
    for d in (0, 1, 2):
        cols = [path(t, d)] + [sign * curves[name](t, d)[:, None] for name, sign in spec]
        out.append(np.concatenate(cols, axis=1))
    return out


def rnea_leg(p: GaitParams, t: np.ndarray, curves, path, kin, grf: GroundReaction, side: str) -> LegLoads:
    """Ground truth: joint loads from the twist-wrench RNEA of gaitid.multibody.screw (seed 003 9.53-9.57).

    The ground reaction enters as the tip wrench (what the foot exerts on the floor, foot-COM
    frame, moment about the foot COM: minus the floor's load)."""
    from gaitid.multibody.screw import rnea, wrench_in_base

    chain, links = screw_chain_leg(p, side)
    th, dth, ddth = _joint_coordinates(p, t, curves, path, side)
    foot = kin[f"{side}_foot"]
    com_f = foot.point(segment_parameters(p)["foot"]["com_seg"])[0]
    cop = np.where(np.isnan(grf.cop), 0.0, grf.cop)
    m_lab = np.cross(cop - com_f, grf.force) + grf.free_moment
    Rt = np.swapaxes(foot.R, 1, 2)
    F_tip = -np.concatenate([np.einsum("nij,nj->ni", Rt, m_lab), np.einsum("nij,nj->ni", Rt, grf.force)], axis=1)
    res = rnea(chain, th, dth, ddth, g=GRAVITY_LAB, F_tip=F_tip)
    forces, moments = {}, {}
    for joint, seg in (("ankle", "foot"), ("knee", "shank"), ("hip", "thigh")):
        centre = kin[f"{side}_{seg}"].o
        f, m = wrench_in_base(res.wrench[:, links[seg]], res.T_0i[:, links[seg]], centre)
        forces[joint], moments[joint] = f, m
    return LegLoads(forces, moments)


# ---------------------------------------------------------------------------------------
# The trial
# ---------------------------------------------------------------------------------------

PLATE_SIZE = (0.6, 0.4)  # m, along X and Y
PLATE_ORIGINS = (np.array([1.0, -0.5, -41.0]), np.array([-0.6, 0.4, -39.0]))  # mm, plate frame, sensor -> surface centre


@dataclass
class Plate:
    """A type-2 force plate. corners (4, 3) m lab (C3D order: x = c0 - c1, y = c0 - c3, z down),
    origin (3,) mm as stored, analog (n_analog, 6) channels Fx Fy Fz (N) Mx My Mz (N.mm) in the
    plate frame, side whose contact it carries, and its exact ground reaction at the analog rate."""

    corners: np.ndarray
    origin: np.ndarray
    analog: np.ndarray
    side: str
    grf: GroundReaction

    @property
    def R(self) -> np.ndarray:
        x = self.corners[0] - self.corners[1]
        y = self.corners[0] - self.corners[3]
        z = np.cross(x, y)
        y = np.cross(z, x)
        return np.column_stack([x / np.linalg.norm(x), y / np.linalg.norm(y), z / np.linalg.norm(z)])

    @property
    def centre(self) -> np.ndarray:
        return self.corners.mean(axis=0)


def plate_channels(grf: GroundReaction, R_plate: np.ndarray, centre: np.ndarray, origin_mm: np.ndarray) -> np.ndarray:
    """Type-2 channels (n, 6): force on the subject and moment about the sensor origin, plate frame,
    N and N.mm, such that the C3D plate equations (ezc3d; origin with z <= 0 as stored) give back
    the force, COP and free moment: M_c = cop x F + T, M_o = M_c - F x origin."""
    F = grf.force @ R_plate
    cop = np.where(np.isnan(grf.cop), centre, grf.cop)
    cop_p = (cop - centre) @ R_plate
    cop_p[:, 2] = 0.0
    T = grf.free_moment @ R_plate
    M_c = np.cross(cop_p, F) + T  # N.m about the surface centre
    o = origin_mm / 1000.0
    M_o = M_c - np.cross(F, o)
    return np.concatenate([F, 1000.0 * M_o], axis=1)


def _plate_corners(cx: float, cy: float, flipped: bool) -> np.ndarray:
    """Corners (m) with z down; plate X along lab +X (or -X when ``flipped``)."""
    a, b = PLATE_SIZE[0] / 2.0, PLATE_SIZE[1] / 2.0
    if not flipped:
        pts = [(cx + a, cy - b), (cx - a, cy - b), (cx - a, cy + b), (cx + a, cy + b)]
    else:
        pts = [(cx - a, cy + b), (cx + a, cy + b), (cx + a, cy - b), (cx - a, cy - b)]
    return np.array([[x, y, 0.0] for x, y in pts])


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


def marker_trajectories(p: GaitParams, kin: dict[str, Frame]) -> dict[str, np.ndarray]:
    """Every Plug-in Gait lower-body marker (n, 3) m lab, in MARKERS order."""
    pos = {}
    for side in SIDES:
        for label, (seg, r) in marker_offsets(p, side).items():
            frame = kin["pelvis"] if seg == "pelvis" else kin[f"{side}_{seg}"]
            pos[label] = frame.point(r)[0]
    return {m: pos[m] for m in MARKERS}


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
    grf = {side: ground_reaction(p, t, kin[f"{side}_foot"], side) for side in SIDES}
    truth = {side: rnea_leg(p, t, curves, path, kin, grf[side], side) for side in SIDES}

    # plates: under the right strike number ``plated_strike`` and the next left strike
    n_an = p.n_frames * int(round(p.analog_rate / p.point_rate))
    ta = np.arange(n_an) / p.analog_rate
    kin_a = body_kinematics(p, ta, curves, path)
    strikes = {"R": p.first_strike + p.plated_strike * p.stride_time}
    strikes["L"] = strikes["R"] + p.stride_time / 2.0
    plates, contact = [], {}
    for i, side in enumerate(SIDES):
        g = ground_reaction(p, ta, kin_a[f"{side}_foot"], side)
        stance = (ta >= strikes[side] - 1e-9) & (ta <= strikes[side] + p.stance_fraction * p.stride_time + 1e-9)
        g = GroundReaction(np.where(stance[:, None], g.force, 0.0), np.where(stance[:, None], g.cop, np.nan),
                           np.where(stance[:, None], g.free_moment, 0.0), np.where(stance, g.phase, np.nan))
        cop = g.cop[stance]
        cx = np.round((np.nanmin(cop[:, 0]) + np.nanmax(cop[:, 0])) / 2.0, 3)
        corners = _plate_corners(float(cx), 0.0, flipped=(i == 1))
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
    tilt = float(np.mean(_keypoint_samples(KEYPOINTS["pelvis_tilt"], 512)))
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


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------


def _set(c, group: str, name: str, value) -> None:
    """Set a C3D parameter through ezc3d's dict: int arrays stay INT, float arrays FLOAT, str lists CHAR."""
    from ezc3d import ezc3d as _ez

    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.integer):
        c.add_parameter(group, name, value.astype(float))
        c["parameters"][group][name]["type"] = _ez.INT
        c["parameters"][group][name]["value"] = value.astype(int)
    elif isinstance(value, np.ndarray):
        c.add_parameter(group, name, value.astype(float))
    else:
        c.add_parameter(group, name, value)


def _c3d(markers: dict[str, np.ndarray], p: GaitParams, subject: dict, plates: list[Plate] = (),
         events: list = ()):
    """An ezc3d.c3d object: points in mm, type-2 plates in N / N.mm, EVENT, PROCESSING, SUBJECTS, TRIAL."""
    import ezc3d

    labels = list(markers)
    n = next(iter(markers.values())).shape[0]
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([p.point_rate])
    c["parameters"]["POINT"]["LABELS"]["value"] = labels
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    pts = np.ones((4, len(labels), n))
    pts[:3] = np.stack([markers[m].T * 1000.0 for m in labels], axis=1)
    c["data"]["points"] = pts
    ratio = int(round(p.analog_rate / p.point_rate))
    if plates:
        c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([p.analog_rate])
        ch_labels, units = [], []
        for i, _ in enumerate(plates, start=1):
            ch_labels += [f"Force.Fx{i}", f"Force.Fy{i}", f"Force.Fz{i}", f"Moment.Mx{i}", f"Moment.My{i}", f"Moment.Mz{i}"]
            units += ["N"] * 3 + ["Nmm"] * 3
        c["parameters"]["ANALOG"]["LABELS"]["value"] = ch_labels
        c["parameters"]["ANALOG"]["UNITS"]["value"] = units
        an = np.concatenate([pl.analog for pl in plates], axis=1)
        c["data"]["analogs"] = an.T[None, :, : n * ratio]
        _set(c, "FORCE_PLATFORM", "USED", np.array([len(plates)]))
        _set(c, "FORCE_PLATFORM", "TYPE", np.array([2] * len(plates)))
        _set(c, "FORCE_PLATFORM", "ZERO", np.array([1, 0]))
        _set(c, "FORCE_PLATFORM", "CORNERS", np.stack([pl.corners.T * 1000.0 for pl in plates], axis=2))
        _set(c, "FORCE_PLATFORM", "ORIGIN", np.stack([pl.origin for pl in plates], axis=1))
        _set(c, "FORCE_PLATFORM", "CHANNEL", np.arange(1, 6 * len(plates) + 1).reshape(len(plates), 6).T)
    if events:
        _set(c, "EVENT", "USED", np.array([len(events)]))
        _set(c, "EVENT", "CONTEXTS", [e[1] for e in events])
        _set(c, "EVENT", "LABELS", [e[0] for e in events])
        _set(c, "EVENT", "DESCRIPTIONS", ["heel strike" if e[0] == "Foot Strike" else "toe off" for e in events])
        _set(c, "EVENT", "SUBJECTS", ["synthetic"] * len(events))
        _set(c, "EVENT", "TIMES", np.array([[0.0] * len(events), [e[2] for e in events]]))
        _set(c, "EVENT", "ICON_IDS", np.array([1 if e[0] == "Foot Strike" else 2 for e in events]))
        _set(c, "EVENT", "GENERIC_FLAGS", np.array([0] * len(events)))
    _set(c, "TRIAL", "ACTUAL_START_FIELD", np.array([1, 0]))
    _set(c, "TRIAL", "ACTUAL_END_FIELD", np.array([n, 0]))
    _set(c, "TRIAL", "CAMERA_RATE", np.array([p.point_rate]))
    _set(c, "SUBJECTS", "NAMES", ["synthetic"])
    _set(c, "SUBJECTS", "MARKER_SETS", ["PlugInGait"])
    _set(c, "SUBJECTS", "USES_PREFIXES", np.array([0]))
    for key, value in subject.items():
        _set(c, "PROCESSING", key, np.array([float(value)]))
    _set(c, "MANUFACTURER", "COMPANY", ["gaitid"])
    _set(c, "MANUFACTURER", "SOFTWARE", ["gaitid.synthetic"])
    return c


def _write_c3d(c, path: Path) -> None:
    """Write atomically: a temporary ``.c3d`` beside ``path`` (ezc3d appends the extension
    to any other name), then ``os.replace``."""
    import os
    import tempfile

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".c3d", dir=path.parent)
    os.close(fd)
    try:
        c.write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def truth_table(trial: SyntheticTrial):
    """Wide ground-truth table (pandas DataFrame), one row per point frame; columns carry units.

    frame, time_s, {S}_contact (0 swing, 1 stance on a plate, 2 stance off the plates);
    per side S and joint J (ankle, knee, hip): {S}_{J}_force_lab_{x,y,z}_N,
    {S}_{J}_moment_lab_{x,y,z}_Nm, {S}_{J}_moment_{foot|shank|thigh}_{x,y,z}_Nm (distal frame),
    {S}_{J}_centre_lab_{x,y,z}_m; {S}_grf_lab_{x,y,z}_N, {S}_cop_lab_{x,y,z}_m,
    {S}_free_moment_lab_z_Nm; joint angles {S}_{name}_deg (the generating Cardan angles).
    """
    import pandas as pd

    p = trial.params
    cols = {"frame": np.arange(1, p.n_frames + 1), "time_s": trial.time}
    xyz = "xyz"
    for side in SIDES:
        cols[f"{side}_contact"] = trial.contact[side]
    for side in SIDES:
        centres = trial.joint_centres(side)
        for joint in JOINTS:
            blocks = [("force_lab", trial.truth[side].force_lab[joint], "N"),
                      ("moment_lab", trial.truth[side].moment_lab[joint], "Nm"),
                      (f"moment_{DISTAL[joint]}", trial.moment_distal(side, joint), "Nm"),
                      ("centre_lab", centres[joint], "m")]
            for name, arr, unit in blocks:
                for k in range(3):
                    cols[f"{side}_{joint}_{name}_{xyz[k]}_{unit}"] = arr[:, k]
        g = trial.grf[side]
        for k in range(3):
            cols[f"{side}_grf_lab_{xyz[k]}_N"] = g.force[:, k]
        for k in range(3):
            cols[f"{side}_cop_lab_{xyz[k]}_m"] = g.cop[:, k]
        cols[f"{side}_free_moment_lab_z_Nm"] = g.free_moment[:, 2]
        for name in ("hip_flex", "hip_add", "hip_rot", "knee_flex", "knee_var", "knee_rot",
                     "ankle_dorsi", "ankle_inv", "ankle_add"):
            cols[f"{side}_{name}_deg"] = np.rad2deg(trial.curves[f"{side}_{name}"](trial.time))
    return pd.DataFrame(cols)


def _write_text(path: Path, text: str) -> None:
    from gaitid.io.atomic import atomic_path

    with atomic_path(path) as tmp:
        tmp.write_bytes(text.encode("utf-8"))


def segments_json(p: GaitParams) -> str:
    """The inertial and geometric parameters used by the truth, as JSON text (SI)."""
    import json

    sp = segment_parameters(p)
    doc = {
        "units": "SI: kg, m, kg.m^2; frames X anterior, Y left, Z up/proximal (both sides); "
                 "com_seg from the segment origin (thigh HJC, shank KJC, foot AJC), inertia about the COM",
        "subject": {"mass_kg": p.mass, "height_m": p.height, "leg_length_m": p.leg_length,
                    "knee_width_m": p.knee_width, "ankle_width_m": p.ankle_width,
                    "inter_asis_m": p.inter_asis, "marker_diameter_m": p.marker_diameter},
        "segments": {k: {"mass_kg": round(v["mass"], 12), "length_m": round(v["length"], 12),
                         "com_seg_m": [round(float(x), 12) for x in v["com_seg"]],
                         "inertia_seg_kgm2": [[round(float(x), 12) for x in row] for row in v["inertia_seg"]]}
                     for k, v in sp.items()},
        "hip_joint_centre_pelvis_m": {s: [round(float(x), 12) for x in davis_hjc(p, s)] for s in SIDES},
        "gravity_lab_m_s2": [0.0, 0.0, -G],
        "joints": {"knee_from_hip_thigh_m": [0.0, 0.0, -p.thigh_length],
                   "ankle_from_knee_shank_m": [0.0, 0.0, -p.shank_length]},
    }
    return json.dumps(doc, indent=2) + "\n"


SAMPLE_FILES = ("walk_synthetic.c3d", "walk_synthetic_truth.csv", "walk_synthetic_segments.json", "static_synthetic.c3d")


def write_sample(outdir: str | Path, p: GaitParams | None = None) -> list[Path]:
    """Write the sample files (SAMPLE_FILES) into ``outdir``; same bytes on every run."""
    outdir = Path(outdir)
    p = p or GaitParams()
    trial = make_gait_trial(p)
    paths = [outdir / name for name in SAMPLE_FILES]
    _write_c3d(_c3d(trial.markers, p, trial.subject, trial.plates, trial.events), paths[0])
    _write_text(paths[1], truth_table(trial).to_csv(index=False, float_format="%.10g", lineterminator="\n"))
    _write_text(paths[2], segments_json(p))
    _write_c3d(_c3d(make_static_trial(p), p, trial.subject), paths[3])
    return paths


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m gaitid.synthetic OUTDIR", file=sys.stderr)
        return 2
    for path in write_sample(argv[0]):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
