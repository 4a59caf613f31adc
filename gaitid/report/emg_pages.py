"""The report's EMG pages: each muscle's linear envelope on the gait cycle, with its on-off bars.

One panel per muscle (and unit), up to twelve a page: the mean envelope of the cycles as a thick line
with a +-1 SD band (each cycle as a thin line too when asked), left red and right green, each side's mean foot off (of the
cycles drawn) as a dashed vertical line, as on the curve pages (:mod:`gaitid.report.plots`); drawn
from zero up (an envelope is not negative: the few % its low-pass rings below zero after a burst's
sharp end are drawn at zero). Under the plot, one bar per side (left above right) shaded by the
fraction of that side's cycles in which the muscle is on at each % (the on-off table,
``Result.emg_timing``): dark where it is on in every cycle, blank where in none. A panel keeps what
it drew (``series`` gids 'mean:Left', 'sd:Right', 'cycle:Left', 'foot_off:Right' in the unit shown,
and ``onoff[side]`` the fraction at each of the 101 points). The channels not drawn -- flat,
saturated, mostly missing, without a side or muscle -- are listed in the footer with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaitid.core.vocabulary import SIDES
from gaitid.cycles.curves import PERCENT
from gaitid.norms.build import EMG_ON
from gaitid.report.canvas import Page
from gaitid.report.content import ReportData, mean_sd_of
from gaitid.report.emg_data import EmgMuscle
from gaitid.report.labels import SIDE_COLOURS
from gaitid.report.layout import MUTED, LegendEntry, page_frame
from gaitid.report.plots import CYCLE_COLOURS, SD_ALPHA, Panel, curve_legend, grid_boxes

PER_PAGE_ROWS, COLUMNS = 4, 3
NORMAL_BAR = "#555555"  # the norms' on-off bar (N)
BAR_H, BAR_GAP = 4.0, 1.5  # each side's on-off bar under a panel (points)
UNUSED_LISTED = 8  # channels not drawn named in a page's footer; the rest counted
# a unit too small to read on an axis -> (the unit shown, the factor), by the size of the largest mean
SMALLER = {"V": (("mV", 1e3, 1.0), ("\u00b5V", 1e6, 1e-3)), "mV": (("\u00b5V", 1e3, 1.0),)}


def display_unit(unit: str, peak: float) -> tuple[str, float]:
    """The unit to show values of ``unit`` whose largest mean is ``peak`` in, and the factor to it:
    volts below 1 V in mV, below 1 mV in uV (as EMG software shows them); other units as they are."""
    shown = (unit, 1.0)
    for name, factor, below in SMALLER.get(unit, ()):
        if np.isfinite(peak) and peak < below:
            shown = (name, factor)
    return shown


@dataclass
class EmgPanel(Panel):
    """A :class:`~gaitid.report.plots.Panel` with each side's on-off bar under its plot: ``onoff``
    {side: (101,) fraction of cycles on}, drawn from ``bars_top`` (points below the plot)."""

    onoff: dict[str, np.ndarray] = field(default_factory=dict)
    letters: bool = True  # each bar's side letter at its left (the first column of a page)
    normal_row: bool = False  # a third bar (N): the norms' fraction of the controls' cycles on
    normal: np.ndarray | None = None  # (101,) that fraction; None: the norms lack this muscle

    def draw(self, page: Page) -> None:
        xlabel, self.xlabel = self.xlabel, ""
        super().draw(page)  # the plot without its x axis' numbers: the bars come first
        self.xlabel = xlabel
        bx, by, bw, bh = self.box
        y = by + bh + BAR_GAP
        rows = [(side[0], SIDE_COLOURS[side], f"onoff:{side}", self.onoff.get(side)) for side in SIDES]
        if self.normal_row:
            rows.append(("N", NORMAL_BAR, "onoff:normal", self.normal))
        for letter, colour, gid, f in rows:
            page.rect(bx, y, bw, BAR_H, stroke="#bbbbbb", width=0.3)
            if self.letters:
                page.text(bx - 2.0, y + BAR_H - 0.4, letter, size=5.0, anchor="end", colour=colour)
            if f is not None:
                level = np.round(np.nan_to_num(f) * 10.0) / 10.0  # shades in tenths: a few boxes a bar
                cuts = np.flatnonzero(np.diff(level)) + 1
                for a, b in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [level.size]])):
                    if level[a] > 0:
                        x0 = bx + max(PERCENT[a] - 0.5, 0.0) / 100.0 * bw
                        x1 = bx + min(PERCENT[b - 1] + 0.5, 100.0) / 100.0 * bw
                        page.path([(x0, y), (x1, y), (x1, y + BAR_H), (x0, y + BAR_H)], stroke=None,
                                  fill=colour, alpha=float(level[a]), closed=True, gid=gid)
            y += BAR_H + BAR_GAP
        if xlabel:  # the panel at the foot of its column numbers the x axis
            for v in np.linspace(0.0, 100.0, 6):
                page.text(bx + v / 100.0 * bw, y + 6.0, f"{v:g}", size=6.0, anchor="middle", colour=MUTED)
            page.text(bx + bw / 2, y + 13.0, xlabel, size=6.5, anchor="middle", colour=MUTED)


def _mean_sd(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample SD over the rows of ``m`` (n, 101): numpy's plain mean and std where every
    value is finite (the usual case: 3-4 times faster), else NaN-skipping (:func:`mean_sd_of`)."""
    if not np.isfinite(m).all():
        return mean_sd_of(m)[:2]
    return m.mean(axis=0), (m.std(axis=0, ddof=1) if len(m) > 1 else np.full(m.shape[1], np.nan))


