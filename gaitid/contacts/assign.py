"""Plate-to-foot assignment: every plate contact given to a foot, or declared invalid with the reason.

Contacts are the loaded periods of each plate (:mod:`gaitid.contacts.intervals`, 20 N,
>= 50 ms). Each is given to a foot, or declared invalid for kinetics with the reason
(:func:`assign_contacts`; tolerances are parameters, defaults in brackets, shared with
:mod:`gaitid.contacts.ownership` from :mod:`gaitid.core.vocabulary`):

1. *Centre of pressure under the foot.* At the point-rate frames of the contact where
   the plate's Fz >= ``cop_min_force`` (50 N) and its COP is defined, the horizontal
   distance from the COP to the foot's heel-toe-ankle triangle (0 inside) must be at
   most ``cop_tolerance`` (0.06 m: the heel and toe markers sit a few cm behind the
   heel's and the toes' contact areas) on at least ``cop_fraction`` (90 %) of the
   frames. One foot must pass; none (COP between the feet, or under no foot) or both
   (feet together) makes the contact invalid.
2. *Two adjacent plates.* Contacts of the same foot on different plates that overlap
   in time form one foot contact (their wrenches are summed: :func:`gaitid.contacts.foot_loads.sum_wrenches`).
3. *Whole foot on the plate(s)* (level walkways; with plates at several heights the per-frame
   rules of :mod:`gaitid.contacts.ownership`, which know each plate's height, apply instead).
   The foot's heel and toe markers, at every frame of the
   contact where they are on the ground (within ``ground_clearance`` = 0.03 m of
   their lowest height in the trial and moving horizontally slower than
   ``ground_speed`` = 0.5 m/s), must lie inside the plate outline(s), at most
   ``plate_tolerance`` (0.01 m) outside an edge. Otherwise: "partly off the plate".
4. *Only that foot* (level walkways, as 3). The other foot's heel and toe, when on the ground during the
   contact, must not be inside any of the contact's plates (by more than
   ``plate_tolerance``): otherwise "two feet".
5. *Manual override* per plate, as in Plug-in Gait / pyCGM2: 'Left' or 'Right' gives
   every contact on that plate to that foot (checks skipped, source 'override'),
   'Invalid' makes them invalid, 'Auto' (default) applies the rules above. Overridden
   plates are never grouped with adjacent plates.
6. *Every frame measured.* A contact valid by the rules above is made invalid when, on some
   of its frames, the per-frame ownership (:mod:`gaitid.contacts.ownership`) finds the other
   foot on one of its plates, a NaN sample, a loaded plate under neither foot or the foot partly
   off the plates; the reason names each problem and its duration, and the foot's load is NaN on
   those frames only (``frames_only``). On a treadmill (:mod:`gaitid.contacts.treadmill`) the
   contacts come from the ownership instead.

The markers are the model's ``[gait]`` heel, toe and ankle (:mod:`gaitid.model.gait_markers`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from gaitid.contacts.contact import FootContact
from gaitid.contacts.geometry import distance_to_triangle, inside_distances
from gaitid.contacts.intervals import split_at_swings, trial_intervals
from gaitid.contacts.ownership import PlateOwnership, plate_ownership
from gaitid.contacts.treadmill import treadmill_contacts, treadmill_mode
from gaitid.core.errors import SettingsError
from gaitid.core.rotation import norm
from gaitid.core.trial import PlateWrench, Trial
from gaitid.core.vocabulary import (
    AUTO,
    CONTACT_THRESHOLD_N,
    COP_MIN_FORCE_N,
    COP_TOLERANCE_M,
    GROUND_CLEARANCE_M,
    GROUND_SPEED_M_S,
    INVALID,
    MIN_CONTACT_S,
    PLATE_TOLERANCE_M,
    SIDES,
    other_side,
    plate_overrides,
)
from gaitid.model.gait_markers import GaitMarkers


def resolve_plate_overrides(overrides: dict | None, trial: Trial) -> dict[int, str]:
    """{plate index (1-based): 'Left'|'Right'|'Invalid'|'Auto'}, checked against the trial's plates."""
    out = {fp.index: AUTO for fp in trial.force_plates}
    for plate, word in plate_overrides(overrides).items():
        if plate not in out:
            raise SettingsError(
                f"plate override for plate {plate}, but the trial has plates {sorted(out)}", trial.path
            )
        out[plate] = word
    return out


