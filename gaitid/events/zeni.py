"""Gait events from kinematics (Zeni, Richards & Higginson 2008, Gait Posture 27:710).

Along the horizontal direction of progression ``d`` (:func:`gaitid.contacts.progression.progression_direction`),
foot strike is a maximum of ``(heel - pelvis).d`` and foot off a minimum of ``(toe - pelvis).d``.
The pelvis point is the mean of the pelvis markers present (Zeni used the sacrum; a constant
offset along ``d`` does not move the extrema). Extrema must be at least 0.35 s apart, drop on one
side by a quarter of the signal's 5-95 % range and on both sides by 2 mm (within 0.35 s); they are
found only inside marker data (gaps of at most 0.1 s are bridged linearly, never at the trial's
ends). Zeni's heel maximum precedes the landing (the decelerating foot still moves faster than
the pelvis); by default each strike is moved to the heel's peak vertical acceleration within the
next 0.1 s (the impact; Hreljac & Marshall 2000): on the real trials strikes go from a median 5
frames early (12 of 43 within 3 frames of the stored ones) to a median +1 frame (39 of 43); see
``docs/events.md``. The markers are the model's ``[gait]`` heel and toe.
"""

from __future__ import annotations

import numpy as np

from gaitid.contacts.progression import Progression, pelvis_centre, progression_direction
from gaitid.core.errors import DataError
from gaitid.core.signal import bridge_gaps, runs
from gaitid.core.trial import Event, Trial
from gaitid.core.vocabulary import FOOT_OFF, FOOT_STRIKE, SIDES
from gaitid.events.file_events import event_at
from gaitid.model.gait_markers import GaitMarkers


