"""The report's curve pages: kinematics, kinetics (moments, powers, GRF) and moment contributions.

Each page is one :class:`~gaitid.report.canvas.Page` drawn once and written to both the PDF and the
HTML. Per panel: each cycle as a thin line, the mean as a thick line with a +-1 SD band, left red
and right green, the mean foot off of each side as a dashed vertical line, the user's normative
band in grey behind; the 95 % uncertainty band (kinetics) as its two dashed edges, so the three
bands stay readable together. Kinetics (moments, powers, GRF) computed from a foot load decomposed
from a plate both feet load are highlighted under the curves, wide and light violet ('decomposed:Left'),
and the kinetics page's legend says "decomposed foot load"; stretches from filled marker gaps are
drawn again dotted ('filled:Left'). The legend's swatches are drawn as the curves are, in their colours. Every panel keeps, in data units, what it drew (:class:`Panel`, ``series``
with a ``gid``: 'mean:Left', 'cycle:Right', 'sd:Left', 'foot_off:Left', 'normative',
'part:Left:Gravity', 'grf:Right'), so scripts and tests can read the curves back. The sign
convention is stated once per page, in its footer; each y axis names what a positive value means.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from gaitid.core.vocabulary import SIDES
from gaitid.report.canvas import INK, Page
from gaitid.report.content import ReportData, mean_sd_of
from gaitid.report.labels import (
    ANGLE_CONVENTION,
    COMPONENTS,
    CONTRIBUTION_COLOURS,
    CONTRIBUTION_PARTS,
    GRF_BODY,
    GRF_LAB,
    JOINTS,
    KINEMATIC_ROWS,
    NORMATIVE_COLOUR,
    PLANES,
    SIDE_COLOURS,
    axis_label,
    is_kinematic,
    moment_convention,
)
from gaitid.report.layout import MARGIN, MUTED, OUTLINE_DASH, OUTLINE_WIDTH, LegendEntry, page_frame
from gaitid.report.uncertainty_pages import band_of, legend_entry

GRID = "#e6e6e6"
FRAME = "#666666"
FILLED_INK = "#8a4b00"  # stretches drawn from filled marker gaps (the warnings' colour)
DECOMPOSED_INK = "#c3b1e1"  # under the kinetics where the foot's load is decomposed: a light violet highlight
DECOMPOSED_WIDTH = 4.5  # points: wide enough to show under a cycle's or the mean's line
DECOMPOSED_LABEL = "decomposed foot load"
NORMATIVE = NORMATIVE_COLOUR
SD_ALPHA = 0.18  # the cycles' +-1 SD band, light in the side's colour over the grey normative band


def mix(colour: str, amount: float) -> str:
    """``colour`` lightened towards white by ``amount`` (0-1): the single cycles' thin lines."""
    c = colour.lstrip("#")
    rgb = [int(c[i:i + 2], 16) for i in (0, 2, 4)]
    return "#" + "".join(f"{round(v + (255 - v) * amount):02x}" for v in rgb)


CYCLE_COLOURS = {s: mix(c, 0.5) for s, c in SIDE_COLOURS.items()}


