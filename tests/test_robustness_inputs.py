"""Inputs that are not what they claim: a FIFO or a device named .c3d, a loop of symbolic links, a
file for -o, a file named '.c3d', a bad --norms, subject and norms files built to exhaust the
parsers (deep nesting, huge expressions and chains, strings for numbers, sizes far beyond any real
file). Each gives a gaitid error naming the file (exit 1, no traceback), never a hang, a raw
exception or a run that writes its outputs and then fails."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from gaitid.cli import main
from gaitid.core.errors import FileFormatError

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "walk_synthetic.c3d"


def _open_writer(fifo: Path) -> None:
    try:  # fails (ENXIO) unless a reader is blocked opening the FIFO, which this then releases
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:
        pass


def _no_traceback(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


@pytest.mark.timeout(30)
@pytest.mark.parametrize("command", [["info", "{fifo}"], ["run", "{fifo}", "-o", "{out}"],
                                     ["run", "{walk}", "-o", "{out}", "--static", "{fifo}"]])
def test_a_fifo_named_c3d_is_refused_without_being_opened(tmp_path, capsys, command):
    fifo = tmp_path / "pipe.c3d"
    os.mkfifo(fifo)
    walk = tmp_path / "walk.c3d"
    shutil.copy(SAMPLE, walk)
    argv = [a.format(fifo=fifo, out=tmp_path / "out", walk=walk) for a in command]
    unblock = threading.Timer(5.0, _open_writer, (fifo,))  # a reader blocked in open() fails instead of hanging
    unblock.start()
    try:
        assert main(argv) == 1  # (before: blocked forever in open())
    finally:
        unblock.cancel()
    err = _no_traceback(capsys)
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.timeout(30)
def test_a_device_is_not_called_an_empty_file(capsys):
    assert main(["info", "/dev/zero"]) == 1
    err = _no_traceback(capsys)
    assert "/dev/zero: is a device, not a regular file" in err and "empty" not in err


def test_a_symbolic_link_loop_is_named(tmp_path, capsys):
    a, b = tmp_path / "a.c3d", tmp_path / "b.c3d"
    a.symlink_to(b)
    b.symlink_to(a)
    assert main(["run", str(a), "-o", str(tmp_path / "out")]) == 1  # (before: RuntimeError in register_input)
    assert f"{a}: is a loop of symbolic links" in _no_traceback(capsys)
    walk = tmp_path / "walk.c3d"
    shutil.copy(SAMPLE, walk)
    n = tmp_path / "n.toml"
    n.symlink_to(n)
    for option in ("--norms", "--subject"):  # (before: RuntimeError in read_norms_setting for --norms)
        assert main(["run", str(walk), "-o", str(tmp_path / "out"), option, str(n)]) == 1
        assert f"{n}: is a loop of symbolic links" in _no_traceback(capsys)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["batch", "run"])
def test_o_naming_a_file_is_a_settings_error_before_anything_runs(tmp_path, capsys, command):
    walk = tmp_path / "walk.c3d"
    shutil.copy(SAMPLE, walk)
    existing = tmp_path / "existing"
    existing.write_text("mine")
    for out, why in ((existing, "not a folder;"), (existing / "sub", f"not a folder ({existing} is a file);")):
        assert main([command, str(walk), "-o", str(out), "--no-report"]) == 1  # (before: FileExistsError, NotADirectoryError)
        assert f"-o {out}: {why}" in _no_traceback(capsys)
    assert existing.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["existing", "walk.c3d"]


def test_a_bad_norms_file_fails_before_any_output_is_written(tmp_path, capsys):
    walk = tmp_path / "walk.c3d"
    shutil.copy(SAMPLE, walk)
    bad = tmp_path / "bad.toml"
    bad.write_text("garbage\n")
    out = tmp_path / "out"
    assert main(["run", str(walk), "-o", str(out), "--norms", str(bad), "--no-report"]) == 1
    assert f"{bad}: not a readable TOML file" in _no_traceback(capsys)
    assert not out.exists()  # (before: every output written, then exit 1)


def test_a_file_named_dot_c3d_gets_all_its_outputs(tmp_path, capsys):
    trial = tmp_path / ".c3d"
    shutil.copy(SAMPLE, trial)
    out = tmp_path / "out"
    assert main(["run", str(trial), "-o", str(out), "--no-report", "--mass", "70"]) == 0  # (before: rc 1, 8 of 9 written)
    _no_traceback(capsys)
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(f".c3d_{k}" for k in ("contacts.csv", "curves.csv", "curves_summary.csv", "events.csv",
                                                  "frames.csv", "parameters.csv", "parameters_summary.csv",
                                                  "results.c3d", "run.json", "subject.csv"))


# ---- subject files


def _vsk(params: str) -> str:
    return (f'<?xml version="1.0"?><KinematicModel><Parameters>{params}'
            '<Parameter NAME="Bodymass" VALUE="70" QUANTITY="Mass"/></Parameters></KinematicModel>')


@pytest.mark.timeout(60)
def test_a_vsk_expression_of_60000_terms_keeps_the_stored_value(tmp_path):
    from gaitid.subject.readers import evaluate_expression, vsk_parameters

    terms = "+".join(["1"] * 60_000)
    with pytest.raises(ValueError, match="beyond the 2000"):
        evaluate_expression(terms, {}.__getitem__)
    nested = "+".join(["1"] * 900)  # under the length limit, deeper than the tree walk's recursion
    try:
        assert evaluate_expression(nested, {}.__getitem__) == 900.0
    except ValueError as exc:  # (before: RecursionError)
        assert "nested too deeply" in str(exc)
    f = tmp_path / "s.vsk"
    f.write_text(_vsk(f'<Parameter NAME="LLegLength" VALUE="900" EXPRESSION="{terms}"/>'))
    assert vsk_parameters(f) == {"LLegLength": 900.0, "Bodymass": 70.0}


@pytest.mark.timeout(60)
def test_a_long_chain_of_vsk_expressions_is_refused(tmp_path):
    from gaitid.subject.readers import MAX_EXPRESSION_CHAIN, vsk_parameters

    def chain(n: int) -> str:
        return "".join(f'<Parameter NAME="P{k}" VALUE="0" EXPRESSION="P{k + 1} + 1"/>' for k in range(n)) + \
            f'<Parameter NAME="P{n}" VALUE="5"/>'

    ok = tmp_path / "ok.vsk"
    ok.write_text(_vsk(chain(MAX_EXPRESSION_CHAIN - 1)))
    assert vsk_parameters(ok)["P0"] == 5.0 + MAX_EXPRESSION_CHAIN - 1
    long = tmp_path / "long.vsk"
    long.write_text(_vsk(chain(20_000)))  # (before: RecursionError)
    with pytest.raises(FileFormatError, match=f"chain of more than {MAX_EXPRESSION_CHAIN} expressions") as err:
        vsk_parameters(long)
    assert err.value.path == long


@pytest.mark.timeout(60)
@pytest.mark.parametrize("suffix, text", [(".json", "[" * 100_000 + "]" * 100_000),
                                          (".toml", "a = " + "[" * 50_000 + "]" * 50_000),
                                          (".vsk", "<a>" * 50_000 + "</a>" * 50_000)])
def test_deeply_nested_subject_files_are_format_errors(tmp_path, suffix, text):
    from gaitid.subject.readers import read_subjects

    f = tmp_path / f"subject{suffix}"
    f.write_text(text)
    with pytest.raises(FileFormatError) as err:  # (before: RecursionError for .json and .toml)
        read_subjects(f)
    assert err.value.path == f


def test_a_subject_file_beyond_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    from gaitid.subject import readers

    f = tmp_path / "lab.csv"
    f.write_text("name,mass,height\nann,60,1.65\n")
    assert readers.read_subjects(f)["ann"].mass == 60.0
    monkeypatch.setattr(readers, "MAX_SUBJECT_FILE_BYTES", f.stat().st_size - 1)
    with pytest.raises(FileFormatError, match="subject file of 0.0 MB, beyond the") as err:
        readers.read_subjects(f)
    assert err.value.path == f


# ---- norms files


@pytest.mark.timeout(60)
@pytest.mark.parametrize("body, message", [
    ('[[curves]]\nvariable = "KneeAngles"\ncomponent = "X"\npercent = [0, 100]\nmean = ["a", "b"]\nsd = [1, 1]\n',
     "[[curves]] #1 (KneeAngles X): mean must be a list of numbers"),
    ('[[curves]]\nvariable = "KneeAngles"\npercent = [0, 100]\nmean = [1, 2]\nsd = [1, 1]\n'
     '[[parameters]]\nparameter = "speed"\nmean = "fast"\n', "a value of the wrong type"),
    ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", "nested too deeply"),
])
def test_malformed_norms_files_are_format_errors(tmp_path, body, message):
    from gaitid.norms.files import read_norms

    f = tmp_path / "norms.toml"
    f.write_text('[meta]\nformat = "gaitid-norms"\nversion = 1\n' + body if "x = " not in body else body)
    with pytest.raises(FileFormatError) as err:  # (before: ValueError, RecursionError)
        read_norms(f)
    assert message in str(err.value) and err.value.path == f


def test_a_norms_file_beyond_the_size_limit_is_refused_unread(tmp_path, monkeypatch):
    from gaitid.norms import files

    f = tmp_path / "norms.csv"
    f.write_text("variable,component,percent,mean,sd\nKneeAngles,X,0,1,1\nKneeAngles,X,100,2,1\n")
    assert len(files.read_norms(f).curves) == 2
    monkeypatch.setattr(files, "MAX_NORMS_FILE_BYTES", 10)
    with pytest.raises(FileFormatError, match="normative data file of 0.0 MB, beyond the"):
        files.read_norms(f)


# ---- C3D content: control characters, event times, rates; long names; contacts


def _mutated(tmp_path: Path, name: str, edit) -> Path:
    from tests.c3d_mutations import RawC3D

    c = RawC3D(SAMPLE.read_bytes())
    edit(c)
    out = tmp_path / name
    out.write_bytes(c.to_bytes())
    return out


def _escapes(c) -> None:
    c.set_strings("SUBJECTS", "NAMES", [b"\x1b[31mAnn\x1b[0m\x00\x07"])
    labels = c.strings("POINT", "LABELS")
    labels[0] = b"L\x1bAS\x00I\x00\x00"  # what remains, LASI, is a marker the model needs
    c.set_strings("POINT", "LABELS", labels)
    c.set_strings("MANUFACTURER", "SOFTWARE", [b"Nexus\x9b2J\x00\x00"])


def test_control_characters_of_c3d_strings_are_removed_at_the_reader(tmp_path, capsys):
    from gaitid.io.c3d import read_c3d

    path = _mutated(tmp_path, "esc.c3d", _escapes)
    trial = read_c3d(path)
    assert trial.subject.name == "[31mAnn[0m"  # ESC, NUL and BEL removed; the printable rest kept
    assert trial.marker_labels[0] == "LASI" and "RASI" in trial.marker_labels
    assert trial.software.startswith("Nexus2J")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "[31mAnn[0m" in out and not any(ch in out for ch in "\x1b\x00\x07\x9b")  # (before: printed raw)
    outdir = tmp_path / "out"
    assert main(["run", str(path), "-o", str(outdir), "--mass", "70"]) == 0
    run_out = capsys.readouterr().out
    assert "Ann" in run_out and not any(ch in run_out for ch in "\x1b\x00\x07\x9b")
    texts = {p.name: p.read_bytes() for p in outdir.iterdir() if p.suffix in (".csv", ".html", ".json")}
    assert "esc_frames.csv" in texts and b"[31mAnn[0m" in texts["esc_report.html"]
    assert read_c3d(outdir / "esc_results.c3d").subject.name == "[31mAnn[0m"
    for name, raw in texts.items():
        assert b"\x00" not in raw and b"\x1b" not in raw, name  # (before: NUL in the subject table and report)


def test_an_event_time_of_1e20_minutes_is_left_out_with_a_warning(tmp_path, capsys):
    import numpy as np

    from gaitid.io.c3d import read_c3d

    def far_event(c):
        t = c.numbers("EVENT", "TIMES").reshape(2, -1, order="F").copy()
        t[0, 0] = 1e20
        c.set_numbers("EVENT", "TIMES", t.ravel(order="F"), dims=[2, t.shape[1]])

    clean = read_c3d(SAMPLE)
    path = _mutated(tmp_path, "far.c3d", far_event)
    trial = read_c3d(path)
    assert len(trial.events) == len(clean.events) - 1 and all(abs(e.time) < 1e3 for e in trial.events)
    assert any("EVENT:TIMES" in w and "6e+21 s lies beyond any recording" in w for w in trial.warnings)
    assert not any("EVENT:TIMES" in w for w in clean.warnings)
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out), "--mass", "70", "--parquet", "--no-report"]) == 0  # (before: OverflowError)
    assert "6e+21 s lies beyond any recording" in capsys.readouterr().out
    events = __import__("pandas").read_parquet(out / "far_events.parquet")
    assert np.isfinite(events.select_dtypes("number").to_numpy(float)).all()


def test_a_1_hz_point_rate_error_names_the_file_and_the_option(tmp_path, capsys):
    path = _mutated(tmp_path, "slow.c3d", lambda c: c.set_numbers("POINT", "RATE", [1.0], dims=[]))
    assert main(["run", str(path), "-o", str(tmp_path / "out"), "--mass", "70"]) == 1
    err = _no_traceback(capsys)
    assert f"{path}: the markers' rate 1 Hz cannot carry the low-pass cutoff" in err  # (before: no file named)
    assert "Nyquist frequency 0.5 Hz" in err and "POINT:RATE" in err and "--cutoff HZ" in err


@pytest.mark.timeout(120)
def test_stems_near_255_bytes_get_short_unique_output_names(tmp_path, capsys):
    from gaitid.io.atomic import MAX_OUTPUT_STEM_BYTES, output_stem

    assert output_stem("walk") == "walk"
    a, b = "é" * 120 + "a", "é" * 120 + "b"  # 241 bytes each, sharing their first 240
    assert output_stem(a) != output_stem(b) and output_stem(a).startswith("é" * 69)
    assert all(len(output_stem(s).encode()) <= MAX_OUTPUT_STEM_BYTES for s in (a, b, "x" * 250))
    src = tmp_path / "src"
    src.mkdir()
    for s in ("x" * 246 + "1", "x" * 246 + "2"):
        shutil.copy(SAMPLE, src / f"{s}.c3d")
    out = tmp_path / "out"
    for trial in sorted(src.iterdir()):  # (before: 'File name too long')
        assert main(["run", str(trial), "-o", str(out), "--mass", "70", "--no-report", "--parquet"]) == 0
    names = [p.name for p in out.iterdir()]
    assert len(names) == 2 * 17 and max(len(n.encode()) for n in names) <= 255
    stems = {n.split("_")[0] for n in names}
    assert stems == {output_stem("x" * 246 + "1"), output_stem("x" * 246 + "2")}
    assert main(["batch", str(src), "-o", str(tmp_path / "batch"), "--mass", "70", "--no-report"]) == 0
    folders = sorted(p.name for p in (tmp_path / "batch").iterdir() if p.is_dir())
    assert folders == sorted(stems)
    assert (tmp_path / "batch" / folders[0] / f"{folders[0]}_curves.csv").is_file()


def test_a_contact_invalid_on_some_frames_is_reported_as_such(tmp_path, capsys):
    """A contact whose plate lost 5 frames of samples keeps, as docs/contacts.md says, the
    kinetics of its measured frames in the per-frame table: the run no longer calls it
    'not used for kinetics', but says it gives no kinetic cycle and where its frames are."""
    import numpy as np
    import pandas as pd

    def nan_frames(c):  # plate 1's six channels NaN on frames 136-140 (the right foot's stance, 1.10-1.70 s)
        n, fw = c.n_frames, c.frame_words
        vals = np.frombuffer(bytes(c.data[: n * fw * 4]), "<f4").reshape(n, fw).copy()
        analog = vals[:, 4 * c.word(1):].reshape(n, -1, 12)
        analog[135:140, :, 0:6] = np.nan
        vals[:, 4 * c.word(1):] = analog.reshape(n, -1)
        c.data = bytearray(vals.tobytes()) + c.data[n * fw * 4:]

    path = _mutated(tmp_path, "gap.c3d", nan_frames)
    out = tmp_path / "out"
    assert main(["run", str(path), "-o", str(out), "--mass", "70", "--no-report"]) == 0
    stdout = capsys.readouterr().out
    assert ("  contact without a kinetic cycle (Right): plate 1: plate 1 force missing (NaN) for 6 frames; its "
            "other frames' kinetics are in gap_frames.csv") in stdout
    assert "not used for kinetics" not in stdout  # (before: said so, while frames.csv carried them)
    frames = pd.read_csv(out / "gap_frames.csv")
    knee = frames[(frames.side == "Right") & (frames.variable == "KneeMoment") & (frames.component == "X")
                  & frames.time_s.between(1.11, 1.69)]
    finite = np.isfinite(knee.value.to_numpy())
    assert 40 < finite.sum() < len(knee) and not finite[knee.frame.between(136, 140).to_numpy()].any()


@pytest.mark.timeout(30)
@pytest.mark.parametrize("name", ["walk.trc", "walk_grf.mot", "walk_grf.xml"])
def test_a_fifo_named_as_an_opensim_file_is_refused_without_being_opened(tmp_path, name):
    """The OpenSim readers (TRC markers, GRF storage, ExternalLoads XML) check the file before
    opening it, as the C3D reader does."""
    from gaitid.io.mot import parse_xml, read_storage
    from gaitid.io.trc import read_trc

    fifo = tmp_path / name
    os.mkfifo(fifo)
    reader = {".trc": read_trc, ".mot": read_storage, ".xml": parse_xml}[fifo.suffix]
    unblock = threading.Timer(5.0, _open_writer, (fifo,))
    unblock.start()
    try:
        with pytest.raises(FileFormatError, match="is a FIFO .named pipe., not a regular file"):
            reader(fifo)  # (before: blocked in open() until the timer released it, then another error)
    finally:
        unblock.cancel()
