"""Norms built from a lab's control trials: :class:`~gaitid.pipeline.result.Result` objects or the result folders
``gaitid run`` / ``gaitid batch`` write (:func:`build_norms`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError, FileFormatError, SettingsError
from gaitid.core.vocabulary import RUN_RECORD_SUFFIX
from gaitid.cycles.clinical import curve_matrices
from gaitid.cycles.curves import PERCENT
from gaitid.cycles.scores import (
    GDI_FEATURES,
    GPS_VARIABLES,
    SCORE_PERCENT,
    GDIBasis,
    gait_profile_score,
    gait_variable_scores,
    gait_vectors,
    kinematic_curves,
    overall_gait_profile_score,
    resample,
)
from gaitid.norms.data import (
    BAND_COLUMNS,
    CURVE_COLUMNS,
    MEANING,
    NORM_SUFFIXES,
    PARAMETER_COLUMNS,
    SCORE_NORM_COLUMNS,
    Norms,
)


@dataclass
class ControlTables:
    """One control trial as tables: ``curves`` and ``parameters`` as gaitid writes them, ``cycles``
    (side, cycle, kinetic, foot_off_pct, opposite_off_pct, opposite_strike_pct), the ``settings``
    that give the numbers their meaning (convention, normalise, frame), the subject's name and the
    EMG on-off table when the trial has EMG (``emg_timing``: the norms' on-off of each muscle)."""

    name: str
    curves: pd.DataFrame
    parameters: pd.DataFrame
    cycles: pd.DataFrame
    settings: dict
    subject: str = ""
    emg_timing: pd.DataFrame | None = None  # the EMG on-off table (<trial>_emg_timing.csv), if any


def control_from_result(result) -> ControlTables:
    """ControlTables of a :class:`gaitid.pipeline.Result`."""
    from gaitid.cycles.curves import cycles_table

    return ControlTables(name=result.name, curves=result.curves, parameters=result.parameters,
                         cycles=cycles_table(result.cycles), settings=result.settings.as_dict(),
                         subject=result.trial.subject.name or "",
                         emg_timing=result.emg_timing if getattr(result, "emg", None) is not None else None)


def control_from_folder(folder: str | os.PathLike, convention: str | None = None) -> list[ControlTables]:
    """ControlTables of every trial in a result folder (``<trial>_curves.csv`` and
    ``<trial>_parameters.csv``, searched recursively; their settings from the record beside them,
    :func:`recorded_settings`). ``convention``: the moment convention of tables without a record."""
    folder = Path(folder)
    found = sorted(folder.rglob("*_curves.csv"))
    if not found:
        raise FileFormatError("no gaitid result tables (*_curves.csv) in this folder", folder)
    out = []
    for curves_path in found:
        stem = curves_path.name[: -len("_curves.csv")]
        params_path = curves_path.with_name(f"{stem}_parameters.csv")
        if not params_path.exists():
            raise FileFormatError(f"{curves_path.name} has no {params_path.name} beside it", curves_path.parent)
        try:
            curves = pd.read_csv(curves_path, keep_default_na=True, dtype={"component": str, "side": str})
            params = pd.read_csv(params_path, dtype={"component": str, "variable": str, "side": str})
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"not a readable result table ({exc})", curves_path) from None
        curves["component"] = curves["component"].fillna("")
        params[["variable", "component"]] = params[["variable", "component"]].fillna("")
        settings = recorded_settings(curves_path.parent, stem)
        if not settings.get("convention"):
            has_moments = curves["variable"].astype(str).str.endswith("Moment").any()
            if convention is None and has_moments:
                raise SettingsError(f"{curves_path}: the moment convention of these tables is not recorded "
                                    f"(no {stem}{RUN_RECORD_SUFFIX} or gaitid-run.json beside them, which gaitid "
                                    "run and batch write); give it (--convention internal|external)")
            settings = {**settings, "convention": convention}
        timing_path = curves_path.with_name(f"{stem}_emg_timing.csv")
        try:
            timing = pd.read_csv(timing_path, dtype={"side": str, "muscle": str, "channel": str}) \
                if timing_path.exists() else None
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"not a readable result table ({exc})", timing_path) from None
        out.append(ControlTables(name=stem, curves=curves, parameters=params, cycles=_cycles_from_parameters(params, curves),
                                 settings=settings, emg_timing=timing))
    return out


EMG_ON = "EMG on "  # a muscle's on-off in the norms: curve 'EMG on <muscle>', unit 'fraction' (of the cycles on)
EMG_TIMING_COLUMNS = {"side", "muscle", "cycle", "burst", "onset_percent", "offset_percent"}


