"""Synthetic EMG with exact burst timing, added to any trial (the sample walk's files are unchanged).

Each channel is white Gaussian noise (seeded) whose amplitude is ``on`` inside the bursts and
``off`` outside: a burst is given in % of each gait cycle of its side (the cycles between the
trial's consecutive foot strikes of that side), so the truth of the on-off timing is exact per
cycle. The channels are added as analog channels at the trial's analog rate (or ``rate``), labelled
'Voltage.<L|R> <muscle>' as Vicon Nexus names them, unit V.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gaitid.core.trial import Analogs, Trial
from gaitid.core.vocabulary import FOOT_STRIKE


@dataclass(frozen=True)
class Burst:
    """One synthetic EMG channel: ``side`` ('Left'/'Right'), ``muscle`` label ('Rect', 'Tib Ant'...),
    ``bursts`` ((onset %, offset %), ...) of each cycle, amplitudes ``on`` and ``off`` (V RMS)."""

    side: str
    muscle: str
    bursts: tuple[tuple[float, float], ...]
    on: float = 1e-3
    off: float = 2e-5


def strike_times(trial: Trial, side: str) -> np.ndarray:
    """The file's foot strikes of ``side`` (s), sorted."""
    return np.sort([e.time for e in trial.events if e.label == FOOT_STRIKE and e.context == side])


def burst_mask(time: np.ndarray, strikes: np.ndarray, bursts) -> np.ndarray:
    """True where ``time`` lies in a burst (% of the cycle between consecutive ``strikes``)."""
    on = np.zeros(time.shape, bool)
    for a, b in zip(strikes[:-1], strikes[1:]):
        pct = 100.0 * (time - a) / (b - a)
        inside = (time >= a) & (time < b)
        for lo, hi in bursts:
            on |= inside & (pct >= lo) & (pct < hi)
    return on


def with_emg(trial: Trial, channels: list[Burst], seed: int = 0, rate: float | None = None) -> Trial:
    """A copy of ``trial`` with the EMG ``channels`` appended to its analogs (the trial's own channels
    kept). ``rate``: the EMG's rate when the trial has no analogs (a whole multiple of the point rate)."""
    old = trial.analogs
    rate = float(old.rate if old is not None else rate or 10 * trial.point_rate)
    n = old.values.shape[0] if old is not None else int(round(trial.n_frames * rate / trial.point_rate))
    time = (trial.first_frame - 1) / trial.point_rate + np.arange(n) / rate
    rng = np.random.default_rng(seed)
    cols = []
    for ch in channels:
        mask = burst_mask(time, strike_times(trial, ch.side), ch.bursts)
        cols.append(rng.standard_normal(n) * np.where(mask, ch.on, ch.off))
    labels = [f"Voltage.{c.side[0]} {c.muscle}" for c in channels]
    values = np.column_stack([old.values, *cols]) if old is not None else np.column_stack(cols)
    analogs = Analogs(rate, [*(old.labels if old else [])] + labels, [*(old.units if old else [])] + ["V"] * len(labels),
                      values, [*(getattr(old, "descriptions", None) or [""] * len(old.labels) if old else [])]
                      + [""] * len(labels))
    return replace(trial, analogs=analogs)
