"""The centre of pressure of every plate contact against the feet: a plate whose COP lies away from
every foot (a plate placed at the wrong position: corners translated or exchanged with another
plate's) or stays still while the foot rolls over it (moment channels read x1000 too small, or
the corners numbered from the wrong corner) is named with the figures (docs/checks.md,
"Force plates").

Both judge every contact interval of every plate, valid or not and whoever it was given to (an
override included), in the horizontal plane of the lab, over the point frames with the plate's
vertical force at least :data:`LOADED_N`:

* *COP near the foot*: the median over the contact of the COP's distance to the heel-toe-ankle
  triangle (0 inside) of the foot the contact is given to (by the rules or an override; the nearer
  foot for a contact given to none) at most ``margin_m``;
* *COP travel along the foot*: on a step (a complete contact shorter than :data:`STEP_MAX_S`),
  the COP's travel (5th to 95th percentile) along that foot's heel-to-toe direction at least
  ``min_travel`` times the heel-toe distance (the COP rolls from heel to toe in walking; on a
  treadmill belt, which carries the foot backwards, the travel relative to the heel marker). A COP
  that moves neither along nor across the foot is named as a moment-unit problem first (a COP
  stuck at the plate centre is also away from the foot).
"""

from __future__ import annotations

import itertools

import numpy as np

from gaitid.contacts.contact import FootContact
from gaitid.contacts.geometry import distance_to_triangle
from gaitid.core.checks import Check
from gaitid.core.signal import column_nanmedian, column_percentiles, finite_rows
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.gait_markers import GaitMarkers

LOADED_N = 50.0  # a frame counts when the plate's vertical force is at least this (N)
STEP_MAX_S = 1.5  # a complete contact shorter than this is a step, over which the COP rolls heel to toe


def _feet(trial: Trial, markers: GaitMarkers) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    out = {}
    for side in SIDES:
        f = markers.foot(side)
        if trial.has_points(f.heel, f.toe, f.ankle):
            out[side] = (trial.point(f.heel)[:, :2], trial.point(f.toe)[:, :2], trial.point(f.ankle)[:, :2])
    return out


