"""Cross-check against OpenSim inverse dynamics (Gait2392, ``InverseDynamicsOutput.sto``).

OpenSim reports a generalised force per coordinate: the net internal joint moment projected
on the joint's axis. For ``hip_flexion``, ``knee_angle`` and ``ankle_angle`` of Gait2392 the
axis is (close to) the joint's medio-lateral axis pointing to the subject's RIGHT on both
sides, so a positive value is a hip flexor, knee extensor and ankle dorsiflexor moment
(``ankle_angle_r_moment`` < 0: plantarflexor). gaitid's segments have y pointing LEFT, so the
comparable number is

    M_sag = -M_internal_lab . y_axis_lab

with y the proximal segment's medio-lateral axis (pelvis for the hip, thigh for the knee,
shank for the ankle), M the internal net moment of the proximal on the distal segment.
This does not depend on how :class:`~gaitid.pipeline.Result` labels its components.

:func:`opensim_crosscheck` runs the OpenSim example (subject01_walk1.trc and its GRF,
subject01_static.trc for the clusters, 72.6 kg) through ``models/isb-cast.toml`` and the
solver and returns both curves and the figures (Pearson r, peaks per sign, RMS) per joint
over each foot's stance inside the reference's time range. See docs/opensim-crosscheck.md.

``geometry="gait2392"`` explains the remaining gaps: the same markers, solver and inertia, but
the joint geometry of OpenSim's scaled model (``subject01_simbody.osim`` of opensim-models
``Pipelines/Gait2392_Simbody/OutputReference``, Delp et al. 1990 / Yamaguchi & Zajac 1989):

- hip centres where the scaled Gait2392 pelvis has them relative to its placed ASIS and
  sacral markers (:func:`gait2392_hip_offsets`: 92-96 mm behind mid-ASIS, 101-106 mm below,
  84-87 mm lateral; Harrington's regression gives 58, 90 and 94 mm here);
- the knee's generalised force as Gait2392 defines it (:func:`gait2392_knee_moment`): the
  tibia's origin translates in the femur frame with the knee angle (splines p(theta)), so
  ``knee_angle_moment = M_P . z_femur + F . dp/dtheta`` with M_P the moment about the
  tibia's origin P (about 2 cm distal of the mid-epicondyles) and F the femur's force on
  the tibia.

``geometry="gait2392-ik"`` also takes the hip and knee moments about the hip centre and tibia
origin where OpenSim's inverse kinematics placed them (:func:`gait2392_joint_positions`,
forward kinematics of ``subject01_walk1_ik.mot``).

``geometry="gait2392-ik-bodies"`` also replaces gaitid's thigh and shank by Gait2392's scaled
femur and tibia moved by the IK coordinates (filtered at 6 Hz as OpenSim's ID does): their
masses, centres of mass and inertia (``subject01_simbody.osim``), rotations, angular and
centre-of-mass accelerations (:func:`gait2392_leg`), and gives the foot Gait2392's foot mass
(talus + calcaneus + toes, 1.513 kg); the foot's motion and the ground reaction stay gaitid's.
This is what closes the late-stance hip flexor peak (docs/opensim-crosscheck.md).

These are diagnoses of the model differences, not gaitid's result (its default remains the
ISB model with Harrington's hip centre and the marker-defined knee).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from scipy.interpolate import CubicSpline

from gaitid.contacts.foot_loads import FootLoad, filtered_load
from gaitid.core import rotation, signal
from gaitid.core.errors import SettingsError
from gaitid.core.vocabulary import CONTACT_THRESHOLD_N, parse_side, side_path
from gaitid.dynamics import inverse_dynamics
from gaitid.dynamics.types import Body, Chain, SegmentMotion
from gaitid.io.mot import Storage, read_sto
from gaitid.io.opensim import plate_sides, read_opensim_trial
from gaitid.model.assembly import ModelKinematics, build_segments
from gaitid.model.markerset import load_model

JOINT_COLUMNS = {"ankle": "ankle_angle_{s}_moment", "knee": "knee_angle_{s}_moment", "hip": "hip_flexion_{s}_moment"}
GEOMETRIES = ("gaitid", "gait2392", "gait2392-ik", "gait2392-ik-bodies")
CONTACT_N = CONTACT_THRESHOLD_N  # N: a foot is in stance while its vertical GRF exceeds this


# --- Gait2392 geometry of OpenSim's scaled subject01 model (subject01_simbody.osim, opensim-models
# Pipelines/Gait2392_Simbody/OutputReference). OpenSim body frames: x anterior, y up, z right; m.
GAIT2392_PELVIS = {  # placed markers and hip joints (location_in_parent) in the scaled pelvis frame
    "R.ASIS": (0.02342148, 0.03628304, 0.13084011),
    "L.ASIS": (0.02831302, 0.02728760, -0.13125155),
    "V.Sacral": (-0.17255913, 0.04028205, 0.00705460),
    "hip_r": (-0.07243760, -0.06772454, 0.08555218),  # generic (-0.0707, -0.0661, 0.0835) x 1.02458
    "hip_l": (-0.07243760, -0.06772454, -0.08555218),
}
GAIT2392_FEMUR_SCALE = 1.14724
# knee_r: tibia origin in the femur frame, natural cubic splines of knee_angle (rad, < 0 flexed),
# generic values (Yamaguchi & Zajac 1989), multiplied by the femur scale factor
GAIT2392_KNEE_X = ((-2.0943951, -1.74532925, -1.3962634, -1.04719755, -0.6981317, -0.34906585, -0.17453293,
                    0.19734422, 0.33739496, 0.49017757, 1.52146027, 2.0943951),
                   (-0.0032, 0.00179, 0.00411, 0.0041, 0.00212, -0.001, -0.0031, -0.005227, -0.005435, -0.005574,
                    -0.005435, -0.00525))
GAIT2392_KNEE_Y = ((-2.0943951, -1.22173048, -0.52359878, -0.34906585, -0.17453293, 0.15914856, 2.0943951),
                   (-0.4226, -0.4082, -0.399, -0.3976, -0.3966, -0.395264, -0.396))
# scaled bodies (subject01_simbody.osim; the same on both sides): mass (kg), centre of mass (m) and
# principal moments of inertia about it (kg.m^2, x anterior, y up, z right), each in its body frame
GAIT2392_FEMUR = (8.98403823, (0.0, -0.19503080, 0.0), (0.17022071, 0.04462096, 0.17950086))
GAIT2392_TIBIA = (3.58100090, (0.0, -0.18455724, 0.0), (0.04756937, 0.00481357, 0.04823005))
GAIT2392_FOOT_MASS = 0.09658802 + 1.20735027 + 0.20920965  # talus + calcn + toes
GAIT2392_ANKLE_IN_TIBIA = (0.0, -0.42506489, 0.0)
# mid-epicondyles (placed R.Knee.Lat / R.Knee.Med) in the scaled right femur frame; used for both sides
GAIT2392_MID_EPICONDYLES = (-0.00135264, -0.43439264)


def gait2392_hip_offsets() -> dict[str, np.ndarray]:
    """Gait2392's scaled hip centres (m) in gaitid's pelvis frame (origin mid-ASIS, x anterior in the
    ASIS-sacrum plane, y left, z up), from the placed ASIS/sacral markers of the scaled model."""
    g = {k: np.asarray(v, float) for k, v in GAIT2392_PELVIS.items()}
    mid = (g["R.ASIS"] + g["L.ASIS"]) / 2
    y = g["L.ASIS"] - g["R.ASIS"]
    y /= np.linalg.norm(y)
    x = mid - g["V.Sacral"]
    x -= x.dot(y) * y
    x /= np.linalg.norm(x)
    R = np.stack([x, y, np.cross(x, y)])  # rows: gaitid pelvis axes in the OpenSim pelvis frame
    return {"right": R @ (g["hip_r"] - mid), "left": R @ (g["hip_l"] - mid)}


def gait2392_knee_moment(force_lab: np.ndarray, moment_lab: np.ndarray, knee_lab: np.ndarray, R_thigh: np.ndarray,
                         flexion_rad: np.ndarray, tibia_origin_lab: np.ndarray | None = None) -> np.ndarray:
    """Gait2392's ``knee_angle`` generalised force (n,) N.m from gaitid's internal knee load.

    ``force_lab``/``moment_lab`` (n, 3): force and moment of the thigh on the shank at gaitid's
    knee centre ``knee_lab`` (mid-epicondyles), lab frame. ``R_thigh`` (n, 3, 3): thigh frame
    (x anterior, y left, z proximal; the femur frame's x, -z, y). ``flexion_rad`` (n,): knee
    flexion (+), so Gait2392's knee angle is ``-flexion_rad``. The tibia's origin P = femur
    origin + s p(theta) (s = femur scale) lies s p(theta) - e from the mid-epicondyles e; the
    generalised force is M_P . z_femur + F . s dp/dtheta (virtual work), with
    M_P = M + (K - P) x F and z_femur = -y_thigh. ``tibia_origin_lab`` (n, 3): use this P
    instead (e.g. from :func:`gait2392_joint_positions`).
    """
    th = -np.asarray(flexion_rad, float)
    kx, ky = (CubicSpline(*GAIT2392_KNEE_X, bc_type="natural"), CubicSpline(*GAIT2392_KNEE_Y, bc_type="natural"))
    s = GAIT2392_FEMUR_SCALE
    ex, ey = GAIT2392_MID_EPICONDYLES
    zero = np.zeros_like(th)
    off = np.stack([s * kx(th) - ex, zero, s * ky(th) - ey], axis=1)  # thigh frame
    P = knee_lab + np.einsum("nij,nj->ni", R_thigh, off)
    if tibia_origin_lab is not None:  # where inverse kinematics placed it (gait2392_joint_positions)
        P = tibia_origin_lab
    M_P = moment_lab + np.cross(knee_lab - P, force_lab)
    dp = np.einsum("nij,nj->ni", R_thigh, np.stack([s * kx(th, 1), zero, s * ky(th, 1)], axis=1))
    return sagittal_moment(M_P, R_thigh) + np.einsum("ni,ni->n", force_lab, dp)


def _rotations(axes: list[np.ndarray], angles_rad: list[np.ndarray]) -> np.ndarray:
    """Product of successive (intrinsic) rotations about unit ``axes`` by ``angles_rad`` (n,)."""
    from scipy.spatial.transform import Rotation

    out = np.tile(np.eye(3), (len(angles_rad[0]), 1, 1))
    for axis, angle in zip(axes, angles_rad):
        out = out @ Rotation.from_rotvec(np.outer(angle, axis)).as_matrix()
    return out


def gait2392_joint_positions(ik: Storage, side: str, time: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Hip centre and tibia origin (n, 3) m in gaitid's Z-up lab at ``time`` (s; NaN outside the
    IK rows), by forward kinematics of the scaled Gait2392 from an IK coordinates file
    (``subject01_walk1_ik.mot``): pelvis rotations about z, x, y (tilt, list, rotation; each
    about the axis carried by the previous ones) and translation; hip at ``hip_r``/``hip_l``
    with flexion, adduction, rotation about z, x, y (x and y reversed on the left, as in
    Gait2392); tibia origin at s p(knee_angle) in the femur. Y-up ground -> Z-up lab:
    (x, y, z) -> (x, -z, y)."""
    k = "r" if side == "right" else "l"
    ang = (np.radians if ik.in_degrees is not False else np.asarray)
    X, Y, Z = np.eye(3)
    sgn = 1.0 if k == "r" else -1.0
    R_p = _rotations([Z, X, Y], [ang(ik.column(c)) for c in ("pelvis_tilt", "pelvis_list", "pelvis_rotation")])
    R_h = _rotations([Z, sgn * X, sgn * Y], [ang(ik.column(f"{c}_{k}"))
                                             for c in ("hip_flexion", "hip_adduction", "hip_rotation")])
    th = ang(ik.column(f"knee_angle_{k}"))
    kx, ky = (CubicSpline(*GAIT2392_KNEE_X, bc_type="natural"), CubicSpline(*GAIT2392_KNEE_Y, bc_type="natural"))
    p = GAIT2392_FEMUR_SCALE * np.stack([kx(th), ky(th), np.zeros_like(th)], axis=1)
    origin = np.stack([ik.column(c) for c in ("pelvis_tx", "pelvis_ty", "pelvis_tz")], axis=1)
    hip = origin + R_p @ np.asarray(GAIT2392_PELVIS[f"hip_{k}"])
    tibia = hip + np.einsum("nij,nj->ni", R_p @ R_h, p)
    to_z_up = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])

    def resample(v):
        v = v @ to_z_up.T
        return np.stack([np.interp(time, ik.time, v[:, i], left=np.nan, right=np.nan) for i in range(3)], axis=1)

    return resample(hip), resample(tibia)


