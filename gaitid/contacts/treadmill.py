"""Instrumented treadmills: detection, and foot contacts from the per-frame plate ownership.

A belt over a force plate is loaded nearly all the time (one foot lands before the other leaves
it), so the plate's loaded periods are not foot placements. :func:`treadmill_mode` calls a trial
a treadmill walk when the pelvis hardly advances (median horizontal speed over 1 s windows below
0.3 m/s, :func:`gaitid.contacts.progression.progression_direction`), the plates are loaded on at least
80 % of the frames, and a plate's surface moves (median velocity of the low foot markers over it
at least 0.2 m/s: a belt; this keeps quiet standing on plates out). :func:`treadmill_contacts`
then builds each foot's contacts from the frames it touches a loaded belt
(:func:`gaitid.contacts.ownership.plate_ownership`): runs of such frames, gaps of up to 2 frames
bridged, runs shorter than the minimum contact dropped. Strike and off are the first and last
frames of a run (NaN at the record's ends: a contact running to the end is still a contact); a
contact is valid for kinetics when the foot's load is measured on every frame of it, else the
reason says what and for how long ("both feet on plate 1 for 0.05 s").
"""

from __future__ import annotations

import numpy as np

from gaitid.contacts.contact import FootContact
from gaitid.contacts.ownership import PlateOwnership
from gaitid.contacts.progression import progression_direction
from gaitid.core.errors import DataError
from gaitid.core.signal import runs
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import COP_THRESHOLD_N, MIN_CONTACT_S, SIDES
from gaitid.model.gait_markers import GaitMarkers

TREADMILL_LOADED = 0.8  # fraction of frames with a plate loaded
BELT_SPEED = 0.2  # m/s: a plate surface faster than this is a belt


def treadmill_mode(trial: Trial, markers: GaitMarkers, ownership: PlateOwnership) -> str:
    """'' for an overground trial, else the note saying why it is a treadmill walk."""
    if not ownership.plates or trial.n_frames < 2:
        return ""
    loaded = float(ownership.loaded.any(axis=1).mean())
    belt = float(np.linalg.norm(ownership.surface_velocity, axis=1).max())
    if loaded < TREADMILL_LOADED or belt < BELT_SPEED:
        return ""
    try:
        prog = progression_direction(trial, markers)
    except DataError:
        return ""
    if prog.mode != "treadmill":
        return ""
    return (f"treadmill trial (pelvis speed {prog.speed:.2f} m/s, plates loaded on {100 * loaded:.0f} % of the "
            f"frames, belt speed {belt:.2f} m/s): foot contacts, events and loads from the per-frame ownership "
            f"of the belts")


def treadmill_contacts(trial: Trial, ownership: PlateOwnership, min_duration: float = MIN_CONTACT_S,
                       max_gap: int = 2) -> list[FootContact]:
    """Each foot's contacts from the frames it touches a loaded plate (see the module docstring)."""
    n, t = trial.n_frames, trial.time
    out = []
    plates = np.asarray(ownership.plates)
    for side in SIDES:
        on = ownership.on_plates(side).copy()
        a, b = runs(~on)
        short = ((b - a) <= max_gap) & (a > 0) & (b < n)
        for i, j in zip(a[short], b[short]):  # few gaps: one per step at most
            on[i:j] = True
        for i, j in zip(*runs(on)):
            if (j - i) / trial.point_rate < min_duration:
                continue
            used = plates[ownership.touches[side][i:j].any(axis=0)]
            i, j = _light_edges(trial, ownership, used, i, j, side)
            frames = np.arange(i, j)
            strike = np.nan if i == 0 else float(t[i])
            off = np.nan if j == n else float(t[j - 1])
            why = ownership.reasons(side, frames)
            names = "plate" + ("s " if len(used) > 1 else " ") + " and ".join(str(p) for p in used)
            dec = (float(ownership.split.decomposed[side][frames].sum()) / trial.point_rate
                   if ownership.split is not None else 0.0)
            note = f"{names}: {dec:.2f} s decomposed" if dec > 0 else ""
            out.append(FootContact(plates=tuple(int(p) for p in used), side=side, strike_time=strike, off_time=off,
                                   valid=not why, reason=f"{names}: {', '.join(why)}" if why else note,
                                   feet=(side,), source="treadmill", frames_only=bool(why), decomposed_s=dec))
    return sorted(out, key=lambda c: (c.strike_time if np.isfinite(c.strike_time) else -np.inf, c.side))


def _light_edges(trial: Trial, ownership: PlateOwnership, used: np.ndarray, i: int, j: int, side: str,
                 max_frames: int = 2) -> tuple[int, int]:
    """The run [i, j) widened by up to ``max_frames`` at each end over frames where the plate the
    foot lands on (leaves) carries a light load (above the COP threshold, at most the contact
    threshold) owned by no foot: the first and last instants of the contact, as the analog-rate
    threshold crossing of an overground contact."""
    cols = [ownership.plates.index(p) for p in used]
    first = [k for k in cols if ownership.touches[side][i, k]]
    last = [k for k in cols if ownership.touches[side][j - 1, k]]

    def light(f, ks):
        if not ks or f < 0 or f >= trial.n_frames:
            return False
        fz = np.array([trial.force_plates[k].point.force[f, 2] for k in ks])
        return bool(np.all(ownership.owner[f, ks] == 0) and np.any(np.nan_to_num(fz) > COP_THRESHOLD_N))

    for _ in range(max_frames):
        if light(i - 1, first):
            i -= 1
        if light(j, last):
            j += 1
    return i, j