def _contact_medians(values: np.ndarray, sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(contacts, k) medians of each column's numbers over each contact's rows of ``values`` (n, k), the
    contacts' rows consecutive (``sizes``), and their counts: the contacts as NaN-padded columns of one
    :func:`column_nanmedian` (np.median's values of the numbers), or one call per contact when one
    contact is much longer than the rest (the padding stays within a few times the values)."""
    starts = list(itertools.accumulate(sizes, initial=0))  # each contact's first row, then the end
    longest = max(sizes, default=0)
    if longest * len(sizes) > 4 * values.shape[0] + 1000:
        parts = np.split(values, starts[1:-1])
        return (np.array([column_nanmedian(v) for v in parts]),
                np.array([np.isfinite(v).sum(axis=0) for v in parts]))
    pad = np.full((max(longest, 1), len(sizes), values.shape[1]), np.nan)
    for i, (a, b) in enumerate(itertools.pairwise(starts)):  # each contact's rows (a slice each, not index arrays)
        pad[:b - a, i] = values[a:b]
    flat = pad.reshape(pad.shape[0], -1)
    return (column_nanmedian(flat).reshape(pad.shape[1:]), np.isfinite(flat).sum(axis=0).reshape(pad.shape[1:]))


def _measure(pairs: list[tuple[int, str]], loaded: list[np.ndarray], cops: list[np.ndarray],
             feet: dict) -> dict[tuple[int, str], tuple[np.ndarray, int]]:
    """(contact, side) -> (the medians over the contact's loaded frames (np.median of the known ones) of
    the COP's distance to that foot's heel-toe-ankle triangle and of its heel-to-toe vector (lab X, Y):
    (3,) m; the frames the distance is known in) for each of ``pairs``, all at once (numpy calls, not
    frames, cost). ``loaded``: each contact's frames; ``cops``: its COP there, (frames, 2) m lab."""
    if not pairs:
        return {}
    rows = [loaded[k] for k, _ in pairs]
    heel, toe, ankle = (np.concatenate([feet[side][j][fr] for (_, side), fr in zip(pairs, rows)]) for j in range(3))
    d = distance_to_triangle(np.concatenate([cops[k] for k, _ in pairs]), heel, toe, ankle)
    medians, known = _contact_medians(np.column_stack([d, toe - heel]), [fr.size for fr in rows])
    return {pair: (medians[i], int(known[i, 0])) for i, pair in enumerate(pairs)}


def cop_foot_check(trial: Trial, markers: GaitMarkers, contacts: list[FootContact], margin_m: float,
                   min_travel: float) -> Check:
    """'COP under the foot': see the module docstring. ``contacts``: the contacts stage's."""
    name = "COP under the foot"
    feet = _feet(trial, markers)
    plates = {p.index: p for p in trial.force_plates}
    t0 = (trial.first_frame - 1) / trial.point_rate
    # (plate, first s, last s, complete, on a belt, foot given, how given): each plate contact, and a
    # treadmill's valid one-belt contacts
    spans = []
    for c in contacts:
        for iv in c.intervals:
            spans.append((iv.plate, *iv.span(t0, plates[iv.plate].analog.rate), iv.complete, False, c.side or "",
                          c.source))
        if not c.intervals and c.valid and len(c.plates) == 1 and c.complete:
            spans.append((c.plates[0], c.strike_time, c.off_time, True, c.source == "treadmill", c.side or "", c.source))
    if not spans:
        return Check.not_run(name, "no plate contact")
    if not feet:
        return Check.not_run(name, "the feet's heel, toe and ankle markers are missing")
    warnings, worst_d, least_travel, judged = [], 0.0, np.inf, 0
    spans, loaded = sorted(spans), []
    # each contact's loaded frames with a COP, from its frames (trial.indices_between) as a slice
    ends = trial.index_of_time(np.array([sp[1:3] for sp in spans]))
    for (plate, *_), (lo, hi) in zip(spans, ends.tolist()):
        w = plates[plate].point
        lo = max(lo, 0)
        hi = max(min(hi, trial.n_frames - 1) + 1, lo)
        loaded.append(lo + np.flatnonzero((w.force[lo:hi, 2] >= LOADED_N) & finite_rows(w.cop[lo:hi, :2])))
    cops = [plates[sp[0]].point.cop[fr, :2] for sp, fr in zip(spans, loaded)]
    # each contact against the foot it is given to; against every foot (for the nearer one) when it is
    # given to none, or when that foot's markers are unknown in half its frames
    got = _measure([(k, sp[5]) for k, sp in enumerate(spans) if sp[5] in feet], loaded, cops, feet)
    unsure = [k for k, sp in enumerate(spans) if got.get((k, sp[5]), (0, 0))[1] < 0.5 * loaded[k].size]
    got.update(_measure([(k, side) for k in unsure for side in feet if side != spans[k][5]], loaded, cops, feet))
    for k, (plate, a, b, complete, belt, given, source) in enumerate(spans):
        p = plates[plate]
        frames = loaded[k]
        if frames.size < 3:
            continue
        cop = cops[k]
        dist = {side: float(got[k, side][0][0]) for side in feet
                if (k, side) in got and got[k, side][1] >= 0.5 * frames.size}
        if not dist:
            continue
        judged += 1
        side = given if given in dist else min(dist, key=dist.get)
        whose = f"the {side.lower()} foot it is given to" if given in dist else f"the nearer ({side.lower()}) foot"
        when = f"{a:.2f}-{b:.2f} s"
        worst_d = max(worst_d, dist[side])
        heel, toe, _ = feet[side]
        step = complete and b - a < STEP_MAX_S
        axis = got[k, side][0][1:]  # the median of toe - heel over the contact
        length = float(np.linalg.norm(axis))
        travel = sideways = np.nan
        if step and np.isfinite(length) and length >= 0.05:
            # a belt carries the foot and the COP backwards together: the COP's travel on the foot there
            rel = cop - heel[frames] if belt else cop
            along = rel @ (axis / length)
            across = rel @ np.array([-axis[1], axis[0]]) / length
            (along_hi, across_hi), (along_lo, across_lo) = column_percentiles(np.stack([along, across], axis=1), [95, 5])
            travel, sideways = float(along_hi - along_lo), float(across_hi - across_lo)
            least_travel = min(least_travel, travel / length)
        moved = (f"travels {travel * 100:.1f} cm along the {side.lower()} foot (heel-toe {length * 100:.0f} cm; "
                 f"expected at least {min_travel * 100:g} % of it on a step, Settings.cop_min_travel) and "
                 f"{sideways * 100:.1f} cm across it")
        if travel < min_travel * length and sideways < min_travel * length:
            warnings.append(
                f"force plate {plate}: over its contact at {when} the centre of pressure stays still: it {moved}, "
                f"{dist[side] * 100:.1f} cm from the foot: moment channels read in too small a unit (N.m read as "
                f"N.mm: x1000 too small; ANALOG:UNITS/SCALE of {', '.join(repr(c) for c in p.channels[3:6])}) put "
                "the COP at the plate centre whatever the foot does")
        elif dist[side] > margin_m:
            mid = 0.5 * (heel[frames] + toe[frames])
            shift = column_nanmedian(cop - mid)
            warnings.append(
                f"force plate {plate}: over its contact at {when} the centre of pressure lies a median "
                f"{dist[side] * 100:.1f} cm from {whose} (tolerance {margin_m * 100:g} cm, "
                f"Settings.cop_foot_margin_m); it sits ({shift[0] * 100:+.0f}, {shift[1] * 100:+.0f}) cm (lab X, Y) from "
                "the middle of the foot: " + ("the contact given to the wrong foot (a plate override, Settings.plates), "
                                              if source == "override" else "")
                + "FORCE_PLATFORM:CORNERS placing the plate elsewhere (translated, another plate's corners, or "
                "numbered from the wrong corner) or its ORIGIN/moments wrong")
        elif travel < min_travel * length:
            warnings.append(
                f"force plate {plate}: over its contact at {when} the centre of pressure {moved}: the plate's "
                "axes are turned against the lab (FORCE_PLATFORM:CORNERS numbered from the wrong corner)")
    if not judged:
        return Check.not_run(name, "no contact with the foot markers and the plate loaded")
    travel = f", COP travel >= {least_travel * 100:.0f} % of the foot on every step" if np.isfinite(least_travel) else ""
    detail = (f"{judged} contact(s): COP a median {worst_d * 100:.1f} cm from its foot at worst "
              f"(tolerance {margin_m * 100:g} cm){travel}")
    return Check.outcome(name, detail, warnings)
