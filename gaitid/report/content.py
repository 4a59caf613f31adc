"""What a report shows, gathered from one Result (a trial) or several (a session).

Curves are read from the Results' per-frame arrays (``result.outputs``), not from the long
tables: each cycle is time-normalised once, all variables together, with
:func:`gaitid.cycles.curves.time_normalise` (the function that builds ``Result.curves``, so the report's
numbers are the Result's). A session pools every cycle of every trial, per side. Joint angles come
from every cycle (markers only); moments, powers and their parts only from the kinetic cycles
(stance on one valid plate contact). The ground reaction force is shown per valid plate contact,
0-100 % of its stance, along the direction of progression.

Everything here is plain data; :mod:`gaitid.report.display` turns it into display strings.
"""

from __future__ import annotations

import math
import warnings as pywarnings
from dataclasses import dataclass, field
from datetime import datetime, timezone

import numpy as np
import pandas as pd

from gaitid.contacts import listed_rejections
from gaitid.core.errors import DataError, GaitIDError
from gaitid.core.vocabulary import CYCLE_POINTS, SIDES
from gaitid.cycles.curves import PERCENT, time_normalise
from gaitid.cycles.parameters import summarise
from gaitid.report.emg_data import EmgData, emg_data
from gaitid.report.labels import is_kinematic

MEANING = ("convention", "normalise", "frame")  # settings that change what a curve's numbers mean
CYCLE_COLUMNS = ["trial", "side", "cycle", "kinetic", "reason", "start_s", "foot_off_pct", "end_s", "plates"]


@dataclass
class SideCurves:
    """One side's cycles pooled over the report's trials: ``values`` (n_cycles, 101, k) for the
    output ``columns`` {(variable, component): index} (component '' for a scalar), NaN where a
    trial lacks the variable; per cycle its trial, index, kinetic flag and foot off (% cycle);
    ``filled`` {variable: (n_cycles, 101) bool}: points within a gap the gap filling filled
    (:mod:`gaitid.model.gap_fill`) in a marker the variable is computed from
    (:attr:`gaitid.cycles.outputs.Outputs.reads`), None when nothing was filled; ``decomposed``
    (n_cycles, 101) bool: the points drawn from a decomposed foot load
    (:mod:`gaitid.contacts.decompose`), None when none is."""

    trial: list[str]
    cycle: np.ndarray
    kinetic: np.ndarray
    foot_off_pct: np.ndarray
    values: np.ndarray
    columns: dict[tuple[str, str], int]
    filled: dict[str, np.ndarray] | None = None
    decomposed: np.ndarray | None = None


@dataclass
class Stances:
    """Ground reaction force of one side's valid plate contacts, 0-100 % of each stance:
    ``values`` (n_contacts, 101, 3) [anterior, medial, vertical] (or lab X, Y, Z when
    ``along_progression`` is False), in ``unit``; ``trial``/``plates`` and ``decomposed`` per contact."""

    trial: list[str]
    plates: list[str]
    values: np.ndarray
    unit: str
    along_progression: bool
    decomposed: np.ndarray | None = None


