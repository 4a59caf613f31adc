"""Gait cycles and their time normalisation (0-100 %).

A cycle runs from a foot strike to the next foot strike of the same foot with
exactly one foot off of that foot inside (:func:`gait_cycles`). It is *kinetic*
when its stance (strike to foot off) is one valid plate contact of that foot
(:class:`gaitid.contacts.FootContact`, strike and off within ``tolerance`` = 50 ms of
the cycle's); every cycle is *kinematic* (markers only).

Time normalisation (:func:`time_normalise`): linear interpolation in time at 101
points, 0-100 % of the cycle (or of the stance with ``stance_only``), from the
event times themselves (sub-frame), NaN where the curve is NaN.

Tables are pandas DataFrames in a tidy long format:

- curves (:func:`cycle_curves`): ``side, cycle, kinetic, variable, component,
  percent, value, unit`` (``component`` 'X', 'Y', 'Z' or '' for a scalar curve;
  ``percent`` of the cycle or of the stance);
- cycles (:func:`cycles_table`): one row per cycle.

Discrete parameters per cycle: :mod:`gaitid.parameters`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy.interpolate import interp1d

from gaitid.contacts import FootContact
from gaitid.errors import DataError
from gaitid.trial import Event, Trial
from gaitid.vocabulary import CYCLE_POINTS, FOOT_OFF, FOOT_STRIKE, SIDES


N_POINTS = CYCLE_POINTS
COMPONENTS = ("X", "Y", "Z")


@dataclass
class Cycle:
    """One gait cycle of one foot; times in s on the file clock (NaN when absent).

    ``index``: order of the cycle among that side's cycles (0-based). ``kinetic``:
    its stance is one valid plate contact; ``reason`` says why not ('' if kinetic).
    ``plates``: the plates of that contact.
    """

    side: str
    index: int
    start_time: float
    foot_off_time: float
    end_time: float
    opposite_off_time: float = np.nan
    opposite_strike_time: float = np.nan
    kinetic: bool = False
    reason: str = ""
    plates: tuple[int, ...] = ()

    @property
    def stride_time(self) -> float:
        return self.end_time - self.start_time

    def percent(self, t: float) -> float:
        """Time t as % of this cycle."""
        return 100.0 * (t - self.start_time) / self.stride_time

    @property
    def foot_off_pct(self) -> float:
        return self.percent(self.foot_off_time)


def gait_cycles(events: list[Event], contacts: list[FootContact] | None = None, tolerance: float = 0.05) -> list[Cycle]:
    """Cycles of both feet from foot strikes and foot offs (see the module docstring).

    ``contacts``: :class:`gaitid.contacts.FootContact` list, to mark kinetic cycles;
    None marks every cycle kinematic only.
    """
    out = []
    for side in SIDES:
        own = sorted((e for e in events if e.context == side), key=lambda e: e.time)
        opp = sorted((e for e in events if e.context != side and e.context in SIDES), key=lambda e: e.time)
        strikes = [e.time for e in own if e.label == FOOT_STRIKE]
        offs = [e.time for e in own if e.label == FOOT_OFF]
        k = 0
        for s0, s1 in zip(strikes[:-1], strikes[1:]):
            inside = [t for t in offs if s0 < t < s1]
            if len(inside) != 1:
                continue
            fo = inside[0]
            o_off = next((e.time for e in opp if e.label == FOOT_OFF and s0 <= e.time < s1), np.nan)
            o_str = next((e.time for e in opp if e.label == FOOT_STRIKE and s0 < e.time < s1
                          and not (e.time < o_off)), np.nan)
            c = Cycle(side, k, s0, fo, s1, o_off, o_str)
            _mark_kinetic(c, contacts, tolerance)
            out.append(c)
            k += 1
    return sorted(out, key=lambda c: (c.start_time, c.side))


def cycles_table(cycles: list[Cycle]) -> pd.DataFrame:
    """One row per cycle: side, cycle, start_time_s, foot_off_time_s, end_time_s, foot_off_pct,
    opposite_off_pct, opposite_strike_pct, kinetic, plates, reason."""
    cols = ["side", "cycle", "start_time_s", "foot_off_time_s", "end_time_s", "foot_off_pct", "opposite_off_pct",
            "opposite_strike_pct", "kinetic", "plates", "reason"]
    rows = [(c.side, c.index, c.start_time, c.foot_off_time, c.end_time, c.foot_off_pct,
             c.percent(c.opposite_off_time), c.percent(c.opposite_strike_time), c.kinetic,
             ",".join(str(p) for p in c.plates), c.reason) for c in cycles]
    return pd.DataFrame(rows, columns=cols)


def _mark_kinetic(c: Cycle, contacts, tolerance: float) -> None:
    if contacts is None:
        c.reason = "no plate contacts given"
        return
    best = None
    for fc in contacts:
        if c.side not in fc.feet and fc.side != c.side:
            continue
        a = fc.strike_time if np.isfinite(fc.strike_time) else -np.inf
        b = fc.off_time if np.isfinite(fc.off_time) else np.inf
        if a <= c.foot_off_time and c.start_time <= b:  # overlaps the stance
            best = fc if best is None else best
            if abs(a - c.start_time) <= tolerance and abs(b - c.foot_off_time) <= tolerance:
                best = fc
                break
    if best is None:
        c.reason = "stance not on a force plate"
        return
    names = ",".join(str(p) for p in best.plates)
    c.plates = best.plates
    if not best.valid:
        c.reason = f"stance on plate {names} invalid: {best.reason}"
        return
    if not (abs(best.strike_time - c.start_time) <= tolerance and abs(best.off_time - c.foot_off_time) <= tolerance):
        c.reason = (f"plate {names} contact ({best.strike_time:.3f}-{best.off_time:.3f} s) does not match the "
                    f"stance ({c.start_time:.3f}-{c.foot_off_time:.3f} s) within {1000 * tolerance:.0f} ms")
        return
    c.kinetic = True


def time_normalise(values: np.ndarray, time: np.ndarray, start: float, end: float, n_points: int = N_POINTS) -> np.ndarray:
    """Values (n, ...) sampled at ``time`` (n,), resampled linearly at ``n_points`` instants
    evenly spaced from ``start`` to ``end`` (s). NaN outside the data or next to NaN samples."""
    values = np.asarray(values, float)
    time = np.asarray(time, float)
    if values.shape[0] != time.shape[0]:
        raise DataError(f"curve has {values.shape[0]} samples but the time base {time.shape[0]}")
    if not end > start:
        raise DataError(f"cycle end {end} s is not after its start {start} s")
    f = interp1d(time, values, axis=0, bounds_error=False, fill_value=np.nan, assume_sorted=True)
    return f(np.linspace(start, end, n_points))


def components(a: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """A curve's columns with their names: [('', a)] for (n,), [('X', a[:, 0]), ...] for (n, k<=3)."""
    a = np.asarray(a, float)
    if a.ndim == 1:
        return [("", a)]
    if a.ndim == 2 and a.shape[1] <= 3:
        return [(COMPONENTS[k], a[:, k]) for k in range(a.shape[1])]
    raise DataError(f"curve of shape {a.shape}: expected (n,) or (n, 3)")