def zeni_signals(trial: Trial, side: str, markers: GaitMarkers,
                 progression: Progression | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(heel - pelvis).d and (toe - pelvis).d (m) per frame, Zeni et al. 2008 eq. 1-2."""
    prog = progression or progression_direction(trial, markers)
    foot = markers.foot(side)
    for lab in (foot.heel, foot.toe):
        if not trial.has_points(lab):
            raise DataError(f"no marker '{lab}' for the {side.lower()} foot (Zeni events)", trial.path)
    pelvis = pelvis_centre(trial, markers)
    d = prog.direction_lab
    heel = np.einsum("ij,ij->i", trial.point(foot.heel) - pelvis, d)
    toe = np.einsum("ij,ij->i", trial.point(foot.toe) - pelvis, d)
    return heel, toe


def _extrema(x: np.ndarray, rate: float, maxima: bool, min_interval: float, max_gap: float,
             rel_prominence: float, min_drop: float) -> np.ndarray:
    """Indices of the maxima (or minima) of x, inside marker data only.

    A peak needs, within ``min_interval`` s on either side, a drop of at least
    ``rel_prominence`` x (5-95 % range) on one side and at least ``min_drop`` (m) on
    both: so extrema a few frames from the trial's ends are kept, but not the rises of
    noise on a slope. Peaks closer than ``min_interval`` keep the highest.
    """
    x = bridge_gaps(x, int(round(max_gap * rate)))
    finite = np.isfinite(x)
    if finite.sum() < 3:
        return np.array([], int)
    lo, hi = np.nanpercentile(x, [5, 95])
    prom = max(rel_prominence * (hi - lo), 1e-6)
    y = x if maxima else -x
    w = max(1, int(round(min_interval * rate)))
    out = []
    for a, b in zip(*runs(finite)):
        if b - a < 3:
            continue
        seg = y[a:b]
        pk = peaks_apart(seg, w)
        keep = []
        for p in pk:
            left = seg[p] - seg[max(0, p - w): p].min()
            right = seg[p] - seg[p + 1: p + w + 1].min()
            if max(left, right) >= prom and min(left, right) >= min_drop:
                keep.append(p + a)
        out.append(np.array(keep, int))
    return np.concatenate(out) if out else np.array([], int)


def refine_strikes(heel_z: np.ndarray, strikes: np.ndarray, rate: float, window: float = 0.1) -> np.ndarray:
    """Move each Zeni foot strike to the heel's peak vertical acceleration (the impact) in the
    following ``window`` s (Hreljac & Marshall 2000, J Biomech 33:783). Zeni's heel maximum
    comes when the decelerating foot's speed falls to the pelvis speed, a few frames before
    the heel lands (median -5 frames at 100 Hz on the real trials); the impact is the landing."""
    z = bridge_gaps(heel_z, int(round(0.1 * rate)))
    acc = np.gradient(np.gradient(z))
    w = int(round(window * rate))
    out = []
    for i in strikes:
        seg = acc[i: min(i + w + 1, z.size)]
        out.append(i + int(np.nanargmax(seg)) if np.isfinite(seg).any() else i)
    return np.array(out, int)


def zeni_events(trial: Trial, markers: GaitMarkers, progression: Progression | None = None,
                min_interval: float = 0.35, max_gap: float = 0.1, rel_prominence: float = 0.25,
                min_drop: float = 0.002, refine_strike: bool = True) -> list[Event]:
    """Foot strikes (heel maxima) and foot offs (toe minima) from markers, Zeni et al. 2008.

    ``refine_strike`` (default) moves each strike to the heel impact (:func:`refine_strikes`);
    False gives Zeni's heel maxima unchanged.
    """
    prog = progression or progression_direction(trial, markers)
    out = []
    rate = trial.point_rate
    for side in SIDES:
        heel, toe = zeni_signals(trial, side, markers, prog)
        hs = _extrema(heel, rate, True, min_interval, max_gap, rel_prominence, min_drop)
        to = _extrema(toe, rate, False, min_interval, max_gap, rel_prominence, min_drop)
        out += [event_at(trial, FOOT_STRIKE, side, trial.time[i], "kinematics") for i in hs]
        out += [event_at(trial, FOOT_OFF, side, trial.time[i], "kinematics") for i in to]
    return impact_strikes(trial, markers, out) if refine_strike else sorted(out, key=lambda e: e.time)


def impact_strikes(trial: Trial, markers: GaitMarkers, events: list[Event]) -> list[Event]:
    """``events`` (Zeni's, on frames of the trial) with each foot strike moved to its heel's impact
    (:func:`refine_strikes`); the other events unchanged; sorted by time."""
    out = [e for e in events if e.label != FOOT_STRIKE]
    for side in SIDES:
        strikes = np.array([trial.index_of_time(e.time) for e in events
                            if e.label == FOOT_STRIKE and e.context == side], int)
        if strikes.size:
            moved = refine_strikes(trial.point(markers.foot(side).heel)[:, 2], strikes, trial.point_rate)
            out += [event_at(trial, FOOT_STRIKE, side, trial.time[i], "kinematics") for i in moved]
    return sorted(out, key=lambda e: e.time)


def peaks_apart(x: np.ndarray, distance: int) -> np.ndarray:
    """Indices of the local maxima of a finite ``x`` (n,) at least ``distance`` samples apart, the
    higher kept when two are closer (equal heights in numpy's default argsort order, reversed), as
    scipy.signal.find_peaks(x, distance=distance): a flat top counts once, at its middle (rounded
    down); the ends are never peaks.

    Why not find_peaks itself (measured): the peaks are the same, index for index, on every call
    of the 49 configurations of benchmarks/compare_results.py (180 calls, real and synthetic
    trials), of tests/test_events.py, test_synthetic_trials.py and test_ownership.py (226 calls)
    and on 4,000 random signals with flat tops and ties (tests/test_butterworth.py). find_peaks
    is faster per call (15,000 samples: 0.04 against 0.26 ms; 360,000: 0.9 against 7.9 ms;
    white noise with 120,000 maxima: 5 against 25 ms), but every trial runs this (heel and toe of
    each side), and importing scipy.signal for it makes a lone ``gaitid run --no-report`` of the
    sample walk 2.1x slower (0.60 -> 1.33 s), as for the filter (:mod:`gaitid.core.butterworth`).
    """
    step = np.flatnonzero(np.diff(x))  # x[i + 1] != x[i]
    rises = np.diff(x)[step] > 0
    top = np.flatnonzero(rises[:-1] & ~rises[1:])  # a rise followed by a fall, flat between
    peaks = (step[top] + 1 + step[top + 1]) // 2
    if distance <= 1 or peaks.size < 2:
        return peaks
    keep = np.ones(peaks.size, bool)
    lo = np.searchsorted(peaks, peaks - distance, side="right")  # peaks[lo[j]:hi[j]] lie within distance
    hi = np.searchsorted(peaks, peaks + distance, side="left")
    for j in np.argsort(x[peaks])[::-1]:  # highest first; one step per peak (a few per gait cycle)
        if keep[j]:
            keep[lo[j]:hi[j]] = False
            keep[j] = True
    return peaks[keep]