def nice_ticks(lo: float, hi: float, n: int = 4) -> np.ndarray:
    """About ``n`` intervals of 1, 2, 2.5 or 5 x 10^k covering [lo, hi]."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
        lo, hi = (lo - 1.0, lo + 1.0) if np.isfinite(lo) else (-1.0, 1.0)
    raw = (hi - lo) / n
    mag = 10.0 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * mag >= raw * 0.999)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return np.arange(first, last + 1) * step + 0.0


def tick_text(v: float, step: float) -> str:
    """A tick value with as many decimals as the step needs (2.5 -> '2.5', 0.25 -> '0.25')."""
    digits = next((d for d in range(6) if abs(step * 10 ** d - round(step * 10 ** d)) < 1e-6 * 10 ** d), 6)
    return f"{v + 0.0:.{digits}f}"


@dataclass
class Series:
    """What a panel drew, in data units: 'line' (x, y), 'band' (x, y = lower, y2 = upper) or
    'vline' (x = [position]); a band's ``style`` 'fill' (a filled polygon, ``alpha``) or
    'outline' (its two edges as dashed lines: the 95 % uncertainty band)."""

    kind: str
    gid: str
    x: np.ndarray
    y: np.ndarray | None = None
    y2: np.ndarray | None = None
    colour: str = INK
    width: float = 0.5
    alpha: float = 1.0
    dash: tuple = ()
    style: str = "fill"


@dataclass
class Panel:
    """One plot: ``box`` (x, y, w, h) of its plot area on the page, x from ``xlim``; y limits from
    the data drawn (0 always inside). Only a panel with an ``xlabel`` (the foot of a column of
    panels sharing the x axis) numbers its x axis."""

    title: str
    box: tuple[float, float, float, float]
    ylabel: str = ""
    xlabel: str = ""
    xlim: tuple[float, float] = (0.0, 100.0)
    title_colour: str = INK
    series: list[Series] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (text, colour) at the top left
    missing: str = ""

    def line(self, x, y, colour, width=0.5, gid="", dash=()):
        self.series.append(Series("line", gid, np.asarray(x, float), np.asarray(y, float), colour=colour, width=width,
                                  dash=tuple(dash)))

    def band(self, x, lower, upper, colour, alpha, gid="", style="fill"):
        dash, width = (OUTLINE_DASH, OUTLINE_WIDTH) if style == "outline" else ((), 0.5)
        self.series.append(Series("band", gid, np.asarray(x, float), np.asarray(lower, float),
                                  np.asarray(upper, float), colour=colour, alpha=alpha, style=style, dash=dash,
                                  width=width))

    def vline(self, x, colour, gid="", dash=(3.0, 2.0), width=0.8):
        self.series.append(Series("vline", gid, np.array([x], float), colour=colour, width=width, dash=tuple(dash)))

    def get(self, gid: str) -> list[Series]:
        return [s for s in self.series if s.gid == gid]

    def ylim(self) -> np.ndarray:
        vals = [s.y for s in self.series if s.y is not None] + [s.y2 for s in self.series if s.y2 is not None]
        finite = np.concatenate([v[np.isfinite(v)] for v in vals]) if vals else np.empty(0)
        lo, hi = (min(0.0, finite.min()), max(0.0, finite.max())) if finite.size else (-1.0, 1.0)
        if hi - lo < 1e-9:  # a curve that is zero to rounding (a degree of freedom the model locks)
            lo, hi = lo - 1.0, hi + 1.0
        return nice_ticks(lo, hi)

    def draw(self, page: Page) -> None:
        bx, by, bw, bh = self.box
        ticks = self.ylim()
        y0, y1 = float(ticks[0]), float(ticks[-1])
        x0, x1 = self.xlim

        def X(x):
            return bx + (np.asarray(x, float) - x0) / (x1 - x0) * bw

        def Y(y):
            return by + bh - (np.asarray(y, float) - y0) / (y1 - y0) * bh

        xticks = np.linspace(x0, x1, 6)
        grid = [np.array([[bx, v], [bx + bw, v]]) for v in Y(ticks[1:-1])]
        grid += [np.array([[v, by], [v, by + bh]]) for v in X(xticks[1:-1])]
        page.path(np.concatenate([np.vstack([g, [[np.nan, np.nan]]]) for g in grid]), stroke=GRID, width=0.4)
        for s in (s for s in self.series if s.kind == "band" and s.style == "fill"):
            xs, up, lo = X(s.x), Y(s.y2), Y(s.y)
            for a, b in _stretches(np.isfinite(xs) & np.isfinite(up) & np.isfinite(lo)):  # one polygon each
                page.path(np.vstack([np.column_stack([xs[a:b], up[a:b]]), np.column_stack([xs[a:b], lo[a:b]])[::-1]]),
                          stroke=None, fill=s.colour, alpha=s.alpha, closed=True, gid=s.gid)
        if y0 < 0 < y1:
            page.path([[bx, float(Y(0.0))], [bx + bw, float(Y(0.0))]], stroke="#8c8c8c", width=0.5)
        for s in self.series:
            if s.kind == "band" and s.style == "outline":  # over the filled bands and the cycles
                edges = np.vstack([np.column_stack([X(s.x), Y(s.y2)]), [[np.nan, np.nan]], np.column_stack([X(s.x), Y(s.y)])])
                page.path(edges, stroke=s.colour, width=s.width, dash=s.dash, gid=s.gid)
            elif s.kind == "line":
                page.path(np.column_stack([X(s.x), Y(s.y)]), stroke=s.colour, width=s.width, dash=s.dash, gid=s.gid)
            elif s.kind == "vline" and x0 <= s.x[0] <= x1:
                page.path([[float(X(s.x[0])), by], [float(X(s.x[0])), by + bh]], stroke=s.colour, width=s.width,
                          dash=s.dash, gid=s.gid)
        page.rect(bx, by, bw, bh, stroke=FRAME, width=0.6)
        step = float(ticks[1] - ticks[0])
        for v, yy in zip(ticks, Y(ticks)):
            page.text(bx - 2.5, float(yy) + 2.2, tick_text(float(v), step), size=6.0, anchor="end", colour=MUTED)
        if self.xlabel:  # the panel at the foot of its column carries the x axis' numbers and name
            for v, xx in zip(xticks, X(xticks)):
                page.text(float(xx), by + bh + 7.5, f"{v:g}", size=6.0, anchor="middle", colour=MUTED)
        page.text(bx + bw / 2, by - 4.0, self.title, size=7.5, bold=True, anchor="middle", colour=self.title_colour)
        lines = self.ylabel.split("\n")
        for k, line in enumerate(lines):
            page.text(bx - 22.0 + 7.5 * k - 7.5 * (len(lines) - 1), by + bh / 2, line, size=6.5, anchor="middle",
                      rotate=90.0)
        if self.xlabel:
            page.text(bx + bw / 2, by + bh + 15.5, self.xlabel, size=6.5, anchor="middle", colour=MUTED)
        for k, (note, colour) in enumerate(self.notes):
            page.text(bx + 3.0, by + 8.0 + 7.0 * k, note, size=6.0, colour=colour)
        if self.missing:
            page.text(bx + bw / 2, by + bh / 2 + 2.5, self.missing, size=7.5, anchor="middle", italic=True,
                      colour=MUTED, gid="missing")
        page.panels.append(self)


def _stretches(ok: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], ok.astype(np.int8), [0]])))
    return [(a, b) for a, b in zip(edges[::2], edges[1::2]) if b - a >= 2]


def curve_legend(normative) -> list[LegendEntry]:
    """The curve pages' legend: each swatch drawn as its curves are, in their colours (split
    left / right where each side has its own), naming the gids it stands for."""
    sides = tuple(SIDE_COLOURS[s] for s in SIDES)
    out = [LegendEntry("line", (SIDE_COLOURS[s],), f"{s} mean", gids=(f"mean:{s}",)) for s in SIDES]
    out += [LegendEntry("band", sides, "\u00b11 SD of the cycles", SD_ALPHA, tuple(f"sd:{s}" for s in SIDES)),
            LegendEntry("thin", tuple(CYCLE_COLOURS[s] for s in SIDES), "each cycle",
                        gids=tuple(f"cycle:{s}" for s in SIDES)),
            LegendEntry("dash", sides, "mean foot off", gids=tuple(f"foot_off:{s}" for s in SIDES))]
    if normative is not None:
        out.append(LegendEntry("band", (NORMATIVE,), "normative \u00b11 SD", 1.0, ("normative",)))
    return out


def grid_boxes(page: Page, n_rows: int, footer_top: float, n_cols: int = 3):
    """Plot-area boxes of an n_rows x n_cols grid filling the page between the header and
    ``footer_top`` (points from the top)."""
    left, top, right, _ = MARGIN
    gutter, gap_right, title_h, ticks_h = 34.0, 6.0, 12.0, 20.0
    col_w = (page.width - left - right) / n_cols
    avail = footer_top - top - 4.0
    row_h = avail / n_rows
    return [[(left + j * col_w + gutter, top + i * row_h + title_h, col_w - gutter - gap_right,
              row_h - title_h - ticks_h) for j in range(n_cols)] for i in range(n_rows)]


# --------------------------------------------------------------------------- panels


def cycle_panel(panel: Panel, data: ReportData, variable: str, component: str, normative=None,
                show_cycles: bool = True, uncertainty=None) -> bool:
    """Cycles, mean +- SD per side, foot-off lines, normative band; with ``uncertainty`` (the
    bands of :func:`gaitid.report.uncertainty_pages.uncertainty_bands`) the 95 % band of each side's
    mean from the input errors. False if nothing drawn."""
    kinetic = not is_kinematic(variable)
    unit = data.units.get(variable, "")
    if normative is not None:
        band = normative.band(variable, component, unit)
        if band is not None:
            pct, mean, sd = band
            panel.band(pct, mean - sd, mean + sd, NORMATIVE, 1.0, gid="normative")
    drawn, absent = [], []
    for side in SIDES:
        summ = data.mean_sd(side, variable, component)
        if summ is None:
            absent.append(side)
            continue
        pct, mean, sd, _ = summ
        panel.band(pct, mean - sd, mean + sd, SIDE_COLOURS[side], SD_ALPHA, gid=f"sd:{side}")
        band = band_of(uncertainty, side, variable, component)
        if band is not None:
            panel.band(band[0], band[1], band[2], SIDE_COLOURS[side], 1.0, gid=f"uncertainty:{side}",
                       style="outline")
        s = data.sides[side]
        if s.decomposed is not None and kinetic:  # the angles never: the markers alone give them
            mark_decomposed(panel, pct, data.cycle_matrix(side, variable, component), s.decomposed[s.kinetic], mean,
                            side, show_cycles)
        if show_cycles:
            for row in data.cycle_matrix(side, variable, component):
                panel.line(pct, row, CYCLE_COLOURS[side], 0.5, gid=f"cycle:{side}")
        filled = data.filled_rows(side, variable)
        if filled is not None and filled.any():  # stretches drawn from filled marker gaps: dotted over the curves
            rows = data.cycle_matrix(side, variable, component) if show_cycles else [mean]
            for row, mask in zip(rows, filled if show_cycles else [filled.any(axis=0)]):
                if mask.any():
                    panel.line(pct, np.where(mask, row, np.nan), FILLED_INK, 1.6, gid=f"filled:{side}", dash=(1.0, 1.2))
            if not any(note[0].startswith("dotted") for note in panel.notes):
                panel.notes.append(("dotted: from filled marker gaps", FILLED_INK))
        drawn.append(side)
    for side in drawn:
        pct, mean, _, _ = data.mean_sd(side, variable, component)
        panel.line(pct, mean, SIDE_COLOURS[side], 1.5, gid=f"mean:{side}")
        fo = data.foot_off(side, kinetic)
        if np.isfinite(fo):
            panel.vline(fo, SIDE_COLOURS[side], gid=f"foot_off:{side}")
    what = "kinetic cycle" if kinetic else "complete gait cycle"
    if not drawn and variable not in data.units:
        panel.missing = f"not an output of model {data.settings.get('model')}"
    elif not drawn:
        panel.missing = f"no {what}"
    else:
        panel.notes += [(f"{s}: no {what}", SIDE_COLOURS[s]) for s in absent]
    panel.ylabel = axis_label(variable, component, unit, data.convention)
    return bool(drawn)


def mark_decomposed(panel: Panel, pct: np.ndarray, rows: np.ndarray, masks: np.ndarray, mean: np.ndarray,
                    side: str, show_cycles: bool) -> None:
    """Highlight (gid 'decomposed:<side>', drawn before the curves so it lies under them) each row
    of ``rows`` (n, 101) where its ``masks`` row is True; without ``show_cycles``, the ``mean`` where
    any row's is."""
    pairs = zip(rows, masks) if show_cycles else [(mean, masks.any(axis=0))]
    for row, mask in pairs:
        if mask.any():
            panel.line(pct, np.where(mask, row, np.nan), DECOMPOSED_INK, DECOMPOSED_WIDTH, gid=f"decomposed:{side}")