def ground_points(trial: Trial, side: str, markers: GaitMarkers, clearance: float = GROUND_CLEARANCE_M,
                  max_speed: float = GROUND_SPEED_M_S) -> list[np.ndarray]:
    """Heel and toe trajectories (n, 3), NaN except where the marker is on the ground: within
    ``clearance`` of its lowest height (2nd percentile) and moving slower than ``max_speed``
    horizontally (a swinging toe passes low but fast)."""
    foot = markers.foot(side)
    return _on_ground(trial, [foot.heel, foot.toe], clearance, max_speed)


def feet_ground_points(trial: Trial, markers: GaitMarkers, clearance: float = GROUND_CLEARANCE_M,
                       max_speed: float = GROUND_SPEED_M_S) -> dict[str, list[np.ndarray]]:
    """{side: :func:`ground_points`} of each foot whose heel and toe the trial has, in one pass."""
    sides = [s for s in SIDES if trial.has_points(markers.foot(s).heel, markers.foot(s).toe)]
    points = _on_ground(trial, [lab for s in sides for lab in (markers.foot(s).heel, markers.foot(s).toe)],
                        clearance, max_speed)
    return {s: points[2 * i:2 * i + 2] for i, s in enumerate(sides)}


# The last call's (labels, rate, clearance, speed), its points as given (their bytes) and its result
# (read-only): the contacts stage and the body-mass check ask for the same feet's ground points of one
# trial; the points are compared byte for byte, so a changed trial is never served stale.
_LAST_GROUND: list = [None]  # one tuple, replaced whole
GROUND_MEMO_BYTES = 4 << 20  # 4 MB: both feet's heel and toe over 7 minutes at 100 Hz


def _on_ground(trial: Trial, labels: list[str], clearance: float, max_speed: float) -> list[np.ndarray]:
    """The points ``labels`` (n, 3 each, read-only), NaN except where on the ground (:func:`ground_points`):
    all in one pass, as numpy calls, not frames, are the cost here; computed once for the same points."""
    if not labels:
        return []
    x = np.stack([trial.point(lab) for lab in labels], axis=1)  # (n, k, 3), a copy
    key = (tuple(labels), float(trial.point_rate), float(clearance), float(max_speed))
    last = _LAST_GROUND[0]
    if last is not None and last[0] == key and last[1] == x.tobytes():  # (a fifth of np.array_equal's cost)
        return list(last[2])  # the same points again (the contacts stage's, then the mass check's)
    points = x.tobytes() if x.nbytes <= GROUND_MEMO_BYTES else None
    z = x[..., 2]
    if x.shape[0] > 1:
        seen = ~np.isnan(z)
        if seen.all():  # each column's 2nd percentile (as nanpercentile, without its overhead)
            ref = np.percentile(z, 2, axis=0)
        else:
            ref = np.array([np.percentile(z[seen[:, j], j], 2) if seen[:, j].any() else np.nan
                            for j in range(len(labels))])
        speed = norm(np.gradient(x[..., :2], axis=0)) * trial.point_rate
        ground = (z <= ref + clearance) & (speed <= max_speed)
        ground |= ~seen.any(axis=0)  # a point never seen stays as it is (NaN)
        x[~ground] = np.nan
    x.setflags(write=False)  # shared by the callers given the same points: read-only
    out = [x[:, j] for j in range(len(labels))]
    if points is not None:  # a long trial's points are not held after its processing
        _LAST_GROUND[0] = (key, points, tuple(out))
    return list(out)


