"""The uncertainty as tables: per frame, per cycle and percent, per clinical parameter (the
definitions of :mod:`gaitid.cycles.clinical`), the contribution of each error source to each clinical
parameter, and the band of the mean kinetic curve.

Inputs are the per-column output curves ``{side: {variable: (n, C, k)}}`` of the batched solve
and the nominal cycles and parameter tables; every table carries the unit of its values.
Column names: ``uncertainty_sd`` (SD), ``uncertainty_low95`` / ``uncertainty_high95`` (95 %
interval), ``uncertainty_sd_linear`` (first-order SD), all in the row's ``unit``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from gaitid.cycles.clinical import COMPONENT_INDEX, PARAMETERS, CycleEvents, absent_note, evaluate, phase_windows
from gaitid.cycles.curves import N_POINTS, PERCENT, Cycle, components, cycles_table
from gaitid.uncertainty.design import Design, with_noise
from gaitid.uncertainty.errormodel import SOURCES, WHERE_THEY_ACT
from gaitid.uncertainty.stats import column_stats

COLUMNS = ["uncertainty_sd", "uncertainty_low95", "uncertainty_high95", "uncertainty_sd_linear"]


def component_names(k: int) -> list[str]:
    """The component names of a k-column curve: X, Y, Z ("" for a scalar)."""
    return [c for c, _ in components(np.zeros((2, k)) if k > 1 else np.zeros(2))]


def _table(blocks: list[tuple[dict, np.ndarray]], design: Design) -> pd.DataFrame:
    """Long rows of many quantities' statistics at once. ``blocks``: (keys, Y) with Y (m, C, k)
    and keys {column: scalar or (m,) array}; rows item-major, component-minor (as the result's
    tables), one :func:`column_stats` call for all."""
    if not blocks:
        return pd.DataFrame()
    flat, meta = [], {}
    for keys, Y in blocks:
        m, C, k = Y.shape
        flat.append(np.swapaxes(Y, 1, 2).reshape(m * k, C))
        for name, v in keys.items():
            meta.setdefault(name, []).append(np.repeat(np.broadcast_to(np.asarray(v), (m,)), k))
        meta.setdefault("component", []).append(np.tile(component_names(k), m))
    st = column_stats(np.concatenate(flat)[:, :, None], design)
    out = {name: np.concatenate(parts) for name, parts in meta.items()}
    for col, v in zip(COLUMNS, (st.sd, st.low, st.high, st.sd_linear)):
        out[col] = v[:, 0]
    return pd.DataFrame(out)


def frames_rows(curves: dict, frames: np.ndarray, design: Design) -> pd.DataFrame:
    """Per frame: side, variable, frame, component, the uncertainty columns."""
    return _table([({"side": side, "variable": var, "frame": frames}, Y)
                   for side, by in curves.items() for var, Y in by.items()], design)


def normalised(curves: dict, time: np.ndarray, cycles: list[Cycle]) -> dict:
    """{(side, cycle index): {variable: (101, C, k)}}: every column's curves on 0-100 % of each
    cycle, linearly interpolated in time between the same two frames as
    :func:`gaitid.cycles.curves.time_normalise` (scipy's interp1d): NaN outside the data or next to a
    NaN sample; an index and a weight per instant instead of interp1d on (n, C k) arrays."""
    out = {}
    for c in cycles:
        by = curves.get(c.side, {})
        if not by:
            continue
        t = np.linspace(c.start_time, c.end_time, N_POINTS)
        i1 = np.clip(np.searchsorted(time, t, side="left"), 1, len(time) - 1)  # scipy interp1d's neighbours
        i0 = i1 - 1
        w = ((t - time[i0]) / (time[i1] - time[i0]))[:, None, None]
        inside = ((t >= time[0]) & (t <= time[-1]))[:, None, None]
        out[(c.side, c.index)] = {v: np.where(inside, (1 - w) * Y[i0] + w * Y[i1], np.nan) for v, Y in by.items()}
    return out


def curves_rows(norm: dict, design: Design) -> pd.DataFrame:
    """Per cycle and percent: side, cycle, variable, percent, component, the uncertainty columns."""
    return _table([({"side": side, "cycle": idx, "variable": var, "percent": PERCENT}, Y)
                   for (side, idx), by in norm.items() for var, Y in by.items()], design)


def _nanmean(arrays: list[np.ndarray]) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(np.stack(arrays), axis=0)


def cycle_means(norm: dict, cycles: list[Cycle], kinetic_only: bool) -> dict:
    """{side: {variable: (101, C, k)}}: each column's mean over the side's cycles (the kinetic
    ones only with ``kinetic_only``), NaN-skipping like the nominal summary."""
    out: dict = {}
    for side in {c.side for c in cycles}:
        keys = [(c.side, c.index) for c in cycles if c.side == side and (c.kinetic or not kinetic_only)
                and (c.side, c.index) in norm]
        if keys:
            out[side] = {v: _nanmean([norm[k][v] for k in keys]) for v in norm[keys[0]]}
    return out


def summary_rows(means: list[dict], design: Design) -> list[pd.DataFrame]:
    """Per side, variable, percent and component: the uncertainty of each mean curve of ``means``
    (cycle means, :func:`cycle_means`), one table each, from one statistics call."""
    blocks = [({"side": side, "variable": var, "percent": PERCENT, "which": i}, Y)
              for i, m in enumerate(means) for side, by in m.items() for var, Y in by.items()]
    table = _table(blocks, design)
    if table.empty:
        return [table for _ in means]
    return [table[table["which"] == i].drop(columns="which").reset_index(drop=True) for i in range(len(means))]


def monte_carlo_means(means: dict, design: Design) -> dict:
    """{(side, variable, component): (S, 101) float32}: the Monte Carlo columns' mean curves with
    their marker noise (:func:`gaitid.uncertainty.design.with_noise`), to pool a session's trials."""
    out = {}
    for side, by in means.items():
        names = list(by)
        widths = np.cumsum([0] + [by[v].shape[2] for v in names])
        noisy = with_noise(np.concatenate([by[v] for v in names], axis=2), design).astype(np.float32)
        for i, var in enumerate(names):
            for j, comp in enumerate(component_names(widths[i + 1] - widths[i])):
                out[(side, var, comp)] = noisy[:, :, widths[i] + j].T
    return out


def parameter_values(norm: dict, cycles: list[Cycle], convention: str = "internal", frame: str = "distal",
                     nominal: int | None = None) -> dict:
    """{(side, cycle, parameter, variable, component): (C,)}: every column's kinetic clinical
    parameters, defined as the parameters table defines them (:data:`gaitid.cycles.clinical.PARAMETERS`:
    each taken in its phase window of the cycle, from that cycle's own events, positive in its
    named direction under ``convention``; power bursts), kinetic cycles only. One
    :func:`gaitid.cycles.clinical.evaluate` call per definition for every cycle and column at once.
    Moment parameters in the lab frame are NaN in the parameters table and absent here. A moment
    peak the nominal column has but a perturbed column lacks (the named moment vanished from its
    window under the input errors) counts as 0 there, the named moment's magnitude, so the
    interval reaching 0 says the peak may be absent; where the ``nominal`` column lacks it, the
    parameter is absent (NaN with its note in the parameters table) and so is its uncertainty."""
    kinetic = [c for c in cycles if c.kinetic and (c.side, c.index) in norm]
    if not kinetic:
        return {}
    lo_hi = phase_windows(CycleEvents.from_table(cycles_table(kinetic)))
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for d in PARAMETERS:
            if not d.kinetic or (d.variable.endswith("Moment") and frame == "lab"):
                continue
            have = [i for i, c in enumerate(kinetic) if d.variable in norm[(c.side, c.index)]]
            if not have:
                continue
            rows = [_component(norm[(kinetic[i].side, kinetic[i].index)][d.variable], d.component).T for i in have]
            C = rows[0].shape[0]
            lo, hi = (np.repeat(w[have], C) for w in lo_hi[d.phase])
            value, _, notes = evaluate(d, np.concatenate(rows), lo, hi, convention)
            absent = np.array([note == absent_note(d) for note in notes]).reshape(len(have), C)
            value = value.reshape(len(have), C)
            if nominal is not None:
                vanished = absent & ~absent[:, [nominal]]  # absent in a perturbed column only
                value = np.where(vanished, 0.0, value)
            for k, i in enumerate(have):
                c = kinetic[i]
                out[(c.side, c.index, d.name, d.variable, d.component)] = value[k]
    return out


def _component(Y: np.ndarray, component: str) -> np.ndarray:
    """(101, C) of one component of (101, C, k) curves; a power ('') summed over its components
    (NaN where all are NaN), as :func:`gaitid.cycles.clinical.clinical_parameters` takes it."""
    if component:
        return Y[:, :, COMPONENT_INDEX[component]]
    return np.where(np.isnan(Y).all(axis=2), np.nan, np.nansum(Y, axis=2))


def parameter_rows(values: dict, design: Design) -> pd.DataFrame:
    """Per cycle: side, cycle, parameter, variable, component and the uncertainty columns."""
    if not values:
        return pd.DataFrame(columns=["side", "cycle", "parameter", "variable", "component", *COLUMNS])
    keys = list(values)
    st = column_stats(np.stack([values[k] for k in keys])[:, :, None], design)
    df = pd.DataFrame(keys, columns=["side", "cycle", "parameter", "variable", "component"])
    for col, a in zip(COLUMNS, (st.sd, st.low, st.high, st.sd_linear)):
        df[col] = a[:, 0]
    return df


def parameter_summary(values: dict, design: Design, units: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(uncertainty of each parameter's mean over the kinetic cycles, per error source its
    first-order share of that variance: side, parameter, variable, component, unit, source,
    sd, variance_fraction)."""
    groups: dict = {}
    for (side, _, par, var, comp), v in values.items():
        groups.setdefault((side, par, var, comp), []).append(v)
    if not groups:
        return (pd.DataFrame(columns=["side", "parameter", "variable", "component", *COLUMNS]),
                pd.DataFrame(columns=["side", "parameter", "variable", "component", "unit", "source", "sd",
                                      "variance_fraction"]))
    keys = list(groups)
    st = column_stats(np.stack([_nanmean(groups[k]) for k in keys])[:, :, None], design)
    df = pd.DataFrame(keys, columns=["side", "parameter", "variable", "component"])
    for col, a in zip(COLUMNS, (st.sd, st.low, st.high, st.sd_linear)):
        df[col] = a[:, 0]
    total = st.sd_linear[:, 0] ** 2
    present = design.source_index()
    acting = [s for s in SOURCES if s not in WHERE_THEY_ACT or present[s]]
    rows = []
    for i, (side, par, var, comp) in enumerate(keys):
        for s in acting:
            v = st.variance[s][i, 0]
            rows.append(dict(side=side, parameter=par, variable=var, component=comp, unit=units.get(var, ""),
                             source=s, sd=float(np.sqrt(v)), variance_fraction=float(v / total[i]) if total[i] > 0
                             else np.nan))
    return df, pd.DataFrame(rows)


def band_rows(summary: pd.DataFrame, means: dict, design: Design, units: dict) -> pd.DataFrame:
    """The band of the mean kinetic curve: side, variable, component, percent, unit, mean
    (nominal), sd, low95, high95 (``summary``: :func:`summary_rows` of the same ``means``)."""
    cols = ["side", "variable", "component", "percent", "unit", "mean", "sd", "low95", "high95"]
    if summary.empty:
        return pd.DataFrame(columns=cols)
    nominal = [np.swapaxes(Y[:, design.nominal:design.nominal + 1], 1, 2).reshape(-1)
               for by in means.values() for Y in by.values()]
    out = summary.rename(columns={"uncertainty_sd": "sd", "uncertainty_low95": "low95",
                                  "uncertainty_high95": "high95"})
    out["mean"] = np.concatenate(nominal)
    out["unit"] = out["variable"].map(lambda v: units.get(v, ""))
    return out[cols]
