"""A real trial's joint moments with their 95 % uncertainty bands (docs/uncertainty.md).

Processes a walking trial with its static trial and ``uncertainty=200`` (the default error
model: Davis hip, palpated knee and ankle markers, Dempster segment parameters, floor plates,
0.5 mm marker noise), and draws, per joint and plane, the mean moment over the kinetic cycles of
each side with its 95 % band (:func:`gaitid.uncertainty.band_curves`: the band of the mean
curve, as the report draws it), and beside it which error source dominates the peaks.

Run: ``python docs/examples/uncertainty_bands.py [TRIAL.c3d STATIC.c3d]`` -> docs/images/uncertainty_bands.png
(default: ../shared/realdata/btkdata/PiG_Motion3_FF.c3d with PiG_Calibration3_FF.c3d).
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gaitid.io.atomic import atomic_path  # noqa: E402
from gaitid.pipeline import process  # noqa: E402
from gaitid.uncertainty import band_curves  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "docs" / "images" / "uncertainty_bands.png"
REAL = ROOT.parent / "shared" / "realdata" / "btkdata"
COLOURS = {"Left": "#d62728", "Right": "#2ca02c"}  # clinical convention, as the report
PLANES = (("X", "sagittal"), ("Y", "frontal"), ("Z", "transverse"))


def main(argv: list[str]) -> Path:
    walk = Path(argv[0]) if argv else REAL / "PiG_Motion3_FF.c3d"
    static = Path(argv[1]) if len(argv) > 1 else REAL / "PiG_Calibration3_FF.c3d"
    result = process(walk, static=static, uncertainty=200)
    bands = band_curves(result)
    fig, axes = plt.subplots(3, 3, figsize=(11, 8.5), sharex=True)
    for row, joint in enumerate(("Hip", "Knee", "Ankle")):
        for col, (comp, plane) in enumerate(PLANES):
            ax = axes[row, col]
            for side, colour in COLOURS.items():
                b = bands[(bands["side"] == side) & (bands["variable"] == f"{joint}Moment") & (bands["component"] == comp)]
                if b.empty:
                    continue
                ax.fill_between(b["percent"], b["low95"], b["high95"], color=colour, alpha=0.25, lw=0)
                ax.plot(b["percent"], b["mean"], color=colour, lw=1.5, label=side)
            ax.axhline(0, color="0.6", lw=0.6)
            ax.set_title(f"{joint} moment, {plane}", fontsize=9)
            if col == 0:
                ax.set_ylabel(f"{b['unit'].iloc[0]} (internal)" if not b.empty else "")
            if row == 2:
                ax.set_xlabel("% gait cycle")
    axes[0, 0].legend(fontsize=8, loc="upper right")
    u = result.uncertainty
    fig.suptitle(f"{result.name}: mean joint moments of the kinetic cycles with their 95 % band "
                 f"({u.settings.samples} Monte Carlo samples, error model '{u.error_model.name}', "
                 f"{u.settings.plates} plates)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    with atomic_path(OUT) as tmp:
        fig.savefig(tmp, dpi=110, format="png")
    return OUT


if __name__ == "__main__":
    print(main(sys.argv[1:]))
