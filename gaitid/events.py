"""Gait events: from the file, from force plates, from kinematics (Zeni et al. 2008).

Every event is a :class:`gaitid.trial.Event` on the file's clock (s): label
``'Foot Strike'`` or ``'Foot Off'``, context ``'Left'`` or ``'Right'``, and
``source`` ``'file'``, ``'plate'`` or ``'kinematics'``.

Choices (see also ``docs/events.md``):

- File events: Vicon labels are kept; the short forms written by other software
  (``LHS``/``RHS``/``LTO``/``RTO``, ``LFS``/``RFS``/``LFO``/``RFO``, ``Left Foot Strike``...)
  are mapped to ``Foot Strike``/``Foot Off`` + ``Left``/``Right``. Any other event
  is kept apart (:func:`other_events`), never dropped.
- Plate contacts: vertical force (on the subject, +Z) above ``threshold`` (20 N)
  at the analog rate; dips below the threshold shorter than ``min_gap`` (10 ms)
  are bridged, then contacts shorter than ``min_duration`` (50 ms) are dropped as
  noise. Strike and off times are the threshold crossings, linearly interpolated
  between analog samples. A contact already under way at the first sample (or still
  on at the last) has no strike (off) event.
- Kinematics (Zeni, Richards & Higginson 2008, Gait Posture 27:710): along the
  horizontal direction of progression ``d``, foot strike is a maximum of
  ``(heel - pelvis).d`` and foot off a minimum of ``(toe - pelvis).d``. The pelvis
  point is the mean of the pelvis markers present (Zeni used the sacrum; a constant
  offset along ``d`` does not move the extrema). ``d`` is found per frame
  (:func:`progression_direction`): over ground, the pelvis displacement over a
  +-0.5 s window (so walks in either direction and gentle turns work); on a
  treadmill (median pelvis speed below 0.3 m/s), the pelvis forward axis
  (mid-ASIS minus mid-PSIS or sacrum), else the mean heel-to-toe direction.
  Extrema must be at least 0.35 s apart, drop on one side by a quarter of the
  signal's 5-95 % range and on both sides by 2 mm (within 0.35 s); they are found
  only inside marker data (gaps of at most 0.1 s are bridged linearly, never at the
  trial's ends). Zeni's heel maximum precedes the landing (the decelerating foot
  still moves faster than the pelvis); by default each strike is moved to the heel's
  peak vertical acceleration within the next 0.1 s (the impact; Hreljac & Marshall
  2000): on the real trials strikes go from a median 5 frames early (12 of 43
  within 3 frames of the stored ones) to a median +1 frame (39 of 43); see
  ``docs/events.md``.
- Disagreement: :func:`compare_events` pairs events of the same label and side
  (nearest within ``window``, one-to-one); :func:`resolve_events` keeps the file's
  events by default (``prefer='file'``) and returns the comparison table so the
  caller can see and choose (``'detected'`` or ``'merge'``). A pair disagrees
  beyond 1 frame for plate events and 3 frames for kinematic ones (their accuracy
  on the real trials).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.signal import find_peaks

from gaitid.errors import DataError, SettingsError
from gaitid.trial import Event, PlateWrench, Trial

FOOT_STRIKE = "Foot Strike"
FOOT_OFF = "Foot Off"
SIDES = ("Left", "Right")
GAIT_LABELS = (FOOT_STRIKE, FOOT_OFF)


# --------------------------------------------------------------------------- markers


@dataclass(frozen=True)
class FootMarkers:
    """Labels of one foot's markers: heel, toe (forefoot) and ankle (lateral malleolus)."""

    heel: str
    toe: str
    ankle: str


