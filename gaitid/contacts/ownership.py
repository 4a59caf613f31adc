"""Per-frame plate ownership: on every point frame, which foot loads each plate (docs/contacts.md).

Whole-contact intervals cannot say who loads a treadmill belt that is never unloaded, or when
the other foot steps onto a plate for a few frames; so :func:`plate_ownership` decides it per
frame and per plate, batch-first over frames (one pass per plate and marker, no frame loop):

1. *Where each foot is.* The heel and toe markers and the sole's sides (``sole_half_width``
   = 3 cm either side of the heel-toe line, at the heel and at the toe) in lab XY. A point
   is *over* a plate when it lies at least ``plate_tolerance`` (1 cm) inside the outline.
   A marker is *low* when its height above the surface under it (the highest plate whose
   outline holds it, else the floor) is within ``ground_clearance`` (3 cm) of its standing
   height (its 2nd percentile over the trial), and *grounded* when it is also slower than
   ``ground_speed`` (0.5 m/s) relative to that surface: plates do not move, treadmill belts
   do, at the median velocity of the low markers over the loaded plate.
2. *Who touches a loaded plate* (plate Fz > ``threshold``, 20 N): a foot with a grounded
   marker (or that marker's sole sides) over it, or a low foot (``2 * ground_clearance``)
   whose heel-toe-ankle triangle holds the plate's centre of pressure (within
   ``cop_tolerance`` = 6 cm, where Fz >= ``cop_min_force`` = 50 N: the loading foot at
   heel strike, before its heel is slow). Never a *swinging* foot: one whose heel and toe both
   move faster than ``swing_speed`` (2 m/s) over the plate's surface (on the real walks the
   slower of the two moves at most 1.8 m/s while the foot carries 20 N or more, and at 2.4-4.0
   m/s as it swings past the other ankle), however low and near the stance foot it passes.
3. *Owner.* One foot touches: that foot owns it. Both touch: both feet are on it (neither
   foot's load is known). A foot that touched the plate counts as still on it, for this rule only,
   while a marker of it (or its sole sides) stays within ``ground_clearance`` of the plate's surface
   over it: a trailing foot rolling off its toe is too fast to be grounded and its centre of
   pressure is mixed with the leading foot's, yet it still pushes, so a plate both feet load is
   never given to the leading foot alone (its contact and events still end where it stops touching);
   and on the frame after that while the foot is over the plate within ``2 * ground_clearance`` and
   not swinging (the toe marker rises as the foot rolls over its toe tip). None: below
   ``cop_min_force`` the nearest low foot within 5 cm of the outline owns it (the edges of a
   contact), else the plate is loaded under neither foot.
4. *A foot's load is measured* on a frame when every plate it touches is owned by it alone,
   none of them has a missing (NaN) sample, no loaded plate under neither foot is within 5 cm
   of its low sole, and none of its grounded markers stands on the floor outside every plate
   (a foot partly off the plates; a toe overhanging a raised step stands on no floor and is
   fine while the plate's COP stays under the foot).

:class:`PlateOwnership` keeps the matrices, the per-foot measured mask and why not
(:data:`PROBLEMS`), and :meth:`PlateOwnership.reasons` words them per contact ("both feet on
plate 2 for 0.12 s").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.contacts.geometry import distance_to_triangle, inside_distances
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import (
    CONTACT_THRESHOLD_N,
    COP_MIN_FORCE_N,
    COP_THRESHOLD_N,
    COP_TOLERANCE_M,
    GROUND_CLEARANCE_M,
    GROUND_SPEED_M_S,
    PLATE_TOLERANCE_M,
    SIDES,
)
from gaitid.model.gait_markers import GaitMarkers

NONE, BOTH, UNOWNED = 0, 3, -1  # owner codes besides 1 (Left) and 2 (Right)
OWNER_CODE = {side: k + 1 for k, side in enumerate(SIDES)}
#: why a foot's load is not measured on a frame (codes in PlateOwnership.problem)
PROBLEMS = {
    1: "both feet on plate {p}",
    2: "plate {p} force missing (NaN)",
    3: "plate {p} loaded under neither foot",
    4: "foot partly off the plates",
    5: "foot markers missing",
}
#: why a shared frame stays unknown (codes in SharedSplit.why)
WHY = {
    1: "no frame of a foot measured alone within 0.3 s",
    2: "the feet's centres of pressure closer than 0.15 m",
    3: "the plate's centre of pressure more than 0.08 m off the line between the feet",
    4: "plate load too light for a centre of pressure",
}
BELOW = 0.02  # m: a marker this far below a plate's surface cannot stand on it
NEAR = 0.05  # m: a low foot this close to a plate's outline may be loading it
#: m/s: a foot whose heel and toe both move faster than this over a plate's surface is swinging, not on it
SWING_SPEED = 2.0


@dataclass
class PlateOwnership:
    """Per point frame: ``plates`` (1-based indices, the columns); ``loaded`` (n, m) Fz above the
    contact threshold; ``missing`` (n, m) a NaN force sample; ``owner`` (n, m) int8: 0 unloaded,
    1 Left, 2 Right, 3 both feet, -1 loaded under neither foot; ``touches`` {side: (n, m)} the
    foot touches the loaded plate; ``measured`` {side: (n,)} all the force under the foot is
    measured and no other foot's is mixed in (False also where the foot touches nothing);
    ``problem`` {side: (n,)} code (:data:`PROBLEMS`, 0 none) and ``problem_plate`` {side: (n,)}
    the plate concerned; ``low`` {side: (n,)} a marker of the foot is near its standing height;
    ``surface_velocity`` (m, 2) m/s of each plate's surface (non-zero for treadmill belts);
    ``edge`` (n, m) int8: on frames with a light load (above the COP threshold, not above the
    contact threshold) the foot owning the plate on the nearest frame within 3 (a contact's first
    and last instants), else 0. ``sharing`` {side: (n, m)}: the plates the foot shares with the other
    foot (owner 3), also on the frames after it stops touching them while a marker of it stays at the
    plate's surface over it (its toe still pushing: :func:`_held`); None: as ``touches``.
    ``problem_other`` {side: (n,)}: the first problem code besides sharing a plate (code 1), 0 none.
    ``split``: each foot's share of the plates both feet load
    (:class:`gaitid.contacts.decompose.SharedSplit`, set by :func:`gaitid.contacts.decompose.with_split`),
    None when not decomposed."""

    plates: tuple[int, ...]
    rate: float
    loaded: np.ndarray
    missing: np.ndarray
    owner: np.ndarray
    touches: dict
    measured: dict
    problem: dict
    problem_plate: dict
    low: dict
    surface_velocity: np.ndarray
    edge: np.ndarray | None = None
    sharing: dict | None = None
    problem_other: dict | None = None
    split: object | None = None

    def owned(self, side: str) -> np.ndarray:
        """(n, m) bool: plates the foot alone loads."""
        return self.owner == OWNER_CODE[side]

    def on_plates(self, side: str) -> np.ndarray:
        """(n,) bool: the foot touches at least one loaded plate, or its decomposed share of a plate
        both feet load (``split``) carries more than the contact threshold (a trailing foot still
        pushing off its toe)."""
        on = self.touches[side].any(axis=1)
        if self.split is not None:
            on = on | (self.split.decomposed[side] & (np.nan_to_num(self.split.force[side][:, 2]) > CONTACT_THRESHOLD_N))
        return on

    def reasons(self, side: str, frames: np.ndarray) -> list[str]:
        """Why the foot's load is not measured on some of ``frames``, one phrase per problem and
        plate with its duration: ['both feet on plate 2 for 0.12 s', ...]."""
        frames = np.asarray(frames, int)
        code = self.problem[side][frames].copy()
        plate = self.problem_plate[side][frames]
        if self.split is not None:
            code[self.split.decomposed[side][frames]] = 0
        out = []
        for c in np.unique(code[code > 0]):
            for p in np.unique(plate[code == c]):
                k = int(np.sum((code == c) & (plate == p)))
                what = PROBLEMS[int(c)].format(p=int(p))
                if c == 1 and self.split is not None:  # not decomposed: why
                    whys = np.unique(self.split.why[side][frames][(code == c) & (plate == p)])
                    what += "".join(f" (not decomposed: {WHY[int(w)]})" for w in whys[whys > 0][:1])
                out.append(f"{what} for {k / self.rate:.2f} s" if c != 2 else f"{what} for {k} frame"
                           + ("s" if k > 1 else ""))
        return out


def _sole_points(heel: np.ndarray, toe: np.ndarray, half_width: float) -> list[tuple[int, np.ndarray]]:
    """(marker 0 heel / 1 toe, XY (n, 2)) of the markers and the sole's sides beside them."""
    d = toe[:, :2] - heel[:, :2]
    with np.errstate(invalid="ignore", divide="ignore"):
        u = d / np.linalg.norm(d, axis=1, keepdims=True)
    nrm = np.column_stack([-u[:, 1], u[:, 0]]) * half_width
    pts = []
    for k, x in enumerate((heel[:, :2], toe[:, :2])):
        pts += [(k, x), (k, x + nrm), (k, x - nrm)]
    return pts


