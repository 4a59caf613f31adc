"""Marker faults the kinetics cannot survive: a segment whose length changes, a marker that stops
while the body moves, a marker on the wrong side of the body (docs/checks.md, markers section).

:func:`marker_fault_check` looks at one trial's :class:`~gaitid.model.assembly.ModelKinematics`
and raw markers and returns a :class:`~gaitid.core.checks.Check`:

- **segment lengths**: each chain segment's length (proximal to distal point of the model, e.g.
  the thigh from the hip to the knee centre, the foot from the ankle centre to the toe) per
  frame; frames more than ``length_tolerance_m`` from the segment's median length are named
  (a swapped, knocked or frozen marker moves a joint centre); and the left and right segment
  medians must agree within ``asymmetry_tolerance`` (a fraction of their mean: a marker
  mislabelled for the whole trial, e.g. the tibia wand and ankle marker swapped, changes a
  length for good, which the spread cannot see).
- **stuck markers**: a model marker that moves less than ``stuck_m`` from frame to frame for
  ``stuck_s`` or longer while every other model marker moves more than ``length_tolerance_m``
  relative to it over that stretch (a body standing still, or a foot pinned to the ground with
  its segment, keeps its distances and is not flagged).
- **left/right swaps**: each pair of side markers (``LKNE``/``RKNE``...) projected on the lateral
  direction (from the right to the left hip centre, lab frame): the left marker more than
  ``side_margin_m`` to the right of its right partner is on the wrong side; the warning names
  the pair and the first frame of that crossing.
- **knocked markers** (:mod:`gaitid.model.marker_knocks`): a marker whose distances to the rest of
  its segment, averaged over a stride, step by more than ``knock_m`` between the stride before a
  frame and the stride after it; or a three-point segment's plane (thigh, shank, foot of Plug-in
  Gait) whose stride-mean orientation turns by more than ``turn_deg`` (a marker moved across it);
  the warning names the marker, the frame and the size.

All per-frame work is vectorised over frames (cost linear in the trial length); thresholds are
:class:`~gaitid.core.settings.Settings` fields (``math.inf`` turns a part off).
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.core.checks import Check
from gaitid.core.rotation import norm
from gaitid.core.signal import column_nanmedian, runs
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.marker_knocks import HIP_CENTRES, knock_findings
from gaitid.model.markerset import Model, per_model
from gaitid.model.trial_markers import apply_aliases, strings

NAME = "markers"
MAX_LISTED = 3  # frame ranges quoted per warning


def _ranges(trial: Trial, mask: np.ndarray) -> str:
    """'frames 150-292 (1.49-2.91 s)' for the first runs of True in ``mask`` (n,), and how many more."""
    starts, stops = runs(mask)
    frames, time = trial.frames, trial.time
    parts = [f"{frames[a]}-{frames[b - 1]} ({time[a]:.2f}-{time[b - 1]:.2f} s)" if b - a > 1
             else f"{frames[a]} ({time[a]:.2f} s)" for a, b in zip(starts[:MAX_LISTED], stops[:MAX_LISTED])]
    more = f" and {starts.size - MAX_LISTED} more stretch(es)" if starts.size > MAX_LISTED else ""
    return "frame(s) " + ", ".join(parts) + more


def _point_markers(model: Model, point: str, prefix: str, present: set[str], seen: set[str] | None = None) -> list[str]:
    """The trial's markers a model point is computed from, following the points it uses."""
    seen = set() if seen is None else seen
    if point in seen or point not in model.points:
        return [point] if point in present else []
    seen.add(point)
    out: list[str] = []
    for text in strings(model.points[point]):
        lab = text.replace("{S}", prefix)
        if lab in present and lab not in out:
            out.append(lab)
        elif text in model.points and text != point:
            out += [x for x in _point_markers(model, text, prefix, present, seen) if x not in out]
    return out


def _model_markers(model: Model) -> list[str]:
    """Every marker template the model names (``{S}`` unreplaced), clusters included."""
    names = list(model.required_markers) + list(model.optional_markers) + [x for g in model.one_of for x in g]
    for spec in model.clusters.values():
        names += list(spec.get("markers", []))
    return list(dict.fromkeys(names))


_PLANS: dict = {}  # (id(model), marker labels, virtual labels) -> (model, plan): see per_model