@dataclass
class ReportData:
    """Everything one report shows (see the module docstring). Tables: ``cycles`` (one row per
    cycle: CYCLE_COLUMNS), ``parameters`` / ``parameters_summary`` (with a ``trial`` column),
    ``contacts``; ``notices`` per trial: the warnings grouped ('plates', 'events', 'subject',
    'other'); ``warnings``: every warning, one list; ``session_notes``: the session's own; ``emg``: the
    EMG on the cycles (None when no Result has EMG channels)."""

    title: str
    trials: list[str]
    results: list
    sides: dict[str, SideCurves]
    stances: dict[str, Stances]
    units: dict[str, str]
    cycles: pd.DataFrame
    parameters: pd.DataFrame
    parameters_summary: pd.DataFrame
    contacts: pd.DataFrame
    notices: dict[str, dict[str, list[str]]]
    warnings: list[str]
    session_notes: list[str]
    settings: dict
    convention: str
    emg: EmgData | None = None
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"))

    def __post_init__(self) -> None:
        self._mean_sd: dict = {}

    @property
    def is_session(self) -> bool:
        return len(self.results) > 1

    def cycle_matrix(self, side: str, variable: str, component: str) -> np.ndarray:
        """(n_cycles, 101) values of the cycles that carry the variable (every cycle for an angle,
        the kinetic ones otherwise), rows by trial then cycle; (0, 101) when there is none."""
        s = self.sides.get(side)
        k = s.columns.get((variable, component)) if s is not None else None
        if k is None:
            return np.empty((0, CYCLE_POINTS))
        rows = np.ones(len(s.cycle), bool) if is_kinematic(variable) else s.kinetic
        return s.values[rows, :, k]

    def filled_rows(self, side: str, variable: str) -> np.ndarray | None:
        """(n_cycles, 101) bool for the rows of :meth:`cycle_matrix`: points within a filled gap of a
        marker the variable is computed from; None when no marker of the report's trials was filled."""
        s = self.sides.get(side)
        if s is None or s.filled is None or variable not in s.filled:
            return None
        return s.filled[variable][np.ones(len(s.cycle), bool) if is_kinematic(variable) else s.kinetic]

    def mean_sd(self, side: str, variable: str, component: str):
        """(percent, mean, sd, n) arrays over those cycles (sample SD; NaN-skipping, like
        :func:`gaitid.cycles.parameters.summarise`); None when no cycle has a value."""
        key = (side, variable, component)
        if key not in self._mean_sd:
            mean, sd, n = mean_sd_of(self.cycle_matrix(side, variable, component))
            self._mean_sd[key] = (PERCENT, mean, sd, n) if n.any() else None
        return self._mean_sd[key]

    def foot_off(self, side: str, kinetic: bool) -> float:
        """Mean foot off (% cycle) of one side's cycles (kinetic ones only if ``kinetic``); NaN if none."""
        s = self.sides.get(side)
        if s is None:
            return math.nan
        v = s.foot_off_pct[s.kinetic] if kinetic else s.foot_off_pct
        return float(np.mean(v)) if len(v) else math.nan

    def stance_grf(self, side: str) -> Stances | None:
        return self.stances.get(side)

    def subject_text(self) -> str:
        parts, seen = [], set()
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


