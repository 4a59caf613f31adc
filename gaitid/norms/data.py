"""The :class:`Norms` data type: reference curves, parameters, scores and metadata (see :mod:`gaitid.norms`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from gaitid.core.errors import SettingsError
from gaitid.cycles.scores import (
    GPS_VARIABLES,
    SCORE_PERCENT,
    GDIBasis,
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

    def parameter_band(self, parameter: str, unit: str, side: str = "") -> tuple[float, float] | None:
        """(mean, sd) of a discrete parameter (all speeds; pooled over sides unless ``side``, else the
        mean of the sides' values), or None when absent or in another unit than ``unit``."""
        p = self.parameters
        if p.empty:
            return None
        sel = p[(p["parameter"] == parameter) & (p["band"] == "") & (p["unit"].fillna("") == unit)]
        for s in dict.fromkeys((side, "")):
            one = sel[sel["side"] == s]
            if len(one):
                return float(one["mean"].iloc[0]), float(one["sd"].iloc[0])
        if sel.empty:
            return None
        return float(sel["mean"].mean()), float(sel["sd"].mean())  # the sides' norms, e.g. Left and Right

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
                       bands=self.bands.iloc[0:0], meta={**self.meta, "band": band}, warnings=list(self.warnings))

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
        the other convention. Norms that state no convention are taken as they are (a warning says
        so when they hold moments). Always a new Norms with its own ``warnings`` list, so notes a report
        adds (:meth:`band`) never reach these norms, which a batch worker reuses for every trial.
        Clinical parameters (:mod:`gaitid.cycles.clinical`) need no change."""
        if convention not in ("internal", "external"):
            raise SettingsError(f"convention {convention!r}: must be internal or external")
        moments = self.curves["variable"].astype(str).str.endswith("Moment")
        if self.convention is None:
            msg = (f"{self.source}: states no moment convention; its moment curves are taken to be "
                   f"{convention}, as the report")
            notes = [*self.warnings, msg] if moments.any() and msg not in self.warnings else list(self.warnings)
            return replace(self, warnings=notes)
        if self.convention == convention:
            return replace(self, warnings=list(self.warnings))
        curves = self.curves.copy()
        curves.loc[moments, "mean"] = -curves.loc[moments, "mean"]
        p = self.parameters.copy()
        whole = p["parameter"].astype(str).str.fullmatch(r"\w+Moment (max|min)")
        swap = {"max": "min", "min": "max"}
        p.loc[whole, "parameter"] = p.loc[whole, "parameter"].map(lambda s: s[:-3] + swap[s[-3:]])
        p.loc[whole, "mean"] = -p.loc[whole, "mean"]
        return replace(self, curves=curves, parameters=p, meta={**self.meta, "convention": convention},
                       warnings=list(self.warnings))

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