FEMUR_TO_GAITID = np.array([[1.0, 0, 0], [0, 0, 1.0], [0, -1.0, 0]])  # gaitid thigh/shank axes (x, y left, z up)
# = OpenSim body axes (x, -z, y): R_gaitid = R_opensim @ FEMUR_TO_GAITID


def gait2392_leg(ik: Storage, side: str, time: np.ndarray, cutoff_hz: float | None = 6.0) -> dict[str, np.ndarray]:
    """Gait2392's pelvis, femur and tibia moved by the IK coordinates, on ``time`` (s; NaN outside
    the IK rows), Z-up lab: rotations ``R_pelvis``, ``R_femur``, ``R_tibia`` (n, 3, 3; OpenSim body
    axes x anterior, y up, z right) and points ``hip``, ``tibia`` (origin), ``ankle``,
    ``com_femur``, ``com_tibia`` (n, 3) m. Coordinates low-pass filtered at ``cutoff_hz``
    (4th-order zero-lag Butterworth, as OpenSim's ID filters them; None: raw); the same chain as
    :func:`gait2392_joint_positions`."""
    k = "r" if side == "right" else "l"
    rate = 1.0 / float(np.median(np.diff(ik.time)))

    def coord(name: str, angle: bool = True) -> np.ndarray:
        x = ik.column(name)
        x = np.radians(x) if angle and ik.in_degrees is not False else np.asarray(x, float)
        x = signal.butter_lowpass(x, rate, cutoff_hz, 4) if cutoff_hz is not None else x
        return np.interp(time, ik.time, x, left=np.nan, right=np.nan)

    n = len(time)
    ok = np.isfinite(coord("pelvis_tilt"))
    X, Y, Z = np.eye(3)
    sgn = 1.0 if k == "r" else -1.0
    to_z_up = np.array([[1.0, 0, 0], [0, 0, -1.0], [0, 1.0, 0]])
    R_p, R_f, R_t = (np.full((n, 3, 3), np.nan) for _ in range(3))
    R_p[ok] = to_z_up @ _rotations([Z, X, Y], [coord(c)[ok] for c in ("pelvis_tilt", "pelvis_list", "pelvis_rotation")])
    R_f[ok] = R_p[ok] @ _rotations([Z, sgn * X, sgn * Y], [coord(f"{c}_{k}")[ok]
                                                        for c in ("hip_flexion", "hip_adduction", "hip_rotation")])
    th = coord(f"knee_angle_{k}")
    R_t[ok] = R_f[ok] @ _rotations([Z], [th[ok]])
    kx, ky = (CubicSpline(*GAIT2392_KNEE_X, bc_type="natural"), CubicSpline(*GAIT2392_KNEE_Y, bc_type="natural"))
    origin = np.stack([coord(c, angle=False) for c in ("pelvis_tx", "pelvis_ty", "pelvis_tz")], axis=1) @ to_z_up.T
    hip_p = np.asarray(GAIT2392_PELVIS[f"hip_{k}"])
    hip = origin + np.einsum("nij,j->ni", R_p, hip_p)
    p = GAIT2392_FEMUR_SCALE * np.stack([kx(th), ky(th), np.zeros_like(th)], axis=1)
    tibia = hip + np.einsum("nij,nj->ni", R_f, p)
    return {"R_pelvis": R_p, "R_femur": R_f, "R_tibia": R_t, "hip": hip, "tibia": tibia, "knee_angle": th,
            "ankle": tibia + np.einsum("nij,j->ni", R_t, np.asarray(GAIT2392_ANKLE_IN_TIBIA)),
            "com_femur": hip + np.einsum("nij,j->ni", R_f, np.asarray(GAIT2392_FEMUR[1])),
            "com_tibia": tibia + np.einsum("nij,j->ni", R_t, np.asarray(GAIT2392_TIBIA[1]))}


