"""Matplotlib figures of a report, drawn from the tidy tables of :mod:`gaitid.report.data`.

Every figure is a plain :class:`matplotlib.figure.Figure` on the Agg canvas (no pyplot
state, safe in batch workers). Per panel: each cycle as a thin line, the mean as a
thick line with a +-1 SD band, left red and right green, the mean foot-off of each
side as a dashed vertical line, the user's normative band in grey behind. Artists
carry a ``gid`` (``'mean:Left'``, ``'cycle:Right'``, ``'foot_off:Left'``, ``'normative'``)
so scripts and tests can find what was drawn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from gaitid.errors import GaitIDError
from gaitid.report.data import ReportData
from gaitid.report.labels import (
    COMPONENTS,
    CONTRIBUTION_COLOURS,
    CONTRIBUTION_PARTS,
    JOINTS,
    NORMATIVE_COLOUR,
    PLANES,
    SIDE_COLOURS,
    axis_label,
    is_kinematic,
)
from gaitid.vocabulary import SIDES

A4_PORTRAIT = (8.27, 11.69)
FONT = {"font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
        "legend.fontsize": 8}


def new_figure(size=A4_PORTRAIT) -> Figure:
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def unit_of(data: ReportData, variable: str) -> str:
    sel = data.curves.loc[data.curves["variable"] == variable, "unit"]
    if len(sel):
        return str(sel.iloc[0])
    for r in data.results:
        if variable in r.units:
            return r.units[variable]
    return ""


def _missing_text(ax, text: str, **kw) -> None:
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", color="0.35", fontsize=9,
            style="italic", gid="missing", **kw)


def draw_cycles(ax, data: ReportData, variable: str, component: str, normative=None, show_cycles: bool = True,
                ylabel: bool = True) -> bool:
    """One panel: cycles, mean +- SD per side, foot-off lines, normative band. False if nothing drawn."""
    kinetic = not is_kinematic(variable)
    unit = unit_of(data, variable)
    drawn, absent = [], []
    if normative is not None:
        band = normative.band(variable, component, unit)
        if band is not None:
            pct, mean, sd = band
            ax.fill_between(pct, mean - sd, mean + sd, color=NORMATIVE_COLOUR, lw=0, zorder=0, gid="normative")
    for side in SIDES:
        colour = SIDE_COLOURS[side]
        summ = data.mean_sd(side, variable, component)
        if summ is None or not np.isfinite(summ[1]).any():
            absent.append(side)
            continue
        pct, mean, sd = summ
        if show_cycles:
            m = data.cycle_matrix(side, variable, component)
            for row in m:
                ax.plot(pct, row, color=colour, lw=0.5, alpha=0.45, gid=f"cycle:{side}")
        ax.fill_between(pct, mean - sd, mean + sd, color=colour, alpha=0.18, lw=0, gid=f"sd:{side}")
        ax.plot(pct, mean, color=colour, lw=1.8, gid=f"mean:{side}")
        fo = data.foot_off(side, kinetic)
        if np.isfinite(fo):
            ax.axvline(fo, color=colour, ls="--", lw=0.9, gid=f"foot_off:{side}")
        drawn.append(side)
    what = "kinetic cycle" if kinetic else "complete gait cycle"
    if not drawn:
        _missing_text(ax, f"no {what}")
    elif absent:
        ax.text(0.02, 0.97, "\n".join(f"{s}: no {what}" for s in absent), transform=ax.transAxes, ha="left",
                va="top", fontsize=6.5, color=SIDE_COLOURS[absent[0]] if len(absent) == 1 else "0.3", gid="missing")
    ax.axhline(0.0, color="0.55", lw=0.5, zorder=0.5)
    ax.set_xlim(0, 100)
    ax.set_xticks([0, 20, 40, 60, 80, 100])
    ax.grid(True, color="0.92", lw=0.5)
    if ylabel:
        ax.set_ylabel(axis_label(variable, component, unit, data.convention))
    return bool(drawn)


def _side_legend(fig: Figure, extra: list | None = None, y: float = 0.012) -> None:
    handles = [Line2D([], [], color=SIDE_COLOURS[s], lw=1.8, label=f"{s} mean") for s in SIDES]
    handles += [Patch(color="0.6", alpha=0.35, label="\u00b11 SD"),
                Line2D([], [], color="0.3", ls="--", lw=0.9, label="foot off (mean)"),
                Line2D([], [], color="0.3", lw=0.5, alpha=0.6, label="each cycle")]
    handles += extra or []
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, y))


def _normative_handle(normative) -> list:
    return [Patch(color=NORMATIVE_COLOUR, label=f"normative \u00b11 SD")] if normative is not None else []


def joint_grid(data: ReportData, kind: str, normative=None, show_cycles: bool = True) -> Figure:
    """Hip/knee/ankle (rows) x sagittal/frontal/transverse (columns) of ``kind`` 'Angles' or 'Moment'."""
    with _style():
        fig = new_figure()
        axes = fig.subplots(3, 3, sharex=True)
        for i, joint in enumerate(JOINTS):
            for j, comp in enumerate(COMPONENTS):
                ax = axes[i, j]
                draw_cycles(ax, data, f"{joint}{kind}", comp, normative, show_cycles)
                ax.set_title(f"{joint} {PLANES[comp].lower()}" if kind == "Angles"
                             else f"{joint} {PLANES[comp].lower()} moment", fontweight="bold")
                if i == 2:
                    ax.set_xlabel("% gait cycle")
        if kind == "Angles":
            title = "Kinematics: joint angles (every cycle)"
        else:
            title = ("Kinetics: joint moments, internal (net muscle) moments (kinetic cycles)"
                     if data.convention == "internal" else
                     "Kinetics: joint moments, external convention (= \u2212internal) (kinetic cycles)\n"
                     "(+) labels name the net muscle moment a positive value stands for")
        fig.suptitle(f"{data.title}\n{title}", fontsize=10 if "\n" in title else 11)
        _side_legend(fig, _normative_handle(normative))
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.075, top=0.915 if "\n" in title else 0.925,
                            hspace=0.28, wspace=0.45)
    return fig


def _grf_lab_to_body(result) -> tuple[np.ndarray, dict[str, np.ndarray], str, bool]:
    """(time, {side: (n, 3) GRF as [anterior, medial, vertical]}, unit, True) of one trial, on the
    direction of progression (:func:`gaitid.progression.progression_direction`); without it the lab
    X, Y, Z and False."""
    from gaitid.progression import progression_direction

    f = result.frames
    sel = f[f["variable"] == "GroundReactionForce"]
    time = result.trial.time
    unit = str(sel["unit"].iloc[0]) if len(sel) else ""
    try:
        d = progression_direction(result.trial, result.markers).direction_lab
        d = np.where(np.isfinite(d), d, np.nan)
    except GaitIDError:  # no pelvis markers: fall back on the lab axes (labelled as such)
        d = None
    out = {}
    for side in SIDES:
        s = sel[sel["side"] == side]
        if s.empty:
            continue
        F = s.pivot(index="frame", columns="component", values="value").reindex(result.trial.frames)
        F = F.reindex(columns=list(COMPONENTS)).to_numpy(float)
        if d is not None:  # medial = towards the other foot: left of progression for the right foot
            medial = np.cross(np.array([0.0, 0.0, 1.0]), d) * (1.0 if side == "Right" else -1.0)
            F = np.stack([np.einsum("ni,ni->n", F, d), np.einsum("ni,ni->n", F, medial), F[:, 2]], axis=1)
        out[side] = F
    return time, out, unit, d is not None


GRF_NAMES_BODY = ("Anterior (+)", "Medial (+)", "Vertical (+ up)")
GRF_NAMES_LAB = ("Lab X (+)", "Lab Y (+)", "Vertical (+ up)")
GRF_TITLES_BODY = ("GRF anterior-posterior", "GRF medio-lateral", "GRF vertical")
GRF_TITLES_LAB = ("GRF lab X", "GRF lab Y", "GRF vertical")


def draw_grf_time(axes, result) -> None:
    """Ground reaction force on each foot vs time (s), in the direction of progression."""
    time, grf, unit, body = _grf_lab_to_body(result)
    names, titles = (GRF_NAMES_BODY, GRF_TITLES_BODY) if body else (GRF_NAMES_LAB, GRF_TITLES_LAB)
    for k, ax in enumerate(axes):
        drawn = []
        for side, F in grf.items():
            # show the force only where the foot's load is known and non-zero (stance on a plate)
            v = np.where(np.abs(F[:, 2:3]) > 0, F, np.nan)[:, k]
            if np.isfinite(v).any():
                ax.plot(time, v, color=SIDE_COLOURS[side], lw=1.4, gid=f"grf:{side}")
                drawn.append(side)
        if not drawn:
            _missing_text(ax, "no force-plate contact")
        elif len(drawn) == 1:
            other = "Right" if drawn[0] == "Left" else "Left"
            ax.text(0.02, 0.97, f"{other}: no plate contact", transform=ax.transAxes, ha="left", va="top",
                    fontsize=6.5, color=SIDE_COLOURS[other], gid="missing")
        ax.axhline(0.0, color="0.55", lw=0.5)
        ax.grid(True, color="0.92", lw=0.5)
        ax.set_title(titles[k], fontweight="bold")
        ax.set_xlabel("time [s]")
        ax.set_ylabel(f"[{unit}]\n{names[k]}")


def grf_cycles(data: ReportData):
    """Session GRF per kinetic cycle, % cycle: tidy table like ``data.curves`` (components 0, 1, 2)."""
    from gaitid.cycles import time_normalise

    rows = []
    pct = np.linspace(0.0, 100.0, 101)
    body_all = True
    for r, name in zip(data.results, data.trials):
        time, grf, unit, body = _grf_lab_to_body(r)
        body_all &= body
        for c in r.cycles:
            if not c.kinetic or c.side not in grf:
                continue
            v = time_normalise(grf[c.side], time, c.start_time, c.end_time)
            for k in range(3):
                rows.append(pd.DataFrame({"trial": name, "side": c.side, "cycle": c.index, "kinetic": True,
                                          "variable": "GRF", "component": COMPONENTS[k], "percent": pct,
                                          "value": v[:, k], "unit": unit}))
    return (pd.concat(rows, ignore_index=True) if rows else None), body_all


def power_grf_figure(data: ReportData, normative=None, show_cycles: bool = True) -> Figure:
    """Top row: hip, knee, ankle power per cycle; bottom row: ground reaction forces
    (vs time for one trial, per kinetic cycle for a session)."""
    with _style():
        fig = new_figure((A4_PORTRAIT[0], 7.5))
        axes = fig.subplots(2, 3)
        for j, joint in enumerate(JOINTS):
            ax = axes[0, j]
            draw_cycles(ax, data, f"{joint}Power", "", normative, show_cycles)
            ax.set_title(f"{joint} power", fontweight="bold")
            ax.set_xlabel("% gait cycle")
        if not data.is_session:
            draw_grf_time(axes[1], data.results[0])
        else:
            table, body = grf_cycles(data)
            names, titles = (GRF_NAMES_BODY, GRF_TITLES_BODY) if body else (GRF_NAMES_LAB, GRF_TITLES_LAB)
            sub = _sub_data(data, table)
            for k, ax in enumerate(axes[1]):
                draw_cycles(ax, sub, "GRF", COMPONENTS[k], None, show_cycles, ylabel=False)
                ax.set_ylabel(f"[{unit_of(sub, 'GRF')}]\n{names[k]}")
                ax.set_title(titles[k], fontweight="bold")
                ax.set_xlabel("% gait cycle")
        fig.suptitle(f"{data.title}\nJoint powers (kinetic cycles) and ground reaction forces", fontsize=11)
        _side_legend(fig, _normative_handle(normative))
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.12, top=0.89, hspace=0.45, wspace=0.45)
    return fig


def _sub_data(data: ReportData, curves: pd.DataFrame | None) -> ReportData:
    """A ReportData holding other curves (same cycles, settings), its summary recomputed."""
    from dataclasses import replace

    from gaitid.parameters import summarise

    if curves is None or curves.empty:
        empty = pd.DataFrame(columns=["trial", "side", "cycle", "kinetic", "variable", "component", "percent",
                                      "value", "unit"])
        return replace(data, curves=empty, summary=pd.DataFrame(columns=["side", "variable", "component", "unit",
                                                                         "percent", "mean", "sd", "n"]))
    return replace(data, curves=curves, summary=summarise(curves.drop(columns=["trial", "cycle", "kinetic"])))


def contributions_figure(data: ReportData) -> Figure:
    """Sagittal (X) joint moment and its inertial, velocity, gravity and external parts,
    mean over the kinetic cycles, per side (rows) and joint (columns)."""
    with _style():
        fig = new_figure((A4_PORTRAIT[0], 7.0))
        axes = fig.subplots(2, 3, sharex=True)
        for i, side in enumerate(SIDES):
            for j, joint in enumerate(JOINTS):
                ax = axes[i, j]
                moment = f"{joint}Moment"
                unit = unit_of(data, moment)
                any_data = False
                for part in ("Total", *CONTRIBUTION_PARTS):
                    var = moment if part == "Total" else f"{moment}{part}"
                    summ = data.mean_sd(side, var, "X")
                    if summ is None or not np.isfinite(summ[1]).any():
                        continue
                    ax.plot(summ[0], summ[1], color=CONTRIBUTION_COLOURS[part], lw=1.8 if part == "Total" else 1.3,
                            ls="--" if part == "Total" else "-", zorder=3 if part == "Total" else 2,
                            gid=f"part:{side}:{part}")
                    any_data = True
                if any_data:
                    fo = data.foot_off(side, True)
                    if np.isfinite(fo):
                        ax.axvline(fo, color=SIDE_COLOURS[side], ls="--", lw=0.9, gid=f"foot_off:{side}")
                else:
                    _missing_text(ax, "no kinetic cycle")
                ax.axhline(0.0, color="0.55", lw=0.5)
                ax.grid(True, color="0.92", lw=0.5)
                ax.set_xlim(0, 100)
                ax.set_xticks([0, 20, 40, 60, 80, 100])
                ax.set_title(f"{side} {joint.lower()} sagittal moment", fontweight="bold", color=SIDE_COLOURS[side])
                ax.set_ylabel(axis_label(moment, "X", unit, data.convention))
                if i == 1:
                    ax.set_xlabel("% gait cycle")
        handles = [Line2D([], [], color=CONTRIBUTION_COLOURS[p], lw=1.8 if p == "Total" else 1.3,
                          ls="--" if p == "Total" else "-",
                          label="total" if p == "Total" else p.lower()) for p in ("Total", *CONTRIBUTION_PARTS)]
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 0.01))
        fig.suptitle(f"{data.title}\nMoment contributions (mean of kinetic cycles): "
                     "total = inertial + velocity + gravity + external", fontsize=11)
        fig.subplots_adjust(left=0.1, right=0.98, bottom=0.12, top=0.89, hspace=0.3, wspace=0.45)
    return fig


def table_figure(title: str, blocks: list[tuple[str, pd.DataFrame]], notes: list[str] = (),
                 max_rows: int = 40, bottom: float = 0.05) -> Figure:
    """A text page: a title, notes (one per line) and tables (rows beyond ``max_rows`` or below
    ``bottom``, in figure fraction, are cut, and the page says so)."""
    with _style():
        fig = new_figure()
        y = 0.97
        fig.text(0.05, y, title, fontsize=12, fontweight="bold", va="top")
        y -= 0.035
        for line in notes:
            fig.text(0.05, y, line, fontsize=7.5, va="top", wrap=True)
            y -= 0.018
        for heading, df in blocks:
            if y < bottom + 0.03:
                break
            y -= 0.01
            fig.text(0.05, y, heading, fontsize=10, fontweight="bold", va="top")
            y -= 0.022
            if df is None or df.empty:
                fig.text(0.06, y, "(none)", fontsize=8, va="top", style="italic")
                y -= 0.02
                continue
            room = max(1, int((y - bottom) / 0.0175) - 1)
            cut = len(df) > min(max_rows, room)
            shown = df.head(min(max_rows, room) - (1 if cut else 0)) if cut else df
            if shown.empty:  # no room left on the page for even one row
                fig.text(0.06, y, f"({len(df)} rows: see the HTML report)", fontsize=8, va="top", style="italic")
                break
            h = 0.0175 * (len(shown) + 1)
            ax = fig.add_axes((0.05, y - h, 0.9, h))
            ax.axis("off")
            tab = ax.table(cellText=shown.astype(str).to_numpy(), colLabels=list(shown.columns), loc="upper left",
                           cellLoc="left", colLoc="left", bbox=(0, 0, 1, 1))
            tab.auto_set_font_size(False)
            tab.set_fontsize(7)
            # column widths from the longest text of each column (matplotlib's auto width measures every cell)
            chars = np.array([max([len(str(c)), *(len(v) for v in shown[c].astype(str))]) for c in shown.columns],
                             float) + 2.0
            widths = chars / chars.sum()
            for (r, col), cell in tab.get_celld().items():
                cell.set_width(widths[col])
                cell.set_linewidth(0.3)
                if r == 0:
                    cell.set_facecolor("0.9")
                    cell.set_text_props(fontweight="bold")
            y -= h + 0.01
            if cut:
                fig.text(0.05, y, f"... {len(df) - len(shown)} more rows in the HTML report", fontsize=7,
                         style="italic", va="top")
                y -= 0.02
    return fig


class _style:
    """Report fonts for the figures built inside (matplotlib rc_context)."""

    def __enter__(self):
        import matplotlib

        self._ctx = matplotlib.rc_context(FONT)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)
