"""The model's expressions: points (joint centres, virtual markers) and segment frames, evaluated.

A model file defines points (``[points.<name>]``, computed by the methods of
:mod:`gaitid.model.point_methods`: marker, midpoint, Davis, chord, Harrington, in/along a
segment) and segments (``[segments.<name>]``: pelvis, axes, axis points,
progression), each in terms of others; :class:`PointEvaluator` evaluates what is asked for, once,
for one side. Arrays are (n, 3) m and R (n, 3, 3) segment -> lab.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.vocabulary import side_key
from gaitid.model import frames as fr
from gaitid.model.markerset import Model
from gaitid.model.point_methods import point_method


class PointEvaluator:
    """Lazily evaluates a model's points and segments for one side ('Left'/'Right'), memoising
    results; side-free items (``side = "none"``) are shared between the sides through ``shared``.
    Each item's trial labels read, directly or through the items it uses, are recorded
    (:meth:`labels_read`: which markers move which point or segment).

    ``points``: trajectories by label (n, 3) m; ``params``: the side's subject parameters (SI)."""

    def __init__(self, model: Model, points: dict[str, np.ndarray], params: dict, side: str, shared: dict, trial):
        self.m, self.pts, self.params, self.side, self.shared, self.trial = model, points, params, side, shared, trial
        self.prefix = model.sides[side]
        self.cache: dict[str, object] = {}
        self.stack: list[str] = []
        self.reads: dict[str, frozenset[str]] = {}  # 'point:knee' -> the trial labels it read
        self.open: list[set[str]] = []  # the labels read so far by each item being computed

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
        reads = self.shared.setdefault("reads", {}) if glob else self.reads
        key = f"{kind}:{name}"
        if key not in cache:
            if key in self.stack:
                raise self.m.error(f"{kind}s.{name}", f"circular definition ({' -> '.join(self.stack + [key])})")
            self.stack.append(key)
            self.open.append(set())
            try:
                cache[key] = compute()
            finally:
                self.stack.pop()
                got = self.open.pop()
            reads[key] = frozenset(got)
        if self.open:  # the item being computed read this one's labels too
            self.open[-1].update(reads[key])
        return cache[key]

    def labels_read(self, kind: str, name: str) -> frozenset[str]:
        """The trial labels (after the model's aliases) the evaluated ``kind`` ('point' or
        'segment') ``name`` read; for a point that is a trial label, that label."""
        if kind == "point" and name not in self.m.points:
            return frozenset({self.sub(name)})
        reads = self.shared.get("reads", {}) if not self.m.per_side(kind, name) else self.reads
        return reads.get(f"{kind}:{name}", frozenset())

    def point(self, name: str) -> np.ndarray:
        """A model point by name, else a marker / virtual point label (with {S} substituted)."""
        if name in self.m.points:
            return self._memo("point", name, lambda: self._compute_point(name))
        label = self.sub(name)
        if label in self.pts:
            if self.open:
                self.open[-1].add(label)
            return self.pts[label]
        raise self.data_error(f"model '{self.m.name}' needs the point '{label}', which the trial lacks")

    def data_error(self, message: str) -> DataError:
        """A DataError naming the trial's file (when there is one)."""
        return DataError(message, self.trial.path if self.trial is not None else None)

    def segment(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        if name not in self.m.segments:
            raise self.m.error("segments", f"'{name}' is referenced but not defined")
        return self._memo("segment", name, lambda: self._compute_segment(name))

    def _compute_point(self, name: str) -> np.ndarray:
        spec = self.m.points[name]
        if "functional" in spec and isinstance(self.params.get(spec["functional"]), np.ndarray):
            # the subject's functional (or given) centre replaces the model's method for this point
            spec = {"method": "functional", "segment": spec["segment"], "centre": spec["functional"]}
        return point_method(spec["method"], self.m.path, f"points.{name}.method").evaluate(self, spec, f"points.{name}")

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