def _gait2392_segment(name: str, body: tuple, R: np.ndarray, com: np.ndarray, proximal: np.ndarray,
                      distal: np.ndarray, rate: float) -> tuple[Body, SegmentMotion]:
    """A Gait2392 body and its :class:`SegmentMotion` (OpenSim body axes); NaN frames stay NaN."""
    ok = np.isfinite(R).all(axis=(1, 2))
    R_ok = np.where(ok[:, None, None], R, np.eye(3))
    omega, _ = rotation.angular_velocity(R_ok, rate)
    alpha, _ = rotation.angular_acceleration(R_ok, omega, rate)
    omega[~ok] = alpha[~ok] = np.nan
    acc = signal.second_derivative(com, rate)
    return Body(name, body[0], np.diag(body[2])), SegmentMotion(R, com, acc, omega, alpha, proximal, distal)


def sagittal_moment(moment_lab: np.ndarray, R_axis: np.ndarray) -> np.ndarray:
    """Moment (n,) N.m about the medio-lateral axis pointing right (OpenSim's sign) from an
    internal net moment (n, 3) N.m in the lab and the rotation (n, 3, 3) whose y axis (left)
    is the joint's flexion axis."""
    return -np.einsum("ni,ni->n", moment_lab, R_axis[:, :, 1])


