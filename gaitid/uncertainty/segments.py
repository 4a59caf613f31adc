"""The model rebuilt for every column of a :class:`~gaitid.uncertainty.design.Design` at once.

The points and frames come from :mod:`gaitid.uncertainty.points` (marker noise, landmark and
joint-centre errors) and :mod:`gaitid.uncertainty.static` (the static calibrations redone with
them); here, per column, the segments' masses, centres of mass and radii of gyration are scaled,
the masses renormalised to body mass (:func:`segment_samples`), and the chain's motion derived:
centre-of-mass accelerations, angular velocities and accelerations.

Derivatives run along the frame axis for all columns at once (the pipeline's own
:func:`gaitid.core.signal.second_derivative` for the centres of mass and
:func:`gaitid.core.rotation.angular_velocity` / ``angular_acceleration`` for the frames, on
(n, C, ...) arrays), so nothing is ever differentiated across two columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core import rotation, signal
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES, side_path
from gaitid.dynamics.types import Body, Chain, SegmentMotion
from gaitid.model.assembly import FrameMotion, ModelKinematics
from gaitid.model.bsip import load_table, segment_parameters
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model, read_toml
from gaitid.uncertainty.design import Design
from gaitid.uncertainty.nominal import NominalRun
from gaitid.uncertainty.points import PerturbedEvaluator, column_offsets, joint_geometry, model_points, stacked
from gaitid.uncertainty.static import static_corrections


def bsip_groups(table_name: str) -> tuple[list[str], list[str]]:
    """(paired, single) segments of a BSIP table's [check] list (the whole body); ([], []) when
    the table has none."""
    data = read_toml(load_table(table_name).path)
    check = data.get("check", {})
    return list(check.get("paired", [])), list(check.get("single", []))


def mass_factors(design: Design, table_name: str) -> dict[str, np.ndarray]:
    """Per table segment, (C,) factors on its mass: (1 + e_seg), then all renormalised so the
    whole body's fractions keep their sum (masses still add up to body mass)."""
    table = load_table(table_name)
    paired, single = bsip_groups(table_name)
    segs = paired + single or list(table.segments)
    raw = {s: 1.0 + design.value(("mass", s)) for s in segs}
    total = sum((2 if s in paired else 1) * table.row(s).mass_fraction for s in segs)
    new = sum((2 if s in paired else 1) * table.row(s).mass_fraction * raw[s] for s in segs)
    return {s: raw[s] * total / new for s in segs}


def segment_samples(run: NominalRun, design: Design, side: str, ev: PerturbedEvaluator, lengths0: dict[str, float]
                    ) -> tuple[list[Body], list[SegmentMotion], dict]:
    """The chain's per-frame Bodies and SegmentMotions for all columns of ``design`` ((n C) rows),
    and the lab angular velocity (n C, 3) of each chain segment, with the run's body mass, BSIP
    table and segment parameters. ``lengths0``: each segment's nominal length (m;
    :func:`nominal_lengths`), the reference of its inertia's scaling."""
    model, n, rate, C = run.model, run.trial.n_frames, run.trial.point_rate, design.n_columns
    overrides = run.segment_parameters or {}
    table_name = run.settings.bsip or model.bsip
    table = load_table(table_name)
    factors = mass_factors(design, table_name)
    bodies, motion, omegas = [], [], {}
    for name in model.chain:
        spec = model.segments[name]
        row_name = spec.get("bsip", name)
        R, _ = ev.segment(name)
        prox, dist = ev.point(spec["proximal"]), ev.point(spec["distal"])
        e0, e1 = (ev.point(p) for p in spec["bsip_endpoints"]) if "bsip_endpoints" in spec else (prox, dist)
        lengths = np.nanmedian(np.linalg.norm(e0 - e1, axis=1).reshape(n, C), axis=0)  # (C,)
        ov = {**overrides.get(name, {}), **overrides.get(side_path(side, name), {})}
        nominal = segment_parameters(table.row(row_name), run.subject.mass, lengths0[name],
                                     spec.get("long_axis", "z"), spec.get("ml_axis", "y"), ov)
        mass = nominal.mass * factors.get(row_name, np.ones(C))
        com = nominal.com_from_proximal + design.value(("com", row_name))
        scale = (mass / nominal.mass) * (1.0 + design.value(("gyration", row_name))) ** 2
        if "inertia" not in ov and "length" not in ov:  # a table's inertia grows with the segment's length
            scale = scale * (lengths / lengths0[name]) ** 2
        inertia = nominal.inertia_seg[None] * scale[:, None, None]
        com_lab = (e0 + np.tile(com, n)[:, None] * (e1 - e0)).reshape(n, C, 3)
        com_acc = signal.second_derivative(com_lab, rate).reshape(-1, 3)
        Rn = R.reshape(n, C, 3, 3)
        omega_seg, omega_lab, alpha_seg = angular_motion(Rn, rate)
        bodies.append(Body(name, np.tile(mass, n), np.tile(inertia, (n, 1, 1))))
        motion.append(SegmentMotion(R=R, com_lab=com_lab.reshape(-1, 3), com_acc_lab=com_acc, omega_seg=omega_seg,
                                    alpha_seg=alpha_seg, proximal_lab=prox, distal_lab=dist))
        omegas[name] = omega_lab
    return bodies, motion, omegas


