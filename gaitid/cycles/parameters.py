"""Discrete gait parameters per cycle, and their mean and SD across cycles.

Tables are tidy long pandas DataFrames: ``side, cycle, parameter, variable, component, value,
unit, percent`` (``percent`` the timing in % of the cycle, NaN when not a timed peak);
:func:`summarise` gives the mean, ``sd`` (sample SD, ddof 1) and ``n`` across cycles, per side
(or pooled for the session with ``per_side=False``; concatenate several trials' tables first,
with a ``trial`` column, for a session). Cycles and time normalisation: :mod:`gaitid.cycles.curves`.

Spatio-temporal parameters (Vicon / Perry definitions): stride time (s) strike to
strike; cadence (steps/min) = 120 / stride time; stride length (m) = heel
displacement between the two strikes along the direction of progression; walking
speed (m/s) = stride length / stride time; step time (s) and step length (m) from
the opposite foot's strike inside the cycle to the cycle's closing strike (the step
ending the cycle; its length is the distance along the direction of progression
from the opposite heel at its strike to this heel at the closing strike); stance and swing (% of cycle);
opposite foot off and strike (%); double and single support (%).

On a treadmill (the pelvis hardly advances: :func:`gaitid.contacts.progression.progression_direction`
mode 'treadmill') the heel's displacement in the lab is not the stride: the belt carries the
stance foot backwards. The belt speed of each cycle is measured from the markers (``belt_speed``,
m/s: minus the median velocity along the direction of progression of the cycle's heel over the
middle of its stance, 20-80 %, where the foot rides the belt), and the lengths are taken
over the belt: stride length = heel displacement + belt speed x stride time, step length likewise
over the step time; walking speed = stride length / stride time (about the belt speed).

Kinetic and clinical parameters (moment peaks in their phase of stance, power bursts,
swing and stance angles): :mod:`gaitid.cycles.clinical`. The whole-cycle maximum and minimum of each
moment are not reported: a moment's largest value over the cycle may lie in swing (the knee
flexor moment at 91-94 %), which is not the clinical parameter.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from gaitid.contacts.progression import progression_direction
from gaitid.core.errors import DataError, SettingsError
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES, other_side
from gaitid.cycles.curves import Cycle, interpolate
from gaitid.model.gait_markers import GaitMarkers

_SPATIOTEMPORAL = (("stride_time", "s"), ("cadence", "steps/min"), ("stride_length", "m"), ("walking_speed", "m/s"),
                   ("step_time", "s"), ("step_length", "m"), ("stance", "%"), ("swing", "%"),
                   ("opposite_foot_off", "%"), ("opposite_foot_strike", "%"), ("double_support", "%"),
                   ("single_support", "%"))


def _positions(x: np.ndarray, time: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Marker positions (m, 3) at the instants ``t`` (m,) (linear interpolation), NaN outside or
    where an instant is NaN."""
    ok = np.isfinite(t)
    out = interpolate(x, time, np.where(ok, t, time[0]))
    out[~ok] = np.nan
    return out


def spatiotemporal_parameters(trial: Trial, cycles: list[Cycle], markers: GaitMarkers,
                              ) -> pd.DataFrame:
    """Cadence, speed, stride/step lengths and times, stance/swing and support phases per cycle."""
    return parameter_table(spatiotemporal_columns(trial, cycles, markers))


def spatiotemporal_columns(trial: Trial, cycles: list[Cycle], markers: GaitMarkers) -> dict[str, np.ndarray]:
    """:func:`spatiotemporal_parameters`' table as {column: array} (text in object arrays)."""
    t = trial.time
    try:
        prog = progression_direction(trial, markers)
        prog_dir, treadmill = prog.direction_lab, prog.mode == "treadmill"
    except DataError:  # no pelvis: the direction of each stride's heel displacement instead
        prog_dir, treadmill = None, False
    heel = {s: trial.point(markers.foot(s).heel) for s in SIDES if trial.has_points(markers.foot(s).heel)}
    start = np.array([c.start_time for c in cycles], float)
    end = np.array([c.end_time for c in cycles], float)
    opp = np.array([c.opposite_strike_time for c in cycles], float)
    at = {}  # (side, instant) -> heel positions (n_cycles, 3), each marker interpolated once
    for s, x in heel.items():
        both = _positions(x, t, np.concatenate([start, end, opp]))
        at[s, "start"], at[s, "end"], at[s, "opposite"] = np.split(both, 3)
    mid = _positions(prog_dir, t, 0.5 * (start + end)) if prog_dir is not None and cycles else None
    side_col, cycle_col, name_col, unit_col, values = [], [], [], [], []
    for i, c in enumerate(cycles):
        T = c.stride_time
        other = other_side(c.side)
        if mid is not None:
            d = mid[i]
        elif c.side in heel:
            d = at[c.side, "end"][i] - at[c.side, "start"][i]
            d[2] = 0.0
        else:
            d = np.full(3, np.nan)
        d = d / np.linalg.norm(d) if np.all(np.isfinite(d)) else d
        stride_len = step_len = np.nan
        step_time = c.end_time - c.opposite_strike_time
        belt = _belt_speed(trial, markers, c, d) if treadmill else 0.0
        if c.side in heel:
            travel = at[c.side, "end"][i] - at[c.side, "start"][i]
            stride_len = float(np.dot(travel, d)) + belt * T
            if other in heel:
                step_len = float(np.dot(at[c.side, "end"][i] - at[other, "opposite"][i], d)) + belt * step_time
        stance = c.foot_off_pct
        o_off = c.percent(c.opposite_off_time)
        o_str = c.percent(c.opposite_strike_time)
        row = [T, 120.0 / T, stride_len, stride_len / T, step_time, step_len, stance, 100.0 - stance, o_off, o_str,
               o_off + (stance - o_str), o_str - o_off]
        names = _SPATIOTEMPORAL
        if treadmill:
            row.append(belt)
            names = names + (("belt_speed", "m/s"),)
        values += row
        side_col += [c.side] * len(row)
        cycle_col += [c.index] * len(row)
        name_col += [n for n, _ in names]
        unit_col += [u for _, u in names]
    n = len(values)
    return {"side": np.array(side_col, object).reshape(n), "cycle": np.array(cycle_col, np.int64).reshape(n),
            "parameter": np.array(name_col, object).reshape(n), "variable": np.full(n, "", object),
            "component": np.full(n, "", object), "value": np.array(values, float).reshape(n),
            "unit": np.array(unit_col, object).reshape(n), "percent": np.full(n, np.nan)}


