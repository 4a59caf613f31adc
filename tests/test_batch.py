"""Batch runs: pairing with static trials, failures recorded, skipping, and identical
results sequentially, in worker processes and on a Dask cluster."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gaitid.batch import plan, run_batch
from gaitid.core.resources import sample_data_dir
from gaitid.subject.readers import read_subject

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


def _combined_reference(summary: pd.DataFrame, tmp: Path) -> dict[str, bytes]:
    """The combined tables by their definition: every processed trial's curves (one row per curve)
    and parameters tables read back, with its identity columns, concatenated by pandas and
    written once (how gaitid built them before each trial's job wrote its own rows)."""
    from gaitid.batch import spreadsheet_safe
    from gaitid.export import write_csv

    def read(path):
        table = pd.read_csv(path, engine="pyarrow")
        for col in ("component", "unit", "variable", "parameter", "side"):
            if col in table.columns:
                table[col] = table[col].fillna("").astype(str)
        return table

    parts = {"curves": [], "parameters": []}
    for _, row in summary[summary["status"].isin(["ok", "skipped"])].iterrows():
        stem = Path(row["path"]).stem
        ident = {"subject": row["subject"], "session": row["session"], "trial": stem, "path": row["path"]}
        for kind in parts:
            table = read(Path(row["outdir"]) / f"{stem}_{kind}.csv")
            if kind == "curves":
                table = table.set_index(["side", "cycle", "kinetic", "variable", "component", "unit", "percent"])[
                    "value"].unstack("percent")
                table.columns = [f"pct_{p:g}" for p in table.columns]
                table = table.reset_index()
            parts[kind].append(table.assign(**ident)[[*ident, *table.columns]])
    out = {}
    for kind, name in (("curves", "batch_cycles"), ("parameters", "batch_parameters")):
        write_csv(spreadsheet_safe(pd.concat(parts[kind], ignore_index=True), list(ident)), tmp / name)
        out[name] = (tmp / name).read_bytes()
    return out


@pytest.mark.parametrize("per_block", [None, 7, 64])
def test_curve_rows_from_the_arrays_are_those_of_the_curves_table(per_block):
    """A trial's rows of batch_cycles, gathered from its normalised arrays block by block, are the
    rows of its curves table reshaped one row per curve (``unstack``'s order), value for value."""
    from gaitid.batch.combined import curves_from_arrays, curves_from_table
    from gaitid.pipeline import process

    result = process(sample_data_dir() / "walk_synthetic.c3d", frame="lab", convention="external")
    blocks = list(curves_from_arrays(result, per_block))
    step = per_block or 450
    assert [len(b["side"]) for b in blocks] == [step] * (450 // step) + ([450 % step] if 450 % step else [])
    got = pd.DataFrame({k: np.concatenate([b[k] for b in blocks]) for k in blocks[0]})
    text = {k: str for k in ("side", "variable", "component", "unit")}  # as the CSV reads back: text, sorted as text
    want = curves_from_table(result.curves.astype(text))
    assert list(got.columns) == list(want.columns) and len(got) == 450
    pd.testing.assert_frame_equal(got.astype(text), want, check_dtype=False)


def test_combined_tables_from_each_trials_rows_equal_the_tables_concatenated(session, tmp_path):
    """Each trial's job writes its rows of the combined tables; the tables are those pieces
    copied one after the other, byte for byte what concatenating the trials' tables gives,
    including a kinematic-only trial, a trial name a spreadsheet would run, a failed trial, a
    piece gone and a trial table rewritten since (older columns: laid out on the union)."""
    from gaitid.batch import plan, write_combined_tables
    from gaitid.validation.synthetic import write_walkway

    shutil.copy(session / "walk01.c3d", session / "=cmd.c3d")
    write_walkway(session / "nokin.c3d", n_frames=380, truth=False, max_plate_pairs=0)
    out = tmp_path / "out"
    summary = run_batch([session], out, jobs=2, report=False, progress=lambda r: None)
    ok = summary[summary["status"] == "ok"]
    assert sorted(ok["trial"]) == ["=cmd", "nokin", "walk01", "walk02"]
    assert (out / "nokin" / "gaitid-batch_cycles.part").exists()
    ref = tmp_path / "ref"
    ref.mkdir()
    expected = _combined_reference(summary, ref)
    for name, data in expected.items():
        assert (out / f"{name}.csv").read_bytes() == data
    cycles = pd.read_csv(out / "batch_cycles.csv")
    assert set(cycles["trial"]) == {"'=cmd", "nokin", "walk01", "walk02"}
    assert not cycles.loc[cycles["trial"] == "nokin", "kinetic"].any()

    (out / "walk01" / "gaitid-batch_cycles.part").unlink()  # a piece gone: made again from the table
    params = out / "walk02" / "walk02_parameters.csv"  # a table rewritten since, without two columns
    old = pd.read_csv(params).drop(columns=["note", "phase"])
    old["value"] *= 2.0
    old.to_csv(params, index=False)
    todo = plan([session], out)
    write_combined_tables(todo, summary, out, force=True)
    expected = _combined_reference(summary, ref)
    for name, data in expected.items():
        assert (out / f"{name}.csv").read_bytes() == data
    table = pd.read_csv(out / "batch_parameters.csv")
    assert table.loc[table["trial"] == "walk02", "note"].isna().all()
    assert (out / "walk01" / "gaitid-batch_cycles.part").exists()


def test_session_report_input_keeps_what_the_report_draws():
    """The slim Result a session report is drawn from gives the report's curves, stances, cycles and
    parameters exactly as the full Result does, and the same cycle curves table, without the
    trial's analogs, plates and kinematics (so it stays small)."""
    from gaitid.batch import pack_result, unpack_result
    from gaitid.pipeline import process
    from gaitid.report.content import gather

    result = process(sample_data_dir() / "walk_synthetic.c3d", static=sample_data_dir() / "static_synthetic.c3d")
    data = pack_result(result)
    assert not result.curves_built  # packing did not build the long table
    back = unpack_result(data)
    pd.testing.assert_frame_equal(back.curves, result.curves)
    full, slim = gather([result]), gather([back])
    for side in ("Left", "Right"):
        a, b = full.sides[side], slim.sides[side]
        assert a.columns == b.columns and len(a.columns) > 40  # every output variable, not only the GRF
        np.testing.assert_array_equal(a.values, b.values)
        np.testing.assert_array_equal(full.stances[side].values, slim.stances[side].values)
    pd.testing.assert_frame_equal(full.cycles, slim.cycles)
    pd.testing.assert_frame_equal(full.parameters, slim.parameters)
    assert full.units == slim.units
    assert full.notices == slim.notices  # (it said "no force plates in the trial" when they were dropped)
    assert len(data) < len(__import__("pickle").dumps(result)) / 4
    with pytest.raises(ValueError, match="older gaitid"):  # a version-1 file: no curves, not drawn from
        unpack_result(__import__("pickle").dumps({"result": back, "curves": ("long", None)}))


# ----------------------------------------------------------------------------- isolation and budgets


def _kill_in_worker(name: str):
    """A replacement for gaitid.pipeline.process that kills its worker process (SIGKILL, as the
    system's out-of-memory killer does) when it processes the trial ``name``."""
    import multiprocessing
    import os
    import signal

    import gaitid.pipeline

    real = gaitid.pipeline.process

    def process(trial, *args, **kwargs):
        if getattr(trial, "path", None) is not None and trial.path.stem == name \
                and multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(trial, *args, **kwargs)

    return process


@pytest.fixture
def four_walks(tmp_path: Path) -> Path:
    folder = tmp_path / "four"
    folder.mkdir()
    for i in range(1, 5):
        shutil.copy(sample_data_dir() / "walk_synthetic.c3d", folder / f"walk0{i}.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", folder / "walk_static.c3d")
    return folder


def test_a_killed_worker_costs_only_its_trial(four_walks, tmp_path, monkeypatch):
    import multiprocessing

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the kill is planted by patching the parent before its workers fork")
    import gaitid.pipeline

    monkeypatch.setattr(gaitid.pipeline, "process", _kill_in_worker("walk02"))
    out = tmp_path / "out"
    summary = run_batch([four_walks], out, report=False, jobs=2, progress=lambda r: None)
    status = dict(zip(summary["trial"], summary["status"]))
    assert status == {"walk01": "ok", "walk02": "failed", "walk03": "ok", "walk04": "ok"}
    error = summary.set_index("trial").loc["walk02", "error"]
    assert "walk02.c3d" in error and "SIGKILL" in error
    written = pd.read_csv(out / "batch_summary.csv")
    assert written["status"].tolist() == ["ok", "failed", "ok", "ok"]
    for name in ("walk01", "walk03", "walk04"):
        assert (out / name / f"{name}_frames.csv").exists()
    assert not (out / "walk02" / "gaitid-run.json").exists()  # a killed trial is tried again next time


def test_a_trial_over_its_time_budget_fails_and_the_batch_goes_on(four_walks, tmp_path, monkeypatch):
    import time

    import gaitid.pipeline

    real = gaitid.pipeline.process

    def slow(trial, *args, **kwargs):
        if trial.path.stem == "walk03":
            time.sleep(60)
        return real(trial, *args, **kwargs)

    monkeypatch.setattr(gaitid.pipeline, "process", slow)
    t0 = time.perf_counter()
    summary = run_batch([four_walks / "walk01.c3d", four_walks / "walk03.c3d", four_walks / "walk_static.c3d"],
                        tmp_path / "out", report=False, time_limit_s=3, progress=lambda r: None)
    assert time.perf_counter() - t0 < 40
    row = summary.set_index("trial").loc["walk03"]
    assert row["status"] == "failed" and "walk03.c3d" in row["error"] and "--time-limit" in row["error"]
    assert summary.set_index("trial").loc["walk01", "status"] == "ok"


def test_a_worker_stuck_past_its_time_budget_is_killed(four_walks, tmp_path, monkeypatch):
    import multiprocessing
    import signal
    import time

    if multiprocessing.get_start_method() != "fork":
        pytest.skip("the hang is planted by patching the parent before its workers fork")
    import gaitid.batch.workers
    import gaitid.pipeline

    real = gaitid.pipeline.process

    def stuck(trial, *args, **kwargs):  # deaf to the trial's own timer, as a long C call is
        if trial.path.stem == "walk02":
            signal.signal(signal.SIGALRM, signal.SIG_IGN)
            time.sleep(120)
        return real(trial, *args, **kwargs)

    monkeypatch.setattr(gaitid.pipeline, "process", stuck)
    monkeypatch.setattr(gaitid.batch.workers, "GRACE_S", 1.0)
    summary = run_batch([four_walks], tmp_path / "out", report=False, jobs=2, time_limit_s=4,
                        progress=lambda r: None)
    by = summary.set_index("trial")
    assert by.loc["walk02", "status"] == "failed" and "stopped responding" in by.loc["walk02", "error"]
    assert (by.drop("walk02")["status"] == "ok").all()


def _promising_65000_frames(path: Path) -> Path:
    """The sample walk whose header promises 65,000 frames (a sparse file of that size: the
    data are zeros); a few GB to process, a few MB on disk."""
    from tests.c3d_mutations import RawC3D

    c = RawC3D((sample_data_dir() / "walk_synthetic.c3d").read_bytes())
    frame_bytes = c.frame_words * (4 if c.is_float else 2)
    c.set_word(3, 1)
    c.set_word(4, 65000)
    c.data = bytearray(c.data[:frame_bytes])
    blob = c.to_bytes()
    with open(path, "wb") as f:
        f.write(blob)
        f.truncate(len(blob) + 64999 * frame_bytes)
    return path


def test_a_header_over_the_memory_budget_fails_before_it_is_read(session, tmp_path):
    from gaitid.batch import trial_memory

    big = _promising_65000_frames(session / "huge.c3d")
    need = trial_memory(big)
    assert need > 2**30
    summary = run_batch([big, session / "walk01.c3d", session / "walk_static.c3d"], tmp_path / "out",
                        report=False, memory_limit=2**30, progress=lambda r: None)
    by = summary.set_index("trial")
    assert by.loc["huge", "status"] == "failed" and by.loc["walk01", "status"] == "ok"
    error = by.loc["huge", "error"]
    assert "huge.c3d" in error and f"{need / 2**20:.0f} MiB" in error and "--memory-limit" in error


def test_on_dask_a_trial_too_big_for_the_worker_fails_without_killing_it(session, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    big = _promising_65000_frames(session / "huge.c3d")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                  memory_limit="1GiB") as cluster:
        summary = run_batch([big, session / "walk01.c3d", session / "walk_static.c3d"], tmp_path / "dask",
                            report=False, scheduler=cluster.scheduler_address, progress=lambda r: None)
    by = summary.set_index("trial")
    assert by.loc["walk01", "status"] == "ok"
    assert by.loc["huge", "status"] == "failed"
    assert "huge.c3d" in by.loc["huge", "error"] and "Dask worker's memory limit of 1024 MiB" in by.loc["huge", "error"]


# ----------------------------------------------------------------------------- file names


def test_file_names_cannot_escape_or_inject(tmp_path):
    import csv
    import os

    src = tmp_path / "src"
    src.mkdir()
    walk = sample_data_dir() / "walk_synthetic.c3d"
    shutil.copy(walk, src / "...c3d")  # stem '..': the output folder's parent
    formula = '=HYPERLINK("evil","click")'
    shutil.copy(walk, src / f"{formula}.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", src / "static.c3d")
    (src / "folder.c3d").mkdir()
    os.symlink(src / "gone" / "away.c3d", src / "dangling.c3d")
    box = tmp_path / "box"
    box.mkdir()
    out = box / "out"
    summary = run_batch([src], out, report=False, progress=lambda r: None)
    assert sorted(p.name for p in box.iterdir()) == ["out"]  # nothing written beside the output folder
    by = summary.set_index("path")
    assert by.loc[str(src / "...c3d"), "status"] == "ok"
    assert Path(by.loc[str(src / "...c3d"), "outdir"]).parent == out
    assert by.loc[str(src / f"{formula}.c3d"), "status"] == "ok"
    folder = by.loc[str(src / "folder.c3d")]
    assert folder["status"] == "skipped" and "folder" in folder["error"]
    dangling = by.loc[str(src / "dangling.c3d")]
    assert dangling["status"] == "skipped" and "does not exist" in dangling["error"]
    with open(out / "batch_summary.csv", newline="") as f:
        cells = [row for row in csv.DictReader(f)]
    first = [r["trial"] for r in cells if formula in r["path"]]
    assert first == ["'=HYPERLINK(_evil_,_click_)"]  # text in a spreadsheet, not a formula ('"' is no file name)
    assert not any(v.startswith(("=", "+", "-", "@")) for r in cells for v in r.values())


def test_outputs_inside_the_source_folder_are_not_trials_on_rerun(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", src / "walk01.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", src / "static.c3d")
    first = run_batch([src], src / "out", report=False, progress=lambda r: None)
    assert (src / "out" / "walk01" / "walk01_results.c3d").exists()
    again = run_batch([src], src / "out", report=False, force=True, progress=lambda r: None)
    assert again["path"].tolist() == first["path"].tolist() == [str(src / "walk01.c3d")]


def test_two_trials_with_one_name_never_share_an_output_folder(tmp_path):
    import json

    src = tmp_path / "src"
    for s in ("S01", "S02"):
        (src / s).mkdir(parents=True)
        shutil.copy(sample_data_dir() / "walk_synthetic.c3d", src / s / "walk.c3d")
        shutil.copy(sample_data_dir() / "static_synthetic.c3d", src / s / "static.c3d")
    out = tmp_path / "out"
    summary = run_batch([src], out, report=False, progress=lambda r: None)
    assert summary["trial"].tolist() == ["walk-S01", "walk-S02"]
    assert summary["status"].tolist() == ["ok", "ok"]
    for s in ("S01", "S02"):
        record = json.loads((out / f"walk-{s}" / "gaitid-run.json").read_text())
        assert record["fingerprint"]["input"][0][0] == str(src / s / "walk.c3d")
    assert summary["warnings"].str.contains("same name").all()
    # another run, into the same folder, of a third trial of that name: its own folder again
    (src / "S03").mkdir()
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", src / "S03" / "walk.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", src / "S03" / "static.c3d")
    lone = run_batch([src / "S03"], out2 := tmp_path / "out2", report=False, progress=lambda r: None)
    assert lone["trial"].tolist() == ["walk"]
    other = run_batch([src / "S01"], out2, report=False, progress=lambda r: None)
    assert other["trial"].tolist() == ["walk-S01"] and "another trial" in other["warnings"].iloc[0]
    record = json.loads((out2 / "walk" / "gaitid-run.json").read_text())
    assert record["fingerprint"]["input"][0][0] == str(src / "S03" / "walk.c3d")  # untouched


def test_stale_temporary_files_are_removed_by_the_next_run(session, tmp_path):
    out = tmp_path / "out"
    run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out, report=False, progress=lambda r: None)
    stale = out / "walk01" / ".gaitid-tmp-999999999-abc-walk01_frames.csv"  # a killed run's (no such pid)
    stale.write_text("partial")
    run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out, report=False, force=True,
              progress=lambda r: None)
    assert not stale.exists()


# ----------------------------------------------------------------------------- reports


def test_a_trials_warnings_are_in_the_summary_without_reports(tmp_path):
    """What the pipeline warns about (here: no static trial, so the static foot offsets are 0) is
    in the summary's warnings column, with or without reports, and again when the trial is up to
    date; with --no-report it would be nowhere else."""
    from gaitid.pipeline import process

    (tmp_path / "src").mkdir()
    walk = tmp_path / "src" / "walk.c3d"
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", walk)
    expected = process(walk).warnings
    assert any("static_plantar_flexion: no static trial" in w for w in expected)
    for _ in range(2):  # processed, then up to date
        summary = run_batch([walk], tmp_path / "out", report=False, progress=lambda r: None)
        cell = summary.iloc[0]["warnings"]
        assert all(w in cell for w in expected), cell


def test_a_failing_report_is_a_warning_and_the_result_is_saved(session, tmp_path, monkeypatch):
    from gaitid.core.errors import GaitIDError
    from gaitid.pipeline.result import Result

    def broken(self, outdir, *args, **kwargs):
        raise GaitIDError("the report cannot be drawn", self.trial.path)

    monkeypatch.setattr(Result, "report", broken)
    out = tmp_path / "out"
    summary = run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out, progress=lambda r: None)
    row = summary.iloc[0]
    assert row["status"] == "ok" and row["n_kinetic_cycles"] >= 2
    assert "report not written" in row["warnings"] and "cannot be drawn" in row["warnings"]
    assert (out / "walk01" / "gaitid-result.pkl").exists() and (out / "walk01" / "walk01_frames.csv").exists()
    monkeypatch.undo()
    again = run_batch([session / "walk01.c3d", session / "walk_static.c3d"], out, progress=lambda r: None)
    # the report is tried again (the synthetic walk's one warning is its dynamic consistency: docs/checks.md)
    assert again.iloc[0]["status"] == "ok" and "report not written" not in again.iloc[0]["warnings"]
    assert again.iloc[0]["warnings"].startswith("dynamic consistency: ")  # and nothing before it
    assert (out / "walk01" / "walk01_report.pdf").exists()