def _plan(model: Model, trial: Trial):
    """(present, labels, columns, pairs, built_from) of a (label-aliased) trial under ``model``: the
    labels present (markers and virtual points), the model's markers among them and their columns
    in ``trial.markers``, their left/right pairs (:func:`_side_pairs`) with each pair's two
    positions in ``labels`` (two read-only index arrays), and ``built_from(point,
    prefix)``, the markers a model point of a side is computed from (:func:`_point_markers`,
    remembered). The same for every trial of a session: built once per model and label set
    (:func:`~gaitid.model.markerset.per_model`)."""
    return per_model(_PLANS, model, (tuple(trial.marker_labels), tuple(trial.virtual_labels)),
                     lambda: _build_plan(model, trial))


def _build_plan(model: Model, trial: Trial):
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    wanted = [t.replace("{S}", model.sides[s]) if "{S}" in t else t for t in _model_markers(model)
              for s in (SIDES if "{S}" in t else SIDES[:1])]
    labels = [x for x in dict.fromkeys(wanted) if x in trial.marker_labels]
    columns = [trial.marker_labels.index(x) for x in labels]
    memo: dict[tuple[str, str], list[str]] = {}

    def built_from(point: str, prefix: str) -> list[str]:
        if (point, prefix) not in memo:
            memo[point, prefix] = _point_markers(model, point, prefix, present)
        return list(memo[point, prefix])

    pairs = _side_pairs(model, labels)
    ends = tuple(np.array([labels.index(p[k]) for p in pairs], dtype=np.intp) for k in (0, 1))
    for a in ends:
        a.setflags(write=False)
    return present, labels, columns, (pairs, ends), built_from


def segment_lengths(kinematics) -> dict[tuple[str, str], np.ndarray]:
    """(side, segment) -> (n,) m: the distance from each chain segment's proximal to its distal
    point (lab frame), per frame; NaN where either is unknown."""
    return dict(zip(*_length_table(kinematics)))


def _length_table(kinematics) -> tuple[list[tuple[str, str]], np.ndarray]:
    """The (side, segment) keys of :func:`segment_lengths` and their lengths as the rows of one
    (segments, n) array (m): each segment's difference written into one array, then norm's arithmetic
    (the squares added in order, the root) once for all."""
    keys, ends = [], []
    for side in SIDES:
        for body, motion in zip(kinematics.chains[side].bodies, kinematics.motion[side]):
            keys.append((side, body.name))
            ends.append((motion.proximal_lab, motion.distal_lab))
    if not keys:
        return keys, np.empty((0, 0))
    d = np.empty((len(keys),) + ends[0][0].shape)  # (segments, n, 3) m lab: no stacked copies of the ends
    for row, (proximal, distal) in zip(d, ends):
        np.subtract(proximal, distal, out=row)
    np.multiply(d, d, out=d)  # the squares, in one product
    lengths = d[..., 0] + d[..., 1]
    lengths += d[..., 2]
    return keys, np.sqrt(lengths, out=lengths)


def _length_findings(trial, model, keys, L, ok, present, tol, asym_tol):
    warnings, worst, worst_asym = [], (0.0, ""), (0.0, "")  # L: (segments, n) m, the rows of ``keys``; ok: finite
    med = column_nanmedian(L.T)  # each segment's median over the frames it is known in, by one sort
    dev_all = np.where(ok, L - med[:, None], 0.0)
    big = np.abs(dev_all)
    top = big.argmax(axis=1)
    off_all = big > tol
    medians = {key: m for key, m, known in zip(keys, med.tolist(), ok.any(axis=1)) if known}
    largest = big.max(axis=1)  # each segment's largest departure from its median (0 where never known)
    r = int(largest.argmax())  # the first segment departing the most
    if largest[r] > worst[0]:
        worst = (largest[r], f"{keys[r][0].lower()} {keys[r][1]}")
    n_off = off_all.sum(axis=1)
    for r in n_off.nonzero()[0]:
        (side, seg), med_r = keys[r], medians[keys[r]]
        dev, i, off = dev_all[r], int(top[r]), off_all[r]
        spec = model.segments[seg]
        prefix = model.sides[side]
        marks = [x for p in (spec["proximal"], spec["distal"]) for x in _point_markers(model, p, prefix, present)]
        warnings.append(
            f"markers: the {side.lower()} {seg} ({spec['proximal']} to {spec['distal']}) is {1000 * med_r:.0f} mm long "
            f"(median) but {1000 * dev[i]:+.0f} mm ({100 * dev[i] / med_r:+.0f} %) off that in {int(n_off[r])} "
            f"frame(s), {_ranges(trial, off)}, more than the {1000 * tol:g} mm tolerated "
            f"(Settings.segment_length_tolerance_m): a marker it is built from "
            f"({', '.join(dict.fromkeys(marks)) or 'see the model'}) swapped, mislabelled, knocked or stuck there; "
            f"that leg's kinetics are wrong in those frames")
    for seg in model.chain:
        if ("Left", seg) not in medians or ("Right", seg) not in medians:
            continue
        left, right = medians["Left", seg], medians["Right", seg]
        rel = abs(left - right) / (0.5 * (left + right))
        if rel > worst_asym[0]:
            worst_asym = (rel, seg)
        if rel > asym_tol:
            spec = model.segments[seg]
            marks = [x for side in SIDES for p in (spec["proximal"], spec["distal"])
                     for x in _point_markers(model, p, model.sides[side], present)]
            warnings.append(
                f"markers: the left {seg} ({spec['proximal']} to {spec['distal']}) is {1000 * left:.0f} mm long "
                f"(median) and the right {1000 * right:.0f} mm, {100 * rel:.0f} % of their mean apart, more than "
                f"the {100 * asym_tol:g} % tolerated (Settings.segment_asymmetry_tolerance): a marker mislabelled "
                f"for the whole trial (e.g. two of {', '.join(dict.fromkeys(marks))} swapped) or a wrong subject "
                f"measurement (e.g. a knee or ankle width); the kinetics of the leg whose {seg} is wrong are wrong")
    return warnings, worst, worst_asym


