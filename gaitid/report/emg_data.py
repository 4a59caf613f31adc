"""The report's EMG, gathered from the Results: each muscle's envelopes on the cycles and on-off.

Read from ``Result.emg`` (:class:`gaitid.emg.Emg`): the envelope of every used channel at each cycle's
101 points and the on-off table; pooled per muscle, unit and side over the report's trials (a session)
and channels. :mod:`gaitid.report.emg_pages` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaitid.core.vocabulary import CYCLE_POINTS
from gaitid.cycles.curves import PERCENT


@dataclass
class EmgMuscle:
    """One muscle's EMG in a unit, pooled over the report's trials and channels: per side the
    envelope of every cycle ``cycles[side]`` (n_cycles, 101) and whether the muscle is on at each %
    of it ``on[side]`` (n_cycles, 101) bool (from the on-off table), each cycle's foot off (% cycle)
    ``foot_off[side]`` (n_cycles,), ``channels[side]`` the channel labels drawn."""

    muscle: str
    unit: str
    cycles: dict[str, np.ndarray] = field(default_factory=dict)
    on: dict[str, np.ndarray] = field(default_factory=dict)
    foot_off: dict[str, np.ndarray] = field(default_factory=dict)
    channels: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class EmgData:
    """The report's EMG: ``muscles`` in the order the files list them; ``unused``: each channel not
    drawn with why ('trial: channel: flat ...' in a session); ``methods``: the on-off methods used."""

    muscles: list[EmgMuscle]
    unused: list[str]
    methods: list[str]


def _on_matrix(timing: dict, channel: str, numbers: np.ndarray) -> np.ndarray:
    """(len(numbers), 101) bool: the channel on at each % of each cycle (the cycles numbered
    ``numbers``, in that order); ``timing``: the on-off table's columns as arrays."""
    on = np.zeros((len(numbers), CYCLE_POINTS), bool)
    rows = (timing["channel"] == channel) & (timing["burst"] > 0)
    if rows.any() and len(numbers):
        order = np.argsort(numbers)
        pos = order[np.searchsorted(numbers[order], timing["cycle"][rows])]
        inside = (PERCENT >= timing["onset_percent"][rows][:, None]) & (PERCENT <= timing["offset_percent"][rows][:, None])
        np.logical_or.at(on, pos, inside)
    return on


def emg_data(results: list, names: list[str]) -> EmgData | None:
    """The EMG of ``results`` for the report (:class:`EmgData`); None when none has an EMG channel with
    a side and muscle (used, or not for a reason of its data: flat, saturated, mostly missing)."""
    found = [(r, n, e) for r, n in zip(results, names) if (e := getattr(r, "emg", None)) is not None and e.channels]
    if not any(c.side and c.muscle != c.channel for _, _, e in found for c in e.channels):
        return None  # only channels without a side or muscle (Vicon's EMG1...): a note says how to map them
    muscles: dict[tuple[str, str], EmgMuscle] = {}
    parts: dict[tuple[str, str, str], list] = {}
    unused, methods = [], []
    for r, name, emg in found:
        prefix = f"{name}: " if len(results) > 1 else ""
        unused += [f"{prefix}{c.channel}: {c.problem}" for c in emg.channels if c.problem]
        tm = emg.timing
        if len(tm):
            methods += [m for m in tm["method"].unique() if m not in methods]
        timing = {"channel": tm["channel"].to_numpy(object), "burst": tm["burst"].to_numpy(np.int64),
                  "cycle": tm["cycle"].to_numpy(np.int64), "onset_percent": tm["onset_percent"].to_numpy(float),
                  "offset_percent": tm["offset_percent"].to_numpy(float)}
        for c in emg.used:
            unit = emg.units[c.channel]
            muscles.setdefault((c.muscle, unit), EmgMuscle(c.muscle, unit))
            numbers = emg.cycle_numbers.get(c.side, np.empty(0, np.int64))
            foot_off = {k.index: k.foot_off_pct for k in r.cycles if k.side == c.side}
            parts.setdefault((c.muscle, unit, c.side), []).append(
                (emg.curves[c.channel], _on_matrix(timing, c.channel, numbers), c.channel,
                 np.array([foot_off.get(int(k), np.nan) for k in numbers], float)))
    for (muscle, unit, side), got in parts.items():
        m = muscles[muscle, unit]
        m.cycles[side] = np.concatenate([g[0] for g in got]).reshape(-1, CYCLE_POINTS)
        m.on[side] = np.concatenate([g[1] for g in got]).reshape(-1, CYCLE_POINTS)
        m.channels[side] = list(dict.fromkeys(g[2] for g in got))
        m.foot_off[side] = np.concatenate([g[3] for g in got])
    return EmgData(list(muscles.values()), unused, methods)
