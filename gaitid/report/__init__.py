"""Per-trial and per-session reports: a PDF and a self-contained HTML page.

:func:`write_report` takes one :class:`gaitid.pipeline.result.Result` (a trial report) or a list of them
(a session report: every cycle of every trial pooled per side) and writes
``<name>_report.pdf`` and ``<name>_report.html`` into ``outdir``, atomically. Content: a first
page with the trial, the warnings that matter, the subject's data and their sources, the
spatio-temporal parameters (and norms, gait indices when given); kinematics (pelvis, hip, knee,
ankle, foot progression); kinetics (moments, powers, GRF in % stance); the moment contributions;
the kinetic parameters, gait cycles and force-plate assignment. See docs/report.md.

The sections are listed once (:mod:`gaitid.report.sections`) and their content built once; the
PDF (:mod:`gaitid.report.pages`) and the HTML (:mod:`gaitid.report.html`) only render them. The
curve pages are drawn once (:mod:`gaitid.report.canvas`) and written to both formats.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gaitid.core.errors import GaitIDError, SettingsError

FORMATS = ("pdf", "html")
# every module a report imports on its first call (a batch imports them before its workers fork)
MODULES = ("gaitid.report.content", "gaitid.report.html", "gaitid.report.normative", "gaitid.report.pages",
           "gaitid.report.pdf", "gaitid.report.plots", "gaitid.report.profile", "gaitid.report.sections",
           "reportlab.pdfgen.canvas", "reportlab.pdfbase.pdfmetrics")


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "report"


def write_report(result_or_results, outdir: str | os.PathLike, formats=FORMATS, normative=None,
                 name: str | None = None, title: str | None = None, clinical=None,
                 uncertainty: bool | None = None) -> list[Path]:
    """Write the report(s) and return their paths (in the order of ``formats``).

    ``result_or_results``: a Result or a list of Results (session). ``formats``: any of
    'pdf', 'html'. ``normative``: a CSV path, DataFrame or
    :class:`~gaitid.report.normative.NormativeBands` (format in :mod:`gaitid.report.normative`),
    drawn as a grey band, or any object with its ``band()`` method (and ``parameter_band()`` for
    spatio-temporal norms, :func:`gaitid.report.display.parameter_norm`); gaitid norms
    (:class:`gaitid.norms.Norms`) are turned to the report's moment convention and also give the gait
    indices (:func:`gaitid.cycles.scores.gait_scores`: GPS, GVS drawn as the Movement Analysis Profile, GDI).
    ``clinical``: gait indices computed elsewhere (a gait_scores table, or columns measure, side,
    value (, unit)), shown on the first page (:func:`gaitid.report.display.clinical_table`).
    ``uncertainty``: the toggle of the joint-load uncertainty (Results processed with
    ``uncertainty=...``): None (default) draws the 95 % bands around each kinetic curve and the
    parameters' "value +- SD" table when every Result has it, True requires it (DataError naming
    a trial without), False leaves it out (:mod:`gaitid.report.uncertainty_pages`).
    ``name``: file stem (default: the trial's name, or 'session'); ``title``: the heading
    (default: the trial name or 'Session: N trials').
    """
    from gaitid.report.html import write_html
    from gaitid.report.pages import pdf_pages
    from gaitid.report.pdf import write_pdf
    from gaitid.report.sections import report_inputs, report_sections

    if isinstance(formats, str):
        formats = (formats,)
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        raise SettingsError(f"report formats {list(formats)!r}: each must be one of {', '.join(FORMATS)}")
    inputs = report_inputs(result_or_results, normative, clinical, uncertainty, title)
    data = inputs.data
    sections = report_sections(inputs)  # built once, rendered by both formats
    stem = _safe_name(name or (data.trials[0] if not data.is_session else "session"))
    outdir = Path(outdir)
    files = tuple(r.trial.path for r in data.results if r.trial.path is not None)
    paths = []
    for fmt in formats:
        target = outdir / f"{stem}_report.{fmt}"
        try:
            if fmt == "pdf":
                paths.append(write_pdf(pdf_pages(sections, data), target, data.title, files))
            else:
                paths.append(write_html(data.title, sections, target, files))
        except OSError as exc:  # unwritable folder, disk full, outdir is a file...
            raise GaitIDError(f"cannot write the {fmt.upper()} report: {exc.strerror or exc}", target) from exc
        except GaitIDError as exc:  # the same, found by gaitid.io.atomic
            raise GaitIDError(f"cannot write the {fmt.upper()} report: {exc}", target) from exc
    return paths
