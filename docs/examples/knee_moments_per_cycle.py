"""Knee moments per cycle, with their mean +- SD, from Result.cycle_curves (run: python knee_moments_per_cycle.py [TRIAL.c3d])."""
import sys
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import gaitid

here = Path(__file__).resolve().parents[2] / "sample_data"
trial = sys.argv[1] if len(sys.argv) > 1 else here / "walk_synthetic.c3d"
result = gaitid.process(trial)
warnings.filterwarnings("ignore", "Mean of empty slice|Degrees of freedom")  # where no cycle has a value (NaN)
fig, ax = plt.subplots()
for side, colour in (("Left", "tab:red"), ("Right", "tab:green")):
    knee = result.cycle_curves(side, "KneeMoment")           # values (n_cycles, 101, 3), percent, cycles, kinetic, unit
    sagittal = knee.values[knee.kinetic, :, 0]               # the kinetic cycles' X (flexion/extension) component
    for number, curve in zip(knee.cycles[knee.kinetic], sagittal):
        ax.plot(knee.percent, curve, color=colour, lw=0.6, alpha=0.5, label=f"{side} cycle {number}")
    mean, sd = np.nanmean(sagittal, axis=0), np.nanstd(sagittal, axis=0, ddof=1) if len(sagittal) > 1 else 0.0
    ax.plot(knee.percent, mean, color=colour, lw=2, label=f"{side} mean")
    ax.fill_between(knee.percent, mean - sd, mean + sd, color=colour, alpha=0.2)
ax.set(xlabel="% gait cycle", ylabel=f"knee moment X [{knee.unit}]", title=result.name)
ax.legend(fontsize=7)
fig.savefig(sys.argv[2] if len(sys.argv) > 2 else "knee_moments.png", dpi=120)
