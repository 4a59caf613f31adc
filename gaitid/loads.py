"""The load on each foot, per frame at the point rate, lab frame (the foot-loads stage).

:func:`foot_loads` turns the plate contacts into per-foot loads ready for the solver
(:class:`gaitid.dynamics.types.ExternalLoad`): the (summed) plate force (N), centre of
pressure (m) and free moment (N.m) during a valid contact; zero in swing; NaN during an
invalid contact (outside the foot's swing) or a stance off the plates (load unknown).
Swing and stance come from the gait events (foot strike to foot off is stance, both frames
included, each event on its nearest frame). During a valid contact the plate's wrench is used
on every frame of the contact and of the stance it overlaps; frames where it is below 10 N
(COP undefined) carry zero load. :func:`filtered_load` low-passes a foot's load for the solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.contacts import FootContact
from gaitid.dynamics.types import ExternalLoad
from gaitid.errors import DataError
from gaitid.kinematics import butter_lowpass
from gaitid.trial import Event, PlateWrench, Trial
from gaitid.vocabulary import COP_THRESHOLD_N, FOOT_OFF, FOOT_STRIKE, SIDES


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
                state[trial.indices_between(a, b)] = "off plate"
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
                idx = trial.indices_between(a, b)
                w = sum_wrenches([plates[p].point for p in c.plates])
                ok = np.all(np.isfinite(w.cop[idx]), axis=1) & np.all(np.isfinite(w.force[idx]), axis=1)
                F[idx] = np.where(ok[:, None], w.force[idx], 0.0)
                P[idx] = np.where(ok[:, None], w.cop[idx], 0.0)
                T[idx] = np.where(ok[:, None], np.nan_to_num(w.free_moment[idx]), 0.0)
                state[idx] = "plate"
            else:  # load unknown while this foot may be on the plate: not in its swing
                idx = trial.indices_between(a, b)
                idx = idx[state[idx] != "swing"]
                state[idx] = np.where(state[idx] == "plate", "plate", "invalid")
        swing = state == "swing"
        F[swing] = 0.0
        P[swing] = 0.0
        T[swing] = 0.0
        out[side] = FootLoad(side, F, P, T, state)
    return out


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
    M_O = np.cross(cop - O, F) + T
    if cutoff_hz is not None:
        F = butter_lowpass(F, rate, cutoff_hz, order)
        M_O = butter_lowpass(M_O, rate, cutoff_hz, order)
    point = np.where(np.isnan(F).any(axis=1, keepdims=True), np.nan, np.broadcast_to(O, F.shape))
    return ExternalLoad(0, F, point, M_O)
