"""Plate contact intervals: the periods each force plate is loaded, at its analog rate.

A contact is a period with vertical force (on the subject, +Z) above ``threshold`` (20 N) at the
analog rate; dips below the threshold shorter than ``min_gap`` (10 ms) are bridged, then contacts
shorter than ``min_duration`` (50 ms) are dropped as noise. Strike and off times are the
threshold crossings, linearly interpolated between analog samples. A contact already under way at
the first sample (or still on at the last) has no strike (off) time.

Two guards use the feet's markers (the model's ``[gait]`` heel, toe and ankle):

- :func:`unloaded_baselines`: a plate whose reading, on the frames no foot is near it (no heel,
  toe or ankle marker within :data:`NEAR_PLATE_M` of its outline and :data:`NEAR_HEIGHT_M` of its
  surface; at least :data:`BASELINE_MIN_S`), exceeds the contact threshold (99th percentile) with a
  median of :data:`BASELINE_MIN_N` or more and stays below :data:`UNLOADED_CAP_N` (more is a foot
  the outline does not place), has that reading's mean force subtracted (the plate's drift or
  offset would otherwise make contacts of its own and join two steps); the note gives the
  figures, and warns when what remains still crosses the threshold;
- :func:`split_at_swings`: whatever the force says, a contact ends when no foot is on the plate:
  every heel and toe marker either higher than its standing height above the plate's surface plus
  :data:`SWING_CLEARANCE_M` (its standing height: its 2nd percentile height above the lowest plate,
  at most :data:`STAND_MAX_M`), or lower than the surface by as much (on a lower step), or farther
  than :data:`ON_PLATE_M` from its outline (loose: a plate's corners may be off by tens of cm; the
  height decides), for :data:`SWING_MIN_S` or longer; the interval is cut there (its strike or off
  time then the cut's, ``ContactInterval.cut``). On a level walkway the other foot stands at the
  plate's height, so only both feet in the air (never in walking) would cut a contact.

Plates without corners (an OpenSim GRF file's virtual plates) are left to the force alone.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dataclasses import replace

from gaitid.contacts.geometry import inside_distances
from gaitid.core.signal import runs
from gaitid.core.trial import PlateWrench, Trial
from gaitid.core.vocabulary import CONTACT_THRESHOLD_N, COP_THRESHOLD_N, MIN_CONTACT_S, SIDES
from gaitid.model.gait_markers import GaitMarkers

NEAR_PLATE_M = 0.15  # a foot marker within this of a plate's outline (horizontally) is near it
NEAR_HEIGHT_M = 0.25  # ... and below this height above its surface
BASELINE_MIN_S = 0.2  # s of frames with no foot near a plate needed to judge its unloaded reading
BASELINE_MIN_N = 10.0  # N: an unloaded median reading smaller than this is left alone
UNLOADED_CAP_N = 100.0  # N: above this "unloaded" reading a foot is on the plate where the markers say none is
ON_PLATE_M = 0.5  # a heel/toe marker within this of a plate's outline may stand on it (loose: the height decides)
SWING_CLEARANCE_M = 0.05  # m above the marker's standing height on the plate: off the plate
STAND_MAX_M = 0.12  # a heel/toe marker standing on a surface is lower than this above it
SWING_MIN_S = 0.05  # s every heel and toe marker is off the plate before a contact is cut


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
    cut: str = ""  # '', 'strike', 'off' or 'both': which end :func:`split_at_swings` set

    @property
    def complete(self) -> bool:
        return bool(np.isfinite(self.strike_time) and np.isfinite(self.off_time))

    def span(self, t0: float, rate: float) -> tuple[float, float]:
        """(first, last) time (s) of the contact, using the record's ends for open sides."""
        a = self.strike_time if np.isfinite(self.strike_time) else t0 + self.start / rate
        b = self.off_time if np.isfinite(self.off_time) else t0 + (self.stop - 1) / rate
        return a, b


def contact_mask(fz: np.ndarray, rate: float, threshold: float = CONTACT_THRESHOLD_N,
                 min_duration: float = MIN_CONTACT_S, min_gap: float = 0.01) -> np.ndarray:
    """Samples in contact: ``fz > threshold`` with short gaps bridged and short contacts dropped.

    ``fz``: (n,) vertical force on the subject (N, +up). A run of NaN samples (a channel not
    measured) is part of the contact when the plate is loaded on both sides of it (or on its
    one side at the record's edge): a gap in the data does not split one foot placement into
    two; elsewhere NaN counts as no contact. The force there stays unknown (the foot's load is
    NaN on those frames, :mod:`gaitid.contacts.ownership`).
    """
    fz = np.asarray(fz, float)
    above = fz > threshold  # (NaN compares False)
    gap_a, gap_b = runs(np.isnan(fz))
    if gap_a.size:
        left = np.where(gap_a > 0, above[np.maximum(gap_a - 1, 0)], True)
        right = np.where(gap_b < fz.size, above[np.minimum(gap_b, fz.size - 1)], True)
        keep = left & right & ~((gap_a == 0) & (gap_b == fz.size))
        _set_runs(above, gap_a[keep], gap_b[keep], True)
    # bridge short dips inside a contact (not at the record's ends)
    starts, stops = runs(~above)
    short = ((stops - starts) / rate < min_gap) & (starts > 0) & (stops < above.size)
    _set_runs(above, starts[short], stops[short], True)
    starts, stops = runs(above)
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


