"""Body mass from the force plates, for trials whose file stores none.

:func:`estimate_mass` returns a :class:`MassEstimate` (kg, with the method, the time window
used and notes); nothing in gaitid calls it automatically. Two methods:

- ``standing``: quiet standing on the plates (a static trial, or the first/last
  ``window_s`` of a trial): the summed vertical force is steady (SD below ``max_cv`` of
  its mean) and the markers do not move (mean speed below ``max_speed``); mass = mean Fz / g.
  It assumes the whole body rests on the plates (both feet on plates).
- ``steps``: two consecutive foot contacts on two plates (foot A, then foot B) in steady
  walking. Over the interval of one step period T (A's strike to B's strike) that ends
  when A comes off its plate, every ground force is on a plate (the foot before A is off
  the ground), and the centre of mass has the same vertical velocity at both ends (steady
  gait), so the mean summed Fz over it is the body weight (impulse-momentum); the change
  of the trunk markers' vertical velocity over the interval is accounted for
  (J = m g T + m dv). Accuracy a few per cent (the trunk is not the centre of mass).

Each plate's unloaded offset (median Fz while |Fz| < 50 N) is removed first, and noted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gaitid.errors import DataError
from gaitid.trial import Trial

G = 9.81  # m/s^2
UNLOADED_N = 50.0  # |Fz| below this: plate unloaded (offset estimate)
CONTACT_N = 50.0  # Fz above this: foot on the plate


@dataclass
class MassEstimate:
    """Body mass (kg) estimated from the plates; ``window_s`` (start, end) on the trial clock."""

    mass: float
    method: str
    window_s: tuple[float, float]
    notes: list[str] = field(default_factory=list)


def _vertical_forces(trial: Trial) -> tuple[np.ndarray, list[str]]:
    """(n_frames, n_plates) vertical force on the subject (N), each plate's unloaded offset removed."""
    if not trial.force_plates:
        raise DataError("no force plates: body mass cannot be estimated; give the mass (kg)", trial.path)
    cols, notes = [], []
    for p in trial.force_plates:
        fz = np.asarray(p.point.force[:, 2], float)
        idle = np.abs(fz) < UNLOADED_N
        if idle.sum() >= max(5, 0.05 * len(fz)):
            off = float(np.nanmedian(fz[idle]))
            if abs(off) > 2.0:
                notes.append(f"plate {p.index}: unloaded offset {off:.1f} N removed")
                fz = fz - off
        cols.append(fz)
    return np.stack(cols, axis=1), notes


def _standing(trial: Trial, fz: np.ndarray, window_s: float, max_cv: float, max_speed: float):
    rate = trial.point_rate
    n = trial.n_frames
    k = min(n, max(3, int(round(window_s * rate))))
    total = np.sum(fz, axis=1)
    moving = None
    if trial.markers.size and np.isfinite(trial.markers).any():
        seen = np.isfinite(trial.markers).all(axis=2)  # markers seen in every frame: their mean speed
        keep = seen.all(axis=0)
        if keep.any():
            centre = trial.markers[:, keep].mean(axis=1)
            moving = np.linalg.norm(np.gradient(centre, 1.0 / rate, axis=0), axis=1)
    for a, b in ((0, k), (n - k, n)):
        f = total[a:b]
        if not np.isfinite(f).all() or f.mean() < 200.0:
            continue
        if f.std() > max_cv * f.mean():
            continue
        if moving is not None:
            v = moving[a:b]
            if np.isfinite(v).any() and np.nanmean(v) > max_speed:
                continue
        t = trial.time
        return float(f.mean() / G), (float(t[a]), float(t[b - 1]))
    return None


def _contacts(f: np.ndarray) -> list[tuple[int, int]]:
    on = np.nan_to_num(f) > CONTACT_N
    edges = np.flatnonzero(np.diff(on.astype(int)))
    starts = ([0] if on[0] else []) + [e + 1 for e in edges if not on[e]]
    ends = [e + 1 for e in edges if on[e]] + ([len(f)] if on[-1] else [])
    return [(s, e) for s, e in zip(starts, ends) if e - s >= 3]


