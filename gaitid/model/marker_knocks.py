"""A knocked or re-placed marker: a step in the shape of its segment (docs/checks.md, markers section).

A marker knocked mid-trial sits a few centimetres off its place on the segment for the rest of
the trial. The segment's length may barely change (a knock across the segment), but the
marker's distances to the other points of its segment change for good. A leg's points are its
segments' markers (the model's ``[segment_markers]``), the markers on its joints (a joint
centre's ``marker``, or the markers it is the midpoint ``of``: KNE and ANK of Plug-in Gait, the
epicondyles and malleoli of ISB) on both segments of that joint, and the joint centres built from
other segments' markers (the hip, from the pelvis); the pelvis's points are its markers. Their
distances vary within a stride (soft tissue, wands), but their **mean over one stride** does not:
a stride-long window cancels what repeats with the gait cycle.

:func:`knock_findings`: for every point and every frame ``t``, the root sum square, over the
point's distances to the other points of its segment(s), of (mean over the stride after ``t``
minus mean over the stride before ``t``). The point with the largest figure is named (a knocked
marker steps each of its distances, each other point only the one it shares with it), with the
frame (within a stride: a knock that shows in part of the stride only, e.g. a knee marker knocked
forward, which shows when the knee bends, gives a broad maximum) and the size, when it exceeds
``knock_m``. The stride is the first peak of the autocorrelation of the legs' lengths (hip to
ankle centre) between 0.6 and 2 s (:func:`stride_frames`); a trial of 1.8 to 2 strides has
windows of half its length (the stride's periodic part then cancels to within a tenth); a shorter
trial, or one without a stride, is not checked, nor a window with a frame unseen. Cost linear in
the frames: cumulative sums, one FFT of the legs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.markerset import Model
from gaitid.model.trial_markers import strings

MIN_STRIDE_S, MAX_STRIDE_S = 0.6, 2.0  # s: the lags searched for a stride
MIN_CORRELATION = 0.3  # the leg length's autocorrelation at the stride (else: no stride, not checked)
FIRST_PEAK = 0.8  # the stride is the first autocorrelation peak this close to the highest
STILL_M = 1e-4  # m: legs whose lengths vary less (RMS about their means) have no stride
MIN_WINDOW = 0.9  # strides: the shortest window (a trial of 1.8-2 strides: half the trial)
LISTED = 3  # distances quoted per warning


def stride_frames(legs: np.ndarray, rate: float) -> int | None:
    """Frames in one stride: the first lag (0.6-2 s, at most two thirds of the trial) where the
    autocorrelation (unbiased, summed over the legs) of ``legs`` (n,) or (n, k), each leg's length
    per frame (NaN where unknown), peaks within ``FIRST_PEAK`` of its highest peak; None without
    a peak of at least ``MIN_CORRELATION`` of the variance (too short, or no repetition)."""
    x = legs.reshape(legs.shape[0], -1)
    ok = np.isfinite(x)
    n = x.shape[0]
    lo, hi = math.ceil(MIN_STRIDE_S * rate), min(int(MAX_STRIDE_S * rate), 2 * n // 3)
    if hi <= lo or ok.sum() < 2:
        return None
    mean = np.where(ok, x, 0.0).sum(axis=0) / np.maximum(ok.sum(axis=0), 1)
    x = np.where(ok, x - mean, 0.0)  # frames unseen count as the mean
    if not np.sqrt((x ** 2).sum() / ok.sum()) > STILL_M:
        return None
    size = 1 << (2 * n - 1).bit_length()  # zero-padded to a power of two >= 2n: no wrap-around, a fast FFT
    f = np.fft.rfft(x, size, axis=0)
    ac = np.fft.irfft((f * np.conj(f)).sum(axis=1), size)[:hi + 1] / (n - np.arange(hi + 1))  # per overlapping pair
    peak = np.flatnonzero((ac[lo:hi] > ac[lo - 1:hi - 1]) & (ac[lo:hi] >= ac[lo + 1:hi + 1])) + lo  # local maxima
    peak = peak[ac[peak] >= MIN_CORRELATION * ac[0]]
    if not peak.size:
        return None
    return int(peak[np.argmax(ac[peak] >= FIRST_PEAK * ac[peak].max())])  # the first: two strides repeat too


def _axis_markers(model: Model, point: str, prefix: str) -> list[str]:
    """The markers a joint centre is placed from on the joint itself: its ``marker`` (Plug-in Gait's
    knee and ankle chords: KNE, ANK) or the markers it is the midpoint ``of`` (epicondyles,
    malleoli); none for a centre built from another segment (the hip from the pelvis)."""
    spec = model.points.get(point, {})
    return [lab.replace("{S}", prefix) for key in ("marker", "of") for lab in strings(spec.get(key, []))]


def _groups(trial: Trial, model: Model, kinematics, built_from: Callable[[str, str], list[str]]):
    """[(group, points, sets)]: per leg ('Left', 'Right') and for the pelvis, the named (n, 3)
    points (lab frame, m) and the lists of points that move as one segment; and the joint
    centres' names -> (side, model point). A leg's markers are its segments' ``[segment_markers]``
    and the markers on its joints (:func:`_axis_markers`); a joint centre is a point of its
    segments only when built from none of them (the hip, from the pelvis): a centre built from a
    leg's markers moves with them and would hide their step."""
    index = {lab: i for i, lab in enumerate(trial.marker_labels)}
    out, centres = [], {}
    for side in SIDES:
        if side not in kinematics.motion:
            continue
        prefix = model.sides[side]
        motion = dict(zip([b.name for b in kinematics.chains[side].bodies], kinematics.motion[side]))
        segs = [seg for seg in model.chain if seg in motion]
        ends = {seg: (model.segments[seg]["proximal"], model.segments[seg]["distal"]) for seg in segs}
        members = {seg: [lab.replace("{S}", prefix) for lab in model.segment_markers.get(seg, [])]
                   + [lab for point in ends[seg] for lab in _axis_markers(model, point, prefix)] for seg in segs}
        members = {seg: [lab for lab in dict.fromkeys(labs) if lab in index] for seg, labs in members.items()}
        mine = {lab for labs in members.values() for lab in labs}
        points = {lab: trial.markers[:, index[lab]] for lab in mine}
        for seg in segs:
            xyz = motion[seg].proximal_lab
            point = ends[seg][0]
            if not mine.intersection(built_from(point, prefix)):
                name = f"{side.lower()} {point} centre"
                points[name] = xyz
                members[seg].append(name)
                centres[name] = (side, point)
        out.append((side, points, list(members.values())))
    root = model.root
    pelvis = [lab for lab in model.segment_markers.get(root, []) if "{S}" not in lab and lab in index]
    if len(pelvis) >= 3:
        out.append((root, {lab: trial.markers[:, index[lab]] for lab in pelvis}, [pelvis]))
    return out, centres