def test_session_reports_in_the_workers_and_none_for_a_lone_trial(tmp_path):
    src = tmp_path / "src"
    for folder, names in (("pair", ["walk01", "walk02"]), ("lone", ["walk03"])):
        (src / folder).mkdir(parents=True)
        shutil.copy(sample_data_dir() / "static_synthetic.c3d", src / folder / "static.c3d")
        for n in names:
            shutil.copy(sample_data_dir() / "walk_synthetic.c3d", src / folder / f"{n}.c3d")
    out = tmp_path / "out"
    summary = run_batch([src], out, jobs=2, progress=lambda r: None)
    assert summary["status"].tolist() == ["ok", "ok", "ok"]
    reports = sorted(p.name for p in out.glob("session_*_report.*") if p.suffix != ".json")
    assert reports == ["session_synthetic_pair_report.html", "session_synthetic_pair_report.pdf"]
    html = (out / "session_synthetic_pair_report.html").read_text()
    assert "walk01" in html and "walk02" in html and "walk03" not in html
    assert (out / "batch_cycles.csv").exists()


def test_a_task_submitted_first_is_taken_before_the_queued_ones():
    """A session report is queued before the trials still waiting (it is drawn beside them, not
    after the last one): one worker takes the tasks in queue order, the ``first`` one first."""
    import os

    from gaitid.batch.workers import WorkerPool

    pool = WorkerPool(1)
    for k in range(3):
        pool.submit(("trial", k), os.getpid, ())
    pool.submit(("session", 0), os.getpid, (), first=True)
    order = []
    while pool.busy:
        order += [key for key, status, _ in pool.results() if status == "ok"]
    pool.close()
    assert order == [("session", 0), ("trial", 0), ("trial", 1), ("trial", 2)]


