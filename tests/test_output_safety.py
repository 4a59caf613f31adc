"""Issue 18: outputs never replace an input, never leave a corrupt file under its final name, and
never crash on a bad output folder; long files, >255 points and the memory budget."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from gaitid.cli import main
from gaitid.core.errors import FileFormatError, GaitIDError, OutputError
from gaitid.io import atomic
from gaitid.io.atomic import TMP_PREFIX, atomic_path, clean_stale_temporaries, register_input
from gaitid.io.c3d import read_c3d, write_c3d
from tests.c3d_mutations import RawC3D
from tests.conftest import realdata_path


def _sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(autouse=True)
def _fresh_registry():
    atomic.forget_inputs()
    yield
    atomic.forget_inputs()


# ---- B1 full disk: a short write is caught before the rename


def _short_write(monkeypatch, keep_fraction=0.5):
    """ezc3d's write as on a full disk: it returns normally but the file is cut short."""
    import ezc3d

    real = ezc3d.c3d.write

    def write(self, path, *args, **kwargs):
        real(self, path, *args, **kwargs)
        size = os.path.getsize(path)
        with open(path, "r+b") as fh:
            fh.truncate(int(size * keep_fraction))

    monkeypatch.setattr(ezc3d.c3d, "write", write)


def test_short_c3d_write_is_an_error_and_leaves_the_old_file(tmp_path, monkeypatch):
    src = realdata_path("btkdata/PiG_Motion3_FF.c3d")
    trial = read_c3d(src)
    target = tmp_path / "out.c3d"
    target.write_bytes(b"previous results")
    _short_write(monkeypatch)
    with pytest.raises(OutputError, match="incomplete|truncated"):
        write_c3d(trial, target)
    assert target.read_bytes() == b"previous results"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.c3d"]  # no temporary debris


def test_gaitid_run_exits_1_on_a_short_results_c3d(tmp_path, monkeypatch, capsys):
    src = realdata_path("btkdata/PiG_Motion3_FF.c3d")
    _short_write(monkeypatch, 0.9)
    code = main(["run", str(src), "-o", str(tmp_path / "out"), "--no-report"])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "PiG_Motion3_FF_results.c3d" in err and "incomplete" in err
    assert not (tmp_path / "out" / "PiG_Motion3_FF_results.c3d").exists()


# ---- B2 inputs are never replaced


def test_opensim_run_into_the_input_folder_refuses_to_replace_the_grf_files(tmp_path, capsys):
    folder = realdata_path("opensim-models/subject01_walk1.trc").parent
    d = tmp_path / "D"
    d.mkdir()
    names = ["subject01_walk1.trc", "subject01_static.trc", "subject01_walk1_grf.mot", "subject01_walk1_grf.xml"]
    for name in names:
        shutil.copy(folder / name, d / name)
    before = {n: _sha(d / n) for n in names}
    code = main(["run", str(d / "subject01_walk1.trc"), "--static", str(d / "subject01_static.trc"),
                 "--opensim", "--mass", "72.6", "--model", "isb-cast", "--no-report", "-o", str(d)])
    err = capsys.readouterr().err
    assert code == 1
    assert "refusing to overwrite an input file" in err and "subject01_walk1_grf" in err
    assert {n: _sha(d / n) for n in names} == before


