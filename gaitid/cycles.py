"""Gait cycles, time normalisation and discrete gait parameters.

A cycle runs from a foot strike to the next foot strike of the same foot with
exactly one foot off of that foot inside (:func:`gait_cycles`). It is *kinetic*
when its stance (strike to foot off) is one valid plate contact of that foot
(:class:`gaitid.plates.FootContact`, strike and off within ``tolerance`` = 50 ms of
the cycle's); every cycle is *kinematic* (markers only).

Time normalisation (:func:`normalise`): linear interpolation in time at 101
points, 0-100 % of the cycle (or of the stance with ``stance_only``), from the
event times themselves (sub-frame), NaN where the curve is NaN.

Tables are pandas DataFrames in a tidy long format:

- curves (:func:`cycle_curves`): ``side, cycle, kinetic, variable, component,
  percent, value, unit`` (``component`` 'X', 'Y', 'Z' or '' for a scalar curve;
  ``percent`` of the cycle or of the stance);
- parameters (:func:`spatiotemporal_parameters`, :func:`kinetic_parameters`):
  ``side, cycle, parameter, variable, component, value, unit, percent`` (``percent``
  the timing in % of the cycle, NaN when not a timed peak);
- :func:`summarise`: mean, ``sd`` (sample SD, ddof 1) and ``n`` across cycles,
  per side (or pooled for the session with ``per_side=False``; concatenate several
  trials' tables first, with a ``trial`` column, for a session).

Spatio-temporal parameters (Vicon / Perry definitions): stride time (s) strike to
strike; cadence (steps/min) = 120 / stride time; stride length (m) = heel
displacement between the two strikes along the direction of progression; walking
speed (m/s) = stride length / stride time; step time (s) and step length (m) from
the opposite foot's strike inside the cycle to the cycle's closing strike (the step
ending the cycle; its length is the distance along the direction of progression
from the opposite heel at its strike to this heel at the closing strike); stance and swing (% of cycle);
opposite foot off and strike (%); double and single support (%). Over a treadmill
the lengths measure foot displacement over the belt, not walking distance.

Kinetic parameters: for every moment curve (name ending in 'Moment') and component,
its maximum and minimum over the cycle and their timing (% cycle). Power bursts of
the joint power (for an (n, 3) power curve the components are added: Plug-in Gait
stores the total in Z with X = Y = 0), named after Winter (1991) and Eng & Winter
(1995, J Biomech 28:753), searched in windows scaled by the foot-off percentage
``FO`` (about 60 %): extremum of the expected sign, NaN when the curve has none
of that sign in the window.

========  ======  ===========================  ==================================
burst     sign    window (% cycle)             meaning
========  ======  ===========================  ==================================
A2        max +   FO/2 .. FO+5                 ankle plantarflexor push-off
K1        min -   0 .. 0.3 FO                  knee extensors absorb, loading response
K2        max +   0.15 FO .. 0.6 FO            knee extensors generate, mid-stance
K3        min -   0.7 FO .. FO+0.25(100-FO)    knee extensors absorb, pre-swing
K4        min -   FO+0.5(100-FO) .. 100        knee flexors absorb, terminal swing
H1        max +   0 .. 0.5 FO                  hip extensors generate, early stance
H2        min -   0.3 FO .. FO                 hip flexors absorb, mid/late stance
H3        max +   0.75 FO .. FO+0.5(100-FO)    hip flexors generate, pull-off
========  ======  ===========================  ==================================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd
from scipy.interpolate import interp1d

from gaitid.errors import DataError, SettingsError
from gaitid.events import FOOT_OFF, FOOT_STRIKE, SIDES, GaitMarkers, _markers, progression_direction
from gaitid.trial import Event, Trial

N_POINTS = 101
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


def gait_cycles(events: list[Event], contacts=None, tolerance: float = 0.05) -> list[Cycle]:
    """Cycles of both feet from foot strikes and foot offs (see the module docstring).

    ``contacts``: :class:`gaitid.plates.FootContact` list, to mark kinetic cycles;
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


# --------------------------------------------------------------------------- normalisation


def normalise(values: np.ndarray, time: np.ndarray, start: float, end: float, n_points: int = N_POINTS) -> np.ndarray:
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


