"""A synthetic gait trial with exact ground truth: known motion -> C3D + joint loads.

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
  vertical impulse equals body weight x time) pointing from the centre of pressure at an aim
  point near the body's centre of mass (braking, propulsion and medial forces follow), small
  free moment; the centre of pressure moves from heel to metatarsal heads along the sole,
  projected onto the floor (z = 0). Trunk and arms are not modelled.
- Ground truth: ankle, knee and hip reaction forces and net internal moments from the
  twist-wrench recursive Newton-Euler of :mod:`gaitid.dynamics.multibody.screw` (seed 003 eqs
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

Run ``python -m gaitid.validation.synthetic OUTDIR`` to write ``walk_synthetic.c3d``,
``walk_synthetic_truth.csv``, ``walk_synthetic_segments.json`` and ``static_synthetic.c3d``
(bit-for-bit reproducible; see sample_data/README.md).

Modules: :mod:`.params` (subject, geometry, segment parameters), :mod:`.curves` (Fourier
curves), :mod:`.body` (exact kinematics, pelvis path, markers), :mod:`.ground` (ground reaction,
plate channels), :mod:`.truth` (RNEA truth, Newton-Euler check), :mod:`.trial` (assembly),
:mod:`.files` (C3D / CSV / JSON output).
"""

from gaitid.validation.synthetic.body import (
    Frame,
    PelvisPath,
    body_kinematics,
    elementary_rotation,
    fit_pelvis_path,
    marker_trajectories,
    stance_phase,
)
from gaitid.validation.synthetic.command import main
from gaitid.validation.synthetic.fourier import (
    FOOT_PITCH,
    KEYPOINTS,
    Fourier,
    fourier_from_samples,
    joint_curves,
)
from gaitid.validation.synthetic.ground import (
    GroundReaction,
    Plate,
    grf_aim,
    ground_reaction,
    plate_channels,
    vertical_c1,
)
from gaitid.validation.synthetic.params import (
    DEMPSTER,
    DISTAL,
    FOOT_HEE,
    FOOT_TOE,
    GRAVITY_LAB,
    JOINTS,
    MARKERS,
    SEGMENTS,
    SIDE_SIGN,
    SIDES,
    SOLE_X,
    G,
    GaitParams,
    davis_hjc,
    marker_offsets,
    segment_parameters,
)
from gaitid.validation.synthetic.plate_split import PlateOutline, PlateShare, split_load
from gaitid.validation.synthetic.sample_trial import (
    SyntheticTrial,
    gait_events,
    make_gait_trial,
    make_static_trial,
)
from gaitid.validation.synthetic.scenario import GeneratedTrial, GroundModel, Scenario, generate
from gaitid.validation.synthetic.stairs import (
    StairParams,
    make_stair_trial,
    stair_scenario,
    write_stairs,
)
from gaitid.validation.synthetic.treadmill_trial import (
    TreadmillParams,
    make_treadmill_trial,
    treadmill_scenario,
    write_treadmill,
)
from gaitid.validation.synthetic.truth import (
    LegLoads,
    newton_euler_leg,
    rnea_leg,
    screw_chain_leg,
    segment_motions,
)
from gaitid.validation.synthetic.walkway import (
    WalkwayParams,
    make_walkway_trial,
    walkway_scenario,
    write_walkway,
)
from gaitid.validation.synthetic.write import (
    SAMPLE_FILES,
    segments_json,
    truth_table,
    write_sample,
    write_scenario,
)

__all__ = [
    "DEMPSTER", "DISTAL", "FOOT_HEE", "FOOT_PITCH", "FOOT_TOE", "G", "GRAVITY_LAB", "JOINTS", "KEYPOINTS",
    "MARKERS", "SAMPLE_FILES", "SEGMENTS", "SIDES", "SIDE_SIGN", "SOLE_X", "Fourier", "Frame", "GaitParams",
    "GroundReaction", "LegLoads", "grf_aim", "PelvisPath", "Plate", "SyntheticTrial", "body_kinematics", "davis_hjc",
    "elementary_rotation", "fit_pelvis_path", "fourier_from_samples", "gait_events", "ground_reaction",
    "joint_curves", "main", "make_gait_trial", "make_static_trial", "marker_offsets", "marker_trajectories",
    "newton_euler_leg", "plate_channels", "rnea_leg", "screw_chain_leg", "segment_parameters", "segments_json",
    "stance_phase", "truth_table", "vertical_c1", "write_sample",
    # trial kinds beyond the sample walk (docs/synthetic.md)
    "GeneratedTrial", "GroundModel", "PlateOutline", "PlateShare", "Scenario", "StairParams", "TreadmillParams",
    "WalkwayParams", "generate", "make_stair_trial", "make_treadmill_trial", "make_walkway_trial", "split_load",
    "stair_scenario", "treadmill_scenario", "walkway_scenario", "write_scenario", "write_stairs",
    "write_treadmill", "write_walkway", "segment_motions",
]
