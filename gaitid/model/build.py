"""From a Trial to the solver's inputs: the bridge the pipeline calls.

:func:`build_segments` applies a model (``models/*.toml``) to a trial: fill short marker gaps,
low-pass filter, compute joint centres and segment frames, body-segment parameters, centre-of-
mass accelerations, angular velocities and accelerations, and joint angles. It returns a
:class:`ModelKinematics` whose ``chains['left']`` / ``chains['right']`` are the foot, shank and
thigh :class:`~gaitid.dynamics.types.SegmentMotion` (distal to proximal) for the solver.

All in SI, lab frame Z up; R maps segment to lab. A frame whose segment cannot be built is
NaN in every output derived from it, never zero.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from gaitid import kinematics as kin
from gaitid.dynamics.types import SegmentMotion
from gaitid.errors import DataError, ModelError
from gaitid.model import frames as fr
from gaitid.model.bsip import load_table, segment_parameters
from gaitid.model import clusters as cl
from gaitid.model.joint_centres import chord_joint_centre, davis_hip_centre, harrington_hip_centre
from gaitid.model.markerset import Model, load_model
from gaitid.trial import Subject, Trial

SIDES = ("left", "right")


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

    chains: side -> [foot, shank, thigh] SegmentMotion (distal to proximal).
    root: the segment above the chains (pelvis), proximal frame of the hip.
    joint_centres: 'left.hip', 'left.knee'... (n, 3) m lab.
    frames: 'left.thigh', 'pelvis'... R (n, 3, 3) segment -> lab.
    angles_deg: joint angles in degrees keyed by the model's labels ('LKneeAngles'...),
    (n, 3): flexion, ab-adduction, rotation with Plug-in Gait signs.
    joint_omega_lab: 'left.knee'... (n, 3) rad/s, distal minus proximal angular velocity (lab),
    for joint power. parameters: side -> resolved subject parameters (SI, rad).
    cluster_residuals / cluster_flags: technical clusters that rebuilt landmarks ('left.thigh'...):
    per-frame RMS rigid-fit residual (n,) m, and frames above the cluster's ``max_residual``.
    """

    model: str
    rate: float
    chains: dict[str, list[SegmentMotion]]
    root: FrameMotion | None
    joint_centres: dict[str, np.ndarray]
    frames: dict[str, np.ndarray]
    angles_deg: dict[str, np.ndarray]
    joint_omega_lab: dict[str, np.ndarray]
    parameters: dict[str, dict[str, float]]
    warnings: list[str] = field(default_factory=list)
    cluster_residuals: dict[str, np.ndarray] = field(default_factory=dict)  # 'left.thigh': (n,) m RMS fit
    cluster_flags: dict[str, np.ndarray] = field(default_factory=dict)  # 'left.thigh': (n,) bool, above threshold

    def __getitem__(self, side: str) -> list[SegmentMotion]:
        return self.chains[side]


# ----------------------------------------------------------------------------- parameters

def _subject_value(subject: Subject, key: str) -> float | None:
    names = {f.name for f in fields(Subject)}
    v = getattr(subject, key) if key in names else None
    if v is None:
        low = key.lower()
        v = next((val for k, val in subject.extra.items() if k.lower() == low), None)
    try:
        v = float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return v if v is not None and math.isfinite(v) else None


