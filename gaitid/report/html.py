"""The HTML report: one self-contained static page (no server, no external files, no scripts).

The curve pages are the PDF's own pages (:mod:`gaitid.report.canvas`) written as inline SVG, not
drawn again; the text and tables are HTML, so the browser wraps them to the window. Order: the
summary with the warnings that matter first, the curves, then the tables and every setting.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from gaitid.io.atomic import atomic_path
from gaitid.report.content import ReportData
from gaitid.report.pages import NO_WARNINGS, clinical_table, notice_groups, subject_heading
from gaitid.report.svg import page_svg
from gaitid.report.uncertainty_pages import parameter_uncertainty_table, table_note
from gaitid.report.display import (
    Table,
    contacts_table,
    cycles_table,
    header_lines,
    parameter_table,
    settings_table,
    subject_table,
    trials_table,
)

CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;
line-height:1.35;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1em;margin:1em 0 .3em}
.header p{margin:.15em 0}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eee}
tr:nth-child(even) td{background:#fafafa}
svg.page{width:100%;height:auto;display:block;margin:.5em 0;background:#fff}
.warnings{color:#8a4b00;border:1px solid #e0c9a6;background:#fffaf2;padding:.3em 1em;margin:.8em 0}
.warnings h3{color:#8a4b00}
nav a{margin-right:1em}
#show-uncertainty:not(:checked) ~ section path.uncertainty{display:none}
.toggle{font-size:.9em;margin:.6em 0}
"""


def html_table(table: Table | None, table_id: str, empty: str = "none") -> str:
    if table is None or table.empty:
        return f'<p id="{table_id}"><em>{escape(empty)}</em></p>'
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(v)}</td>" for v in row) + "</tr>" for row in table.rows)
    notes = "".join(f"<p><em>{escape(n)}</em></p>" for n in table.notes)
    return f'<table id="{table_id}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{notes}'


def warnings_html(data: ReportData, extra: list[str]) -> str:
    groups = notice_groups(data, extra)
    if not groups:
        return f'<div class="warnings" id="warnings"><p>{escape(NO_WARNINGS)}</p></div>'
    out = ['<div class="warnings" id="warnings"><h3>Check first</h3>']
    for title, lines in groups:
        out.append(f"<p><strong>{escape(title)}</strong></p><ul>"
                   + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    out.append("</div>")
    return "".join(out)


def render_html(data: ReportData, curves, extra_warnings: list[str] = (), normative=None, clinical=None) -> str:
    """The page as a string (``curves``: the curve pages already drawn for the PDF)."""
    e = escape
    unc = parameter_uncertainty_table(data) if data.cache.get("uncertainty_shown", True) else None
    sections = [("summary", "Summary"), *((p.kind, p.heading) for p in curves),
                ("parameters", "Kinetic parameters"),
                *((("uncertainty", "Uncertainty"),) if unc is not None else ()), ("cycles", "Gait cycles"), ("plates", "Force-plate assignment"),
                ("settings", "Settings")]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>gaitid report: {e(data.title)}</title>", f"<style>{CSS}</style></head><body>",
           f"<h1>gaitid report \u2014 {e(data.title)}</h1>",
           "<nav>" + "".join(f'<a href="#{sid}">{e(head)}</a>' for sid, head in sections) + "</nav>",
           '<section id="summary" class="header"><h2>Summary</h2>']
    out += [f"<p>{e(line)}</p>" for line in header_lines(data)]
    out.append(warnings_html(data, list(extra_warnings)))
    out.append(f"<h3>{e(subject_heading(data))}</h3>" + html_table(subject_table(data.results[0]), "subject-table"))
    if data.is_session:
        out.append("<h3>Trials</h3>" + html_table(trials_table(data), "trial-table"))
    out.append("<h3>Spatio-temporal parameters</h3><p>Mean \u00b1 SD (n cycles) per side.</p>"
               + html_table(parameter_table(data, "spatiotemporal", normative), "spatiotemporal",
                            "no complete gait cycle"))
    indices = clinical_table(data, clinical)
    if indices is not None:
        out.append("<h3>Gait indices</h3>" + html_table(indices, "gait-indices"))
    out.append("</section>")
    if any(s.gid.startswith("uncertainty") for p in curves for panel in p.panels for s in panel.series):
        out.append('<input type="checkbox" id="show-uncertainty" checked> <label class="toggle" '
                   'for="show-uncertainty">show the 95 % uncertainty bands (input errors) around the kinetic '
                   'curves</label>')  # a sibling of the sections: CSS hides the bands when unchecked
    for page in curves:
        out.append(f'<section id="{page.kind}"><h2>{e(page.heading)}</h2>{page_svg(page)}</section>')
    out.append('<section id="parameters"><h2>Kinetic parameters</h2>'
               "<p>Kinetic cycles only; mean \u00b1 SD (n cycles); timing in % of the gait cycle.</p>"
               + html_table(parameter_table(data, "kinetic"), "kinetic-parameters", "no kinetic cycle") + "</section>")
    if unc is not None:
        out.append('<section id="uncertainty"><h2>Kinetic parameters: uncertainty from the input errors</h2>'
                   f"<p>{e(table_note(data))}</p>" + html_table(unc, "parameter-uncertainty", "no kinetic cycle")
                   + "</section>")
    out.append('<section id="cycles"><h2>Gait cycles</h2>'
               + html_table(cycles_table(data), "cycle-table", "no complete gait cycle") + "</section>")
    out.append('<section id="plates"><h2>Force-plate assignment</h2>'
               + html_table(contacts_table(data), "plate-table", "no plate contact") + "</section>")
    out.append('<section id="settings"><h2>Settings</h2>' + html_table(settings_table(data), "settings-table")
               + "</section>")
    out.append("</body></html>")
    return "\n".join(out)


def write_html(data: ReportData, curves, path: Path, extra_warnings: list[str] = (), inputs=(), normative=None,
               clinical=None) -> Path:
    """Write the page atomically (UTF-8)."""
    text = render_html(data, curves, extra_warnings, normative, clinical)
    with atomic_path(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