def plate_intervals(wrench: PlateWrench, plate: int, t0: float, threshold: float = CONTACT_THRESHOLD_N,
                   min_duration: float = MIN_CONTACT_S, min_gap: float = 0.01) -> list[ContactInterval]:
    """Contacts on one plate from its analog-rate wrench; ``t0`` is the time (s) of sample 0."""
    fz = np.asarray(wrench.force[:, 2], float)
    rate = wrench.rate
    mask = contact_mask(fz, rate, threshold, min_duration, min_gap)
    out = []
    for a, b in zip(*runs(mask)):
        strike = np.nan if a == 0 else t0 + _crossing(fz, a - 1, a, threshold) / rate
        off = np.nan if b == fz.size else t0 + _crossing(fz, b - 1, b, threshold) / rate
        out.append(ContactInterval(plate, int(a), int(b), float(strike), float(off)))
    return out


def trial_intervals(trial: Trial, threshold: float = CONTACT_THRESHOLD_N, min_duration: float = MIN_CONTACT_S,
                   min_gap: float = 0.01) -> list[ContactInterval]:
    """Contacts on every force plate of the trial, at the analog rate, sorted by time."""
    t0 = (trial.first_frame - 1) / trial.point_rate
    out = []
    for fp in trial.force_plates:
        out += plate_intervals(fp.analog, fp.index, t0, threshold, min_duration, min_gap)
    rates = {fp.index: fp.analog.rate for fp in trial.force_plates}
    return sorted(out, key=lambda c: (c.start / rates[c.plate], c.plate))


def _feet_points(trial: Trial, markers: GaitMarkers, roles: tuple[str, ...]) -> np.ndarray:
    """(n, m, 3) m, lab: the feet's markers of ``roles`` (both feet), NaN where missing."""
    labels = [getattr(markers.foot(s), r) for s in SIDES for r in roles]
    return np.stack([trial.point(lab) if trial.has_points(lab) else np.full((trial.n_frames, 3), np.nan)
                     for lab in labels], axis=1)


def _surface(fp) -> float:
    return float(np.mean(fp.corners[:, 2]))


def unloaded_baselines(trial: Trial, markers: GaitMarkers, threshold: float = CONTACT_THRESHOLD_N
                       ) -> tuple[Trial, list[str]]:
    """The trial with each plate's unloaded reading subtracted where it crosses the contact
    ``threshold`` on frames no foot is near the plate (module docstring), and a note per plate
    saying what was read and done (N, s). The trial itself when no plate needs it."""
    if not trial.force_plates:
        return trial, []
    pts = _feet_points(trial, markers, ("heel", "toe", "ankle"))
    n, m = pts.shape[:2]
    xy = pts[:, :, :2].reshape(-1, 2)
    notes, plates = [], list(trial.force_plates)
    real = [k for k, fp in enumerate(plates) if np.isfinite(fp.corners).all()]  # not an OpenSim GRF's virtual plate
    dist = inside_distances(xy, [plates[k].corners for k in real]) if real else None  # every plate at once
    for k, fp in enumerate(plates):
        if k not in real:
            continue
        near_xy = dist[:, real.index(k)].reshape(n, m) >= -NEAR_PLATE_M
        low = pts[:, :, 2] - _surface(fp) < NEAR_HEIGHT_M
        unknown = ~np.isfinite(pts).all(axis=2)
        free = ~(unknown | (near_xy & low)).any(axis=1)  # (n,) point frames with no foot near
        w = fp.analog
        spf = max(int(round(w.rate / trial.point_rate)), 1)
        samples = np.repeat(free, spf)[: w.force.shape[0]]
        if samples.size < w.force.shape[0]:
            samples = np.concatenate([samples, np.zeros(w.force.shape[0] - samples.size, bool)])
        fz = w.force[samples, 2]
        fz = fz[np.isfinite(fz)]
        if fz.size < BASELINE_MIN_S * w.rate:
            continue
        lo, high, hi = np.percentile(fz, [0.5, 99.0, 99.5])
        if not (high > threshold and abs(np.median(fz)) >= BASELINE_MIN_N and hi < UNLOADED_CAP_N):
            continue  # reads below the threshold unloaded; or loaded where the markers place no foot (a body
            # weight: the outline does not place the feet, e.g. an OpenSim GRF file's nominal plates)
        level = np.nanmean(w.force[samples], axis=0)  # (3,) N: the unloaded plate's mean force
        rest = fz - level[2]
        note = (f"force plate {fp.index} reads {lo:.0f} to {hi:.0f} N (mean {level[2]:+.1f} N) over "
                f"{fz.size / w.rate:.2f} s with no foot near it, above the {threshold:g} N contact threshold: "
                f"its unloaded mean force ({level[0]:+.1f}, {level[1]:+.1f}, {level[2]:+.1f}) N subtracted")
        spread = float(np.percentile(np.abs(rest), 99.5))
        if spread > threshold:
            note += (f"; it still varies by +-{spread:.0f} N unloaded, more than the threshold: its contacts may "
                     f"join steps; give contact_threshold_n above {spread:.0f} N (--contact-threshold)")
        plates[k] = replace(fp, analog=_minus(w, level), point=_minus(fp.point, level))
        notes.append(note)
    if not notes:
        return trial, []
    return replace(trial, force_plates=plates, warnings=[*trial.warnings, *notes]), notes


