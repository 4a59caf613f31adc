"""From a Trial to the solver's inputs: the bridge the pipeline calls.

:func:`build_segments` applies a model (``models/*.toml``) to a trial: fill short marker gaps,
low-pass filter, compute joint centres and segment frames, body-segment parameters, centre-of-
mass accelerations, angular velocities and accelerations, and joint angles. It returns a
:class:`ModelKinematics` whose ``chains['Left']`` / ``chains['Right']`` are the foot, shank and
thigh bodies (:class:`~gaitid.dynamics.types.Chain`, distal to proximal) and ``motion[side]``
their per-frame :class:`~gaitid.dynamics.types.SegmentMotion`, for the solver.

The assembly only: parameters and static calibration are in :mod:`gaitid.model.calibration`,
the point and segment expressions in :mod:`gaitid.model.evaluator`, joint angles in
:mod:`gaitid.model.angles`, marker aliases and filtering in :mod:`gaitid.model.trial_markers`.

All in SI, lab frame Z up; R maps segment to lab. A frame whose segment cannot be built is
NaN in every output derived from it, never zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from gaitid.core import rotation, signal
from gaitid.core.errors import DataError, ModelError
from gaitid.core.trial import Subject, Trial
from gaitid.core.vocabulary import SIDES, side_path
from gaitid.dynamics.types import Body, Chain, SegmentMotion
from gaitid.model import clusters as cl
from gaitid.model.angles import apply_angle_axes, joint_outputs
from gaitid.model.bsip import load_table, segment_parameters
from gaitid.model.calibration import (
    calibrate_static,
    measure_defaults,
    resolve_parameters,
    split_subject,
    static_parameters,
)
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model, load_model
from gaitid.model.trial_markers import apply_aliases, missing_markers_error, needed_labels, prepare_points

__all__ = ["FrameMotion", "ModelKinematics", "apply_aliases", "apply_angle_axes", "build_segments",
           "calibrate_static", "cluster_landmarks", "prepare_points", "resolve_parameters"]


@dataclass
class FrameMotion:
    """A segment's frame and its motion (used for the chain's root, e.g. the pelvis).
    R (n, 3, 3) segment -> lab; origin_lab (n, 3) m; omega_seg, alpha_seg (n, 3) segment frame."""

    name: str
    R: np.ndarray
    origin_lab: np.ndarray
    omega_seg: np.ndarray
    alpha_seg: np.ndarray


@dataclass
class ModelKinematics:
    """What :func:`build_segments` returns.

    chains: side ('Left', 'Right') -> the constant :class:`~gaitid.dynamics.types.Chain` of
    [foot, shank, thigh] bodies (distal to proximal: names, masses, inertias);
    motion: side -> their per-frame :class:`~gaitid.dynamics.types.SegmentMotion`, same order.
    root: the segment above the chains (pelvis), proximal frame of the hip.
    joint_centres: 'left.hip', 'left.knee'... (:func:`gaitid.core.vocabulary.side_path`) (n, 3) m lab.
    frames: 'left.thigh', 'pelvis'... R (n, 3, 3) segment -> lab.
    angles_deg: joint angles in degrees keyed by the model's labels ('LKneeAngles'...),
    (n, 3): flexion, ab-adduction, rotation with Plug-in Gait signs.
    joint_omega_lab: 'left.knee'... (n, 3) rad/s, distal minus proximal angular velocity (lab),
    for joint power. parameters: side -> resolved subject parameters (SI, rad).
    cluster_residuals / cluster_flags: technical clusters that rebuilt landmarks ('left.thigh'...):
    per-frame RMS rigid-fit residual (n,) m, and frames above the cluster's ``max_residual``.
    reads: the trial's marker labels (as the file names them) each output is computed from: per
    chain body ('left.foot': its frame, joint centres and centre-of-mass endpoints), the root
    ('pelvis') and each joint's angles ('LKneeAngles': its two segments' frames); a cluster's
    rebuilt landmark counts as the cluster's markers (which markers move which curve).
    """

    model: str
    rate: float
    chains: dict[str, Chain]
    motion: dict[str, list[SegmentMotion]]
    root: FrameMotion | None
    joint_centres: dict[str, np.ndarray]
    frames: dict[str, np.ndarray]
    angles_deg: dict[str, np.ndarray]
    joint_omega_lab: dict[str, np.ndarray]
    parameters: dict[str, dict[str, float]]
    warnings: list[str] = field(default_factory=list)
    cluster_residuals: dict[str, np.ndarray] = field(default_factory=dict)  # 'left.thigh': (n,) m RMS fit
    cluster_flags: dict[str, np.ndarray] = field(default_factory=dict)  # 'left.thigh': (n,) bool, above threshold
    reads: dict[str, frozenset[str]] = field(default_factory=dict)  # 'left.foot', 'pelvis', 'LKneeAngles' -> labels


def cluster_landmarks(trial: Trial, static: Trial, model: Model) -> tuple[Trial, dict, dict, list[str]]:
    """Rebuild the landmarks of each ``[clusters.<name>]`` that the trial lacks, from the cluster
    markers calibrated in the static trial (:mod:`gaitid.model.clusters`). Returns the trial with
    the landmarks added as virtual points, residuals and flags by 'side.cluster', and warnings."""
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    static_present = set(static.marker_labels) | set(static.virtual_labels)
    new: dict[str, np.ndarray] = {}
    residuals, flags, warnings = {}, {}, []
    for name, spec in model.clusters.items():
        for side in SIDES if any("{S}" in x for x in spec["markers"] + spec["landmarks"]) else SIDES[:1]:
            pre = model.sides[side]
            mk = [x.replace("{S}", pre) for x in spec["markers"]]
            lm = [x.replace("{S}", pre) for x in spec["landmarks"]]
            todo = [x for x in lm if x not in present]
            if not todo:
                continue
            lacking = [x for x in mk + todo if x not in static_present]
            if lacking:
                raise ModelError(f"cluster '{name}' ({side.lower()}): the static trial lacks {', '.join(lacking)} needed by "
                                 f"model '{model.name}'", static.path)
            absent = [x for x in mk if x not in present]
            if absent:
                raise ModelError(f"cluster '{name}' ({side.lower()}): the trial lacks {', '.join(absent)} needed by model "
                                 f"'{model.name}' to rebuild {', '.join(todo)}", trial.path)
            cal = cl.calibrate_cluster(f"{side.lower()} {name}", {x: static.point(x) for x in mk},
                                       {x: static.point(x) for x in todo}, static.path)
            rebuilt, rms = cl.reconstruct_landmarks(cal, {x: trial.point(x) for x in mk})
            new.update(rebuilt)
            key = side_path(side, name) if "{S}" in "".join(spec["markers"]) else name
            residuals[key] = rms
            flags[key] = cl.flag_frames(rms, float(spec.get("max_residual", cl.DEFAULT_MAX_RESIDUAL)))
            if flags[key].any():
                warnings.append(f"cluster {key}: {int(flags[key].sum())} frame(s) fit worse than "
                                f"{1000 * float(spec.get('max_residual', cl.DEFAULT_MAX_RESIDUAL)):.1f} mm RMS "
                                f"(max {1000 * np.nanmax(rms):.1f} mm)")
    if not new:
        return trial, residuals, flags, warnings
    labels = list(trial.virtual_labels) + list(new)
    vp = np.stack(list(new.values()), axis=1)
    if trial.virtual_points is not None and trial.virtual_labels:
        vp = np.concatenate([trial.virtual_points, vp], axis=1)
    return replace(trial, virtual_labels=labels, virtual_points=vp), residuals, flags, warnings


def build_segments(
    trial: Trial,
    model: str | Path | Model = "plugin-gait",
    static: Trial | None = None,
    subject: Subject | dict | None = None,
    *,
    parameters: dict | None = None,
    bsip: str | None = None,
    marker_cutoff_hz: float | None = 6.0,
    max_gap_frames: int = 10,
    filter_order: int = 4,
    segment_overrides: dict | None = None,
    flat_foot: bool | None = None,
    settings=None,
) -> ModelKinematics:
    """Apply a model to a trial and return the solver's inputs (see :class:`ModelKinematics`).

    ``static``: a static calibration trial (Plug-in Gait: foot offsets, inter-ASIS distance).
    Without it the offsets come from the trial's PROCESSING values (Plug-in Gait stores them),
    else zero with a warning. ``subject``: a Subject replacing ``trial.subject`` (and the static
    trial's), or a dict of parameter overrides over each trial's own subject ({name: value} or
    {'left': {...}, 'right': {...}}; names from the model's [parameters], SI and rad; plus
    ``mass`` and ``height``). ``parameters``: parameter overrides given apart, over a Subject
    (the subject stage's). ``bsip``: a table name overriding the model's. Markers are
    gap-filled (cubic, <= ``max_gap_frames``) and low-pass filtered (zero-lag Butterworth,
    ``filter_order``, ``marker_cutoff_hz``; None: unfiltered). ``segment_overrides``:
    {'left.thigh': {'mass': ..., 'inertia': [...]}, 'thigh': {...}} per-subject BSIP values.
    ``settings``: a :class:`gaitid.core.settings.Settings` supplying model, bsip, cutoff, order and
    gap length and the flat-foot option (explicit arguments are ignored then). ``flat_foot``:
    Plug-in Gait's static foot calibration with the heel lowered to the toe's height (True), not
    (False), or as the files say, else off (None; :func:`gaitid.model.calibration.flat_foot_choice`).
    """
    if settings is not None:
        model, bsip = settings.model, settings.bsip
        marker_cutoff_hz, filter_order = settings.marker_cutoff_hz, settings.filter_order
        max_gap_frames, flat_foot = settings.max_gap_frames, settings.flat_foot
    m = model if isinstance(model, Model) else load_model(model)
    if trial.n_frames < 3:
        raise DataError(f"trial has {trial.n_frames} frame(s); at least 3 are needed for derivatives",
                        trial.path)
    warnings: list[str] = []
    subj, overrides = split_subject(subject, trial, parameters)
    params = resolve_parameters(m, subj, overrides, trial)
    if subj.mass is None or not subj.mass > 0:
        raise ModelError("body mass unknown for the trial: give subject={...} or a Subject with mass",
                         trial.path)
    file_labels = dict(zip(apply_aliases(trial, m).marker_labels, trial.marker_labels))  # model's -> file's
    trial = apply_aliases(trial, m)
    residuals, flags = {}, {}
    if static is not None:
        static = apply_aliases(static, m)
        if m.clusters:
            trial, residuals, flags, more = cluster_landmarks(trial, static, m)
            warnings += more
    labels, missing = needed_labels(m, trial)
    if missing:
        raise missing_markers_error(trial, m, missing, static)

    warnings += static_parameters(m, params, static, subject, subj, overrides, parameters, flat_foot)
    pts = prepare_points(trial, labels, marker_cutoff_hz, max_gap_frames, filter_order)
    measure_defaults(params, pts, m, trial)
    table = load_table(bsip or m.bsip)
    rate = trial.point_rate
    seg_ov = dict(segment_overrides or {})

    shared: dict = {}
    chains: dict[str, Chain] = {}
    motions: dict[str, list[SegmentMotion]] = {}
    frames_out: dict[str, np.ndarray] = {}
    centres: dict[str, np.ndarray] = {}
    omegas_lab: dict[str, np.ndarray] = {}
    root = None
    evaluators = {}
    for side in SIDES:
        ev = PointEvaluator(m, pts, params[side], side, shared, trial)
        evaluators[side] = ev
        bodies, motion = [], []
        for name in m.chain:
            spec = m.segments[name]
            R, _ = ev.segment(name)
            prox, dist = ev.point(spec["proximal"]), ev.point(spec["distal"])
            # the BSIP table's endpoints (length, centre of mass) default to the joint centres
            e0, e1 = (ev.point(p) for p in spec["bsip_endpoints"]) if "bsip_endpoints" in spec else (prox, dist)
            lengths = np.linalg.norm(e0 - e1, axis=1)
            length = float(np.median(lengths[np.isfinite(lengths)])) if np.isfinite(lengths).any() else math.nan
            if not math.isfinite(length):
                raise DataError(f"{side.lower()} {name}: its endpoints are never both visible", trial.path)
            ov = {**seg_ov.get(name, {}), **seg_ov.get(side_path(side, name), {})}
            sp = segment_parameters(table.row(spec.get("bsip", name)), subj.mass, length,
                                    spec.get("long_axis", "z"), spec.get("ml_axis", "y"), ov)
            com = e0 + sp.com_from_proximal * (e1 - e0)
            com_acc = signal.second_derivative(com, rate)
            omega_seg, omega_lab = rotation.angular_velocity(R, rate)
            alpha_seg, _ = rotation.angular_acceleration(R, omega_seg, rate)
            bodies.append(Body(name, sp.mass, sp.inertia_seg))
            motion.append(SegmentMotion(R=R, com_lab=com, com_acc_lab=com_acc, omega_seg=omega_seg,
                                        alpha_seg=alpha_seg, proximal_lab=prox, distal_lab=dist))
            frames_out[side_path(side, name)] = R
            omegas_lab[side_path(side, name)] = omega_lab
            centres[side_path(side, spec["proximal"])] = prox
        chains[side], motions[side] = Chain(tuple(bodies)), motion
    if m.root is not None:
        R, origin = evaluators[SIDES[0]].segment(m.root)
        omega_seg, omega_lab = rotation.angular_velocity(R, rate)
        alpha_seg, _ = rotation.angular_acceleration(R, omega_seg, rate)
        root = FrameMotion(m.root, R, origin, omega_seg, alpha_seg)
        frames_out[m.root] = R
        omegas_lab[m.root] = omega_lab
    angles, joint_omega = joint_outputs(m, evaluators, frames_out, omegas_lab)
    return ModelKinematics(m.name, rate, chains, motions, root, centres, frames_out, angles, joint_omega,
                           {s: dict(params[s]) for s in SIDES}, warnings, residuals, flags,
                           output_reads(m, evaluators, file_labels))


def output_reads(m: Model, evaluators: dict, file_labels: dict[str, str]) -> dict[str, frozenset[str]]:
    """:attr:`ModelKinematics.reads` from the evaluators of both sides (after every body, the root and
    the angles were evaluated); ``file_labels``: the model's label -> the file's (aliases)."""
    landmarks = {}  # a cluster's landmark -> its markers
    for spec in m.clusters.values():
        for side in SIDES:
            pre = m.sides[side]
            for lm in spec["landmarks"]:
                landmarks[lm.replace("{S}", pre)] = [x.replace("{S}", pre) for x in spec["markers"]]

    def labels(read) -> frozenset[str]:
        out = [y for x in read for y in landmarks.get(x, [x])]
        return frozenset(file_labels.get(x, x) for x in out)

    reads = {}
    for side, ev in evaluators.items():
        for name in m.chain:
            spec = m.segments[name]
            used = ev.labels_read("segment", name).union(
                *(ev.labels_read("point", p) for p in (spec["proximal"], spec["distal"], *spec.get("bsip_endpoints", ()))))
            reads[side_path(side, name)] = labels(used)
        for jname, spec in m.joints.items():
            label = spec.get("label", f"{{S}}{jname}").replace("{S}", m.sides[side])
            reads[label] = labels(ev.labels_read("segment", spec["proximal"]) | ev.labels_read("segment", spec["distal"]))
    if m.root is not None:
        reads[m.root] = labels(evaluators[SIDES[0]].labels_read("segment", m.root))
    return reads
