"""Batch runs: pairing with static trials, failures recorded, skipping, and identical
results sequentially, in worker processes and on a Dask cluster."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from gaitid.batch import plan, run_batch
from gaitid.model.subject_files import read_subject
from gaitid.resources import sample_data_dir

pytestmark = pytest.mark.slow


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """A session folder: the synthetic walk (twice, under two names), its static trial,
    and a corrupt file."""
    folder = tmp_path / "session"
    folder.mkdir()
    src = sample_data_dir()
    shutil.copy(src / "walk_synthetic.c3d", folder / "walk01.c3d")
    shutil.copy(src / "walk_synthetic.c3d", folder / "walk02.c3d")
    shutil.copy(src / "static_synthetic.c3d", folder / "walk_static.c3d")
    (folder / "broken.c3d").write_bytes(b"\x02\x50" + b"\x00" * 300)
    return folder


def test_plan_pairs_each_walk_with_the_static_trial(session):
    jobs = plan([session], session.parent / "out")
    assert [j.path.name for j in jobs] == ["broken.c3d", "walk01.c3d", "walk02.c3d"]
    assert [j.static.name if j.static else None for j in jobs] == [None, "walk_static.c3d", "walk_static.c3d"]
    assert "could not be read" in jobs[0].pairing
    assert "same subject" in jobs[1].pairing and "same folder" in jobs[1].pairing


def test_read_vicon_mp(tmp_path):
    mp = tmp_path / "subject.mp"
    mp.write_text("$Bodymass = 74\n$Height = 1760\n$LeftLegLength = 920\n$Unknown = 3\n")
    s = read_subject(mp)
    assert (s.mass, s.height, s.leg_length_left, s.leg_length_right) == (74.0, 1.76, 0.92, None)
    assert s.extra == {"Unknown": 3.0}


def test_batch_records_failures_skips_up_to_date_and_runs_in_parallel(session, tmp_path):
    out = tmp_path / "out"
    rows = []
    summary = run_batch([session], out, report=False, progress=rows.append)
    assert len(rows) == 3
    status = dict(zip(summary["trial"], summary["status"]))
    assert status == {"broken": "failed", "walk01": "ok", "walk02": "ok"}
    error = summary.set_index("trial").loc["broken", "error"]
    assert "broken.c3d" in error and "internal error" not in error
    assert (summary.set_index("trial").loc["walk01", "n_kinetic_cycles"]) >= 2
    assert pd.read_csv(out / "batch_summary.csv")["status"].tolist() == summary["status"].tolist()
    first = (out / "walk01" / "walk01_frames.csv").read_bytes()

    again = run_batch([session], out, report=False, progress=lambda r: None)
    assert dict(zip(again["trial"], again["status"])) == {"broken": "failed", "walk01": "skipped", "walk02": "skipped"}

    out2 = tmp_path / "out2"
    par = run_batch([session], out2, report=False, jobs=2, progress=lambda r: None)
    assert par["status"].tolist() == summary["status"].tolist()
    assert (out2 / "walk01" / "walk01_frames.csv").read_bytes() == first


def test_batch_on_a_dask_cluster_gives_identical_results(session, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    out_local, out_dask = tmp_path / "local", tmp_path / "dask"
    run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out_local, report=False, progress=lambda r: None)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        summary = run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out_dask, report=False,
                            scheduler=cluster.scheduler_address, progress=lambda r: None)
    assert summary["status"].tolist() == ["ok"]
    for name in ("walk01_frames.csv", "walk01_parameters.csv"):
        assert (out_dask / "walk01" / name).read_bytes() == (out_local / "walk01" / name).read_bytes()


def test_batch_writes_a_session_report_including_skipped_trials(session, tmp_path):
    out = tmp_path / "out"
    run_batch([session / "walk01.c3d", session / "walk02.c3d", session / "walk_static.c3d"], out,
              progress=lambda r: None)
    html = out / "session_synthetic_session_report.html"  # subject 'synthetic' in folder 'session'
    assert html.exists() and (out / "session_synthetic_session_report.pdf").exists()
    assert (out / "walk01" / "walk01_report.pdf").exists()
    assert (out / "walk01" / "gaitid-result.pkl").stat().st_size < 1_500_000  # the session report's input, slim
    first = html.stat().st_mtime_ns
    text = html.read_text()
    assert "walk01" in text and "walk02" in text
    again = run_batch([session / "walk01.c3d", session / "walk02.c3d", session / "walk_static.c3d"], out,
                      progress=lambda r: None)
    assert set(again["status"]) == {"skipped"}
    assert html.stat().st_mtime_ns == first  # nothing changed: the session report is not rebuilt


def test_failed_trials_are_not_retried_until_their_input_changes(session, tmp_path):
    out = tmp_path / "out"
    run_batch([session / "broken.c3d"], out, report=False, progress=lambda r: None)
    again = run_batch([session / "broken.c3d"], out, report=False, progress=lambda r: None)
    row = again.iloc[0]
    assert row["status"] == "failed" and "broken.c3d" in row["error"] and row["seconds"] == 0.0
    assert again.attrs["up_to_date_failures"] == 1
    (session / "broken.c3d").write_bytes(b"\x02\x50" + b"\x00" * 400)  # changed: tried again
    third = run_batch([session / "broken.c3d"], out, report=False, progress=lambda r: None)
    assert third.attrs["up_to_date_failures"] == 0 and third.iloc[0]["status"] == "failed"


def test_combined_cycle_table_across_trials(session, tmp_path):
    out = tmp_path / "out"
    summary = run_batch([session / "walk01.c3d", session / "walk02.c3d", session / "walk_static.c3d"], out,
                        report=False, parquet=True, progress=lambda r: None)
    assert summary["subject"].tolist() == ["synthetic", "synthetic"]
    assert summary["session"].tolist() == ["synthetic_session", "synthetic_session"]
    assert summary["static"].str.endswith("walk_static.c3d").all()
    assert summary["subject_sources"].str.contains("mass: C3D PROCESSING").all()
    table = pd.read_csv(out / "batch_cycles.csv", keep_default_na=False, na_values=[""])
    assert pd.read_parquet(out / "batch_cycles.parquet").shape == table.shape
    assert list(table.columns[:10]) == ["subject", "session", "trial", "path", "side", "cycle", "kinetic", "variable",
                                        "component", "unit"]
    assert list(table.columns[10:]) == [f"pct_{p}" for p in range(101)]
    # one row per trial, side, cycle, variable and component
    assert not table.duplicated(["trial", "side", "cycle", "variable", "component"]).any()
    long = pd.read_csv(out / "walk01" / "walk01_curves.csv", keep_default_na=False, na_values=[""])
    one = long[(long["side"] == "Left") & (long["variable"] == "KneeMoment") & (long["component"] == "X")
               & (long["cycle"] == long["cycle"].min())]
    row = table[(table["trial"] == "walk01") & (table["side"] == "Left") & (table["variable"] == "KneeMoment")
                & (table["component"] == "X") & (table["cycle"] == one["cycle"].iloc[0])]
    assert len(row) == 1
    assert row.iloc[0][[f"pct_{p}" for p in range(101)]].to_numpy(float) == pytest.approx(
        one.sort_values("percent")["value"].to_numpy(float), nan_ok=True)
    n_per_trial = table.groupby("trial").size()
    assert n_per_trial["walk01"] == n_per_trial["walk02"] > 0
    params = pd.read_csv(out / "batch_parameters.csv")
    assert set(params["trial"]) == {"walk01", "walk02"} and "subject" in params.columns
    stamp = (out / "batch_cycles.csv").stat().st_mtime_ns
    run_batch([session / "walk01.c3d", session / "walk02.c3d", session / "walk_static.c3d"], out, report=False,
              parquet=True, progress=lambda r: None)
    assert (out / "batch_cycles.csv").stat().st_mtime_ns == stamp  # nothing changed: not rewritten


def test_session_report_input_round_trips_the_curves():
    from gaitid.batch import pack_result, unpack_result
    from gaitid.pipeline import process

    result = process(sample_data_dir() / "walk_synthetic.c3d", static=sample_data_dir() / "static_synthetic.c3d")
    data = pack_result(result)
    back = unpack_result(data)
    keys = ["side", "cycle", "variable", "component", "percent"]
    a = result.curves.sort_values(keys).reset_index(drop=True)
    b = back.curves.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)
    assert len(data) < len(__import__("pickle").dumps(result)) / 10
    assert back.frames["variable"].unique().tolist() == ["GroundReactionForce"]
