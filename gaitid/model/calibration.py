"""Subject parameters a model uses, resolved per side, and the static calibration.

:func:`resolve_parameters` reads the model's ``[parameters]`` from the subject (its fields and
PROCESSING values) and the caller's overrides (SI, rad); :func:`calibrate_static` derives the
static-calibrated ones (Plug-in Gait's foot offsets, the inter-ASIS distance) from a static
trial; :func:`static_parameters` puts them in place for a walking trial.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from gaitid.core.errors import DataError, ModelError, SettingsError
from gaitid.core.subject_record import Subject, check_plausible, lower_keys, subject_value
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES, parse_side, side_key
from gaitid.model import frames as fr
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model, load_model
from gaitid.model.trial_markers import apply_aliases, needed_labels, prepare_points


def split_sides(overrides: dict | None) -> tuple[dict, dict[str, dict]]:
    """Parameter overrides split into those for both sides and those per side:
    ``{'knee_width': 0.1, 'left': {'leg_length': 0.9}}`` -> ``({'knee_width': 0.1},
    {'Left': {'leg_length': 0.9}, 'Right': {}})``; side keys in any case."""
    common, per_side = {}, {s: {} for s in SIDES}
    for key, value in (overrides or {}).items():
        try:
            side = parse_side(key) if isinstance(value, dict) else None
        except SettingsError:
            side = None
        if side is None:
            common[key] = value
        else:
            per_side[side].update(value)
    return common, per_side


def resolve_parameters(
    model: Model, subject: Subject, overrides: dict | None = None, trial: Trial | None = None
) -> dict[str, dict[str, object]]:
    """Subject parameters per side from the model's [parameters] table (SI, rad).

    ``overrides``: {name: value} for both sides, and/or per side {'left': {...}, 'right': {...}}
    (or 'Left'/'Right').
    A parameter whose default is ``'markers:A,B'`` stays the string (measured later)."""
    ov, per_side = split_sides(overrides)
    unknown = set(ov) | set().union(*per_side.values())
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
    extra = lower_keys(subject.extra)
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
                v = subject_value(subject, src.replace("{side}", side_key(side)).replace("{S}", prefix), extra)
                if v is not None:
                    if spec.get("angle") and in_degrees:
                        v = math.radians(v)
                    found.append(v * float(spec.get("scale", 1.0)))
                    if not spec.get("mean"):
                        break
            if found:
                # (the mean of a few sources: numpy's sum, in order, for fewer than 8 values)
                vals[name] = float(sum(found) / len(found) if len(found) < 8 else np.mean(found))
            elif "default" in spec:
                vals[name] = spec["default"]
            elif spec.get("required"):
                raise ModelError(
                    f"model '{model.name}' needs the subject parameter '{name}' ({side.lower()}), looked for "
                    f"{', '.join(s.replace('{side}', side_key(side)).replace('{S}', prefix) for s in spec.get('from', []))}"
                    f"; give it in the trial's PROCESSING group or as subject={{'{name}': ...}}",
                    trial.path if trial is not None else model.path,
                )
            else:
                vals[name] = None
        out[side] = vals
    given_centres(model, subject, out)
    return out


def given_centres(model: Model, subject: Subject, params: dict) -> None:
    """Put in ``params[side][centre]`` (3,) m the subject's values ``<centre>_<side>_x/_y/_z`` for
    every point whose method is ``functional`` (``centre = ...``) or that names one
    (``functional = "hip_centre"``), when the subject has all three (from a functional
    calibration, :mod:`gaitid.model.functional`, or a subject file), and the fit's residual (m)
    ``<centre>_<side>_residual`` as ``<centre>_residual`` when given; in place."""
    extra = lower_keys(subject.extra)
    for spec in model.points.values():
        name = spec.get("centre") if spec["method"] == "functional" else spec.get("functional")
        for side in SIDES if name else ():
            xyz = [subject_value(subject, f"{name}_{side_key(side)}_{a}", extra) for a in "xyz"]
            if all(v is not None for v in xyz):
                params[side][name] = np.array(xyz, float)
                residual = subject_value(subject, f"{name}_{side_key(side)}_residual", extra)
                if residual is not None:
                    params[side][f"{name}_residual"] = residual


def measure_defaults(params: dict, pts: dict, model: Model, trial: Trial) -> None:
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


def split_subject(subject: Subject | dict | None, trial: Trial, parameters: dict | None = None
                  ) -> tuple[Subject, dict | None]:
    """(Subject, model-parameter overrides) for ``trial``: a Subject is used as given; a dict holds
    parameter overrides over the trial's own subject and may also carry ``mass`` (kg) and
    ``height`` (m); None is the trial's subject. ``parameters``: overrides given apart (not with
    a dict ``subject``, which holds its own)."""
    if isinstance(subject, Subject):
        subj, overrides = subject, None
    elif subject is None:
        subj, overrides = trial.subject, None
    elif isinstance(subject, dict):
        rest = dict(subject)
        body = {k: rest.pop(k) for k in ("mass", "height") if k in rest}
        for k, v in body.items():
            check_plausible(k, v, "subject")
        subj, overrides = (replace(trial.subject, **body) if body else trial.subject), (rest or None)
    else:
        raise ModelError(f"subject must be a Subject or a dict of parameters, not {type(subject).__name__} (read a "
                         "subject file with gaitid.subject.readers.read_subject)", trial.path)
    if parameters:
        if overrides:
            raise ModelError("model parameter overrides given twice (in subject={...} and parameters=...): "
                             "give them once", trial.path)
        overrides = parameters
    return subj, overrides


def calibrate_static(
    static: Trial, model: str | Model = "plugin-gait", subject: Subject | dict | None = None,
    parameters: dict | None = None, flat_foot: dict[str, bool] | None = None,
) -> dict[str, dict[str, float]]:
    """Static (calibration) trial -> per-side parameters the model derives from it.

    For Plug-in Gait: the foot offsets ``static_plantar_flexion`` and ``static_rotation_offset``
    (rad; Plug-in Gait's StaticPlantFlex / StaticRotOff) and ``inter_asis_distance`` (m) when
    the subject does not give it. ``subject`` and ``parameters``: as :func:`split_subject` takes
    them. ``flat_foot``: {side: bool}, the flat-foot option per side (else the model's
    ``flat_foot`` parameter: the subject's stored flag or off, Nexus's default). Markers are used
    unfiltered but gap-filled, as averages."""
    m = model if isinstance(model, Model) else load_model(model)
    static = apply_aliases(static, m)
    subj, overrides = split_subject(subject, static, parameters)
    params = resolve_parameters(m, subj, overrides, static)
    labels, missing = needed_labels(m, static)
    if missing:
        raise ModelError(f"static trial lacks marker(s) {', '.join(missing)} needed by model '{m.name}'",
                         static.path)
    for spec in m.static.values():
        labels += [spec[k].replace("{S}", m.sides[s]) for s in SIDES for k in ("toe", "heel") if k in spec]
    present = set(static.marker_labels) | set(static.virtual_labels)
    pts = prepare_points(static, sorted(set(labels) & present), None, 10, 4)
    measure_defaults(params, pts, m, static)
    out: dict[str, dict[str, float]] = {s: {} for s in SIDES}
    for name, spec in m.parameters.items():
        if spec.get("static"):
            for s in SIDES:
                params[s][name] = 0.0  # calibrate from the uncorrected frames
    common, per_side = split_sides(overrides)
    for side in SIDES:
        on_axis = knee_on_axis(m, pts, params[side], side, subj, static)
        if on_axis is not None:  # the model places its knee on the functional axis (CGM2.6)
            for name, value in on_axis.items():
                params[side][name] = out[side][name] = value
            continue
        turn = functional_thigh_rotation(m, pts, params[side], side, subj, static)
        if turn is not None and turn[0] not in common and turn[0] not in per_side[side]:
            params[side][turn[0]] = out[side][turn[0]] = turn[1]
    shared: dict = {}
    for side in SIDES:
        ev = PointEvaluator(m, pts, params[side], side, shared, static)
        for cal_name, spec in m.static.items():
            heel_label = ev.sub(spec["heel"])
            if heel_label not in pts:
                raise ModelError(f"static calibration '{cal_name}' needs {heel_label}, absent", static.path)
            R_shank, _ = ev.segment(spec["shank"])
            pf, rot = fr.static_foot_offsets(
                ev.point(spec["ankle"]), ev.point(spec["toe"]), pts[heel_label], R_shank, side,
                flat_foot=flat_foot[side] if flat_foot is not None else flat_foot_of(spec, params[side]),
                sole_delta=float(spec.get("sole_delta", 0.0)),
            )
            if not (math.isfinite(pf) and math.isfinite(rot)):
                raise DataError(f"static calibration '{cal_name}' ({side.lower()}): no frame with all markers",
                                static.path)
            names = [n for n, p in m.parameters.items() if p.get("static") == cal_name]
            if len(names) == 2:
                out[side][names[0]], out[side][names[1]] = pf, rot
        if "inter_asis_distance" in params[side] and isinstance(params[side]["inter_asis_distance"], float):
            out[side].setdefault("inter_asis_distance", params[side]["inter_asis_distance"])
    return out


def functional_thigh_rotation(m: Model, pts: dict, side_params: dict, side: str, subject: Subject, static: Trial
                               ) -> tuple[str, float] | None:
    """(parameter, rad): the wand rotation of the model's knee chord (Plug-in Gait's ThighRotation)
    that turns the thigh frame about its long axis until its y axis lies along the subject's
    functional knee axis ``knee_axis_<side>_x/_y/_z`` (unit, lab at the static pose; SARA,
    :mod:`gaitid.model.functional`), both projected normal to the long axis, over the static's
    mean pose; None without an axis, a chord with a wand rotation, or a segment ending at the
    knee. Solved by secant steps on the angle between the two (to 1e-6 rad)."""
    spec, extra = m.points.get("knee", {}), lower_keys(subject.extra)
    rot = spec.get("wand_rotation")
    axis = [subject_value(subject, f"knee_axis_{side_key(side)}_{a}", extra) for a in "xyz"]
    thigh = next((n for n, seg in m.segments.items() if seg.get("distal") == "knee"), None)
    if spec.get("method") != "chord" or not isinstance(rot, dict) or thigh is None or None in axis:
        return None
    name, axis = rot["param"], np.asarray(axis, float)

    def error(theta: float) -> float:
        R, _ = PointEvaluator(m, pts, {**side_params, name: theta}, side, {}, static).segment(thigh)
        R = np.nanmean(R, axis=0)
        z, y = R[:, 2] / np.linalg.norm(R[:, 2]), R[:, 1]
        a = axis - z * (axis @ z)
        return float(np.arctan2(z @ np.cross(y, a), y @ a))

    t0, e0 = 0.0, error(0.0)
    t1 = -e0 * float(rot.get(side_key(side), 1.0))  # the parameter's sign per side
    for _ in range(8):
        e1 = error(t1)
        if not np.isfinite(e1) or abs(e1) < 1e-6 or e1 == e0:
            break
        t0, t1, e0 = t1, t1 - e1 * (t1 - t0) / (e1 - e0), e1
    if not np.isfinite(t1):
        raise DataError(f"{side.lower()} functional knee axis: the thigh frame cannot be turned onto it", static.path)
    return name, float(t1)


def knee_on_axis(m: Model, pts: dict, side_params: dict, side: str, subject: Subject, static: Trial
                 ) -> dict[str, object] | None:
    """The knee centre on the subject's functional knee axis, as CGM2.6 places it (pyCGM2's SARA
    knee calibration), for a model whose chord knee names ``axis_offset`` and whose thigh turns
    about its z axis by a parameter (``rotate``): {axis_offset: the shift (3,) m, in the chord's
    frame (:func:`gaitid.model.point_methods.chord_frame`), from the chord's centre to the
    axis's nearest point; the turn's parameter: the angle (rad) about the thigh's long axis that
    lays its y axis along the functional axis (both projected normal to the long axis)}, averaged
    over the static's frames. The axis: ``knee_axis_<side>_x/_y/_z`` through
    ``knee_axis_point_<side>_x/_y/_z`` (lab at the static pose; :mod:`gaitid.model.functional`).
    None when the model does not ask or the subject lacks either."""
    from gaitid.model.point_methods import chord_frame

    spec, extra = m.points.get("knee", {}), lower_keys(subject.extra)
    name = spec.get("axis_offset")
    axis = [subject_value(subject, f"knee_axis_{side_key(side)}_{a}", extra) for a in "xyz"]
    point = [subject_value(subject, f"knee_axis_point_{side_key(side)}_{a}", extra) for a in "xyz"]
    if spec.get("method") != "chord" or not name or None in axis or None in point:
        return None
    thigh = next((n for n, seg in m.segments.items() if seg.get("distal") == "knee"), None)
    turn = next((r["param"] for r in m.segments.get(thigh, {}).get("rotate", []) if r.get("axis") == "z"), None)
    if turn is None:
        raise ModelError(f"points.knee.axis_offset: the thigh ('{thigh}') needs a rotate about z by a parameter, "
                         "to lay its y axis along the functional knee axis", m.path)
    base = {k: v for k, v in side_params.items() if k != name} | {turn: 0.0}
    ev = PointEvaluator(m, pts, base, side, {}, static)
    centre = ev.point("knee")
    a = np.asarray(axis, float) / np.linalg.norm(np.asarray(axis, float))
    nearest = np.asarray(point, float) + ((centre - np.asarray(point, float)) @ a)[:, None] * a
    R = chord_frame(centre, ev.point(spec["proximal"]), ev.point(spec["marker"]))
    shift = np.nanmean(np.einsum("nji,nj->ni", R, nearest - centre), axis=0)
    R, _ = PointEvaluator(m, pts, {**base, name: shift}, side, {}, static).segment(thigh)
    R = np.nanmean(R, axis=0)
    z, y = R[:, 2] / np.linalg.norm(R[:, 2]), R[:, 1]
    along = a - z * (a @ z)
    angle = float(np.arctan2(z @ np.cross(y, along), y @ along))
    if not (np.isfinite(shift).all() and math.isfinite(angle)):
        raise DataError(f"{side.lower()} functional knee axis: no static frame shows the knee's chord", static.path)
    return {name: shift, turn: angle}


def static_parameters(m: Model, params: dict, static: Trial | None, subject, subj: Subject,
                      overrides: dict | None, parameters: dict | None = None,
                      flat_foot: bool | None = None) -> list[str]:
    """Fill the static-calibrated parameters (foot offsets, inter-ASIS) from a static trial, in place;
    without one, warn for each that neither the subject nor the caller gives. ``flat_foot``: the
    setting (:attr:`gaitid.core.settings.Settings.flat_foot`; see :func:`flat_foot_choice`).
    Returns warnings."""
    common, per_side = split_sides(overrides)

    def explicit(name, side):
        return name in common or name in per_side[side]

    warnings = []
    if static is not None:
        choice = flat_foot_choice(m, params, static, subject, subj, overrides, parameters, flat_foot)
        cal = calibrate_static(static, m, subject, parameters, choice)
        for side in choice or {}:
            params[side]["flat_foot"] = float(choice[side])  # what the calibration used, for its re-runs
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
            given = any(subject_value(subj, s.replace("{S}", m.sides[side])) is not None for s in spec.get("from", []))
            if not given and not explicit(name, side):
                warnings.append(f"{side.lower()} {name}: no static trial and no stored value; using {spec.get('default')}")
    return warnings


# the stored plantar flexion offset and the one recomputed with an option this close (and the other
# option's farther): the stored one came from that option. The option moves it by 0.008-0.06 rad on
# the real FlatFoot statics, where the matching one agrees to 2e-6 rad (the rotation offset also
# depends on the marker radius, which files often do not store: it is not used)
FLAT_FOOT_MATCH_RAD = 1e-3


def flat_foot_of(spec: dict, side_params: dict) -> bool:
    """A static calibration's flat-foot option: ``flat_foot`` in its table is a bool or the name
    of the model parameter holding it (1 on, 0 off)."""
    flat = spec.get("flat_foot", False)
    return bool(side_params.get(flat) or 0.0) if isinstance(flat, str) else bool(flat)


def flat_foot_choice(m: Model, params: dict, static: Trial, subject, subj: Subject, overrides: dict | None,
                     parameters: dict | None, setting: bool | None) -> dict[str, bool] | None:
    """The flat-foot option per side of the static calibration, first given of: the caller's
    parameter ``flat_foot`` (``subject={'flat_foot': 1}``), ``setting`` (``--flat-foot`` /
    ``--no-flat-foot``), a flag stored with the trial's or the static's subject (PROCESSING or
    subject file ``LFlatFoot``/``RFlatFoot``/``FlatFoot``), the foot offsets Nexus stored
    (StaticPlantFlex of the static or the trial, when gaitid's calibration reproduces it within
    FLAT_FOOT_MATCH_RAD with one option and not the other); else off,
    Nexus's and pyCGM2's default. None when the model's static calibration has no parameter for it."""
    specs = [s for s in m.static.values() if isinstance(s.get("flat_foot"), str)]
    if not specs or specs[0]["flat_foot"] not in m.parameters:
        return None
    name = specs[0]["flat_foot"]
    common, per_side = split_sides(overrides)
    sources = m.parameters[name].get("from", [])
    offsets = [n for n, p in m.parameters.items() if p.get("static") and p.get("angle")]
    choice, open_sides = {}, []
    for side in SIDES:
        if name in common or name in per_side[side]:
            choice[side] = bool(params[side][name])
        elif setting is not None:
            choice[side] = bool(setting)
        else:
            flag = _stored(m, sources, side, (subj, static.subject))
            choice[side] = bool(flag) if flag is not None else False
            if flag is None:
                open_sides.append(side)
    if open_sides and offsets:
        pf = offsets[0]  # the plantar flexion: the offset the option changes
        stored = {side: [_stored(m, m.parameters[pf].get("from", []), side, (s,)) for s in (static.subject, subj)]
                  for side in open_sides}
        if any(v for vals in stored.values() for v in vals):
            both = {f: calibrate_static(static, m, subject, parameters, {s: f for s in SIDES}) for f in (True, False)}
            for side in open_sides:
                for v in (v for v in stored[side] if v):
                    near = [f for f in (True, False) if abs(both[f][side][pf] - v) <= FLAT_FOOT_MATCH_RAD]
                    if len(near) == 1:
                        choice[side] = near[0]
                        break
    return choice


def _stored(m: Model, sources: list[str], side: str, subjects) -> float | None:
    """The first value stored under ``sources`` (model ``from`` names) in ``subjects``, or None."""
    for subject in subjects:
        for src in sources:
            v = subject_value(subject, src.replace("{side}", side_key(side)).replace("{S}", m.sides[side]))
            if v is not None:
                return v
    return None