def has_decomposed(data: ReportData) -> bool:
    """Whether any kinetic curve or GRF the report draws comes from a decomposed foot load."""
    curves = any(s.decomposed is not None and s.decomposed[s.kinetic].any() for s in data.sides.values())
    return curves or any(st is not None and st.decomposed is not None for st in data.stances.values())


def grf_panel(panel: Panel, data: ReportData, k: int, show_cycles: bool = True) -> None:
    """Component ``k`` of the GRF per valid plate contact, 0-100 % stance, mean +- SD per side."""
    drawn, absent, along, unit = [], [], True, data.units.get("GroundReactionForce", "")
    for side in SIDES:
        st = data.stance_grf(side)
        if st is None:
            absent.append(side)
            continue
        along &= st.along_progression
        pct = np.linspace(0.0, 100.0, st.values.shape[1])
        v = st.values[:, :, k]
        mean, sd, _ = mean_sd_of(v)
        panel.band(pct, mean - sd, mean + sd, SIDE_COLOURS[side], SD_ALPHA, gid=f"sd:{side}")
        if st.decomposed is not None:
            mark_decomposed(panel, pct, v, st.decomposed, mean, side, show_cycles)
        if show_cycles:
            for row in v:
                panel.line(pct, row, CYCLE_COLOURS[side], 0.5, gid=f"cycle:{side}")
        panel.line(pct, mean, SIDE_COLOURS[side], 1.5, gid=f"grf:{side}")
        drawn.append(side)
    title, sign = (GRF_BODY if along else GRF_LAB)[k]
    panel.title, panel.ylabel, panel.xlabel = title, f"[{unit}]\n{sign}" if unit else sign, "% stance"
    if not drawn:
        panel.missing = "no valid plate contact"
    else:
        panel.notes += [(f"{s}: no valid plate contact", SIDE_COLOURS[s]) for s in absent]


