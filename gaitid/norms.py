"""Normative data: a lab's reference curves and parameters; gaitid ships none.

A :class:`Norms` holds mean and SD curves per variable, component and side (and pooled over
sides, side ''), parameter norms, optional speed bands, the controls' GVS/GPS (the MAP's
reference) and a GDI basis, with metadata (source, subjects, age range, the moment
convention and unit normalisation the curves are in).

- :func:`build_norms` makes one from control trials (:class:`gaitid.pipeline.Result` objects,
  or result folders of CSV tables written by ``gaitid run`` / ``gaitid batch``);
- :func:`write_norms` / :func:`read_norms` keep it as TOML (layout in docs/clinical.md);
- :func:`read_norms` also reads a simple CSV of curves and Vicon's GCD text format.

Curves are kept at 51 points (every 2 % of the cycle). Each cycle counts once (a control with
more cycles weighs more); each point's mean and SD come from the cycles that have a value
there (``n`` per point: a kinetic cycle's last point, the next strike off the plates, is often
missing), and kinetic variables come from kinetic cycles only. SD is the sample SD (ddof 1).
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.clinical import curve_matrices
from gaitid.errors import DataError, FileFormatError, GaitIDError, SettingsError
from gaitid.scores import (
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

FORMAT = "gaitid-norms"
VERSION = 1
CURVE_COLUMNS = ["band", "side", "variable", "component", "unit", "percent", "mean", "sd", "n"]
PARAMETER_COLUMNS = ["band", "side", "parameter", "variable", "component", "unit", "mean", "sd", "n"]
SCORE_NORM_COLUMNS = ["band", "score", "name", "variable", "component", "mean", "sd", "n"]
BAND_COLUMNS = ["band", "speed_min_m_s", "speed_max_m_s"]
MEANING = ("convention", "normalise", "frame")  # settings that change what a curve's numbers mean


NORM_SUFFIXES = ("Angles", "Moment", "Power")  # the curves a norm keeps, with the ground reaction force


@dataclass
class Norms:
    """Normative data (see the module docstring). Tables: ``curves`` (:data:`CURVE_COLUMNS`, one
    row per point), ``parameters`` (:data:`PARAMETER_COLUMNS`), ``scores`` (the controls' GVS and
    GPS, :data:`SCORE_NORM_COLUMNS`), ``bands`` (:data:`BAND_COLUMNS`; band '' = all speeds).
    ``meta``: source, n_subjects, n_trials, age_range, convention, normalise, ... ``warnings``:
    what reading or drawing them noticed."""

    curves: pd.DataFrame
    parameters: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=PARAMETER_COLUMNS))
    scores: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SCORE_NORM_COLUMNS))
    bands: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=BAND_COLUMNS))
    gdi: GDIBasis | None = None
    meta: dict = field(default_factory=dict)
    source: str = "normative"
    warnings: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ views

    @property
    def table(self) -> pd.DataFrame:
        """The curves table (the name the report's band reader used)."""
        return self.curves

    @property
    def convention(self) -> str | None:
        """'internal' or 'external': the convention of the moment curves; None when not stated."""
        return self.meta.get("convention") or None

    def band(self, variable: str, component: str, unit: str | None = None, side: str = ""):
        """(percent, mean, sd) arrays of one curve (all speeds, pooled over sides unless ``side``);
        None when absent or when its unit differs from ``unit`` (the mismatch is recorded in
        ``warnings``)."""
        c = self.curves
        sel = c[(c["variable"] == variable) & (c["component"] == component) & (c["side"] == side)
                & (c["band"] == "")]
        if sel.empty:
            return None
        file_unit = sel["unit"].iloc[0]
        if unit is not None and file_unit and file_unit != unit:
            msg = (f"{self.source}: {variable} {component or '(scalar)'} is in {file_unit}, the report in {unit}; "
                   "band not drawn")
            if msg not in self.warnings:
                self.warnings.append(msg)
            return None
        sel = sel.sort_values("percent")
        return sel["percent"].to_numpy(float), sel["mean"].to_numpy(float), sel["sd"].to_numpy(float)

    def select(self, band: str = "") -> "Norms":
        """The norms of one speed band ('' = all speeds) as a Norms whose band '' rows are that band's."""
        if band == "":
            return self
        names = set(self.bands["band"])
        if band not in names:
            raise SettingsError(f"{self.source}: no speed band {band!r}; the norms have "
                                f"{', '.join(sorted(names)) or 'none'}")

        def pick(t):
            return t[t["band"] == band].assign(band="") if len(t) else t

        return replace(self, curves=pick(self.curves), parameters=pick(self.parameters), scores=pick(self.scores),
                       bands=self.bands.iloc[0:0], meta={**self.meta, "band": band}, warnings=self.warnings)

    def band_for_speed(self, speed: float) -> str:
        """The band holding ``speed`` (m/s, lower bound inclusive); '' (all speeds) when there are no
        bands, the speed is unknown, or no control walked in that band."""
        if self.bands.empty or not np.isfinite(speed):
            return ""
        b = self.bands[self.bands["band"].isin(set(self.curves["band"]))]  # bands that hold controls
        hit = b[(b["speed_min_m_s"] <= speed) & (speed < b["speed_max_m_s"])]
        return str(hit["band"].iloc[0]) if len(hit) else ""

    def mean_curve(self, variable: str, component: str, side: str = "", percent: np.ndarray = SCORE_PERCENT
                   ) -> np.ndarray | None:
        """The mean curve resampled at ``percent`` (band ''); pooled ('' side) when ``side`` has none."""
        c = self.curves
        for s in dict.fromkeys((side, "")):
            sel = c[(c["variable"] == variable) & (c["component"] == component) & (c["side"] == s) & (c["band"] == "")]
            if len(sel):
                sel = sel.sort_values("percent")
                return resample(sel["mean"].to_numpy(float), sel["percent"].to_numpy(float), percent)
        return None

    def score_reference(self, side: str = "") -> tuple[np.ndarray, list[str]]:
        """(9, 51) reference mean curves of the GPS variables and a note per variable ('' when
        present): pooled over sides (as Baker et al. use one reference for both), or ``side``'s
        when the norms have no pooled curve."""
        ref = np.full((len(GPS_VARIABLES), SCORE_PERCENT.size), np.nan)
        notes = []
        for j, (var, comp, _) in enumerate(GPS_VARIABLES):
            unit = self._unit(var, comp)
            m = self.mean_curve(var, comp, "")
            if m is None and side:
                m = self.mean_curve(var, comp, side)
            if m is None:
                notes.append(f"the norms have no {var} {comp}")
            elif unit not in ("", "deg"):
                notes.append(f"the norms' {var} {comp} is in {unit}, not deg")
            else:
                ref[j] = m
                notes.append("" if np.isfinite(m).all() else f"the norms' {var} {comp} does not span 0-100 %")
        return ref, notes

    def _unit(self, variable: str, component: str) -> str:
        sel = self.curves.loc[(self.curves["variable"] == variable) & (self.curves["component"] == component), "unit"]
        return str(sel.iloc[0]) if len(sel) else ""

    def score_norm(self, score: str, name: str) -> tuple[float, float]:
        """(mean, sd) of the controls' ``score`` ('GVS'/'GPS') called ``name`` (band ''); NaN if absent."""
        s = self.scores
        sel = s[(s["score"] == score) & (s["name"] == name) & (s["band"] == "")] if len(s) else s
        if sel.empty:
            return np.nan, np.nan
        return float(sel["mean"].iloc[0]), float(sel["sd"].iloc[0])

    def in_convention(self, convention: str) -> "Norms":
        """These norms with their moment curves in ``convention`` ('internal'/'external'): moment curves
        and whole-cycle moment parameters ('KneeMoment max' <-> 'min') negated when the norms are in
        the other convention. Norms that state no convention are returned as they are (a warning says
        so when they hold moments). Clinical parameters (:mod:`gaitid.clinical`) need no change."""
        if convention not in ("internal", "external"):
            raise SettingsError(f"convention {convention!r}: must be internal or external")
        moments = self.curves["variable"].astype(str).str.endswith("Moment")
        if self.convention is None:
            if moments.any():
                msg = (f"{self.source}: states no moment convention; its moment curves are taken to be "
                       f"{convention}, as the report")
                if msg not in self.warnings:
                    self.warnings.append(msg)
            return self
        if self.convention == convention:
            return self
        curves = self.curves.copy()
        curves.loc[moments, "mean"] = -curves.loc[moments, "mean"]
        p = self.parameters.copy()
        whole = p["parameter"].astype(str).str.fullmatch(r"\w+Moment (max|min)")
        swap = {"max": "min", "min": "max"}
        p.loc[whole, "parameter"] = p.loc[whole, "parameter"].map(lambda s: s[:-3] + swap[s[-3:]])
        p.loc[whole, "mean"] = -p.loc[whole, "mean"]
        return replace(self, curves=curves, parameters=p, meta={**self.meta, "convention": convention},
                       warnings=self.warnings)

    def describe(self) -> list[str]:
        """Lines saying what these norms hold (``gaitid norms show``)."""
        m = self.meta
        c = self.curves
        lines = [f"{self.source}: {m.get('source') or 'source not stated'}"]
        facts = []
        for key, label in (("n_subjects", "subjects"), ("n_trials", "trials"), ("n_cycles", "cycles")):
            if m.get(key) not in (None, ""):
                facts.append(f"{m[key]} {label}")
        if m.get("age_range"):
            facts.append(f"age {m['age_range'][0]:g}-{m['age_range'][1]:g} years")
        lines.append(", ".join(facts) if facts else "number of subjects not stated")
        lines.append(f"moments: {self.convention or 'convention not stated'}; "
                     f"normalisation: {m.get('normalise') or 'not stated'}")
        if len(c):
            curves = c[c["band"] == ""].groupby(["variable", "component", "side"]).ngroups
            lines.append(f"{curves} curves ({', '.join(sorted(c['variable'].unique()))})")
        lines.append(f"{self.parameters[self.parameters['band'] == ''].groupby(['parameter', 'side']).ngroups} "
                     "parameter norms" if len(self.parameters) else "no parameter norms")
        for _, b in self.bands.iterrows():
            n = c.loc[c["band"] == b["band"], "n"].max() if len(c) else np.nan
            lines.append(f"speed band {b['band']}: {b['speed_min_m_s']:g} to {b['speed_max_m_s']:g} m/s, "
                         + (f"up to {n:.0f} cycles per curve" if np.isfinite(n) else "no control cycles"))
        lines.append(f"GDI basis: {self.gdi.features.shape[1]} features from {self.gdi.n_strides} strides"
                     if self.gdi is not None else f"GDI basis: none{(' (' + m['gdi']) + ')' if m.get('gdi') else ''}")
        return lines + [f"warning: {w}" for w in self.warnings]


# --------------------------------------------------------------------------- reading


def read_norms(source) -> Norms:
    """Norms from a gaitid TOML file, a curves CSV, a Vicon GCD file, a DataFrame in the CSV layout,
    or a Norms (returned as is). The format follows the file's suffix (.toml, .csv, .gcd)."""
    if isinstance(source, Norms):
        return source
    if isinstance(source, pd.DataFrame):
        return _curves_csv(source.copy(), "normative table")
    path = Path(source)
    if not path.is_file():
        raise FileFormatError("normative data file not found", path)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return _read_toml(path)
    if suffix == ".gcd":
        return read_gcd(path)
    if suffix in (".csv", ".txt"):
        try:
            raw = pd.read_csv(path, comment="#", dtype=str, keep_default_na=False, skipinitialspace=True)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
            raise FileFormatError(f"not a readable CSV ({exc})", path) from None
        return _curves_csv(raw, str(path))
    raise FileFormatError(f"unknown normative data format {suffix!r}: give a .toml (gaitid norms build), "
                          ".csv or Vicon .gcd file", path)


REQUIRED = ("variable", "component", "percent", "mean", "sd")


def _curves_csv(raw: pd.DataFrame, name: str) -> Norms:
    """The CSV layout (docs/clinical.md): variable, component, percent, mean, sd [, unit, side, n]."""
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED if c not in raw.columns]
    if missing:
        raise FileFormatError(f"{name}: missing column(s) {', '.join(missing)}; expected "
                              f"{', '.join(REQUIRED)} (+ optional unit, side, n)")
    if raw.empty:
        raise DataError(f"{name}: no rows")

    def text(col: str) -> pd.Series:  # empty cells (NaN from a DataFrame) become ''
        return raw[col].fillna("").astype(str).str.strip()

    table = pd.DataFrame({
        "band": "",
        "side": text("side").str.capitalize() if "side" in raw.columns else "",
        "variable": text("variable"),
        "component": text("component").str.upper(),
        "unit": text("unit") if "unit" in raw.columns else "",
    })
    line = np.arange(len(raw)) + 2  # 1-based line numbers after the header (comments aside)
    for col in ("percent", "mean", "sd"):
        values = pd.to_numeric(text(col), errors="coerce")
        bad = ~np.isfinite(values.to_numpy(float))
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise FileFormatError(f"{name}: column '{col}' row {line[k]}: {raw[col].iloc[k]!r} is not a finite number")
        table[col] = values.to_numpy(float)
    table["n"] = pd.to_numeric(text("n"), errors="coerce").to_numpy(float) if "n" in raw.columns else np.nan
    if (table["variable"] == "").any():
        k = int(np.flatnonzero(table["variable"] == "")[0])
        raise FileFormatError(f"{name}: column 'variable' row {line[k]} is empty")
    for col, allowed in (("component", ["X", "Y", "Z", ""]), ("side", ["Left", "Right", ""])):
        bad = ~table[col].isin(allowed)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise DataError(f"{name}: column '{col}' row {line[k]}: {raw[col].iloc[k]!r} "
                            f"must be {', '.join(a or 'empty' for a in allowed)}")
    for col, ok, why in (("percent", (table["percent"] >= 0) & (table["percent"] <= 100), "must be within 0-100"),
                         ("sd", table["sd"] >= 0, "must be >= 0")):
        if not ok.all():
            k = int(np.flatnonzero(~ok.to_numpy())[0])
            raise DataError(f"{name}: column '{col}' row {line[k]}: {table[col].iloc[k]} {why}")
    dup = table.duplicated(["side", "variable", "component", "percent"])
    if dup.any():
        k = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"{name}: row {line[k]} repeats {table['variable'].iloc[k]} "
                        f"{table['component'].iloc[k]} at {table['percent'].iloc[k]} %")
    for (_, var, comp), g in table.groupby(["side", "variable", "component"], sort=False):
        if len(g) < 2:
            raise DataError(f"{name}: curve {var} {comp} has a single point; give at least two percent values")
        if g["unit"].nunique() > 1:
            raise DataError(f"{name}: curve {var} {comp} mixes units {', '.join(sorted(g['unit'].unique()))}")
    return Norms(curves=table[CURVE_COLUMNS].reset_index(drop=True), meta={"format": "csv"}, source=name)


