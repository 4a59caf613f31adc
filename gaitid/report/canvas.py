"""A report page drawn once and written twice: vector items in page points, written to PDF
(:mod:`gaitid.report.pdf`) and as inline SVG into the HTML page (:mod:`gaitid.report.svg`).

Why not matplotlib figures: matplotlib lays out every axis, tick and text of a figure again for
each output format (about 30 ms per panel and 1 ms per text on the development machine), so the
report's 40 panels and tables took 30-60 times as long as processing the trial. A page here is
plain data (polylines, filled polygons, text) that each writer turns into its format's operators
in one pass; nothing is measured while writing.

Coordinates: points (1/72 inch) from the top-left corner of the page, y down (as SVG; the PDF
writer flips). Text: Helvetica (a PDF standard font: nothing embedded), widths from its font
metrics (:func:`text_width`); any string is drawn as it is (no markup: a '$' is a dollar sign).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

A4 = (595.28, 841.89)  # points, portrait
FONTS = {(False, False): "Helvetica", (True, False): "Helvetica-Bold", (False, True): "Helvetica-Oblique",
         (True, True): "Helvetica-BoldOblique"}
INK = "#222222"


@dataclass(frozen=True)
class Path:
    """A polyline or polygon: ``xy`` (n, 2) page points, NaN rows break the line; ``stroke`` /
    ``fill`` '#rrggbb' or None; ``alpha`` applies to the fill; ``gid`` names what was drawn."""

    xy: np.ndarray
    stroke: str | None = INK
    fill: str | None = None
    width: float = 0.5
    alpha: float = 1.0
    dash: tuple[float, ...] = ()
    closed: bool = False
    gid: str = ""


@dataclass(frozen=True)
class Text:
    """One line of text; ``y`` is its baseline; ``anchor`` 'start', 'middle' or 'end' of the line;
    ``rotate`` 90 turns it counter-clockwise (a y-axis label)."""

    x: float
    y: float
    text: str
    size: float = 8.0
    colour: str = INK
    anchor: str = "start"
    bold: bool = False
    italic: bool = False
    rotate: float = 0.0
    gid: str = ""


@dataclass
class Page:
    """One page: its items in drawing order, and the plot panels drawn on it (for scripts and
    tests: :class:`gaitid.report.plots.Panel` keeps the data of every curve it drew)."""

    kind: str
    heading: str
    width: float = A4[0]
    height: float = A4[1]
    items: list = field(default_factory=list)
    panels: list = field(default_factory=list)

    def path(self, xy, stroke: str | None = INK, fill: str | None = None, width: float = 0.5, alpha: float = 1.0,
             dash: tuple[float, ...] = (), closed: bool = False, gid: str = "") -> None:
        self.items.append(Path(np.asarray(xy, float), stroke, fill, width, alpha, tuple(dash), closed, gid))

    def rect(self, x: float, y: float, w: float, h: float, stroke: str | None = INK, fill: str | None = None,
             width: float = 0.5, gid: str = "") -> None:
        self.path([(x, y), (x + w, y), (x + w, y + h), (x, y + h)], stroke, fill, width, closed=True, gid=gid)

    def text(self, x: float, y: float, text: str, size: float = 8.0, colour: str = INK, anchor: str = "start",
             bold: bool = False, italic: bool = False, rotate: float = 0.0, gid: str = "") -> None:
        self.items.append(Text(x, y, str(text), size, colour, anchor, bold, italic, rotate, gid))

    def texts(self) -> list[str]:
        """Every text on the page, in drawing order."""
        return [it.text for it in self.items if isinstance(it, Text)]


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Width in points of ``text`` in Helvetica (bold) at ``size``."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return stringWidth(text, FONTS[bold, False], size)


def wrap(text: str, width: float, size: float, bold: bool = False) -> list[str]:
    """``text`` broken into lines no wider than ``width`` points: at spaces, and inside a word
    (a path, a long name) only when the word alone is too wide. Newlines are kept."""
    width += 1e-6  # a column exactly as wide as its text
    if "\n" not in text and text_width(text, size, bold) <= width:
        return [text]
    out = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            trial = f"{line} {word}" if line else word
            if text_width(trial, size, bold) <= width:
                line = trial
                continue
            if line:
                out.append(line)
            while text_width(word, size, bold) > width and len(word) > 1:
                k = len(word) - 1
                while k > 1 and text_width(word[:k], size, bold) > width:
                    k = max(1, int(k * width / text_width(word[:k], size, bold))) if k > 8 else k - 1
                out.append(word[:k])
                word = word[k:]
            line = word
        out.append(line)
    return out


def runs(xy: np.ndarray) -> list[np.ndarray]:
    """The finite stretches (at least 2 points) of a polyline with NaN breaks."""
    if len(xy) < 2:
        return []
    ok = np.isfinite(xy).all(axis=1)
    if ok.all():
        return [xy]
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    return [xy[a:b] for a, b in zip(edges[::2], edges[1::2]) if b - a >= 2]
