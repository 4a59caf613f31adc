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
opposite foot off and strike (%); double and single support (%).

On a treadmill (the pelvis hardly advances: :func:`gaitid.progression.progression_direction`
mode 'treadmill') the heel's displacement in the lab is not the stride: the belt carries the
stance foot backwards. The belt speed of each cycle is measured from the markers (``belt_speed``,
m/s: minus the median velocity along the direction of progression of the cycle's heel over the
middle of its stance, 20-80 %, where the foot rides the belt), and the lengths are taken
over the belt: stride length = heel displacement + belt speed x stride time, step length likewise
over the step time; walking speed = stride length / stride time (about the belt speed).

Kinetic and clinical parameters (moment peaks in their phase of stance, power bursts,
swing and stance angles): :mod:`gaitid.clinical`. The whole-cycle maximum and minimum of each
moment are not reported: a moment's largest value over the cycle may lie in swing (the knee
flexor moment at 91-94 %), which is not the clinical parameter.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
from gaitid.cycles import Cycle, interpolate
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
    return interpolate(x, time, np.array([t]))[0]


def spatiotemporal_parameters(trial: Trial, cycles: list[Cycle], markers: GaitMarkers,
                              ) -> pd.DataFrame:
    """Cadence, speed, stride/step lengths and times, stance/swing and support phases per cycle."""
    t = trial.time
    try:
        prog = progression_direction(trial, markers)
        prog_dir, treadmill = prog.direction_lab, prog.mode == "treadmill"
    except DataError:  # no pelvis: the direction of each stride's heel displacement instead
        prog_dir, treadmill = None, False
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
        step_time = c.end_time - c.opposite_strike_time
        belt = _belt_speed(trial, markers, c, d) if treadmill else 0.0
        if c.side in heel:
            travel = _at(heel[c.side], t, c.end_time) - _at(heel[c.side], t, c.start_time)
            stride_len = float(np.dot(travel, d)) + belt * T
            if other in heel:
                step_len = float(np.dot(_at(heel[c.side], t, c.end_time)
                                        - _at(heel[other], t, c.opposite_strike_time), d)) + belt * step_time
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
        if treadmill:
            rows.append(_row(c, "belt_speed", belt, "m/s"))
    text = ("side", "parameter", "variable", "component", "unit")  # plain strings: see gaitid.clinical._text
    return pd.DataFrame({c: pd.Series([r[c] for r in rows], dtype=object if c in text else float if c in
                                      ("value", "percent") else np.int64) for c in _PARAM_COLS}, columns=_PARAM_COLS)


def _belt_speed(trial: Trial, markers: GaitMarkers, c: Cycle, d: np.ndarray) -> float:
    """Belt speed (m/s, + when the belt carries the foot backwards) under the cycle's stance: minus
    the median velocity along ``d`` of the foot's heel over 20-80 % of the stance."""
    foot = markers.foot(c.side)
    labels = [m for m in (foot.heel,) if trial.has_points(m)]  # the toe rolls over the forefoot
    stance = c.foot_off_time - c.start_time
    idx = trial.indices_between(c.start_time + 0.2 * stance, c.start_time + 0.8 * stance)
    if not labels or idx.size < 2 or not np.all(np.isfinite(d)):
        return np.nan
    v = [np.gradient(trial.point(m)[:, :2], axis=0)[idx] @ d[:2] * trial.point_rate for m in labels]
    v = np.concatenate(v)
    v = v[np.isfinite(v)]
    return float(-np.median(v)) if v.size else np.nan


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
    group, first = _groups(table, keys)
    out = table[keys].iloc[first].reset_index(drop=True)
    stats = {}
    for v in vals:
        mean, sd, n = _mean_sd_count(table[v].to_numpy(float), group, len(first))
        stats[v] = (mean, sd, n)
    out["mean"] = stats["value"][0]
    if "percent" in vals and len(vals) > 1:
        out["percent_mean"] = stats["percent"][0]
    out["sd"] = stats["value"][1]
    out["n"] = stats["value"][2]
    return out


def _groups(table: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Group number of each row (groups numbered in order of first appearance, NaN keys a group
    of their own, as ``groupby(sort=False, dropna=False)``) and each group's first row."""
    combined = np.zeros(len(table), np.int64)
    for k in keys:
        codes, uniques = pd.factorize(table[k], use_na_sentinel=False)
        combined = combined * (len(uniques) + 1) + codes
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[inverse.reshape(-1)], first[order]


def _mean_sd_count(x: np.ndarray, group: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NaN-skipping mean, sample SD (ddof 1; NaN below 2 values) and count of ``x`` per group."""
    ok = np.isfinite(x)
    n = np.bincount(group, weights=ok, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(group, weights=np.where(ok, x, 0.0), minlength=n_groups) / n
        ss = np.bincount(group, weights=np.where(ok, (x - mean[group]) ** 2, 0.0), minlength=n_groups)
        sd = np.where(n > 1, np.sqrt(ss / (n - 1)), np.nan)
    return np.where(n > 0, mean, np.nan), sd, n.astype(np.int64)