@dataclass
class JointComparison:
    """One joint on one side over stance: Pearson r, RMS difference (N.m), peaks (N.m) of each
    sign (ours, OpenSim) and their relative differences ((ours - ref) / |ref|)."""

    r: float
    rms: float
    peak_neg: tuple[float, float]
    peak_pos: tuple[float, float]

    @property
    def peak_neg_diff(self) -> float:
        return (self.peak_neg[0] - self.peak_neg[1]) / abs(self.peak_neg[1])

    @property
    def peak_pos_diff(self) -> float:
        return (self.peak_pos[0] - self.peak_pos[1]) / abs(self.peak_pos[1])


@dataclass
class CrossCheck:
    """Curves on the reference's clock (s): ``ours[side][joint]``, ``reference[side][joint]``
    (N.m, OpenSim signs), ``stance[side]`` (bool), and ``figures[side][joint]``."""

    time: np.ndarray
    ours: dict[str, dict[str, np.ndarray]]
    reference: dict[str, dict[str, np.ndarray]]
    stance: dict[str, np.ndarray]
    figures: dict[str, dict[str, JointComparison]]
    kinematics: ModelKinematics
    warnings: list[str] = field(default_factory=list)


def compare(ours: np.ndarray, ref: np.ndarray) -> JointComparison:
    """Figures for two curves (same samples, N.m)."""
    ok = np.isfinite(ours) & np.isfinite(ref)
    a, b = ours[ok], ref[ok]
    return JointComparison(float(np.corrcoef(a, b)[0, 1]), float(np.sqrt(np.mean((a - b) ** 2))),
                           (float(a.min()), float(b.min())), (float(a.max()), float(b.max())))


