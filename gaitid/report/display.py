"""A report's tables and texts as display strings (shared by the PDF and the HTML page): the
warnings grouped, the subject, trials, parameters, gait indices, cycles, contacts and settings.

Every cell is formatted here, explicitly: a missing number, a contact without a foot or a
cycle without a reason shows '\u2013' or '' (never 'nan', never a crash on a float where text was
expected, whatever pandas' string handling). :class:`Table` is plain lists of strings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import gaitid
from gaitid.core.checks import WARNED, verdict
from gaitid.core.vocabulary import SIDES
from gaitid.report.content import ReportData, centre_lines
from gaitid.report.labels import PLANES, quantity, sign_label

DASH = "\u2013"
SPATIOTEMPORAL = ("walking_speed", "cadence", "stride_time", "stride_length", "step_time", "step_length",
                  "stance", "swing", "double_support", "single_support", "opposite_foot_off",
                  "opposite_foot_strike")
GROUPS = (("plates", "Force plates"), ("events", "Gait events"), ("subject", "Subject data"), ("other", "Other"))
NO_WARNINGS = ("No warnings: every plate contact was assigned to a foot, the file's events agree with the "
               "detected ones, and the subject's data come from the file.")
CHECKS_TITLE = "Data checks (the plates, the markers and the subject's data tested by physics)"
SUBJECT_FIELDS = (("mass", "Body mass", "kg", 1.0, 1), ("height", "Height", "m", 1.0, 2),
                  ("leg_length", "Leg length", "mm", 1e3, 0), ("knee_width", "Knee width", "mm", 1e3, 0),
                  ("ankle_width", "Ankle width", "mm", 1e3, 0),
                  ("inter_asis_distance", "Inter-ASIS distance", "mm", 1e3, 0),
                  ("marker_diameter", "Marker diameter", "mm", 1e3, 0))


@dataclass
class Table:
    """A display table: ``columns`` and ``rows`` of strings; ``wide`` names the columns that may
    wrap over several lines (long reasons, file names) when the page is narrow."""

    columns: list[str]
    rows: list[list[str]]
    wide: tuple[str, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.rows

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=self.columns)


def text(value) -> str:
    """A cell: '' for None/NaN, the string otherwise."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def num(value, digits: int = 3) -> str:
    """A number with ``digits`` decimals; '\u2013' when missing or not finite."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return DASH
    return f"{v:.{digits}f}" if math.isfinite(v) else DASH


COARSE_UNITS = ("%", "steps/min", "deg")  # shown with one decimal


def mean_sd_text(mean: float, sd: float, n: int, unit: str = "") -> str:
    if not np.isfinite(mean):
        return DASH
    digits = 1 if unit in COARSE_UNITS or abs(mean) >= 10 else 3
    sd_text = f" \u00b1 {sd:.{digits}f}" if np.isfinite(sd) else ""
    return f"{mean:.{digits}f}{sd_text} (n={n})"


def parameter_name(parameter: str, variable: str, component: str, convention: str = "internal") -> str:
    if parameter in SPATIOTEMPORAL:
        return parameter.replace("_", " ").capitalize()
    if variable.endswith("Moment") and parameter.startswith(variable):
        kind = parameter[len(variable):].strip()
        sign = sign_label(variable, component, convention)
        return (f"{quantity(variable)} {PLANES.get(component, component).lower()} {kind} "
                f"({sign.replace(' (+)', ' +')})" if sign else f"{quantity(variable)} {component} {kind}")
    if variable.endswith("Power"):
        return f"{parameter} ({quantity(variable).lower()} burst)"
    return parameter


def parameter_norm(normative, parameter: str, unit: str):
    """Slot for spatio-temporal norms: (mean, sd) of ``parameter`` in ``unit`` when the normative
    data carries it (an object with ``parameter_band(parameter, unit) -> (mean, sd) | None``,
    e.g. the norms module being added); None otherwise, and the column is left out."""
    get = getattr(normative, "parameter_band", None)
    return get(parameter, unit) if callable(get) else None


PARAMETER_KINDS = ("spatiotemporal", "kinematic", "kinetic")
ABSENT = "absent"
ABSENT_NOTE = ("absent: the named moment does not occur in its phase window (the opposite one, or none, "
               "throughout): no value, never one of the wrong sign; 'absent in k' counts such cycles "
               "(the parameters table's note says why, per cycle).")


def parameter_kind(parameter: str, variable: str) -> str:
    """Which report table a parameter belongs to: 'spatiotemporal', 'kinematic' (angles, from every
    cycle) or 'kinetic' (moments, powers, forces: from the kinetic cycles)."""
    if parameter in SPATIOTEMPORAL:
        return "spatiotemporal"
    return "kinematic" if variable.endswith("Angles") else "kinetic"


def _absent_counts(data: ReportData) -> dict[tuple, int]:
    """{(side, parameter, variable, component, unit): cycles where the parameter is absent}."""
    p = data.parameters
    if p is None or p.empty or "note" not in p.columns:
        return {}
    keys = ["side", "parameter", "variable", "component", "unit"]
    absent = p[p["note"].fillna("").astype(str).str.startswith("absent")]
    if absent.empty:
        return {}
    absent = absent.assign(**{k: absent[k].fillna("").astype(str) for k in keys})
    return {tuple(k): int(n) for k, n in absent.groupby(keys, sort=False).size().items()}


def parameter_table(data: ReportData, kind: str = "spatiotemporal", normative=None) -> Table:
    """Mean +- SD (n) per side of the discrete parameters of one ``kind`` (:data:`PARAMETER_KINDS`,
    :func:`parameter_kind`).

    Kinematic and kinetic rows add the mean timing (% cycle) of the peak per side; a moment's name
    carries the sign label of the report's convention ("Ankle moment sagittal max (Plantarflexor +)").
    A moment peak absent from its window in every cycle shows 'absent', in some cycles
    '... (n=2; absent in 1)', with a note (:data:`ABSENT_NOTE`).
    Spatio-temporal rows add a 'Norm' column when ``normative`` gives norms (:func:`parameter_norm`).
    """
    if kind not in PARAMETER_KINDS:
        raise ValueError(f"parameter table kind {kind!r}: one of {', '.join(PARAMETER_KINDS)}")
    timed = kind != "spatiotemporal"
    columns = ["Parameter", "Unit", "Left", *(["Left timing [%]"] if timed else []), "Right",
               *(["Right timing [%]"] if timed else [])]
    s = data.parameters_summary
    if s is None or s.empty:
        return Table(columns, [])
    keys = ["parameter", "variable", "component", "unit"]
    s = s.assign(**{k: s[k].fillna("").astype(str) for k in keys})
    s = s[[parameter_kind(p, v) == kind for p, v in zip(s["parameter"], s["variable"])]]
    order = list(dict.fromkeys(zip(*(s[k].tolist() for k in keys))))
    if kind == "spatiotemporal":
        order.sort(key=lambda key: SPATIOTEMPORAL.index(key[0]))
    by_key = {(r.side, r.parameter, r.variable, r.component, r.unit): r for r in s.itertuples(index=False)}
    absent = _absent_counts(data) if kind == "kinetic" else {}
    norms = {key: parameter_norm(normative, key[0], key[3]) for key in order} if normative is not None else {}
    show_norm = any(v is not None for v in norms.values())
    rows = []
    for key in order:
        row = [parameter_name(key[0], key[1], key[2], data.convention), key[3]]
        for side in SIDES:
            r = by_key.get((side, *key))
            cell = mean_sd_text(float(r.mean), float(r.sd), int(r.n), key[3]) if r is not None else DASH
            k = absent.get((side, *key), 0)
            if k and cell == DASH:
                cell = ABSENT
            elif k:
                cell = f"{cell[:-1]}; absent in {k})"
            row.append(cell)
            if timed:
                pm = float(getattr(r, "percent_mean", np.nan)) if r is not None else np.nan
                row.append(f"{pm:.0f}" if np.isfinite(pm) else DASH)
        if show_norm:
            norm = norms.get(key)
            row.append(mean_sd_text(*norm, 0, key[3]).removesuffix(" (n=0)") if norm is not None else DASH)
        rows.append(row)
    notes = [ABSENT_NOTE] if absent else []  # (kinetic rows only)
    return Table(columns + (["Norm (mean \u00b1 SD)"] if show_norm else []), rows, wide=("Parameter",), notes=notes)


def cycles_table(data: ReportData) -> Table:
    columns = ["Trial", "Side", "Cycle", "Start [s]", "End [s]", "Foot off [%]", "Kinetic"]
    rows = []
    for r in data.cycles.itertuples(index=False):
        kinetic = f"yes (plate {text(r.plates)})" if r.kinetic else f"no: {text(r.reason) or 'no reason recorded'}"
        rows.append([text(r.trial), text(r.side), str(int(r.cycle)), num(r.start_s), num(r.end_s),
                     num(r.foot_off_pct, 1), kinetic])
    table = _first_rows(Table(columns, rows, wide=("Kinetic",)), data, "gait cycles",
                        "their events are in the trial's _events.csv, their parameters in _parameters.csv")
    return _drop_trial(table, data)


def contacts_table(data: ReportData) -> Table:
    columns = ["Trial", "Plate(s)", "Foot", "Strike [s]", "Off [s]", "Valid", "Reason", "Source"]
    c = data.contacts
    rows = []
    if c is not None and not c.empty:
        for r in c.itertuples(index=False):
            rows.append([text(r.trial), text(r.plates), text(r.side) or "none", num(r.strike_time_s),
                         num(r.off_time_s), "yes" if bool(r.valid) else "no", text(r.reason), text(r.source)])
    table = _first_rows(Table(columns, rows, wide=("Reason",)), data, "plate contacts",
                        "every one is in the trial's _contacts.csv with its reason")
    return _drop_trial(table, data)


ROWS_PER_TRIAL = 40  # rows of one trial in the cycles and contacts tables; a long trial's others are counted


def _first_rows(table: Table, data: ReportData, noun: str, where: str) -> Table:
    """The first :data:`ROWS_PER_TRIAL` rows of each trial (column 0), in order, and a note per trial
    with more (a treadmill trial has thousands of cycles: 340 pages for an hour) counting them and
    saying where they all are."""
    count: dict[str, int] = {}
    rows = []
    for row in table.rows:
        count[row[0]] = count.get(row[0], 0) + 1
        if count[row[0]] <= ROWS_PER_TRIAL:
            rows.append(row)
    notes = [f"{trial}: the first" if data.is_session else "The first" for trial in count]
    notes = [f"{lead} {ROWS_PER_TRIAL} of {n:,} {noun} are listed; {where}."
             for lead, n in zip(notes, count.values()) if n > ROWS_PER_TRIAL]
    return Table(table.columns, rows, table.wide, [*table.notes, *notes])


def _drop_trial(table: Table, data: ReportData) -> Table:
    if data.is_session:
        return table
    return Table(table.columns[1:], [row[1:] for row in table.rows], table.wide, table.notes)


def trials_table(data: ReportData) -> Table:
    """One row per trial of a session: file, subject mass, cycles and kinetic cycles per side."""
    columns = ["Trial", "File", "Mass [kg]", *(f"{s} cycles (kinetic)" for s in SIDES), "Warnings"]
    rows = []
    for r, name in zip(data.results, data.trials):
        c = data.cycles[data.cycles["trial"] == name]
        row = [name, text(r.trial.path), num(r.trial.subject.mass, 1)]
        for side in SIDES:
            cs = c[c["side"] == side]
            row.append(f"{len(cs)} ({int(cs['kinetic'].astype(bool).sum())})")
        rows.append(row + [str(len(r.warnings))])
    return Table(columns, rows, wide=("File",))


def notice_groups(data: ReportData, extra: list[str] = ()) -> list[tuple[str, list[str]]]:
    """[(group title, lines)] of the warnings that matter (trial name first in a session);
    ``extra``: more warnings (e.g. the normative file's), listed under 'Other'."""
    out = []
    for key, title in GROUPS:
        lines = [f"{name}: {line}" if data.is_session else line
                 for name, groups in data.notices.items() for line in groups.get(key, [])]
        if key == "other":
            lines += [*data.session_notes, *extra]
        if lines:
            out.append((title, lines))
    return out


def check_summary(data: ReportData) -> tuple[tuple[str, ...], bool]:
    """The data-quality checks for the first page (each check of a single trial, one verdict line per
    trial of a session) and whether any warned."""
    warned = any(c.status == WARNED for r in data.results for c in (getattr(r, "checks", None) or ()))
    if not data.is_session:
        return tuple(data.notices[data.trials[0]].get("checks", [])), warned
    return tuple(f"{n}: {verdict(r.checks)}" if getattr(r, "checks", None) is not None else
                 f"{n}: {data.notices[n]['checks'][0]}" for n, r in zip(data.trials, data.results)), warned


def subject_heading(data: ReportData) -> str:
    """'Subject', or in a session whose trials have other subjects, whose data the table shows."""
    subjects = {(r.trial.subject.name, r.trial.subject.mass) for r in data.results}
    return "Subject" if len(subjects) == 1 else f"Subject of {data.trials[0]} (each trial's mass: Trials table)"


def clinical_table(data: ReportData, clinical=None) -> Table | None:
    """Gait indices per side when the call (``clinical``) or the Result (an attribute ``clinical``)
    supplies them: a :func:`gaitid.cycles.scores.gait_scores` table (GPS, GDI, then each GVS, with the
    controls' mean +- SD when the norms hold it), or any table with columns ``measure``, ``side``
    ('Left', 'Right' or 'Overall'), ``value`` and optionally ``unit``; None (nothing drawn) otherwise."""
    source = clinical if clinical is not None else getattr(data.results[0], "clinical", None)
    if source is None:
        return None
    df = source if isinstance(source, pd.DataFrame) else pd.DataFrame(source)
    if {"score", "name"} <= set(df.columns):  # gait_scores: GPS and GDI first, then the MAP's GVS
        order = df["score"].map({"GPS": 0, "GDI": 1, "GVS": 2})
        df = df.assign(measure=[s if s == n else f"GVS {n}" for s, n in zip(df["score"], df["name"])],
                       _o=order).sort_values("_o", kind="stable")
    if df.empty or not {"measure", "side", "value"} <= set(df.columns):
        return None
    sides = [s for s in (*SIDES, "Overall") if s in set(df["side"])]
    controls = "reference_mean" in df.columns and df["reference_mean"].notna().any()
    rows = []
    for measure, g in df.groupby("measure", sort=False):
        unit = str(g["unit"].iloc[0]) if "unit" in g.columns else ""
        by_side = dict(zip(g["side"], g["value"]))
        row = [str(measure), unit, *(num(by_side.get(s), 1) for s in sides)]
        if controls:
            m, sd = float(g["reference_mean"].iloc[0]), float(g["reference_sd"].iloc[0])
            row.append(f"{m:.1f} \u00b1 {sd:.1f}" if np.isfinite(m) and np.isfinite(sd) else "\u2013")
        rows.append(row)
    return Table(["Index", "Unit", *sides, *(["Controls (mean \u00b1 SD)"] if controls else [])], rows)


def subject_table(result) -> Table:
    """The subject's data used, with where each value came from ('file', 'caller', 'plates')."""
    s, src = result.subject.subject, result.subject.sources
    rows = []
    for name, label, unit, scale, digits in SUBJECT_FIELDS:
        sided = [f"{name}_{side.lower()}" for side in SIDES]
        if hasattr(s, name):
            value = getattr(s, name)
            rows.append([label, f"{num(value * scale if value else None, digits)} {unit}" if value else "unknown",
                         src.get(name, "")])
        elif all(hasattr(s, k) for k in sided):
            values = [getattr(s, k) for k in sided]
            if any(v is not None for v in values):
                rows.append([f"{label} L / R", " / ".join(num(v * scale if v is not None else None, digits)
                                                             for v in values) + f" {unit}",
                             " / ".join(src.get(k, "") or DASH for k in sided)])
    for key, value in sorted((result.subject.parameters or {}).items()):
        rows.append([key, text(value), "caller"])
    for line in centre_lines(result):
        joint, method = line.split(": ", 1)
        rows.append([joint[0].upper() + joint[1:], "method", method])
    return Table(["Subject", "Value", "Source"], rows)


def settings_table(data: ReportData) -> Table:
    return Table(["Setting", "Value"], [[k, text(v)] for k, v in data.settings.items()], wide=("Value",))


def _filters(s: dict) -> str:
    def hz(v):
        return "none" if v is None else f"{v:g} Hz"

    markers, plates = s.get("marker_cutoff_hz"), s.get("force_cutoff_hz")
    plates_text = f"{hz(markers)} (as markers)" if plates == "markers" else hz(plates)
    return (f"low-pass zero-lag Butterworth order {s.get('filter_order')}, markers {hz(markers)}, "
            f"force plates {plates_text}")


def cycle_counts(data: ReportData) -> str:
    c = data.cycles
    parts = []
    for side in SIDES:
        cs = c[c["side"] == side]
        if len(cs):
            parts.append(f"{side}: {len(cs)} cycles ({int(cs['kinetic'].astype(bool).sum())} kinetic)")
    return ", ".join(parts) or "no complete cycle"


def header_lines(data: ReportData) -> list[str]:
    """Trial(s), subject, processing date, gaitid version and the settings that change the numbers."""
    s = data.settings
    r = data.results[0]
    lines = [f"{'Trials' if data.is_session else 'Trial'}: {', '.join(data.trials)}"]
    if not data.is_session and r.trial.path is not None:
        lines.append(f"File: {r.trial.path}")
    if not data.is_session:
        t = r.trial
        lines.append(f"Record: {t.n_frames} frames at {t.point_rate:g} Hz ({t.n_frames / t.point_rate:.2f} s), "
                     f"{len(t.force_plates)} force plate(s)")
        static = getattr(r, "static", None)
        lines.append(f"Static trial: {'given as a Trial object' if str(static) == '?' else static}" if static is not None else
                     "Static trial: none (segment parameters from the walking trial and the subject data)")
    lines += [
        f"Subject: {data.subject_text()}",
        f"Processed: {data.created} with gaitid {gaitid.__version__}",
        f"Model: {s.get('model')}; moments {s.get('convention')}, in the {s.get('frame')} segment frame; "
        f"normalised by {s.get('normalise')}",
        f"Filters: {_filters(s)}; events: {s.get('events')}",
        f"Cycles: {cycle_counts(data)}",
    ]
    return lines