# --------------------------------------------------------------------------- pages


def kinematics_page(data: ReportData, normative=None, show_cycles: bool = True) -> Page:
    """Pelvis, hip, knee, ankle (rows) in three planes (columns) and the foot progression."""
    page = Page("kinematics", "Kinematics")
    n = int(sum(len(s.cycle) for s in data.sides.values()))
    bottom = page_frame(page, data.title, "Kinematics",
                        [f"Joint angles of every gait cycle ({n}). {ANGLE_CONVENTION}"], curve_legend(normative))
    boxes = grid_boxes(page, len(KINEMATIC_ROWS), bottom)
    for i, (variable, titles) in enumerate(KINEMATIC_ROWS):
        for j, comp in enumerate(COMPONENTS):
            if comp not in titles:
                continue
            panel = Panel(titles[comp], boxes[i][j])
            cycle_panel(panel, data, variable, comp, normative, show_cycles)
            if i == len(KINEMATIC_ROWS) - 1 or comp not in KINEMATIC_ROWS[i + 1][1]:
                panel.xlabel = "% gait cycle"
            panel.draw(page)
    return page


def kinetics_page(data: ReportData, normative=None, show_cycles: bool = True, uncertainty=None) -> Page:
    """Hip, knee, ankle moments (three planes), joint powers, GRF in % stance; ``uncertainty``:
    the bands of :func:`gaitid.report.uncertainty_pages.uncertainty_bands` (None: none drawn)."""
    page = Page("kinetics", "Kinetics")
    s = data.settings
    n = int(sum(side.kinetic.sum() for side in data.sides.values()))
    bottom = page_frame(page, data.title, "Kinetics", [
        f"Moments and powers of the kinetic cycles ({n}: stance on one valid plate contact), normalised by "
        f"{s.get('normalise')}. {moment_convention(data.convention, s.get('frame', 'distal'))}",
        "GRF: each valid plate contact, 0-100 % of its stance; anterior (+) along the direction of progression, "
        "medial (+) towards the other foot, vertical (+) up."],
        curve_legend(normative) + ([legend_entry(data)] if uncertainty is not None else [])
        + ([LegendEntry("highlight", (DECOMPOSED_INK,), DECOMPOSED_LABEL, gids=("decomposed",))]
           if has_decomposed(data) else []))
    boxes = grid_boxes(page, 5, bottom)
    for i, joint in enumerate(JOINTS):
        for j, comp in enumerate(COMPONENTS):
            panel = Panel(f"{joint} {PLANES[comp].lower()} moment", boxes[i][j])
            cycle_panel(panel, data, f"{joint}Moment", comp, normative, show_cycles, uncertainty)
            panel.draw(page)
    for j, joint in enumerate(JOINTS):
        panel = Panel(f"{joint} power", boxes[3][j], xlabel="% gait cycle")
        cycle_panel(panel, data, f"{joint}Power", "", normative, show_cycles, uncertainty)
        panel.draw(page)
    for k in range(3):
        panel = Panel("", boxes[4][k])
        grf_panel(panel, data, k, show_cycles)
        panel.draw(page)
    return page