def opensim_crosscheck(folder: str | Path, model: str = "isb-cast", mass: float = 72.6,
                       marker_cutoff_hz: float | None = 6.0, force_cutoff_hz: float | None = None,
                       geometry: str = "gaitid") -> CrossCheck:
    """Process OpenSim's subject01 example in ``folder`` and compare with its ID output.

    Markers low-pass at ``marker_cutoff_hz`` (OpenSim filtered the coordinates at 6 Hz);
    the GRF unfiltered by default, as OpenSim's ID applied it. ``geometry``: 'gaitid' (the
    model's own joint centres) or 'gait2392' (Gait2392's hip centres and knee generalised
    force, see the module docstring; ``kinematics`` is then the right side's build) or
    'gait2392-ik' (as 'gait2392', with the hip and knee moments taken about the hip centre and
    tibia origin where OpenSim's inverse kinematics put them, ``subject01_walk1_ik.mot``:
    :func:`gait2392_joint_positions`) or 'gait2392-ik-bodies' (Gait2392's thigh and shank bodies
    moved by the IK coordinates, :func:`gait2392_leg`; hip projected on the IK pelvis's z axis)."""
    if geometry not in GEOMETRIES:
        raise SettingsError(f"geometry must be one of {', '.join(GEOMETRIES)}, not {geometry!r}")
    folder = Path(folder)
    xml = folder / "subject01_walk1_grf.xml"
    trial = read_opensim_trial(folder / "subject01_walk1.trc", external_loads_xml=xml, mass=mass)
    static = read_opensim_trial(folder / "subject01_static.trc", mass=mass)
    ref = read_sto(folder / "InverseDynamicsOutput.sto")
    ik = read_sto(folder / "subject01_walk1_ik.mot") if geometry.startswith("gait2392-ik") else None
    builds = {}
    if geometry == "gaitid":
        mk = build_segments(trial, model, static=static, marker_cutoff_hz=marker_cutoff_hz)
        builds["right"] = builds["left"] = mk
    else:
        base = load_model(model)
        for side, offset in gait2392_hip_offsets().items():
            points = dict(base.points)
            points["hip"] = {"method": "in_segment", "segment": "pelvis", "offset": [float(v) for v in offset]}
            builds[side] = build_segments(trial, replace(base, points=points), static=static,
                                          marker_cutoff_hz=marker_cutoff_hz)
    sides = plate_sides(xml)
    t = trial.time
    mk0 = builds["right"]
    out = CrossCheck(ref.time, {}, {}, {}, {}, mk0, list(mk0.warnings))
    for plate in trial.force_plates:
        side = sides[plate.index]
        mk = builds[side]
        w = plate.point
        on = np.isfinite(w.cop).all(axis=1) & (w.force[:, 2] > CONTACT_N)
        zero = np.zeros_like(w.force)
        load = FootLoad(side, np.where(on[:, None], w.force, zero), np.where(on[:, None], w.cop, zero),
                        np.where(on[:, None], w.free_moment, zero), np.where(on, "plate", "swing"))
        chain, motion = mk.chains[parse_side(side)], mk.motion[parse_side(side)]
        axes = {"ankle": motion[1].R, "knee": motion[2].R, "hip": mk.root.R}
        leg = gait2392_leg(ik, side, t) if geometry == "gait2392-ik-bodies" else None
        if leg is not None:  # Gait2392's thigh and shank, moved by IK; gaitid's foot with Gait2392's foot mass
            shank = _gait2392_segment("shank", GAIT2392_TIBIA, leg["R_tibia"], leg["com_tibia"], leg["tibia"],
                                      leg["ankle"], trial.point_rate)
            thigh = _gait2392_segment("thigh", GAIT2392_FEMUR, leg["R_femur"], leg["com_femur"], leg["hip"],
                                      leg["tibia"], trial.point_rate)
            chain = Chain((replace(chain[0], mass=GAIT2392_FOOT_MASS), shank[0], thigh[0]))
            motion = [replace(motion[0], proximal_lab=leg["ankle"]), shank[1], thigh[1]]
            axes = {"ankle": leg["R_tibia"] @ FEMUR_TO_GAITID, "knee": leg["R_femur"] @ FEMUR_TO_GAITID,
                    "hip": leg["R_pelvis"] @ FEMUR_TO_GAITID}
        jl = inverse_dynamics(chain, motion, [filtered_load(load, trial.point_rate, force_cutoff_hz, 4)], frame="lab",
                              convention="internal", proximal_R=mk.root.R)
        s = side[0]
        out.stance[side] = np.interp(ref.time, t, on.astype(float)) > 0.5
        out.ours[side], out.reference[side], out.figures[side] = {}, {}, {}
        hip_ik, tibia_ik = gait2392_joint_positions(ik, side, t) if ik is not None else (None, None)  # unfiltered
        for j, joint in enumerate(("ankle", "knee", "hip")):
            curve = sagittal_moment(jl.moment[j], axes[joint])
            if joint == "knee" and leg is not None:  # about the tibia origin, plus the translation's term
                curve = gait2392_knee_moment(jl.force_lab[j], jl.moment[j], leg["tibia"], axes["knee"],
                                             -leg["knee_angle"], leg["tibia"])
            elif joint == "knee" and geometry != "gaitid":
                flexion = np.radians(mk.angles_deg[f"{s.upper()}KneeAngles"][:, 0])
                curve = gait2392_knee_moment(jl.force_lab[j], jl.moment[j], mk.joint_centres[side_path(side, "knee")],
                                             motion[2].R, flexion, tibia_ik)
            if joint == "hip" and hip_ik is not None and leg is None:  # moment about the IK-placed hip centre
                shift = np.cross(mk.joint_centres[side_path(side, "hip")] - hip_ik, jl.force_lab[j])
                curve = sagittal_moment(jl.moment[j] + shift, axes[joint])
            ours = np.interp(ref.time, t, curve)
            reference = ref.column(JOINT_COLUMNS[joint].format(s=s))
            out.ours[side][joint], out.reference[side][joint] = ours, reference
            st = out.stance[side]
            out.figures[side][joint] = compare(ours[st], reference[st])
    return out