def _outside_fraction(points: list[np.ndarray], frames: np.ndarray, plates: list[np.ndarray],
                      tol: float, labels: tuple[str, ...] = ("heel", "toe")) -> tuple[float, float, str]:
    """(fraction of near-ground samples outside all plates, worst distance outside in m, and
    which markers: "LCAL up to 16.5 cm, LMT2 up to 1.2 cm")."""
    n_low = n_out = 0
    worst = 0.0
    which = []
    for x, lab in zip(points, labels):
        xy = x[frames, :2]
        ok = np.all(np.isfinite(xy), axis=1)
        if not ok.any():
            continue
        d = inside_distances(xy[ok], plates).max(axis=1)
        n_low += ok.sum()
        out = d < -tol
        n_out += out.sum()
        if out.any():
            worst = max(worst, float(-d[out].min()))
            which.append(f"{lab} up to {100 * float(-d[out].min()):.1f} cm")
    return (n_out / n_low if n_low else 0.0), worst, ", ".join(which)


def _cop_under(trial: Trial, w: PlateWrench, frames: np.ndarray, markers: GaitMarkers, min_force: float,
               tol: float) -> tuple[dict, int]:
    fz = w.force[frames, 2]
    cop = w.cop[frames, :2]
    ev = frames[(fz >= min_force) & np.all(np.isfinite(cop), axis=1)]
    res = {}
    for side in SIDES:
        foot = markers.foot(side)
        if not trial.has_points(foot.heel, foot.toe, foot.ankle):
            res[side] = np.nan
            continue
        d = distance_to_triangle(
            w.cop[ev, :2], trial.point(foot.heel)[ev, :2], trial.point(foot.toe)[ev, :2],
            trial.point(foot.ankle)[ev, :2],
        )
        known = np.isfinite(d)
        res[side] = float(np.mean(d[known] <= tol)) if known.sum() >= max(1, 0.5 * ev.size) else np.nan
    return res, int(ev.size)


