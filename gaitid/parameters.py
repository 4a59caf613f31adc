"""Discrete gait parameters per cycle, and their mean and SD across cycles.

Tables are tidy long pandas DataFrames: ``side, cycle, parameter, variable, component, value,
unit, percent`` (``percent`` the timing in % of the cycle, NaN when not a timed peak);
:func:`summarise` gives the mean, ``sd`` (sample SD, ddof 1) and ``n`` across cycles, per side
(or pooled for the session with ``per_side=False``; concatenate several trials' tables first,
with a ``trial`` column, for a session). Cycles and time normalisation: :mod:`gaitid.cycles`.

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

from typing import Mapping

import numpy as np
import pandas as pd
from scipy.interpolate import interp1d

from gaitid.cycles import N_POINTS, Cycle, components, time_normalise
from gaitid.errors import DataError, SettingsError
from gaitid.model.gait_markers import GaitMarkers
from gaitid.progression import progression_direction
from gaitid.trial import Trial
from gaitid.vocabulary import SIDES, other_side


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


def spatiotemporal_parameters(trial: Trial, cycles: list[Cycle], markers: GaitMarkers,
                              ) -> pd.DataFrame:
    """Cadence, speed, stride/step lengths and times, stance/swing and support phases per cycle."""
    t = trial.time
    try:
        prog_dir = progression_direction(trial, markers).direction_lab
    except DataError:  # no pelvis: the direction of each stride's heel displacement instead
        prog_dir = None
    heel = {s: trial.point(markers.foot(s).heel) for s in SIDES if trial.has_points(markers.foot(s).heel)}
    rows = []
    for c in cycles:
        T = c.stride_time
        other = other_side(c.side)
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
            for comp, col in components(arr):
                v = time_normalise(col, time, c.start_time, c.end_time, n_points)
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
            v = time_normalise(p, time, c.start_time, c.end_time, n_points)
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
        raise SettingsError("summarise expects a curves table (gaitid.cycles) or a parameters table (gaitid.parameters)")
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