def _stuck_findings(trial, labels, X, stuck_s, stuck_m, tol):
    """Warnings for model markers still for ``stuck_s`` while every other one moves relative to them."""
    warnings = []
    if not math.isfinite(stuck_s) or X.shape[0] < 2:
        return warnings
    move = X[1:] - X[:-1]  # (n-1, m, 3) m per frame; NaN where unseen
    np.multiply(move, move, out=move)  # each component's square, in one product
    still = move[..., 0] + move[..., 1]
    still += move[..., 2]
    still = still < stuck_m ** 2
    need = max(1, math.ceil(stuck_s * trial.point_rate))  # frame-to-frame steps in the stretch
    for j in (still.sum(axis=0) >= need).nonzero()[0]:  # a stretch of `need` still steps needs as many
        lab = labels[j]
        starts, stops = runs(still[:, j])
        for a, b in zip(starts, stops):
            if b - a < need:
                continue
            # first the marker still the longest beside it (a standing foot's other marker): when its
            # distance stays within the tolerance, so does the least spread of them all, below
            company = still[a:b].sum(axis=0)
            company[j] = -1
            near = norm(X[a:b + 1, int(company.argmax())] - X[a:b + 1, j])
            near = near[np.isfinite(near)]
            if near.size and not float(near.max() - near.min()) > tol:
                continue
            span = X[a:b + 1]  # frames a..b: the marker stays put
            dist = norm(span - span[:, j:j + 1])  # (k, m) m, distance to every marker
            seen = np.isfinite(dist)
            spread = np.where(seen, dist, -np.inf).max(axis=0) - np.where(seen, dist, np.inf).min(axis=0)
            spread = spread[seen.any(axis=0) & (np.arange(spread.size) != j)]  # every other marker seen there
            if not spread.size or not float(spread.min()) > tol:
                continue  # another marker keeps its distance: the segment is still, not the marker stuck
            frames, time = trial.frames, trial.time
            warnings.append(
                f"markers: {lab} stays within {1000 * stuck_m:g} mm from frame to frame over frames "
                f"{frames[a]}-{frames[b]} ({time[a]:.2f}-{time[b]:.2f} s, {time[b] - time[a]:.2f} s, more than the "
                f"{stuck_s:g} s tolerated, Settings.stuck_marker_s) while every other marker moves at least "
                f"{1000 * float(spread.min()):.0f} mm relative to it: a frozen trajectory (a gap filled "
                "with a constant, a ghost marker labelled); the segments it defines are wrong there")
    return warnings


def _side_pairs(model: Model, labels: list[str]) -> list[tuple[str, str]]:
    """The (left, right) pairs of the model's side markers (``LKNE``/``RKNE``...) among ``labels``."""
    left_pre, right_pre = model.sides["Left"], model.sides["Right"]
    return [(a, b) for a, b in ((t.replace("{S}", left_pre), t.replace("{S}", right_pre))
                                for t in _model_markers(model) if "{S}" in t) if a in labels and b in labels]