def assign_contacts(trial: Trial, markers: GaitMarkers, overrides: dict | None = None,
                    threshold: float = CONTACT_THRESHOLD_N, min_duration: float = MIN_CONTACT_S,
                    cop_tolerance: float = COP_TOLERANCE_M, cop_fraction: float = 0.9,
                    cop_min_force: float = COP_MIN_FORCE_N, plate_tolerance: float = PLATE_TOLERANCE_M,
                    ground_clearance: float = GROUND_CLEARANCE_M, ground_speed: float = GROUND_SPEED_M_S,
                    ownership: PlateOwnership | None = None) -> list[FootContact]:
    """Every plate contact of the trial, given to a foot or declared invalid with the reason.

    ``markers``: the model's ``[gait]`` labels (:func:`gaitid.model.gait_markers.gait_markers`).
    ``overrides``: {plate: 'Left'|'Right'|'Invalid'|'Auto'}. See the module docstring for the
    rules and what each tolerance means. ``ownership``: :func:`plate_ownership` of this trial
    with these tolerances when the caller has it already (computed here otherwise).
    """
    ov = resolve_plate_overrides(overrides, trial)
    if ownership is None:
        ownership = plate_ownership(trial, markers, threshold, cop_tolerance, cop_min_force, plate_tolerance,
                                    ground_clearance, ground_speed)
    if treadmill_mode(trial, markers, ownership):
        return _treadmill_overrides(treadmill_contacts(trial, ownership, min_duration), ov)
    plates = {fp.index: fp for fp in trial.force_plates}
    # rules 3 and 4 judge "on the ground" by each marker's lowest height in the trial: right for a
    # level walkway; with plates at several heights (stairs) the per-frame rules, which know each
    # plate's surface height, decide alone (_frame_checked)
    heights = [float(np.mean(fp.corners[:, 2])) for fp in trial.force_plates if np.isfinite(fp.corners).all()]
    level = not heights or max(heights) - min(heights) < 0.01
    intervals = split_at_swings(trial, trial_intervals(trial, threshold, min_duration), markers)
    t0 = (trial.first_frame - 1) / trial.point_rate
    spans = [iv.span(t0, plates[iv.plate].analog.rate) for iv in intervals]

    # 1. COP under which foot, per interval
    info = []
    for iv, (a, b) in zip(intervals, spans):
        frames = trial.indices_between(a, b)
        under, n_eval = _cop_under(trial, plates[iv.plate].point, frames, markers, cop_min_force, cop_tolerance)
        feet = tuple(s for s in SIDES if np.isfinite(under[s]) and under[s] >= cop_fraction)
        info.append((frames, under, n_eval, feet))

    lows = None
    # 2. group overlapping contacts of the same foot on different (auto) plates
    groups: list[list[int]] = []
    for k, iv in enumerate(intervals):
        feet = info[k][3]
        placed = False
        if ov[iv.plate] == AUTO and len(feet) == 1:
            for g in groups:
                j = g[0]
                if (
                    ov[intervals[j].plate] == AUTO
                    and info[j][3] == feet
                    and all(intervals[i].plate != iv.plate for i in g)
                    and any(spans[i][0] <= spans[k][1] and spans[k][0] <= spans[i][1] for i in g)
                ):
                    g.append(k)
                    placed = True
                    break
        if not placed:
            groups.append([k])

    out = []
    for g in groups:
        ivs = [intervals[i] for i in g]
        pl = tuple(sorted(iv.plate for iv in ivs))
        strike = np.nan if any(not np.isfinite(iv.strike_time) for iv in ivs) else min(iv.strike_time for iv in ivs)
        off = np.nan if any(not np.isfinite(iv.off_time) for iv in ivs) else max(iv.off_time for iv in ivs)
        a = min(spans[i][0] for i in g)
        b = max(spans[i][1] for i in g)
        frames = trial.indices_between(a, b)
        under = {s: float(np.nanmin([info[i][1][s] for i in g])) if any(np.isfinite(info[i][1][s]) for i in g)
                 else np.nan for s in SIDES}
        feet = info[g[0]][3]
        n_eval = min(info[i][2] for i in g)
        names = "plate" + ("s " if len(pl) > 1 else " ") + " and ".join(str(p) for p in pl)
        mode = ov[pl[0]] if len(pl) == 1 else AUTO
        base = dict(plates=pl, strike_time=strike, off_time=off, cop_under=under, intervals=ivs)
        if mode in SIDES:
            out.append(FootContact(side=mode, valid=True, reason="", feet=(mode,), source="override", **base))
            continue
        if mode == INVALID:
            out.append(FootContact(side=None, valid=False, reason=f"{names} set invalid by override",
                                   feet=feet, source="override", **base))
            continue
        outlines = [plates[p].corners for p in pl]
        if lows is None:  # the feet's ground points over the whole trial: once, not per contact
            lows = feet_ground_points(trial, markers, ground_clearance, ground_speed)
        pct = ", ".join(f"{s.lower()} {100 * under[s]:.0f} %" for s in SIDES if np.isfinite(under[s]))
        if n_eval == 0:
            reason = f"{names}: force never reaches {cop_min_force:g} N with a centre of pressure"
            out.append(FootContact(side=None, valid=False, reason=reason, feet=(), **base))
            continue
        if not any(np.isfinite(under[s]) for s in SIDES):
            reason = f"{names}: foot markers missing during the contact"
            out.append(FootContact(side=None, valid=False, reason=reason, feet=(), **base))
            continue
        if len(feet) == 0:
            both = tuple(s for s in SIDES if _ground_point_inside(lows.get(s, []), frames, outlines, plate_tolerance))
            reason = (f"{names}: centre of pressure not under one foot through the contact "
                      f"(frames with the COP under the foot: {pct})")
            if len(both) == 2:
                reason = f"{names}: two feet on the plate ({pct} of frames with the COP under each foot)"
            out.append(FootContact(side=None, valid=False, reason=reason, feet=both, **base))
            continue
        if len(feet) == 2:
            reason = f"{names}: centre of pressure under both feet (feet together), cannot tell which"
            out.append(FootContact(side=None, valid=False, reason=reason, feet=feet, **base))
            continue
        side = feet[0]
        other = other_side(side)
        if level and other in lows and _ground_point_inside(lows[other], frames, outlines, plate_tolerance):
            reason = f"{names}: two feet on the plate (the {other.lower()} foot also touches it)"
            out.append(FootContact(side=side, valid=False, reason=reason, feet=(side, other), **base))
            continue
        if level and side in lows:
            foot = markers.foot(side)
            frac, worst, which = _outside_fraction(lows[side], frames, outlines, plate_tolerance,
                                                   (foot.heel, foot.toe))
            if frac > 0:
                reason = (f"{names}: {side.lower()} foot partly off the plate (heel/toe up to "
                          f"{100 * worst:.1f} cm outside: {which}; {100 * frac:.0f} % of near-ground samples)")
                out.append(FootContact(side=side, valid=False, reason=reason, feet=(side,), **base))
                continue
        out.append(FootContact(side=side, valid=True, reason="", feet=(side,), **base))
    return [_frame_checked(c, trial, ownership) for c in out]