# ------------------------------------------------------------------ Vicon GCD

# GCD name -> (gaitid variable, component); Vicon's normal-data names (gaitutils' mapping,
# the Gillette reader), Plug-in Gait layout.
GCD_CURVES = {
    "PelvicTilt": ("PelvisAngles", "X"), "PelvicObliquity": ("PelvisAngles", "Y"),
    "PelvicRotation": ("PelvisAngles", "Z"), "HipFlexExt": ("HipAngles", "X"), "HipAbAdduct": ("HipAngles", "Y"),
    "HipRotation": ("HipAngles", "Z"), "KneeFlexExt": ("KneeAngles", "X"), "KneeValgVar": ("KneeAngles", "Y"),
    "KneeRotation": ("KneeAngles", "Z"), "DorsiPlanFlex": ("AnkleAngles", "X"), "FootRotation": ("AnkleAngles", "Z"),
    "FootProgression": ("FootProgressAngles", "Z"),
    "HipFlexExtMoment": ("HipMoment", "X"), "HipAbAdductMoment": ("HipMoment", "Y"),
    "HipRotationMoment": ("HipMoment", "Z"), "KneeFlexExtMoment": ("KneeMoment", "X"),
    "KneeValgVarMoment": ("KneeMoment", "Y"), "KneeRotationMoment": ("KneeMoment", "Z"),
    "DorsiPlanFlexMoment": ("AnkleMoment", "X"), "FootAbAdductMoment": ("AnkleMoment", "Y"),
    "FootRotationMoment": ("AnkleMoment", "Z"),
    "HipPower": ("HipPower", ""), "KneePower": ("KneePower", ""), "AnklePower": ("AnklePower", ""),
}
# scalar GCD values whose unit is certain: name -> (gaitid parameter, factor to gaitid's unit, unit)
GCD_SCALARS = {
    "FootOff": ("stance", 1.0, "%"), "OppositeFootOff": ("opposite_foot_off", 1.0, "%"),
    "OppositeFootContact": ("opposite_foot_strike", 1.0, "%"),
    "StrideLength": ("stride_length", 1e-3, "m"), "StePLength": ("step_length", 1e-3, "m"),
    "StepLength": ("step_length", 1e-3, "m"),
}