def normal_on(normative, muscle: str) -> np.ndarray | None:
    """The norms' fraction of the controls' cycles in which ``muscle`` is on, at the 101 points of
    the cycle (both sides pooled: 'EMG on <muscle>' of ``gaitid norms build``); None without it."""
    band = normative.band(EMG_ON + muscle, "", "fraction") if normative is not None else None
    return None if band is None else np.interp(PERCENT, band[0], band[1])


def muscle_panel(panel: EmgPanel, m: EmgMuscle, show_cycles: bool = False) -> None:
    """One muscle's envelopes (mean +- SD per side; every cycle with ``show_cycles``), foot-off lines
    and on-off bars."""
    summaries = {side: _mean_sd(m.cycles[side]) for side in SIDES if len(m.cycles.get(side, ()))}
    peak = max((np.nanmax(np.abs(s[0])) for s in summaries.values() if np.isfinite(s[0]).any()), default=np.nan)
    unit, factor = display_unit(m.unit, peak)
    def shown(v):  # the low-pass rings a little below zero after a burst's sharp end: drawn at zero
        return factor * np.maximum(v, 0.0)

    for side, (mean, sd) in summaries.items():
        panel.band(PERCENT, shown(mean - sd), shown(mean + sd), SIDE_COLOURS[side], SD_ALPHA, gid=f"sd:{side}")
        if show_cycles:
            for row in m.cycles[side]:
                panel.line(PERCENT, shown(row), CYCLE_COLOURS[side], 0.5, gid=f"cycle:{side}")
    for side, (mean, _) in summaries.items():
        panel.line(PERCENT, shown(mean), SIDE_COLOURS[side], 1.5, gid=f"mean:{side}")
        fo = np.nanmean(m.foot_off[side]) if np.isfinite(m.foot_off[side]).any() else np.nan
        if np.isfinite(fo):
            panel.vline(fo, SIDE_COLOURS[side], gid=f"foot_off:{side}")
        panel.onoff[side] = m.on[side].mean(axis=0)
    for side in SIDES:
        if side not in m.cycles:
            panel.notes.append((f"{side}: no channel", SIDE_COLOURS[side]))
        elif side not in summaries:
            panel.notes.append((f"{side}: no complete gait cycle", SIDE_COLOURS[side]))
    if not summaries:
        panel.missing = "no complete gait cycle"
    panel.ylabel = f"envelope [{unit}]" if unit else "envelope"


