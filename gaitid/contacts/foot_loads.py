"""The load on each foot, per frame at the point rate, lab frame (the foot-loads stage).

:func:`foot_loads` turns the plate contacts and the per-frame plate ownership
(:func:`gaitid.contacts.plate_ownership`) into per-foot loads ready for the solver
(:class:`gaitid.dynamics.types.ExternalLoad`): on each frame the sum of the plates the foot alone
loads (force N, centre of pressure m, free moment N.m; :func:`plate_sum`), plus a valid
contact's own plates on its light edges; zero in swing; NaN where another foot shares one of its
plates, a used plate sample is NaN, during a contact rejected by a contact-level rule (outside
the foot's swing), or in a stance off the plates (load unknown). Swing and stance come from the
gait events (foot strike to foot off is stance, both frames included, each event on its nearest
frame); a valid contact covers the stance it overlaps; frames where a used plate is below 10 N
(COP undefined) carry zero from it. :func:`load_imbalance` is the invariant (the feet add up to
the plates), enforced on the way out. :func:`filtered_load` low-passes a foot's load for the
solver (docs/contacts.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.contacts import FootContact
from gaitid.contacts.ownership import NONE, OWNER_CODE, UNOWNED, PlateOwnership
from gaitid.core.errors import DataError
from gaitid.core.rotation import cross
from gaitid.core.signal import butter_lowpass
from gaitid.core.trial import Event, PlateWrench, Trial
from gaitid.core.vocabulary import CONTACT_THRESHOLD_N, COP_THRESHOLD_N, FOOT_OFF, FOOT_STRIKE, SIDES, other_side
from gaitid.dynamics.types import ExternalLoad


def sum_wrenches(wrenches: list[PlateWrench], min_force: float = COP_THRESHOLD_N) -> PlateWrench:
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
        M += cross(c, f) + t
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


@dataclass
class FootLoad:
    """Load on one foot at the point rate, lab frame: force (N), centre of pressure (m),
    free moment (N.m), each (n_frames, 3). ``state`` (n_frames,) per frame: 'swing',
    'plate' (valid contact), 'off plate' (stance without a valid plate), 'invalid'
    (invalid contact) or 'unknown'. Zero load in swing, NaN where unknown. ``source`` (n_frames,)
    per frame: 'measured' (the plates the foot alone loads, or swing), 'decomposed' (its share of a
    plate both feet load, :mod:`gaitid.contacts.decompose`) or 'unknown' (NaN); None: not recorded."""

    side: str
    force_lab: np.ndarray
    cop_lab: np.ndarray
    free_moment_lab: np.ndarray
    state: np.ndarray
    source: np.ndarray | None = None

    def external_load(self, segment: int = 0) -> ExternalLoad:
        """The :class:`ExternalLoad` on the foot (``segment`` 0 = most distal of the chain)."""
        return ExternalLoad(segment, self.force_lab, self.cop_lab, self.free_moment_lab)

    @property
    def decomposed(self) -> np.ndarray:
        """(n_frames,) bool: the frames whose load is decomposed (none when ``source`` is not recorded)."""
        return np.zeros(len(self.state), bool) if self.source is None else np.asarray(self.source == "decomposed", bool)


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


def plate_sum(trial: Trial, use: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Force (N), centre of pressure (m) and free moment (N.m), (n, 3) lab, of the plates selected
    per frame by ``use`` (n, m; columns in ``trial.force_plates`` order), at the point rate.

    A frame with one plate gives that plate's wrench as it is; with several, their sum about a
    common point as in :func:`sum_wrenches` (COP on the plane at the mean height of the plates'
    COPs on that frame). A used plate whose COP is undefined (|Fz| below the COP threshold)
    contributes nothing; a used plate with a NaN force makes the frame NaN; no plate: zero.
    """
    n, m = use.shape
    F = np.zeros((n, 3))
    M = np.zeros((n, 3))
    zsum = np.zeros(n)
    k = np.zeros(n)
    bad = np.zeros(n, bool)
    one = use.sum(axis=1) == 1
    F1, P1, T1 = np.zeros((n, 3)), np.zeros((n, 3)), np.zeros((n, 3))
    for j, fp in enumerate(trial.force_plates):
        w = fp.point
        f, c, t = w.force[:n], w.cop[:n], w.free_moment[:n]
        u = use[:, j]
        bad |= u & ~np.all(np.isfinite(f), axis=1)
        ok = u & np.all(np.isfinite(c), axis=1) & np.all(np.isfinite(f), axis=1)
        fo = np.where(ok[:, None], f, 0.0)
        co = np.where(ok[:, None], c, 0.0)
        to = np.where(ok[:, None], np.nan_to_num(t), 0.0)
        F += fo
        M += cross(co, fo) + to
        zsum += np.where(ok, co[:, 2], 0.0)
        k += ok
        sel = one & u
        F1[sel], P1[sel], T1[sel] = fo[sel], co[sel], to[sel]
    z0 = np.where(k > 0, zsum / np.maximum(k, 1), 0.0)
    fz = F[:, 2]
    good = np.abs(fz) >= COP_THRESHOLD_N
    with np.errstate(invalid="ignore", divide="ignore"):
        px = np.where(good, (z0 * F[:, 0] - M[:, 1]) / fz, 0.0)
        py = np.where(good, (M[:, 0] + z0 * F[:, 1]) / fz, 0.0)
    P = np.column_stack([px, py, np.where(good, z0, 0.0)])
    T = np.column_stack([np.zeros(n), np.zeros(n), np.where(good, M[:, 2] - (px * F[:, 1] - py * F[:, 0]), 0.0)])
    F = np.where(good[:, None], F, 0.0)
    F[one], P[one], T[one] = F1[one], P1[one], T1[one]
    for a in (F, P, T):
        a[bad] = np.nan
    return F, P, T


