"""Force-plate-to-foot assignment and the external loads each foot receives.

A *contact* is a period with vertical force above the threshold on a plate
(:func:`gaitid.events.trial_contacts`, 20 N, >= 50 ms). Each contact is given to a
foot, or declared invalid for kinetics with the reason, as follows
(:func:`assign_contacts`; tolerances are parameters, defaults in brackets):

1. *Centre of pressure under the foot.* At the point-rate frames of the contact where
   the plate's Fz >= ``cop_min_force`` (50 N) and its COP is defined, the horizontal
   distance from the COP to the foot's heel-toe-ankle triangle (0 inside) must be at
   most ``cop_tolerance`` (0.06 m: the heel and toe markers sit a few cm behind the
   heel's and the toes' contact areas) on at least ``cop_fraction`` (90 %) of the
   frames. One foot must pass; none (COP between the feet, or under no foot) or both
   (feet together) makes the contact invalid.
2. *Two adjacent plates.* Contacts of the same foot on different plates that overlap
   in time form one foot contact; their wrenches are summed about the lab origin and
   expressed again as a force at a centre of pressure plus a free moment
   (:func:`sum_wrenches`).
3. *Whole foot on the plate(s).* The foot's heel and toe markers, at every frame of the
   contact where they are on the ground (within ``ground_clearance`` = 0.03 m of
   their lowest height in the trial and moving horizontally slower than
   ``ground_speed`` = 0.5 m/s), must lie inside the plate outline(s), at most
   ``plate_tolerance`` (0.01 m) outside an edge. Otherwise: "partly off the plate".
4. *Only that foot.* The other foot's heel and toe, when on the ground during the
   contact, must not be inside any of the contact's plates (by more than
   ``plate_tolerance``): otherwise "two feet".
5. *Manual override* per plate, as in Plug-in Gait / pyCGM2: 'Left' or 'Right' gives
   every contact on that plate to that foot (checks skipped, source 'override'),
   'Invalid' makes them invalid, 'Auto' (default) applies the rules above. Overridden
   plates are never grouped with adjacent plates.

:func:`foot_loads` turns the contacts into per-foot loads at the point rate, in the
lab frame, ready for :class:`gaitid.dynamics.types.ExternalLoad`: the (summed) plate
force (N), centre of pressure (m) and free moment (N.m) during a valid contact; zero
in swing; NaN during an invalid contact (outside the foot's swing) or a stance off
the plates (load unknown).
Swing and stance come from the gait events (foot strike to foot off is stance, both
frames included, each event on its nearest frame). During a valid contact the plate's
wrench is used on every frame of the contact and of the stance it overlaps; frames
where it is below 10 N (COP undefined) carry zero load.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gaitid.dynamics.types import ExternalLoad
from gaitid.errors import DataError, SettingsError
from gaitid.events import (
    FOOT_OFF,
    FOOT_STRIKE,
    SIDES,
    ContactInterval,
    GaitMarkers,
    _markers,
    trial_contacts,
)
from gaitid.trial import Event, PlateWrench, Trial

OVERRIDES = ("Left", "Right", "Invalid", "Auto")
COP_MIN_FORCE = 10.0  # N: below this the reader leaves the COP undefined (NaN)


# --------------------------------------------------------------------------- geometry


def _seg_dist(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance (n,) from points p (n, 2) to segments a-b (n, 2) or (2,)."""
    ab = b - a
    ap = p - a
    denom = np.einsum("...i,...i->...", ab, ab)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(np.einsum("...i,...i->...", ap, ab) / np.where(denom > 0, denom, np.nan), 0.0, 1.0)
    t = np.where(denom > 0, t, 0.0)
    return np.linalg.norm(ap - t[..., None] * ab, axis=-1)