def resolve_parameters(
    model: Model, subject: Subject, overrides: dict | None = None, trial: Trial | None = None
) -> dict[str, dict[str, object]]:
    """Subject parameters per side from the model's [parameters] table (SI, rad).

    ``overrides``: {name: value} for both sides, or {'left': {...}, 'right': {...}}.
    A parameter whose default is ``'markers:A,B'`` stays the string (measured later)."""
    ov = dict(overrides or {})
    per_side = {s: dict(ov.pop(s, {}) or {}) for s in SIDES}
    unknown = set(ov) | set(per_side["left"]) | set(per_side["right"])
    unknown -= set(model.parameters)
    if unknown:
        raise ModelError(
            f"unknown subject parameter(s) {', '.join(sorted(unknown))} for model '{model.name}' "
            f"(known: {', '.join(sorted(model.parameters))})",
            model.path,
        )
    software = (trial.software or "") if trial is not None else ""
    in_degrees = any(name.lower() in software.lower() for name in model.degrees_from_software)
    out: dict[str, dict[str, object]] = {}
    for side in SIDES:
        prefix = model.sides[side]
        vals: dict[str, object] = {}
        for name, spec in model.parameters.items():
            given = per_side[side].get(name, ov.get(name))
            if given is not None:
                try:
                    vals[name] = float(given)
                except (TypeError, ValueError):
                    raise ModelError(f"subject parameter '{name}' must be a number (SI units, rad), not {given!r}",
                                     model.path) from None
                continue
            found = []
            for src in spec.get("from", []):
                v = _subject_value(subject, src.replace("{side}", side).replace("{S}", prefix))
                if v is not None:
                    if spec.get("angle") and in_degrees:
                        v = math.radians(v)
                    found.append(v * float(spec.get("scale", 1.0)))
                    if not spec.get("mean"):
                        break
            if found:
                vals[name] = float(np.mean(found))
            elif "default" in spec:
                vals[name] = spec["default"]
            elif spec.get("required"):
                raise ModelError(
                    f"model '{model.name}' needs the subject parameter '{name}' ({side}), looked for "
                    f"{', '.join(s.replace('{side}', side).replace('{S}', prefix) for s in spec.get('from', []))}"
                    f"; give it in the trial's PROCESSING group or as subject={{'{name}': ...}}",
                    trial.path if trial is not None else model.path,
                )
            else:
                vals[name] = None
        out[side] = vals
    return out


# ----------------------------------------------------------------------------- evaluation