def foot_loads(trial: Trial, contacts: list[FootContact], events: list[Event] | None,
               ownership: PlateOwnership | None = None,
               threshold: float = CONTACT_THRESHOLD_N) -> dict[str, FootLoad]:
    """Per-foot external loads at the point rate (see the module docstring).

    ``events``: foot strikes/offs giving swing and stance; None or empty means the
    state of frames outside plate contacts is unknown (NaN). ``ownership``: who loads each
    plate on every frame (:func:`gaitid.contacts.plate_ownership`); without it the contacts'
    plates are used whole, as when each plate carries one foot at a time.
    """
    n = trial.n_frames
    t = trial.time
    m = len(trial.force_plates)
    col = [fp.index for fp in trial.force_plates]
    spans = {side: _contact_frames(trial, contacts, side, events) for side in SIDES}
    out = {}
    for side in SIDES:
        in_valid, invalid, plates_of, forced = spans[side]
        state = np.full(n, "unknown", dtype=object)
        if events:
            state[:] = "swing"
            for a, b in stance_intervals(events, side, t[0], t[-1]):
                state[trial.indices_between(a, b)] = "off plate"
        owned = ownership.owned(side).copy() if ownership is not None else np.zeros((n, m), bool)
        owned &= ~spans[other_side(side)][3]  # a plate the user gave to the other foot is not this one's
        problem = ownership.problem[side].copy() if ownership is not None else np.zeros(n, np.int8)
        pplate = ownership.problem_plate[side] if ownership is not None else np.zeros(n, np.int32)
        use = owned | forced
        problem[forced.any(axis=1)] = 0  # the user's override decides these frames
        for j, p in enumerate(col):
            # the contact's own plate where no other foot is found on it (its edges, below the
            # contact threshold, or a COP the per-frame test could not place)
            mine = plates_of[:, j]
            if ownership is None:
                use[mine, j] = True
                continue
            # its light edges only where this foot owned the plate on the nearest loaded frame
            edge_ok = (ownership.edge[:, j] == OWNER_CODE[side]) | (ownership.owner[:, j] == UNOWNED) | (
                ~(np.nan_to_num(trial.force_plates[j].point.force[:n, 2], nan=np.inf) > COP_THRESHOLD_N))
            free = mine & np.isin(ownership.owner[:, j], (NONE, UNOWNED)) & edge_ok
            use[free, j] = True
            problem[free & (problem == 3) & (pplate == p)] = 0
        F, P, T = plate_sum(trial, use)
        split = ownership.split if ownership is not None else None
        dec = split.decomposed[side] & (problem == 1) if split is not None else np.zeros(n, bool)
        if dec.any():  # the foot's share of the plates it shares, added to the plates it owns alone
            F, P, T = _add_share(F, P, T, split, side, use.any(axis=1), dec)
            problem[dec] = 0
        swing0 = state == "swing"  # by the events
        has = in_valid | owned.any(axis=1) | dec
        state[has] = "plate"
        touching = ownership.touches[side].any(axis=1) if ownership is not None else np.zeros(n, bool)
        if ownership is not None and ownership.sharing is not None:  # a trailing foot still pushing on a shared plate
            touching |= ownership.sharing[side].any(axis=1)
        unknown = (problem > 0) & (has | touching)
        unknown |= invalid & ~in_valid & (~swing0 | owned.any(axis=1))
        state[unknown] = "invalid"
        swing = state == "swing"
        F[swing] = P[swing] = T[swing] = 0.0
        state[(state == "plate") & ~np.all(np.isfinite(F), axis=1)] = "invalid"  # a NaN sample of a used plate
        nan = (state != "swing") & (state != "plate")
        F[nan] = P[nan] = T[nan] = np.nan
        source = np.where(nan, "unknown", np.where(dec, "decomposed", "measured")).astype(object)
        out[side] = FootLoad(side, F, P, T, state, source)
    return _balanced(trial, out, threshold)