def test_a_static_trial_named_like_an_output_is_not_replaced(tmp_path, capsys):
    walk = realdata_path("btkdata/PiG_Motion3_FF.c3d")
    static = realdata_path("btkdata/PiG_Calibration3_FF.c3d")
    out = tmp_path / "out"
    out.mkdir()
    trap = out / "PiG_Motion3_FF_results.c3d"  # the static trial, stored where the results C3D goes
    shutil.copy(static, trap)
    code = main(["run", str(walk), "--static", str(trap), "--no-report", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "refusing to overwrite an input file" in err and "PiG_Motion3_FF_results.c3d" in err
    assert _sha(trap) == _sha(static)


def test_hard_link_to_an_input_is_refused(tmp_path):
    src = tmp_path / "trial.mot"
    src.write_text("data")
    register_input(src)
    link = tmp_path / "other_name.mot"
    os.link(src, link)
    with pytest.raises(OutputError, match="trial.mot"):
        with atomic_path(link) as tmp:
            tmp.write_text("x")
    assert src.read_text() == "data"


# ---- B4: -o naming a file or a folder that cannot be written


def test_output_folder_is_a_file(tmp_path, capsys):
    src = realdata_path("btkdata/PiG_Motion3_FF.c3d")
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    code = main(["run", str(src), "-o", str(not_a_folder), "--no-report"])
    err = capsys.readouterr().err
    assert code == 1 and "file.txt" in err and "Traceback" not in err


def test_read_only_output_folder(tmp_path, monkeypatch):
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)  # as in a read-only folder (root ignores file modes)
    with pytest.raises(OutputError, match="cannot write in the output folder.*Permission denied"):
        with atomic_path(tmp_path / "x.csv") as tmp:
            tmp.write_text("x")


# ---- B8: stale temporaries of a killed run are removed on the next run in the folder


def test_stale_temporaries_are_cleaned(tmp_path):
    import subprocess
    import sys

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    stale = tmp_path / f"{TMP_PREFIX}{dead_pid}-abc-walk_frames.csv"
    live = tmp_path / f"{TMP_PREFIX}{os.getpid()}-def-walk_curves.csv"
    old = tmp_path / f"{TMP_PREFIX}{os.getpid()}-ghi-walk_events.csv"
    foreign = tmp_path / ".walk_frames.csv.tmp"  # not gaitid's naming: never touched
    for p in (stale, live, old, foreign):
        p.write_text("partial")
    two_hours_ago = time.time() - 7200
    os.utime(old, (two_hours_ago, two_hours_ago))
    with atomic_path(tmp_path / "walk_parameters.csv") as tmp:
        tmp.write_text("x")
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == sorted([live.name, foreign.name, "walk_parameters.csv"])
    assert clean_stale_temporaries(tmp_path) == []


# ---- B3: more than 255 points


def test_results_c3d_of_a_file_with_more_than_255_points(tmp_path):
    from gaitid.pipeline import process

    src = realdata_path("biomechzoo/HC030A05.c3d")
    trial = read_c3d(src)
    n_in = len(trial.marker_labels) + len(trial.virtual_labels) + len(trial.model_outputs)
    assert n_in > 255
    result = process(src)
    out = result.to_c3d(tmp_path / "HC030A05_results.c3d", replace_outputs=True)
    back = read_c3d(out)
    assert not [lab for lab in back.marker_labels + back.virtual_labels if lab.startswith("POINT")]  # all named
    assert back.marker_labels == trial.marker_labels and back.virtual_labels == trial.virtual_labels
    ours = -result.curve("Left", "AnkleMoment")  # Plug-in Gait's external moments (the Result's: internal)
    ok = np.isfinite(ours).all(axis=1)
    assert ok.sum() > 50
    got = back.model_outputs["LAnkleMoment"].values  # gaitid's value replaced Vicon's in the copy (asked)
    np.testing.assert_allclose(got[ok], ours[ok], atol=1e-5)
    vicon = trial.model_outputs["LAnkleMoment"].values
    assert np.nanmax(np.abs(vicon[ok] - ours[ok])) > 1e-3  # so the check above can tell them apart
    np.testing.assert_allclose(back.markers, trial.markers, atol=1e-5)  # in m; float32 storage


def test_write_and_read_more_than_255_points_and_events(tmp_path):
    trial = read_c3d(realdata_path("btkdata/PiG_Motion3_FF.c3d"))
    n = trial.n_frames
    extra = {f"EXTRA{i}": ("ANGLES", np.full((n, 3), float(i))) for i in range(400)}
    from gaitid.core.trial import Event

    events = [Event("Foot Strike", "Left", 0.01 * k, k + 1, "plate") for k in range(300)]
    trial = dataclasses.replace(trial, events=events)
    out = write_c3d(trial, tmp_path / "many.c3d", extra_points=extra)
    back = read_c3d(out)
    assert [f"EXTRA{i}" for i in range(400)] == [k for k in back.model_outputs if k.startswith("EXTRA")]
    assert back.model_outputs["EXTRA399"].values[0, 0] == 399.0
    assert len(back.events) == 300 and back.events[-1].time == pytest.approx(2.99, abs=1e-6)


# ---- B5: more than 65535 frames


def test_long_file_is_written_and_read_in_full(tmp_path):
    trial = read_c3d(realdata_path("btkdata/PiG_Calibration3_FF.c3d"))
    reps = 70000 // trial.n_frames + 1
    trial = dataclasses.replace(trial, markers=np.tile(trial.markers, (reps, 1, 1))[:70000],
                                virtual_points=np.tile(trial.virtual_points, (reps, 1, 1))[:70000], model_outputs={})
    trial.markers[:, 0, 0] = np.arange(70000) * 1e-3
    out = write_c3d(trial, tmp_path / "long.c3d")
    back = read_c3d(out)
    assert back.n_frames == 70000
    np.testing.assert_allclose(back.markers[:, 0, 0], np.arange(70000) * 1e-3, atol=1e-4)


def test_header_65535_frames_with_long_frame_parameters(tmp_path):
    src = realdata_path("btkdata/PiG_Calibration3_FF.c3d")
    raw = RawC3D(src.read_bytes())
    fb = raw.frame_words * (4 if raw.is_float else 2)
    frames = raw.n_frames
    block = np.frombuffer(bytes(raw.data[: frames * fb]), np.uint8).reshape(frames, fb)
    raw.set_word(3, 1)
    raw.set_word(4, 65535)
    raw.set_numbers("TRIAL", "ACTUAL_START_FIELD", [1, 0], dtype=2)
    total = 200000
    raw.set_numbers("TRIAL", "ACTUAL_END_FIELD", [total & 0xFFFF, total >> 16], dtype=2)
    raw.set_numbers("POINT", "LONG_FRAMES", [total], dims=[])
    raw.data = bytearray(np.tile(block, (65535 // frames + 1, 1))[:65535].tobytes())  # only 65535 stored
    short = tmp_path / "short.c3d"
    short.write_bytes(raw.to_bytes())
    with pytest.raises(FileFormatError, match="200000 frames"):
        read_c3d(short)  # was: silently read as 65535 frames
    raw.data = bytearray(np.tile(block, (total // frames + 1, 1))[:total].tobytes())
    full = tmp_path / "full.c3d"
    full.write_bytes(raw.to_bytes())
    assert read_c3d(full).n_frames == total


# ---- B7: memory budget, checked before allocation


def test_header_promising_gigabytes_is_refused_before_allocation(tmp_path):
    raw = RawC3D(realdata_path("btkdata/PiG_Motion3_FF.c3d").read_bytes())
    raw.set_numbers("ANALOG", "RATE", [1e9], dims=[])
    raw.set_word(9, 60000)  # 60000 analog samples per frame ...
    raw.set_word(2, 0)  # ... of no channel in the header: inconsistent
    bad = tmp_path / "huge.c3d"
    bad.write_bytes(raw.to_bytes())
    raw2 = RawC3D(realdata_path("btkdata/PiG_Motion3_FF.c3d").read_bytes())
    raw2.set_word(4, 65535)  # 65535 frames x the real frame size: about 190 MB promised, 0.9 MB held
    bad2 = tmp_path / "huge2.c3d"
    bad2.write_bytes(raw2.to_bytes())
    for path in (bad, bad2):
        tracemalloc.start()
        with pytest.raises(GaitIDError):
            read_c3d(path)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 5e6  # refused from the header and parameters alone


def test_memory_budget_is_settable_and_names_the_numbers(tmp_path, monkeypatch):
    src = realdata_path("btkdata/PiG_Motion3_FF.c3d")
    monkeypatch.setenv("GAITID_MEMORY_BUDGET", "1M")
    tracemalloc.start()
    with pytest.raises(FileFormatError, match=r"MiB .*293 frames.*over the memory budget of 1 MiB.*GAITID_MEMORY_BUDGET"):
        read_c3d(src)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2e6
    monkeypatch.setenv("GAITID_MEMORY_BUDGET", "2G")
    assert read_c3d(src).n_frames == 293


def test_absurd_point_rate_is_refused(tmp_path):
    raw = RawC3D(realdata_path("btkdata/PiG_Motion3_FF.c3d").read_bytes())
    raw.set_numbers("POINT", "RATE", [1e20], dims=[])
    bad = tmp_path / "rate.c3d"
    bad.write_bytes(raw.to_bytes())
    with pytest.raises(FileFormatError, match="POINT:RATE is 1e\\+20 Hz"):
        read_c3d(bad)


def test_dollar_in_a_unit_string_does_not_reach_mathtext(tmp_path):
    from gaitid.pipeline import process

    raw = RawC3D(realdata_path("btkdata/PiG_Motion3_FF.c3d").read_bytes())
    raw.set_strings("POINT", "UNITS", [b"$\\notacommand{mm}$"])
    path = tmp_path / "dollar.c3d"
    path.write_bytes(raw.to_bytes())
    result = process(path)
    assert any("$\\notacommand{mm}$" in w for w in result.warnings)  # shown as text in the report
    pdf, html = result.report(tmp_path / "out")
    assert pdf.stat().st_size > 10000 and html.exists()


def test_point_lookup_follows_label_changes():
    trial = read_c3d(realdata_path("btkdata/PiG_Motion3_FF.c3d"))
    for i, lab in enumerate(trial.marker_labels):
        assert trial.point(lab) is not None and np.shares_memory(trial.point(lab), trial.markers)
        np.testing.assert_array_equal(trial.point(lab), trial.markers[:, i, :])
    for i, lab in enumerate(trial.virtual_labels):
        np.testing.assert_array_equal(trial.point(lab), trial.virtual_points[:, i, :])
    first = trial.marker_labels[0]
    trial.marker_labels[0] = "RENAMED"  # in place: the cached index must notice
    assert trial.has_points("RENAMED") and not trial.has_points(first)
    trial = dataclasses.replace(trial, marker_labels=["X"] + trial.marker_labels[1:])  # a new list
    np.testing.assert_array_equal(trial.point("X"), trial.markers[:, 0, :])
    with pytest.raises(GaitIDError, match="no point labelled 'RENAMED'"):
        trial.point("RENAMED")
