"""Excel export: a wide per-cycle workbook whose numbers are the Result's (read back with openpyxl
and pandas), within Excel's limits for any trial length; the SpreadsheetML writer's edge cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import REPO

from gaitid.core.errors import DataError
from gaitid.io import xlsx

SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"


@pytest.fixture(scope="module")
def result():
    from gaitid.pipeline import process

    return process(SAMPLE)


@pytest.fixture(scope="module")
def book(result, tmp_path_factory):
    path = result.to_excel(tmp_path_factory.mktemp("excel") / "walk.xlsx")
    return path, pd.read_excel(path, sheet_name=None)


def test_sheets_and_layout(book, result):
    path, sheets = book
    assert list(sheets) == ["about", "curves", "curves_summary", "parameters", "parameters_summary", "cycles",
                            "events", "contacts"]
    curves = sheets["curves"]
    assert len(curves) == 101 * len(result.cycles)  # one row per cycle and percent: no per-frame rows
    assert list(curves.columns[:4]) == ["side", "cycle", "kinetic", "percent"]
    assert "AnkleMoment X [N.m/kg]" in curves.columns and "HipPower [W/kg]" in curves.columns
    assert "KneeAngles Z [deg]" in curves.columns
    params = sheets["parameters"]
    assert len(params) == len(result.cycles)
    assert {"cadence [steps/min]", "ankle plantarflexor moment, late stance, peak [N.m/kg]",
            "ankle plantarflexor moment, late stance, peak timing [% cycle]", "AnklePower A2 [W/kg]"} <= set(params.columns)
    from openpyxl import load_workbook

    ws = load_workbook(path, read_only=False)["curves"]
    assert ws.freeze_panes == "A2" and ws["A1"].font.b  # header bold and frozen


def test_curves_are_the_results_curves(book, result):
    """Every value of the wide sheet equals Result.curves (the long table the pipeline built) to the
    10 significant digits written; NaN stays empty."""
    curves = book[1]["curves"]
    long = result.curves
    units = result.units
    for (variable, component), g in long.groupby(["variable", "component"]):
        label = f"{variable} {component}".strip() + f" [{units[variable]}]"
        for (side, cycle), gc in g.groupby(["side", "cycle"]):
            mine = curves[(curves.side == side) & (curves.cycle == cycle)].sort_values("percent")
            np.testing.assert_allclose(mine[label].to_numpy(float), gc.sort_values("percent").value.to_numpy(),
                                       rtol=1e-9, atol=1e-12, equal_nan=True)
            assert bool(mine.kinetic.iloc[0]) == bool(gc.kinetic.iloc[0])


def test_summary_and_parameters_are_the_results(book, result):
    sheets = book[1]
    s = result.curves_summary
    row = s[(s.side == "Left") & (s.variable == "KneeMoment") & (s.component == "X") & (s.percent == 50.0)].iloc[0]
    wide = sheets["curves_summary"]
    mine = wide[(wide.side == "Left") & (wide.percent == 50.0)].iloc[0]
    assert mine["KneeMoment X [N.m/kg] mean"] == pytest.approx(row["mean"], rel=1e-9)
    assert mine["KneeMoment X [N.m/kg] n"] == row["n"]
    if np.isfinite(row["sd"]):
        assert mine["KneeMoment X [N.m/kg] SD"] == pytest.approx(row["sd"], rel=1e-8)
    p = result.parameters
    for _, r in p[p.parameter.isin(["cadence", "A2"])].iterrows():
        mine = sheets["parameters"]
        cell = mine[(mine.side == r.side) & (mine.cycle == r.cycle)]
        label = "cadence [steps/min]" if r.parameter == "cadence" else "AnklePower A2 [W/kg]"
        assert cell[label].iloc[0] == pytest.approx(r.value, rel=1e-9, nan_ok=True)
    assert len(sheets["contacts"]) == len(result.foot_contacts)
    assert len(sheets["events"]) == len(result.events)


def test_a_table_longer_than_the_row_limit_continues_on_another_sheet(tmp_path, monkeypatch):
    monkeypatch.setattr(xlsx, "MAX_ROWS", 100)
    table = pd.DataFrame({"side": ["Left"] * 250, "value": np.arange(250.0)})
    xlsx.write_xlsx(tmp_path / "long.xlsx", {"curves": table})
    sheets = pd.read_excel(tmp_path / "long.xlsx", sheet_name=None)
    assert list(sheets) == ["curves", "curves (2)", "curves (3)"]
    assert [len(s) for s in sheets.values()] == [99, 99, 52]  # header on each sheet
    np.testing.assert_array_equal(pd.concat(sheets.values()).value.to_numpy(), np.arange(250.0))


def test_cells_text_and_limits(tmp_path):
    table = pd.DataFrame({"name": ["a<b&c", None, "50 % $x$"], "flag": [True, False, True],
                          "value": [1.25, np.nan, -np.inf], "count": [1, 2, 3]})
    path = xlsx.write_xlsx(tmp_path / "t.xlsx", {"a/b:c?": table, "A/B:C?": table.iloc[:0]})
    from openpyxl import load_workbook

    wb = load_workbook(path)
    assert wb.sheetnames == ["a_b_c_", "A_B_C_ (2)"]  # valid and unique (Excel ignores case)
    rows = list(wb["a_b_c_"].iter_rows(values_only=True))
    assert rows[0] == ("name", "flag", "value", "count")
    assert rows[1] == ("a<b&c", True, 1.25, 1)
    assert rows[2][0] is None and rows[2][2] is None and rows[2][1] is False  # missing stays empty
    assert rows[3] == ("50 % $x$", True, None, 3)  # infinities are not numbers in a spreadsheet
    with pytest.raises(DataError, match="32767"):
        xlsx.write_xlsx(tmp_path / "x.xlsx", {"t": pd.DataFrame({"s": ["x" * 40000]})})
    with pytest.raises(DataError, match="16384"):
        xlsx.write_xlsx(tmp_path / "y.xlsx", {"t": pd.DataFrame(np.zeros((1, 16385)))})
    assert xlsx.column_letters(28)[-3:] == ["Z", "AA", "AB"] and xlsx.column_letters(16384)[-1] == "XFD"


@pytest.mark.slow
def test_a_long_trial_fits(tmp_path):
    """A 12 s walk: one row per cycle and percent, the per-frame data left to CSV/Parquet."""
    from gaitid.pipeline import process
    from gaitid.validation.synthetic.params import GaitParams
    from gaitid.validation.synthetic.write import write_sample

    walk = write_sample(tmp_path, GaitParams(n_frames=1200))[0]
    r = process(walk)
    sheets = pd.read_excel(r.to_excel(tmp_path / "long.xlsx"), sheet_name=None)
    assert len(sheets["curves"]) == 101 * len(r.cycles) and len(r.cycles) >= 20
    assert "frames" not in sheets and "_frames.csv" in sheets["about"].value.iloc[-1]


def test_the_events_sheet_is_the_events_table_of_the_csv_files(book, result):
    """One events table (export.events_table) for the CSV / Parquet files and the workbook."""
    from gaitid.export import events_table, excel_tables, tables

    table = events_table(result.events)
    first = result.events[0]
    assert list(table.columns) == ["label", "context", "time_s", "frame", "source"]
    assert table.iloc[0].tolist() == [first.label, first.context, first.time, first.frame, first.source]
    assert set(table.label) == {"Foot Strike", "Foot Off"} and set(table.context) == {"Left", "Right"}
    pd.testing.assert_frame_equal(tables(result, frames=False, curves=False)["events"], table)
    pd.testing.assert_frame_equal(excel_tables(result)["events"], table)
    sheet = book[1]["events"]
    assert sheet.label.tolist() == table.label.tolist() and sheet.frame.tolist() == table.frame.tolist()
    np.testing.assert_allclose(sheet.time_s.to_numpy(float), table.time_s.to_numpy(float), rtol=1e-9)
