"""The HTML report: one self-contained static page (no server, no external files, no scripts).

The report's sections (:mod:`gaitid.report.sections`) in their order, each an HTML ``<section>``
with the section's key as its id, linked from the page's top: the drawn pages (the MAP, the
curves) are the PDF's own pages written as inline SVG, not drawn again; the text and tables are
HTML, so the browser wraps them to the window.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from gaitid.io.atomic import atomic_path
from gaitid.report.display import CHECKS_TITLE, NO_WARNINGS, Table
from gaitid.report.sections import Drawn, Lines, SectionContent, TableBlock, Warnings
from gaitid.report.svg import page_svg

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


def warnings_html(block) -> str:
    checks = (f'<div id="data-checks"><p><strong>{escape(CHECKS_TITLE)}</strong></p><ul>'
              + "".join(f"<li>{escape(line)}</li>" for line in block.checks) + "</ul></div>") if block.checks else ""
    if not block.groups:
        return f'<div class="warnings" id="warnings"><p>{escape(NO_WARNINGS)}</p>{checks}</div>'
    out = ['<div class="warnings" id="warnings"><h3>Check first</h3>']
    for title, lines in block.groups:
        out.append(f"<p><strong>{escape(title)}</strong></p><ul>"
                   + "".join(f"<li>{escape(line)}</li>" for line in lines) + "</ul>")
    out.append(checks + "</div>")
    return "".join(out)


def block_html(block) -> str:
    """One content block as HTML."""
    e = escape
    if isinstance(block, Lines):
        return "\n".join(f"<p>{e(line)}</p>" for line in block.lines)
    if isinstance(block, Warnings):
        return warnings_html(block)
    if isinstance(block, TableBlock):
        return ((f"<h3>{e(block.heading)}</h3>" if block.heading else "")
                + "".join(f"<p>{e(note)}</p>" for note in (block.note, block.html_note) if note)
                + html_table(block.table, block.table_id, block.empty))
    if isinstance(block, Drawn):
        return "".join(page_svg(page) for page in block.pages)
    raise TypeError(f"no HTML for a {type(block).__name__}")


def has_uncertainty_bands(block) -> bool:
    """Whether ``block`` is drawn pages with an uncertainty band on them."""
    return isinstance(block, Drawn) and any(s.gid.startswith("uncertainty") for page in block.pages
                                             for panel in page.panels for s in panel.series)


TOGGLE = ('<input type="checkbox" id="show-uncertainty" checked> <label class="toggle" for="show-uncertainty">'
          "show the 95 % uncertainty bands (input errors) around the kinetic curves</label>")


def render_html(title: str, sections: list[SectionContent]) -> str:
    """The page as a string: ``sections`` (those the HTML shows) in their order. A section of several
    blocks puts each on a line of its own; the one opening with the header lines is the page's header."""
    e = escape
    shown = [part for part in sections if part.section.shows_in("html")]
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>gaitid report: {e(title)}</title>", f"<style>{CSS}</style></head><body>",
           f"<h1>gaitid report \u2014 {e(title)}</h1>",
           "<nav>" + "".join(f'<a href="#{part.section.key}">{e(part.section.nav or part.section.title)}</a>'
                             for part in shown) + "</nav>"]
    toggle = any(has_uncertainty_bands(b) for part in shown for b in part.blocks)
    for part in shown:
        s, blocks = part.section, part.blocks
        if toggle and any(isinstance(b, Drawn) for b in blocks):
            out.append(TOGGLE)  # a sibling before the drawn sections: CSS hides their bands when unchecked
            toggle = False
        header = ' class="header"' if blocks and isinstance(blocks[0], Lines) else ""
        parts = [f'<section id="{s.key}"{header}><h2>{e(s.title)}</h2>', *map(block_html, blocks), "</section>"]
        out.append(("\n" if len(blocks) > 1 else "").join(parts))
    out.append("</body></html>")
    return "\n".join(out)


def write_html(title: str, sections: list[SectionContent], path: Path, inputs=()) -> Path:
    """Write the page atomically (UTF-8)."""
    text = render_html(title, sections)
    with atomic_path(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)
