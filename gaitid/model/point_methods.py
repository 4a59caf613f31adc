"""Point methods: every way a model file's ``[points.<name>]`` can be computed, in one table.

:data:`POINT_METHODS` maps each method name (``method = "chord"``) to a :class:`PointMethod`:
the keys the point's table needs and may have (checked when the model is loaded,
:mod:`gaitid.model.markerset`), an extra check, its evaluator (called by
:class:`~gaitid.model.evaluator.PointEvaluator`), the palpated landmark markers it uses, and
the error model's ``[joint_centres.<section>]`` that gives its error when the point is a joint
centre (:mod:`gaitid.uncertainty.errormodel`). A method missing here is unknown everywhere:
:func:`point_method` raises :class:`~gaitid.core.errors.ModelError` naming the known ones.

An evaluator takes the evaluator of one side (``ev``: its ``point``, ``segment``, ``param``,
``params``, ``pts``, ``sub``, ``side``), the point's table and its key (``'points.knee'``, for
messages), and returns the point's trajectory (n, 3) m in the lab, NaN where it is unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gaitid.core.errors import ModelError
from gaitid.model.frames import frame_from_vectors
from gaitid.model.joint_centres import chord_joint_centre, davis_hip_centre, harrington_hip_centre

AXES = ("x", "y", "z", "-x", "-y", "-z")


@dataclass(frozen=True)
class PointMethod:
    """One point method. ``required`` / ``optional``: its keys in the point's table (besides
    ``method``, ``side``, ``label``); ``check(model, where, spec)``: raises the model's error for a
    value the keys' presence does not catch; ``evaluate(ev, spec, key)`` -> (n, 3) m;
    ``landmarks(spec, prefix, present)`` -> the palpated landmark labels the point uses (side
    prefix substituted; ``present``: the trial's labels), None when it uses none; ``error``: the
    error model's ``[joint_centres.<error>]`` section, the point's error as a joint centre."""

    name: str
    required: frozenset[str]
    evaluate: Callable
    error: str
    optional: frozenset[str] = frozenset()
    check: Callable | None = None
    landmarks: Callable | None = None


def _marker(ev, spec: dict, key: str) -> np.ndarray:
    """A marker or virtual point of the trial (or another model point), as it is."""
    return ev.point(spec["marker"])


def _groups(spec: dict) -> list[list[str]]:
    """A midpoint's candidate groups: ``of`` is one list of labels or a list of lists."""
    return spec["of"] if spec["of"] and isinstance(spec["of"][0], list) else [spec["of"]]


def _midpoint(ev, spec: dict, key: str) -> np.ndarray:
    """The mean of the first group whose labels the trial (or the model) all has."""
    groups = _groups(spec)
    for group in groups:
        if all(ev.sub(g) in ev.pts or g in ev.m.points for g in group):
            return np.mean([ev.point(g) for g in group], axis=0)
    raise ev.data_error(f"{key}: none of the marker groups {groups} is complete in the trial")


def _midpoint_landmarks(spec: dict, prefix: str, present: Collection[str]) -> list[str]:
    """The first group whose labels the trial all has (none: no landmark)."""
    for g in _groups(spec):
        labels = [x.replace("{S}", prefix) for x in g]
        if all(x in present for x in labels):
            return labels
    return []


def _davis(ev, spec: dict, key: str) -> np.ndarray:
    """Davis et al. (1991) hip centre, as Plug-in Gait computes it, in the segment's frame."""
    R, origin = ev.segment(spec["segment"])
    p = ev.params
    asis_troch = p.get("asis_trochanter")
    hjc = davis_hip_centre(
        leg_length=ev.param("leg_length", key),
        inter_asis_distance=ev.param("inter_asis_distance", key),
        marker_radius=ev.param("marker_radius", key),
        side=ev.side,
        asis_trochanter=asis_troch if isinstance(asis_troch, float) and asis_troch > 0 else None,
        mean_leg_length=p.get("mean_leg_length") if isinstance(p.get("mean_leg_length"), float) else None,
    )
    return origin + R @ hjc


def _chord(ev, spec: dict, key: str) -> np.ndarray:
    """Plug-in Gait's chord function: offset = width / 2 + marker radius from the lateral marker.
    With ``axis_offset`` naming a side's parameter (3,) m that the static calibration set (the
    functional knee axis, :func:`gaitid.model.calibration.knee_on_axis`), the centre moves by it
    in the frame of the chord's centre, ``proximal`` and ``marker`` (z to proximal, y towards the
    marker): onto the functional axis, as CGM2.6 places its knee centre."""
    offset = ev.param(spec["width"], key) / 2 + ev.param("marker_radius", key)
    rot = ev.param(spec["wand_rotation"], key) if "wand_rotation" in spec else 0.0
    opening = ev.param(spec["angle_offset"], key) if "angle_offset" in spec else 0.0
    wand, proximal, marker = (ev.point(spec[k]) for k in ("wand", "proximal", "marker"))
    centre = chord_joint_centre(wand, proximal, marker, offset, rot, angle_offset=opening)
    shift = ev.params.get(spec.get("axis_offset", ""))
    if isinstance(shift, np.ndarray):
        centre = centre + chord_frame(centre, proximal, marker) @ shift
    return centre


def chord_frame(centre: np.ndarray, proximal: np.ndarray, marker: np.ndarray) -> np.ndarray:
    """R (n, 3, 3), lab <- frame: z from ``centre`` to ``proximal``, y towards ``marker`` (all (n, 3) m)."""
    return frame_from_vectors(proximal - centre, marker - centre, "zy")


def _chord_check(model, where: str, spec: dict) -> None:
    if spec["width"] not in model.parameters:
        raise model.error(f"{where}.width", f"parameter '{spec['width']}' is not defined in [parameters]")


def _chord_landmarks(spec: dict, prefix: str, present: Collection[str]) -> list[str]:
    """The lateral joint marker (KNE, ANK)."""
    return [spec["marker"].replace("{S}", prefix)]


def _harrington(ev, spec: dict, key: str) -> np.ndarray:
    """Harrington et al. (2007) hip centre from pelvis width and depth (parameters, else the
    medians of the markers' distances over the trial), in the segment's frame."""
    R, origin = ev.segment(spec["segment"])
    lasi, rasi, sacrum = (ev.point(spec[k]) for k in ("lasi", "rasi", "sacrum"))
    pw, pd = ev.params.get("pelvis_width"), ev.params.get("pelvis_depth")
    if not isinstance(pw, float):
        pw = float(np.nanmedian(np.linalg.norm(lasi - rasi, axis=1)))
    if not isinstance(pd, float):
        pd = float(np.nanmedian(np.linalg.norm((lasi + rasi) / 2 - sacrum, axis=1)))
    if not (math.isfinite(pw) and math.isfinite(pd)):
        raise ev.data_error(f"{key}: the pelvis markers are never all visible (Harrington needs its width and depth)")
    return origin + R @ harrington_hip_centre(pw, pd, ev.side)


def _in_segment(ev, spec: dict, key: str) -> np.ndarray:
    """A fixed point ``offset`` [x, y, z] m in a segment's frame."""
    R, origin = ev.segment(spec["segment"])
    return origin + R @ np.asarray(spec["offset"], float)


def _along_segment(ev, spec: dict, key: str) -> np.ndarray:
    """Point ``from`` + L along a signed axis of a segment, L the median distance of the two
    markers ``length`` over the trial (minus the parameter ``shorten``); without those markers,
    the point ``fallback``."""
    a, b = (ev.sub(x) for x in spec["length"])
    if a not in ev.pts or b not in ev.pts:
        if "fallback" in spec:
            return ev.point(spec["fallback"])
        raise ev.data_error(f"{key}: needs markers {a} and {b} (its length)")
    length = float(np.nanmedian(np.linalg.norm(ev.pts[a] - ev.pts[b], axis=1)))
    if "shorten" in spec:  # e.g. the marker radius
        length -= ev.param(spec["shorten"], key)
    R, _ = ev.segment(spec["segment"])
    axis = R[..., :, "xyz".index(spec["axis"][-1])] * (-1.0 if spec["axis"].startswith("-") else 1.0)
    return ev.point(spec["from"]) + length * axis


def _along_segment_check(model, where: str, spec: dict) -> None:
    if spec["axis"] not in AXES or not (isinstance(spec["length"], list) and len(spec["length"]) == 2):
        raise model.error(where, "along_segment needs axis ('x'...'-z') and length = [marker, marker]")


def _functional(ev, spec: dict, key: str) -> np.ndarray:
    """A centre fixed in a segment (m, its frame): the side's parameter ``centre``, from the
    subject's values ``<centre>_<side>_x/_y/_z`` (a functional calibration's, or given; see
    :func:`gaitid.model.calibration.given_centres`)."""
    R, origin = ev.segment(spec["segment"])
    centre = ev.params.get(spec["centre"])
    if not isinstance(centre, np.ndarray):
        name = f"{spec['centre']}_{ev.side.lower()}"
        raise ev.data_error(f"{key}: no functional centre ({name}_x, _y, _z): give functional calibration trials "
                            f"(--functional HIP.c3d; process(..., functional=[...])) or the values in a subject file")
    return origin + R @ centre


def _entries(*methods: PointMethod) -> dict[str, PointMethod]:
    return {m.name: m for m in methods}


POINT_METHODS: dict[str, PointMethod] = _entries(
    PointMethod("marker", frozenset({"marker"}), _marker, error="marker"),
    PointMethod("midpoint", frozenset({"of"}), _midpoint, error="midpoint", landmarks=_midpoint_landmarks),
    PointMethod("davis", frozenset({"segment"}), _davis, error="davis"),
    PointMethod("chord", frozenset({"wand", "proximal", "marker", "width"}), _chord, error="chord",
                optional=frozenset({"wand_rotation", "angle_offset", "axis_offset"}), check=_chord_check,
                landmarks=_chord_landmarks),
    PointMethod("in_segment", frozenset({"segment", "offset"}), _in_segment, error="in_segment"),
    PointMethod("harrington", frozenset({"segment", "lasi", "rasi", "sacrum"}), _harrington, error="harrington"),
    PointMethod("functional", frozenset({"segment", "centre"}), _functional, error="functional"),
    PointMethod("along_segment", frozenset({"segment", "from", "axis", "length"}), _along_segment,
                error="along_segment", optional=frozenset({"fallback", "shorten"}), check=_along_segment_check),
)


def point_method(name: object, path: str | Path | None = None, key: str | None = None) -> PointMethod:
    """The registered method ``name``; ModelError naming ``path``, ``key`` (e.g.
    ``'points.hip.method'``) and the known methods when there is none."""
    if isinstance(name, str) and name in POINT_METHODS:
        return POINT_METHODS[name]
    where = f"model key '{key}': " if key else ""
    raise ModelError(f"{where}{name!r} is not a point method (known: {', '.join(sorted(POINT_METHODS))})", path)


def method_of(model, point: str) -> str:
    """The method of ``model``'s point ``point``; ``'marker'`` for a name the model does not
    define (the evaluator reads it from the trial)."""
    spec = model.points.get(point)
    return "marker" if spec is None else spec["method"]


METHOD_WORDS = {"davis": "Davis et al. 1991 regression", "harrington": "Harrington et al. 2007 regression",
                "chord": "Plug-in Gait chord", "midpoint": "midpoint of landmarks", "marker": "a point of the file",
                "in_segment": "fixed in a segment", "along_segment": "along a segment", "functional": "given"}


def centre_methods(model, parameters: dict | None, sources: dict) -> dict[str, dict[str, str]]:
    """What gave each joint centre of ``model``'s points 'hip', 'knee', 'ankle', per side:
    ``{'hip': {'Left': 'sphere fit on the hip trial ...', ...}, 'knee': {...}}``. ``parameters``:
    the run's per side (``ModelKinematics.parameters``; None for a Result read back without its
    kinematics: the subject's values decide), ``sources``: the subject's (a functional centre's
    source names its fit; a value without one was given)."""
    out: dict[str, dict[str, str]] = {}
    for joint in ("hip", "knee", "ankle"):
        spec = model.points.get(joint)
        if spec is None:
            continue
        name = spec.get("centre") if spec["method"] == "functional" else spec.get("functional")
        out[joint] = {}
        for side in ("Left", "Right"):
            used = (isinstance(parameters.get(side, {}).get(name), np.ndarray) if parameters is not None
                    else f"{name}_{side.lower()}_x" in sources)
            if name and used:
                out[joint][side] = sources.get(f"{name}_{side.lower()}_x") or "given in the subject's values"
            else:
                out[joint][side] = METHOD_WORDS.get(spec["method"], spec["method"])
            axis = sources.get(f"{joint}_axis_{side.lower()}_x")
            wand = spec.get("wand_rotation")
            rotation = wand.get("param") if isinstance(wand, dict) else None
            shift = spec.get("axis_offset")
            if axis and shift and (parameters is None or isinstance(parameters.get(side, {}).get(shift), np.ndarray)):
                out[joint][side] += f", moved onto the functional axis and the thigh turned onto it (CGM2.6): {axis}"
            elif axis and rotation:
                out[joint][side] += f", the thigh turned onto the functional axis ({rotation}): {axis}"
    return out

