"""EMG envelopes on the gait cycle (0-100 %) and on-off timing per cycle.

Timing: a single threshold on the linear envelope (Hodges & Bui 1996 compare such threshold
methods): the muscle is on while its envelope is at or above min + f x (max - min), the minimum and
maximum over the samples of its side's cycles, f = ``Settings.emg_onset_fraction`` (0.25); a burst
shorter than ``emg_min_burst_s`` (0.03 s) is dropped. The envelope's low-pass widens a burst (at 6 Hz
by about 25 ms each way at a quarter of the range), so each burst's edges are then placed where the
rectified signal low-passed at ``emg_onset_hz`` (50 Hz) crosses the same threshold inside it
(:func:`sharpened`): the envelope decides how many bursts there are, the less smoothed signal when
they start and stop. Crossings are placed between samples by linear interpolation, so onsets are not
quantised to the 1 % of the 0-100 % curves. A burst that began before a cycle has onset 0 % in it,
one lasting past its end offset 100 %.
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
    starts, stops = _crossing(envelope, time, up, threshold), _crossing(envelope, time, down, threshold)
    if on.size and on[0]:
        starts = np.concatenate([[time[0]], starts])
    if on.size and on[-1]:
        stops = np.concatenate([stops, [time[-1]]])
    keep = stops - starts >= min_duration
    return starts[keep], stops[keep]


def _crossing(signal: np.ndarray, time: np.ndarray, i: np.ndarray, threshold: float) -> np.ndarray:
    """The time (s) ``signal`` crosses ``threshold`` between samples ``i`` and ``i + 1``, linearly
    interpolated (the middle where either is NaN or they are equal)."""
    e0, e1 = signal[i], signal[i + 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(np.isfinite(e0) & np.isfinite(e1) & (e1 != e0), (threshold - e0) / (e1 - e0), 0.5)
    return time[i] + np.clip(frac, 0.0, 1.0) * (time[i + 1] - time[i])


def sharpened(onsets: np.ndarray, offsets: np.ndarray, fast: np.ndarray, time: np.ndarray,
              threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """The bursts ``onsets``-``offsets`` (s, found on the linear envelope) with each edge moved in to
    where ``fast`` (n,), the less smoothed envelope at ``time`` (n,), first reaches and last leaves
    ``threshold`` inside the burst (interpolated between samples); an edge where ``fast`` is already
    at or above the threshold, or a burst it never reaches, is kept as it was."""
    n = time.size
    if not onsets.size or n < 2:
        return onsets, offsets
    above = np.nan_to_num(fast, nan=-np.inf) >= threshold
    index = np.arange(n)
    following = np.minimum.accumulate(np.where(above, index, n)[::-1])[::-1]  # first sample >= i above
    preceding = np.maximum.accumulate(np.where(above, index, -1))  # last sample <= i above
    a = np.clip(np.searchsorted(time, onsets, side="left"), 0, n - 1)  # the burst's first and last samples
    b = np.clip(np.searchsorted(time, offsets, side="right") - 1, 0, n - 1)
    first, last = following[a], preceding[b]
    inside = (first <= last) & (first <= b) & (last >= a)
    move_on, move_off = inside & (first > a), inside & (last < b)
    on = np.where(move_on, _crossing(fast, time, np.clip(first - 1, 0, n - 2), threshold), onsets)
    off = np.where(move_off, _crossing(fast, time, np.clip(last, 0, n - 2), threshold), offsets)
    return np.maximum(on, onsets), np.minimum(off, offsets)


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