@dataclass(frozen=True)
class GaitMarkers:
    """The few marker labels events and plate assignment need, per side.

    ``pelvis`` lists candidate pelvis markers; ``pelvis_front`` / ``pelvis_back`` those
    used for the pelvis forward axis (treadmill direction of progression).
    """

    left: FootMarkers
    right: FootMarkers
    pelvis: tuple[str, ...]
    pelvis_front: tuple[str, ...] = ()
    pelvis_back: tuple[str, ...] = ()

    def foot(self, side: str) -> FootMarkers:
        if side == "Left":
            return self.left
        if side == "Right":
            return self.right
        raise SettingsError(f"side must be 'Left' or 'Right', not {side!r}")

    @classmethod
    def plug_in_gait(cls) -> GaitMarkers:
        """Plug-in Gait labels (LHEE, LTOE, LANK, ...; LASI/RASI/LPSI/RPSI/SACR)."""
        return cls(
            left=FootMarkers("LHEE", "LTOE", "LANK"),
            right=FootMarkers("RHEE", "RTOE", "RANK"),
            pelvis=("LASI", "RASI", "LPSI", "RPSI", "SACR"),
            pelvis_front=("LASI", "RASI"),
            pelvis_back=("LPSI", "RPSI", "SACR"),
        )

    @classmethod
    def qualisys_cast(cls) -> GaitMarkers:
        """Qualisys/CAST anatomical labels (L_FCC heel, L_FM1 toe, L_FAL ankle; L_IAS/L_IPS pelvis)."""
        return cls(
            left=FootMarkers("L_FCC", "L_FM1", "L_FAL"),
            right=FootMarkers("R_FCC", "R_FM1", "R_FAL"),
            pelvis=("L_IAS", "R_IAS", "L_IPS", "R_IPS"),
            pelvis_front=("L_IAS", "R_IAS"),
            pelvis_back=("L_IPS", "R_IPS"),
        )

    @classmethod
    def calcaneus_metatarsal(cls) -> GaitMarkers:
        """Labels of OpenSim's example walking trials (RCAL heel, RMT2 toe, RLMAL ankle; xASI/xPSI)."""
        return cls(
            left=FootMarkers("LCAL", "LMT2", "LLMAL"),
            right=FootMarkers("RCAL", "RMT2", "RLMAL"),
            pelvis=("LASI", "RASI", "LPSI", "RPSI"),
            pelvis_front=("LASI", "RASI"),
            pelvis_back=("LPSI", "RPSI"),
        )

    @classmethod
    def gait2392(cls) -> GaitMarkers:
        """Labels of OpenSim's Gait2392 example subject (R.Heel, R.Toe.Tip; no malleolus marker,
        so the lateral midfoot marker closes the foot outline; R.ASIS/L.ASIS/V.Sacral)."""
        return cls(
            left=FootMarkers("L.Heel", "L.Toe.Tip", "L.Midfoot.Lat"),
            right=FootMarkers("R.Heel", "R.Toe.Tip", "R.Midfoot.Lat"),
            pelvis=("L.ASIS", "R.ASIS", "V.Sacral"),
            pelvis_front=("L.ASIS", "R.ASIS"),
            pelvis_back=("V.Sacral",),
        )

    @classmethod
    def for_trial(cls, trial: Trial) -> GaitMarkers:
        """The first known marker set whose foot markers the trial has."""
        for candidate in (cls.plug_in_gait(), cls.qualisys_cast(), cls.calcaneus_metatarsal(), cls.gait2392()):
            labels = [getattr(candidate.foot(s), k) for s in SIDES for k in ("heel", "toe", "ankle")]
            if trial.has_points(*labels):
                return candidate
        raise DataError(
            "no known foot marker set (Plug-in Gait LHEE/LTOE/LANK, Qualisys L_FCC/L_FM1/L_FAL or "
            "OpenSim LCAL/LMT2/LLMAL or L.Heel/L.Toe.Tip/L.Midfoot.Lat); "
            "pass the marker labels (GaitMarkers) explicitly",
            trial.path,
        )


def _markers(trial: Trial, markers: GaitMarkers | None) -> GaitMarkers:
    return GaitMarkers.for_trial(trial) if markers is None else markers


# --------------------------------------------------------------------------- file events

_SHORT = {
    "HS": FOOT_STRIKE,
    "FS": FOOT_STRIKE,
    "IC": FOOT_STRIKE,
    "TO": FOOT_OFF,
    "FO": FOOT_OFF,
}