def angular_motion(R: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(omega_seg, omega_lab, alpha_seg), each (n C, 3), of frames R (n, C, 3, 3):
    :func:`gaitid.core.rotation.angular_velocity` and ``angular_acceleration`` on the stacked
    columns, differentiated along the frame axis only."""
    omega_seg, omega_lab = rotation.angular_velocity(R, rate)
    alpha_seg, _ = rotation.angular_acceleration(R, omega_seg, rate)
    return omega_seg.reshape(-1, 3), omega_lab.reshape(-1, 3), alpha_seg.reshape(-1, 3)


@dataclass
class Prepared:
    """What every chunk of columns shares: the trial's filtered points (and the static trial's),
    per side the nominal frames above each joint, the static recalibration of every column
    ({segment: (C, 3, 3)}) and the chain segments' nominal lengths (m)."""

    points: dict
    static_points: dict | None
    frames: dict[str, dict[str, np.ndarray]]
    corrections: dict[str, dict[str, np.ndarray]]
    lengths: dict[str, dict[str, float]]


def nominal_lengths(model: Model, points: dict, params: dict, side: str, trial: Trial) -> dict[str, float]:
    """Each chain segment's length (m) as :func:`gaitid.model.assembly.build_segments` takes it: the
    median over the trial of its BSIP endpoints' distance."""
    ev = PointEvaluator(model, points, params, side, {}, trial)
    out = {}
    for name in model.chain:
        spec = model.segments[name]
        ends = spec.get("bsip_endpoints", (spec["proximal"], spec["distal"]))
        out[name] = float(np.nanmedian(np.linalg.norm(ev.point(ends[0]) - ev.point(ends[1]), axis=1)))
    return out


def prepare(run: NominalRun, design: Design, points: tuple | None = None) -> Prepared:
    """The shared inputs of :func:`perturbed_kinematics` for all columns of ``design``; ``points``:
    the run's :func:`~gaitid.uncertainty.points.model_points` when the caller has them."""
    trial, model, static, nominal = run.trial, run.model, run.static, run.kinematics
    pts, static_pts = points if points is not None else model_points(trial, model, static, run.settings)
    frames, corrections, lengths = {}, {}, {}
    for side in SIDES:
        frames[side] = {seg: (nominal.root.R if seg == model.root else nominal.frames[side_path(side, seg)])
                        for _, _, seg in joint_geometry(model)}
        corrections[side] = static_corrections(model, design, side, static_pts, nominal.parameters[side], static)
        lengths[side] = nominal_lengths(model, pts, nominal.parameters[side], side, trial)
    return Prepared(pts, static_pts, frames, corrections, lengths)


def perturbed_kinematics(run: NominalRun, design: Design, columns: slice, prep: Prepared,
                         noise: dict | None) -> ModelKinematics:
    """The :class:`ModelKinematics` of the ``columns`` of ``design``, stacked frame-major ((n c)
    rows): chains with per-frame Bodies, motions, the root frame and joint angular velocities (no
    angles: only what the kinetic outputs need). ``prep``: :func:`prepare` of ``run``; ``noise``:
    {label: (n, k, 3)} filtered noise of the chunk's noisy columns, or None
    (:func:`~gaitid.uncertainty.points.filtered_noise`)."""
    trial, model, nominal, sub = run.trial, run.model, run.kinematics, design.subset(columns)
    n, C, rate, pts = trial.n_frames, sub.n_columns, trial.point_rate, prep.points
    base = stacked(pts, C, noise, sub.noise)
    chains, motions, omegas, root, shared = {}, {}, {}, None, {}  # side-free items (pelvis) computed once
    for side in SIDES:
        centres, landmarks = column_offsets(model, sub, side, prep.frames[side], set(pts))
        corrections = {seg: np.broadcast_to(c[columns], (n, C, 3, 3)).reshape(-1, 3, 3)
                       for seg, c in prep.corrections[side].items()}
        ev = PerturbedEvaluator(model, stacked(pts, C, noise, sub.noise, landmarks, base), nominal.parameters[side],
                                side, trial, {k: v.reshape(-1, 3) for k, v in centres.items()}, corrections, shared)
        bodies, motions[side], seg_omega = segment_samples(run, sub, side, ev, prep.lengths[side])
        chains[side] = Chain(tuple(bodies))
        omegas.update({side_path(side, k): v for k, v in seg_omega.items()})
        if model.root is not None and root is None:
            R, origin = ev.segment(model.root)
            omega_seg, omega_lab, alpha_seg = angular_motion(R.reshape(n, C, 3, 3), rate)
            root = FrameMotion(model.root, R, origin, omega_seg, alpha_seg)
            omegas[model.root] = omega_lab
    joint_omega = {}
    for side in SIDES:
        for jname, spec in model.joints.items():
            key = {s: (s if s == model.root else side_path(side, s)) for s in (spec["proximal"], spec["distal"])}
            wp, wd = omegas.get(key[spec["proximal"]]), omegas.get(key[spec["distal"]])
            if wp is not None and wd is not None:
                joint_omega[side_path(side, jname)] = rotation.joint_angular_velocity(wp, wd)
    return ModelKinematics(model.name, rate, chains, motions, root, {}, {}, {}, joint_omega, nominal.parameters)
