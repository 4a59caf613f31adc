"""EMG envelopes on the gait cycle (0-100 %) and on-off timing per cycle.

Timing: a single threshold on the linear envelope (Hodges & Bui 1996 compare such threshold
methods): the muscle is on while its envelope is at or above min + f x (max - min), the minimum and
maximum over the samples of its side's cycles, f = ``Settings.emg_onset_fraction`` (0.25); a burst
shorter than ``emg_min_burst_s`` (0.03 s) is dropped. Crossings are placed between samples by linear
interpolation, so onsets are not quantised to the 1 % of the 0-100 % curves. A burst that began
before a cycle has onset 0 % in it, one lasting past its end offset 100 %.
"""

from __future__ import annotations

import numpy as np

PERCENT = np.linspace(0.0, 100.0, 101)


def cycle_instants(cycles) -> np.ndarray:
    """The 101 instants (s, file clock) of each cycle: (n_cycles, 101)."""
    return np.array([np.linspace(c.start_time, c.end_time, PERCENT.size) for c in cycles]).reshape(-1, PERCENT.size)


def on_cycles(envelope: np.ndarray, time: np.ndarray, cycles) -> np.ndarray:
    """``envelope`` (n,) at ``time`` (n,) read at every cycle's 101 instants: (n_cycles, 101); NaN
    outside the samples."""
    at = cycle_instants(cycles)
    return np.interp(at.ravel(), time, envelope, left=np.nan, right=np.nan).reshape(at.shape)


def bursts(envelope: np.ndarray, time: np.ndarray, threshold: float, min_duration: float) -> tuple[np.ndarray, np.ndarray]:
    """Onset and offset times (s) of the runs of ``envelope`` >= ``threshold`` lasting at least
    ``min_duration`` s, the crossings interpolated between samples; a run open at an end of the
    samples starts or stops there. NaN samples count as off."""
    on = np.nan_to_num(envelope, nan=-np.inf) >= threshold
    d = np.diff(on.astype(np.int8))
    up, down = np.flatnonzero(d == 1), np.flatnonzero(d == -1)  # crossing between sample i and i + 1

    def cross(i):
        e0, e1 = envelope[i], envelope[i + 1]
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(np.isfinite(e0) & np.isfinite(e1) & (e1 != e0), (threshold - e0) / (e1 - e0), 0.5)
        return time[i] + np.clip(frac, 0.0, 1.0) * (time[i + 1] - time[i])

    starts, stops = cross(up), cross(down)
    if on.size and on[0]:
        starts = np.concatenate([[time[0]], starts])
    if on.size and on[-1]:
        stops = np.concatenate([stops, [time[-1]]])
    keep = stops - starts >= min_duration
    return starts[keep], stops[keep]


def cycle_bursts(onsets: np.ndarray, offsets: np.ndarray, cycles) -> tuple[np.ndarray, ...]:
    """Each cycle's bursts: (cycle position, burst number from 1, onset %, offset %) arrays, one
    entry per burst overlapping a cycle, clipped to it; a cycle without burst has one entry with
    burst 0 and NaN onset and offset. ``onsets``/``offsets`` sorted, not overlapping."""
    start = np.array([c.start_time for c in cycles], float)
    end = np.array([c.end_time for c in cycles], float)
    first = np.searchsorted(offsets, start, side="right")  # the first burst ending after the cycle's start
    last = np.searchsorted(onsets, end, side="left")  # one past the last burst starting before its end
    count = np.maximum(last - first, 0)
    slots = np.maximum(count, 1)
    pos = np.repeat(np.arange(len(cycles)), slots)
    k = np.arange(slots.sum()) - np.repeat(np.cumsum(slots) - slots, slots)  # burst index within its cycle
    has = k < count[pos]
    idx = np.where(has, first[pos] + k, 0)
    span = end[pos] - start[pos]
    on = np.where(has, 100.0 * (np.maximum(onsets[idx] if onsets.size else 0.0, start[pos]) - start[pos]) / span, np.nan)
    off = np.where(has, 100.0 * (np.minimum(offsets[idx] if offsets.size else 0.0, end[pos]) - start[pos]) / span,
                   np.nan)
    return pos, np.where(has, k + 1, 0), on, off
