"""Marker gaps filled as labs fill them, every filled sample recorded with its method.

:func:`fill_marker_gaps` fills the interior gaps (NaN runs with a seen frame on both sides) of the
markers a model reads, before any stage uses them (contacts, events and kinematics see the same
filled trial), by the first method that applies:

- ``spline``: a gap of at most ``Settings.max_gap_frames`` frames, by the cubic spline through the
  marker's seen frames (:func:`gaitid.core.signal.fill_gaps`, what the kinematics always did);
- ``rigid_static``: with a static trial, a longer gap of a marker whose segment (the model's
  ``[segment_markers]``) keeps at least three other markers seen from the frame before the gap to
  the frame after it, all in the static: the least-squares rigid motion (SVD, Soderkvist & Wedin
  1993) of the segment's static shape (mean static positions) onto those markers carries the
  marker's static position along, frame by frame; the difference to the measured marker at the
  gap's two ends is blended out linearly;
- ``rigid``: the same gap without a static (or without the marker in it): the rigid motion of those
  markers from each of the two frames bounding the gap carries the marker along; the two
  predictions blend linearly across the gap;
- ``pca``: otherwise, from the trial's own low-rank multi-marker structure (Gloersen & Federolf
  2016, PLoS ONE 11(3):e0152616; Federolf 2013, PLoS ONE 8(10):e78689): the marker and every marker
  seen across the gap, centred and weighted by their distance to it (a Gaussian of width twice the
  nearest one's), with the other markers' positions 0.05 s before and after as further columns at
  half weight (a time-delay embedding: it halved the worst errors, docs/gaps.md), their principal
  components over the frames where all are seen within 10 s of the gap (those holding all but 1e-6
  of the variance), the components' scores fitted by least squares to the seen coordinates of each
  gap frame; the difference to the measured marker at the gap's two ends is blended out linearly.

A gap longer than ``Settings.max_fill_s`` (0.5 s) stays NaN, as does a gap at the trial's start or
end (nothing bounds it) and a gap whose segment has no other marker seen throughout it (a segment
with no marker is never filled). ``Settings.fill_rigid`` and ``fill_pca`` turn those methods off;
``max_gap_frames = 0`` the spline. The record (:class:`MarkerFills`) lists every filled and every
unfilled gap; its warnings name them. Positions in m, lab frame; frames as array indices inside,
Vicon frame numbers in the text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gaitid.core import signal
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.clusters import rigid_fit
from gaitid.model.markerset import Model
from gaitid.model.trial_markers import apply_aliases, needed_labels

METHODS = ("spline", "rigid_static", "rigid", "pca")
METHOD_WORDS = {"spline": "cubic spline",
                "rigid_static": "rigid body (the segment's other markers, their shape in the static trial)",
                "rigid": "rigid body (the segment's other markers)",
                "pca": "low-rank reconstruction from the other markers (Gloersen & Federolf 2016)"}
PCA_VARIANCE = 0.999999  # the kept components' share of the weighted variance (0.999 doubled the errors)
PCA_MIN_FRAMES = 20  # frames with every marker seen needed to estimate the components
PCA_LAG_S = 0.05  # s: the other markers' positions this long before and after join the columns
PCA_LAG_WEIGHT = 0.5  # their weight relative to the same markers' present positions
PCA_WINDOW_S = 10.0  # s each side of a gap whose frames teach the components (cost per gap bounded)
PCA_WIDTH = 2.0  # the weights' Gaussian width, in units of the nearest seen marker's distance


@dataclass(frozen=True)
class Fill:
    """One gap of one marker: array indices ``[start, stop)``, the ``method`` that filled it
    ('spline', 'rigid', 'pca') or, for a gap left NaN, None with the ``reason``."""

    label: str
    start: int
    stop: int
    method: str | None
    reason: str = ""


@dataclass(frozen=True)
class MarkerFills:
    """Every interior gap of the markers the model reads: ``filled`` and ``unfilled``
    (:class:`Fill`); ``first_frame`` and ``rate`` give frame numbers and times."""

    filled: tuple[Fill, ...] = ()
    unfilled: tuple[Fill, ...] = ()
    first_frame: int = 1
    rate: float = 100.0

    def mask(self, label: str, n_frames: int, method: str | None = None) -> np.ndarray:
        """(n_frames,) bool: the frames of ``label`` filled (by ``method``, or by any)."""
        out = np.zeros(n_frames, bool)
        for f in self.filled:
            if f.label == label and (method is None or f.method == method):
                out[f.start:f.stop] = True
        return out

    def frames_of(self, labels, n_frames: int) -> np.ndarray:
        """(n_frames,) bool: the frames where one of ``labels`` (the file's marker labels) was filled."""
        out = np.zeros(n_frames, bool)
        for f in self.filled:
            if f.label in labels:
                out[f.start:f.stop] = True
        return out

    def curve_frames(self, reads: dict, names: list[str], n_frames: int) -> np.ndarray:
        """(n_frames, len(names)) bool: per curve, the frames where a marker it reads (``reads``:
        name -> the file's labels, :attr:`gaitid.cycles.outputs.Outputs.reads`) was filled; any
        marker for a curve ``reads`` does not name."""
        masks = {None: self.any_filled(n_frames)}
        for labels in {reads.get(x) for x in names} - {None}:
            masks[labels] = self.frames_of(labels, n_frames)
        return np.stack([masks[reads.get(x)] for x in names], axis=1) if names else np.zeros((n_frames, 0), bool)

    def any_filled(self, n_frames: int) -> np.ndarray:
        """(n_frames,) bool: frames where some marker was filled."""
        out = np.zeros(n_frames, bool)
        for f in self.filled:
            out[f.start:f.stop] = True
        return out

    def table(self):
        """One row per gap: label, method ('' when left NaN), first and last Vicon frame, seconds, reason."""
        import pandas as pd

        rows = [{"label": f.label, "method": f.method or "", "first_frame": self.first_frame + f.start,
                 "last_frame": self.first_frame + f.stop - 1, "duration_s": (f.stop - f.start) / self.rate,
                 "reason": f.reason} for f in (*self.filled, *self.unfilled)]
        return pd.DataFrame(rows, columns=["label", "method", "first_frame", "last_frame", "duration_s", "reason"])

    def warnings(self) -> list[str]:
        """What was filled, by which method, and what was left NaN, with the frames."""
        out = []
        for method in METHODS:
            gaps = [f for f in self.filled if f.method == method]
            if gaps:
                out.append(f"marker gaps filled by {METHOD_WORDS[method]}: {self._list(gaps)} (the fills table)")
        if self.unfilled:
            out.append(f"marker gaps left unfilled (NaN): {self._list(self.unfilled, reasons=True)}")
        return out

    def _list(self, gaps, reasons: bool = False) -> str:
        def one(f: Fill) -> str:
            text = (f"{f.label} frames {self.first_frame + f.start}-{self.first_frame + f.stop - 1} "
                    f"({(f.stop - f.start) / self.rate:.2f} s)")
            return text + (f": {f.reason}" if reasons else "")
        return "; ".join(one(f) for f in gaps)


def segment_groups(model: Model, labels: list[str]) -> dict[str, list[str]]:
    """Each segment's markers as the trial names them (``labels``: the trial's labels after the
    model's aliases), from the model's ``[segment_markers]`` and its technical clusters; a marker
    the table does not name is a segment of its own."""
    groups: dict[str, list[str]] = {}
    present = set(labels)
    for seg, names in {**model.segment_markers}.items():
        extra = model.clusters.get(seg, {}).get("markers", [])
        sides = SIDES if any("{S}" in x for x in [*names, *extra]) else (None,)
        for side in sides:
            key = seg if side is None else f"{side.lower()}.{seg}"
            members = [x.replace("{S}", model.sides[side]) if side else x for x in [*names, *extra]]
            groups[key] = [x for x in dict.fromkeys(members) if x in present]
    return groups


def fill_marker_gaps(trial: Trial, model: Model, *, max_gap_frames: int = 10, max_fill_s: float = 0.5,
                     rigid: bool = True, pca: bool = True, static: Trial | None = None) -> tuple[Trial, MarkerFills]:
    """The trial with the interior gaps of the markers ``model`` reads filled (see the module
    docstring), and the record of every gap. A trial without such gaps is returned as is. With a
    ``static`` trial, a rigid fill takes the segment's shape from it (``rigid_static``)."""
    aliased = apply_aliases(trial, model)
    labels, _ = needed_labels(model, aliased)
    groups = segment_groups(model, aliased.marker_labels)
    wanted = sorted(set(labels) | {x for g in groups.values() for x in g})
    index = {lab: i for i, lab in enumerate(aliased.marker_labels) if lab in wanted}
    record = MarkerFills(first_frame=trial.first_frame, rate=trial.point_rate)
    P = trial.markers
    seen = np.isfinite(P).all(axis=2)
    n = P.shape[0]
    gaps = [(lab, a, b) for lab, i in index.items() for a, b in signal.nan_runs(~seen[:, i]) if a > 0 and b < n]
    if not gaps or seen[:, list(index.values())].all():
        return trial, record
    names = dict(zip(aliased.marker_labels, trial.marker_labels))  # the model's label -> the trial's
    out = P.copy()
    longest = int(round(max_fill_s * trial.point_rate))
    filled, unfilled = [], []
    short = [i for lab, i in index.items() if any(g[0] == lab and g[2] - g[1] <= max_gap_frames for g in gaps)]
    if short and max_gap_frames > 0:
        out[:, short] = signal.fill_gaps(P[:, short], max_gap_frames)
    segment_of = {x: key for key, g in groups.items() for x in g}
    for lab, a, b in gaps:
        i, length = index[lab], b - a
        mates = [x for x in groups.get(segment_of.get(lab, ""), []) if x != lab]
        name = names.get(lab, lab)
        if length <= max_gap_frames and np.isfinite(out[a:b, i]).all():
            filled.append(Fill(name, a, b, "spline"))
            continue
        if length > longest:
            unfilled.append(Fill(name, a, b, None, f"longer than max_fill_s {max_fill_s:g} s"))
            continue
        around = seen[a - 1:b + 1]  # the gap and the frame on each side
        donors = [x for x in mates if around[:, index[x]].all()]
        shape = static_shape(static, model, [lab, *donors]) if rigid and static is not None else None
        if shape is not None and len(donors) >= 3:
            out[a:b, i] = static_rigid_fill(shape[1:], shape[0], P[a - 1:b + 1, [index[x] for x in donors]],
                                            P[a - 1, i], P[b, i])
            filled.append(Fill(name, a, b, "rigid_static"))
            continue
        if rigid and len(donors) >= 3:
            out[a:b, i] = rigid_fill(P[:, [index[x] for x in donors]], P[:, i], a, b)
            filled.append(Fill(name, a, b, "rigid"))
            continue
        if not donors:
            unfilled.append(Fill(name, a, b, None, "no other marker of its segment seen throughout the gap"))
            continue
        others = [j for x, j in index.items() if x != lab and around[:, j].all()]
        value = pca_fill(P, seen, i, others, a, b, max(int(round(PCA_LAG_S * trial.point_rate)), 1),
                         int(round(PCA_WINDOW_S * trial.point_rate))) if pca else None
        if value is None:
            why = "the PCA fill is off (fill_pca)" if not pca else \
                f"fewer than {PCA_MIN_FRAMES} frames with it and the markers seen across the gap"
            unfilled.append(Fill(name, a, b, None, why))
            continue
        out[a:b, i] = value
        filled.append(Fill(name, a, b, "pca"))
    record = replace(record, filled=tuple(filled), unfilled=tuple(unfilled))
    return replace(trial, markers=out, warnings=[*trial.warnings, *record.warnings()]), record


def rigid_fill(donors: np.ndarray, target: np.ndarray, a: int, b: int) -> np.ndarray:
    """(b - a, 3) m: ``target`` (n, 3) over frames [a, b) carried by the rigid motion of ``donors``
    (n, q, 3), q >= 3, seen on frames a - 1 .. b: from frame a - 1 and from frame b (each a
    least-squares rotation and translation, :func:`gaitid.model.clusters.rigid_fit`, batched over the
    gap's frames), blended linearly."""
    cur = donors[a:b]  # (g, q, 3)
    preds = []
    for ref in (a - 1, b):
        R, d, _ = rigid_fit(donors[ref], cur)  # cur ~ R @ donors[ref] + d, per frame of the gap
        preds.append(np.einsum("gij,j->gi", R, target[ref]) + d)
    w = ((np.arange(a, b) - (a - 1)) / (b - (a - 1)))[:, None]
    return (1 - w) * preds[0] + w * preds[1]


def static_shape(static: Trial, model: Model, labels: list[str]) -> np.ndarray | None:
    """(k, 3) m: the mean static positions of ``labels`` (the model's labels) over the static frames
    where all are seen (the subject stands still: the segment's shape); None when the static lacks
    one of them or never sees them together."""
    aliased = apply_aliases(static, model)
    if not all(x in aliased.marker_labels for x in labels):
        return None
    X = aliased.markers[:, [aliased.marker_labels.index(x) for x in labels]]
    seen = np.isfinite(X).all(axis=(1, 2))
    return X[seen].mean(axis=0) if seen.any() else None


def static_rigid_fill(ref_donors: np.ndarray, ref_target: np.ndarray, donors: np.ndarray,
                      before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """(g, 3) m: a marker over a gap of g frames carried by the least-squares rigid motion
    (:func:`gaitid.model.clusters.rigid_fit`) of the segment's static shape (``ref_donors`` (q, 3),
    q >= 3, the marker at ``ref_target`` (3,)) onto the ``donors`` measured (g + 2, q, 3: the frame
    before the gap, the gap, the frame after); the difference to the measured marker ``before`` and
    ``after`` (3,) the gap is blended out linearly (skin motion moves the markers off the static shape)."""
    R, d, _ = rigid_fit(ref_donors, donors)
    pred = np.einsum("gij,j->gi", R, ref_target) + d  # (g + 2, 3)
    t = (np.arange(1, len(pred) - 1) / (len(pred) - 1))[:, None]
    return pred[1:-1] + (1 - t) * (before - pred[0]) + t * (after - pred[-1])


def pca_fill(P: np.ndarray, seen: np.ndarray, i: int, others: list[int], a: int, b: int,
             lag: int = 0, window: int = 1000) -> np.ndarray | None:
    """(b - a, 3) m: marker ``i`` of ``P`` (n, k, 3) over frames [a, b) from the markers ``others``
    (seen on frames a - 1 .. b) by principal components (module docstring), their positions ``lag``
    frames before and after joining as columns (a time-delay embedding) when seen there, learnt on
    the frames within ``window`` of the gap; None when fewer than ``PCA_MIN_FRAMES`` frames see them all."""
    lo, hi = max(a - window - lag, 0), min(b + window + lag, P.shape[0])  # the gap's neighbourhood only:
    P, seen, a, b = P[lo:hi], seen[lo:hi], a - lo, b - lo  # a long trial's cost per gap is a short one's
    n = P.shape[0]
    lags = (-lag, lag) if lag > 0 and a - 1 - lag >= 0 and b + lag < n else ()
    if lags:
        others = [j for j in others if seen[a - 1 - lag:b + lag + 1, j].all()]
    cols = [i, *others]
    if not others:
        return None
    X = P[:, cols].reshape(n, -1)  # (n, 3q): the marker's x, y, z first
    dist = np.linalg.norm(P[:, others] - P[:, [i]], axis=2)
    dist = np.nanmean(dist[seen[:, cols].all(axis=1)], axis=0)  # (q - 1,) mean distance to the marker
    width = PCA_WIDTH * max(float(np.nanmin(dist)), 1e-3)
    w = np.repeat(np.concatenate([[1.0], np.exp(-0.5 * (dist / width) ** 2)]), 3)
    blocks, weights = [X], [w]
    for shift in lags:  # the other markers' positions `shift` frames later (NaN past the ends)
        moved = np.full_like(X[:, 3:], np.nan)
        moved[max(-shift, 0):n - max(shift, 0)] = X[max(shift, 0):n - max(-shift, 0), 3:]
        blocks.append(moved)
        weights.append(w[3:] * PCA_LAG_WEIGHT)
    X, w = np.hstack(blocks), np.concatenate(weights)
    train = np.isfinite(X).all(axis=1)
    if train.sum() < PCA_MIN_FRAMES:
        return None
    mu = X[train].mean(axis=0)
    Xw = (X - mu) * w
    A = Xw[train]
    var, vec = np.linalg.eigh(A.T @ A)  # the principal axes: eigenvectors of the scatter matrix (3x faster
    var, vec = np.clip(var[::-1], 0.0, None), vec[:, ::-1]  # than the SVD of A), largest first
    share = np.cumsum(var) / max(float(var.sum()), 1e-300)
    r = min(int(np.searchsorted(share, PCA_VARIANCE)) + 1, len(var), (X.shape[1] - 3) // 2)
    V = vec[:, :r]  # (columns, r)
    frames = np.arange(a - 1, b + 1)
    scores, *_ = np.linalg.lstsq(V[3:], Xw[frames, 3:].T, rcond=None)  # (r, g + 2)
    pred = (V[:3] @ scores).T / w[:3] + mu[:3]  # (g + 2, 3)
    err0, err1 = P[a - 1, i] - pred[0], P[b, i] - pred[-1]
    t = ((np.arange(a, b) - (a - 1)) / (b - (a - 1)))[:, None]
    return pred[1:-1] + (1 - t) * err0 + t * err1
