"""The report's sections, listed once, in the order both the PDF and the HTML page show them.

:data:`SECTIONS` is that list: the summary (the first page), the Movement Analysis Profile, the
curve pages, the EMG pages (when a Result has EMG channels), the kinematic and the kinetic parameters,
the latter's uncertainty, the gait cycles, the force-plate
assignment and the settings (HTML only). A :class:`Section` says whether a report shows it
(``shown``) and builds its content (``build``) from :class:`ReportInputs`: the gathered data and
the options (normative bands, gait indices, the uncertainty toggle). The content is plain data --
lines of text, the warnings, display tables, pages drawn on the vector canvas -- built once by
:func:`report_sections`; :mod:`gaitid.report.pages` pours it onto the PDF's pages and
:mod:`gaitid.report.html` writes it as HTML, neither deciding what is shown or in what order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from gaitid.report.canvas import Page
from gaitid.report.content import ReportData, gather
from gaitid.report.display import (
    Table,
    check_summary,
    clinical_table,
    contacts_table,
    cycles_table,
    header_lines,
    notice_groups,
    parameter_table,
    settings_table,
    subject_heading,
    subject_table,
    trials_table,
)
from gaitid.report.emg_pages import emg_pages
from gaitid.report.normative import read_normative
from gaitid.report.plots import contributions_page, draws_cycles, kinematics_page, kinetics_page
from gaitid.report.profile import has_profile, map_page
from gaitid.report.uncertainty_pages import (
    has_uncertainty,
    parameter_uncertainty_table,
    table_note,
    uncertainty_bands,
)


@dataclass(frozen=True)
class ReportInputs:
    """What a report is built from: the gathered ``data``; ``normative``: the bands (an object with
    ``band()``; None: none); ``clinical``: the gait indices (None: none); ``uncertainty``: the
    toggle of the joint-load uncertainty (None: shown when every Result has it, True: required,
    False: left out); ``extra_warnings``: more warnings for the first page (the norms' own,
    ``normative.warnings``, are listed after them)."""

    data: ReportData
    normative: object = None
    clinical: object = None
    uncertainty: bool | None = None
    extra_warnings: tuple[str, ...] = ()


def report_inputs(result_or_results, normative=None, clinical=None, uncertainty: bool | None = None,
                  title: str | None = None) -> ReportInputs:
    """The inputs of :func:`gaitid.report.write_report`'s arguments: the Results gathered, a
    normative CSV or DataFrame read, gaitid norms turned to the report's moment convention and,
    without ``clinical``, scored (:func:`gaitid.cycles.scores.gait_scores`: GPS, GVS, GDI)."""
    data = gather(result_or_results, title=title)
    # a CSV, a DataFrame, or any object with the bands' interface (band(); parameter_band() for norms)
    bands = normative if normative is None or callable(getattr(normative, "band", None)) else read_normative(normative)
    if callable(getattr(bands, "in_convention", None)):  # gaitid norms: moments in the report's convention
        bands = bands.in_convention(data.convention)
    if clinical is None and callable(getattr(bands, "score_reference", None)):  # norms: GPS, GVS (MAP), GDI
        from gaitid.cycles.scores import gait_scores

        clinical = gait_scores(data.results if data.is_session else data.results[0], bands)
    return ReportInputs(data, bands, clinical, uncertainty)


# --------------------------------------------------------------------------- content


@dataclass(frozen=True)
class Lines:
    """Lines of text, each a paragraph of its own (the summary's header)."""

    lines: tuple[str, ...]


@dataclass(frozen=True)
class Warnings:
    """The warnings that matter, grouped: ((group title, lines), ...); empty when there are none;
    ``checks``: the data-quality checks' lines (:func:`~gaitid.report.display.check_summary`),
    ``checks_warned`` whether any of them warned."""

    groups: tuple[tuple[str, tuple[str, ...]], ...]
    checks: tuple[str, ...] = ()
    checks_warned: bool = False


@dataclass(frozen=True)
class TableBlock:
    """A display table: ``table_id`` names it in the HTML page; ``empty`` is said instead of a table
    without rows; ``heading``: its sub-heading inside the section ('' for the section's own table),
    ``pdf_heading`` the PDF's when longer; ``note``: a sentence above it in both formats,
    ``html_note`` in the HTML page only (the PDF says it in its page footer)."""

    table: Table
    table_id: str
    empty: str = "none"
    heading: str = ""
    pdf_heading: str = ""
    note: str = ""
    html_note: str = ""


@dataclass(frozen=True)
class Drawn:
    """Pages drawn on the vector canvas (:mod:`gaitid.report.canvas`), written to both formats."""

    pages: tuple[Page, ...]


def always(inputs: ReportInputs) -> bool:
    return True


@dataclass(frozen=True)
class Section:
    """One section of the report: ``key`` (its id in the HTML page) and ``title``; ``shown``:
    whether a report shows it; ``build``: its content (a tuple of :class:`Lines`, :class:`Warnings`,
    :class:`TableBlock`, :class:`Drawn`). ``nav``: the HTML page's link to it when shorter than the
    title; ``pdf_title``: the PDF's heading when longer. ``pdf_pages``: the kind of the PDF's
    flowing pages it is poured onto, with the sections around it of the same kind ('summary',
    'tables': :mod:`gaitid.report.pages`); '' for drawn pages. ``only_in``: the one format that
    shows it ('pdf' or 'html'; '': both)."""

    key: str
    title: str
    build: Callable[[ReportInputs], tuple]
    shown: Callable[[ReportInputs], bool] = always
    nav: str = ""
    pdf_title: str = ""
    pdf_pages: str = ""
    only_in: str = ""

    def shows_in(self, fmt: str) -> bool:
        """Whether the ``fmt`` ('pdf', 'html') report shows this section."""
        return self.only_in in ("", fmt)


@dataclass(frozen=True)
class SectionContent:
    """A section a report shows, with its content built."""

    section: Section
    blocks: tuple


def _summary(inputs: ReportInputs) -> tuple:
    data = inputs.data
    extra = [*inputs.extra_warnings, *(getattr(inputs.normative, "warnings", None) or ())]
    blocks = [Lines(tuple(header_lines(data))),
              Warnings(tuple((title, tuple(lines)) for title, lines in notice_groups(data, extra)),
                       *check_summary(data)),
              TableBlock(subject_table(data.results[0]), "subject-table", heading=subject_heading(data))]
    if data.is_session:
        blocks.append(TableBlock(trials_table(data), "trial-table", heading="Trials"))
    blocks.append(TableBlock(parameter_table(data, "spatiotemporal", inputs.normative), "spatiotemporal",
                             "no complete gait cycle", heading="Spatio-temporal parameters",
                             html_note="Mean \u00b1 SD (n cycles) per side."))
    indices = clinical_table(data, inputs.clinical)
    if indices is not None:
        blocks.append(TableBlock(indices, "gait-indices", heading="Gait indices",
                                 pdf_heading="Gait indices (Movement Analysis Profile: next page)"
                                 if has_profile(inputs.clinical) else "Gait indices"))
    return tuple(blocks)


def _kinetics(inputs: ReportInputs) -> tuple:
    bands = uncertainty_bands(inputs.data, inputs.uncertainty)
    return (Drawn((kinetics_page(inputs.data, inputs.normative, draws_cycles(inputs.data), bands),)),)


SECTIONS = (
    Section("summary", "Summary", _summary, pdf_pages="summary"),
    Section("map", "Movement Analysis Profile", lambda i: (Drawn((map_page(i.data, i.clinical),)),),
            shown=lambda i: has_profile(i.clinical)),
    Section("kinematics", "Kinematics",
            lambda i: (Drawn((kinematics_page(i.data, i.normative, draws_cycles(i.data)),)),)),
    Section("kinetics", "Kinetics", _kinetics),
    Section("contributions", "Moment contributions", lambda i: (Drawn((contributions_page(i.data),)),)),
    Section("emg", "EMG", lambda i: (Drawn(tuple(emg_pages(i.data, i.normative))),),
            shown=lambda i: i.data.emg is not None),
    Section("kinematic-parameters", "Kinematic parameters",
            lambda i: (TableBlock(parameter_table(i.data, "kinematic"), "kinematic-parameters", "no complete gait cycle",
                                  html_note="Every cycle; mean \u00b1 SD (n cycles); timing in % of the gait cycle."),),
            pdf_title="Kinematic parameters: joint angles in their phase (every cycle)", nav="Kinematic parameters",
            pdf_pages="tables"),
    Section("parameters", "Kinetic parameters",
            lambda i: (TableBlock(parameter_table(i.data, "kinetic"), "kinetic-parameters", "no kinetic cycle",
                                  html_note="Kinetic cycles only; mean \u00b1 SD (n cycles); timing in % of the "
                                            "gait cycle."),),
            pdf_title="Kinetic parameters: peak moments and power bursts (Winter 1991; A2, K1-K4, H1-H3)",
            pdf_pages="tables"),
    Section("uncertainty", "Kinetic parameters: uncertainty from the input errors",
            lambda i: (TableBlock(parameter_uncertainty_table(i.data), "parameter-uncertainty", "no kinetic cycle",
                                  note=table_note(i.data)),),
            shown=lambda i: i.uncertainty is not False and has_uncertainty(i.data), nav="Uncertainty",
            pdf_pages="tables"),
    Section("cycles", "Gait cycles",
            lambda i: (TableBlock(cycles_table(i.data), "cycle-table", "no complete gait cycle"),), pdf_pages="tables"),
    Section("plates", "Force-plate assignment",
            lambda i: (TableBlock(contacts_table(i.data), "plate-table", "no plate contact"),), pdf_pages="tables"),
    Section("settings", "Settings", lambda i: (TableBlock(settings_table(i.data), "settings-table"),),
            pdf_pages="tables", only_in="html"),
)


def report_sections(inputs: ReportInputs, sections=SECTIONS) -> list[SectionContent]:
    """The ``sections`` a report shows, in order, each with its content built (once). The drawn
    pages are built first: drawing the curves records in the norms the curves not drawn for their
    unit (:meth:`gaitid.norms.Norms.band`), which the first page lists."""
    shown = [s for s in sections if s.shown(inputs)]
    built = {s.key: s.build(inputs) for s in sorted(shown, key=lambda s: bool(s.pdf_pages))}
    return [SectionContent(s, built[s.key]) for s in shown]


def curve_pages(data: ReportData, normative=None, uncertainty: bool | None = None) -> list[Page]:
    """The curve pages in report order: the drawn sections without gait indices (no MAP page).
    ``uncertainty``: the toggle of the kinetic curves' uncertainty bands (None: drawn when every
    Result has an uncertainty; :mod:`gaitid.report.uncertainty_pages`)."""
    parts = report_sections(ReportInputs(data, normative, uncertainty=uncertainty),
                            [s for s in SECTIONS if not s.pdf_pages])
    return [page for part in parts for block in part.blocks for page in block.pages]