def _minus(w: PlateWrench, level: np.ndarray) -> PlateWrench:
    """The wrench with ``level`` (3,) N taken off its force; its centre of pressure NaN where |Fz| is
    then below the COP threshold."""
    force = w.force - level
    cop = np.where((np.abs(force[:, 2]) >= COP_THRESHOLD_N)[:, None], w.cop, np.nan)
    return replace(w, force=force, cop=cop)


def split_at_swings(trial: Trial, intervals: list[ContactInterval], markers: GaitMarkers
                    ) -> list[ContactInterval]:
    """The intervals cut where no foot is on their plate (module docstring); pieces shorter than
    ``MIN_CONTACT_S`` dropped. Intervals of frames with a foot marker missing are not cut there."""
    if not intervals:
        return intervals
    pts = _feet_points(trial, markers, ("heel", "toe"))
    n, m = pts.shape[:2]
    xy = pts[:, :, :2].reshape(-1, 2)
    plates = {fp.index: fp for fp in trial.force_plates}
    t0 = (trial.first_frame - 1) / trial.point_rate
    floor = min((_surface(fp) for fp in trial.force_plates if np.isfinite(fp.corners).all()), default=0.0)
    z = pts[:, :, 2]
    seen = np.isfinite(z)
    # each marker's height above the surface it stands on: its 2nd percentile above the lowest plate
    stand = np.array([np.percentile(z[seen[:, k], k], 2) - floor if seen[:, k].sum() >= 3 else np.nan
                      for k in range(m)])
    stand = np.clip(stand, 0.0, STAND_MAX_M)
    real = [p for p, fp in plates.items() if np.isfinite(fp.corners).all()]
    dist = inside_distances(xy, [plates[p].corners for p in real]) if real else None  # every plate at once
    off: dict[int, np.ndarray] = {}
    out = []
    for iv in intervals:
        fp = plates[iv.plate]
        if iv.plate not in real:  # a virtual plate (OpenSim GRF): no outline to judge by
            out.append(iv)
            continue
        if iv.plate not in off:
            near = dist[:, real.index(iv.plate)].reshape(n, m) >= -ON_PLATE_M
            height = z - _surface(fp)
            on = near & (height >= -SWING_CLEARANCE_M) & (height <= stand + SWING_CLEARANCE_M)
            off[iv.plate] = ~(on | ~seen).any(axis=1)  # (n,) no foot on the plate
        rate = fp.analog.rate
        spf = max(int(round(rate / trial.point_rate)), 1)
        away = np.repeat(off[iv.plate], spf)[iv.start:iv.stop]
        a_, b_ = runs(away)
        long = (b_ - a_) >= SWING_MIN_S * rate
        if not long.any():
            out.append(iv)
            continue
        edges = [iv.start, *np.column_stack([iv.start + a_[long], iv.start + b_[long]]).ravel().tolist(), iv.stop]
        for a, b in zip(edges[::2], edges[1::2]):
            if (b - a) / rate < MIN_CONTACT_S:
                continue
            strike = iv.strike_time if a == iv.start else t0 + a / rate
            stop_t = iv.off_time if b == iv.stop else t0 + b / rate
            cut = ("strike" if a != iv.start else "") + ("off" if b != iv.stop else "")
            out.append(ContactInterval(iv.plate, int(a), int(b), float(strike), float(stop_t),
                                       cut={"strikeoff": "both"}.get(cut, cut)))
    return out


def cut_notes(intervals: list[ContactInterval]) -> list[str]:
    """One line per plate whose contacts :func:`split_at_swings` cut, with the cut times (s)."""
    by_plate: dict[int, list[str]] = {}
    for iv in intervals:
        if iv.cut in ("strike", "both"):
            by_plate.setdefault(iv.plate, []).append(f"{iv.strike_time:.2f} s")
        if iv.cut in ("off", "both"):
            by_plate.setdefault(iv.plate, []).append(f"{iv.off_time:.2f} s")
    return [f"force plate {p}: loaded while no foot was on it (every heel and toe marker more than "
            f"{100 * SWING_CLEARANCE_M:.0f} cm above its standing height over the plate's surface, or below it, for "
            f"{1000 * SWING_MIN_S:.0f} ms or more): "
            f"its contact cut at {', '.join(sorted(set(times)))}, so one foot's two steps are two contacts "
            f"(a drifting plate, or another body on it)" for p, times in sorted(by_plate.items())]