def _side_findings(trial, kinematics, pairs, ends, X, margin):
    """Warnings for left/right marker pairs (:func:`_side_pairs`; ``ends``: their columns in ``X``)
    crossed by more than ``margin`` (m); also the worst crossing."""
    warnings, worst = [], (-math.inf, "")
    if not math.isfinite(margin) or not all(h in kinematics.joint_centres for h in HIP_CENTRES):
        return warnings, None
    if not pairs:
        return warnings, worst
    lateral = kinematics.joint_centres[HIP_CENTRES[0]] - kinematics.joint_centres[HIP_CENTRES[1]]
    lateral /= norm(lateral, keepdims=True)  # (n, 3) lab, right to left hip
    gap = X[:, ends[0]] - X[:, ends[1]]  # (n, pairs, 3) m lab
    gap *= lateral[:, None]  # each component's product, in one operation
    D = gap[..., 0] + gap[..., 1]  # (n, pairs) m, the products added in order; > 0 when a is left of b
    D += gap[..., 2]
    seen = np.isfinite(D)
    known = seen.any(axis=0).nonzero()[0]
    crossing = -np.where(seen, D, np.inf).min(axis=0)  # each pair's, at once (-inf: never seen)
    if known.size:
        p = known[crossing[known].argmax()]  # the first pair crossed the most
        worst = (float(crossing[p]), "/".join(pairs[p]))
    for p in known[crossing[known] > margin]:
        (a, b), d = pairs[p], D[:, p]
        wrong = d < -margin
        first = int(np.argmax(wrong))
        starts, _ = runs(np.nan_to_num(d, nan=1.0) < 0)
        onset = int(starts[starts <= first].max())  # the frame the pair crossed over
        frames, time = trial.frames, trial.time
        whole = onset == int(np.argmax(np.isfinite(d)))
        when = "throughout the trial" if whole else f"from frame {frames[onset]} ({time[onset]:.2f} s)"
        warnings.append(
            f"markers: {a} is to the right of {b} (by up to {1000 * crossing[p]:.0f} mm along the line from the right "
            f"to the left hip centre) {when}, in {int(wrong.sum())} frame(s) beyond the {1000 * margin:g} mm "
            f"tolerated (Settings.marker_side_margin_m): {a} and {b} swapped (mislabelled) "
            f"{'for the whole trial' if whole else 'from there'}; both legs' kinetics are wrong there")
    return warnings, worst


def marker_fault_check(trial: Trial, model: Model, kinematics, *, length_tolerance_m: float = 0.05,
                       asymmetry_tolerance: float = 0.35, stuck_s: float = 0.2, stuck_m: float = 1e-4,
                       side_margin_m: float = 0.1, knock_m: float = 0.01, turn_deg: float = 12.0) -> Check:
    """The markers' check of one trial (module docstring): PASSED with the worst figures, WARNED
    naming each fault (segment or marker(s), frames and times, likely cause, the setting), or
    NOT_RUN when no segment length is known."""
    keys, L = _length_table(kinematics)
    ok = np.isfinite(L)
    if not ok.any():
        return Check.not_run(NAME, "no segment's two ends are ever both known")
    trial = apply_aliases(trial, model)
    present, labels, columns, pairs, built_from = _plan(model, trial)
    X = trial.markers[:, columns] if labels else np.empty((trial.n_frames, 0, 3))
    warnings, worst, worst_asym = _length_findings(trial, model, keys, L, ok, present, length_tolerance_m,
                                                   asymmetry_tolerance)
    warnings += _stuck_findings(trial, labels, X, stuck_s, stuck_m, length_tolerance_m)
    side_warnings, crossing = _side_findings(trial, kinematics, *pairs, X, side_margin_m)
    warnings += side_warnings
    del X, L, ok  # freed before the knock pass makes the check's largest arrays: fresh pages cost in process()
    knock_warnings, knock_detail, _ = knock_findings(trial, model, kinematics, knock_m, built_from, turn_deg)
    warnings += knock_warnings
    detail = (f"segment lengths within {1000 * worst[0]:.0f} mm of their medians ({worst[1]}; tolerance "
              f"{1000 * length_tolerance_m:g} mm), left/right within {100 * worst_asym[0]:.0f} % "
              f"({asymmetry_tolerance * 100:g} %)")
    if crossing is None:
        detail += "; sides not checked (no hip centres or no paired markers)"
    elif crossing[1]:
        how = (f"crossed by at most {1000 * crossing[0]:.0f} mm" if crossing[0] > 0
               else f"each on its side by at least {-1000 * crossing[0]:.0f} mm")
        detail += f", left/right pairs {how} ({crossing[1]}; tolerance {1000 * side_margin_m:g} mm)"
    return Check.outcome(NAME, f"{detail}; {knock_detail}", warnings)