def wrench_at_cop(force: np.ndarray, moment: np.ndarray, z0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cop (n, 3) m, free moment (n, 3) N.m) of a wrench given as force and moment about the lab
    origin, its COP on the plane z = z0 (NaN where |Fz| < 10 N)."""
    fz = force[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        good = np.abs(fz) >= 10.0
        px = np.where(good, (z0 * force[:, 0] - moment[:, 1]) / fz, np.nan)
        py = np.where(good, (moment[:, 0] + z0 * force[:, 1]) / fz, np.nan)
    cop = np.column_stack([px, py, np.where(good, z0, np.nan)])
    tz = moment[:, 2] - (px * force[:, 1] - py * force[:, 0])
    return cop, np.column_stack([np.zeros_like(tz), np.zeros_like(tz), tz])


def _add_share(F, P, T, split, side: str, own: np.ndarray, rows: np.ndarray):
    """On ``rows``: the foot's share of the plates it shares (``split``,
    :class:`gaitid.contacts.decompose.SharedSplit`) as it is, or added to the wrench of the plates it
    owns alone (F at P plus free moment T, where ``own``) about the lab origin, the COP on the plane of
    the shared plate's surface; other rows unchanged."""
    F, P, T = F.copy(), P.copy(), T.copy()
    r = np.flatnonzero(rows)
    o = own[r] | ~np.isfinite(split.cop[side][r]).all(axis=1)
    Fo = np.where(own[r][:, None], np.nan_to_num(F[r]), 0.0)
    Mo = np.where(own[r][:, None], cross(np.nan_to_num(P[r]), Fo) + np.nan_to_num(T[r]), 0.0)
    Ft, Mt = Fo + split.force[side][r], Mo + split.moment[side][r]
    cop, free = wrench_at_cop(Ft, Mt, split.z[r])
    F[r] = Ft
    P[r] = np.where(o[:, None], cop, split.cop[side][r])
    T[r] = np.where(o[:, None], free, split.free[side][r])
    return F, P, T


def load_imbalance(trial: Trial, loads: dict[str, FootLoad], threshold: float = CONTACT_THRESHOLD_N) -> np.ndarray:
    """(n,) N: where both feet have a load, |sum of every plate's force - (left + right)|, beyond
    the force on plates carrying less than ``threshold`` (their noise, or a contact's edge); 0
    elsewhere. The invariant: a plate's force above the threshold belongs to exactly one measured
    foot, so this is 0 on every frame."""
    n = trial.n_frames
    total = np.zeros((n, 3))
    slack = np.zeros(n)
    for fp in trial.force_plates:
        f = fp.point.force[:n]
        total += np.nan_to_num(f)
        light = ~(np.nan_to_num(f[:, 2], nan=np.inf) > threshold)
        slack += np.where(light, np.linalg.norm(np.nan_to_num(f), axis=1), 0.0)
    feet = sum(loads[s].force_lab for s in SIDES)
    both = np.all(np.isfinite(feet), axis=1)
    diff = np.linalg.norm(np.nan_to_num(total - feet), axis=1)
    return np.where(both, np.maximum(diff - slack - 1e-6 * (1.0 + np.abs(total).sum(axis=1)), 0.0), 0.0)