def normalise_event(event: Event) -> Event | None:
    """The event with label 'Foot Strike'/'Foot Off' and context 'Left'/'Right', or None.

    Accepts Vicon's form (label 'Foot Strike', context 'Left') and the short
    forms ``LHS``, ``RTO``, ``LFS``, ``R_FO``, ``Left Foot Strike``, ``Right_HS`` ...
    """
    label = event.label.strip()
    context = (event.context or "").strip().capitalize()
    low = label.lower()
    kind = None
    if "strike" in low or "contact" in low:
        kind = FOOT_STRIKE
    elif "off" in low:
        kind = FOOT_OFF
    side = context if context in SIDES else None
    if side is None:
        m = re.match(r"^(left|right)\b", low)
        if m:
            side = m.group(1).capitalize()
    if kind is None or side is None:
        m = re.fullmatch(r"([LR])[ _-]?(HS|FS|IC|TO|FO)", label.upper())
        if m:
            side = side or ("Left" if m.group(1) == "L" else "Right")
            kind = kind or _SHORT[m.group(2)]
    if kind is None or side is None:
        return None
    return Event(kind, side, float(event.time), int(event.frame), event.source)


def file_events(trial: Trial) -> list[Event]:
    """Foot strikes and foot offs stored in the file, normalised and sorted by time."""
    out = [e for e in (normalise_event(ev) for ev in trial.events) if e is not None]
    return sorted(out, key=lambda e: e.time)


def other_events(trial: Trial) -> list[Event]:
    """The file's events that are not foot strikes or foot offs (kept as stored)."""
    return [ev for ev in trial.events if normalise_event(ev) is None]


def _event(trial: Trial, label: str, side: str, time: float, source: str) -> Event:
    return Event(label, side, float(time), int(round(time * trial.point_rate)) + 1, source)


# --------------------------------------------------------------------------- plates


@dataclass
class ContactInterval:
    """One period with vertical force above the threshold on one plate.

    ``plate``: 1-based plate index. ``start``/``stop``: analog sample indices (stop
    exclusive). ``strike_time``/``off_time``: threshold crossings (s, file clock),
    NaN when the contact was already on at the first sample / still on at the last.
    """

    plate: int
    start: int
    stop: int
    strike_time: float
    off_time: float

    @property
    def complete(self) -> bool:
        return bool(np.isfinite(self.strike_time) and np.isfinite(self.off_time))

    def span(self, t0: float, rate: float) -> tuple[float, float]:
        """(first, last) time (s) of the contact, using the record's ends for open sides."""
        a = self.strike_time if np.isfinite(self.strike_time) else t0 + self.start / rate
        b = self.off_time if np.isfinite(self.off_time) else t0 + (self.stop - 1) / rate
        return a, b