def read_gcd(path: str | os.PathLike) -> Norms:
    """Read a Vicon GCD (gait cycle data) text file as Norms.

    Layout (as Vicon's and Gillette's normal-data files show it): a ``#!DST... GCD`` first line;
    ``$SECTION`` lines (``$PREFIXES``, ``$COMMENTS``) followed by text lines; ``!Name [k]``
    starts a variable, followed by its rows: ``mean sd`` (normal data) or one value (a subject's
    file); 51 rows = 0, 2, ..., 100 % of the cycle, 1 row = a scalar. ``Left``/``Right`` prefixes
    (``!LeftPelvicTilt``) give one side; unprefixed names are pooled over sides. Moments are
    Plug-in Gait's external convention (N.m/kg; values above 20 are taken as N.mm/kg), powers W/kg,
    angles degrees. Variables gaitid has no name for, multi-column ones (``PelvicOrigin-3``) and
    scalars whose unit is not certain (Cadence, Speed, times) are skipped and listed in ``warnings``.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        text = path.read_text(encoding="latin-1")
    except OSError as exc:
        raise FileFormatError(f"cannot read the GCD file ({exc.strerror or exc})", path) from None
    blocks: list[tuple[str, int, list[list[float]]]] = []
    comments: list[str] = []
    section = None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("$"):
            section = line[1:].split()[0].upper() if len(line) > 1 else ""
            continue
        if line.startswith("!"):
            name = line[1:].split()[0] if len(line) > 1 else ""
            if not name:
                raise FileFormatError(f"line {lineno}: '!' without a variable name", path)
            blocks.append((name, lineno, []))
            section = None
            continue
        if section is not None or not blocks:
            if section == "COMMENTS":
                comments.append(line)
            continue
        try:
            blocks[-1][2].append([float(x) for x in line.replace(",", " ").split()])
        except ValueError:
            raise FileFormatError(f"line {lineno}: {line!r} is not numbers (variable !{blocks[-1][0]})", path) from None
    if not blocks:
        raise FileFormatError("no '!Variable' block: not a GCD file", path)
    curve_rows, param_rows, skipped, single = [], [], [], False
    for name, lineno, rows in blocks:
        side, base = "", name
        for prefix in ("Left", "Right"):
            if name.startswith(prefix) and len(name) > len(prefix):
                side, base = prefix, name[len(prefix):]
        widths = {len(r) for r in rows}
        if not rows or len(widths) != 1 or widths.pop() > 2:
            skipped.append(name)
            continue
        a = np.array(rows, float)
        mean = a[:, 0]
        sd = a[:, 1] if a.shape[1] == 2 else np.full(len(a), np.nan)
        single |= a.shape[1] == 1
        if base in GCD_CURVES and len(a) == 51:
            var, comp = GCD_CURVES[base]
            unit = "deg" if var.endswith("Angles") else ("W/kg" if var.endswith("Power") else "N.m/kg")
            if var.endswith("Moment") and np.nanmax(np.abs(mean)) > 20:  # N.mm/kg, as Vicon's C3D points
                mean, sd = mean / 1000.0, sd / 1000.0
            curve_rows.append(pd.DataFrame({"band": "", "side": side, "variable": var, "component": comp,
                                            "unit": unit, "percent": SCORE_PERCENT, "mean": mean, "sd": sd,
                                            "n": np.nan}))
        elif base in GCD_SCALARS and len(a) == 1:
            par, factor, unit = GCD_SCALARS[base]
            param_rows.append(("", side, par, "", "", unit, mean[0] * factor, sd[0] * factor, np.nan))
        else:
            skipped.append(name)
    if not curve_rows and not param_rows:
        raise FileFormatError(f"no variable gaitid knows ({', '.join(b[0] for b in blocks[:5])}...)", path)
    warnings = []
    if skipped:
        warnings.append(f"{path.name}: not read (no gaitid equivalent, uncertain unit, or not 51 points): "
                        f"{', '.join(sorted(set(skipped)))}")
    if single:
        warnings.append(f"{path.name}: some variables have one value per row (a subject's GCD, not normal "
                        "data?): their SD is unknown (NaN) and no band is drawn for them")
    curves = pd.concat(curve_rows, ignore_index=True) if curve_rows else pd.DataFrame(columns=CURVE_COLUMNS)
    curves = curves.drop_duplicates(["side", "variable", "component", "percent"], keep="first")
    params = pd.DataFrame(param_rows, columns=PARAMETER_COLUMNS).drop_duplicates(["side", "parameter"])
    meta = {"format": "gcd", "convention": "external", "normalise": "mass",
            "source": " ".join(comments) or f"Vicon GCD file {path.name}"}
    return Norms(curves=curves[CURVE_COLUMNS].reset_index(drop=True), parameters=params, meta=meta,
                 source=str(path), warnings=warnings)


# ------------------------------------------------------------------ TOML


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        text = format(v, ".9g")  # 9 significant digits: far below any measurement's resolution
        return text if any(ch in text for ch in ".en") else text + ".0"
    if isinstance(v, str):
        return json.dumps(v)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple, np.ndarray)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise SettingsError(f"cannot write {type(v).__name__} {v!r} to TOML")


def _toml_table(header: str, items: dict) -> list[str]:
    return [header] + [f"{k} = {_toml_value(v)}" for k, v in items.items() if v is not None] + [""]


def norms_toml(norms: Norms) -> str:
    """The TOML text of ``norms`` (layout in docs/clinical.md)."""
    meta = {"format": FORMAT, "version": VERSION, **{k: v for k, v in norms.meta.items()
                                                      if k not in ("format", "version") and v is not None}}
    out = ["# gaitid normative data (https://github.com/gaitid; docs/clinical.md)", ""]
    out += _toml_table("[meta]", meta)
    for _, b in norms.bands.iterrows():
        out += _toml_table("[[bands]]", {"name": b["band"], "speed_min_m_s": float(b["speed_min_m_s"]),
                                         "speed_max_m_s": float(b["speed_max_m_s"])})
    c = norms.curves.sort_values(["band", "side", "variable", "component", "percent"], kind="stable")
    for (band, side, var, comp), g in c.groupby(["band", "side", "variable", "component"], sort=False):
        n = g["n"].to_numpy(float)
        out += _toml_table("[[curves]]", {"band": band, "side": side, "variable": var, "component": comp,
                                          "unit": str(g["unit"].iloc[0]),
                                          "percent": g["percent"].to_numpy(float), "mean": g["mean"].to_numpy(float),
                                          "sd": g["sd"].to_numpy(float),
                                          "n": [int(v) for v in n] if np.isfinite(n).all() else None})
    for _, p in norms.parameters.iterrows():
        out += _toml_table("[[parameters]]", {"band": p["band"], "side": p["side"], "parameter": p["parameter"],
                                              "variable": p["variable"], "component": p["component"],
                                              "unit": p["unit"], "mean": float(p["mean"]), "sd": float(p["sd"]),
                                              "n": int(p["n"]) if np.isfinite(p["n"]) else None})
    for _, s in norms.scores.iterrows():
        out += _toml_table("[[scores]]", {"band": s["band"], "score": s["score"], "name": s["name"],
                                          "variable": s["variable"], "component": s["component"],
                                          "mean": float(s["mean"]), "sd": float(s["sd"]), "n": int(s["n"])})
    if norms.gdi is not None:
        g = norms.gdi
        out += _toml_table("[gdi]", {"variables": [f"{v} {c}" for v, c, _ in GPS_VARIABLES],
                                     "percent": SCORE_PERCENT, "n_features": int(g.features.shape[1]),
                                     "n_strides": int(g.n_strides), "ln_distance_mean": g.ln_mean,
                                     "ln_distance_sd": g.ln_sd, "control_mean": g.control_mean,
                                     "features": [g.features[:, k] for k in range(g.features.shape[1])]})
    return "\n".join(out)


def write_norms(norms: Norms, path: str | os.PathLike) -> Path:
    """Write ``norms`` as TOML, atomically (read it back with :func:`read_norms`)."""
    from gaitid.io.atomic import atomic_path

    path = Path(path)
    text = norms_toml(norms)
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise GaitIDError(f"cannot write the norms file: {exc.strerror or exc}", path) from exc
    return path


def _read_toml(path: Path) -> Norms:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FileFormatError(f"not a readable TOML file ({exc})", path) from None
    meta = doc.get("meta", {})
    if meta.get("format") != FORMAT:
        raise FileFormatError(f"[meta] format = {meta.get('format')!r}: not a gaitid norms file "
                              f"(expected {FORMAT!r})", path)
    if int(meta.get("version", 0)) > VERSION:
        raise FileFormatError(f"norms file version {meta.get('version')} is newer than this gaitid reads "
                              f"({VERSION}); update gaitid", path)

    def need(entry: dict, key: str, where: str):
        if key not in entry:
            raise FileFormatError(f"{where} lacks '{key}'", path)
        return entry[key]

    curves = []
    for i, e in enumerate(doc.get("curves", []), 1):
        where = f"[[curves]] #{i} ({e.get('variable', '?')} {e.get('component', '')})"
        pct, mean, sd = (np.asarray(need(e, k, where), float) for k in ("percent", "mean", "sd"))
        if not (pct.shape == mean.shape == sd.shape) or pct.ndim != 1 or pct.size < 2:
            raise FileFormatError(f"{where}: percent, mean and sd must be lists of one length (>= 2)", path)
        if not (np.all(np.diff(pct) > 0) and pct[0] >= 0 and pct[-1] <= 100):
            raise FileFormatError(f"{where}: percent must increase within 0-100", path)
        if (sd < 0).any():
            raise FileFormatError(f"{where}: sd must be >= 0", path)
        n = np.broadcast_to(np.asarray(e.get("n", np.nan), float), pct.shape) if np.ndim(e.get("n", 0)) == 0 \
            else np.asarray(e["n"], float)
        if n.shape != pct.shape:
            raise FileFormatError(f"{where}: n must be one number or a list as long as percent", path)
        curves.append(pd.DataFrame({"band": str(e.get("band", "")), "side": str(e.get("side", "")),
                                    "variable": str(need(e, "variable", where)), "component": str(e.get("component", "")),
                                    "unit": str(e.get("unit", "")), "percent": pct, "mean": mean, "sd": sd,
                                    "n": n}))
    params = pd.DataFrame([(str(e.get("band", "")), str(e.get("side", "")), str(need(e, "parameter", "[[parameters]]")),
                            str(e.get("variable", "")), str(e.get("component", "")), str(e.get("unit", "")),
                            float(need(e, "mean", "[[parameters]]")), float(e.get("sd", np.nan)),
                            float(e.get("n", np.nan))) for e in doc.get("parameters", [])], columns=PARAMETER_COLUMNS)
    scores = pd.DataFrame([(str(e.get("band", "")), str(need(e, "score", "[[scores]]")), str(need(e, "name", "[[scores]]")),
                            str(e.get("variable", "")), str(e.get("component", "")), float(e["mean"]),
                            float(e.get("sd", np.nan)), int(e.get("n", 0))) for e in doc.get("scores", [])],
                          columns=SCORE_NORM_COLUMNS)
    bands = pd.DataFrame([(str(need(e, "name", "[[bands]]")), float(need(e, "speed_min_m_s", "[[bands]]")),
                           float(need(e, "speed_max_m_s", "[[bands]]"))) for e in doc.get("bands", [])],
                         columns=BAND_COLUMNS)
    gdi = None
    if "gdi" in doc:
        g = doc["gdi"]
        expected = [f"{v} {c}" for v, c, _ in GPS_VARIABLES]
        if g.get("variables") != expected or not np.allclose(g.get("percent", []), SCORE_PERCENT):
            raise FileFormatError("[gdi]: variables/percent differ from gaitid's GDI layout "
                                  f"({', '.join(expected)} at every 2 %)", path)
        f = np.asarray(need(g, "features", "[gdi]"), float).T
        if f.shape[0] != len(expected) * SCORE_PERCENT.size:
            raise FileFormatError(f"[gdi]: each feature must have {len(expected) * SCORE_PERCENT.size} values", path)
        gdi = GDIBasis(features=f, control_mean=np.asarray(need(g, "control_mean", "[gdi]"), float),
                       ln_mean=float(need(g, "ln_distance_mean", "[gdi]")), ln_sd=float(need(g, "ln_distance_sd", "[gdi]")),
                       n_strides=int(g.get("n_strides", 0)))
    curves = pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=CURVE_COLUMNS)
    return Norms(curves=curves[CURVE_COLUMNS], parameters=params, scores=scores, bands=bands, gdi=gdi,
                 meta={k: v for k, v in meta.items()}, source=str(path))


# --------------------------------------------------------------------------- building from controls


@dataclass
class ControlTables:
    """One control trial as tables: ``curves`` and ``parameters`` as gaitid writes them, ``cycles``
    (side, cycle, kinetic, foot_off_pct, opposite_off_pct, opposite_strike_pct), the ``settings``
    that give the numbers their meaning (convention, normalise, frame) and the subject's name."""

    name: str
    curves: pd.DataFrame
    parameters: pd.DataFrame
    cycles: pd.DataFrame
    settings: dict
    subject: str = ""