def _inherit_owner(owner: np.ndarray, loaded: np.ndarray) -> np.ndarray:
    """(n, m): on loaded frames, the one-foot owner of the last earlier frame of the same loaded
    period that has one, else of the first later one (the light edges of a contact belong to the
    foot that carried the plate just before or after); NONE elsewhere."""
    n, m = owner.shape
    if n == 0:
        return np.zeros((n, m), np.int8)
    one = np.isin(owner, [OWNER_CODE[s] for s in SIDES])
    i = np.broadcast_to(np.arange(n)[:, None], (n, m))
    change = np.ones((n, m), bool)
    change[1:] = loaded[1:] != loaded[:-1]
    start = np.maximum.accumulate(np.where(change, i, 0), axis=0)  # first frame of each frame's period
    stop = np.minimum.accumulate(np.where(np.roll(change, -1, axis=0) | (i == n - 1), i, n)[::-1], axis=0)[::-1]
    last = np.maximum.accumulate(np.where(one, i, -1), axis=0)  # last owned frame at or before
    after = np.minimum.accumulate(np.where(one, i, n)[::-1], axis=0)[::-1]  # first owned frame at or after
    cols = np.arange(m)[None, :]
    before_ok, after_ok = last >= start, after <= stop
    out = np.where(before_ok, owner[np.clip(last, 0, n - 1), cols],
                   np.where(after_ok, owner[np.clip(after, 0, n - 1), cols], NONE))
    return np.where(loaded, out, NONE).astype(np.int8)


