"""The EMG stage: muscle activity on the gait cycle (docs/emg.md).

:func:`emg_stage` finds the trial's EMG channels (:mod:`gaitid.emg.channels`: labels, descriptions,
the lab's map), leaves out the bad ones with the reason (flat, saturated, mostly missing, no side or
muscle), runs the chain (:mod:`gaitid.emg.envelope`: offset, band-pass, rectification, linear
envelope, optional normalisation), reads each envelope at every cycle's 101 points of its side and
times its bursts (:mod:`gaitid.emg.timing`). Its :class:`Emg` is ``Result.emg``; its tables are
:func:`emg_table` (``<trial>_emg.csv``) and ``Emg.timing`` (``<trial>_emg_timing.csv``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from gaitid.core.settings import Settings
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import EMG_MIN_RATE_HZ, SIDES
from gaitid.emg.channels import EmgChannel, find_channels
from gaitid.emg.envelope import band_pass, channel_problem, linear_envelope
from gaitid.emg.timing import PERCENT, bursts, cycle_bursts, on_cycles, sharpened

__all__ = ["Emg", "EmgChannel", "emg_stage", "emg_table", "EMG_COLUMNS", "TIMING_COLUMNS"]

EMG_COLUMNS = ["side", "muscle", "channel", "cycle", "percent", "value", "unit"]
TIMING_COLUMNS = ["side", "muscle", "channel", "cycle", "burst", "onset_percent", "offset_percent", "threshold",
                  "unit", "method"]


@dataclass(frozen=True)
class Emg:
    """A trial's EMG on its cycles. ``channels``: every EMG channel found, in the file's order, with
    ``problem`` saying why one is not used; ``curves``: ``{channel: (n_cycles, 101)}`` the envelope of
    each used channel at its side's cycles' 0-100 % (the cycles in ``cycle_numbers[side]``, numbered as
    in the curves table), in ``units[channel]``; ``thresholds``: each used channel's on-off threshold
    (same unit); ``timing``: the on-off table (:data:`TIMING_COLUMNS`); ``rate`` Hz; ``warnings``:
    what the user should know; ``notes``: how it was processed."""

    rate: float = float("nan")
    channels: tuple[EmgChannel, ...] = ()
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    cycle_numbers: dict[str, np.ndarray] = field(default_factory=dict)
    timing: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TIMING_COLUMNS))
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def used(self) -> list[EmgChannel]:
        """The channels drawn and tabled (no problem)."""
        return [c for c in self.channels if not c.problem and c.channel in self.curves]


def _method(settings: Settings, edges: float | None) -> str:
    return (f"envelope >= min + {settings.emg_onset_fraction:g} x (max - min) over the side's cycles "
            f"(single threshold, Hodges & Bui 1996), bursts >= {1000 * settings.emg_min_burst_s:g} ms"
            + (f", edges on the {edges:g} Hz low-passed rectified signal" if edges else ""))


def _edge_cutoff(rate: float, settings: Settings) -> float | None:
    """The low-pass (Hz) of the signal the on-off edges are placed on: ``emg_onset_hz`` where it is
    above the envelope's and below the Nyquist frequency, else None (the envelope's own crossings)."""
    fc = settings.emg_onset_hz
    return fc if fc is not None and settings.emg_envelope_hz < fc < rate / 2 else None


def _reference(env: np.ndarray, channel: EmgChannel, in_cycles: np.ndarray, settings: Settings) -> tuple[float | None, str]:
    """The value the normalisation takes as 100 % of the channel's envelopes (None: not normalised),
    and their unit."""
    norm = settings.emg_normalise
    if norm == "peak":
        return (np.nanmax(env[in_cycles]) if in_cycles.any() else np.nanmax(env)), "% peak"
    if isinstance(norm, dict) and channel.channel in norm:
        return norm[channel.channel], "% reference"
    return None, channel.unit


def emg_stage(trial: Trial, cycles: list, settings: Settings) -> Emg | None:
    """The EMG stage (see the module docstring): None when the trial has no EMG channel."""
    found, notes = find_channels(trial, settings.emg_channels)
    if not found:
        return Emg(warnings=tuple(notes)) if notes else None
    analogs = trial.analogs
    rate = float(analogs.rate)
    raw = analogs.values
    checked = [c if c.problem else replace(c, problem=channel_problem(raw[:, c.column], c.unit)) for c in found]
    warnings = list(notes)
    unplaced = [c.channel for c in checked if not (c.side and c.muscle != c.channel)]
    if unplaced:  # not a fault of the data: the lab's map names them
        notes = [*notes, f"{len(unplaced)} EMG channel(s) without a side or muscle, not placed on the cycles: "
                         f"{', '.join(unplaced[:8])}{', ...' if len(unplaced) > 8 else ''} (name them with --emg "
                         f"\"{unplaced[0]}=L Rectus femoris\" or a map file: docs/emg.md)"]
    bad = [c for c in checked if c.problem and c.channel not in unplaced]
    if bad:
        warnings.append(f"{len(bad)} EMG channel(s) not used: " + "; ".join(f"{c.channel}: {c.problem}" for c in bad[:6])
                        + ("; ..." if len(bad) > 6 else ""))
    good = [c for c in checked if not c.problem]
    if rate < EMG_MIN_RATE_HZ and good:
        warnings.append(f"EMG sampled at {rate:g} Hz, below {EMG_MIN_RATE_HZ:g} Hz: most of surface EMG's 20-450 Hz "
                        f"band is lost, so the envelopes understate activity ({', '.join(c.channel for c in good[:6])})")
    if not good or (settings.emg_highpass_hz is not None and settings.emg_highpass_hz >= rate / 2):
        if good:
            warnings.append(f"EMG at {rate:g} Hz: the {settings.emg_highpass_hz:g} Hz high-pass is not below the "
                            f"Nyquist frequency; no envelope computed")
        return Emg(rate, tuple(checked), warnings=tuple(warnings), notes=tuple(notes))
    filtered, chain_notes = band_pass(raw[:, [c.column for c in good]], rate, settings)
    envelopes = linear_envelope(filtered, rate, settings)
    edge_hz = _edge_cutoff(rate, settings)
    fast = linear_envelope(filtered, rate, settings, edge_hz) if edge_hz else envelopes
    time = (trial.first_frame - 1) / trial.point_rate + np.arange(raw.shape[0]) / rate
    curves, units, thresholds, rows = {}, {}, {}, []
    numbers = {side: np.array([c.index for c in cycles if c.side == side], np.int64) for side in SIDES}
    method = _method(settings, edge_hz)
    for j, ch in enumerate(good):
        own = [c for c in cycles if c.side == ch.side]
        in_cycles = np.zeros(time.shape, bool)
        if own:
            in_cycles = (time >= own[0].start_time) & (time <= max(c.end_time for c in own))
        ref, units[ch.channel] = _reference(envelopes[:, j], ch, in_cycles, settings)
        env = envelopes[:, j] if ref is None else 100.0 * envelopes[:, j] / ref
        curves[ch.channel] = on_cycles(env, time, own) if own else np.empty((0, PERCENT.size))
        span = env[in_cycles] if in_cycles.any() else env
        lo, hi = np.nanmin(span), np.nanmax(span)
        thresholds[ch.channel] = thr = float(lo + settings.emg_onset_fraction * (hi - lo))
        if own:
            edges = bursts(env, time, thr, settings.emg_min_burst_s)
            if edge_hz:
                edges = sharpened(*edges, fast[:, j] if ref is None else 100.0 * fast[:, j] / ref, time, thr)
            pos, burst, on, off = cycle_bursts(*edges, own)
            rows.append((j, numbers[ch.side][pos], burst, on, off))
    return Emg(rate, tuple(checked), curves, units, thresholds, {s: n for s, n in numbers.items() if n.size},
               _timing_table(good, rows, thresholds, units, method), tuple(warnings), tuple([*notes, *chain_notes]))


def _timing_table(channels: list[EmgChannel], rows: list, thresholds: dict, units: dict, method: str) -> pd.DataFrame:
    """The on-off table from each channel's (position in ``channels``, cycle, burst, onset, offset)
    arrays: one DataFrame built once (a DataFrame per channel costs more than the filters)."""
    if not rows:
        return pd.DataFrame(columns=TIMING_COLUMNS)
    which = np.concatenate([np.full(len(r[1]), r[0]) for r in rows])
    text = {k: np.array([f(c) for c in channels], object)[which] for k, f in (
        ("side", lambda c: c.side), ("muscle", lambda c: c.muscle), ("channel", lambda c: c.channel),
        ("unit", lambda c: units[c.channel]))}
    return pd.DataFrame({"side": text["side"], "muscle": text["muscle"], "channel": text["channel"],
                         "cycle": np.concatenate([r[1] for r in rows]), "burst": np.concatenate([r[2] for r in rows]),
                         "onset_percent": np.concatenate([r[3] for r in rows]),
                         "offset_percent": np.concatenate([r[4] for r in rows]),
                         "threshold": np.array([thresholds[c.channel] for c in channels])[which],
                         "unit": text["unit"], "method": method})


def emg_table(emg: Emg | None) -> pd.DataFrame:
    """``<trial>_emg.csv``: one row per used channel, cycle and percent 0-100 (:data:`EMG_COLUMNS`),
    the envelope's ``value`` in ``unit``; cycles numbered as in the curves table."""
    if emg is None or not emg.used:
        return pd.DataFrame(columns=EMG_COLUMNS)
    parts = []
    for ch in emg.used:
        values = emg.curves[ch.channel]
        n = values.shape[0]
        if not n:
            continue
        parts.append(pd.DataFrame({"side": ch.side, "muscle": ch.muscle, "channel": ch.channel,
                                   "cycle": np.repeat(emg.cycle_numbers[ch.side], PERCENT.size),
                                   "percent": np.tile(PERCENT, n), "value": values.ravel(),
                                   "unit": emg.units[ch.channel]}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EMG_COLUMNS)