def distance_to_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Horizontal distance (n,) from points p to triangles abc (all (n, 2)), 0 inside; NaN if any NaN."""

    def cross(u, v):
        return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

    d1, d2, d3 = cross(b - a, p - a), cross(c - b, p - b), cross(a - c, p - c)
    inside = ((d1 >= 0) & (d2 >= 0) & (d3 >= 0)) | ((d1 <= 0) & (d2 <= 0) & (d3 <= 0))
    edge = np.minimum(np.minimum(_seg_dist(p, a, b), _seg_dist(p, b, c)), _seg_dist(p, c, a))
    out = np.where(inside, 0.0, edge)
    bad = ~np.all(np.isfinite(np.concatenate([p, a, b, c], axis=-1)), axis=-1)
    return np.where(bad, np.nan, out)


def inside_distance(p: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Signed distance (n,) of points p (n, 2) inside a convex polygon (m, 2): + inside, - outside.

    Outside, this is minus the largest distance beyond an edge line (exact except
    beyond a corner, where it is slightly smaller than the true distance).
    """
    poly = np.asarray(polygon, float)[:, :2]
    x, y = poly[:, 0], poly[:, 1]
    area = 0.5 * np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y)
    if abs(area) < 1e-12:
        raise DataError("degenerate force-plate outline (zero area corners)")
    sgn = 1.0 if area > 0 else -1.0
    e = np.roll(poly, -1, axis=0) - poly  # (m, 2) edges
    ln = np.linalg.norm(e, axis=1)
    # left normal of a counter-clockwise polygon points inside
    rel = p[:, None, :] - poly[None, :, :]  # (n, m, 2)
    d = sgn * (e[None, :, 0] * rel[..., 1] - e[None, :, 1] * rel[..., 0]) / ln[None, :]
    return d.min(axis=1)


# --------------------------------------------------------------------------- wrenches


def sum_wrenches(wrenches: list[PlateWrench], min_force: float = COP_MIN_FORCE) -> PlateWrench:
    """One wrench equal to the sum of coplanar plate wrenches (same rate), about a common point.

    Each plate's force F_i at its COP p_i plus free moment T_i gives, about the lab
    origin, M = sum(p_i x F_i + T_i). The sum is re-expressed as F = sum F_i at a COP
    p on the plane z0 (mean COP height) with a free moment (0, 0, Tz):
    p_x = (z0 F_x - M_y) / F_z, p_y = (M_x + z0 F_y) / F_z, Tz = M_z - (p_x F_y - p_y F_x).
    A plate whose COP is NaN (below 10 N) contributes nothing at that sample; the
    summed COP is NaN where |F_z| < ``min_force``.
    """
    if len(wrenches) == 1:
        return wrenches[0]
    rates = {w.rate for w in wrenches}
    if len(rates) != 1 or len({w.n_samples for w in wrenches}) != 1:
        raise DataError("cannot sum plate wrenches sampled at different rates or lengths")
    n = wrenches[0].n_samples
    F = np.zeros((n, 3))
    M = np.zeros((n, 3))
    zs = []
    for w in wrenches:
        ok = np.all(np.isfinite(w.cop), axis=1) & np.all(np.isfinite(w.force), axis=1)
        f = np.where(ok[:, None], w.force, 0.0)
        c = np.where(ok[:, None], w.cop, 0.0)
        t = np.where(ok[:, None], np.nan_to_num(w.free_moment), 0.0)
        F += f
        M += np.cross(c, f) + t
        zs.append(w.cop[ok, 2])
    zall = np.concatenate(zs)
    z0 = float(np.mean(zall)) if zall.size else 0.0
    fz = F[:, 2]
    good = np.abs(fz) >= min_force
    with np.errstate(invalid="ignore", divide="ignore"):
        px = np.where(good, (z0 * F[:, 0] - M[:, 1]) / fz, np.nan)
        py = np.where(good, (M[:, 0] + z0 * F[:, 1]) / fz, np.nan)
    cop = np.column_stack([px, py, np.where(good, z0, np.nan)])
    tz = M[:, 2] - (px * F[:, 1] - py * F[:, 0])
    free = np.column_stack([np.zeros(n), np.zeros(n), tz])
    free[~good] = np.nan
    return PlateWrench(wrenches[0].rate, F, cop, free)


# --------------------------------------------------------------------------- assignment