def parameter_table(*blocks: Mapping[str, np.ndarray] | None) -> pd.DataFrame:
    """One parameters table from blocks of columns (:func:`spatiotemporal_columns`,
    :func:`gaitid.cycles.clinical.clinical_columns`), rows block after block: the union of their
    columns in order of appearance, NaN where a block has no such column (``pd.concat``'s
    table, built once); text columns plain strings."""
    blocks = [b for b in blocks if b is not None]
    if len(blocks) > 1:
        blocks = [b for b in blocks if len(next(iter(b.values())))] or blocks[:1]
    names = list(dict.fromkeys(k for b in blocks for k in b))
    out = {}
    for k in names:
        parts = [b.get(k) for b in blocks]
        kinds = [p.dtype for p in parts if p is not None]
        lacking = any(p is None for p in parts)
        if any(dt == object for dt in kinds):
            dtype = np.dtype(object)
        else:  # a column some block lacks holds NaN there: float at least
            dtype = np.result_type(*kinds, *([float] if lacking else []))
        col = np.concatenate([p.astype(dtype, copy=False) if p is not None else
                              np.full(len(next(iter(b.values()))), np.nan, dtype) for p, b in zip(parts, blocks)])
        out[k] = pd.Series(col, dtype=object, copy=False) if dtype == object else col
    return pd.DataFrame(out, columns=names, copy=False)  # (fresh arrays: not copied again)


def label_decomposed(params: pd.DataFrame, cycles) -> pd.DataFrame:
    """``params`` with the ``note`` of every kinetic parameter (not an angle's) of a cycle whose stance
    load is partly decomposed (:attr:`Cycle.reason` 'plate 1: 0.16 s decomposed') saying so, where the
    note is empty; ``params`` itself when no cycle is decomposed (a copy otherwise)."""
    decomposed = {(c.side, c.index): c.reason for c in cycles if "decomposed" in (c.reason or "")}
    if not decomposed or params.empty or "note" not in params.columns:
        return params
    reason = pd.Series([decomposed.get(k, "") for k in zip(params["side"], params["cycle"])], index=params.index)
    variable = params["variable"].astype(str)
    note = params["note"].fillna("").astype(str)
    mark = (reason != "") & (variable != "") & ~variable.str.endswith("Angles") & (note == "")
    out = params.copy()
    out["note"] = out["note"].astype(object)
    out.loc[mark, "note"] = "from a decomposed foot load (" + reason[mark] + ")"
    return out


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
        raise SettingsError("summarise expects a curves table (gaitid.cycles.curves) or a parameters table (gaitid.cycles.parameters)")
    if per_side:
        keys = ["side", *keys]
    group, first = _groups(table, keys)
    out = {k: _take(table[k], first) for k in keys}  # each group's keys, from its first row
    stats = {v: _mean_sd_count(table[v].to_numpy(float), group, len(first)) for v in vals}
    out["mean"] = stats["value"][0]
    if "percent" in vals and len(vals) > 1:
        out["percent_mean"] = stats["percent"][0]
    out["sd"] = stats["value"][1]
    out["n"] = stats["value"][2]
    return pd.DataFrame(out, copy=False)  # (fresh arrays: not copied again)


def _take(column: pd.Series, rows: np.ndarray) -> pd.Series | np.ndarray:
    """``column``'s values at ``rows`` with its dtype (a plain numpy column as an array)."""
    if column.dtype == object:
        return pd.Series(column.to_numpy()[rows], dtype=object, copy=False)
    if isinstance(column.dtype, np.dtype):
        return column.to_numpy()[rows]
    return column.iloc[rows].reset_index(drop=True)


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