def emg_on_rows(timing: pd.DataFrame | None) -> pd.DataFrame:
    """Each cycle's on-off of each muscle as curve rows (side, cycle, kinetic False, variable
    'EMG on <muscle>', component '', unit 'fraction', percent 0-100, value 1 where on, else 0) from an
    EMG on-off table (``Result.emg_timing``, ``<trial>_emg_timing.csv``); a muscle with two channels
    on a side is on where either is. Empty without a table."""
    columns = ["side", "cycle", "kinetic", "variable", "component", "unit", "percent", "value"]
    if timing is None or timing.empty or not EMG_TIMING_COLUMNS <= set(timing.columns):
        return pd.DataFrame(columns=columns)
    t = timing.assign(muscle=timing["muscle"].astype(str), side=timing["side"].astype(str))
    keys = t[["side", "muscle", "cycle"]].drop_duplicates().reset_index(drop=True)
    row = t.merge(keys.reset_index(), on=["side", "muscle", "cycle"])["index"].to_numpy()
    on = np.zeros((len(keys), PERCENT.size), bool)
    burst = t["burst"].to_numpy(float) > 0
    inside = (PERCENT >= t["onset_percent"].to_numpy(float)[:, None]) & \
             (PERCENT <= t["offset_percent"].to_numpy(float)[:, None]) & burst[:, None]
    np.logical_or.at(on, row, inside)
    n = PERCENT.size
    return pd.DataFrame({"side": np.repeat(keys["side"].to_numpy(), n), "cycle": np.repeat(keys["cycle"].to_numpy(), n),
                         "kinetic": False, "variable": np.repeat((EMG_ON + keys["muscle"]).to_numpy(), n),
                         "component": "", "unit": "fraction", "percent": np.tile(PERCENT, len(keys)),
                         "value": on.ravel().astype(float)})


def recorded_settings(folder: Path, stem: str) -> dict:
    """The settings a trial's tables were made with, as recorded beside them: ``<trial>_run.json``
    (``gaitid run``) or ``gaitid-run.json`` (a ``gaitid batch`` trial folder); {} when neither says."""
    for record, keys in ((folder / f"{stem}{RUN_RECORD_SUFFIX}", ("settings",)),
                         (folder / "gaitid-run.json", ("fingerprint", "settings"))):
        try:
            value = json.loads(record.read_text())
        except (OSError, ValueError):
            continue
        for key in keys:
            value = value.get(key, {}) if isinstance(value, dict) else {}
        if isinstance(value, dict) and value:
            return value
    return {}


