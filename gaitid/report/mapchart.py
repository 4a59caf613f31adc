"""The Movement Analysis Profile (Baker et al. 2009) as a bar chart.

One group of bars per GPS variable (the nine Gait Variable Scores) and a last group for the
Gait Profile Score: left red, right green (the report's side colours), the overall GPS dark
grey; across each group a dashed line at the controls' mean score over a light grey +-1 SD
band, when the norms hold them. The GDI, when known, is written under the title. Artists carry a
``gid`` ('gvs:Left', 'gps:Overall', 'reference'...) so scripts and tests can find them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib import rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from gaitid.cycles.scores import GPS_VARIABLES
from gaitid.report.labels import SIDE_COLOURS

FONT = {"font.size": 8, "axes.titlesize": 9, "axes.labelsize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
        "legend.fontsize": 8, "text.parse_math": False}  # text from files ('$' in a name) is never TeX

def new_figure(size) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


OVERALL_COLOUR = "0.25"
REFERENCE_COLOUR = "0.85"


def map_figure(scores: pd.DataFrame, title: str = "Movement Analysis Profile", size=(8.27, 4.6)) -> Figure:
    """The MAP bar chart of a :func:`gaitid.cycles.scores.gait_scores` table (GVS and GPS in degrees)."""
    names = [name for _, _, name in GPS_VARIABLES] + ["GPS"]
    width = 0.36

    def value(score, side, name):
        sel = scores[(scores["score"] == score) & (scores["side"] == side) & (scores["name"] == name)]
        return (float(sel["value"].iloc[0]), float(sel["reference_mean"].iloc[0]), float(sel["reference_sd"].iloc[0])) \
            if len(sel) else (np.nan, np.nan, np.nan)

    with rc_context(FONT):
        fig = new_figure(size)
        ax = fig.add_axes((0.08, 0.2, 0.9, 0.65))
        x = np.arange(len(names), dtype=float)
        tallest = 0.0
        for i, name in enumerate(names):
            score = "GPS" if name == "GPS" else "GVS"
            sides = ("Left", "Right", "Overall") if name == "GPS" else ("Left", "Right")
            offsets = (-width, 0.0, width) if name == "GPS" else (-width / 2, width / 2)
            _, ref, ref_sd = value(score, "Left", name)
            if np.isfinite(ref):
                half = (width * len(sides) + 0.1) / 2
                sd = ref_sd if np.isfinite(ref_sd) else 0.0
                ax.fill_between([x[i] - half, x[i] + half], max(ref - sd, 0.0), ref + sd, color=REFERENCE_COLOUR,
                                lw=0, zorder=0, gid="reference")
                ax.plot([x[i] - half, x[i] + half], [ref, ref], color="0.35", lw=1.0, ls="--", zorder=4,
                        gid="reference")
                tallest = max(tallest, ref + sd)
            for side, dx in zip(sides, offsets):
                v, _, _ = value(score, side, name)
                if not np.isfinite(v):
                    continue
                colour = OVERALL_COLOUR if side == "Overall" else SIDE_COLOURS[side]
                ax.bar(x[i] + dx, v, width=width * 0.95, color=colour, zorder=2,
                       gid=f"{'gps' if name == 'GPS' else 'gvs'}:{side}")
                ax.text(x[i] + dx, v, f"{v:.1f}", ha="center", va="bottom", fontsize=6.5, zorder=3)
                tallest = max(tallest, v)
        ax.set_xticks(x)
        ax.set_xticklabels([n.replace(" ", "\n", 1) for n in names])
        ax.axvline(len(names) - 1.5, color="0.6", lw=0.6, ls=":")
        ax.set_ylabel("RMS difference from the norms [deg]")
        ax.set_ylim(0, max(tallest * 1.15, 1.0))
        ax.grid(True, axis="y", color="0.92", lw=0.5)
        ax.set_axisbelow(True)
        handles = [Patch(color=SIDE_COLOURS["Left"], label="Left"), Patch(color=SIDE_COLOURS["Right"], label="Right"),
                   Patch(color=OVERALL_COLOUR, label="Overall GPS")]
        if scores["reference_mean"].notna().any():
            handles += [Line2D([], [], color="0.35", lw=1.0, ls="--", label="controls' mean"),
                        Patch(color=REFERENCE_COLOUR, label="\u00b11 SD")]
        fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False, bbox_to_anchor=(0.5, 0.0))
        sub = []
        gdi = scores[scores["score"] == "GDI"]
        if gdi["value"].notna().any():
            sub.append("GDI " + ", ".join(f"{s.lower()} {v:.0f}" for s, v in zip(gdi["side"], gdi["value"])
                                          if np.isfinite(v)))
        band = scores["band"].iloc[0] if len(scores) and "band" in scores else ""
        if band:
            sub.append(f"norms: speed band {band}")
        fig.suptitle(title + ("\n" + "; ".join(sub) if sub else ""), fontsize=11)
    return fig