def _components(a: np.ndarray) -> list[tuple[str, np.ndarray]]:
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
            comps = _components(arr)
            v = normalise(np.column_stack([col for _, col in comps]), time, c.start_time, end, n_points)
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


# --------------------------------------------------------------------------- parameters

_PARAM_COLS = ["side", "cycle", "parameter", "variable", "component", "value", "unit", "percent"]


def _row(c: Cycle, parameter: str, value: float, unit: str, variable: str = "", component: str = "",
         percent: float = np.nan) -> dict:
    return dict(side=c.side, cycle=c.index, parameter=parameter, variable=variable, component=component,
                value=float(value), unit=unit, percent=float(percent))


def _at(x: np.ndarray, time: np.ndarray, t: float) -> np.ndarray:
    """Marker position (3,) at time t (linear interpolation), NaN outside."""
    if not np.isfinite(t):
        return np.full(3, np.nan)
    return interp1d(time, x, axis=0, bounds_error=False, fill_value=np.nan)(t)


def spatiotemporal_parameters(trial: Trial, cycles: list[Cycle], markers: GaitMarkers | None = None,
                              ) -> pd.DataFrame:
    """Cadence, speed, stride/step lengths and times, stance/swing and support phases per cycle."""
    markers = _markers(trial, markers)
    t = trial.time
    try:
        prog_dir = progression_direction(trial, markers).direction_lab
    except DataError:  # no pelvis: the direction of each stride's heel displacement instead
        prog_dir = None
    heel = {s: trial.point(markers.foot(s).heel) for s in SIDES if trial.has_points(markers.foot(s).heel)}
    rows = []
    for c in cycles:
        T = c.stride_time
        other = "Right" if c.side == "Left" else "Left"
        if prog_dir is not None:
            d = _at(prog_dir, t, 0.5 * (c.start_time + c.end_time))
        elif c.side in heel:
            d = _at(heel[c.side], t, c.end_time) - _at(heel[c.side], t, c.start_time)
            d[2] = 0.0
        else:
            d = np.full(3, np.nan)
        d = d / np.linalg.norm(d) if np.all(np.isfinite(d)) else d
        stride_len = step_len = np.nan
        if c.side in heel:
            stride_len = float(np.dot(_at(heel[c.side], t, c.end_time) - _at(heel[c.side], t, c.start_time), d))
            if other in heel:
                step_len = float(np.dot(_at(heel[c.side], t, c.end_time)
                                        - _at(heel[other], t, c.opposite_strike_time), d))
        step_time = c.end_time - c.opposite_strike_time
        stance = c.foot_off_pct
        o_off = c.percent(c.opposite_off_time)
        o_str = c.percent(c.opposite_strike_time)
        rows += [
            _row(c, "stride_time", T, "s"),
            _row(c, "cadence", 120.0 / T, "steps/min"),
            _row(c, "stride_length", stride_len, "m"),
            _row(c, "walking_speed", stride_len / T, "m/s"),
            _row(c, "step_time", step_time, "s"),
            _row(c, "step_length", step_len, "m"),
            _row(c, "stance", stance, "%"),
            _row(c, "swing", 100.0 - stance, "%"),
            _row(c, "opposite_foot_off", o_off, "%"),
            _row(c, "opposite_foot_strike", o_str, "%"),
            _row(c, "double_support", o_off + (stance - o_str), "%"),
            _row(c, "single_support", o_str - o_off, "%"),
        ]
    return pd.DataFrame(rows, columns=_PARAM_COLS)


# (burst, joint power variable, sign, window(FO) -> (lo, hi) in % cycle)
BURSTS = (
    ("A2", "AnklePower", +1, lambda fo: (fo / 2, fo + 5)),
    ("K1", "KneePower", -1, lambda fo: (0.0, 0.3 * fo)),
    ("K2", "KneePower", +1, lambda fo: (0.15 * fo, 0.6 * fo)),
    ("K3", "KneePower", -1, lambda fo: (0.7 * fo, fo + 0.25 * (100 - fo))),
    ("K4", "KneePower", -1, lambda fo: (fo + 0.5 * (100 - fo), 100.0)),
    ("H1", "HipPower", +1, lambda fo: (0.0, 0.5 * fo)),
    ("H2", "HipPower", -1, lambda fo: (0.3 * fo, fo)),
    ("H3", "HipPower", +1, lambda fo: (0.75 * fo, fo + 0.5 * (100 - fo))),
)


