"""The report's figures in page order, built once and shared by the PDF and the HTML page."""

from __future__ import annotations

from gaitid.report.data import ReportData
from gaitid.report.plots import contributions_figure, joint_grid, power_grf_figure


def report_figures(data: ReportData, normative=None) -> list[tuple[str, str, object]]:
    """[(section id, heading, Figure)]: kinematics, moments, powers + GRF, moment contributions.
    A session with many cycles draws the means and SD bands without the single cycles."""
    show_cycles = len(data.cycles) <= 40
    return [
        ("kinematics", "Kinematics", joint_grid(data, "Angles", normative, show_cycles)),
        ("moments", "Joint moments", joint_grid(data, "Moment", normative, show_cycles)),
        ("powers-grf", "Joint powers and ground reaction forces", power_grf_figure(data, normative, show_cycles)),
        ("contributions", "Moment contributions", contributions_figure(data)),
    ]
