"""The model's points for every column of a design, stacked frame-major ((n C, 3) arrays).

The trial's filtered markers are copied C times along a second axis, frames first: arrays
(n, C, 3), flattened to (n C, 3) for the model's point and segment expressions, which are all
frame by frame (:class:`~gaitid.model.evaluator.PointEvaluator`). Per column:

- marker noise (white, per coordinate) is filtered exactly as the markers are, then added
  (:func:`filtered_noise`);
- a palpated landmark (Plug-in Gait's KNE, ANK; a midpoint's epicondyles) is moved by its
  misplacement, constant in the nominal frame of the segment above the joint, before anything
  uses it (:func:`column_offsets`, :func:`stacked`);
- a joint centre is moved by its error, constant in the nominal frame of the segment above the
  joint (the hip in the pelvis, the knee in the thigh, the ankle in the shank), as soon as it is
  computed (:class:`PerturbedEvaluator`): every point and frame built from it follows (a knee
  chord from a moved hip, the thigh and shank axes, segment lengths, centres of mass).

Trial-wide medians of the model (the Plug-in Gait foot's HEE-TOE length, Harrington's pelvis
width) are taken over all the columns of a chunk together: per column they would differ by less
than a micrometre.
"""

from __future__ import annotations

import numpy as np

from gaitid.core import signal
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import JOINTS, SIDES
from gaitid.model.assembly import cluster_landmarks
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import Model
from gaitid.model.point_methods import point_method
from gaitid.model.trial_markers import apply_aliases, needed_labels, prepare_points
from gaitid.uncertainty.design import Design


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
    :func:`gaitid.model.assembly.build_segments` and the static calibration read them."""
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
    out = signal.butter_lowpass(raw.reshape(n, -1), rate, settings.marker_cutoff_hz, settings.filter_order)
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
    """The palpated landmark markers a joint centre's method uses (its ``landmarks`` in
    :data:`~gaitid.model.point_methods.POINT_METHODS`: a chord's ``marker``, a midpoint's first
    complete group), labels with the side prefix; none for a name the model does not define."""
    spec = model.points.get(point)
    if spec is None:
        return []
    entry = point_method(spec["method"], model.path, f"points.{point}.method")
    return [] if entry.landmarks is None else entry.landmarks(spec, model.sides[side], present)


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