_FIRST_REPORT_IMPORTS = r"""
import importlib, sys, tempfile
from gaitid.batch.workers import _modules
for name in _modules(True):
    importlib.import_module(name)
from gaitid.pipeline import process
result = process(sys.argv[1])
before = set(sys.modules)
result.report(tempfile.mkdtemp())
print(",".join(sorted(set(sys.modules) - before)))
"""


def test_batch_workers_preload_every_module_a_report_imports():
    """The modules a batch imports before its workers fork are all a report needs: a worker's first
    report imports nothing more (it used to import scipy.interpolate through the norms: a second)."""
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-c", _FIRST_REPORT_IMPORTS, str(sample_data_dir() / "walk_synthetic.c3d")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == ""


_TIME_LIMIT_IN_A_THREAD = r"""
import cProfile, json, sys, threading, time
from gaitid.batch.budget import OutOfTime, time_limit

outcome = {}

def busy():
    t0 = time.perf_counter()
    try:
        with time_limit(0.3):
            while time.perf_counter() - t0 < 20:  # pure Python: stopped between bytecodes
                pass
    except OutOfTime:
        outcome["stopped_after"] = time.perf_counter() - t0
    try:
        with time_limit(0.05):
            time.sleep(0.3)  # one C call past the limit: the stop comes at its end, or not at all
    except OutOfTime:
        pass
    with time_limit(5):  # a limit not reached: nothing is raised later
        pass
    time.sleep(0.2)
    outcome["clean"] = True

thread = threading.Thread(target=busy)  # a Dask worker's thread, where SIGALRM cannot reach
thread.start()
thread.join(30)
# CPython 3.11 never returns from a profiled call once a cleared stop left its eval breaker set
outcome["profiled"] = cProfile.Profile().runcall(lambda: sum(range(10)))
print(json.dumps(outcome))
"""


