"""The Movement Analysis Profile page (Baker et al. 2009): one bar per Gait Variable Score and side,
the Gait Profile Scores at the right, the controls' mean and +-1 SD behind each group when the norms
hold them. Drawn on the report's vector canvas from a :func:`gaitid.cycles.scores.gait_scores` table; the
page keeps what it drew in one :class:`~gaitid.report.plots.Panel` (bars as 'band' series with
gid 'gvs:Left', 'gps:Overall'..., x = the bar's edges, y2 = its height)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gaitid.core.vocabulary import SIDES
from gaitid.cycles.scores import GPS_VARIABLES
from gaitid.report.canvas import Page
from gaitid.report.content import ReportData
from gaitid.report.labels import SIDE_COLOURS
from gaitid.report.layout import MARGIN, MUTED, page_frame
from gaitid.report.plots import FRAME, GRID, Panel, nice_ticks

OVERALL = "#404040"
REFERENCE = "#d9d9d9"
BAR = 0.36  # bar width in category units


def _value(scores: pd.DataFrame, score: str, side: str, name: str) -> tuple[float, float, float]:
    sel = scores[(scores["score"] == score) & (scores["side"] == side) & (scores["name"] == name)]
    if sel.empty:
        return np.nan, np.nan, np.nan
    row = sel.iloc[0]
    return float(row["value"]), float(row.get("reference_mean", np.nan)), float(row.get("reference_sd", np.nan))


def has_profile(scores: pd.DataFrame | None) -> bool:
    """Whether ``scores`` (a :func:`gaitid.cycles.scores.gait_scores` table) holds a finite GVS or
    GPS: a MAP page worth drawing."""
    if scores is None or scores.empty or not {"score", "side", "name", "value"} <= set(scores.columns):
        return False
    gv = scores[scores["score"].isin(("GVS", "GPS"))]
    return bool(np.isfinite(gv["value"].to_numpy(float)).any())


def map_page(data: ReportData, scores: pd.DataFrame | None) -> Page | None:
    """The MAP page, or None when ``scores`` holds no finite GVS/GPS (nothing worth a page)."""
    if not has_profile(scores):
        return None
    names = [name for _, _, name in GPS_VARIABLES] + ["GPS"]
    page = Page("map", "Movement Analysis Profile")
    legend = [("band", SIDE_COLOURS[s], s) for s in SIDES] + [("band", OVERALL, "overall GPS")]
    if scores.get("reference_mean", pd.Series(dtype=float)).notna().any():
        legend.append(("band", REFERENCE, "controls' mean \u00b11 SD"))
    notes = []
    gdi = scores[(scores["score"] == "GDI") & scores["value"].notna()]
    if len(gdi):
        notes.append("Gait Deviation Index (Schwartz & Rozumalski 2008; controls 100 \u00b1 10): "
                     + ", ".join(f"{s.lower()} {v:.0f}" for s, v in zip(gdi["side"], gdi["value"])) + ".")
    band = str(scores["band"].iloc[0]) if "band" in scores.columns else ""
    bottom = page_frame(page, data.title, "Movement Analysis Profile", [
        "Gait Variable Score: RMS difference between the subject's mean kinematic curve and the controls' mean "
        "over the gait cycle; Gait Profile Score: RMS of a side's nine GVS; overall: of all eighteen (Baker et al. "
        "2009, with the published erratum). Degrees; 0 = the controls' mean curve."
        + (f" Norms: speed band {band}." if band else ""), *notes], legend)
    left, top, right, _ = MARGIN
    box = (left + 40.0, top + 24.0, page.width - left - right - 46.0, min(360.0, bottom - top - 80.0))
    panel = Panel("RMS difference from the controls' mean", box, ylabel="GVS, GPS [deg]",
                  xlim=(-0.5, len(names) - 0.5))
    tallest = 1.0
    for i, name in enumerate(names):
        score = "GPS" if name == "GPS" else "GVS"
        sides = (*SIDES, "Overall") if name == "GPS" else SIDES
        width = BAR * 2 / len(sides)  # a group is two GVS bars wide
        offsets = [(k - (len(sides) - 1) / 2) * width for k in range(len(sides))]
        _, ref, ref_sd = _value(scores, score, SIDES[0], name)
        if np.isfinite(ref):
            half = BAR + 0.05
            sd = ref_sd if np.isfinite(ref_sd) else 0.0
            panel.band([i - half, i + half], [max(ref - sd, 0.0)] * 2, [ref + sd] * 2, REFERENCE, 1.0, gid="reference")
            tallest = max(tallest, ref + sd)
        for side, dx in zip(sides, offsets):
            v = _value(scores, score, side, name)[0]
            if np.isfinite(v):
                colour = OVERALL if side == "Overall" else SIDE_COLOURS[side]
                x = i + dx
                panel.band([x - width * 0.47, x + width * 0.47], [0.0, 0.0], [v, v], colour, 1.0,
                           gid=f"{score.lower()}:{side}")
                tallest = max(tallest, v)
    _draw(page, panel, names, tallest * 1.1)  # headroom for the value labels
    return page


def _draw(page: Page, panel: Panel, names: list[str], top_value: float) -> None:
    """The bars, the value on each, the category names under the axis (y from 0 to ``top_value``)."""
    bx, by, bw, bh = panel.box
    ticks = nice_ticks(0.0, top_value)
    y1 = float(ticks[-1])

    def X(x):
        return bx + (np.asarray(x, float) + 0.5) / len(names) * bw

    def Y(y):
        return by + bh - np.asarray(y, float) / y1 * bh

    grid = [np.array([[bx, v], [bx + bw, v]]) for v in Y(ticks[1:-1])]
    if grid:
        page.path(np.concatenate([np.vstack([g, [[np.nan, np.nan]]]) for g in grid]), stroke=GRID, width=0.4)
    for s in panel.series:
        if s.kind != "band":
            continue
        x0, x1 = (float(v) for v in X(s.x))
        top, base = float(Y(s.y2[0])), float(Y(s.y[0]))
        page.rect(x0, top, x1 - x0, base - top, stroke=None, fill=s.colour, gid=s.gid)
        if s.gid != "reference":
            page.text((x0 + x1) / 2, top - 2.0, f"{s.y2[0]:.1f}", size=6.0, anchor="middle")
    sep = float(X(len(names) - 1.5))
    page.path([[sep, by], [sep, by + bh]], stroke="#999999", width=0.5, dash=(1.5, 1.5))
    page.rect(bx, by, bw, bh, stroke=FRAME, width=0.6)
    step = float(ticks[1] - ticks[0])
    for v, yy in zip(ticks, Y(ticks)):
        page.text(bx - 2.5, float(yy) + 2.2, f"{v:.{0 if step >= 1 else 1}f}", size=6.0, anchor="end", colour=MUTED)
    for i, name in enumerate(names):
        words = name.split(" ", 1)
        for k, w in enumerate(words):
            page.text(float(X(i)), by + bh + 9.0 + 7.5 * k, w, size=6.5, anchor="middle")
    page.text(bx + bw / 2, by - 5.0, panel.title, size=7.5, bold=True, anchor="middle")
    page.text(bx - 24.0, by + bh / 2, panel.ylabel, size=6.5, anchor="middle", rotate=90.0)
    page.panels.append(panel)