def _cycles_from_parameters(params: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """Cycle events (% cycle) rebuilt from the parameters table's stance / opposite foot rows."""
    names = {"stance": "foot_off_pct", "opposite_foot_off": "opposite_off_pct",
             "opposite_foot_strike": "opposite_strike_pct"}
    p = params[params["parameter"].isin(list(names))]
    wide = p.pivot_table(index=["side", "cycle"], columns="parameter", values="value", aggfunc="first")
    wide = wide.rename(columns=names).reindex(columns=list(names.values())).reset_index()
    kin = curves.groupby(["side", "cycle"])["kinetic"].first().reset_index() if "kinetic" in curves else None
    if kin is not None:
        wide = wide.merge(kin, on=["side", "cycle"], how="left")
        wide["kinetic"] = wide["kinetic"].fillna(False).astype(bool)
    else:
        wide["kinetic"] = False
    return wide


def _controls(sources, convention: str | None) -> list[ControlTables]:
    out = []
    for s in sources:
        if isinstance(s, ControlTables):
            out.append(s)
        elif hasattr(s, "curves") and hasattr(s, "settings") and hasattr(s, "cycles"):
            out.append(control_from_result(s))
        else:
            out += control_from_folder(s, convention)
    return out


def _speed_bands(cuts) -> pd.DataFrame:
    if not cuts:
        return pd.DataFrame(columns=BAND_COLUMNS)
    cuts = sorted(float(c) for c in cuts)
    if any(not (c > 0 and math.isfinite(c)) for c in cuts) or len(set(cuts)) != len(cuts):
        raise SettingsError(f"speed bands {cuts}: give distinct positive speeds in m/s (e.g. 0.8,1.2)")
    edges = [0.0, *cuts, math.inf]
    return pd.DataFrame([(f"{a:.2f}-{b:.2f} m/s" if math.isfinite(b) else f">={a:.2f} m/s", a, b)
                         for a, b in zip(edges[:-1], edges[1:])], columns=BAND_COLUMNS)


def build_norms(controls, *, speed_bands=None, meta: dict | None = None, n_features: int = GDI_FEATURES,
                convention: str | None = None) -> Norms:
    """Norms from control trials: Results, :class:`ControlTables`, or result folders.

    ``speed_bands``: speeds (m/s) cutting the controls' cycles into bands by their walking speed
    (``[0.8, 1.2]`` gives <0.8, 0.8-1.2, >=1.2); band '' always holds all speeds. ``meta``: source,
    age_range, n_subjects... recorded in the file. ``n_features``: GDI features (15); the GDI basis
    is built when the controls give at least that many strides (else ``meta['gdi']`` says why not).
    ``convention``: for result folders that do not record it. The clinical parameters of
    :mod:`gaitid.cycles.clinical` are computed for every control and kept as parameter norms.
    """
    from gaitid import __version__
    from gaitid.cycles.clinical import clinical_table

    items = _controls(controls, convention)
    if not items:
        raise DataError("no control trials given")
    first = items[0].settings
    for it in items[1:]:
        clash = [k for k in MEANING if it.settings.get(k) and first.get(k) and it.settings.get(k) != first.get(k)]
        if clash:
            raise DataError(f"control {it.name} has {', '.join(f'{k}={it.settings.get(k)!r}' for k in clash)} but "
                            f"{items[0].name} has {', '.join(f'{k}={first.get(k)!r}' for k in clash)}; "
                            "process all controls with the same settings")
    conv = next((it.settings.get("convention") for it in items if it.settings.get("convention")), None)
    curves, params, cycles, emg = [], [], [], []
    for i, it in enumerate(items):
        cyc = it.cycles.assign(trial=i)
        if it.curves is None or it.curves.empty or cyc.empty:
            continue
        curves.append(it.curves.assign(trial=i))
        emg.append(emg_on_rows(it.emg_timing).assign(trial=i))
        clinical = clinical_table(it.curves, it.cycles, convention=it.settings.get("convention") or "internal",
                                  frame=it.settings.get("frame") or "distal")
        # the clinical parameters are recomputed from the curves (the tables may predate them)
        own = it.parameters[~it.parameters["parameter"].isin(clinical["parameter"])]
        params.append(pd.concat([own, clinical[[c for c in own.columns if c in clinical]]],
                                ignore_index=True).assign(trial=i))
        speed = it.parameters.loc[it.parameters["parameter"] == "walking_speed", ["side", "cycle", "value"]]
        cycles.append(cyc.merge(speed.rename(columns={"value": "speed"}), on=["side", "cycle"], how="left"))
    if not curves:
        raise DataError("the control trials have no complete gait cycle")
    curves = pd.concat(curves, ignore_index=True)
    emg = pd.concat(emg, ignore_index=True)
    params = pd.concat(params, ignore_index=True)
    cycles = pd.concat(cycles, ignore_index=True)
    bands = _speed_bands(speed_bands)
    assignments = [("", np.ones(len(cycles), bool))]
    for _, b in bands.iterrows():
        s = cycles["speed"].to_numpy(float)
        assignments.append((b["band"], (s >= b["speed_min_m_s"]) & (s < b["speed_max_m_s"])))
    curve_parts, param_parts, score_parts = [], [], []
    for band, mask in assignments:
        keys = cycles.loc[mask, ["trial", "side", "cycle", "kinetic"]]
        if keys.empty:
            continue
        c = curves.merge(keys.drop(columns="kinetic"), on=["trial", "side", "cycle"])
        if len(emg):  # each muscle's on-off: the fraction of the controls' cycles on at each %
            c = pd.concat([c, emg.merge(keys.drop(columns="kinetic"), on=["trial", "side", "cycle"])], ignore_index=True)
        curve_parts.append(_curve_norms(c, band))
        p = params.merge(keys.drop(columns="kinetic"), on=["trial", "side", "cycle"])
        param_parts.append(_parameter_norms(p, band))
    norms_curves = pd.concat(curve_parts, ignore_index=True)
    norms = Norms(curves=norms_curves, parameters=pd.concat(param_parts, ignore_index=True), bands=bands,
                  meta={}, source="built")
    for band, mask in assignments:
        keys = cycles.loc[mask, ["trial", "side", "cycle"]]
        if len(keys) and band in set(norms_curves["band"]):
            score_parts.append(_score_norms(curves.merge(keys, on=["trial", "side", "cycle"]), norms.select(band), band))
    norms.scores = pd.concat(score_parts, ignore_index=True) if score_parts else norms.scores
    vectors = np.concatenate([gait_vectors(kinematic_curves(curves, s)[0]) for s in ("Left", "Right")])
    vectors = vectors[np.isfinite(vectors).all(axis=1)]
    info = {}
    try:
        norms.gdi = GDIBasis.from_controls(vectors, n_features)
    except DataError as exc:
        info["gdi"] = f"not built: {exc}"
    names = {it.subject for it in items}
    built = {
        "source": None, "description": None,
        "n_subjects": len(names) if "" not in names else None,
        "n_trials": len(items), "n_cycles": int(len(cycles)),
        "age_range": None,
        "convention": conv, "normalise": first.get("normalise"), "frame": first.get("frame"),
        "model": first.get("model"),
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "gaitid_version": __version__,
        "trials": [it.name for it in items], **info,
    }
    for k, v in (meta or {}).items():
        built[k] = v
    norms.meta = {k: v for k, v in built.items() if v is not None}
    return norms


def _curve_norms(curves: pd.DataFrame, band: str) -> pd.DataFrame:
    """Mean, SD and n at every 2 % per side and pooled; each point from the cycles that have it."""
    v = curves["variable"].astype(str)
    emg = v.str.startswith(EMG_ON)
    keep = v.str.endswith(NORM_SUFFIXES) | (v == "GroundReactionForce") | emg
    kinetic = curves["kinetic"].astype(bool) if "kinetic" in curves else pd.Series(False, index=curves.index)
    curves = curves[(keep & (v.str.endswith("Angles") | emg | kinetic)).to_numpy()]  # angles, EMG: every cycle
    out = []
    m = curve_matrices(curves, ("side", "trial", "cycle"))
    sides = m.keys["side"].to_numpy()
    for (var, comp) in sorted(m.values):
        arr = resample(m.values[var, comp], m.percent)
        unit = m.units.get(var, "")
        for side, sel in (("Left", sides == "Left"), ("Right", sides == "Right"), ("", np.ones(len(sides), bool))):
            a = arr[sel]
            n = np.isfinite(a).sum(axis=0)
            if not n.any():
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(n > 0, np.nansum(a, axis=0) / np.maximum(n, 1), np.nan)
                dev = np.where(np.isfinite(a), a - mean, 0.0)
                sd = np.where(n > 1, np.sqrt((dev * dev).sum(axis=0) / np.maximum(n - 1, 1)), np.nan)
            out.append(pd.DataFrame({"band": band, "side": side, "variable": var, "component": comp, "unit": unit,
                                     "percent": SCORE_PERCENT, "mean": mean, "sd": sd, "n": n.astype(float)}))
    return pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=CURVE_COLUMNS)