def power_burst(power: np.ndarray, pct: np.ndarray, sign: int, lo: float, hi: float) -> tuple[float, float]:
    """(value, timing %) of the extremum of the given sign of a normalised power curve in [lo, hi] %,
    (NaN, NaN) when the curve has no value of that sign there."""
    w = (pct >= lo) & (pct <= hi) & np.isfinite(power)
    if not w.any():
        return np.nan, np.nan
    idx = np.flatnonzero(w)
    k = idx[np.argmax(sign * power[idx])]
    if sign * power[k] <= 0:
        return np.nan, np.nan
    return float(power[k]), float(pct[k])


def kinetic_parameters(curves: Mapping[str, Mapping[str, np.ndarray]], time: np.ndarray, cycles: list[Cycle],
                       units: Mapping[str, str] | None = None, kinetic_only: bool = True,
                       n_points: int = N_POINTS) -> pd.DataFrame:
    """Peak moments (max/min per component, with timing) and the A2, K1-K4, H1-H3 power bursts.

    ``curves``: {side: {variable: array}}, e.g. from :func:`model_output_curves`.
    ``kinetic_only``: only the kinetic cycles (default).
    """
    units = units or {}
    pct = np.linspace(0.0, 100.0, n_points)
    rows = []
    for c in cycles:
        if kinetic_only and not c.kinetic:
            continue
        side_curves = curves.get(c.side, {})
        for name, arr in side_curves.items():
            if not name.endswith("Moment"):
                continue
            for comp, col in _components(arr):
                v = normalise(col, time, c.start_time, c.end_time, n_points)
                if not np.isfinite(v).any():
                    continue
                for kind, k in (("max", np.nanargmax(v)), ("min", np.nanargmin(v))):
                    rows.append(_row(c, f"{name} {kind}", v[k], units.get(name, ""), name, comp, pct[k]))
        fo = c.foot_off_pct
        for burst, name, sign, window in BURSTS:
            if name not in side_curves:
                continue
            p = np.asarray(side_curves[name], float)
            if p.ndim == 2:
                p = np.where(np.isnan(p).all(axis=1), np.nan, np.nansum(p, axis=1))
            v = normalise(p, time, c.start_time, c.end_time, n_points)
            lo, hi = window(fo)
            val, at = power_burst(v, pct, sign, lo, hi)
            rows.append(_row(c, burst, val, units.get(name, ""), name, "", at))
    return pd.DataFrame(rows, columns=_PARAM_COLS)


def summarise(table: pd.DataFrame, per_side: bool = True) -> pd.DataFrame:
    """Mean, sample SD and count across cycles of a curves or parameters table.

    Curves are grouped by (side,) variable, component, unit, percent; parameters by
    (side,) parameter, variable, component, unit (``percent`` timing is averaged too).
    ``per_side=False`` pools both sides (a session summary when ``table`` holds
    several trials).
    """
    if table.empty:
        raise DataError("nothing to summarise: the table has no rows (no complete cycle?)")
    if "parameter" in table.columns:
        keys = ["parameter", "variable", "component", "unit"]
        vals = ["value", "percent"]
    elif "percent" in table.columns and "variable" in table.columns:
        keys = ["variable", "component", "unit", "percent"]
        vals = ["value"]
    else:
        raise SettingsError("summarise expects a curves or parameters table from gaitid.cycles")
    if per_side:
        keys = ["side", *keys]
    g = table.groupby(keys, sort=False, dropna=False)
    out = g[vals].mean().add_suffix("_mean") if len(vals) > 1 else g[vals].mean().rename(columns={"value": "mean"})
    sd = g["value"].std(ddof=1).rename("sd")
    n = g["value"].count().rename("n")
    res = pd.concat([out, sd, n], axis=1).reset_index()
    if len(vals) > 1:
        res = res.rename(columns={"value_mean": "mean", "percent_mean": "percent_mean"})
    return res
