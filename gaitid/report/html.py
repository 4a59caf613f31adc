"""The HTML report: one self-contained static page (figures as inline base64 PNG, no server,
no external files or scripts)."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import pandas as pd

from gaitid.io.atomic import atomic_path
from gaitid.report.data import ReportData
from gaitid.report.tables import (
    contacts_table,
    cycles_table,
    header_lines,
    parameter_table,
    settings_table,
    trials_table,
)

CSS = """
body{font-family:-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:1.5em auto;max-width:1100px;color:#222;
line-height:1.35;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.header p{margin:.15em 0}
table{border-collapse:collapse;font-size:.85em;margin:.4em 0 1em}
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}th{background:#eee}
tr:nth-child(even) td{background:#fafafa}
img{max-width:100%;height:auto;display:block;margin:.5em 0}
.warnings li{color:#8a4b00}
nav a{margin-right:1em}
.legend-left{color:#d62728;font-weight:bold}.legend-right{color:#2ca02c;font-weight:bold}
"""


def figure_png(fig, dpi: int = 110) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _table(df: pd.DataFrame, table_id: str) -> str:
    if df is None or df.empty:
        return f'<p id="{table_id}"><em>none</em></p>'
    return df.to_html(index=False, escape=True, border=0, table_id=table_id, na_rep="\u2013")


def render_html(data: ReportData, figures, warnings: list[str]) -> str:
    """The page as a string: header, summary tables, figures, parameters, plates, warnings, settings."""
    e = html.escape
    sections = [("summary", "Summary"), *((sid, head) for sid, head, _ in figures),
                ("parameters", "Discrete parameters"), ("cycles", "Gait cycles"), ("plates", "Force-plate assignment"),
                ("warnings", "Warnings"), ("settings", "Settings")]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>gaitid report: {e(data.title)}</title>", f"<style>{CSS}</style></head><body>",
           f"<h1>gaitid report \u2014 {e(data.title)}</h1>",
           "<nav>" + "".join(f'<a href="#{sid}">{e(head)}</a>' for sid, head in sections) + "</nav>",
           '<section id="summary" class="header"><h2>Summary</h2>']
    out += [f"<p>{e(line)}</p>" for line in header_lines(data)]
    out.append('<p><span class="legend-left">Left: red</span>, <span class="legend-right">Right: green</span>; '
               "thin lines: single cycles; thick line and band: mean \u00b1 1 SD; dashed: mean foot off; "
               "grey band: normative data (when given).</p>")
    if data.is_session:
        out.append("<h3>Trials</h3>" + _table(trials_table(data), "trial-table"))
    out.append("<h3>Spatio-temporal parameters</h3>"
               + _table(parameter_table(data, "spatiotemporal"), "spatiotemporal"))
    out.append("</section>")
    for sid, head, fig in figures:
        png = base64.b64encode(figure_png(fig)).decode("ascii")
        out.append(f'<section id="{sid}"><h2>{e(head)}</h2>'
                   f'<img alt="{e(head)}" src="data:image/png;base64,{png}"></section>')
    out.append('<section id="parameters"><h2>Discrete parameters</h2>'
               "<p>Kinetic cycles only; mean \u00b1 SD (n cycles); timing in % of the gait cycle.</p>"
               + _table(parameter_table(data, "kinetic"), "kinetic-parameters") + "</section>")
    out.append('<section id="cycles"><h2>Gait cycles</h2>' + _table(cycles_table(data), "cycle-table") + "</section>")
    out.append('<section id="plates"><h2>Force-plate assignment</h2>' + _table(contacts_table(data), "plate-table")
               + "</section>")
    items = "".join(f"<li>{e(w)}</li>" for w in warnings) or "<li>none</li>"
    out.append(f'<section id="warnings"><h2>Warnings</h2><ul class="warnings">{items}</ul></section>')
    out.append('<section id="settings"><h2>Settings</h2>' + _table(settings_table(data), "settings-table")
               + "</section>")
    out.append("</body></html>")
    return "\n".join(out)


def write_html(data: ReportData, figures, path: Path, warnings: list[str], inputs=()) -> Path:
    """Write the page atomically (UTF-8)."""
    text = render_html(data, figures, warnings)
    with atomic_path(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