def control_from_result(result) -> ControlTables:
    """ControlTables of a :class:`gaitid.pipeline.Result`."""
    from gaitid.cycles import cycles_table

    return ControlTables(name=result.name, curves=result.curves, parameters=result.parameters,
                         cycles=cycles_table(result.cycles), settings=result.settings.as_dict(),
                         subject=result.trial.subject.name or "")


def control_from_folder(folder: str | os.PathLike, convention: str | None = None) -> list[ControlTables]:
    """ControlTables of every trial in a result folder (``<trial>_curves.csv`` and
    ``<trial>_parameters.csv``, searched recursively; ``gaitid batch`` folders carry their settings
    in ``gaitid-run.json``). ``convention``: the moment convention of tables without that record."""
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
        settings = {}
        stamp = curves_path.parent / "gaitid-run.json"
        if stamp.exists():
            try:
                settings = json.loads(stamp.read_text()).get("fingerprint", {}).get("settings", {}) or {}
            except ValueError:
                settings = {}
        if not settings.get("convention"):
            has_moments = curves["variable"].astype(str).str.endswith("Moment").any()
            if convention is None and has_moments:
                raise SettingsError(f"{curves_path}: the moment convention of these tables is not recorded "
                                    "(no gaitid-run.json beside them); give it (--convention internal|external)")
            settings = {**settings, "convention": convention}
        out.append(ControlTables(name=stem, curves=curves, parameters=params, cycles=_cycles_from_parameters(params, curves),
                                 settings=settings))
    return out


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
    :mod:`gaitid.clinical` are computed for every control and kept as parameter norms.
    """
    from gaitid.clinical import clinical_table
    from gaitid import __version__

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
    curves, params, cycles = [], [], []
    for i, it in enumerate(items):
        cyc = it.cycles.assign(trial=i)
        if it.curves is None or it.curves.empty or cyc.empty:
            continue
        curves.append(it.curves.assign(trial=i))
        clinical = clinical_table(it.curves, it.cycles, convention=it.settings.get("convention") or "internal",
                                  frame=it.settings.get("frame") or "distal")
        params.append(pd.concat([it.parameters, clinical[[c for c in it.parameters.columns if c in clinical]]],
                                ignore_index=True).assign(trial=i))
        speed = it.parameters.loc[it.parameters["parameter"] == "walking_speed", ["side", "cycle", "value"]]
        cycles.append(cyc.merge(speed.rename(columns={"value": "speed"}), on=["side", "cycle"], how="left"))
    if not curves:
        raise DataError("the control trials have no complete gait cycle")
    curves = pd.concat(curves, ignore_index=True)
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
    keep = v.str.endswith(NORM_SUFFIXES) | (v == "GroundReactionForce")
    kinetic = curves["kinetic"].astype(bool) if "kinetic" in curves else pd.Series(False, index=curves.index)
    curves = curves[(keep & (v.str.endswith("Angles") | kinetic)).to_numpy()]
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
    (:func:`gaitid.scores.gait_scores`: mean curve per side): mean, SD and n of each GVS (both
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


def compare_parameters(parameters: pd.DataFrame, norms: Norms) -> pd.DataFrame:
    """``parameters`` (a parameters, clinical or parameters-summary table: side, parameter, variable,
    component, unit and ``value`` or ``mean``) with the norms' ``norm_mean``, ``norm_sd``, ``norm_n``
    (band '' of ``norms``: :meth:`Norms.select` a band first) and ``z`` = (value - norm_mean) / norm_sd.
    The norm of the same side is used when the norms have one, else the pooled one; rows match on
    unit too, so a parameter in another unit gets no norm (NaN)."""
    value = "value" if "value" in parameters.columns else "mean"
    keys = ["parameter", "variable", "component", "unit"]
    p = parameters.copy()
    for k in keys:
        p[k] = p[k].fillna("").astype(str)
    n = norms.parameters[norms.parameters["band"] == ""].copy()
    for k in keys:
        n[k] = n[k].fillna("").astype(str)
    n = n.rename(columns={"mean": "norm_mean", "sd": "norm_sd", "n": "norm_n"})
    cols = ["norm_mean", "norm_sd", "norm_n"]
    sided = p.merge(n[n["side"] != ""][["side", *keys, *cols]], on=["side", *keys], how="left")
    pooled = p.merge(n[n["side"] == ""][[*keys, *cols]], on=keys, how="left")
    use_sided = sided["norm_mean"].notna().to_numpy()
    for c in cols:
        p[c] = np.where(use_sided, sided[c].to_numpy(float), pooled[c].to_numpy(float))
    with np.errstate(divide="ignore", invalid="ignore"):
        p["z"] = (p[value].to_numpy(float) - p["norm_mean"]) / p["norm_sd"].where(p["norm_sd"] > 0)
    return p


def parse_age_range(text: str) -> list[float]:
    """'6-12' -> [6.0, 12.0] (years)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*-\s*(\d+(?:\.\d+)?)\s*", text or "")
    if not m or float(m.group(1)) > float(m.group(2)):
        raise SettingsError(f"age range {text!r}: give it as MIN-MAX in years, e.g. 6-12")
    return [float(m.group(1)), float(m.group(2))]
