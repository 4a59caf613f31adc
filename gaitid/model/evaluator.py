"""The model's expressions: points (joint centres, virtual markers) and segment frames, evaluated.

A model file defines points (``[points.<name>]``: marker, midpoint, Davis, chord, Harrington,
in/along a segment) and segments (``[segments.<name>]``: pelvis, axes, axis points,
progression), each in terms of others; :class:`PointEvaluator` evaluates what is asked for, once,
for one side. Arrays are (n, 3) m and R (n, 3, 3) segment -> lab.
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.core.errors import DataError
from gaitid.model import frames as fr
from gaitid.model.joint_centres import chord_joint_centre, davis_hip_centre, harrington_hip_centre
from gaitid.model.markerset import Model
from gaitid.core.vocabulary import side_key


class PointEvaluator:
    """Lazily evaluates a model's points and segments for one side ('Left'/'Right'), memoising
    results; side-free items (``side = "none"``) are shared between the sides through ``shared``.

    ``points``: trajectories by label (n, 3) m; ``params``: the side's subject parameters (SI)."""

    def __init__(self, model: Model, points: dict[str, np.ndarray], params: dict, side: str, shared: dict, trial):
        self.m, self.pts, self.params, self.side, self.shared, self.trial = model, points, params, side, shared, trial
        self.prefix = model.sides[side]
        self.cache: dict[str, object] = {}
        self.stack: list[str] = []

    def sub(self, label: str) -> str:
        return label.replace("{S}", self.prefix)

    def param(self, ref, key: str) -> float:
        if isinstance(ref, dict):
            name, sign = ref["param"], float(ref.get(side_key(self.side), 1.0))
        else:
            name, sign = ref, 1.0
        v = self.params.get(name)
        if v is None:
            raise self.m.error(key, f"parameter '{name}' has no value for the {self.side.lower()} side")
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
        return v * float(spec.get(side_key(self.side), 1.0))

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