def _frame_checked(c: FootContact, trial: Trial, ownership: PlateOwnership) -> FootContact:
    """A valid automatic contact made invalid when, on some of its frames, the foot's load is not
    measured (:mod:`gaitid.contacts.ownership`): the other foot on one of its plates, a NaN
    sample, a loaded plate under neither foot, a foot partly off the plates. A loaded plate of the
    contact itself that the per-frame test places under no foot stays the contact's (its centre
    of pressure was under this foot through the contact)."""
    if not c.valid or c.source != "auto" or c.side not in SIDES:
        return c
    frames = trial.indices_between(*_span(c, trial))
    prob = ownership.problem[c.side][frames]
    own = np.isin(ownership.problem_plate[c.side][frames], c.plates) & (prob == 3)
    bad = frames[(prob > 0) & ~own]
    cols = [ownership.plates.index(p) for p in c.plates]
    gaps = ownership.missing[np.ix_(frames, cols)] & (prob == 0)[:, None]  # its own plates' NaN samples
    if bad.size == 0 and not gaps.any():
        return c
    names = "plate" + ("s " if len(c.plates) > 1 else " ") + " and ".join(str(p) for p in c.plates)
    why = ownership.reasons(c.side, bad) if bad.size else []
    why += [f"plate {p} force missing (NaN) for {k} frame{'s' if k > 1 else ''}"
            for p, k in zip(c.plates, gaps.sum(axis=0)) if k]
    return replace(c, valid=False, reason=f"{names}: {', '.join(why)}", frames_only=True)


def _span(c: FootContact, trial: Trial) -> tuple[float, float]:
    t = trial.time
    return (c.strike_time if np.isfinite(c.strike_time) else t[0], c.off_time if np.isfinite(c.off_time) else t[-1])


def _treadmill_overrides(contacts: list[FootContact], ov: dict[int, str]) -> list[FootContact]:
    """Plate overrides on a treadmill: 'Invalid' makes every contact on that belt invalid; a side
    ('Left'/'Right') cannot apply to a belt both feet use and is ignored (the ownership decides)."""
    out = []
    for c in contacts:
        bad = [p for p in c.plates if ov.get(p) == INVALID]
        if bad:
            c = replace(c, valid=False, reason=f"plate {', '.join(map(str, bad))} set invalid by override",
                        source="override", frames_only=False)
        out.append(c)
    return out


def _ground_point_inside(points: list[np.ndarray], frames: np.ndarray, plates: list[np.ndarray], tol: float) -> bool:
    """True if a near-ground heel/toe sample lies inside a plate, at least ``tol`` m inside its edges."""
    for x in points:
        xy = x[frames, :2]
        ok = np.all(np.isfinite(xy), axis=1)
        if ok.any() and np.any(inside_distances(xy[ok], plates).max(axis=1) >= tol):
            return True
    return False


def contacts_table(contacts: list[FootContact]) -> pd.DataFrame:
    """One row per foot contact: plates, side, strike_time_s, off_time_s, valid, reason, source,
    cop_under_left, cop_under_right (fractions)."""
    rows = [
        {
            "plates": ",".join(str(p) for p in c.plates),
            "side": c.side,
            "strike_time_s": c.strike_time,
            "off_time_s": c.off_time,
            "valid": c.valid,
            "reason": c.reason,
            "source": c.source,
            "cop_under_left": c.cop_under.get("Left", np.nan),
            "cop_under_right": c.cop_under.get("Right", np.nan),
        }
        for c in contacts
    ]
    return pd.DataFrame(rows, columns=["plates", "side", "strike_time_s", "off_time_s", "valid", "reason", "source",
                                       "cop_under_left", "cop_under_right"])
