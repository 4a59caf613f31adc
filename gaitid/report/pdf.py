"""The PDF report: the report's pages (:mod:`gaitid.report.canvas`) written with reportlab.

Lines and areas go into the page's content stream as PDF path operators in one string per path;
text is drawn in Helvetica, a standard PDF font (nothing embedded, any viewer shows it).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from gaitid.io.atomic import atomic_path
from gaitid.report.canvas import FONTS, Page, Text, runs
from gaitid.report.layout import MARGIN, MUTED


@lru_cache(maxsize=64)
def rgb(colour: str) -> tuple[float, float, float]:
    """'#rrggbb' -> (r, g, b) in 0-1."""
    c = colour.lstrip("#")
    return int(c[0:2], 16) / 255.0, int(c[2:4], 16) / 255.0, int(c[4:6], 16) / 255.0


def path_operators(xy, height: float, closed: bool) -> str:
    """PDF path construction operators of a polyline (page points, y down) with NaN breaks."""
    ops = []
    for run in runs(xy):
        flat = run.copy()
        flat[:, 1] = height - flat[:, 1]
        v = tuple(flat.ravel().tolist())
        ops.append(("%.2f %.2f m\n" + "%.2f %.2f l\n" * (len(run) - 1)) % v + ("h\n" if closed else ""))
    return "".join(ops)


def draw_page(c, page: Page) -> None:
    """Every item of ``page`` onto the reportlab canvas ``c`` (its current page); colours, widths
    and fonts are set only when they change."""
    h = page.height
    font = fill = stroke = width = dash = None
    for it in page.items:
        if isinstance(it, Text):
            if not it.text:
                continue
            if (it.bold, it.italic, it.size) != font:
                font = (it.bold, it.italic, it.size)
                c.setFont(FONTS[it.bold, it.italic], it.size)
            if it.colour != fill:
                fill = it.colour
                c.setFillColorRGB(*rgb(it.colour))
            draw = {"start": c.drawString, "middle": c.drawCentredString, "end": c.drawRightString}[it.anchor]
            if it.rotate:
                c.saveState()
                c.translate(it.x, h - it.y)
                c.rotate(it.rotate)
                draw(0, 0, it.text)
                c.restoreState()
            else:
                draw(it.x, h - it.y, it.text)
            continue
        ops = path_operators(it.xy, h, it.closed)
        if not ops:
            continue
        if it.fill is not None:
            if it.fill != fill:
                fill = it.fill
                c.setFillColorRGB(*rgb(it.fill))
            c.setFillAlpha(it.alpha)
        if it.stroke is not None:
            if it.stroke != stroke:
                stroke = it.stroke
                c.setStrokeColorRGB(*rgb(it.stroke))
            if it.width != width:
                width = it.width
                c.setLineWidth(it.width)
            if it.dash != dash:
                dash = it.dash
                c.setDash(list(it.dash) if it.dash else [])
        paint = "B" if it.fill is not None and it.stroke is not None else ("f" if it.fill is not None else "S")
        c.addLiteral(ops + paint)
        if it.fill is not None and it.alpha != 1.0:
            c.setFillAlpha(1.0)


def write_pdf(pages: list[Page], path: Path, title: str, inputs=()) -> Path:
    """Write ``pages`` as one PDF ('page k of n' on each), atomically (temporary file, then rename).
    Streams are zlib-compressed without reportlab's default ASCII85 layer (binary PDF: a third
    smaller and, without reportlab's optional C accelerator, several times faster to write)."""
    from reportlab import rl_config

    useA85 = rl_config.useA85
    rl_config.useA85 = 0
    try:
        return _write(pages, path, title, inputs)
    finally:
        rl_config.useA85 = useA85


def _write(pages: list[Page], path: Path, title: str, inputs=()) -> Path:
    from reportlab.pdfgen.canvas import Canvas

    with atomic_path(path, inputs=inputs) as tmp:
        c = Canvas(str(tmp), pagesize=(pages[0].width, pages[0].height), pageCompression=1)
        c.setTitle(f"gaitid report: {title}")
        c.setCreator("gaitid")
        for k, page in enumerate(pages, start=1):
            c.setPageSize((page.width, page.height))
            draw_page(c, page)
            c.setFont(FONTS[False, False], 6.5)  # draw_page's font tracking starts afresh on each page
            c.setFillColorRGB(*rgb(MUTED))
            c.drawRightString(page.width - MARGIN[2], MARGIN[3] - 20.0, f"page {k} of {len(pages)}")
            c.showPage()
        c.save()
    return Path(path)
