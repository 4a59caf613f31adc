"""The model rebuilt for every column of a :class:`~gaitid.uncertainty.design.Design` at once.

The trial's filtered markers are copied C times along a second axis, frames first: arrays
(n, C, 3), flattened to (n C, 3) for the model's point and segment expressions, which are all
frame by frame (:class:`~gaitid.model.evaluator.PointEvaluator`). Per column:

- marker noise (white, per coordinate) is filtered exactly as the markers are, then added;
- a palpated landmark (Plug-in Gait's KNE, ANK; a midpoint's epicondyles) is moved by its
  misplacement, constant in the nominal frame of the segment above the joint, before anything
  uses it;
- a joint centre is moved by its error, constant in the nominal frame of the segment above the
  joint (the hip in the pelvis, the knee in the thigh, the ankle in the shank), as soon as it is
  computed: every point and frame built from it follows (a knee chord from a moved hip, the
  thigh and shank axes, segment lengths, centres of mass);
- with a static trial, the static calibrations (Plug-in Gait's foot offsets) are recomputed
  from the static trial with the same landmark and centre errors, as they would have been;
- segment masses, centres of mass and radii of gyration are scaled, the masses renormalised
  to body mass (:func:`segment_samples`).

Derivatives run along the frame axis for all columns at once (:func:`derivative`, the stencil of
:func:`gaitid.kinematics.derivative`, on (n, C...) arrays), so nothing is ever differentiated
across two columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid import kinematics as kin
from gaitid.dynamics.types import Body, Chain, SegmentMotion
from gaitid.errors import ModelError
from gaitid.model import frames as fr
from gaitid.model.bsip import load_table, segment_parameters
from gaitid.model.build import FrameMotion, ModelKinematics, cluster_landmarks
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model, read_toml
from gaitid.model.trial_markers import apply_aliases, needed_labels, prepare_points
from gaitid.trial import Trial
from gaitid.uncertainty.design import Design
from gaitid.vocabulary import JOINTS, SIDES, side_key, side_path



STATIC_FRAMES = 20  # frames of the static trial the recalibration of every column uses


class PerturbedEvaluator(PointEvaluator):
    """A :class:`PointEvaluator` whose named points are moved by lab offsets ((N, 3) arrays) as
    soon as they are computed, and whose named segments are rotated on the right by per-row
    corrections ((N, 3, 3)), so everything built from them follows."""

    def __init__(self, model, points, params, side, trial, offsets: dict, corrections: dict, shared: dict | None = None):
        super().__init__(model, points, params, side, {} if shared is None else shared, trial)
        self.offsets, self.corrections, self.moved = offsets, corrections, {}

    def point(self, name: str) -> np.ndarray:
        if name not in self.offsets:
            return super().point(name)
        if name not in self.moved:
            self.moved[name] = super().point(name) + self.offsets[name]
        return self.moved[name]

    def segment(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self.corrections:
            return super().segment(name)
        key = ("segment", name)
        if key not in self.moved:
            R, origin = super().segment(name)
            self.moved[key] = (R @ self.corrections[name], origin)
        return self.moved[key]


def model_points(trial: Trial, model: Model, static: Trial | None, settings) -> tuple[dict, dict | None]:
    """(walking trial's filtered points, static trial's unfiltered points or None) by label, as
    :func:`gaitid.model.build.build_segments` and the static calibration read them."""
    trial = apply_aliases(trial, model)
    static_pts = None
    if static is not None:
        static = apply_aliases(static, model)
        if model.clusters:
            trial = cluster_landmarks(trial, static, model)[0]
        labels, _ = needed_labels(model, static)
        for spec in model.static.values():
            labels += [spec[k].replace("{S}", model.sides[s]) for s in SIDES for k in ("toe", "heel") if k in spec]
        present = set(static.marker_labels) | set(static.virtual_labels)
        static_pts = prepare_points(static, sorted(set(labels) & present), None, 10, 4)
    labels, _ = needed_labels(model, trial)
    pts = prepare_points(trial, labels, settings.marker_cutoff_hz, settings.max_gap_frames, settings.filter_order)
    return pts, static_pts


def filtered_noise(pts: dict, columns: np.ndarray, sd: float, rng: np.random.Generator, rate: float,
                   settings) -> dict[str, np.ndarray]:
    """White noise N(0, sd) on every coordinate of every point in ``columns`` (C,) bool, low-pass
    filtered as the markers are: {label: (n, k, 3)} for the k noisy columns (NaN where the
    point is)."""
    labels = list(pts)
    n, k = next(iter(pts.values())).shape[0], int(columns.sum())
    base = np.stack([pts[lab] for lab in labels], axis=1)  # (n, L, 3)
    raw = rng.standard_normal((n, len(labels), k, 3)) * sd
    raw[~np.isfinite(base).all(axis=2)] = np.nan
    out = kin.butter_lowpass(raw.reshape(n, -1), rate, settings.marker_cutoff_hz, settings.filter_order)
    out = out.reshape(n, len(labels), k, 3)
    return {lab: out[:, i] for i, lab in enumerate(labels)}


def axes_order(model: Model, segment: str) -> list[int]:
    """Segment-frame axis indices of [ap, ml, long] (from the model's long_axis / ml_axis)."""
    spec = model.segments.get(segment, {})
    ax = {"x": 0, "y": 1, "z": 2}
    long, ml = ax[spec.get("long_axis", "z")], ax[spec.get("ml_axis", "y")]
    return [3 - long - ml, ml, long]


def to_lab(model: Model, segment: str, R: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Offsets v (C, 3) [ap, ml, long] in a segment's frame R (n, 3, 3) -> lab (n, C, 3)."""
    seg = np.zeros_like(v)
    seg[:, axes_order(model, segment)] = v
    return np.swapaxes(R @ seg.T, 1, 2)


def joint_geometry(model: Model) -> list[tuple[str, str, str]]:
    """(joint, its point, the segment above it) for each joint of the chain: ('ankle', 'ankle',
    'shank'), ('knee', 'knee', 'thigh'), ('hip', 'hip', 'pelvis')."""
    chain = list(model.chain)
    out = []
    for j, seg in enumerate(chain):
        parent = chain[j + 1] if j + 1 < len(chain) else model.root
        if parent is None:
            continue
        out.append((JOINTS[j].lower() if j < len(JOINTS) else model.segments[seg]["proximal"],
                    model.segments[seg]["proximal"], parent))
    return out


def landmark_labels(model: Model, point: str, side: str, present) -> list[str]:
    """The palpated landmark markers a joint centre's method uses: a chord's ``marker``, a
    midpoint's first complete group (labels with the side prefix)."""
    spec = model.points.get(point, {})
    prefix = model.sides[side]
    if spec.get("method") == "chord":
        return [spec["marker"].replace("{S}", prefix)]
    if spec.get("method") == "midpoint":
        groups = spec["of"] if spec["of"] and isinstance(spec["of"][0], list) else [spec["of"]]
        for g in groups:
            labels = [x.replace("{S}", prefix) for x in g]
            if all(x in present for x in labels):
                return labels
    return []


def column_offsets(model: Model, design: Design, side: str, frames: dict, present) -> tuple[dict, dict]:
    """(centre offsets {point: (n, C, 3)}, landmark offsets {label: (n, C, 3)}) in the lab for one
    side, from the design's values and the nominal frames {segment: R (n, 3, 3)}."""
    centres, landmarks = {}, {}
    for joint, point, parent in joint_geometry(model):
        R = frames[parent]
        v, ps = design.column_values(("centre", side, joint))
        if ps:
            full = np.zeros((design.n_columns, 3))
            full[:, [p.key[3] for p in ps]] = v
            centres[point] = to_lab(model, parent, R, full)
        for label in landmark_labels(model, point, side, present):
            v, ps = design.column_values(("landmark", side, joint, label))
            if ps:
                full = np.zeros((design.n_columns, 3))
                full[:, [p.key[4] for p in ps]] = v
                landmarks[label] = to_lab(model, parent, R, full)
    return centres, landmarks


def stacked(pts: dict, C: int, noise: dict | None = None, noise_cols: np.ndarray | None = None,
            landmarks: dict | None = None, base: dict | None = None) -> dict[str, np.ndarray]:
    """{label: (n C, 3)}: each point copied to the C columns, plus the noise of the noisy columns
    and the landmark offsets. With ``base`` (a previous result without landmarks), only the
    landmarks' labels are rebuilt; the others are shared."""
    out = dict(base) if base is not None else {}
    for label, p in pts.items():
        if base is not None and not (landmarks and label in landmarks):
            continue
        a = np.repeat(p[:, None, :], C, axis=1)
        if noise is not None and label in noise:
            a[:, noise_cols] += noise[label]
        if landmarks and label in landmarks:
            a += landmarks[label]
        out[label] = a.reshape(-1, 3)
    return out


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
                                         bool(spec.get("flat_foot", True)), float(spec.get("sole_delta", 0.0)))
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


def segment_samples(model: Model, design: Design, side: str, ev: PerturbedEvaluator, subject_mass: float,
                    bsip: str, overrides: dict, n: int, rate: float, lengths0: dict[str, float]
                    ) -> tuple[list[Body], list[SegmentMotion], dict]:
    """The chain's per-frame Bodies and SegmentMotions for all columns ((n C) rows), and the lab
    angular velocity (n C, 3) of each chain segment. ``lengths0``: each segment's nominal length
    (m; :func:`nominal_lengths`), the reference of its inertia's scaling."""
    C = design.n_columns
    table_name = bsip or model.bsip
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
        nominal = segment_parameters(table.row(row_name), subject_mass, lengths0[name],
                                     spec.get("long_axis", "z"), spec.get("ml_axis", "y"), ov)
        mass = nominal.mass * factors.get(row_name, np.ones(C))
        com = nominal.com_from_proximal + design.value(("com", row_name))
        scale = (mass / nominal.mass) * (1.0 + design.value(("gyration", row_name))) ** 2
        if "inertia" not in ov and "length" not in ov:  # a table's inertia grows with the segment's length
            scale = scale * (lengths / lengths0[name]) ** 2
        inertia = nominal.inertia_seg[None] * scale[:, None, None]
        com_lab = (e0 + np.tile(com, n)[:, None] * (e1 - e0)).reshape(n, C, 3)
        com_acc = derivative(derivative(com_lab, rate), rate).reshape(-1, 3)
        Rn = R.reshape(n, C, 3, 3)
        omega_seg, omega_lab, alpha_seg = angular_motion(Rn, rate)
        bodies.append(Body(name, np.tile(mass, n), np.tile(inertia, (n, 1, 1))))
        motion.append(SegmentMotion(R=R, com_lab=com_lab.reshape(-1, 3), com_acc_lab=com_acc, omega_seg=omega_seg,
                                    alpha_seg=alpha_seg, proximal_lab=prox, distal_lab=dist))
        omegas[name] = omega_lab
    return bodies, motion, omegas


def derivative(x: np.ndarray, rate: float) -> np.ndarray:
    """d/dt along axis 0 of (n, ...) samples at ``rate`` Hz: :func:`gaitid.kinematics.derivative`'s
    stencil and arithmetic (numpy.gradient, edge_order 2, on each run of frames finite in every
    column; runs of 1-2 frames NaN), written out: numpy.gradient costs about ten times more on
    the batch's wide (n, C ...) arrays. Bit-identical results."""
    x = np.asarray(x, float)
    flat = x.reshape(x.shape[0], -1)
    out = np.full_like(flat, np.nan)
    dx = 1.0 / rate
    for s, e in kin.nan_runs(np.isfinite(flat).all(axis=1)):
        if e - s < 3:
            continue
        f, o = flat[s:e], out[s:e]
        np.subtract(f[2:], f[:-2], out=o[1:-1])
        o[1:-1] /= 2.0 * dx
        o[0] = (-1.5 / dx) * f[0] + (2.0 / dx) * f[1] + (-0.5 / dx) * f[2]
        o[-1] = (0.5 / dx) * f[-3] + (-2.0 / dx) * f[-2] + (1.5 / dx) * f[-1]
    return out.reshape(x.shape)


def angular_motion(R: np.ndarray, rate: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(omega_seg, omega_lab, alpha_seg), each (n C, 3), of frames R (n, C, 3, 3): omega_seg =
    vee(R^T dR/dt), omega_lab = R omega_seg, alpha_seg = R^T d(omega_lab)/dt, as
    :func:`gaitid.kinematics.angular_velocity` and ``angular_acceleration`` compute them, with
    the derivatives along the frame axis only; the 3 x 3 products are written out on
    component-first arrays (batched 3 x 3 matmuls cost several times more)."""
    Rt = np.ascontiguousarray(np.moveaxis(R, (-2, -1), (0, 1)))  # (3, 3, n, C): Rt[k, i] = R[..., k, i]
    Dt = np.ascontiguousarray(np.moveaxis(derivative(R, rate), (-2, -1), (0, 1)))

    def dot(i, j):  # (R^T dR)_ij = column i of R . column j of dR
        return Rt[0, i] * Dt[0, j] + Rt[1, i] * Dt[1, j] + Rt[2, i] * Dt[2, j]

    w = 0.5 * np.stack([dot(2, 1) - dot(1, 2), dot(0, 2) - dot(2, 0), dot(1, 0) - dot(0, 1)])  # (3, n, C)
    w_lab = Rt[:, 0] * w[0] + Rt[:, 1] * w[1] + Rt[:, 2] * w[2]
    a_lab = np.moveaxis(derivative(np.moveaxis(w_lab, 0, -1), rate), -1, 0)
    a_seg = np.stack([Rt[0, i] * a_lab[0] + Rt[1, i] * a_lab[1] + Rt[2, i] * a_lab[2] for i in range(3)])
    return tuple(np.moveaxis(v, 0, -1).reshape(-1, 3) for v in (w, w_lab, a_seg))


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
    """Each chain segment's length (m) as :func:`gaitid.model.build.build_segments` takes it: the
    median over the trial of its BSIP endpoints' distance."""
    ev = PointEvaluator(model, points, params, side, {}, trial)
    out = {}
    for name in model.chain:
        spec = model.segments[name]
        ends = spec.get("bsip_endpoints", (spec["proximal"], spec["distal"]))
        out[name] = float(np.nanmedian(np.linalg.norm(ev.point(ends[0]) - ev.point(ends[1]), axis=1)))
    return out


def prepare(trial: Trial, model: Model, static: Trial | None, nominal: ModelKinematics, design: Design,
            settings) -> Prepared:
    """The shared inputs of :func:`perturbed_kinematics` for all columns of ``design``."""
    pts, static_pts = model_points(trial, model, static, settings)
    frames, corrections, lengths = {}, {}, {}
    for side in SIDES:
        frames[side] = {seg: (nominal.root.R if seg == model.root else nominal.frames[side_path(side, seg)])
                        for _, _, seg in joint_geometry(model)}
        corrections[side] = static_corrections(model, design, side, static_pts, nominal.parameters[side], static)
        lengths[side] = nominal_lengths(model, pts, nominal.parameters[side], side, trial)
    return Prepared(pts, static_pts, frames, corrections, lengths)


def perturbed_kinematics(trial: Trial, model: Model, nominal: ModelKinematics, design: Design,
                         columns: slice, prep: Prepared, settings, subject_mass: float, overrides: dict | None,
                         noise: dict | None) -> ModelKinematics:
    """The :class:`ModelKinematics` of the ``columns`` of ``design``, stacked frame-major ((n c)
    rows): chains with per-frame Bodies, motions, the root frame and joint angular velocities (no
    angles: only what the kinetic outputs need). ``noise``: {label: (n, k, 3)} filtered noise of
    the chunk's noisy columns (:func:`filtered_noise`), or None."""
    sub = design.subset(columns)
    n, C, rate, pts = trial.n_frames, sub.n_columns, trial.point_rate, prep.points
    base = stacked(pts, C, noise, sub.noise)
    chains, motions, omegas, root, shared = {}, {}, {}, None, {}  # side-free items (pelvis) computed once
    for side in SIDES:
        centres, landmarks = column_offsets(model, sub, side, prep.frames[side], set(pts))
        corrections = {seg: np.broadcast_to(c[columns], (n, C, 3, 3)).reshape(-1, 3, 3)
                       for seg, c in prep.corrections[side].items()}
        ev = PerturbedEvaluator(model, stacked(pts, C, noise, sub.noise, landmarks, base), nominal.parameters[side],
                                side, trial, {k: v.reshape(-1, 3) for k, v in centres.items()}, corrections, shared)
        bodies, motions[side], seg_omega = segment_samples(model, sub, side, ev, subject_mass, settings.bsip,
                                                            overrides or {}, n, rate, prep.lengths[side])
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
                joint_omega[side_path(side, jname)] = kin.joint_angular_velocity(wp, wd)
    return ModelKinematics(model.name, rate, chains, motions, root, {}, {}, {}, joint_omega, nominal.parameters)
