"""Per-cycle curves: Result.cycle_curves (the documented accessor) equals the long table, every 0-100 %
curve has its 101 points (NaN where not defined) in the arrays, the tables and the exports, and the
docs' example runs."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gaitid.core.errors import DataError

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"


@pytest.fixture(scope="module")
def result():
    from gaitid.pipeline import process

    return process(SAMPLE)


def test_cycle_curves_equal_the_long_table(result):
    c = result.curves
    for side in ("Left", "Right"):
        knee = result.cycle_curves(side, "KneeMoment")
        assert knee.values.shape == (3, 101, 3) and knee.unit == "N.m/kg"
        np.testing.assert_array_equal(knee.percent, np.linspace(0, 100, 101))
        assert knee.cycles.tolist() == [1, 2, 3]
        assert knee.kinetic.tolist() == [cy.kinetic for cy in result.cycles if cy.side == side]
        for i, number in enumerate(knee.cycles):
            for k, comp in enumerate("XYZ"):
                rows = c[(c.side == side) & (c.cycle == number) & (c.variable == "KneeMoment") & (c.component == comp)]
                np.testing.assert_array_equal(knee.values[i, :, k], rows["value"].to_numpy())
        power = result.cycle_curves(side, "KneePower")
        assert power.values.shape == (3, 101, 1)
    copy = result.cycle_curves("Left", "KneeMoment")
    copy.values[:] = 7.0
    assert not (result.normalised["Left"]["KneeMoment"] == 7.0).any()
    with pytest.raises(DataError, match="no cycle curves of 'KneeMomentum' for side 'Left'"):
        result.cycle_curves("Left", "KneeMomentum")


def test_every_curve_has_101_points_nan_where_not_defined(result, tmp_path):
    """The sample's kinetic knee moment has no value at 100 % (the next strike), yet every table and
    export holds the point, NaN: a pivot of one cycle's curve gives 101 rows."""
    from gaitid.batch.combined import curves_from_arrays
    from gaitid.export import curves_wide

    side, number = next((cy.side, cy.index) for cy in result.cycles if cy.kinetic)
    knee = result.cycle_curves(side, "KneeMoment")
    curve = knee.values[list(knee.cycles).index(number), :, 0]
    assert curve.shape == (101,) and np.isnan(curve[100]) and np.isfinite(curve[:99]).all()
    c = result.curves
    one = c[(c.side == side) & (c.cycle == number) & (c.variable == "KneeMoment")]
    pivot = one.pivot(index="percent", columns="component", values="value")
    assert pivot.shape == (101, 3) and pivot.index.tolist() == list(np.linspace(0, 100, 101))
    assert np.isnan(pivot.loc[100.0, "X"])
    assert (c.groupby(["side", "cycle", "variable", "component"], observed=True).size() == 101).all()
    wide = curves_wide(result)
    assert (wide.groupby(["side", "cycle"]).size() == 101).all()
    assert np.isnan(wide[(wide.side == side) & (wide.cycle == number)]["KneeMoment X [N.m/kg]"].iloc[100])
    result.to_csv(tmp_path)
    written = pd.read_csv(tmp_path / f"{result.name}_curves.csv")
    assert (written.groupby(["side", "cycle", "variable", "component"], dropna=False).size() == 101).all()
    assert len(written) == len(c)
    block = next(curves_from_arrays(result))
    assert [k for k in block if k.startswith("pct_")] == [f"pct_{p:g}" for p in np.linspace(0, 100, 101)]


def test_the_docs_example_runs(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    out = tmp_path / "knee.png"
    monkeypatch.setattr(sys, "argv", ["example", str(SAMPLE), str(out)])
    runpy.run_path(str(REPO / "docs" / "examples" / "knee_moments_per_cycle.py"), run_name="__main__")
    assert out.stat().st_size > 10_000