def test_time_limit_stops_a_busy_thread_and_leaves_no_pending_stop():
    """In a child process with a timeout, so that a stop left pending cannot hang the suite."""
    import json
    import subprocess
    import sys

    run = subprocess.run([sys.executable, "-c", _TIME_LIMIT_IN_A_THREAD], capture_output=True, text=True,
                         timeout=60, cwd=Path(__file__).resolve().parent.parent)
    assert run.returncode == 0, run.stderr[-2000:]
    outcome = json.loads(run.stdout)
    assert 0.3 <= outcome["stopped_after"] < 5 and outcome["clean"] and outcome["profiled"] == 45


def test_an_edited_summary_is_a_pairing_table_even_with_quoted_names(tmp_path):
    from gaitid.batch import read_pairing

    table = tmp_path / "pairing.csv"
    static = tmp_path / "static.c3d"
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", static)
    table.write_text("trial,static\n'=walk,static.c3d\n'-walk2,\n")
    assert read_pairing(table) == {Path("=walk"): static.resolve(), Path("-walk2"): None}


def test_a_results_c3d_named_as_a_file_is_not_a_trial(session, tmp_path, capsys):
    """A shell glob over a folder `gaitid run -o` wrote into names its results C3D as a file: the
    batch plans it as not a trial (skipped, with the reason), and validate lists it as not compared."""
    from gaitid.validation.plugin_gait import validate

    shutil.copy(session / "walk01.c3d", session / "walk01_results.c3d")
    (session / "walk01_curves.csv").write_text("variable\n")  # an output of the same trial beside it
    files = [session / "walk01.c3d", session / "walk01_results.c3d"]
    jobs = plan(files, tmp_path / "out")
    assert [(j.path.name, j.not_a_trial[:19]) for j in jobs] == [("walk01.c3d", ""),
                                                                  ("walk01_results.c3d", "gaitid's own output")]
    records = validate([session / "walk01_results.c3d"])
    assert [r["file"] for r in records] == [str(session / "walk01_results.c3d")]
    assert records[0]["reason"].startswith("gaitid's own output")


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_writes_the_summary_of_what_finished_and_a_rerun_goes_on(tmp_path, jobs):
    """SIGINT to `gaitid batch` once a trial is done (its record written): exit 130, the message
    says how many trials are done and not started, batch_summary.csv lists the finished trials and
    marks the others 'not run: interrupted', the workers stop (no temporary file left behind), and
    a rerun skips the finished trials and processes the others."""
    import signal
    import subprocess
    import sys
    import time

    folder = tmp_path / "session"
    folder.mkdir()
    n = 8
    for k in range(1, n + 1):
        shutil.copy(sample_data_dir() / "walk_synthetic.c3d", folder / f"walk{k:02d}.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", folder / "walk_static.c3d")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "gaitid.cli", "batch", str(folder), "-o", str(out), "--no-report",
                             "--jobs", str(jobs)], cwd=Path(__file__).resolve().parent.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        # more records than workers: some worker has finished a second trial, so the batch has had
        # its first answer in hand well before the Ctrl-C (a record alone can still be in flight)
        while len(list(out.glob("*/gaitid-run.json"))) <= jobs:
            assert proc.poll() is None and time.monotonic() < deadline, "not enough trials finished"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err[-2000:]
    summary = pd.read_csv(out / "batch_summary.csv", keep_default_na=False)
    done, not_run = summary[summary["status"] == "ok"], summary[summary["status"] == "not run"]
    assert len(done) >= 1 and len(not_run) >= 1 and len(done) + len(not_run) == n == len(summary)
    assert set(not_run["error"]) == {"not run: interrupted"}
    assert f"interrupted: {len(done)} done, {len(not_run)} not started; run again to continue" in err
    assert "Traceback" not in err
    assert not list(out.rglob(".gaitid-tmp-*"))  # the stopped workers removed their temporary files
    again = run_batch([folder], out, report=False)
    assert set(again["status"]) <= {"ok", "skipped"} and len(again) == n
    skipped, redone = set(again.loc[again["status"] == "skipped", "trial"]), set(again.loc[again["status"] == "ok", "trial"])
    assert set(done["trial"]) <= skipped and redone <= set(not_run["trial"])
    # a trial whose worker wrote its record as the Ctrl-C came is found done by the rerun; the
    # others were stopped before their record: processed again
    assert len(skipped - set(done["trial"])) <= jobs