def contributions_page(data: ReportData) -> Page:
    """Sagittal moment of each joint and side split into inertial, velocity, gravity and external parts."""
    page = Page("contributions", "Moment contributions")
    legend = [("dash" if p == "Total" else "line", CONTRIBUTION_COLOURS[p], "total" if p == "Total" else p.lower())
              for p in ("Total", *CONTRIBUTION_PARTS)]
    bottom = page_frame(page, data.title, "Moment contributions", [
        "Mean of the kinetic cycles: total = inertial + velocity + gravity + external (the solver's split). "
        + moment_convention(data.convention, data.settings.get("frame", "distal"))], legend)
    boxes = grid_boxes(page, 2, bottom)
    for i, side in enumerate(SIDES):
        for j, joint in enumerate(JOINTS):
            moment = f"{joint}Moment"
            panel = Panel(f"{side} {joint.lower()} sagittal moment", boxes[i][j], title_colour=SIDE_COLOURS[side],
                          xlabel="% gait cycle" if i == len(SIDES) - 1 else "")
            for part in ("Total", *CONTRIBUTION_PARTS):
                summ = data.mean_sd(side, moment if part == "Total" else f"{moment}{part}", "X")
                if summ is not None:
                    panel.line(summ[0], summ[1], CONTRIBUTION_COLOURS[part], 1.6 if part == "Total" else 1.1,
                               gid=f"part:{side}:{part}", dash=(4.0, 2.0) if part == "Total" else ())
            if panel.series:
                fo = data.foot_off(side, True)
                if np.isfinite(fo):
                    panel.vline(fo, SIDE_COLOURS[side], gid=f"foot_off:{side}")
            else:
                panel.missing = "no kinetic cycle"
            panel.ylabel = axis_label(moment, "X", data.units.get(moment, ""), data.convention)
            panel.draw(page)
    return page


def draws_cycles(data: ReportData) -> bool:
    """Whether the curve pages draw each cycle: not in a session of more than 40 cycles (the means
    and SD bands only)."""
    return sum(len(s.cycle) for s in data.sides.values()) <= 40
