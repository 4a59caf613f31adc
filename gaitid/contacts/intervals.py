"""Plate contact intervals: the periods each force plate is loaded, at its analog rate.

A contact is a period with vertical force (on the subject, +Z) above ``threshold`` (20 N) at the
analog rate; dips below the threshold shorter than ``min_gap`` (10 ms) are bridged, then contacts
shorter than ``min_duration`` (50 ms) are dropped as noise. Strike and off times are the
threshold crossings, linearly interpolated between analog samples. A contact already under way at
the first sample (or still on at the last) has no strike (off) time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.signal import runs
from gaitid.core.trial import PlateWrench, Trial
from gaitid.core.vocabulary import CONTACT_THRESHOLD_N, MIN_CONTACT_S


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