def _steps(dist: np.ndarray, w: int) -> np.ndarray:
    """(n - 2w + 1, k): for t = w..n-w, the mean of ``dist`` (n, k) over frames t..t+w-1 minus that
    over t-w..t-1; 0 where either window misses a frame."""
    n = dist.shape[0]
    ok = np.isfinite(dist)
    c = np.zeros((n + 1, dist.shape[1]))
    np.cumsum(np.where(ok, dist, 0.0), axis=0, out=c[1:])
    step = (c[2 * w:] - 2.0 * c[w:n - w + 1] + c[:n - 2 * w + 1]) / w
    if ok.all():
        return step
    m = np.zeros((n + 1, dist.shape[1]), int)
    np.cumsum(ok, axis=0, out=m[1:])
    full = (m[w:n - w + 1] - m[:n - 2 * w + 1] == w) & (m[2 * w:] - m[w:n - w + 1] == w)
    return np.where(full, step, 0.0)


def knock_findings(trial: Trial, model: Model, kinematics, knock_m: float,
                   built_from: Callable[[str, str], list[str]]) -> tuple[list[str], str, float]:
    """Warnings naming each leg's (and the pelvis's) point whose distances to the rest of its
    segment(s) step by more than ``knock_m`` (m) between the stride before a frame and the stride
    after it; the detail's phrase (the largest step, or why none was measured); the largest step
    in m (NaN when not measured).
    ``built_from(point, prefix)``: the markers a model point of a side is computed from."""
    if not math.isfinite(knock_m):
        return [], "marker knocks not checked (Settings.marker_knock_m is inf)", math.nan
    legs = [np.linalg.norm(kinematics.motion[side][-1].proximal_lab - kinematics.motion[side][0].proximal_lab, axis=1)
            for side in SIDES if kinematics.motion.get(side)]  # hip to ankle centre, (n,) m
    stride = stride_frames(np.column_stack(legs), trial.point_rate) if legs else None
    if stride is None:
        return [], "marker knocks not checked (no stride in the legs' lengths, or fewer than two)", math.nan
    n = trial.n_frames
    warnings, worst, measured = [], (-1.0, ""), False
    frames, time = trial.frames, trial.time
    groups, centres = _groups(trial, model, kinematics, built_from)
    for group, points, sets in groups:
        w = stride
        if n < 2 * w:  # a trial of less than two strides: windows of half the trial, when not much shorter
            if n // 2 < MIN_WINDOW * w:
                continue
            w = n // 2
        names = list(points)
        pos = {x: i for i, x in enumerate(names)}
        pairs = sorted({tuple(sorted((pos[a], pos[b]))) for s in sets for a, b in itertools.combinations(s, 2)})
        if not pairs:
            continue
        measured = True
        xyz = np.stack(list(points.values()))  # (points, n, 3) m lab: each point's frames contiguous
        ia, ib = np.array(pairs).T
        d = xyz[ia] - xyz[ib]
        step = _steps(np.ascontiguousarray(np.sqrt(np.einsum("kij,kij->ki", d, d)).T), w)  # (T, k) m
        incidence = np.zeros((len(pairs), len(names)))  # (k, points): 1 where the pair has the point
        incidence[np.arange(len(pairs)), ia] = incidence[np.arange(len(pairs)), ib] = 1.0
        pairs = [(names[a], names[b]) for a, b in pairs]
        score = np.sqrt(step ** 2 @ incidence)  # (T, points) m
        t, j = np.unravel_index(int(np.argmax(score)), score.shape)
        size = float(score[t, j])
        if size > worst[0]:
            worst = (size, names[j])
        if size <= knock_m:
            continue
        f = t + w  # the first frame after the largest step; a knock seen in part of the stride only (a
        # knee marker knocked forward shows when the knee bends) is found within a stride of its frame
        mine = [(abs(step[t, i]), step[t, i], p) for i, p in enumerate(pairs) if names[j] in p]
        listed = ", ".join(f"to {q if p == names[j] else p} {1000 * s:+.0f} mm"
                           for _, s, (p, q) in sorted(mine, reverse=True)[:LISTED])
        if names[j] in centres:
            side, point = centres[names[j]]
            made = built_from(point, model.sides[side]) or [lab for lab in model.segment_markers.get(
                model.points.get(point, {}).get("segment", ""), []) if lab in trial.marker_labels]  # the hip: pelvis
            what = f"the {names[j]} (built from {', '.join(made) or 'see the model'})"
            cause = "one of the markers it is built from knocked or re-placed"
        else:
            what, cause = names[j], "the marker knocked or re-placed on the skin, or another marker labelled as it"
        warnings.append(
            f"markers: {what} moves by {1000 * size:.0f} mm relative to the rest of its segment(s) from about frame "
            f"{frames[f]} ({time[f]:.2f} s, within a stride): its distances' means over the stride "
            f"({w / trial.point_rate:.2f} s) "
            f"before and after step ({listed}), more than the {1000 * knock_m:g} mm tolerated "
            f"(Settings.marker_knock_m): {cause}; the kinetics of the segments it defines are wrong from there")
    if not measured:
        return [], "marker knocks not checked (the trial is shorter than 1.8 strides)", math.nan
    return warnings, (f"stride-mean segment shape steps at most {1000 * worst[0]:.0f} mm ({worst[1]}; tolerance "
                      f"{1000 * knock_m:g} mm)"), worst[0]
