"""What a report shows, gathered from one Result (a trial) or several (a session).

:func:`gather` concatenates the Results' tidy tables with a ``trial`` column, so a
session report pools every cycle of every trial, per side. Curve means and SDs are
recomputed here with :func:`gaitid.cycles.summarise` from the cycles that carry
the quantity: every cycle for joint angles (markers only), the kinetic cycles
(stance on one valid plate contact) for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from gaitid.parameters import summarise
from gaitid.errors import DataError
from gaitid.report.labels import is_kinematic


MEANING = ("convention", "normalise", "frame")  # settings that change what a curve's numbers mean


@dataclass
class ReportData:
    """Tables of one report. ``curves``: cycle curves + ``trial`` column (kinetic variables
    only from kinetic cycles); ``summary``: their mean/sd/n per side; ``cycles``: one row per
    cycle (trial, side, cycle, kinetic, reason, start_s, foot_off_pct, end_s, plates)."""

    title: str
    trials: list[str]
    results: list  # the Results, in order
    curves: pd.DataFrame
    summary: pd.DataFrame
    cycles: pd.DataFrame
    parameters: pd.DataFrame
    parameters_summary: pd.DataFrame
    contacts: pd.DataFrame
    warnings: list[str]
    settings: dict
    convention: str
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))

    def __post_init__(self) -> None:
        self._matrices: dict | None = None
        self._summaries: dict | None = None

    def cycle_matrix(self, side: str, variable: str, component: str) -> np.ndarray:
        """(n_cycles, n_points) values of one side's cycles, rows by trial then cycle; (0, 0) if none."""
        if self._matrices is None:
            self._matrices = {}
            c = self.curves.sort_values(["trial", "side", "variable", "component", "cycle", "percent"], kind="stable")
            for key, g in c.groupby(["side", "variable", "component"], sort=False):
                n = g["percent"].nunique()
                self._matrices[key] = g["value"].to_numpy(float).reshape(-1, n)
        return self._matrices.get((side, variable, component), np.empty((0, 0)))

    def mean_sd(self, side: str, variable: str, component: str):
        """(percent, mean, sd) arrays of one side's curve from ``summary``; None if absent."""
        if self._summaries is None:
            self._summaries = {}
            s = self.summary.sort_values("percent", kind="stable")
            for key, g in s.groupby(["side", "variable", "component"], sort=False):
                self._summaries[key] = (g["percent"].to_numpy(float), g["mean"].to_numpy(float),
                                        g["sd"].to_numpy(float))
        return self._summaries.get((side, variable, component))

    @property
    def is_session(self) -> bool:
        return len(self.results) > 1

    def foot_off(self, side: str, kinetic: bool) -> float:
        """Mean foot-off (% cycle) of one side's cycles (kinetic ones only if ``kinetic``); NaN if none."""
        c = self.cycles[self.cycles["side"] == side]
        if kinetic:
            c = c[c["kinetic"]]
        return float(c["foot_off_pct"].mean()) if len(c) else np.nan

    def subject_text(self) -> str:
        parts = []
        seen = set()
        for r in self.results:
            s = r.trial.subject
            key = (s.name, s.mass, s.height)
            if key in seen:
                continue
            seen.add(key)
            mass = f"{s.mass:.1f} kg" if s.mass else "mass unknown"
            height = f"{s.height:.2f} m" if s.height else "height unknown"
            parts.append(f"{s.name or 'subject'}: {mass}, {height}")
        return "; ".join(parts)


def _cycles_table(result, trial: str) -> pd.DataFrame:
    rows = [dict(trial=trial, side=c.side, cycle=c.index, kinetic=bool(c.kinetic), reason=c.reason,
                 start_s=c.start_time, foot_off_pct=c.foot_off_pct, end_s=c.end_time,
                 plates=",".join(str(p) for p in c.plates))
            for c in result.cycles]
    cols = ["trial", "side", "cycle", "kinetic", "reason", "start_s", "foot_off_pct", "end_s", "plates"]
    return pd.DataFrame(rows, columns=cols)


def _with_trial(table: pd.DataFrame | None, trial: str) -> pd.DataFrame | None:
    if table is None or table.empty:
        return None
    return table.assign(trial=trial)[["trial", *table.columns]]


def _concat(parts: list, columns: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if p is not None]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def report_curves(curves: pd.DataFrame) -> pd.DataFrame:
    """The curves a report draws: angles of every cycle, other variables of kinetic cycles only."""
    if curves.empty:
        return curves
    keep = curves["variable"].map(is_kinematic) | curves["kinetic"].astype(bool)
    return curves[keep.to_numpy()].reset_index(drop=True)


def gather(results, title: str | None = None) -> ReportData:
    """ReportData of one Result or a list of Results (a session: all cycles pooled per side)."""
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if not results:
        raise DataError("no results to report")
    names = []
    for r in results:
        name = r.name
        k = 2
        while name in names:  # two trials with one stem in different folders
            name = f"{r.name} ({k})"
            k += 1
        names.append(name)
    curves = _concat([_with_trial(r.curves, n) for r, n in zip(results, names)],
                     ["trial", "side", "cycle", "kinetic", "variable", "component", "percent", "value", "unit"])
    curves = report_curves(curves)
    summary = (summarise(curves.drop(columns=["trial", "cycle", "kinetic"])) if not curves.empty
               else pd.DataFrame(columns=["side", "variable", "component", "unit", "percent", "mean", "sd", "n"]))
    params = _concat([_with_trial(r.parameters, n) for r, n in zip(results, names)],
                     ["trial", "side", "cycle", "parameter", "variable", "component", "value", "unit", "percent"])
    params_summary = (summarise(params.drop(columns=["trial", "cycle"])) if not params.empty
                      else pd.DataFrame(columns=["side", "parameter", "variable", "component", "unit", "mean",
                                                 "percent_mean", "sd", "n"]))
    contacts = _concat([_with_trial(r.contacts, n) for r, n in zip(results, names)], ["trial"])
    cycles = _concat([_cycles_table(r, n) for r, n in zip(results, names)],
                     ["trial", "side", "cycle", "kinetic", "reason", "start_s", "foot_off_pct", "end_s", "plates"])
    warnings = []
    for r, n in zip(results, names):
        warnings += [f"{n}: {w}" if len(results) > 1 else w for w in r.warnings]
    settings = results[0].settings.as_dict()
    for r, n in zip(results[1:], names[1:]):
        other = r.settings.as_dict()
        clash = [k for k in MEANING if other.get(k) != settings.get(k)]
        if clash:  # pooling N.m/kg with BW.H, or internal with external moments, would be wrong
            raise DataError(f"session report: {n} has {', '.join(f'{k}={other.get(k)!r}' for k in clash)} but "
                            f"{names[0]} has {', '.join(f'{k}={settings.get(k)!r}' for k in clash)}; "
                            "process the trials with the same settings")
        if r.settings.as_dict() != settings:
            warnings.append(f"{n}: processed with different settings than {names[0]} (the report lists {names[0]}'s)")
    if title is None:
        title = names[0] if len(results) == 1 else f"Session: {len(results)} trials"
    return ReportData(title=title, trials=names, results=results, curves=curves, summary=summary, cycles=cycles,
                      parameters=params, parameters_summary=params_summary, contacts=contacts, warnings=warnings,
                      settings=settings, convention=results[0].settings.convention)
