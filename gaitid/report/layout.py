"""Page frames and flowing pages: text and tables poured onto A4 pages that fit.

Every page gets the same frame (:func:`page_frame`: report title and page heading on top, the
page's conventions and legend at the bottom). :class:`Flow` places headings, paragraphs and
tables one after the other and starts a new page when the next item does not fit; a table
continues on the next page with its header row repeated. Column widths come from the text
(Helvetica metrics); the columns a table names as ``wide`` wrap over several lines when the page
is too narrow, so no cell runs off the page and nothing is cut.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.report.canvas import INK, Page, text_width, wrap
from gaitid.report.display import Table

MARGIN = (22.0, 40.0, 18.0, 30.0)  # left, top, right, bottom (points)
MUTED = "#595959"
WARN = "#8a4b00"
FOOTER_SIZE, FOOTER_LEADING = 6.8, 8.5
OUTLINE_WIDTH, OUTLINE_DASH = 0.8, (2.0, 1.2)  # a band drawn as its edges: the 95 % uncertainty band


def footer_lines(page: Page, footer: list[str]) -> list[str]:
    left, _, right, _ = MARGIN
    return [line for text in footer for line in wrap(text, page.width - left - right, FOOTER_SIZE)]


def page_frame(page: Page, title: str, heading: str, footer: list[str], legend: list | None = None) -> float:
    """Header (report title, page heading) and footer (the page's conventions, the legend); returns
    the y (points from the top) where the footer starts."""
    left, _, right, bottom = MARGIN
    w, h = page.width, page.height
    page.text(left, 22.0, f"gaitid report \u2014 {title}", size=9.5, bold=True)
    page.text(w - right, 22.0, heading, size=9.5, bold=True, anchor="end", colour=MUTED)
    page.path([[left, 28.0], [w - right, 28.0]], stroke="#999999", width=0.6)
    y = h - bottom + 10.0
    lines = footer_lines(page, footer)
    for k, line in enumerate(reversed(lines)):
        page.text(left, y - FOOTER_LEADING * k, line, size=FOOTER_SIZE, colour=MUTED)
    top = y - FOOTER_LEADING * len(lines)
    if legend:
        rows = legend_rows(page, legend, left)
        height = sum(r[0] for r in rows) * LEGEND_LEADING
        draw_legend(page, rows, top - 3.0 - height + LEGEND_LEADING)
        top -= height + 2.0
    return top


LEGEND_LEADING = 10.0  # points per line of legend
SWATCH, SWATCH_GAP, ENTRY_GAP = 14.0, 3.0, 10.0


@dataclass(frozen=True)
class LegendEntry:
    """One legend entry: ``kind`` 'line', 'thin', 'dash', 'highlight' (a wide light line under the
    curves), 'band' (filled, ``alpha``) or 'outline' (a band drawn as its two dashed edges); ``colours`` one colour, or one per side (the swatch
    split in as many parts, so it shows the colours the bands have); ``gids``: the drawn items the
    swatch stands for, one per colour (its parts carry ``legend:<gid>``)."""

    kind: str
    colours: tuple[str, ...]
    label: str
    alpha: float = 1.0
    gids: tuple[str, ...] = ()


def legend_entry(entry) -> LegendEntry:
    """A LegendEntry, or one from a (kind, colour, label) tuple."""
    if isinstance(entry, LegendEntry):
        return entry
    kind, colour, label = entry
    return LegendEntry(kind, (colour,) if isinstance(colour, str) else tuple(colour), label)


def legend_rows(page: Page, entries: list, x0: float) -> list[tuple[int, list]]:
    """The legend laid out in rows within the page's margins: [(lines, [(x, entry, label lines)])];
    an entry moves to the next row when it does not fit, a label wider than the page wraps."""
    right = page.width - MARGIN[2]
    rows, row, x = [], [], x0
    for e in map(legend_entry, entries):
        labels = wrap(e.label, right - x0 - SWATCH - SWATCH_GAP, FOOTER_SIZE)
        w = SWATCH + SWATCH_GAP + max(text_width(t, FOOTER_SIZE) for t in labels)
        if row and x + w > right:
            rows.append(row)
            row, x = [], x0
        row.append((x, e, labels))
        x += w + ENTRY_GAP
    rows.append(row)
    return [(max(len(labels) for _, _, labels in r), r) for r in rows]


def draw_legend(page: Page, rows: list, y: float) -> None:
    """The rows of :func:`legend_rows` from baseline ``y`` down: each swatch drawn as the curves are
    (split per colour), its label beside it (gid 'legend')."""
    for lines, row in rows:
        for x, e, labels in row:
            part = SWATCH / len(e.colours)
            for k, colour in enumerate(e.colours):
                gid = f"legend:{e.gids[k]}" if k < len(e.gids) else "legend"
                a, b = x + k * part, x + (k + 1) * part
                if e.kind == "band":
                    page.path([(a, y - 5.0), (b, y - 5.0), (b, y), (a, y)], stroke=None, fill=colour, alpha=e.alpha,
                              closed=True, gid=gid)
                elif e.kind == "outline":
                    edges = np.array([[a, y - 5.0], [b, y - 5.0], [np.nan, np.nan], [a, y], [b, y]])
                    page.path(edges, stroke=colour, width=OUTLINE_WIDTH, dash=OUTLINE_DASH, gid=gid)
                else:
                    page.path([[a, y - 2.5], [b, y - 2.5]], stroke=colour,
                              width={"line": 1.6, "thin": 0.6, "dash": 0.8, "highlight": 4.5}[e.kind],
                              dash=(3.0, 2.0) if e.kind == "dash" else (), gid=gid)
            for k, label in enumerate(labels):
                page.text(x + SWATCH + SWATCH_GAP, y + LEGEND_LEADING * k, label, size=FOOTER_SIZE, gid="legend")
        y += LEGEND_LEADING * lines


class Flow:
    """Pages filled from the top: ``heading``, ``paragraph``, ``table``; a new page (same frame,
    heading marked 'continued') when the next item does not fit."""

    def __init__(self, kind: str, title: str, heading: str, footer: list[str]):
        self.kind, self.title, self.heading, self.footer = kind, title, heading, footer
        self.pages: list[Page] = []
        self.new_page()

    def new_page(self) -> None:
        page = Page(self.kind, self.heading)
        heading = self.heading + (" (continued)" if self.pages else "")
        self.bottom = page_frame(page, self.title, heading, self.footer) - 8.0
        self.pages.append(page)
        self.page = page
        self.y = MARGIN[1] + 4.0
        self.width = page.width - MARGIN[0] - MARGIN[2]

    def fits(self, h: float) -> bool:
        return self.y + h <= self.bottom

    def need(self, h: float) -> None:
        if not self.fits(h) and self.y > MARGIN[1] + 4.0:
            self.new_page()

    def space(self, h: float) -> None:
        self.y += h

    def heading_text(self, text: str, size: float = 10.0, keep: float = 30.0, colour: str = INK) -> None:
        """A heading kept with ``keep`` points of what follows."""
        self.need(size + 6.0 + keep)
        self.y += size + 2.0
        self.page.text(MARGIN[0], self.y, text, size=size, bold=True, colour=colour)
        self.y += 5.0

    def paragraph(self, text: str, size: float = 7.5, colour: str = INK, bullet: str = "", bold: bool = False,
                  italic: bool = False, indent: float = 0.0) -> None:
        leading = size * 1.3
        x = MARGIN[0] + indent + (8.0 if bullet else 0.0)
        for k, line in enumerate(wrap(text, self.width - (x - MARGIN[0]), size, bold)):
            self.need(leading)
            self.y += leading
            if bullet and k == 0:
                self.page.text(x - 7.0, self.y, bullet, size=size, colour=colour)
            self.page.text(x, self.y, line, size=size, colour=colour, bold=bold, italic=italic)
        self.y += 1.5

    def table(self, table: Table, size: float = 7.0, empty: str = "none") -> None:
        """Draw ``table`` (header row repeated on each page it spans)."""
        if table.empty:
            self.paragraph(empty, size=size, italic=True, colour=MUTED)
            self.y += 6.0
            return
        pad, leading = 3.0, size * 1.25
        widths = column_widths(table, self.width, size, pad)
        header = [wrap(c, w - 2 * pad, size, bold=True) for c, w in zip(table.columns, widths)]
        cells = [[wrap(v, w - 2 * pad, size) for v, w in zip(row, widths)] for row in table.rows]

        def height(lines):
            return max(len(x) for x in lines) * leading + 2 * pad

        def draw_row(lines, bold: bool, fill: str | None):
            h = height(lines)
            x = MARGIN[0]
            if fill:
                self.page.rect(x, self.y, sum(widths), h, stroke=None, fill=fill)
            for cell, w in zip(lines, widths):
                for k, line in enumerate(cell):
                    self.page.text(x + pad, self.y + pad + size * 0.85 + k * leading, line, size=size, bold=bold)
                x += w
            self.page.path([[MARGIN[0], self.y + h], [MARGIN[0] + sum(widths), self.y + h]], stroke="#cccccc",
                           width=0.4)
            self.y += h

        hh = height(header)
        self.need(hh + (height(cells[0]) if cells else 0.0))
        top = self.y
        draw_row(header, True, "#eeeeee")
        for k, lines in enumerate(cells):
            if not self.fits(height(lines)):
                self._table_frame(top, widths)
                self.new_page()
                top = self.y
                draw_row(header, True, "#eeeeee")
            draw_row(lines, False, "#f8f8f8" if k % 2 else None)
        self._table_frame(top, widths)
        for note in table.notes:
            self.paragraph(note, size=size - 0.5, italic=True, colour=MUTED)
        self.y += 6.0

    def _table_frame(self, top: float, widths: list[float]) -> None:
        x = MARGIN[0]
        self.page.rect(x, top, sum(widths), self.y - top, stroke="#999999", width=0.5)


def column_widths(table: Table, available: float, size: float, pad: float) -> list[float]:
    """Each column as wide as its widest cell; when the table is wider than ``available``, the
    ``wide`` columns (or, without any, the widest ones) give up room and wrap."""
    natural = []
    for j, name in enumerate(table.columns):
        w = max([text_width(name, size, bold=True), *(text_width(row[j], size) for row in table.rows)])
        natural.append(w + 2 * pad)
    if sum(natural) <= available:
        return natural
    flexible = [j for j, c in enumerate(table.columns) if c in table.wide] or list(range(len(natural)))
    fixed = sum(w for j, w in enumerate(natural) if j not in flexible)
    room = available - fixed
    if room < 60.0 * len(flexible):  # even the fixed columns must shrink: share the page by need
        scale = available / sum(natural)
        return [w * scale for w in natural]
    widths = list(natural)
    # water-filling: columns narrower than their share keep their width, the rest share what is left
    share = sorted(flexible, key=lambda j: natural[j])
    left = room
    for n, j in enumerate(share):
        fair = left / (len(share) - n)
        widths[j] = min(natural[j], fair)
        left -= widths[j]
    return widths