@dataclass
class FootContact:
    """One foot placement on one or more plates (or an invalid contact).

    ``plates``: 1-based plate indices. ``side``: 'Left', 'Right' or None (unknown foot).
    ``strike_time``/``off_time``: s, file clock (NaN when the contact was on at the
    record's start / end). ``valid``: usable for kinetics; ``reason`` says why not
    ('' when valid). ``feet``: the feet found on the plate(s) (both for two feet).
    ``cop_under``: fraction of the evaluated frames with the COP under each foot.
    ``source``: 'auto' or 'override'.
    """

    plates: tuple[int, ...]
    side: str | None
    strike_time: float
    off_time: float
    valid: bool
    reason: str
    feet: tuple[str, ...] = ()
    cop_under: dict = field(default_factory=dict)
    source: str = "auto"
    intervals: list[ContactInterval] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return bool(np.isfinite(self.strike_time) and np.isfinite(self.off_time))


def normalise_overrides(overrides: dict | None, trial: Trial) -> dict[int, str]:
    """{plate index (1-based): 'Left'|'Right'|'Invalid'|'Auto'}, checked against the trial's plates."""
    out = {fp.index: "Auto" for fp in trial.force_plates}
    for key, value in (overrides or {}).items():
        try:
            idx = int(key)
        except (TypeError, ValueError):
            raise SettingsError(f"plate override key {key!r} is not a plate number") from None
        if idx not in out:
            raise SettingsError(
                f"plate override for plate {idx}, but the trial has plates {sorted(out)}", trial.path
            )
        v = str(value).strip().capitalize()
        if v not in OVERRIDES:
            raise SettingsError(f"plate {idx} override {value!r} is not one of {', '.join(OVERRIDES)}")
        out[idx] = v
    return out


def parse_plate_overrides(text: str) -> dict[int, str]:
    """Parse a command-line override such as ``"1=Left,2=Invalid,3=Auto"`` (case-insensitive)."""
    out = {}
    for item in filter(None, (s.strip() for s in text.split(","))):
        if "=" not in item:
            raise SettingsError(f"plate override {item!r} is not of the form PLATE=Left|Right|Invalid|Auto")
        k, v = (s.strip() for s in item.split("=", 1))
        if not k.isdigit():
            raise SettingsError(f"plate override {item!r}: {k!r} is not a plate number")
        v = v.capitalize()
        if v not in OVERRIDES:
            raise SettingsError(f"plate override {item!r}: {v!r} is not one of {', '.join(OVERRIDES)}")
        out[int(k)] = v
    return out


def _frames_in(trial: Trial, a: float, b: float) -> np.ndarray:
    """Array indices of the frames nearest to times a..b (s), inclusive, inside the trial."""
    lo = max(int(trial.index_of_time(a)), 0)
    hi = min(int(trial.index_of_time(b)), trial.n_frames - 1)
    return np.arange(lo, hi + 1)


def _low_points(trial: Trial, side: str, markers: GaitMarkers, clearance: float,
                max_speed: float) -> list[np.ndarray]:
    """Heel and toe trajectories (n, 3), NaN except where the marker is on the ground: within
    ``clearance`` of its lowest height (2nd percentile) and moving slower than ``max_speed``
    horizontally (a swinging toe passes low but fast)."""
    foot = markers.foot(side)
    out = []
    for lab in (foot.heel, foot.toe):
        x = trial.point(lab).copy()
        z = x[:, 2]
        if np.isfinite(z).any() and x.shape[0] > 1:
            ref = np.nanpercentile(z, 2)
            speed = np.linalg.norm(np.gradient(x[:, :2], axis=0), axis=1) * trial.point_rate
            x[~((z <= ref + clearance) & (speed <= max_speed))] = np.nan
        out.append(x)
    return out


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
        d = np.max([inside_distance(xy[ok], c) for c in plates], axis=0)
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