def _balanced(trial: Trial, loads: dict[str, FootLoad], threshold: float) -> dict[str, FootLoad]:
    """The invariant enforced: frames where the feet's loads do not add up to the plates' (a
    plate's force given to no foot or to both) are NaN for both feet, state 'unbalanced'
    (never expected; the tests hold it at zero frames)."""
    bad = load_imbalance(trial, loads, threshold) > 1.0
    if not bad.any():
        return loads
    out = {}
    for side, ld in loads.items():
        F, P, T, st = ld.force_lab.copy(), ld.cop_lab.copy(), ld.free_moment_lab.copy(), ld.state.copy()
        F[bad] = P[bad] = T[bad] = np.nan
        st[bad] = "unbalanced"
        src = ld.source.copy() if ld.source is not None else None
        if src is not None:
            src[bad] = "unknown"
        out[side] = FootLoad(side, F, P, T, st, src)
    return out


def _contact_frames(trial: Trial, contacts: list[FootContact], side: str, events: list[Event] | None):
    """Per frame, for one foot: (in a valid contact, in an invalid one, (n, m) the valid contact's
    plates, (n, m) the plates a manual override gives to this foot). A valid contact is stretched to
    the stance period(s) it overlaps (their edges carry less than the contact threshold)."""
    n, t = trial.n_frames, trial.time
    col = [fp.index for fp in trial.force_plates]
    stance = stance_intervals(events or [], side, t[0], t[-1])
    in_valid = np.zeros(n, bool)
    invalid = np.zeros(n, bool)
    plates_of = np.zeros((n, len(col)), bool)
    forced = np.zeros((n, len(col)), bool)
    for c in contacts:
        if side not in c.feet and c.side != side:
            continue
        a = c.strike_time if np.isfinite(c.strike_time) else t[0]
        b = c.off_time if np.isfinite(c.off_time) else t[-1]
        if (c.valid or c.frames_only) and c.side == side:  # frames_only: its bad frames are NaN per frame
            for sa, sb in stance:
                if sa <= b and a <= sb:
                    a, b = min(a, sa), max(b, sb)
            idx = trial.indices_between(a, b)
            in_valid[idx] = True
            cols = [col.index(p) for p in c.plates]
            plates_of[np.ix_(idx, cols)] = True
            if c.source == "override":
                forced[np.ix_(idx, cols)] = True
        else:  # load unknown while this foot may be on the plate (outside its swing: see foot_loads)
            invalid[trial.indices_between(a, b)] = True
    return in_valid, invalid, plates_of, forced


def filtered_load(load: FootLoad, rate: float, cutoff_hz: float | None, order: int) -> ExternalLoad:
    """The foot's external load for the solver, low-pass filtered (zero lag) when asked.

    The wrench is moved to a fixed point O (the mean centre of pressure, on the plate
    surface): force F and moment M_O = (COP - O) x F + T_free, both continuous through
    contact (zero in swing) and so safe to filter; the solver receives F at O plus the
    couple M_O, which is exactly the plate's wrench. NaN (unknown load) stays NaN.
    """
    F, cop, T = load.force_lab, load.cop_lab, load.free_moment_lab
    on = load.state == "plate"
    O = np.nanmean(cop[on], axis=0) if on.any() else np.zeros(3)
    M_O = cross(cop - O, F) + T
    if cutoff_hz is not None:
        F = butter_lowpass(F, rate, cutoff_hz, order)
        M_O = butter_lowpass(M_O, rate, cutoff_hz, order)
    point = np.where(np.isnan(F).any(axis=1, keepdims=True), np.nan, np.broadcast_to(O, F.shape))
    return ExternalLoad(0, F, point, M_O)