def _runs(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and stop (exclusive) indices of the runs of True in a 1-D boolean array."""
    d = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return np.flatnonzero(d == 1), np.flatnonzero(d == -1)


def contact_mask(fz: np.ndarray, rate: float, threshold: float = 20.0,
                 min_duration: float = 0.05, min_gap: float = 0.01) -> np.ndarray:
    """Samples in contact: ``fz > threshold`` with short gaps bridged and short contacts dropped.

    ``fz``: (n,) vertical force on the subject (N, +up). NaN counts as no contact.
    """
    above = np.nan_to_num(np.asarray(fz, float), nan=-np.inf) > threshold
    # bridge short dips inside a contact (not at the record's ends)
    starts, stops = _runs(~above)
    short = ((stops - starts) / rate < min_gap) & (starts > 0) & (stops < above.size)
    _set_runs(above, starts[short], stops[short], True)
    starts, stops = _runs(above)
    short = (stops - starts) / rate < min_duration
    _set_runs(above, starts[short], stops[short], False)
    return above


def _set_runs(mask: np.ndarray, starts: np.ndarray, stops: np.ndarray, value: bool) -> None:
    """mask[a:b] = value for every run (a, b), without a Python loop."""
    if starts.size:
        idx = np.repeat(starts, stops - starts) + (np.arange((stops - starts).sum())
                                                     - np.repeat(np.cumsum(stops - starts) - (stops - starts),
                                                                 stops - starts))
        mask[idx] = value


def _crossing(fz: np.ndarray, i: int, j: int, threshold: float) -> float:
    """Fractional sample index where fz crosses threshold between samples i and j=i+1."""
    fi, fj = fz[i], fz[j]
    if not (np.isfinite(fi) and np.isfinite(fj)) or fi == fj:
        return float(j) if fj > threshold else float(i)
    return i + (threshold - fi) / (fj - fi)


def plate_contacts(wrench: PlateWrench, plate: int, t0: float, threshold: float = 20.0,
                   min_duration: float = 0.05, min_gap: float = 0.01) -> list[ContactInterval]:
    """Contacts on one plate from its analog-rate wrench; ``t0`` is the time (s) of sample 0."""
    fz = np.asarray(wrench.force[:, 2], float)
    rate = wrench.rate
    mask = contact_mask(fz, rate, threshold, min_duration, min_gap)
    out = []
    for a, b in zip(*_runs(mask)):
        strike = np.nan if a == 0 else t0 + _crossing(fz, a - 1, a, threshold) / rate
        off = np.nan if b == fz.size else t0 + _crossing(fz, b - 1, b, threshold) / rate
        out.append(ContactInterval(plate, int(a), int(b), float(strike), float(off)))
    return out


def trial_contacts(trial: Trial, threshold: float = 20.0, min_duration: float = 0.05,
                   min_gap: float = 0.01) -> list[ContactInterval]:
    """Contacts on every force plate of the trial, at the analog rate, sorted by time."""
    t0 = (trial.first_frame - 1) / trial.point_rate
    out = []
    for fp in trial.force_plates:
        out += plate_contacts(fp.analog, fp.index, t0, threshold, min_duration, min_gap)
    rates = {fp.index: fp.analog.rate for fp in trial.force_plates}
    return sorted(out, key=lambda c: (c.start / rates[c.plate], c.plate))


def plate_events(trial: Trial, contacts=None, **assign_kwargs) -> list[Event]:
    """Foot strike / foot off events at the threshold crossings of plate contacts.

    ``contacts``: the :class:`gaitid.plates.FootContact` list from
    :func:`gaitid.plates.assign_contacts`; computed with ``assign_kwargs`` when None.
    Only contacts whose foot is known give events (valid or not for kinetics); each
    foot contact gives its earliest strike and latest off over its plates.
    """
    if contacts is None:
        from gaitid.plates import assign_contacts

        contacts = assign_contacts(trial, **assign_kwargs)
    out = []
    for c in contacts:
        if c.side not in SIDES:
            continue
        if np.isfinite(c.strike_time):
            out.append(_event(trial, FOOT_STRIKE, c.side, c.strike_time, "plate"))
        if np.isfinite(c.off_time):
            out.append(_event(trial, FOOT_OFF, c.side, c.off_time, "plate"))
    return sorted(out, key=lambda e: e.time)


# --------------------------------------------------------------------------- kinematics


def _fill_gaps(x: np.ndarray, max_gap: int) -> np.ndarray:
    """Linear interpolation over interior NaN runs of at most ``max_gap`` samples, along axis 0."""
    x = np.array(x, float, copy=True)
    flat = x.reshape(x.shape[0], -1)
    for k in range(flat.shape[1]):
        col = flat[:, k]
        bad = ~np.isfinite(col)
        if not bad.any() or bad.all():
            continue
        good = np.flatnonzero(~bad)
        starts, stops = _runs(bad)
        for a, b in zip(starts, stops):
            if a > 0 and b < col.size and b - a <= max_gap:
                col[a:b] = np.interp(np.arange(a, b), good, col[good])
    return flat.reshape(x.shape)


def pelvis_centre(trial: Trial, markers: GaitMarkers | None = None) -> np.ndarray:
    """(n, 3) m, lab: mean of the pelvis markers present in at least half the frames
    (NaN in frames where one of them is missing)."""
    markers = _markers(trial, markers)
    present = [m for m in markers.pelvis if trial.has_points(m)]
    cover = {m: float(np.isfinite(trial.point(m)[:, 0]).mean()) for m in present}
    present = [m for m in present if cover[m] >= 0.5]
    if not present:
        raise DataError(f"no pelvis marker among {', '.join(markers.pelvis)} with data in half the frames", trial.path)
    return np.mean([trial.point(m) for m in present], axis=0)


def _unit_xy(v: np.ndarray) -> np.ndarray:
    v = np.array(v, float, copy=True)
    v[..., 2] = 0.0
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 1e-9, v / n, np.nan)


@dataclass
class Progression:
    """Direction of progression: ``direction_lab`` (n, 3) horizontal unit vectors; ``mode``
    'overground' or 'treadmill'; ``speed`` median horizontal pelvis speed (m/s)."""

    direction_lab: np.ndarray
    mode: str
    speed: float
    notes: list[str] = field(default_factory=list)


def progression_direction(trial: Trial, markers: GaitMarkers | None = None, window: float = 0.5,
                          treadmill_speed: float = 0.3) -> Progression:
    """Horizontal direction of progression per frame (see the module docstring)."""
    markers = _markers(trial, markers)
    rate = trial.point_rate
    p = _fill_gaps(pelvis_centre(trial, markers), max_gap=trial.n_frames)
    valid = np.flatnonzero(np.isfinite(p[:, 0]))
    if valid.size < 2:
        raise DataError("pelvis markers missing in (almost) every frame: no direction of progression", trial.path)
    # constant extrapolation beyond the first/last valid frame
    p[: valid[0]] = p[valid[0]]
    p[valid[-1] + 1:] = p[valid[-1]]
    n = trial.n_frames
    h = max(1, int(round(window * rate)))
    i = np.arange(n)
    disp = p[np.minimum(i + h, n - 1)] - p[np.maximum(i - h, 0)]
    span_t = (np.minimum(i + h, n - 1) - np.maximum(i - h, 0)) / rate
    vel = np.diff(p[valid[0]: valid[-1] + 1, :2], axis=0) * rate
    speed = float(np.median(np.linalg.norm(vel, axis=1))) if vel.size else 0.0
    speed_win = np.linalg.norm(disp[:, :2], axis=1) / np.maximum(span_t, 1e-9)
    if np.nanmedian(speed_win) >= treadmill_speed:
        d = _unit_xy(disp)
        # frames where the pelvis pauses: hold the nearest defined direction
        bad = ~np.isfinite(d[:, 0]) | (speed_win < 0.1 * treadmill_speed)
        if bad.all():
            raise DataError("the pelvis does not move: no direction of progression", trial.path)
        if bad.any():
            good = np.flatnonzero(~bad)
            nearest = good[np.clip(np.searchsorted(good, i), 0, good.size - 1)]
            d[bad] = d[nearest[bad]]
        return Progression(d, "overground", speed)
    notes = []
    front = [m for m in markers.pelvis_front if trial.has_points(m)]
    back = [m for m in markers.pelvis_back if trial.has_points(m)]
    fwd = None
    if front and back:
        v = np.mean([trial.point(m) for m in front], axis=0) - np.mean([trial.point(m) for m in back], axis=0)
        fwd = np.nanmean(_unit_xy(v), axis=0)
        notes.append("treadmill: direction from the pelvis forward axis")
    if fwd is None or not np.all(np.isfinite(fwd)):
        vs = []
        for s in SIDES:
            f = markers.foot(s)
            if trial.has_points(f.heel, f.toe):
                vs.append(_unit_xy(trial.point(f.toe) - trial.point(f.heel)))
        if not vs:
            raise DataError("treadmill trial without pelvis or foot markers: no direction of progression", trial.path)
        fwd = np.nanmean(np.concatenate(vs), axis=0)
        notes.append("treadmill: direction from the heel-to-toe axes")
    fwd = _unit_xy(fwd)
    return Progression(np.broadcast_to(fwd, (n, 3)).copy(), "treadmill", speed, notes)


def zeni_signals(trial: Trial, side: str, markers: GaitMarkers | None = None,
                 progression: Progression | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(heel - pelvis).d and (toe - pelvis).d (m) per frame, Zeni et al. 2008 eq. 1-2."""
    markers = _markers(trial, markers)
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
    x = _fill_gaps(x, int(round(max_gap * rate)))
    finite = np.isfinite(x)
    if finite.sum() < 3:
        return np.array([], int)
    lo, hi = np.nanpercentile(x, [5, 95])
    prom = max(rel_prominence * (hi - lo), 1e-6)
    y = x if maxima else -x
    w = max(1, int(round(min_interval * rate)))
    out = []
    for a, b in zip(*_runs(finite)):
        if b - a < 3:
            continue
        seg = y[a:b]
        pk, _ = find_peaks(seg, distance=w)
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
    z = _fill_gaps(heel_z, int(round(0.1 * rate)))
    acc = np.gradient(np.gradient(z))
    w = int(round(window * rate))
    out = []
    for i in strikes:
        seg = acc[i: min(i + w + 1, z.size)]
        out.append(i + int(np.nanargmax(seg)) if np.isfinite(seg).any() else i)
    return np.array(out, int)


def zeni_events(trial: Trial, markers: GaitMarkers | None = None, progression: Progression | None = None,
                min_interval: float = 0.35, max_gap: float = 0.1, rel_prominence: float = 0.25,
                min_drop: float = 0.002, refine_strike: bool = True) -> list[Event]:
    """Foot strikes (heel maxima) and foot offs (toe minima) from markers, Zeni et al. 2008.

    ``refine_strike`` (default) moves each strike to the heel impact (:func:`refine_strikes`);
    False gives Zeni's heel maxima unchanged.
    """
    markers = _markers(trial, markers)
    prog = progression or progression_direction(trial, markers)
    out = []
    rate = trial.point_rate
    for side in SIDES:
        heel, toe = zeni_signals(trial, side, markers, prog)
        hs = _extrema(heel, rate, True, min_interval, max_gap, rel_prominence, min_drop)
        if refine_strike:
            hs = refine_strikes(trial.point(markers.foot(side).heel)[:, 2], hs, rate)
        to = _extrema(toe, rate, False, min_interval, max_gap, rel_prominence, min_drop)
        out += [_event(trial, FOOT_STRIKE, side, trial.time[i], "kinematics") for i in hs]
        out += [_event(trial, FOOT_OFF, side, trial.time[i], "kinematics") for i in to]
    return sorted(out, key=lambda e: e.time)


# --------------------------------------------------------------------------- comparison


def compare_events(reference: list[Event], detected: list[Event], point_rate: float,
                   window: float = 0.15) -> pd.DataFrame:
    """Pair events of the same label and side, nearest first, one-to-one, within ``window`` s.

    Columns: label, context, reference_time_s, detected_time_s, difference_s
    (detected - reference), difference_frames (the same in frames at ``point_rate``),
    frame_difference (difference of the events' frame numbers, an integer as float),
    status ('paired', 'reference only', 'detected only'), source (the detected event's).
    """
    rows = []
    for label in GAIT_LABELS:
        for side in SIDES:
            ref = [e.time for e in reference if e.label == label and e.context == side]
            dev = [e for e in detected if e.label == label and e.context == side]
            det = [e.time for e in dev]
            pairs = sorted(
                (abs(b - a), i, j) for i, a in enumerate(ref) for j, b in enumerate(det) if abs(b - a) <= window
            )
            used_r, used_d = set(), set()
            for _, i, j in pairs:
                if i in used_r or j in used_d:
                    continue
                used_r.add(i)
                used_d.add(j)
                rows.append((label, side, ref[i], det[j], "paired", dev[j].source))
            rows += [(label, side, a, np.nan, "reference only", "") for i, a in enumerate(ref) if i not in used_r]
            rows += [(label, side, np.nan, b, "detected only", dev[j].source)
                     for j, b in enumerate(det) if j not in used_d]
    df = pd.DataFrame(rows, columns=["label", "context", "reference_time_s", "detected_time_s", "status", "source"])
    df["difference_s"] = df["detected_time_s"] - df["reference_time_s"]
    df["difference_frames"] = df["difference_s"] * point_rate
    df["frame_difference"] = np.rint(df["detected_time_s"] * point_rate) - np.rint(df["reference_time_s"] * point_rate)
    order = df["reference_time_s"].fillna(df["detected_time_s"])
    df = df.assign(_t=order).sort_values("_t").drop(columns="_t").reset_index(drop=True)
    return df[["label", "context", "reference_time_s", "detected_time_s", "difference_s", "difference_frames",
               "frame_difference", "status", "source"]]


@dataclass
class EventChoice:
    """Events chosen by :func:`resolve_events` and the comparison behind the choice.

    ``comparison``: :func:`compare_events` table (file = reference) with a boolean
    ``disagree`` column (frame numbers more than ``tolerance`` apart, or found by one
    side only inside the span the file's events cover). ``notes``: what could not be
    detected and why. ``disagreements``: number of such rows.
    """

    events: list[Event]
    comparison: pd.DataFrame
    prefer: str
    disagreements: int
    notes: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        """One line per disagreement (and per note), for logs and reports."""
        out = []
        for r in self.comparison[self.comparison["disagree"]].itertuples():
            what = f"{r.context} {r.label}"
            if r.status == "paired":
                out.append(f"{what}: file {r.reference_time_s:.3f} s, {r.source} {r.detected_time_s:.3f} s "
                           f"({r.frame_difference:+.0f} frames)")
            elif r.status == "reference only":
                out.append(f"{what}: file {r.reference_time_s:.3f} s, not detected")
            else:
                out.append(f"{what}: {r.source} {r.detected_time_s:.3f} s, not in the file")
        return out + list(self.notes)


def combine_detected(plate: list[Event], kinematic: list[Event], window: float = 0.15) -> list[Event]:
    """Plate events where the plates saw the foot, kinematic (Zeni) events for the steps off the plates."""
    out = list(plate)
    for e in kinematic:
        if not any(p.label == e.label and p.context == e.context and abs(p.time - e.time) <= window for p in plate):
            out.append(e)
    return sorted(out, key=lambda e: e.time)


def detect_events(trial: Trial, markers: GaitMarkers | None = None, use_plates: bool = True,
                  use_kinematics: bool = True, **assign_kwargs) -> list[Event]:
    """Events detected from the plates and, for the other steps, from kinematics (Zeni)."""
    plate = plate_events(trial, markers=markers, **assign_kwargs) if use_plates and trial.force_plates else []
    kin = []
    if use_kinematics:
        kin = zeni_events(trial, markers)
    return combine_detected(plate, kin)


DEFAULT_TOLERANCE = {"plate": 1.0, "kinematics": 3.0}  # frames


def resolve_events(file: list[Event], detected: list[Event], point_rate: float, prefer: str = "file",
                   tolerance: float | dict | None = None, window: float = 0.15) -> EventChoice:
    """Choose between the file's and the detected events and report where they disagree.

    ``prefer``: 'file' (default; the detected events are used only when the file has
    none), 'detected' (the detected events), or 'merge' (the file's events, plus the
    detected ones outside the time span the file's events cover). ``tolerance``:
    frames beyond which a pair counts as a disagreement, one number or one per detected
    source (default 1 frame for plate events, 3 for kinematic ones: the accuracy each
    reaches on the real trials, see ``docs/events.md``).
    """
    if prefer not in ("file", "detected", "merge"):
        raise SettingsError(f"prefer must be 'file', 'detected' or 'merge', not {prefer!r}")
    cmp = compare_events(file, detected, point_rate, window)
    tol = dict(DEFAULT_TOLERANCE) if tolerance is None else tolerance
    if isinstance(tol, dict):
        limit = cmp["source"].map(lambda src: tol.get(src, 1.0)).astype(float)
    else:
        limit = pd.Series(float(tol), index=cmp.index)
    if file:
        lo, hi = min(e.time for e in file), max(e.time for e in file)
        inside = cmp["detected_time_s"].between(lo, hi) | cmp["reference_time_s"].notna()
    else:
        lo = hi = np.nan
        inside = pd.Series(False, index=cmp.index)
    disagree = ((cmp["status"] == "paired") & (cmp["frame_difference"].abs() > limit)) | (
        (cmp["status"] != "paired") & inside & bool(file) & bool(detected)
    )
    cmp["disagree"] = disagree
    if prefer == "detected" or not file:
        events = list(detected)
    elif prefer == "file":
        events = list(file)
    else:
        events = list(file) + [e for e in detected if not (lo - window <= e.time <= hi + window)]
    events = sorted(events, key=lambda e: e.time)
    return EventChoice(events, cmp, prefer, int(disagree.sum()))


def trial_events(trial: Trial, prefer: str = "file", markers: GaitMarkers | None = None,
                 tolerance: float | dict | None = None, **assign_kwargs) -> EventChoice:
    """The trial's gait events: the file's, checked against detection (plates + Zeni).

    When the kinematic detection is impossible (no pelvis or foot markers) but the file
    or the plates give events, it is skipped and the reason is in ``notes``.
    """
    file = file_events(trial)
    notes = []
    plate = plate_events(trial, markers=markers, **assign_kwargs) if trial.force_plates else []
    try:
        kin = zeni_events(trial, markers)
    except DataError as err:
        if not (file or plate):
            raise
        kin = []
        notes.append(f"no kinematic events: {err.reason}")
    choice = resolve_events(file, combine_detected(plate, kin), trial.point_rate, prefer, tolerance)
    choice.notes = notes
    return choice