class _Evaluator:
    """Lazily evaluates a model's points and segments for one side, memoising results."""

    def __init__(self, model: Model, points: dict[str, np.ndarray], params: dict, side: str, shared: dict, trial):
        self.m, self.pts, self.params, self.side, self.shared, self.trial = model, points, params, side, shared, trial
        self.prefix = model.sides[side]
        self.cache: dict[str, object] = {}
        self.stack: list[str] = []

    def sub(self, label: str) -> str:
        return label.replace("{S}", self.prefix)

    def param(self, ref, key: str) -> float:
        if isinstance(ref, dict):
            name, sign = ref["param"], float(ref.get(self.side, 1.0))
        else:
            name, sign = ref, 1.0
        v = self.params.get(name)
        if v is None:
            raise self.m.error(key, f"parameter '{name}' has no value for the {self.side} side")
        if isinstance(v, str):
            raise self.m.error(key, f"parameter '{name}' = {v!r} was not resolved")
        return sign * float(v)

    def _memo(self, kind: str, name: str, compute):
        glob = not self.m.per_side(kind, name)
        cache = self.shared if glob else self.cache
        key = f"{kind}:{name}"
        if key not in cache:
            if key in self.stack:
                raise self.m.error(f"{kind}s.{name}", f"circular definition ({' -> '.join(self.stack + [key])})")
            self.stack.append(key)
            try:
                cache[key] = compute()
            finally:
                self.stack.pop()
        return cache[key]

    def point(self, name: str) -> np.ndarray:
        """A model point by name, else a marker / virtual point label (with {S} substituted)."""
        if name in self.m.points:
            return self._memo("point", name, lambda: self._compute_point(name))
        label = self.sub(name)
        if label in self.pts:
            return self.pts[label]
        raise DataError(f"model '{self.m.name}' needs the point '{label}', which the trial lacks",
                        self.trial.path if self.trial is not None else None)

    def segment(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self.m.segments:
            raise self.m.error("segments", f"'{name}' is referenced but not defined")
        return self._memo("segment", name, lambda: self._compute_segment(name))

    def _compute_point(self, name: str) -> np.ndarray:
        spec, key = self.m.points[name], f"points.{name}"
        method = spec["method"]
        if method == "marker":
            return self.point(spec["marker"])
        if method == "midpoint":
            groups = spec["of"] if spec["of"] and isinstance(spec["of"][0], list) else [spec["of"]]
            for group in groups:
                if all(self.sub(g) in self.pts or g in self.m.points for g in group):
                    return np.mean([self.point(g) for g in group], axis=0)
            raise DataError(f"{key}: none of the marker groups {groups} is complete in the trial",
                            self.trial.path if self.trial is not None else None)
        if method == "davis":
            R, origin = self.segment(spec["segment"])
            p = self.params
            asis_troch = p.get("asis_trochanter")
            hjc = davis_hip_centre(
                leg_length=self.param("leg_length", key),
                inter_asis_distance=self.param("inter_asis_distance", key),
                marker_radius=self.param("marker_radius", key),
                side=self.side,
                asis_trochanter=asis_troch if isinstance(asis_troch, float) and asis_troch > 0 else None,
                mean_leg_length=p.get("mean_leg_length") if isinstance(p.get("mean_leg_length"), float) else None,
            )
            return origin + R @ hjc
        if method == "chord":
            offset = self.param(spec["width"], key) / 2 + self.param("marker_radius", key)
            rot = self.param(spec["wand_rotation"], key) if "wand_rotation" in spec else 0.0
            opening = self.param(spec["angle_offset"], key) if "angle_offset" in spec else 0.0
            wand, proximal, marker = (self.point(spec[k]) for k in ("wand", "proximal", "marker"))
            return chord_joint_centre(wand, proximal, marker, offset, rot, angle_offset=opening)
        if method == "harrington":
            R, origin = self.segment(spec["segment"])
            lasi, rasi, sacrum = (self.point(spec[k]) for k in ("lasi", "rasi", "sacrum"))
            pw, pd = self.params.get("pelvis_width"), self.params.get("pelvis_depth")
            if not isinstance(pw, float):
                pw = float(np.nanmedian(np.linalg.norm(lasi - rasi, axis=1)))
            if not isinstance(pd, float):
                pd = float(np.nanmedian(np.linalg.norm((lasi + rasi) / 2 - sacrum, axis=1)))
            if not (math.isfinite(pw) and math.isfinite(pd)):
                raise DataError(f"{key}: the pelvis markers are never all visible (Harrington needs its width "
                                "and depth)", self.trial.path if self.trial is not None else None)
            return origin + R @ harrington_hip_centre(pw, pd, self.side)
        if method == "in_segment":
            R, origin = self.segment(spec["segment"])
            return origin + R @ np.asarray(spec["offset"], float)
        if method == "along_segment":  # from + (median distance of two markers) along a segment axis
            a, b = (self.sub(x) for x in spec["length"])
            if a not in self.pts or b not in self.pts:
                if "fallback" in spec:
                    return self.point(spec["fallback"])
                raise DataError(f"{key}: needs markers {a} and {b} (its length)",
                                self.trial.path if self.trial is not None else None)
            length = float(np.nanmedian(np.linalg.norm(self.pts[a] - self.pts[b], axis=1)))
            if "shorten" in spec:  # e.g. the marker radius
                length -= self.param(spec["shorten"], key)
            R, _ = self.segment(spec["segment"])
            axis = R[..., :, "xyz".index(spec["axis"][-1])] * (-1.0 if spec["axis"].startswith("-") else 1.0)
            return self.point(spec["from"]) + length * axis
        raise self.m.error(f"{key}.method", f"unknown method {method!r}")  # pragma: no cover (validated)

    def _vector(self, spec: dict, key: str) -> np.ndarray:
        if "segment" in spec:
            R, _ = self.segment(spec["segment"])
            v = R[..., :, "xyz".index(spec.get("segment_axis", "y"))]
        else:
            v = self.point(spec["to"]) - self.point(spec["from"])
        return v * float(spec.get(self.side, 1.0))

    def _compute_segment(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        spec, key = self.m.segments[name], f"segments.{name}"
        method = spec["method"]
        if method == "pelvis":
            origin, R = fr.pelvis_frame(self.point(spec["lasi"]), self.point(spec["rasi"]), self.point(spec["sacrum"]))
        elif method == "progression":
            R_seg, origin = self.segment(spec["follow"])
            R = fr.progression_frame(origin, R_seg)
        elif method == "axis_points":
            origin = self.point(spec["origin"])
            R = fr.frame_from_axis_points(origin, self.point(spec["x"]), self.point(spec["y"]), self.point(spec["z"]))
        else:  # axes
            prim, sec = spec["primary"], spec["secondary"]
            R = fr.frame_from_vectors(self._vector(prim, key), self._vector(sec, key), prim["axis"] + sec["axis"])
            origin = self.point(spec["origin"])
        for rot in spec.get("rotate", []):
            angle = self.param(rot, f"{key}.rotate")
            if angle:
                R = R @ fr.rotation_about(rot["axis"], angle)
        return R, origin


# ----------------------------------------------------------------------------- public API

def apply_aliases(trial: Trial, model: Model) -> Trial:
    """The trial with markers renamed to the model's labels (``[aliases]``: label -> other
    names, ``{S}`` the side prefix): a label the trial lacks takes the first alias it has.
    Returns the same object when nothing is renamed, else a shallow copy (arrays shared)."""
    if not model.aliases:
        return trial
    labels = list(trial.marker_labels)
    present = set(labels) | set(trial.virtual_labels)
    for canon, others in model.aliases.items():
        for pre in ([model.sides[s] for s in SIDES] if "{S}" in canon else [""]):
            name = canon.replace("{S}", pre)
            if name in present:
                continue
            for other in others:
                alt = other.replace("{S}", pre)
                if alt in labels:
                    labels[labels.index(alt)] = name
                    present.add(name)
                    break
    if labels == trial.marker_labels:
        return trial
    return replace(trial, marker_labels=labels)


def _cluster_landmarks(trial: Trial, static: Trial, model: Model) -> tuple[Trial, dict, dict, list[str]]:
    """Rebuild the landmarks of each ``[clusters.<name>]`` that the trial lacks, from the cluster
    markers calibrated in the static trial (:mod:`gaitid.model.clusters`). Returns the trial with
    the landmarks added as virtual points, residuals and flags by 'side.cluster', and warnings."""
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    static_present = set(static.marker_labels) | set(static.virtual_labels)
    new: dict[str, np.ndarray] = {}
    residuals, flags, warnings = {}, {}, []
    for name, spec in model.clusters.items():
        for side in SIDES if any("{S}" in x for x in spec["markers"] + spec["landmarks"]) else ("left",):
            pre = model.sides[side]
            mk = [x.replace("{S}", pre) for x in spec["markers"]]
            lm = [x.replace("{S}", pre) for x in spec["landmarks"]]
            todo = [x for x in lm if x not in present]
            if not todo:
                continue
            lacking = [x for x in mk + todo if x not in static_present]
            if lacking:
                raise ModelError(f"cluster '{name}' ({side}): the static trial lacks {', '.join(lacking)} needed by "
                                 f"model '{model.name}'", static.path)
            absent = [x for x in mk if x not in present]
            if absent:
                raise ModelError(f"cluster '{name}' ({side}): the trial lacks {', '.join(absent)} needed by model "
                                 f"'{model.name}' to rebuild {', '.join(todo)}", trial.path)
            cal = cl.calibrate_cluster(f"{side} {name}", {x: static.point(x) for x in mk},
                                       {x: static.point(x) for x in todo}, static.path)
            rebuilt, rms = cl.reconstruct_landmarks(cal, {x: trial.point(x) for x in mk})
            new.update(rebuilt)
            key = f"{side}.{name}" if "{S}" in "".join(spec["markers"]) else name
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


def _needed_labels(model: Model, trial: Trial) -> tuple[list[str], list[str]]:
    """(labels to read, missing required labels) for both sides."""
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    labels, missing = [], []
    for side in SIDES:
        pre = model.sides[side]
        for m in model.required_markers:
            lab = m.replace("{S}", pre)
            (labels if lab in present else missing).append(lab)
        labels += [m.replace("{S}", pre) for m in model.optional_markers if m.replace("{S}", pre) in present]
    groups = [g for g in model.one_of if all(x in present for x in g)]
    if model.one_of and not groups:
        missing.append(" or ".join("+".join(g) for g in model.one_of))
    for g in groups:
        labels += g
    # any other trial label the definitions mention (e.g. a midpoint's markers)
    for text in _strings([model.points, model.segments, model.static]):
        for side in SIDES:
            lab = text.replace("{S}", model.sides[side])
            if lab in present:
                labels.append(lab)
    return sorted(set(labels)), sorted(set(missing))


def _strings(obj) -> list[str]:
    """Every string inside nested dicts and lists."""
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [t for v in obj.values() for t in _strings(v)]
    if isinstance(obj, list):
        return [t for v in obj for t in _strings(v)]
    return []


def prepare_points(trial: Trial, labels: list[str], cutoff_hz: float | None, max_gap: int, order: int) -> dict:
    """Gap-filled (cubic, <= max_gap frames) and low-pass filtered trajectories (n, 3) m by label."""
    if not labels:
        return {}
    stacked = np.stack([trial.point(lab) for lab in labels], axis=1)  # (n, k, 3)
    stacked = kin.fill_gaps(stacked, max_gap)
    stacked = kin.butter_lowpass(stacked, trial.point_rate, cutoff_hz, order)
    return {lab: stacked[:, i, :] for i, lab in enumerate(labels)}


def _measure_defaults(params: dict, pts: dict, model: Model, trial: Trial) -> None:
    for side in SIDES:
        for name, v in params[side].items():
            if isinstance(v, str) and v.startswith("markers:"):
                a, b = v.split(":", 1)[1].split(",")
                if a not in pts or b not in pts:
                    raise ModelError(f"parameter '{name}' is measured from {a} and {b}, absent", trial.path)
                d = float(np.nanmedian(np.linalg.norm(pts[a] - pts[b], axis=1)))
                if not math.isfinite(d):
                    raise DataError(f"parameter '{name}': {a} and {b} are never both visible", trial.path)
                params[side][name] = d


def _split_subject(subject: Subject | dict | None, trial: Trial) -> tuple[Subject, dict | None]:
    """(Subject, model-parameter overrides): a dict may also carry ``mass`` (kg) and ``height`` (m);
    a path is a subject file (``.vsk`` or ``.toml``, :func:`gaitid.model.subject.read_subject`)."""
    if isinstance(subject, (str, Path)):
        from gaitid.model.subject import read_subject

        subject = read_subject(subject)
    if isinstance(subject, Subject):
        return subject, None
    if subject is None:
        return trial.subject, None
    if not isinstance(subject, dict):
        raise ModelError(f"subject must be a Subject or a dict of parameters, not {type(subject).__name__}", trial.path)
    rest = dict(subject)
    body = {k: rest.pop(k) for k in ("mass", "height") if k in rest}
    for k, v in body.items():
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
            raise ModelError(f"subject {k}={v!r} must be a positive number (kg, m)", trial.path)
    subj = replace(trial.subject, **body) if body else trial.subject
    return subj, (rest or None)


def calibrate_static(
    static: Trial, model: str | Model = "plugin-gait", subject: Subject | dict | None = None
) -> dict[str, dict[str, float]]:
    """Static (calibration) trial -> per-side parameters the model derives from it.

    For Plug-in Gait: the foot offsets ``static_plantar_flexion`` and ``static_rotation_offset``
    (rad; Plug-in Gait's StaticPlantFlex / StaticRotOff) and ``inter_asis_distance`` (m) when
    the subject does not give it. Markers are used unfiltered but gap-filled, as averages."""
    m = model if isinstance(model, Model) else load_model(model)
    static = apply_aliases(static, m)
    subj, overrides = _split_subject(subject, static)
    params = resolve_parameters(m, subj, overrides, static)
    labels, missing = _needed_labels(m, static)
    if missing:
        raise ModelError(f"static trial lacks marker(s) {', '.join(missing)} needed by model '{m.name}'",
                         static.path)
    for spec in m.static.values():
        labels += [spec[k].replace("{S}", m.sides[s]) for s in SIDES for k in ("toe", "heel") if k in spec]
    present = set(static.marker_labels) | set(static.virtual_labels)
    pts = prepare_points(static, sorted(set(labels) & present), None, 10, 4)
    _measure_defaults(params, pts, m, static)
    out: dict[str, dict[str, float]] = {s: {} for s in SIDES}
    for name, spec in m.parameters.items():
        if spec.get("static"):
            for s in SIDES:
                params[s][name] = 0.0  # calibrate from the uncorrected frames
    shared: dict = {}
    for side in SIDES:
        ev = _Evaluator(m, pts, params[side], side, shared, static)
        for cal_name, spec in m.static.items():
            heel_label = ev.sub(spec["heel"])
            if heel_label not in pts:
                raise ModelError(f"static calibration '{cal_name}' needs {heel_label}, absent", static.path)
            R_shank, _ = ev.segment(spec["shank"])
            pf, rot = fr.static_foot_offsets(
                ev.point(spec["ankle"]), ev.point(spec["toe"]), pts[heel_label], R_shank, side,
                flat_foot=bool(spec.get("flat_foot", True)), sole_delta=float(spec.get("sole_delta", 0.0)),
            )
            if not (math.isfinite(pf) and math.isfinite(rot)):
                raise DataError(f"static calibration '{cal_name}' ({side}): no frame with all markers",
                                static.path)
            names = [n for n, p in m.parameters.items() if p.get("static") == cal_name]
            if len(names) == 2:
                out[side][names[0]], out[side][names[1]] = pf, rot
        if "inter_asis_distance" in params[side] and isinstance(params[side]["inter_asis_distance"], float):
            out[side].setdefault("inter_asis_distance", params[side]["inter_asis_distance"])
    return out


def _static_parameters(m: Model, params: dict, static: Trial | None, subject, subj: Subject,
                       overrides: dict | None) -> list[str]:
    """Fill the static-calibrated parameters (foot offsets, inter-ASIS) from a static trial, in place;
    without one, warn for each that neither the subject nor the caller gives. Returns warnings."""
    def explicit(name, side):
        return bool(overrides) and (name in overrides or name in (overrides.get(side) or {}))

    warnings = []
    if static is not None:
        cal = calibrate_static(static, m, subject)
        for side in SIDES:
            for name, v in cal[side].items():
                if name == "inter_asis_distance" and not isinstance(params[side].get(name), str):
                    continue  # a measured distance from the subject wins over the static markers
                if not explicit(name, side):
                    params[side][name] = v
        return warnings
    for side in SIDES:
        for name, spec in m.parameters.items():
            if not spec.get("static"):
                continue
            given = any(_subject_value(subj, s.replace("{S}", m.sides[side])) is not None for s in spec.get("from", []))
            if not given and not explicit(name, side):
                warnings.append(f"{side} {name}: no static trial and no stored value; using {spec.get('default')}")
    return warnings


def _joint_outputs(m: Model, evaluators: dict, frames_out: dict, omegas_lab: dict) -> tuple[dict, dict]:
    """Joint angles (deg, by label) and joint angular velocities (lab, by 'side.joint')."""
    angles: dict[str, np.ndarray] = {}
    joint_omega: dict[str, np.ndarray] = {}
    for side in SIDES:
        ev = evaluators[side]

        def key(name: str) -> str:
            return name if name == m.root else f"{side}.{name}"

        def seg_R(name: str) -> np.ndarray:
            R = frames_out.get(key(name))
            if R is None:
                R = ev.segment(name)[0]
            return apply_angle_axes(R, m.segments[name].get("angle_axes"))

        for jname, spec in m.joints.items():
            R_prox = seg_R(spec["proximal"])
            for rot in spec.get("proximal_rotate", []):
                angle = ev.param(rot, f"joints.{jname}.proximal_rotate")
                if angle:
                    R_prox = R_prox @ fr.rotation_about(rot["axis"], angle)
            q = kin.cardan_angles(R_prox, seg_R(spec["distal"]), spec.get("sequence", "YXZ"))
            order = [i - 1 for i in spec.get("outputs", [1, 2, 3])]
            signs = np.asarray(spec.get(side, [1, 1, 1]), float)
            label = spec.get("label", f"{{S}}{jname}").replace("{S}", m.sides[side])
            angles[label] = np.degrees(q[:, order] * signs) + np.asarray(spec.get("offsets", [0, 0, 0]), float)
            wp, wd = omegas_lab.get(key(spec["proximal"])), omegas_lab.get(key(spec["distal"]))
            if wp is not None and wd is not None:
                joint_omega[f"{side}.{jname}"] = kin.joint_angular_velocity(wp, wd)
    return angles, joint_omega


def build_segments(
    trial: Trial,
    model: str | Path | Model = "plugin-gait",
    static: Trial | None = None,
    subject: Subject | dict | None = None,
    *,
    bsip: str | None = None,
    marker_cutoff_hz: float | None = 6.0,
    max_gap_frames: int = 10,
    filter_order: int = 4,
    segment_overrides: dict | None = None,
    settings=None,
) -> ModelKinematics:
    """Apply a model to a trial and return the solver's inputs (see :class:`ModelKinematics`).

    ``static``: a static calibration trial (Plug-in Gait: foot offsets, inter-ASIS distance).
    Without it the offsets come from the trial's PROCESSING values (Plug-in Gait stores them),
    else zero with a warning. ``subject``: a Subject replacing ``trial.subject``, a subject file
    path (``.vsk``, ``.toml``), or a dict of
    parameter overrides ({name: value} or {'left': {...}, 'right': {...}}; names from the model's
    [parameters], SI and rad). ``bsip``: a table name overriding the model's. Markers are
    gap-filled (cubic, <= ``max_gap_frames``) and low-pass filtered (zero-lag Butterworth,
    ``filter_order``, ``marker_cutoff_hz``; None: unfiltered). ``segment_overrides``:
    {'left.thigh': {'mass': ..., 'inertia': [...]}, 'thigh': {...}} per-subject BSIP values.
    ``settings``: a :class:`gaitid.settings.Settings` supplying model, bsip, cutoff, order and
    gap length (explicit arguments are ignored then).
    """
    if settings is not None:
        model, bsip = settings.model, settings.bsip
        marker_cutoff_hz, filter_order = settings.marker_cutoff_hz, settings.filter_order
        max_gap_frames = settings.max_gap_frames
    m = model if isinstance(model, Model) else load_model(model)
    if trial.n_frames < 3:
        raise DataError(f"trial has {trial.n_frames} frame(s); at least 3 are needed for derivatives",
                        trial.path)
    warnings: list[str] = []
    subj, overrides = _split_subject(subject, trial)
    params = resolve_parameters(m, subj, overrides, trial)
    if subj.mass is None or not subj.mass > 0:
        raise ModelError(f"body mass unknown for the trial: give subject={{...}} or a Subject with mass",
                         trial.path)
    trial = apply_aliases(trial, m)
    residuals, flags = {}, {}
    if static is not None:
        static = apply_aliases(static, m)
        if m.clusters:
            trial, residuals, flags, more = _cluster_landmarks(trial, static, m)
            warnings += more
    labels, missing = _needed_labels(m, trial)
    if missing:
        hint = ""
        rebuilt = {x.replace("{S}", m.sides[s]) for c in m.clusters.values() for x in c["landmarks"] for s in SIDES}
        if static is None and rebuilt & set(missing):
            hint = (f" (technical clusters rebuild {', '.join(sorted(rebuilt & set(missing)))} from a static "
                    "trial: give static=...)")
        raise ModelError(f"trial lacks marker(s) {', '.join(missing)} needed by model '{m.name}'{hint}", trial.path)

    warnings += _static_parameters(m, params, static, subject, subj, overrides)
    pts = prepare_points(trial, labels, marker_cutoff_hz, max_gap_frames, filter_order)
    _measure_defaults(params, pts, m, trial)
    table = load_table(bsip or m.bsip)
    rate = trial.point_rate
    seg_ov = dict(segment_overrides or {})

    shared: dict = {}
    chains: dict[str, list[SegmentMotion]] = {}
    frames_out: dict[str, np.ndarray] = {}
    centres: dict[str, np.ndarray] = {}
    omegas_lab: dict[str, np.ndarray] = {}
    root = None
    evaluators = {}
    for side in SIDES:
        ev = _Evaluator(m, pts, params[side], side, shared, trial)
        evaluators[side] = ev
        chain = []
        for name in m.chain:
            spec = m.segments[name]
            R, _ = ev.segment(name)
            prox, dist = ev.point(spec["proximal"]), ev.point(spec["distal"])
            # the BSIP table's endpoints (length, centre of mass) default to the joint centres
            e0, e1 = (ev.point(p) for p in spec["bsip_endpoints"]) if "bsip_endpoints" in spec else (prox, dist)
            lengths = np.linalg.norm(e0 - e1, axis=1)
            length = float(np.median(lengths[np.isfinite(lengths)])) if np.isfinite(lengths).any() else math.nan
            if not math.isfinite(length):
                raise DataError(f"{side} {name}: its endpoints are never both visible", trial.path)
            ov = {**seg_ov.get(name, {}), **seg_ov.get(f"{side}.{name}", {})}
            sp = segment_parameters(table.row(spec.get("bsip", name)), subj.mass, length,
                                    spec.get("long_axis", "z"), spec.get("ml_axis", "y"), ov)
            com = e0 + sp.com_from_proximal * (e1 - e0)
            com_acc = kin.derivative(kin.derivative(com, rate), rate)
            omega_seg, omega_lab = kin.angular_velocity(R, rate)
            alpha_seg, _ = kin.angular_acceleration(R, omega_seg, rate)
            chain.append(SegmentMotion(name=name, mass=sp.mass, inertia_seg=sp.inertia_seg, R=R, com_lab=com,
                                       com_acc_lab=com_acc, omega_seg=omega_seg, alpha_seg=alpha_seg,
                                       proximal_lab=prox, distal_lab=dist))
            frames_out[f"{side}.{name}"] = R
            omegas_lab[f"{side}.{name}"] = omega_lab
            centres[f"{side}.{spec['proximal']}"] = prox
        chains[side] = chain
    if m.root is not None:
        R, origin = evaluators["left"].segment(m.root)
        omega_seg, omega_lab = kin.angular_velocity(R, rate)
        alpha_seg, _ = kin.angular_acceleration(R, omega_seg, rate)
        root = FrameMotion(m.root, R, origin, omega_seg, alpha_seg)
        frames_out[m.root] = R
        omegas_lab[m.root] = omega_lab
    angles, joint_omega = _joint_outputs(m, evaluators, frames_out, omegas_lab)
    return ModelKinematics(m.name, rate, chains, root, centres, frames_out, angles, joint_omega,
                           {s: {k: v for k, v in params[s].items()} for s in SIDES}, warnings, residuals, flags)


def apply_angle_axes(R: np.ndarray, axes: list[str] | None) -> np.ndarray:
    """R with its columns re-ordered/negated for joint angles: ``['-z', 'y', 'x']`` makes the
    Plug-in Gait foot (z back, x up) an anterior/left/up frame."""
    if not axes:
        return R
    cols = []
    for a in axes:
        sign = -1.0 if a.startswith("-") else 1.0
        cols.append(sign * R[..., :, "xyz".index(a.lstrip("-+"))])
    return np.stack(cols, axis=-1)
