"""The report's pages in order, and what its first page says.

First page (:func:`summary_pages`): the trial and the settings that change the numbers, the
warnings that matter grouped (rejected plate contacts with their reasons, event disagreements,
the subject's data and where each value came from, anything else), the subject's data, the
spatio-temporal parameters (with norms when given), and the slot for gait indices (GPS/MAP) when
given. Then the curve pages (:mod:`gaitid.report.plots`), then the tables (kinetic parameters,
gait cycles, force-plate assignment). A long first page or table continues on the next page.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gaitid.report.canvas import Page
from gaitid.report.content import ReportData
from gaitid.report.labels import moment_convention
from gaitid.report.layout import WARN, Flow
from gaitid.report.plots import curve_pages
from gaitid.report.uncertainty_pages import parameter_uncertainty_table, table_note
from gaitid.report.display import (
    Table,
    contacts_table,
    cycles_table,
    header_lines,
    num,
    parameter_table,
    subject_table,
    trials_table,
)
from gaitid.core.vocabulary import SIDES

GROUPS = (("plates", "Force plates"), ("events", "Gait events"), ("subject", "Subject data"), ("other", "Other"))
NO_WARNINGS = ("No warnings: every plate contact was assigned to a foot, the file's events agree with the "
               "detected ones, and the subject's data come from the file.")


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


def summary_pages(data: ReportData, normative=None, clinical=None, extra_warnings: list[str] = ()) -> list[Page]:
    """The first page (and its continuation when the warnings or tables are long)."""
    flow = Flow("summary", data.title, "Summary", [
        "Parameters: mean \u00b1 SD (n cycles) per side; timings in % of the gait cycle. "
        + moment_convention(data.convention, data.settings.get("frame", "distal"))])
    for line in header_lines(data):
        flow.paragraph(line, size=7.5)
    flow.space(4.0)
    flow.heading_text("Check first", colour=WARN)
    groups = notice_groups(data, extra_warnings)
    for title, lines in groups:
        flow.paragraph(title, size=7.5, bold=True, colour=WARN)
        for line in lines:
            flow.paragraph(line, size=7.2, colour=WARN, bullet="\u2022", indent=4.0)
    if not groups:
        flow.paragraph(NO_WARNINGS, size=7.5)
    flow.space(4.0)
    flow.heading_text(subject_heading(data))
    flow.table(subject_table(data.results[0]))
    if data.is_session:
        flow.heading_text("Trials")
        flow.table(trials_table(data))
    flow.heading_text("Spatio-temporal parameters")
    flow.table(parameter_table(data, "spatiotemporal", normative), empty="no complete gait cycle")
    indices = clinical_table(data, clinical)
    if indices is not None:
        flow.heading_text("Gait indices (Movement Analysis Profile: next page)")
        flow.table(indices)
    return flow.pages


def table_pages(data: ReportData) -> list[Page]:
    """Kinetic parameters, gait cycles and the force-plate assignment."""
    flow = Flow("tables", data.title, "Tables", [
        "Kinetic parameters: kinetic cycles only, mean \u00b1 SD (n cycles), timing in % of the gait cycle; "
        "each moment's name says what a positive value stands for. "
        + moment_convention(data.convention, data.settings.get("frame", "distal"))])
    flow.heading_text("Kinetic parameters: peak moments and power bursts (Winter 1991; A2, K1-K4, H1-H3)")
    flow.table(parameter_table(data, "kinetic"), empty="no kinetic cycle")
    unc = parameter_uncertainty_table(data) if data.cache.get("uncertainty_shown", True) else None
    if unc is not None:
        flow.heading_text("Kinetic parameters: uncertainty from the input errors")
        flow.paragraph(table_note(data), size=7.2)
        flow.table(unc, empty="no kinetic cycle")
    flow.heading_text("Gait cycles")
    flow.table(cycles_table(data), empty="no complete gait cycle")
    flow.heading_text("Force-plate assignment")
    flow.table(contacts_table(data), empty="no plate contact")
    return flow.pages


def report_pages(data: ReportData, curves: list[Page] | None = None, normative=None, clinical=None,
                 extra_warnings: list[str] = ()) -> list[Page]:
    """Every page of the PDF in order (``curves``: the curve pages, when already drawn)."""
    if curves is None:
        curves = curve_pages(data, normative)
    return [*summary_pages(data, normative, clinical, extra_warnings), *curves, *table_pages(data)]