def emg_footer(data: ReportData, normal: bool = False) -> list[str]:
    """The EMG pages' footer: the chain and the on-off method, then the channels not drawn."""
    s, emg = data.settings, data.emg
    hp, lp, env = s.get("emg_highpass_hz"), s.get("emg_lowpass_hz"), s.get("emg_envelope_hz")
    band = f"band-passed {hp:g}-{lp:g} Hz" if hp and lp else (f"high-passed {hp:g} Hz" if hp else "not high-passed")
    lines = [f"Mean linear envelope of each muscle over the gait cycles: offset removed, {band}, rectified, low-passed "
             f"{env:g} Hz (docs/emg.md); mean \u00b1 SD per side. Bars under each panel, left (L) above right (R): the "
             f"fraction of the side's cycles the muscle is on at each % (darker: more cycles)"
             + ("; N: the same in the norms' control cycles, both sides" if normal else "") + ". On-off: "
             + ("; ".join(emg.methods) if emg.methods else "no cycle to time") + "."]
    if emg.unused:
        more = len(emg.unused) - UNUSED_LISTED
        lines.append(f"Not drawn ({len(emg.unused)} channel{'s' if len(emg.unused) > 1 else ''}): "
                     + "; ".join(emg.unused[:UNUSED_LISTED]) + (f"; and {more} more" if more > 0 else "")
                     + " (every channel's reason: Result.emg.channels).")
    return lines


def emg_legend(show_cycles: bool, normal: bool) -> list[LegendEntry]:
    sides = tuple(SIDE_COLOURS[s] for s in SIDES)
    legend = [e for e in curve_legend(None) if show_cycles or e.kind != "thin"]
    legend.append(LegendEntry("band", sides, "on (fraction of cycles)", 1.0, tuple(f"onoff:{s}" for s in SIDES)))
    if normal:
        legend.append(LegendEntry("band", (NORMAL_BAR,), "on in the norms' controls (N)", 1.0, ("onoff:normal",)))
    return legend


def emg_pages(data: ReportData, normative=None, show_cycles: bool = False) -> list[Page]:
    """The EMG pages (one when no muscle can be drawn: the footer says why); ``normative``: norms
    (:meth:`gaitid.norms.Norms.band`) whose on-off of a muscle is drawn as a third bar (N) under its
    panel; ``show_cycles``: each cycle's envelope drawn too (the report draws the mean +- SD: the page
    costs half as much)."""
    muscles = data.emg.muscles if data.emg is not None else []
    normal = {m.muscle: normal_on(normative, m.muscle) for m in muscles}
    normal_row = any(v is not None for v in normal.values())
    per_page = PER_PAGE_ROWS * COLUMNS
    chunks = [muscles[k:k + per_page] for k in range(0, len(muscles), per_page)] or [[]]
    pages = []
    for k, chunk in enumerate(chunks):
        heading = "EMG" + (f" ({k + 1}/{len(chunks)})" if len(chunks) > 1 else "")
        page = Page("emg", heading)
        bottom = page_frame(page, data.title, heading, emg_footer(data, normal_row), emg_legend(show_cycles, normal_row))
        rows = max(-(-len(chunk) // COLUMNS), 3)  # at least three rows: panels no taller than the curve pages'
        boxes = grid_boxes(page, max(rows, PER_PAGE_ROWS) if len(chunks) > 1 else rows, bottom)
        bars = (3 if normal_row else 2) * (BAR_H + BAR_GAP)
        for j, m in enumerate(chunk):
            x, y, w, h = boxes[j // COLUMNS][j % COLUMNS]
            panel = EmgPanel(m.muscle, (x, y, w, h - bars), xlabel="% gait cycle" if j + COLUMNS >= len(chunk) else "",
                             letters=j % COLUMNS == 0, normal_row=normal_row, normal=normal[m.muscle])
            muscle_panel(panel, m, show_cycles)
            panel.draw(page)
        if not chunk:
            page.text(page.width / 2, (bottom + 60.0) / 2, "no EMG channel to draw", size=9.0, anchor="middle",
                      italic=True, colour=MUTED, gid="missing")
        pages.append(page)
    return pages

