"""Issue 17: per-cycle work on the cycle's own samples, long tables from arrays, exports streamed.
Expected values come from the per-cycle reference (time_normalise on each cycle) and from the
Result's own arrays; speed and memory figures live in benchmarks/bench_scale.py."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from gaitid.core.resources import sample_data_dir
from gaitid.core.trial import Event
from gaitid.cycles import curves as C
from gaitid.cycles.parameters import summarise
from gaitid.export import result_points, write_csv, write_curves, write_frames
from gaitid.pipeline import process


@pytest.fixture(scope="module")
def result():
    return process(sample_data_dir() / "walk_synthetic.c3d")


def test_normalised_cycles_equal_each_cycles_own_normalisation():
    t = np.arange(0, 6.0, 0.01)
    rng = np.random.default_rng(3)
    vec = np.column_stack([np.sin(t), np.cos(3 * t), t ** 2]) + rng.normal(0, 0.01, (t.size, 3))
    vec[[57, 58, 300], 1] = np.nan
    scalar = np.sin(2 * t)
    scalar[210] = np.nan
    ev = [Event(lab, side, time, round(time * 100) + 1) for side, off in (("Left", 0.0), ("Right", 0.55))
          for k in range(5) for lab, time in (("Foot Strike", off + 0.3 + 1.1 * k), ("Foot Off", off + 0.95 + 1.1 * k))]
    cyc = C.gait_cycles(ev)
    arrays = C.normalised_cycles({"Left": {"v": vec, "s": scalar}, "Right": {"v": vec}}, t, cyc)
    for side in ("Left", "Right"):
        own = [c for c in cyc if c.side == side]
        for i, c in enumerate(own):
            np.testing.assert_array_equal(arrays[side]["v"][i], C.time_normalise(vec, t, c.start_time, c.end_time))
            ref = C.time_normalise(scalar[:, None], t, c.start_time, c.end_time)[:, 0]  # one curve as (n, 1)
            if side == "Left":
                np.testing.assert_array_equal(arrays[side]["s"][i], ref)
    assert np.isnan(arrays["Left"]["v"]).any()  # the NaN samples reached their neighbours


def test_normalised_cycles_of_a_long_trial_in_column_blocks_equal_each_cycles_own():
    """A trial too long to stack all its curves at once (200,000 samples x 61 columns: several
    blocks of columns) gives each cycle exactly its own normalisation, the last block included."""
    t = np.arange(200_000) / 100.0
    rng = np.random.default_rng(5)
    curves = {f"V{k}": rng.normal(size=(t.size, 3)) for k in range(20)}
    curves["S"] = rng.normal(size=t.size)
    ev = [Event(lab, "Left", time, round(time * 100) + 1) for start in (0.3, 1500.0)
          for k in range(3) for lab, time in (("Foot Strike", start + 1.1 * k), ("Foot Off", start + 0.65 + 1.1 * k))]
    cyc = C.gait_cycles(ev)
    assert t.size * 61 > 1 << 22  # more than one block
    arrays = C.normalised_cycles({"Left": curves}, t, cyc)
    assert len(cyc) == 5 and list(arrays["Left"]) == list(curves)  # (one cycle spans the long gap)
    for i, c in enumerate(cyc):
        for name, v in curves.items():
            got = arrays["Left"][name][i]
            ref = C.time_normalise(v.reshape(t.size, -1), t, c.start_time, c.end_time).reshape(got.shape)
            np.testing.assert_array_equal(got, ref)


def test_curves_table_built_when_asked_and_equal_to_cycle_curves(result):
    assert "_curves" not in vars(result) or vars(result)["_curves"] is None  # process() did not build it
    ref = C.cycle_curves(result.outputs.curves, result.trial.time, result.cycles, result.outputs.units)
    pd.testing.assert_frame_equal(result.curves, ref)
    assert result.curves is result.curves  # built once
    again = dataclasses.replace(result, curves=None).curves  # rebuilt from the arrays
    pd.testing.assert_frame_equal(again, ref)
    s = summarise(result.curves)
    np.testing.assert_allclose(result.curves_summary["mean"].to_numpy(float), s["mean"].to_numpy(float),
                               rtol=1e-12, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(result.curves_summary["sd"].to_numpy(float), s["sd"].to_numpy(float),
                               rtol=1e-12, atol=1e-12, equal_nan=True)


def test_frames_streamed_to_csv_and_parquet_equal_the_table(result, tmp_path):
    table = result.frames
    for fmt in ("csv", "parquet"):
        write_frames(result, tmp_path / f"f.{fmt}", fmt)
        back = pd.read_csv(tmp_path / "f.csv") if fmt == "csv" else pd.read_parquet(tmp_path / "f.parquet")
        assert list(back.columns) == list(table.columns) and len(back) == len(table)
        np.testing.assert_array_equal(back["value"].to_numpy(float), table["value"].to_numpy(float))
        for col in ("side", "variable", "component", "unit"):
            assert (back[col].fillna("").astype(str).to_numpy() == table[col].astype(str).to_numpy()).all()


def test_curves_written_from_the_arrays_are_the_tables_csv_byte_for_byte(tmp_path, monkeypatch):
    """write_curves streams Result.curves' CSV in blocks of whole cycles without building the table:
    the same bytes as writing the built table, with many blocks, one, and no cycle at all."""
    import gaitid.export as X

    r = process(sample_data_dir() / "walk_synthetic.c3d")
    for rows, name in ((2000, "blocks"), (10 ** 9, "one")):
        monkeypatch.setattr(X, "ROWS_PER_BLOCK", rows)
        write_curves(r, tmp_path / f"{name}.csv")
        assert not r.curves_built  # streaming did not build it
    write_csv(r.curves, tmp_path / "table.csv")
    assert r.curves_built
    ref = (tmp_path / "table.csv").read_bytes()
    assert (tmp_path / "blocks.csv").read_bytes() == ref == (tmp_path / "one.csv").read_bytes()
    assert ref.count(b"\n") == len(r.curves) + 1
    empty = dataclasses.replace(r, cycles=[], normalised={}, curves=None)
    write_curves(empty, tmp_path / "empty.csv")
    write_csv(empty.curves, tmp_path / "empty_table.csv")
    assert (tmp_path / "empty.csv").read_bytes() == (tmp_path / "empty_table.csv").read_bytes()
    # and Result.to_csv streams it: its curves CSV is the table's, and the Result still has no table
    fresh = process(sample_data_dir() / "walk_synthetic.c3d")
    fresh.to_csv(tmp_path / "out")
    assert not fresh.curves_built
    assert (tmp_path / "out" / f"{fresh.name}_curves.csv").read_bytes() == ref


def test_curve_rows_blocks_are_whole_cycles_and_concatenate_to_the_table(result):
    table = result.curves
    blocks = list(C.curve_rows(result.normalised, result.cycles, result.outputs.units, max_rows=5000))
    per_cycle = len(table) // len(result.cycles)
    assert len(blocks) > 2 and all(len(b["value"]) % per_cycle == 0 for b, _ in blocks)
    for col in table.columns:
        got = np.concatenate([b[col] for b, _ in blocks])
        text = isinstance(table[col].dtype, pd.CategoricalDtype)
        want = table[col].cat.codes.to_numpy() if text else table[col].to_numpy()
        np.testing.assert_array_equal(got, want)


def test_c3d_points_read_the_arrays(result):
    points = result_points(result).points
    group, vals = points["RKneeMoment"]
    assert group == "MOMENTS"  # N.mm/kg, external (the Result's default is internal)
    np.testing.assert_allclose(vals, -result.curve("Right", "KneeMoment") * 1000.0, equal_nan=True)
    group, vals = points["LHipPower"]
    assert group == "POWERS" and np.all(vals[np.isfinite(vals[:, 2]), :2] == 0)  # power in Z
