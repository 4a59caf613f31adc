"""The uncertainty checked, not assumed (issue 16): on the synthetic trial with exact truth.

- Coverage: errors drawn from the error model are injected into the INPUTS (markers, landmark
  placement in both trials, widths, hip centre, segment parameters, plate channels;
  gaitid.validation.synthetic.injected), the trial is processed with uncertainty, and the 95 % interval must
  cover the true joint moment on close to 95 % of the stance frames on a plate. Each
  replication's errors are systematic, so the frames of one replication are strongly correlated:
  the figure's spread is that of about as many draws as replications (+-4 % for 24). With S
  Monte Carlo samples the interval [y_(r), y_(r+q)] (q = 0.95 S) has expected coverage
  q / (S + 1): 94.1 % at S = 100. Unfiltered markers measure the propagation alone; the default 6 Hz
  filter adds its own bias (tests/test_synthetic_budget.py: up to 0.04 N.m/kg at the hip in
  stance), which no input error model contains: its coverage is measured and held separately.
  benchmarks/bench_uncertainty_coverage.py runs the same with more replications for the docs.
- The Monte Carlo and the first-order propagation agree within 10 % on SD for small errors.
- Stagni et al. (2000): a 30 mm hip-centre error changes the hip moments by about 22 % (anterior,
  sagittal) and 15 % (lateral, frontal).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gaitid.core.resources import sample_data_dir
from gaitid.io.c3d import read_c3d
from gaitid.model.markerset import load_model
from gaitid.pipeline import process
from gaitid.uncertainty import UncertaintySettings, load_error_model
from gaitid.uncertainty.design import Design, Parameter
from gaitid.uncertainty.nominal import NominalRun
from gaitid.uncertainty.propagate import column_curves
from gaitid.uncertainty.tables import normalised
from gaitid.validation.synthetic.injected import coverage_run

SAMPLE = sample_data_dir()
TRUTH_MODEL = SAMPLE / "plugin-gait-truth-foot.toml"


def coverage(replications: int, samples: int, cutoff, folder) -> pd.DataFrame:
    return coverage_run(replications, samples, cutoff, folder)


def _report(title: str, tab: pd.DataFrame) -> None:
    print(f"\n{title}")
    print(tab.pivot_table(index=["side", "joint"], columns="plane", values="coverage", sort=False).round(3).to_string())
    print(f"overall {tab['covered'].sum() / tab['frames'].sum():.3f}")


@pytest.mark.slow
def test_intervals_cover_the_truth_unfiltered(tmp_path):
    """The propagation alone (unfiltered markers: no unmodelled filter bias). Measured when
    written (24 replications, 100 samples): overall 0.938; per joint and plane 0.91-0.98."""
    tab = coverage(24, 100, None, tmp_path)
    _report("coverage of the true moments, unfiltered markers (24 replications x 100 samples)", tab)
    overall = tab["covered"].sum() / tab["frames"].sum()
    assert 0.89 <= overall <= 0.99
    per_joint = tab.groupby("joint")[["covered", "frames"]].sum()
    assert (per_joint["covered"] / per_joint["frames"]).min() >= 0.85


@pytest.mark.slow
def test_intervals_cover_the_truth_with_the_default_filter(tmp_path):
    """Default 6 Hz filter: its bias (not an input error) is not in the error model, so coverage
    drops a few points below the unfiltered figure. Measured when written: overall 0.903; the
    hip and the knee lose most (0.84-0.91), the ankle least."""
    tab = coverage(24, 100, 6.0, tmp_path)
    _report("coverage of the true moments, 6 Hz markers and plates (24 replications x 100 samples)", tab)
    overall = tab["covered"].sum() / tab["frames"].sum()
    assert 0.84 <= overall <= 0.99


def _stance_rms(r, column: str) -> pd.Series:
    """RMS over the stance frames on a plate of a per-frame uncertainty column, per side, joint
    variable (moments, forces, powers) and component."""
    f = r.frames[r.frames["variable"].str.match(r"(Ankle|Knee|Hip)(Moment|Force|Power)$")]
    on = {s: r.loads[s].state == "plate" for s in ("Left", "Right")}
    f = f[[on[s][i] for s, i in zip(f["side"], f["frame"] - r.trial.first_frame)]]
    return f.groupby(["side", "variable", "component"])[column].apply(lambda x: np.sqrt((x ** 2).mean()))


def test_monte_carlo_agrees_with_first_order_on_small_errors():
    """Every error of the model x 0.2: the Monte Carlo SD (600 samples: +-3 % sampling error) and
    the first-order SD (its own run, samples=0: finite differences, one column per input error)
    of every joint moment, force and power component, RMS over the stance frames on a plate,
    agree within 10 %."""
    errors = load_error_model().scaled(0.2)
    kw = dict(static=SAMPLE / "static_synthetic.c3d")
    mc = process(SAMPLE / "walk_synthetic.c3d", **kw, uncertainty=UncertaintySettings(samples=600, error_model=errors))
    lin = process(SAMPLE / "walk_synthetic.c3d", **kw, uncertainty=UncertaintySettings(samples=0, error_model=errors))
    ratio = _stance_rms(mc, "uncertainty_sd") / _stance_rms(lin, "uncertainty_sd_linear")
    print("\nMonte Carlo / first-order SD (stance RMS), errors x 0.2:", ratio.round(3).to_dict())
    assert len(ratio) == 2 * 21 and ratio.between(0.9, 1.1).all(), ratio[~ratio.between(0.9, 1.1)]


def test_hip_centre_sensitivity_against_stagni_2000():
    """A 30 mm hip-centre error changes the hip moment: Stagni et al. 2000 (J Biomech 33:1479, five
    subjects) report about 22 % for 30 mm anterior (flexion/extension) and 15 % for 30 mm lateral
    (ab/adduction), without saying how the percentage is taken. Here: the RMS change over each
    kinetic cycle (0-100 %) as a percentage of the nominal curve's range, on the synthetic trial
    (measured: 16 % and 18 %; on five real trials 12-21 % and 15-25 %, docs/uncertainty.md).
    Held: the same magnitude (half to one and a half times Stagni's)."""
    walk, static = read_c3d(SAMPLE / "walk_synthetic.c3d"), read_c3d(SAMPLE / "static_synthetic.c3d")
    r = process(walk, static=static)
    params = [Parameter("joint_centres", ("centre", side, "hip", a), 1.0) for side in ("Left", "Right")
              for a in range(3)]
    values = np.zeros((3, 6))
    values[1, [0, 3]] = 0.03  # anterior (pelvis x) on both sides
    values[2, 1], values[2, 4] = 0.03, -0.03  # lateral: +y on the left, -y on the right
    d = Design(params, values, np.zeros(3, bool), slice(0, 0), 0, slice(1, 1), slice(3, 3), 1.0, 0)
    run = NominalRun(r.trial, load_model(r.settings.model), static, r.settings, r.trial.subject, None, r.kinematics,
                     r.loads, r.outputs, r.cycles)
    curves = column_curves(run, d, 0.0)
    norm = normalised(curves, r.trial.time, [c for c in r.cycles if c.kinetic])
    for (side, index), by in norm.items():
        Y = by["HipMoment"]  # (101 %, 3 columns, X sagittal / Y frontal / Z)
        for col, comp, stagni in ((1, 0, 22.0), (2, 1, 15.0)):
            nom, per = Y[:, 0, comp], Y[:, col, comp]
            pct = 100 * np.sqrt(np.nanmean((per - nom) ** 2)) / (np.nanmax(nom) - np.nanmin(nom))
            print(f"{side} cycle {index} hip {'sagittal, anterior' if comp == 0 else 'frontal, lateral'} 30 mm: "
                  f"{pct:.0f} % of the range (Stagni: {stagni:.0f} %)")
            assert 0.5 * stagni <= pct <= 1.5 * stagni
