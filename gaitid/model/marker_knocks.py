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
trial, or one without a stride, is not checked, nor a window with a frame unseen.

**A segment of three points** (Plug-in Gait's thigh: hip centre, THI, KNE; shank: KNE, TIB, ANK;
foot: ANK, HEE, TOE): a point moved across their plane changes its distances to the other two
only to second order (5 cm across a 200 mm wand: 6 mm), but it turns the plane, and the
segment's frame with it, about the line through the other two points. Per leg, each such
plane's unit normal (lab frame) is expressed in the heading frame (lab axes turned about the
vertical so that Y runs from the right to the left hip centre: a walk that turns keeps its
figures, and the pelvis's own markers add nothing) and averaged over the same stride windows as
the distances (the joint motion within a stride cancels); the angle between the mean normals
before and after a frame is the plane's turn. A turn over ``turn_deg`` is named with the point
whose opposite side lies closest to the turn's axis, the frame, the angle and what it means
across the plane in mm (angle x that point's distance from the line of the other two). A leg
already named by its distances (or whose hip centres moved with a pelvis marker) is not named
again. Cost linear in the frames: one pass of cumulative sums for every distance and normal,
one FFT of the legs.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np

from gaitid.core.rotation import cross, norm
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES, side_path
from gaitid.model.markerset import Model, per_model
from gaitid.model.trial_markers import strings

MIN_STRIDE_S, MAX_STRIDE_S = 0.6, 2.0  # s: the lags searched for a stride
MIN_CORRELATION = 0.3  # the leg length's autocorrelation at the stride (else: no stride, not checked)
FIRST_PEAK = 0.8  # the stride is the first autocorrelation peak this close to the highest
STILL_M = 1e-4  # m: legs whose lengths vary less (RMS about their means) have no stride
MIN_WINDOW = 0.9  # strides: the shortest window (a trial of 1.8-2 strides: half the trial)
LISTED = 3  # distances quoted per warning
HIP_CENTRES = tuple(side_path(side, "hip") for side in SIDES)  # their keys in ModelKinematics.joint_centres


def stride_frames(legs: np.ndarray, rate: float) -> int | None:
    """Frames in one stride: the first lag (0.6-2 s, at most two thirds of the trial) where the
    autocorrelation (unbiased, summed over the legs) of ``legs`` (n,) or (n, k), each leg's length
    per frame (NaN where unknown), peaks within ``FIRST_PEAK`` of its highest peak; None without
    a peak of at least ``MIN_CORRELATION`` of the variance (too short, or no repetition)."""
    x = legs.reshape(legs.shape[0], -1)
    ok = np.isfinite(x)
    n = x.shape[0]
    lo, hi = math.ceil(MIN_STRIDE_S * rate), min(int(MAX_STRIDE_S * rate), 2 * n // 3)
    counts = ok.sum(axis=0)
    known = int(counts.sum())
    if hi <= lo or known < 2:
        return None
    if known == x.size:  # every frame known (the usual case): the same numbers without the masks
        x = x - x.sum(axis=0) / n
    else:
        mean = np.where(ok, x, 0.0).sum(axis=0) / np.maximum(counts, 1)
        x = np.where(ok, x - mean, 0.0)  # frames unseen count as the mean
    if not np.sqrt((x ** 2).sum() / known) > STILL_M:
        return None
    size = 1 << (n + hi - 1).bit_length()  # zero-padded to a power of two >= n + hi: no lag wraps around
    f = np.fft.rfft(x.T, size)  # (k, size // 2 + 1): each leg's transform, one row each
    power = (f.real ** 2 + f.imag ** 2).sum(axis=0)  # |f|^2 summed over the legs: the autocorrelation's transform
    ac = np.fft.irfft(power, size)[:hi + 1] / (n - np.arange(hi + 1))  # per overlapping pair
    mid = ac[lo:hi]
    peak = ((mid > ac[lo - 1:hi - 1]) & (mid >= ac[lo + 1:hi + 1])  # local maxima, high enough
            & (mid >= MIN_CORRELATION * ac[0])).nonzero()[0] + lo
    if not peak.size:
        return None
    height = ac[peak]
    return int(peak[(height >= FIRST_PEAK * height.max()).argmax()])  # the first: two strides repeat too


def _axis_markers(model: Model, point: str, prefix: str) -> list[str]:
    """The markers a joint centre is placed from on the joint itself: its ``marker`` (Plug-in Gait's
    knee and ankle chords: KNE, ANK) or the markers it is the midpoint ``of`` (epicondyles,
    malleoli); none for a centre built from another segment (the hip from the pelvis)."""
    spec = model.points.get(point, {})
    return [lab.replace("{S}", prefix) for key in ("marker", "of") for lab in strings(spec.get(key, []))]


def _groups(model: Model, labels: tuple[str, ...], bodies: tuple, built_from: Callable[[str, str], list[str]]):
    """[(group, points, sets)]: per leg ('Left', 'Right') and for the pelvis, the points' names ->
    where each comes from (a column of the trial's markers, or (side, segment): that segment's
    proximal point, lab frame) and, per segment, the list of its points (they move as one); and the
    joint centres' names -> (side, model point). ``bodies``: (side, the chain's segment names) for
    each leg with motion. A leg's markers are its segments' ``[segment_markers]`` and the markers
    on its joints (:func:`_axis_markers`); a joint centre is a point of its segments only when built
    from none of them (the hip, from the pelvis): a centre built from a leg's markers moves with
    them and would hide their step."""
    index = {lab: i for i, lab in enumerate(labels)}
    out, centres = [], {}
    for side, names in bodies:
        prefix = model.sides[side]
        segs = [seg for seg in model.chain if seg in names]
        ends = {seg: (model.segments[seg]["proximal"], model.segments[seg]["distal"]) for seg in segs}
        on = {point: _axis_markers(model, point, prefix) for point in {p for e in ends.values() for p in e}}
        members = {seg: [lab.replace("{S}", prefix) for lab in model.segment_markers.get(seg, [])]
                   + [lab for point in ends[seg] for lab in on[point]] for seg in segs}
        members = {seg: [lab for lab in dict.fromkeys(labs) if lab in index] for seg, labs in members.items()}
        order = list(dict.fromkeys(lab for labs in members.values() for lab in labs))  # the model's order:
        mine = set(order)  # a tie between two points' steps names the same one on every run
        points = {lab: index[lab] for lab in order}
        for seg in segs:
            point = ends[seg][0]
            # a centre on its joint's markers (knee, ankle) is built from them: no need to follow its recipe
            if not mine.intersection(on[point]) and not mine.intersection(built_from(point, prefix)):
                name = f"{side.lower()} {point} centre"
                points[name] = (side, seg)
                members[seg].append(name)
                centres[name] = (side, point)
        out.append((side, points, members))
    root = model.root
    pelvis = [lab for lab in model.segment_markers.get(root, []) if "{S}" not in lab and lab in index]
    if len(pelvis) >= 3:
        out.append((root, {lab: index[lab] for lab in pelvis}, {root: pelvis}))
    return out, centres


class _Layout:
    """The points, pairs and three-point segments :func:`knock_findings` measures for one model,
    one set of marker labels and one set of legs: the same for every trial of a session, so built
    once (:func:`_layout`). Read-only."""

    def __init__(self, model: Model, labels: tuple[str, ...], bodies: tuple, built_from):
        self.groups, self.centres = _groups(model, labels, bodies, built_from)
        # every group's points in one array and every pair of points of a segment: one pass of
        # cumulative sums for all distances and all three-point segments' plane normals
        names, owner, pairs, triangles, first = [], [], [], [], 0
        for g, (group, points, sets) in enumerate(self.groups):
            pos = {x: first + i for i, x in enumerate(points)}
            names += list(points)
            owner += [g] * len(points)
            pairs += sorted({tuple(sorted((pos[a], pos[b]))) for s in sets.values()
                             for a, b in itertools.combinations(s, 2)})
            if group in SIDES:
                triangles += [(g, seg, [pos[x] for x in s]) for seg, s in sets.items() if len(s) == 3]
            first += len(points)
        self.names, self.triangles, self.k = names, triangles, len(pairs)
        self.sources = [src for _, points, _ in self.groups for src in points.values()]
        if not pairs:
            return
        self.ia, self.ib = np.array(pairs).T
        row = {pair: r for r, pair in enumerate(pairs)}  # two sides of each triangle: rows of the pairs
        self.edges = [row[tuple(sorted((c[0], c[j])))] for _, _, c in triangles for j in (1, 2)]
        self.incidence = np.zeros((self.k, len(names)))  # (k, points): 1 where the pair has the point
        self.incidence[np.arange(self.k), self.ia] = self.incidence[np.arange(self.k), self.ib] = 1.0
        self.bounds = np.searchsorted(owner, np.arange(len(self.groups) + 1))  # each group's points: consecutive
        self.pairs = [(names[a], names[b]) for a, b in pairs]
        for a in (self.ia, self.ib, self.incidence, self.bounds):
            a.setflags(write=False)


_LAYOUTS: dict = {}  # (id(model), labels, bodies, built_from) -> (model, _Layout): see per_model


def _layout(model: Model, labels: tuple[str, ...], bodies: tuple, built_from) -> _Layout:
    """The :class:`_Layout` of a model, a trial's marker labels, its legs and a ``built_from``, built
    on the first call (:func:`~gaitid.model.markerset.per_model`)."""
    return per_model(_LAYOUTS, model, (labels, bodies, built_from),
                     lambda: _Layout(model, labels, bodies, built_from))


def _window_means(x: np.ndarray, w: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """For t = w..n-w, the mean of ``x`` (n, k) over frames t..t+w-1 minus that over t-w..t-1, and,
    for the columns from ``first`` on, the mean over t-w..t-1: one pass of cumulative sums."""
    n = x.shape[0]
    c = np.empty((n + 1, x.shape[1]))  # only the first row needs its zeros: the sums fill the rest
    c[0] = 0.0
    np.cumsum(x, axis=0, out=c[1:])
    step = (c[2 * w:] - 2.0 * c[w:n - w + 1] + c[:n - 2 * w + 1]) / w
    return step, (c[w:n - w + 1, first:] - c[:n - 2 * w + 1, first:]) / w


def _steps(x: np.ndarray, w: int, first: int, unseen: np.ndarray | None
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """For t = w..n-w, the mean of ``x`` (n, k; NaN where ``unseen``, (n, k) bool or None: nowhere)
    over frames t..t+w-1 minus that over t-w..t-1 (0 where either window misses a frame), and, for
    the columns from ``first`` on, the mean over t-w..t-1 (0 in a column whose windows are never
    both whole): (n - 2w + 1, k) and (n - 2w + 1, k - first) arrays; and where both windows have
    every frame, (n - 2w + 1, k) (None: everywhere). The means are summed only in the columns with
    two whole windows somewhere (a marker seen in short stretches only has none)."""
    if unseen is None:
        step, before = _window_means(x, w, first)
        return step, before, None
    n = x.shape[0]
    m = np.zeros((n + 1, x.shape[1]), np.int32)
    np.cumsum(unseen, axis=0, out=m[1:])
    full = (m[w:n - w + 1] == m[:n - 2 * w + 1]) & (m[2 * w:] == m[w:n - w + 1])
    live = np.flatnonzero(full.any(axis=0))
    if live.size == x.shape[1]:
        step, before = _window_means(np.where(unseen, 0.0, x), w, first)
        np.copyto(step, 0.0, where=~full)
        return step, before, full
    step, before = np.zeros(full.shape), np.zeros(full.shape)
    if live.size:
        step[:, live], before[:, live] = _window_means(np.where(unseen[:, live], 0.0, x[:, live]), w, 0)
        np.copyto(step, 0.0, where=~full)
    return step, before[:, first:], full


def _seen_span(points: list[np.ndarray], least: int) -> tuple[int, int]:
    """(a, b): the frames a..b-1 from the first to the last in which one of ``points`` (each (n, 3))
    has its X known, when they are at least ``least``; else (0, n). Every distance and normal
    needs its points' X: a window reaching outside them misses frames in each."""
    if any(math.isfinite(p[0, 0]) for p in points) and any(math.isfinite(p[-1, 0]) for p in points):
        return 0, points[0].shape[0]  # a point seen in the first frame and one in the last (the usual case)
    known = np.isfinite(np.array([p[:, 0] for p in points])).any(axis=0).nonzero()[0]
    if known.size and known[-1] + 1 - known[0] >= least:
        return int(known[0]), int(known[-1]) + 1
    return 0, points[0].shape[0]


def _differences(points: list[np.ndarray], ia: np.ndarray, ib: np.ndarray, start: int, stop: int) -> np.ndarray:
    """(pairs, stop - start, 3): points[ia] - points[ib] over frames start..stop-1, written pair by pair
    into one array: no stacked copy of the points and no gathered copy of either end (a marker
    check's largest arrays, whose fresh pages cost more than the subtraction inside process())."""
    held = [p[start:stop] for p in points]  # each point's frames, sliced once (a point is in several pairs)
    d = np.empty((len(ia), stop - start, 3))
    for row, a, b in zip(d, ia.tolist(), ib.tolist()):
        np.subtract(held[a], held[b], out=row)
    return d


def _heading(kinematics, n: int) -> np.ndarray:
    """(n, 2): the horizontal unit vector (lab X, Y) from the right to the left hip centre, the
    body's left whichever way it walks; lab +Y when the model has no hip centres; NaN where unknown."""
    hips = [kinematics.joint_centres.get(key) for key in HIP_CENTRES]
    if any(h is None for h in hips):
        return np.tile([0.0, 1.0], (n, 1))
    left = (hips[0] - hips[1])[:, :2]
    return left / np.hypot(left[:, 0], left[:, 1])[:, None]


def _in_heading(v: np.ndarray, left: np.ndarray) -> np.ndarray:
    """(..., n, 3) lab vectors in the heading frame: forward (left x up), left, up."""
    x, y = v[..., 0], v[..., 1]
    return np.stack([x * left[:, 1] - y * left[:, 0], x * left[:, 0] + y * left[:, 1], v[..., 2]], axis=-1)


def _turn_warning(trial, group, segment, names, xyz, left, t, w, angle, axis, turn_deg):
    """The warning for a three-point segment (``names``, ``xyz`` (3, n, 3) m lab) whose plane turns
    by ``angle`` (deg) about ``axis`` (unit, heading frame) between the windows before and after
    frame t + w. The point named: the one whose opposite side lies closest to the turn's axis (a
    point moved across the plane turns it about the line through the other two); when the plane
    turns over (more than 90 deg), the one nearest the line through the other two (it went
    through it). Its move: the chord 2 h sin(angle / 2) at its distance h from that line."""
    f = t + w
    p = _in_heading(xyz[:, t:t + 2 * w], left[t:t + 2 * w])  # (3, 2w, 3) heading frame
    side = np.roll(p, -2, axis=0) - np.roll(p, -1, axis=0)  # the side opposite each point
    height = np.nanmedian(np.linalg.norm(np.cross(p - np.roll(p, -1, axis=0), side), axis=2)
                          / np.linalg.norm(side, axis=2), axis=1)  # (3,) m
    mean = np.nanmean(side, axis=1)
    k = (int(np.argmax(np.abs(mean @ axis) / np.linalg.norm(mean, axis=1))) if angle <= 90.0
         else int(np.argmin(height)))
    shown = [f"the {x}" if x.endswith(" centre") else x for x in names]
    others = f"{shown[(k + 1) % 3]} and {shown[(k + 2) % 3]}"
    moved = (f"{names[k]} moved about {2000 * height[k] * math.sin(math.radians(angle) / 2):.0f} mm across it, "
             f"while its distances to the other two barely change" if angle <= 90.0
             else f"{names[k]} moved through the line between {others} (the plane turned over)")
    return (
        f"markers: the {group.lower()} {segment}'s plane ({', '.join(names)}) turns by {angle:.0f} deg about the "
        f"line through {others} from about frame {trial.frames[f]} ({trial.time[f]:.2f} s, within a stride): "
        f"{moved}; the plane's mean orientation over the "
        f"stride ({w / trial.point_rate:.2f} s) before and after differs by more than the {turn_deg:g} deg "
        f"tolerated (Settings.marker_turn_deg): {names[k]} knocked, re-placed or its wand turned, or another "
        f"marker labelled as it; the segment's frame turns with it, so its joint angles and the kinetics of the "
        f"segments it defines are wrong from there")


def knock_findings(trial: Trial, model: Model, kinematics, knock_m: float,
                   built_from: Callable[[str, str], list[str]],
                   turn_deg: float = math.inf) -> tuple[list[str], str, float]:
    """Warnings naming each leg's (and the pelvis's) point whose distances to the rest of its
    segment(s) step by more than ``knock_m`` (m) between the stride before a frame and the stride
    after it, and each leg's three-point segment whose plane turns by more than ``turn_deg``
    (deg; a leg whose distances already warn, or whose hip centres do, is not named again); the
    detail's phrase (the largest step and turn, or why none was measured); the largest step in m
    (NaN when not measured).
    ``built_from(point, prefix)``: the markers a model point of a side is computed from."""
    if not math.isfinite(knock_m) and not math.isfinite(turn_deg):
        return [], "marker knocks not checked (Settings.marker_knock_m and Settings.marker_turn_deg are inf)", math.nan
    sides = [side for side in SIDES if kinematics.motion.get(side)]
    hip_ankle = np.empty((trial.n_frames, len(sides), 3))  # each leg's ankle to hip centre, m lab
    for j, side in enumerate(sides):
        np.subtract(kinematics.motion[side][-1].proximal_lab, kinematics.motion[side][0].proximal_lab,
                    out=hip_ankle[:, j])
    stride = stride_frames(norm(hip_ankle), trial.point_rate) if sides else None  # legs' lengths, (n, legs) m
    if stride is None:
        return [], "marker knocks not checked (no stride in the legs' lengths, or fewer than two)", math.nan
    n = trial.n_frames
    w = stride
    if n < 2 * w:  # a trial of less than two strides: windows of half the trial, when not much shorter
        if n // 2 < MIN_WINDOW * w:
            return [], "marker knocks not checked (the trial is shorter than 1.8 strides)", math.nan
        w = n // 2
    bodies = tuple((side, tuple(b.name for b in kinematics.chains[side].bodies[:len(kinematics.motion[side])]))
                   for side in SIDES if side in kinematics.motion)
    lay = _layout(model, tuple(trial.marker_labels), bodies, built_from)
    groups, centres, names, triangles, k = lay.groups, lay.centres, lay.names, lay.triangles, lay.k
    if not k:
        return [], "marker knocks not checked (no segment with two points)", math.nan
    motion = {side: dict(zip(seg_names, kinematics.motion[side])) for side, seg_names in bodies}
    points = [trial.markers[:, src] if isinstance(src, int) else motion[src[0]][src[1]].proximal_lab
              for src in lay.sources]  # each (n, 3) m lab, as held (not copied)
    # only the frames from the first to the last with a point known are measured (when they hold
    # two windows): row r of what follows is frame start + r
    start, stop = _seen_span(points, 2 * w)
    d = _differences(points, lay.ia, lay.ib, start, stop)
    turning = bool(triangles) and math.isfinite(turn_deg)
    x = np.empty((stop - start, k + 3 * len(triangles) * turning))  # the distances (m), then each plane's normal
    if turning:  # each plane's normal: the cross product of two sides (its length, twice the area, is
        # about constant on a segment and does not change the mean's direction), in the heading frame,
        # written into x's columns as computed
        left = _heading(kinematics, n)
        hx, hy = left[start:stop].T
        e = d[lay.edges]
        (u0, u1, u2), (v0, v1, v2) = e[0::2].transpose(2, 0, 1), e[1::2].transpose(2, 0, 1)  # (T, stop - start) each
        nx, ny = u1 * v2 - u2 * v1, u2 * v0 - u0 * v2
        np.subtract(nx * hy, ny * hx, out=x[:, k::3].T)  # forward
        np.add(nx * hx, ny * hy, out=x[:, k + 1::3].T)  # left
        np.subtract(u0 * v1, u1 * v0, out=x[:, k + 2::3].T)  # up
        del e, u0, u1, u2, v0, v1, v2, nx, ny
    # the distances: norm's arithmetic (each component squared, added in order, the root) with the
    # squares written over the differences, no longer needed (one product, no temporary as large as d)
    np.multiply(d, d, out=d)
    dist = d[..., 0] + d[..., 1]  # (pairs, stop - start)
    dist += d[..., 2]
    del d
    x[:, :k] = np.sqrt(dist, out=dist).T
    finite = np.isfinite(x)
    step, before, full = _steps(x, w, k, None if finite.all() else ~finite)
    score = np.sqrt(step[:, :k] ** 2 @ lay.incidence)  # (T, points) m
    bounds, pairs = lay.bounds, lay.pairs
    warnings, worst, knocked = [], (-1.0, ""), set()
    for g, (group, _, _) in enumerate(groups):
        lo, hi = bounds[g], bounds[g + 1]
        t, j = divmod(int(score[:, lo:hi].argmax()), hi - lo)
        j = int(lo + j)
        size = float(score[t, j])
        if size > worst[0]:
            worst = (size, names[j])
        if not size > knock_m:
            continue
        knocked.add(group)
        f = start + t + w  # the first frame after the largest step; a knock seen in part of the stride only (a
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
            f"{trial.frames[f]} ({trial.time[f]:.2f} s, within a stride): its distances' means over the stride "
            f"({w / trial.point_rate:.2f} s) "
            f"before and after step ({listed}), more than the {1000 * knock_m:g} mm tolerated "
            f"(Settings.marker_knock_m): {cause}; the kinetics of the segments it defines are wrong from there")
    detail = (f"stride-mean segment shape steps at most {1000 * worst[0]:.0f} mm ({worst[1]}; tolerance "
              f"{1000 * knock_m:g} mm)" if math.isfinite(knock_m)
              else "marker knocks not checked (Settings.marker_knock_m is inf)")
    if not turning:
        why = "Settings.marker_turn_deg is inf" if triangles else "no three-point segment"
        return warnings, f"{detail}; planes' turns not checked ({why})", worst[0]
    b = before.reshape(-1, len(triangles), 3)  # (T, triangles, 3) mean normals, heading frame
    a = b + step[:, k:].reshape(b.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = np.einsum("tij,tij->ti", b, a) / np.sqrt(np.einsum("tij,tij->ti", b, b) * np.einsum("tij,tij->ti", a, a))
    seen = np.isfinite(cos) if full is None else np.isfinite(cos) & full[:, k::3]  # both windows' frames all seen
    if not seen.any():
        return warnings, f"{detail}; planes' turns not measured (no frame with a stride seen before and after)", worst[0]
    cos = np.where(seen, cos, 1.0)
    t, i = divmod(int(cos.argmin()), cos.shape[1])
    g = triangles[i][0]
    detail += (f"; three-point segments' planes turn by at most {math.degrees(math.acos(min(1.0, cos[t, i]))):.0f} "
               f"deg ({groups[g][0].lower()} {triangles[i][1]}; tolerance {turn_deg:g} deg)")
    limit = math.cos(math.radians(turn_deg))
    for g, (group, _, _) in enumerate(groups):
        mine = [i for i, tri in enumerate(triangles) if tri[0] == g]  # consecutive
        if not mine or group in knocked or model.root in knocked:
            continue  # named by its distances already, or its hip centre moved with the pelvis's markers
        t, i = divmod(int(cos[:, mine[0]:mine[-1] + 1].argmin()), len(mine))
        i = mine[i]
        if not cos[t, i] < limit:
            continue
        axis = cross(b[t, i], a[t, i])
        corners = triangles[i][2]
        warnings.append(_turn_warning(trial, group, triangles[i][1], [names[c] for c in corners],
                                      np.array([points[c] for c in corners]), left, start + t, w,
                                      math.degrees(math.acos(max(-1.0, cos[t, i]))), axis / np.linalg.norm(axis),
                                      turn_deg))
    return warnings, detail, worst[0]
