"""The PDF report: one summary page, four figure pages, one kinetic-parameter page (6 pages)."""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_pdf import PdfPages

from gaitid.io.atomic import atomic_path
from gaitid.report.data import ReportData
from gaitid.report.plots import table_figure
from gaitid.report.tables import contacts_table, cycles_table, header_lines, parameter_table, trials_table

N_PAGES = 6


def summary_page(data: ReportData, warnings: list[str]):
    notes = header_lines(data)
    blocks = [("Trials", trials_table(data).drop(columns=["File"]))] if data.is_session else []
    blocks += [("Spatio-temporal parameters (mean \u00b1 SD, n cycles)", parameter_table(data, "spatiotemporal")),
              ("Gait cycles", cycles_table(data)),
              ("Force-plate assignment", contacts_table(data))]
    fig = table_figure(f"gaitid report \u2014 {data.title}", blocks, notes, max_rows=16, bottom=0.12)
    if warnings:
        shown = [w if len(w) <= 150 else w[:147] + "..." for w in warnings[:5]]
        if len(warnings) > 5:
            shown.append(f"... {len(warnings) - 5} more in the HTML report")
        fig.text(0.05, 0.105, "Warnings", fontsize=9, fontweight="bold", va="top", color="#8a4b00")
        for k, line in enumerate(shown):
            fig.text(0.05, 0.085 - 0.013 * k, f"\u2022 {line}", fontsize=6.5, va="top", color="#8a4b00")
    return fig


def write_pdf(data: ReportData, figures, path: Path, warnings: list[str], inputs=()) -> Path:
    """Write the PDF atomically: summary, the figures, the kinetic parameters."""
    params = parameter_table(data, "kinetic")
    pages = [summary_page(data, warnings), *(f for _, _, f in figures),
             table_figure(f"{data.title} \u2014 kinetic parameters (kinetic cycles, mean \u00b1 SD)",
                          [("Peak moments and power bursts (Winter 1991; A2, K1-K4, H1-H3)", params)],
                          max_rows=60)]
    with atomic_path(path, inputs=inputs) as tmp:
        with PdfPages(tmp, metadata={"Title": f"gaitid report: {data.title}", "Creator": "gaitid"}) as pdf:
            for fig in pages:
                pdf.savefig(fig)
    return Path(path)