def cycle_curves(curves: Mapping[str, Mapping[str, np.ndarray]], time: np.ndarray, cycles: list[Cycle],
                 units: Mapping[str, str] | None = None, stance_only: bool = False,
                 n_points: int = N_POINTS) -> pd.DataFrame:
    """Time-normalised curves of every cycle, tidy long table (see the module docstring).

    ``curves``: {side: {variable: (n,) or (n, 3) array on ``time``}}; ``units``: {variable: unit}.
    """
    units = units or {}
    pct = np.linspace(0.0, 100.0, n_points)
    keys, values = [], []
    for c in cycles:
        end = c.foot_off_time if stance_only else c.end_time
        for name, arr in curves.get(c.side, {}).items():
            comps = components(arr)
            v = time_normalise(np.column_stack([col for _, col in comps]), time, c.start_time, end, n_points)
            for k, (comp, _) in enumerate(comps):
                keys.append((c.side, c.index, c.kinetic, name, comp, units.get(name, "")))
                values.append(v[:, k])
    cols = ["side", "cycle", "kinetic", "variable", "component", "percent", "value", "unit"]
    if not keys:
        return pd.DataFrame(columns=cols)
    meta = pd.DataFrame(keys, columns=["side", "cycle", "kinetic", "variable", "component", "unit"])
    df = meta.loc[meta.index.repeat(n_points)].reset_index(drop=True)
    df["percent"] = np.tile(pct, len(keys))
    df["value"] = np.concatenate(values)
    return df[cols]


def model_output_curves(trial: Trial, kinds: tuple[str, ...] = ("angle", "moment", "power", "force"),
                        ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """Plug-in Gait outputs stored in the trial as ``({side: {name: values}}, {name: unit})``,
    the 'L'/'R' prefix removed (``LAnkleMoment`` -> Left ``AnkleMoment``)."""
    curves: dict[str, dict[str, np.ndarray]] = {s: {} for s in SIDES}
    units = {}
    for label, mo in trial.model_outputs.items():
        if mo.kind not in kinds or len(label) < 2 or label[0] not in "LR":
            continue
        side = "Left" if label[0] == "L" else "Right"
        curves[side][label[1:]] = mo.values
        units[label[1:]] = mo.unit
    return curves, units