def _trunk_vertical_velocity_change(trial: Trial, a: int, b: int) -> float:
    """Vertical velocity change (m/s) of the trunk and pelvis (the mean of the markers above
    0.8 m that are seen around both frames) from frame a to frame b: the centre of mass's,
    approximately. 0 when no such markers."""
    n = trial.n_frames
    ia, ib = slice(max(a - 2, 0), min(a + 3, n)), slice(max(b - 3, 0), min(b + 2, n))
    z = trial.markers[..., 2]
    seen = np.isfinite(z).any(axis=0)
    high = np.zeros(z.shape[1], bool)
    high[seen] = np.nanmedian(z[:, seen], axis=0) > 0.8
    keep = high & np.isfinite(z[ia]).all(axis=0) & np.isfinite(z[ib]).all(axis=0)
    if not keep.any():
        return 0.0
    zc = z[:, keep].mean(axis=1)
    rate = trial.point_rate
    va = np.polyfit(np.arange(len(zc[ia])) / rate, zc[ia], 1)[0]
    vb = np.polyfit(np.arange(len(zc[ib])) / rate, zc[ib], 1)[0]
    return float(vb - va)


def _steps(trial: Trial, fz: np.ndarray):
    total = np.nansum(fz, axis=1)
    contacts = []
    for j in range(fz.shape[1]):
        for s, e in _contacts(fz[:, j]):
            if s > 0 and e < len(total):  # whole contact seen: strike and off on the plate
                contacts.append((s, e, j))
    contacts.sort()
    best = None
    for (sa, ea, ja), (sb, eb, jb) in zip(contacts, contacts[1:]):
        if ja == jb or not (sa < sb < ea):  # two plates, B strikes while A is on its plate
            continue
        T = sb - sa
        a = ea - T
        if a < 0:
            continue
        window = total[a:ea]
        if np.isfinite(fz[a:ea]).all():
            impulse = float(window.sum()) / trial.point_rate  # N.s over T
            dv = _trunk_vertical_velocity_change(trial, a, ea)
            mass = impulse / (G * T / trial.point_rate + dv)  # J = m g T + m dv  (impulse-momentum)
            best = (mass, (float(trial.time[a]), float(trial.time[ea - 1])), dv)
            break
    return best


def estimate_mass(trial: Trial, method: str = "auto", *, window_s: float = 1.0, max_cv: float = 0.02,
                  max_speed: float = 0.05) -> MassEstimate:
    """Body mass (kg) from the trial's force plates (see the module docstring).

    ``method``: 'standing', 'steps', or 'auto' (standing, else steps). Raises
    :class:`~gaitid.errors.DataError` naming the trial when no window qualifies."""
    if method not in ("auto", "standing", "steps"):
        raise DataError(f"mass estimate method must be 'auto', 'standing' or 'steps', not {method!r}", trial.path)
    fz, notes = _vertical_forces(trial)
    if method in ("auto", "standing"):
        got = _standing(trial, fz, window_s, max_cv, max_speed)
        if got is not None:
            return MassEstimate(got[0], "standing", got[1], notes)
    if method in ("auto", "steps"):
        got = _steps(trial, fz)
        if got is not None and math.isfinite(got[0]):
            notes.append(f"from one step period of walking (two consecutive contacts on two plates); trunk "
                         f"vertical velocity change {got[2]:+.3f} m/s accounted for")
            return MassEstimate(got[0], "steps", got[1], notes)
    what = {"standing": "no quiet standing on the plates in the first or last "
                        f"{window_s:g} s", "steps": "no two consecutive foot contacts on two plates",
            "auto": f"no quiet standing on the plates (first/last {window_s:g} s) and no two consecutive "
                    "foot contacts on two plates"}[method]
    raise DataError(f"body mass cannot be estimated from the plates: {what}; give the mass (kg)", trial.path)
