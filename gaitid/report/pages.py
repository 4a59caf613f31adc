"""The PDF's pages: the report's sections (:mod:`gaitid.report.sections`) rendered in their order.

A section of drawn pages (the MAP, the curves) gives its pages as they are. The others are poured
onto flowing pages (:class:`~gaitid.report.layout.Flow`) with the sections around them of the same
kind: the first page ('Summary': the trial and the settings that change the numbers, the warnings
that matter grouped under 'Check first', the subject's data, the spatio-temporal parameters, the
gait indices) and the tables ('Tables': kinetic parameters, their uncertainty, gait cycles,
force-plate assignment). Each kind of flowing page states its conventions in its footer; a long
first page or table continues on the next page.
"""

from __future__ import annotations

from gaitid.report.canvas import Page
from gaitid.report.content import ReportData
from gaitid.report.display import CHECKS_TITLE, NO_WARNINGS
from gaitid.report.labels import moment_convention
from gaitid.report.layout import INK, WARN, Flow
from gaitid.report.sections import (
    SECTIONS,
    Drawn,
    Lines,
    ReportInputs,
    SectionContent,
    TableBlock,
    Warnings,
    report_sections,
)


def _convention(data: ReportData) -> str:
    return moment_convention(data.convention, data.settings.get("frame", "distal"))


# the PDF's flowing pages: kind -> (page heading, footer)
FLOWS = {
    "summary": ("Summary", lambda data: [
        "Parameters: mean \u00b1 SD (n cycles) per side; timings in % of the gait cycle. " + _convention(data)]),
    "tables": ("Tables", lambda data: [
        "Kinetic parameters: kinetic cycles only, mean \u00b1 SD (n cycles), timing in % of the gait cycle; "
        "each moment's name says what a positive value stands for. " + _convention(data)]),
}


def pour(flow: Flow, block) -> None:
    """One content block onto the flowing pages."""
    if isinstance(block, Lines):
        for line in block.lines:
            flow.paragraph(line, size=7.5)
        flow.space(4.0)
    elif isinstance(block, Warnings):
        flow.heading_text("Check first", colour=WARN)
        for title, lines in block.groups:
            flow.paragraph(title, size=7.5, bold=True, colour=WARN)
            for line in lines:
                flow.paragraph(line, size=7.2, colour=WARN, bullet="\u2022", indent=4.0)
        if not block.groups:
            flow.paragraph(NO_WARNINGS, size=7.5)
        if block.checks:
            flow.paragraph(CHECKS_TITLE, size=7.5, bold=True, colour=WARN if block.checks_warned else INK)
            for line in block.checks:
                flow.paragraph(line, size=7.2, bullet="\u2022", indent=4.0)
        flow.space(4.0)
    elif isinstance(block, TableBlock):
        if block.heading:
            flow.heading_text(block.pdf_heading or block.heading)
        if block.note:
            flow.paragraph(block.note, size=7.2)
        flow.table(block.table, empty=block.empty)
    else:
        raise TypeError(f"a {type(block).__name__} cannot flow")


def pdf_pages(sections: list[SectionContent], data: ReportData) -> list[Page]:
    """Every page of the PDF, in the order of ``sections`` (those the PDF shows). A section named
    after its flowing pages (key 'summary') has the pages' heading as its own; the others get a
    heading where they start."""
    runs: list[list[Page]] = []
    flow = None
    for part in sections:
        s = part.section
        if not s.shows_in("pdf"):
            continue
        if not s.pdf_pages:
            flow = None
            runs.append([page for block in part.blocks if isinstance(block, Drawn) for page in block.pages])
            continue
        if flow is None or flow.kind != s.pdf_pages:
            heading, footer = FLOWS[s.pdf_pages]
            flow = Flow(s.pdf_pages, data.title, heading, footer(data))
            runs.append(flow.pages)  # the flow adds its pages to this list as it fills them
        if s.key != s.pdf_pages:
            flow.heading_text(s.pdf_title or s.title)
        for block in part.blocks:
            pour(flow, block)
    return [page for run in runs for page in run]


def summary_pages(data: ReportData, normative=None, clinical=None, extra_warnings: list[str] = ()) -> list[Page]:
    """The first page (and its continuation when the warnings or tables are long)."""
    inputs = ReportInputs(data, normative, clinical, extra_warnings=tuple(extra_warnings))
    return pdf_pages(report_sections(inputs, [s for s in SECTIONS if s.key == "summary"]), data)


def report_pages(data: ReportData, normative=None, clinical=None, extra_warnings: list[str] = (),
                 uncertainty: bool | None = None) -> list[Page]:
    """Every page of the PDF in order (the arguments as :class:`~gaitid.report.sections.ReportInputs`')."""
    inputs = ReportInputs(data, normative, clinical, uncertainty, tuple(extra_warnings))
    return pdf_pages(report_sections(inputs), data)