def mean_sd_of(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, sample SD and count over the rows of ``m`` (n_curves, n_points), NaN-skipping (as
    :func:`gaitid.cycles.parameters.summarise`): SD NaN below two values, mean NaN without any."""
    n = np.isfinite(m).sum(axis=0)
    with np.errstate(all="ignore"), pywarnings.catch_warnings():
        pywarnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(m, axis=0) if len(m) else np.full(m.shape[1:], np.nan)
        sd = np.where(n > 1, np.nanstd(m, axis=0, ddof=1), np.nan) if len(m) else np.full(m.shape[1:], np.nan)
    return mean, sd, n


def _columns(curves: dict) -> tuple[list[tuple[str, str]], list[np.ndarray]]:
    cols, blocks = [], []
    for name, arr in curves.items():
        a = np.asarray(arr, float)
        if a.ndim == 1:
            cols.append((name, ""))
            blocks.append(a[:, None])
        else:
            cols += [(name, c) for c in ("X", "Y", "Z")[: a.shape[1]]]
            blocks.append(a.reshape(len(a), -1))
    return cols, blocks


def side_curves(results: list, names: list[str], side: str) -> SideCurves:
    """Every cycle of ``side`` in ``results``, all output variables time-normalised at once."""
    per_result, union = [], {}
    for r in results:
        cols, blocks = _columns(r.outputs.curves.get(side, {}))
        for c in cols:
            union.setdefault(c, len(union))
        per_result.append((cols, np.hstack(blocks) if blocks else np.empty((r.trial.n_frames, 0))))
    variables = list(dict.fromkeys(v for v, _ in union))
    trial, index, kinetic, foot_off, rows, filled, decomposed = [], [], [], [], [], [], []
    for r, name, (cols, block) in zip(results, names, per_result):
        where = [union[c] for c in cols]
        fills = getattr(r, "fills", None)
        masks = fills.curve_frames(r.outputs.reads.get(side, {}), variables, r.trial.n_frames) \
            if fills is not None and fills.filled else np.zeros((r.trial.n_frames, len(variables)), bool)
        dec = r.loads[side].decomposed if side in (r.loads or {}) else np.zeros(r.trial.n_frames, bool)
        marks = np.column_stack([dec, masks]).astype(float)  # (n, 1 + k): decomposed, then one per variable
        for c in r.cycles:
            if c.side != side:
                continue
            row = np.full((CYCLE_POINTS, len(union)), np.nan)
            if where:
                row[:, where] = time_normalise(block, r.trial.time, c.start_time, c.end_time)
            m = time_normalise(marks, r.trial.time, c.start_time, c.end_time) > 0
            decomposed.append(m[:, 0])
            filled.append(m[:, 1:])
            rows.append(row)
            trial.append(name)
            index.append(c.index)
            kinetic.append(bool(c.kinetic))
            foot_off.append(c.foot_off_pct)
    values = np.stack(rows) if rows else np.empty((0, CYCLE_POINTS, len(union)))
    stacked = np.stack(filled) if filled and np.any(filled) else None  # (n_cycles, 101, k)
    marked = {v: stacked[:, :, k] for k, v in enumerate(variables)} if stacked is not None else None
    shared = np.stack(decomposed) if decomposed and np.any(decomposed) else None
    return SideCurves(trial, np.array(index, int), np.array(kinetic, bool), np.array(foot_off, float), values, union,
                      marked, shared)


def progression_axes(result) -> np.ndarray | None:
    """(n, 3) unit vectors of the direction of progression (lab), or None without pelvis markers."""
    from gaitid.contacts.progression import progression_direction

    try:
        return progression_direction(result.trial, result.markers).direction_lab
    except GaitIDError:
        return None


def side_stances(results: list, names: list[str], side: str, directions: list) -> Stances | None:
    """The GRF of every valid, complete plate contact of ``side``, 0-100 % of the stance, along the
    direction of progression (anterior, medial = towards the other foot, vertical); in the lab's X,
    Y, Z when a trial has no direction of progression (no pelvis markers), for every trial alike."""
    along = all(d is not None for d in directions)
    trial, plates, rows, decomposed, unit = [], [], [], [], ""
    for r, name, d in zip(results, names, directions):
        F = r.outputs.curves.get(side, {}).get("GroundReactionForce")
        if F is None:
            continue
        unit = r.outputs.units.get("GroundReactionForce", unit)
        F = np.asarray(F, float)
        if along:
            medial = np.cross([0.0, 0.0, 1.0], d) * (1.0 if side == "Right" else -1.0)
            F = np.column_stack([np.einsum("ni,ni->n", F, d), np.einsum("ni,ni->n", F, medial), F[:, 2]])
        dec = r.loads[side].decomposed.astype(float) if side in (r.loads or {}) else np.zeros(r.trial.n_frames)
        for c in r.foot_contacts:
            if not (c.valid and c.side == side and c.complete and c.off_time > c.strike_time):
                continue
            rows.append(time_normalise(F, r.trial.time, c.strike_time, c.off_time))
            decomposed.append(time_normalise(dec, r.trial.time, c.strike_time, c.off_time) > 0)
            trial.append(name)
            plates.append(",".join(str(p) for p in c.plates))
    if not rows:
        return None
    return Stances(trial, plates, np.stack(rows), unit, along, np.stack(decomposed) if np.any(decomposed) else None)


def cycles_table(result, trial: str) -> pd.DataFrame:
    rows = [(trial, c.side, c.index, bool(c.kinetic), c.reason, c.start_time, c.foot_off_pct, c.end_time,
             ",".join(str(p) for p in c.plates)) for c in result.cycles]
    return pd.DataFrame(rows, columns=CYCLE_COLUMNS)


def _time(t: float, otherwise: str) -> str:
    return f"{t:.2f} s" if np.isfinite(t) else otherwise


def notices(result) -> dict[str, list[str]]:
    """The Result's warnings grouped for the first page: rejected plate contacts with their
    reasons, event disagreements, the subject's data and where each value came from, the rest."""
    plates = []
    if not result.trial.force_plates:
        plates.append("no force plates in the trial: kinematics only")
    elif not result.foot_contacts:
        plates.append("no foot contact on the force plates: kinematics only")
    listed, more = listed_rejections(result.foot_contacts)
    for c in listed:
        when = f"{_time(c.strike_time, 'record start')}\u2013{_time(c.off_time, 'record end')}"
        who = f"{c.side} foot" if c.side else "no foot assigned"
        how = " (override)" if c.source == "override" else ""
        plates.append(f"plate {','.join(str(p) for p in c.plates)}, {when}, {who}: rejected{how}: "
                      f"{c.reason or 'no reason recorded'}")
    if more:
        plates.append(f"{more:,} more rejected contacts ({len(listed) + more:,} in all), each with its reason in "
                      f"the trial's _contacts.csv")
    choice = result.event_choice
    events = [w for w in result.warnings if w.startswith(f"{choice.disagreements} detected event(s)")]
    events += choice.summary()
    subject = list(result.subject.notes)
    s, src = result.subject.subject, result.subject.sources
    subject += [f"body {name} unknown" for name in ("mass", "height") if not getattr(s, name)]
    given = sorted(k for k, v in src.items() if v == "caller" and k not in ("mass", "height", "name"))
    if given:
        subject.append(f"model parameters given by the caller: {', '.join(given)}")
    subject += centre_lines(result)
    shown = set(events) | set(subject) | set(choice.notes)
    other = [w for w in result.warnings if w not in shown]
    return {"plates": plates, "events": events, "subject": subject, "other": other, "checks": check_lines(result)}


def centre_lines(result) -> list[str]:
    """One line per joint centre saying which method gave it, per side when they differ
    (:func:`gaitid.model.point_methods.centre_methods`); none when the model cannot be loaded."""
    from gaitid.model.point_methods import centre_methods
    from gaitid.model.markerset import load_model

    try:
        model = load_model(result.settings.model)
    except GaitIDError:
        return []
    out = []
    params = result.kinematics.parameters if result.kinematics is not None else None
    for joint, by_side in centre_methods(model, params, result.subject.subject.sources).items():
        texts = list(dict.fromkeys(by_side.values()))
        out.append(f"{joint} centres: {texts[0]}" if len(texts) == 1 else
                   f"{joint} centres: " + "; ".join(f"{side.lower()} {t}" for side, t in by_side.items()))
    return out


def check_lines(result) -> list[str]:
    """One line per data-quality check of the Result: its name, outcome and figure (or why not run).
    A Result saved by an earlier version has no checks: one line says so."""
    checks = getattr(result, "checks", None)
    if checks is None:
        return ["data checks not run (saved by an earlier gaitid version: process the trial again)"]
    return [f"{c.name}: {c.status}" + (f" \u2013 {c.detail}" if c.detail else "") for c in checks]


def _with_trial(table: pd.DataFrame | None, trial: str) -> pd.DataFrame | None:
    if table is None or table.empty:
        return None
    return table.assign(trial=trial)[["trial", *table.columns]]


def _concat(parts: list, columns: list[str]) -> pd.DataFrame:
    parts = [p for p in parts if p is not None and not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)


def trial_names(results: list) -> list[str]:
    """Each Result's name, made unique ('walk (2)') when two trials share a stem."""
    names = []
    for r in results:
        name, k = r.name, 2
        while name in names:
            name = f"{r.name} ({k})"
            k += 1
        names.append(name)
    return names


def gather(results, title: str | None = None) -> ReportData:
    """ReportData of one Result or a list of Results (a session: all cycles pooled per side)."""
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    if not results:
        raise DataError("no results to report")
    names = trial_names(results)
    settings = results[0].settings.as_dict()
    session_notes = []
    for r, n in zip(results[1:], names[1:]):
        other = r.settings.as_dict()
        clash = [k for k in MEANING if other.get(k) != settings.get(k)]
        if clash:  # pooling N.m/kg with BW.H, or internal with external moments, would be wrong
            raise DataError(f"session report: {n} has {', '.join(f'{k}={other.get(k)!r}' for k in clash)} but "
                            f"{names[0]} has {', '.join(f'{k}={settings.get(k)!r}' for k in clash)}; "
                            "process the trials with the same settings")
        if other != settings:
            session_notes.append(f"{n}: processed with different settings than {names[0]} "
                                 f"(the report lists {names[0]}'s)")
    warnings = list(session_notes)
    for r, n in zip(results, names):
        warnings += [f"{n}: {w}" if len(results) > 1 else w for w in r.warnings]
    units: dict[str, str] = {}
    for r in results:
        units = {**r.outputs.units, **units}
    directions = [progression_axes(r) for r in results]
    params = _concat([_with_trial(r.parameters, n) for r, n in zip(results, names)],
                     ["trial", "side", "cycle", "parameter", "variable", "component", "value", "unit", "percent"])
    if params.empty:
        params_summary = pd.DataFrame(columns=["side", "parameter", "variable", "component", "unit", "mean",
                                               "percent_mean", "sd", "n"])
    elif len(results) == 1 and results[0].parameters_summary is not None:
        params_summary = results[0].parameters_summary  # the same summary, made by process()
    else:
        params_summary = summarise(params.drop(columns=["trial", "cycle"]))
    return ReportData(
        title=title if title is not None else (names[0] if len(results) == 1 else f"Session: {len(results)} trials"),
        trials=names, results=results,
        sides={side: side_curves(results, names, side) for side in SIDES},
        stances={side: st for side in SIDES if (st := side_stances(results, names, side, directions)) is not None},
        units=units,
        cycles=_concat([cycles_table(r, n) for r, n in zip(results, names)], CYCLE_COLUMNS),
        parameters=params, parameters_summary=params_summary,
        contacts=_concat([_with_trial(r.contacts, n) for r, n in zip(results, names)], ["trial"]),
        notices={n: notices(r) for r, n in zip(results, names)},
        warnings=warnings, session_notes=session_notes, settings=settings, convention=results[0].settings.convention,
        emg=emg_data(results, names),
    )
