"""Each foot's share of a plate both feet load (docs/contacts.md "Both feet on one plate").

On a frame where one plate carries both feet (owner 3 in :class:`~gaitid.contacts.ownership.PlateOwnership`:
a single-belt treadmill's double support, a split-belt crossing, a large overground plate),
:func:`decompose_shared` splits the plate's measured wrench (force F, centre of pressure p on the
plate's plane, free moment Tz; lab frame) into two foot wrenches that add up to it exactly:

1. *Where each foot presses.* Each foot's centre of pressure from the nearest frame within
   ``reach`` (0.3 s) where that foot's load was measured alone (the trailing foot's just before the
   shared frames, on its forefoot; the leading foot's just after, at its heel), kept in the foot's
   sole frame (origin the nearer of its heel and toe markers, axis u heel to toe in the lab's XY,
   v = Z x u) and carried by the markers onto the shared frame: c_A (first side), c_B, lab XY (a
   trailing foot's: the median of its last frame alone, the frame before and the value the two
   before that predict, so that a last frame holding the landing foot's first load, which the
   markers cannot place yet, is outvoted). A
   leading foot's COP rolls: from the heel's contact point (:data:`HEEL_CONTACT_M` ahead of the
   heel marker) at the foot's first frame on the plate, linearly in time, to its measured place,
   when it lands heel first (its heel nearer its standing height than its toe; a forefoot or flat
   landing keeps its measured place).
2. *The vertical split* from the plate's COP equation: two vertical forces at c_A and c_B have
   their COP at (Fz_A c_A + Fz_B c_B) / Fz, so foot A's share is
   a = ((p - c_B) . (c_A - c_B)) / |c_A - c_B|^2, clipped to [0, 1], and Fz_A = a Fz (the
   superimposed-force decomposition of Davis & Cavanagh 1993, with each foot's COP from its
   markers instead of an assumed transfer shape).
3. *The horizontal split.* Each leg's force along its line of action, carried from the foot's
   nearest measured frame with the pelvis: there, the line from its COP along its measured force
   crosses the pelvis centre's height at an aim point, kept relative to the pelvis centre; on the
   shared frame, F_h,i = Fz_i (c + q_i - c_i) / (c_z - p_z) (c the pelvis centre, q_i the aim
   point's offset; without pelvis markers, the foot's measured ratio of horizontal to vertical
   force). A trailing foot's (measured before the shared frame) line keeps turning: pushing off, its
   aim point moves forward relative to the pelvis, along the foot (by 0.1-0.2 m over a double
   support on real walks), so its offset moves on along the foot at the rate measured over its
   last two frames alone. (A leading foot's is not extrapolated back: its impact does not
   follow the rate of its loaded frames.) What the plate measures beyond the two estimates goes to the feet in proportion to
   their variances, each taken as (Fz_i (dt_i + :data:`DRIFT_FLOOR_S`))^2 with dt_i the time from
   the foot's measured frame: the estimate of a light foot, or one measured a frame away, keeps
   nearly all of its value.
4. *Exactness.* The lighter foot's wrench is its force at its COP c_i + r (r = p - (a c_A +
   (1 - a) c_B), the plate's COP off the feet's line) with its share of the free moment; the
   heavier foot takes the plate's moment (about the lab origin) less the lighter's, its COP and
   free moment from that: the two add up to the plate's force and moment to rounding.

A frame stays unknown (NaN, with the reason, :data:`WHY`) where a foot has no measured frame
within ``reach`` or its markers are missing, the two feet's COPs are closer than ``min_separation``
(0.15 m: the equation is ill-conditioned), the plate's COP lies more than ``max_residual``
(0.08 m) off the feet's line (a third load, or markers or COP wrong), or the plate's load is too
light for a COP (Fz below 50 N). Batch-first over the frames; one pass per plate and foot.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gaitid.contacts.foot_loads import plate_sum, wrench_at_cop
from gaitid.contacts.ownership import BOTH, PlateOwnership
from gaitid.contacts.progression import pelvis_centre
from gaitid.core.checks import Check
from gaitid.core.errors import DataError
from gaitid.core.signal import column_nanmedian
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import COP_MIN_FORCE_N, SIDES

#: m: a landing heel's contact point ahead of the heel marker, along the foot (the calcaneus's
#: underside, ahead of the marker on its back): where a leading foot's COP starts rolling
HEEL_CONTACT_M = 0.035
#: s: the time from a measured frame below which a foot's carried force is taken as no better
#: known (one sample at 100 Hz): the variances of the two feet's horizontal estimates
DRIFT_FLOOR_S = 0.01


@dataclass
class SharedSplit:
    """Per point frame, per foot (lab frame): ``force`` (n, 3) N, ``moment`` (n, 3) N.m about the lab
    origin, ``cop`` (n, 3) m, ``free`` (n, 3) N.m, the sum of the foot's shares of every plate it
    shares (zero where it shares none); ``decomposed`` (n,) the foot shares a plate on the frame and
    every share is known; ``why`` (n,) int8 code of :data:`WHY` where a share is unknown (0 else)."""

    force: dict
    moment: dict
    cop: dict
    free: dict
    decomposed: dict
    why: dict
    share: dict
    z: np.ndarray


def _sole_frame(heel: np.ndarray, toe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) (n, 2): heel-to-toe unit vector in the lab's XY and its left normal."""
    d = toe[:, :2] - heel[:, :2]
    with np.errstate(invalid="ignore", divide="ignore"):
        u = d / np.linalg.norm(d, axis=1, keepdims=True)
    return u, np.column_stack([-u[:, 1], u[:, 0]])