def _parameter_norms(params: pd.DataFrame, band: str) -> pd.DataFrame:
    keys = ["parameter", "variable", "component", "unit"]
    p = params.assign(**{k: params[k].fillna("").astype(str) for k in keys})
    out = []
    for side, sub in (("Left", p[p["side"] == "Left"]), ("Right", p[p["side"] == "Right"]), ("", p)):
        if sub.empty:
            continue
        g = sub.groupby(keys, sort=False)["value"]
        t = pd.concat([g.mean().rename("mean"), g.std(ddof=1).rename("sd"), g.count().rename("n")], axis=1).reset_index()
        out.append(t.assign(band=band, side=side))
    t = pd.concat(out, ignore_index=True)
    t["n"] = t["n"].astype(float)
    return t[PARAMETER_COLUMNS]


def _score_norms(curves: pd.DataFrame, norms: Norms, band: str) -> pd.DataFrame:
    """The controls' own scores against ``norms``, each control trial scored as a subject is
    (:func:`gaitid.cycles.scores.gait_scores`: mean curve per side): mean, SD and n of each GVS (both
    sides), of the side GPS and of the overall GPS."""
    gvs_rows, gps_side, gps_overall = [], [], []
    for _, trial in curves.groupby("trial", sort=False):
        per_side = {}
        for side in ("Left", "Right"):
            kin, keys = kinematic_curves(trial, side)
            reference, _ = norms.score_reference(side)
            per_side[side] = gait_variable_scores(kin.mean(axis=0), reference) if keys else np.full(9, np.nan)
            if np.isfinite(per_side[side]).all():
                gvs_rows.append(per_side[side])
                gps_side.append(gait_profile_score(per_side[side]))
        o = overall_gait_profile_score(per_side["Left"], per_side["Right"])
        if np.isfinite(o):
            gps_overall.append(o)

    def stats(v):
        v = np.asarray(v, float)
        return v.mean(), (v.std(ddof=1) if len(v) > 1 else np.nan), len(v)

    if not gvs_rows:
        return pd.DataFrame(columns=SCORE_NORM_COLUMNS)
    gvs = np.array(gvs_rows)
    rows = [(band, "GVS", name, var, comp, *stats(gvs[:, j])) for j, (var, comp, name) in enumerate(GPS_VARIABLES)]
    rows.append((band, "GPS", "GPS", "", "", *stats(gps_side)))
    if gps_overall:
        rows.append((band, "GPS", "GPS overall", "", "", *stats(gps_overall)))
    return pd.DataFrame(rows, columns=SCORE_NORM_COLUMNS)


