"""A report page (:mod:`gaitid.report.canvas`) as inline SVG for the HTML report: the same items
the PDF draws, written as SVG elements (no second drawing, no image files, no scripts)."""

from __future__ import annotations

from html import escape

from gaitid.report.canvas import Page, Text, runs

FONT_FAMILY = "Helvetica,Arial,sans-serif"


def path_data(xy, closed: bool) -> str:
    """SVG path data of a polyline (page points) with NaN breaks."""
    out = []
    for run in runs(xy):
        v = tuple(run.ravel().tolist())
        out.append(("M%.1f %.1f" + "L%.1f %.1f" * (len(run) - 1)) % v + ("Z" if closed else ""))
    return "".join(out)


def text_element(t: Text) -> str:
    attrs = [f'x="{t.x:.1f}" y="{t.y:.1f}" font-size="{t.size:g}"']
    if t.colour != "#222222":
        attrs.append(f'fill="{t.colour}"')
    if t.anchor != "start":
        attrs.append(f'text-anchor="{t.anchor}"')
    if t.bold:
        attrs.append('font-weight="bold"')
    if t.italic:
        attrs.append('font-style="italic"')
    if t.rotate:
        attrs.append(f'transform="rotate({-t.rotate:g} {t.x:.1f} {t.y:.1f})"')
    return f"<text {' '.join(attrs)}>{escape(t.text, quote=False)}</text>"


def page_svg(page: Page, css_class: str = "page") -> str:
    """The page as one ``<svg>`` element, scaled to its container's width by the browser."""
    out = [f'<svg class="{css_class}" viewBox="0 0 {page.width:.2f} {page.height:.2f}" role="img" '
           f'aria-label="{escape(page.heading)}" font-family="{FONT_FAMILY}" stroke-linejoin="round">']
    for it in page.items:
        if isinstance(it, Text):
            if it.text:
                out.append(text_element(it))
            continue
        d = path_data(it.xy, it.closed)
        if not d:
            continue
        attrs = [f'd="{d}"', f'fill="{it.fill}"' if it.fill else 'fill="none"']
        if it.gid:  # what was drawn, for the page's CSS (the uncertainty bands' toggle)
            attrs.insert(0, f'class="{escape(it.gid.split(":")[0])}"')
        if it.fill and it.alpha != 1.0:
            attrs.append(f'fill-opacity="{it.alpha:g}"')
        if it.stroke:
            attrs.append(f'stroke="{it.stroke}" stroke-width="{it.width:g}"')
            if it.dash:
                attrs.append(f'stroke-dasharray="{" ".join(f"{d:g}" for d in it.dash)}"')
        out.append(f"<path {' '.join(attrs)}/>")
    out.append("</svg>")
    return "\n".join(out)