def assign_contacts(trial: Trial, markers: GaitMarkers | None = None, overrides: dict | None = None,
                    threshold: float = 20.0, min_duration: float = 0.05, cop_tolerance: float = 0.06,
                    cop_fraction: float = 0.9, cop_min_force: float = 50.0, plate_tolerance: float = 0.01,
                    ground_clearance: float = 0.03, ground_speed: float = 0.5) -> list[FootContact]:
    """Every plate contact of the trial, given to a foot or declared invalid with the reason.

    See the module docstring for the rules and what each tolerance means.
    """
    markers = _markers(trial, markers)
    ov = normalise_overrides(overrides, trial)
    plates = {fp.index: fp for fp in trial.force_plates}
    intervals = trial_contacts(trial, threshold, min_duration)
    t0 = (trial.first_frame - 1) / trial.point_rate
    spans = [iv.span(t0, plates[iv.plate].analog.rate) for iv in intervals]

    # 1. COP under which foot, per interval
    info = []
    for iv, (a, b) in zip(intervals, spans):
        frames = _frames_in(trial, a, b)
        under, n_eval = _cop_under(trial, plates[iv.plate].point, frames, markers, cop_min_force, cop_tolerance)
        feet = tuple(s for s in SIDES if np.isfinite(under[s]) and under[s] >= cop_fraction)
        info.append((frames, under, n_eval, feet))

    # 2. group overlapping contacts of the same foot on different (auto) plates
    groups: list[list[int]] = []
    for k, iv in enumerate(intervals):
        feet = info[k][3]
        placed = False
        if ov[iv.plate] == "Auto" and len(feet) == 1:
            for g in groups:
                j = g[0]
                if (
                    ov[intervals[j].plate] == "Auto"
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
        frames = _frames_in(trial, a, b)
        under = {s: float(np.nanmin([info[i][1][s] for i in g])) if any(np.isfinite(info[i][1][s]) for i in g)
                 else np.nan for s in SIDES}
        feet = info[g[0]][3]
        n_eval = min(info[i][2] for i in g)
        names = "plate" + ("s " if len(pl) > 1 else " ") + " and ".join(str(p) for p in pl)
        mode = ov[pl[0]] if len(pl) == 1 else "Auto"
        base = dict(plates=pl, strike_time=strike, off_time=off, cop_under=under, intervals=ivs)
        if mode in ("Left", "Right"):
            out.append(FootContact(side=mode, valid=True, reason="", feet=(mode,), source="override", **base))
            continue
        if mode == "Invalid":
            out.append(FootContact(side=None, valid=False, reason=f"{names} set invalid by override",
                                   feet=feet, source="override", **base))
            continue
        outlines = [plates[p].corners for p in pl]
        lows = {s: _low_points(trial, s, markers, ground_clearance, ground_speed) for s in SIDES
                if trial.has_points(markers.foot(s).heel, markers.foot(s).toe)}
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
            both = tuple(s for s in SIDES if _has_low_inside(lows.get(s, []), frames, outlines, plate_tolerance))
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
        other = "Right" if side == "Left" else "Left"
        if other in lows and _has_low_inside(lows[other], frames, outlines, plate_tolerance):
            reason = f"{names}: two feet on the plate (the {other.lower()} foot also touches it)"
            out.append(FootContact(side=side, valid=False, reason=reason, feet=(side, other), **base))
            continue
        if side in lows:
            foot = markers.foot(side)
            frac, worst, which = _outside_fraction(lows[side], frames, outlines, plate_tolerance,
                                                   (foot.heel, foot.toe))
            if frac > 0:
                reason = (f"{names}: {side.lower()} foot partly off the plate (heel/toe up to "
                          f"{100 * worst:.1f} cm outside: {which}; {100 * frac:.0f} % of near-ground samples)")
                out.append(FootContact(side=side, valid=False, reason=reason, feet=(side,), **base))
                continue
        out.append(FootContact(side=side, valid=True, reason="", feet=(side,), **base))
    return out


def _has_low_inside(points: list[np.ndarray], frames: np.ndarray, plates: list[np.ndarray], tol: float) -> bool:
    """True if a near-ground heel/toe sample lies inside a plate, at least ``tol`` m inside its edges."""
    for x in points:
        xy = x[frames, :2]
        ok = np.all(np.isfinite(xy), axis=1)
        if ok.any() and np.any(np.max([inside_distance(xy[ok], c) for c in plates], axis=0) >= tol):
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


# --------------------------------------------------------------------------- loads


@dataclass
class FootLoad:
    """Load on one foot at the point rate, lab frame: force (N), centre of pressure (m),
    free moment (N.m), each (n_frames, 3). ``state`` (n_frames,) per frame: 'swing',
    'plate' (valid contact), 'off plate' (stance without a valid plate), 'invalid'
    (invalid contact) or 'unknown'. Zero load in swing, NaN where unknown."""

    side: str
    force_lab: np.ndarray
    cop_lab: np.ndarray
    free_moment_lab: np.ndarray
    state: np.ndarray

    def external_load(self, segment: int = 0) -> ExternalLoad:
        """The :class:`ExternalLoad` on the foot (``segment`` 0 = most distal of the chain)."""
        return ExternalLoad(segment, self.force_lab, self.cop_lab, self.free_moment_lab)


def stance_intervals(events: list[Event], side: str, t_start: float, t_end: float) -> list[tuple[float, float]]:
    """Stance periods (s) of one foot from its foot strikes and foot offs, clipped to [t_start, t_end].

    Before the first event the foot is in the state that event ends (stance before a
    foot off); after the last, in the state it starts. No events: no stance known.
    """
    ev = sorted((e for e in events if e.context == side and e.label in (FOOT_STRIKE, FOOT_OFF)), key=lambda e: e.time)
    if not ev:
        return []
    out = []
    start = t_start if ev[0].label == FOOT_OFF else None
    for e in ev:
        if e.label == FOOT_STRIKE:
            if start is None:
                start = e.time
        elif start is not None:
            out.append((start, e.time))
            start = None
    if start is not None:
        out.append((start, t_end))
    return out


def foot_loads(trial: Trial, contacts: list[FootContact], events: list[Event] | None) -> dict[str, FootLoad]:
    """Per-foot external loads at the point rate (see the module docstring).

    ``events``: foot strikes/offs giving swing and stance; None or empty means the
    state of frames outside plate contacts is unknown (NaN).
    """
    n = trial.n_frames
    t = trial.time
    plates = {fp.index: fp for fp in trial.force_plates}
    out = {}
    for side in SIDES:
        state = np.full(n, "unknown", dtype=object)
        if events:
            state[:] = "swing"
            for a, b in stance_intervals(events, side, t[0], t[-1]):
                state[_frames_in(trial, a, b)] = "off plate"
        F = np.full((n, 3), np.nan)
        P = np.full((n, 3), np.nan)
        T = np.full((n, 3), np.nan)
        stance = [(a, b) for a, b in stance_intervals(events or [], side, t[0], t[-1])]
        for c in contacts:
            if side not in c.feet and c.side != side:
                continue
            a = np.nanmin([c.strike_time if np.isfinite(c.strike_time) else t[0]])
            b = np.nanmax([c.off_time if np.isfinite(c.off_time) else t[-1]])
            if c.valid and c.side == side:
                # stretch to the stance period(s) this contact overlaps (their edges carry < threshold force)
                for sa, sb in stance:
                    if sa <= b and a <= sb:
                        a, b = min(a, sa), max(b, sb)
                idx = _frames_in(trial, a, b)
                w = sum_wrenches([plates[p].point for p in c.plates])
                ok = np.all(np.isfinite(w.cop[idx]), axis=1) & np.all(np.isfinite(w.force[idx]), axis=1)
                F[idx] = np.where(ok[:, None], w.force[idx], 0.0)
                P[idx] = np.where(ok[:, None], w.cop[idx], 0.0)
                T[idx] = np.where(ok[:, None], np.nan_to_num(w.free_moment[idx]), 0.0)
                state[idx] = "plate"
            else:  # load unknown while this foot may be on the plate: not in its swing
                idx = _frames_in(trial, a, b)
                idx = idx[state[idx] != "swing"]
                state[idx] = np.where(state[idx] == "plate", "plate", "invalid")
        swing = state == "swing"
        F[swing] = 0.0
        P[swing] = 0.0
        T[swing] = 0.0
        out[side] = FootLoad(side, F, P, T, state)
    return out