def _nearest(valid: np.ndarray, reach: int) -> np.ndarray:
    """(n,) index of the nearest frame where ``valid`` (ties: the earlier), -1 beyond ``reach`` frames."""
    n = valid.size
    i = np.arange(n)
    prev = np.maximum.accumulate(np.where(valid, i, -10 * n - 10))
    nxt = np.minimum.accumulate(np.where(valid, i, 20 * n + 20)[::-1])[::-1]
    pick = np.where(i - prev <= nxt - i, prev, nxt)
    return np.where(np.abs(pick - i) <= reach, pick, -1)


def _run_start(on: np.ndarray) -> np.ndarray:
    """(n,) index of the first frame of the run of ``on`` holding each frame, -1 off the runs."""
    i = np.arange(on.size)
    first = on & ~np.r_[False, on[:-1]]
    return np.where(on, np.maximum.accumulate(np.where(first, i, -1)), -1)


def decompose_shared(trial: Trial, ownership: PlateOwnership, feet: dict, alone: dict, reach_s: float = 0.3,
                     min_separation: float = 0.15, max_residual: float = 0.08,
                     centre: np.ndarray | None = None) -> SharedSplit:
    """Each foot's share of the plates both feet load (the module docstring gives the method).

    ``feet`` {side: (heel, toe)} (n, 3) m, lab; ``alone`` {side: (force (n, 3) N, cop (n, 3) m)} the
    foot's load on the frames where it is measured alone (NaN elsewhere); ``centre`` (n, 3) m, lab,
    the pelvis centre (None: each foot's measured ratio of horizontal to vertical force)."""
    n, m = ownership.owner.shape
    reach = max(1, int(round(reach_s * ownership.rate)))
    i = np.arange(n)
    sole, aim, src = {}, {}, {}
    for side in SIDES:
        heel, toe = feet[side]
        u, v = _sole_frame(heel, toe)
        F, P = alone[side]
        ok = np.all(np.isfinite(P[:, :2]), axis=1) & (np.nan_to_num(F[:, 2]) >= COP_MIN_FORCE_N) & np.isfinite(u).all(1)
        # the COP relative to the marker nearer to it (the heel's, or the toe's on the forefoot: a
        # rising heel moves the heel marker over the sole, the toe marker stays over the forefoot)
        near_toe = np.linalg.norm(P[:, :2] - toe[:, :2], axis=1) < np.linalg.norm(P[:, :2] - heel[:, :2], axis=1)
        anchor = np.where(near_toe[:, None], toe[:, :2], heel[:, :2])
        rel = P[:, :2] - anchor
        ab = np.column_stack([np.sum(rel * u, axis=1), np.sum(rel * v, axis=1)])
        k = _nearest(ok, reach)
        kk = np.clip(k, 0, n - 1)
        # a trailing foot's: the median of its last frame alone, the frame before and the value the two
        # frames before that predict (linearly; those alone, with the same anchor): its last frame alone
        # may hold the landing foot's first load, which its markers cannot place yet (60 Hz: 63 N, the
        # COP 43 mm toward the other foot in one frame), and a COP rolling smoothly keeps its last value
        back = [np.clip(kk - d, 0, n - 1) for d in (0, 1, 2)]
        same = [np.where((ok[b] & (near_toe[b] == near_toe[kk]) & (kk - d >= 0))[:, None], ab[b], np.nan)
                for d, b in enumerate(back)]
        three = np.stack([same[0], same[1], 2 * same[1] - same[2]])  # (3, n, 2)
        med = column_nanmedian(three.reshape(3, -1)).reshape(three.shape[1:])
        med = np.where(np.isfinite(med), med, ab[kk])  # np.nanmedian's, then the last frame's
        a_b = np.where((k >= 0)[:, None], np.where((k < i)[:, None], med, ab[kk]), np.nan)
        base = np.where(near_toe[kk][:, None], toe[:, :2], heel[:, :2])
        c = base + a_b[:, :1] * u + a_b[:, 1:] * v  # (n, 2) lab XY, NaN where unknown
        # a foot first measured after the shared frames (a leading foot loading): its COP rolls
        # forward, in its sole frame from the heel marker, from the heel's contact point at the
        # foot's first frame on the plate to its measured place, linearly in time
        on = ok | ownership.touches[side].any(axis=1)
        if ownership.sharing is not None:
            on = on | ownership.sharing[side].any(axis=1)
        first = _run_start(on)
        # ... when it lands heel first: its heel nearer its standing height than its toe (a forefoot
        # or flat landing keeps the COP where it is measured)
        with np.errstate(invalid="ignore"):
            up = {key: x[:, 2] - np.nanpercentile(x[:, 2], 2) if np.isfinite(x[:, 2]).any() else x[:, 2]
                  for key, x in (("heel", heel), ("toe", toe))}
        ff = np.clip(first, 0, n - 1)
        lead = (k > i) & (first >= 0) & (up["heel"][ff] < up["toe"][ff])
        rel_h = P[kk, :2] - heel[kk, :2]
        along, across = np.sum(rel_h * u[kk], axis=1), np.sum(rel_h * v[kk], axis=1)
        w = np.clip((k - i) / np.maximum(k - first, 1), 0.0, 1.0)
        along = along + w * (np.fmin(HEEL_CONTACT_M, along) - along)
        rolled = heel[:, :2] + along[:, None] * u + across[:, None] * v
        sole[side] = np.where(lead[:, None], rolled, c)
        # where the foot's measured force line crosses the pelvis centre's height, relative to the
        # centre (lab XY): the leg's line of force carried with the pelvis; without a centre, its
        # measured ratio of horizontal to vertical force (the same point, the pelvis standing still)
        with np.errstate(invalid="ignore", divide="ignore"):
            ratio = F[kk, :2] / F[kk, 2:3]
            if centre is not None:
                q_all = P[:, :2] + F[:, :2] / F[:, 2:3] * (centre[:, 2:3] - P[:, 2:3]) - centre[:, :2]
                q = q_all[kk]
                # a trailing foot (measured before the shared frame) pushing off: its line of force
                # turns forward relative to the pelvis, along the foot, and keeps turning at the rate
                # measured over its last two frames alone (0 where the frame before is not measured)
                km = np.clip(kk - 1, 0, n - 1)
                turn = np.nan_to_num(np.sum((q - q_all[km]) * u[kk], axis=1)) * (ok[km] & (kk > 0))
                q = q + np.where(k < i, turn * (i - kk), 0.0)[:, None] * u[kk]
            else:
                q = np.full((n, 2), np.nan)
        aim[side] = (np.where((k >= 0)[:, None], q, np.nan), np.where((k >= 0)[:, None], ratio, np.nan))
        src[side] = np.where(k >= 0, k, -10 * n)
    out_F = {s: np.zeros((n, 3)) for s in SIDES}
    out_M = {s: np.zeros((n, 3)) for s in SIDES}
    out_P = {s: np.full((n, 3), np.nan) for s in SIDES}
    out_T = {s: np.full((n, 3), np.nan) for s in SIDES}
    share = {s: np.zeros((n, m)) for s in SIDES}
    unknown = np.zeros((n, m), np.int8)
    zs = np.zeros(n)
    A, B = SIDES
    for j, fp in enumerate(trial.force_plates):
        rows = np.flatnonzero(ownership.owner[:, j] == BOTH)
        if rows.size == 0:
            continue
        F = fp.point.force[rows]
        p = fp.point.cop[rows]
        z = p[:, 2]
        T = np.nan_to_num(fp.point.free_moment[rows])
        cA, cB = sole[A][rows], sole[B][rows]
        d = cA - cB
        L2 = np.sum(d * d, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.clip(np.sum((p[:, :2] - cB) * d, axis=1) / L2, 0.0, 1.0)
        r = p[:, :2] - (a[:, None] * cA + (1 - a[:, None]) * cB)
        why = np.zeros(rows.size, np.int8)
        why[~(np.nan_to_num(F[:, 2]) >= COP_MIN_FORCE_N) | ~np.all(np.isfinite(p[:, :2]), axis=1)] = 4
        why[(why == 0) & ~(np.isfinite(cA).all(1) & np.isfinite(cB).all(1))] = 1
        why[(why == 0) & ~(L2 >= min_separation ** 2)] = 2
        why[(why == 0) & ~(np.linalg.norm(r, axis=1) <= max_residual)] = 3
        good = why == 0
        a = np.where(good, a, np.nan)
        FzA = a * F[:, 2]
        FzB = F[:, 2] - FzA
        # horizontal: each foot's force along its line through its aim point (carried with the
        # pelvis centre) for its vertical force, else its measured ratio; what the plate measures
        # beyond the two goes to the feet in proportion to the variance of their estimates
        est = []
        for side, c_i, Fz_i in ((A, cA, FzA), (B, cB, FzB)):
            q, ratio = aim[side][0][rows], aim[side][1][rows]
            with np.errstate(invalid="ignore", divide="ignore"):
                h = Fz_i[:, None] * (centre[rows, :2] + q - c_i) / (centre[rows, 2:3] - z[:, None]) \
                    if centre is not None else np.full((rows.size, 2), np.nan)
            h = np.where(np.isfinite(h).all(axis=1)[:, None], h, ratio * Fz_i[:, None])
            var = (np.abs(Fz_i) * (np.abs(rows - src[side][rows]) / ownership.rate + DRIFT_FLOOR_S)) ** 2
            est.append((h, var))
        (hA, vA), (hB, vB) = est
        with np.errstate(invalid="ignore", divide="ignore"):
            wA = np.where(vA + vB > 0, vA / (vA + vB), 0.5)
        FhA = hA + wA[:, None] * (F[:, :2] - hA - hB)
        FA = np.column_stack([FhA, FzA])
        FB = F - FA
        zs[rows] = np.nan_to_num(z)
        pA = np.column_stack([cA + r, z])
        pB = np.column_stack([cB + r, z])
        # moments about the lab origin: p_i x F_i + T_i, with T_B = plate's total - the rest (exact)
        # the lighter foot's wrench: its force at its COP with its share of the free moment; the
        # heavier foot's: the plate's moment (about the lab origin) less the lighter's, so the two add
        # up exactly, its COP from that moment (well conditioned: it carries half the load or more)
        Mtot = np.cross(p, F) + T
        lightA = (a <= 0.5)[:, None]
        TA, TB = a[:, None] * T, (1 - a[:, None]) * T
        MA = np.where(lightA, np.cross(pA, FA) + TA, Mtot - np.cross(pB, FB) - TB)
        MB = Mtot - MA
        copA, freeA = wrench_at_cop(FA, MA, z)
        copB, freeB = wrench_at_cop(FB, MB, z)
        copA, freeA = np.where(lightA, pA, copA), np.where(lightA, TA, freeA)
        copB, freeB = np.where(lightA, copB, pB), np.where(lightA, freeB, TB)
        for side, Fs, Ms, Ps, Ts, sh in ((A, FA, MA, copA, freeA, a), (B, FB, MB, copB, freeB, 1 - a)):
            twice = share[side][rows].any(axis=1)  # a second shared plate on the frame: by moments only
            out_F[side][rows] += np.where(good[:, None], Fs, np.nan)
            out_M[side][rows] += np.where(good[:, None], Ms, np.nan)
            out_P[side][rows] = np.where(good[:, None] & ~twice[:, None], Ps, np.nan)
            out_T[side][rows] = np.where(good[:, None] & ~twice[:, None], Ts, np.nan)
            share[side][rows, j] = sh
        unknown[rows, j] = why
    decomposed, why_side = {}, {}
    for side in SIDES:
        sh = ownership.owner == BOTH
        if ownership.sharing is not None:
            sh = sh & (ownership.sharing[side] | ownership.touches[side])
        bad = np.where(sh, unknown, 0).max(axis=1)
        other = ownership.problem_other[side] if ownership.problem_other is not None else np.zeros(n, np.int8)
        decomposed[side] = sh.any(axis=1) & (bad == 0) & (ownership.problem[side] == 1) & (other == 0)
        why_side[side] = bad.astype(np.int8)
        out_F[side][~decomposed[side]] = np.where(sh.any(axis=1)[~decomposed[side], None], np.nan, 0.0)
        out_M[side][~decomposed[side]] = np.where(sh.any(axis=1)[~decomposed[side], None], np.nan, 0.0)
    return SharedSplit(out_F, out_M, out_P, out_T, decomposed, why_side, share, zs)


def with_split(trial: Trial, markers, ownership: PlateOwnership, reach_s: float = 0.3) -> PlateOwnership:
    """A copy of ``ownership`` whose ``split`` holds each foot's share of the plates both feet load
    (:func:`decompose_shared`; the feet from ``markers``, :class:`~gaitid.model.gait_markers.GaitMarkers`,
    their loads measured alone from the plates each owns on its measured frames). Unchanged when no
    plate is shared or a foot's heel or toe marker is absent."""
    if not np.any(ownership.owner == BOTH):
        return ownership
    feet, alone = {}, {}
    for side in SIDES:
        f = markers.foot(side)
        if not trial.has_points(f.heel, f.toe):
            return ownership
        feet[side] = (trial.point(f.heel), trial.point(f.toe))
        F, P, _ = plate_sum(trial, ownership.owned(side) & ownership.measured[side][:, None])
        F[~ownership.measured[side]] = np.nan
        alone[side] = (F, P)
    try:
        centre = pelvis_centre(trial, markers)
    except DataError:  # no pelvis marker: the measured ratios
        centre = None
    return replace(ownership, split=decompose_shared(trial, ownership, feet, alone, reach_s, centre=centre))


def shared_plate_contacts(trial: Trial, ownership: PlateOwnership, contacts: list, min_duration: float) -> list:
    """``contacts`` with those on a plate both feet load (one plate each) replaced by each foot's
    contacts on that plate from the per-frame ownership, as on a treadmill
    (:func:`gaitid.contacts.treadmill.treadmill_contacts`), when the plate's shared frames are
    decomposed (``ownership.split``): a contact refused as 'two feet on the plate' becomes the two
    feet's; the others as they are. Manual overrides keep their contacts, and a treadmill's (source
    'treadmill': they come from the per-frame ownership already)."""
    from gaitid.contacts.treadmill import treadmill_contacts

    if ownership.split is None:
        return contacts
    dec = ownership.split.decomposed
    shared = {p for j, p in enumerate(ownership.plates)
              if np.any((ownership.owner[:, j] == BOTH) & dec[SIDES[0]] & dec[SIDES[1]])}
    hit = [c for c in contacts
           if len(c.plates) == 1 and c.plates[0] in shared and c.source not in ("override", "treadmill")]
    if not hit:
        return contacts
    hit_ids = {id(c) for c in hit}
    keep = [c for c in contacts if id(c) not in hit_ids]
    new = [replace(x, source="auto") for x in treadmill_contacts(trial, ownership, min_duration)
           if len(x.plates) == 1 and x.plates[0] in {c.plates[0] for c in hit}]
    return sorted(keep + new, key=lambda c: (c.strike_time if np.isfinite(c.strike_time) else -np.inf, c.side or ""))


def shared_plates_check(loads: dict, contacts: list, rate: float, decompose: bool = True) -> Check:
    """The 'shared plates' check: how long each foot's load is its decomposed share of a plate both
    feet load (``loads``: {side: :class:`~gaitid.contacts.foot_loads.FootLoad`}), a warning naming the
    plates and durations when any (the loads are estimates there, flagged 'decomposed'); not run with
    ``decompose`` False."""
    name = "shared plates"
    if not decompose:
        return Check.not_run(name, "decomposition off (--no-decompose): a plate both feet load leaves both NaN")
    secs = {s: float(np.sum(loads[s].source == "decomposed")) / rate for s in SIDES if loads[s].source is not None}
    plates = sorted({p for c in contacts if c.decomposed_s > 0 for p in c.plates})
    if not any(v > 0 for v in secs.values()):
        return Check.outcome(name, "no frame of a foot's load decomposed")
    what = ", ".join(f"{s.lower()} foot {v:.2f} s" for s, v in secs.items() if v > 0)
    names = "plate" + ("s " if len(plates) > 1 else " ") + " and ".join(str(p) for p in plates) if plates else "plates"
    return Check.outcome(name, f"decomposed: {what}", [
        f"both feet on one plate ({names}): each foot's load decomposed for {what} (its share estimated from the "
        f"plate's centre of pressure between the feet, flagged 'decomposed' in the loads, contacts and cycles; "
        f"about 1-4 % of body weight RMS in each force on real walks, docs/contacts.md); --no-decompose leaves "
        f"these frames NaN"])