def _close_gaps(t: np.ndarray) -> np.ndarray:
    """(n, m) touches with gaps of 1 or 2 frames filled (a foot does not leave a plate for 10 ms)."""
    def shift(a, k):
        out = np.zeros_like(a)
        if k > 0:
            out[k:] = a[:-k]
        else:
            out[:k] = a[-k:]
        return out

    if t.shape[0] < 4:
        return t
    return t | (shift(t, 1) & shift(t, -1)) | (shift(t, 1) & shift(t, -2)) | (shift(t, 2) & shift(t, -1))


def _held(touch: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """(n, m): ``touch`` carried forward over the frames that follow it while ``keep`` holds (a foot
    stays on a plate while a marker of it stays at the plate's surface over it)."""
    n = touch.shape[0]
    if n == 0:
        return touch
    i = np.broadcast_to(np.arange(n)[:, None], touch.shape)
    last_touch = np.maximum.accumulate(np.where(touch, i, -1), axis=0)
    last_break = np.maximum.accumulate(np.where(keep, -1, i), axis=0)
    return touch | (keep & (last_touch >= 0) & (last_touch >= last_break))


def _edge_owner(owner: np.ndarray, light: np.ndarray, reach: int = 3) -> np.ndarray:
    """(n, m): for frames with a light load owned by no foot, the one-foot owner of the nearest
    frame (at most ``reach`` frames away) that has one; ties and nothing near: 0."""
    n, m = owner.shape
    one = np.isin(owner, [OWNER_CODE[s] for s in SIDES])
    out = np.zeros((n, m), np.int8)
    idx = np.arange(n)
    for j in range(m):
        prev = np.maximum.accumulate(np.where(one[:, j], idx, -10 * n))
        nxt = np.minimum.accumulate(np.where(one[:, j], idx, 10 * n)[::-1])[::-1]
        dp, dn = idx - prev, nxt - idx
        code_p = owner[np.clip(prev, 0, n - 1), j]
        code_n = owner[np.clip(nxt, 0, n - 1), j]
        pick = np.where(dp < dn, code_p, np.where(dn < dp, code_n, np.where(code_p == code_n, code_p, 0)))
        near = np.minimum(dp, dn) <= reach
        out[:, j] = np.where(light[:, j] & near & (owner[:, j] == NONE), pick, 0)
    return out


def plate_ownership(trial: Trial, markers: GaitMarkers, threshold: float = CONTACT_THRESHOLD_N,
                    cop_tolerance: float = COP_TOLERANCE_M, cop_min_force: float = COP_MIN_FORCE_N,
                    plate_tolerance: float = PLATE_TOLERANCE_M, ground_clearance: float = GROUND_CLEARANCE_M,
                    ground_speed: float = GROUND_SPEED_M_S, swing_speed: float = SWING_SPEED,
                    sole_half_width: float = 0.03) -> PlateOwnership:
    """Who loads each plate on every point frame (see the module docstring for the rules)."""
    n, rate = trial.n_frames, trial.point_rate
    fps = list(trial.force_plates)
    m = len(fps)
    if m == 0:
        z2, z1 = np.zeros((n, 0), bool), np.zeros(n, bool)
        return PlateOwnership((), rate, z2, z2, np.zeros((n, 0), np.int8), {s: z2 for s in SIDES},
                              {s: z1 for s in SIDES}, {s: np.zeros(n, np.int8) for s in SIDES},
                              {s: np.zeros(n, np.int32) for s in SIDES}, {s: z1 for s in SIDES}, np.zeros((0, 2)))
    outlines = [np.asarray(fp.corners, float) for fp in fps]
    heights = np.array([np.mean(c[:, 2]) if np.isfinite(c[:, 2]).all() else 0.0 for c in outlines])
    floor = min(0.0, float(heights.min())) if m else 0.0
    force = np.stack([fp.point.force[:n] for fp in fps], axis=1) if m else np.zeros((n, 0, 3))
    cop = np.stack([fp.point.cop[:n] for fp in fps], axis=1) if m else np.zeros((n, 0, 3))
    fz = force[..., 2]
    missing = ~np.all(np.isfinite(force), axis=2)
    loaded = fz > threshold  # (NaN compares False: a missing sample loads nothing)
    copok = (fz >= cop_min_force) & np.all(np.isfinite(cop[..., :2]), axis=2)

    feet = {}
    for side in SIDES:
        f = markers.foot(side)
        if not trial.has_points(f.heel, f.toe, f.ankle):
            continue
        feet[side] = {"heel": trial.point(f.heel), "toe": trial.point(f.toe), "ankle": trial.point(f.ankle)}
    # where each marker is: inside distances (n, m), support height, height above standing
    geo = {}
    for side, pts in feet.items():
        for key in ("heel", "toe"):
            x = pts[key]
            d = inside_distances(x[:, :2], outlines)
            # the surface under the marker: the highest plate it is over and not below
            over = (d >= -plate_tolerance) & (heights[None, :] <= x[:, 2:3] + BELOW)
            support = np.where(over, heights[None, :], -np.inf).max(axis=1, initial=-np.inf)
            on_plate = np.isfinite(support)
            support = np.where(on_plate, support, floor)
            rel = x[:, 2] - support
            # standing height: over the plates when it stands on them often enough (stairs: the
            # unplated steps are at unknown heights), else over the floor
            pool = rel[on_plate & np.isfinite(rel)] if np.sum(on_plate & np.isfinite(rel)) >= 10 else rel
            stand = np.percentile(pool[~np.isnan(pool)], 2) if np.isfinite(pool).any() else np.nan  # (nanpercentile)
            geo[side, key] = dict(x=x, d=d, stand=stand, on_plate=on_plate,
                                  which=np.where(over, heights[None, :], -np.inf).argmax(1),
                                  height=rel - stand,
                                  vel=np.gradient(x[:, :2], axis=0) * rate if n > 1 else np.zeros((n, 2)),
                                  vz=np.gradient(x[:, 2]) * rate if n > 1 else np.zeros(n))
    # surface velocity of each plate: median velocity of the low markers over it while loaded
    vel = np.zeros((m, 2))
    for j in range(m):
        samples = [g["vel"][(g["height"] <= ground_clearance) & (g["d"][:, j] >= 0)
                            & loaded[:, j]] for g in geo.values()]
        v = np.concatenate(samples) if samples else np.zeros((0, 2))
        v = v[np.all(np.isfinite(v), axis=1)]
        if v.shape[0] >= 5:
            vel[j] = np.median(v, axis=0)
    touches, low, near, overp, level_over, fast = {}, {}, {}, {}, {}, {}
    for side, pts in feet.items():
        low_any = np.fmin(geo[side, "heel"]["height"], geo[side, "toe"]["height"])  # (fmin: NaN only if both are)
        low[side] = low_any <= ground_clearance
        # the centre of pressure under the (low) foot
        t = np.zeros((n, m), bool)
        for j in range(m):
            f = np.flatnonzero(copok[:, j])  # only frames with a reliable centre of pressure can count
            dist = distance_to_triangle(cop[f, j, :2], pts["heel"][f, :2], pts["toe"][f, :2], pts["ankle"][f, :2])
            # the foot's lowest marker over this plate's surface
            above = np.fmin(*(geo[side, k]["x"][f, 2] - heights[j] - geo[side, k]["stand"] for k in ("heel", "toe")))
            t[f, j] = (dist <= cop_tolerance) & (np.abs(above) <= 2 * ground_clearance)

        on_ground = t.any(axis=1)  # the foot carries a plate's centre of pressure
        nr = np.zeros((n, m), bool)
        ov = np.zeros((n, m), bool)
        lo = np.zeros((n, m), bool)  # a marker (or its sole sides) over the plate within ground_clearance of it
        sole = _sole_points(pts["heel"], pts["toe"], sole_half_width)
        dist = inside_distances(np.concatenate([xy for _, xy in sole]), outlines).reshape(len(sole), n, m)
        for k in (0, 1):  # the heel's points, then the toe's
            g = geo[side, ("heel", "toe")[k]]
            surf_v = np.where(g["on_plate"][:, None], vel[g["which"]] if m else 0.0, 0.0)
            speed = np.linalg.norm(g["vel"] - surf_v, axis=1)
            is_low = g["height"] <= ground_clearance
            # at this plate's surface (a toe over a lower step's plate does not touch it)
            rel_p = g["x"][:, 2:3] - heights[None, :] - g["stand"]
            at_surface = (rel_p <= ground_clearance) & (rel_p >= -BELOW)
            # slow on the surface, or still slow in the lab (a foot landing on a belt), or carrying a COP
            lab_speed = np.linalg.norm(g["vel"], axis=1)
            landing = (lab_speed <= ground_speed) & (g["vz"] <= 0.05)  # not lifting off
            grounded = is_low & ((speed <= ground_speed) | landing | on_ground)
            level = (rel_p <= 2 * ground_clearance) & (rel_p >= -BELOW)
            for d in dist[[i for i, (kk, _) in enumerate(sole) if kk == k]]:
                t |= grounded[:, None] & at_surface & (d >= plate_tolerance)
                nr |= level & (d >= -NEAR)
                ov |= level & (d >= -plate_tolerance)
                lo |= at_surface & (d >= -plate_tolerance)
        # swinging over the plate: heel and toe both fast relative to its surface (fmin: NaN only if both are)
        fast[side] = np.fmin(*(np.linalg.norm(geo[side, k]["vel"][:, None, :] - vel[None, :, :], axis=2)
                               for k in ("heel", "toe"))) > swing_speed
        touches[side] = _close_gaps(t & loaded & ~fast[side]) & loaded & ~fast[side]
        near[side] = nr
        overp[side] = ov
        level_over[side] = lo & loaded
    # a foot that touched a loaded plate keeps touching it while a marker (or its sole sides) stays at
    # the plate's surface over it: a trailing foot rolling off its toe is too fast to count as grounded
    # and its COP is mixed with the leading foot's, yet it still pushes (22-484 N on real walks whose
    # two plates are merged into one); the plate is then shared, never given to the leading foot alone
    held = {side: _held(touches[side], level_over[side]) for side in touches}
    for side, h in held.items():  # and the frame after, while over the plate and not swinging: the toe
        # marker rises as the foot rolls over its toe tip, before the toe stops pushing (30 N on a merged walk)
        h[1:] |= h[:-1] & ~h[1:] & overp[side][1:] & loaded[1:] & ~fast[side][1:]

    owner = np.zeros((n, m), np.int8)
    tl = touches.get(SIDES[0], np.zeros((n, m), bool))
    tr = touches.get(SIDES[1], np.zeros((n, m), bool))
    hl = held.get(SIDES[0], tl)
    hr = held.get(SIDES[1], tr)
    owner[tl & ~tr] = OWNER_CODE[SIDES[0]]
    owner[tr & ~tl] = OWNER_CODE[SIDES[1]]
    owner[(tl | hl) & (tr | hr)] = BOTH
    free = loaded & ~tl & ~tr
    # light load (no reliable COP) under no foot: the only low foot near the plate owns it
    nl = near.get(SIDES[0], np.zeros((n, m), bool))
    nrr = near.get(SIDES[1], np.zeros((n, m), bool))
    light = free & ~copok
    inherit = _inherit_owner(owner, loaded)
    for side, mine, other in ((SIDES[0], nl, nrr), (SIDES[1], nrr, nl)):
        if side in touches:
            take = light & mine & ((inherit == OWNER_CODE[side]) | ((inherit == NONE) & ~other))
            owner[take] = OWNER_CODE[side]
            touches[side] = touches[side] | take
    owner[loaded & (owner == NONE)] = UNOWNED
    edge = _edge_owner(owner, fz > COP_THRESHOLD_N)

    measured, problem, problem_plate, problem_other = {}, {}, {}, {}
    for side in SIDES:
        prob = np.zeros(n, np.int8)
        pp = np.zeros(n, np.int32)
        if side not in feet:
            prob[:] = 5
            measured[side] = np.zeros(n, bool)
            problem[side], problem_plate[side], problem_other[side] = prob, pp, prob.copy()
            touches[side] = held[side] = np.zeros((n, m), bool)
            low[side] = np.zeros(n, bool)
            continue
        t, nr = touches[side], overp[side]
        plate_no = np.array([fp.index for fp in fps], np.int32)

        def mark(mask2d, code):
            hit = mask2d.any(axis=1) & (prob == 0)
            prob[hit] = code
            pp[hit] = plate_no[mask2d[hit].argmax(axis=1)]
            other[mask2d.any(axis=1) & (other == 0)] = code

        other = np.zeros(n, np.int8)  # the first problem besides sharing a plate
        mark((t | held[side]) & (owner == BOTH), 1)
        other[:] = 0
        mark((t | nr) & missing, 2)
        mark(nr & (owner == UNOWNED), 3)
        # grounded heel/toe on the floor outside every plate: partly off
        off = np.zeros(n, bool)
        for key in ("heel", "toe"):
            g = geo[side, key]
            surf_v = np.where(g["on_plate"][:, None], vel[g["which"]] if m else 0.0, 0.0)
            speed = np.linalg.norm(g["vel"] - surf_v, axis=1)
            grounded = (g["height"] <= ground_clearance) & (speed <= ground_speed)
            outside = np.all(~(g["d"] >= -plate_tolerance), axis=1)  # off every plate (a NaN distance: off)
            off |= grounded & outside
        other[off & t.any(axis=1) & (other == 0)] = 4
        hit = off & t.any(axis=1) & (prob == 0)
        prob[hit] = 4
        pp[hit] = plate_no[t[hit].argmax(axis=1)] if m else 0
        marker_nan = ~np.all(np.isfinite(np.column_stack([feet[side]["heel"], feet[side]["toe"]])), axis=1)
        other[marker_nan & (other == 0) & (loaded.any(axis=1) if m else False)] = 5
        prob[marker_nan & (prob == 0) & (loaded.any(axis=1) if m else False)] = 5
        problem[side], problem_plate[side], problem_other[side] = prob, pp, other
        measured[side] = (prob == 0) & t.any(axis=1)
    sharing = {side: held[side] & (owner == BOTH) for side in SIDES}
    return PlateOwnership(tuple(fp.index for fp in fps), rate, loaded, missing, owner, touches, measured,
                          problem, problem_plate, low, vel, edge, sharing, problem_other)
