"""The run / batch / models commands and their exit codes (0 ok, 1 failure, 2 usage)."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from gaitid.cli import main
from gaitid.core.resources import sample_data_dir

WALK = str(sample_data_dir() / "walk_synthetic.c3d")
STATIC = str(sample_data_dir() / "static_synthetic.c3d")


def test_run_writes_results_and_reports_them(tmp_path, capsys):
    code = main(["run", WALK, "--static", STATIC, "-o", str(tmp_path), "--no-report", "--suffix", "_gid",
                 "--convention", "external", "--plates", "1=Auto"])
    assert code == 0
    out = capsys.readouterr().out
    assert "walk_synthetic: 6 gait cycles (2 with kinetics)" in out
    frames = pd.read_csv(tmp_path / "walk_synthetic_frames.csv")
    assert set(frames["unit"][frames["variable"] == "AnkleMoment"]) == {"N.m/kg"}
    assert (tmp_path / "walk_synthetic_results.c3d").exists()


def test_run_into_a_folder_with_an_earlier_run_says_it_replaces_its_outputs(tmp_path, capsys):
    assert main(["run", WALK, "-o", str(tmp_path), "--no-report"]) == 0
    assert "replacing" not in capsys.readouterr().out
    assert main(["run", WALK, "-o", str(tmp_path), "--no-report"]) == 0  # not an error
    out = capsys.readouterr().out
    assert out.startswith(f"replacing the outputs of an earlier run in {tmp_path} (walk_synthetic_*)\n")


def test_usage_and_data_errors_have_distinct_exit_codes(tmp_path, capsys):
    assert main(["run", WALK]) == 2  # -o missing
    assert main([]) == 2
    assert main(["run", str(tmp_path / "absent.c3d"), "-o", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "absent.c3d" in err and "Traceback" not in err
    assert main(["run", WALK, "-o", str(tmp_path), "--plates", "1=Middle"]) == 1
    assert "Middle" in capsys.readouterr().err


def test_models_lists_required_markers(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "plugin-gait:" in out and "LASI RASI LTHI RTHI LKNE RKNE" in out and "LPSI+RPSI | SACR" in out


@pytest.mark.slow
def test_batch_exit_code_says_some_trials_failed(tmp_path, capsys):
    folder = tmp_path / "s"
    folder.mkdir()
    shutil.copy(WALK, folder / "walk.c3d")
    (folder / "bad.c3d").write_text("not a c3d")
    code = main(["batch", str(folder), "-o", str(tmp_path / "out"), "--no-report"])
    assert code == 1
    captured = capsys.readouterr()
    assert "2 trials: 1 ok, 0 up to date, 1 failed" in captured.out
    assert "bad.c3d" in captured.err


def test_mass_from_plates_is_opt_in_and_announced(tmp_path, capsys):
    from conftest import realdata_path

    qualisys = realdata_path("ezc3d-testfiles/Qualisys.c3d")  # stores no body mass
    assert main(["run", str(qualisys), "--model", "isb", "-o", str(tmp_path), "--no-report"]) == 1
    assert "--mass plates" in capsys.readouterr().err
    assert main(["run", str(qualisys), "--model", "isb", "--mass", "plates", "-o", str(tmp_path), "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "estimated from the force plates" in out
    assert main(["run", str(qualisys), "--mass", "heavy", "-o", str(tmp_path)]) == 2


@pytest.mark.slow
def test_validate_json_is_strict_json_with_the_documented_fields(capsys):
    import json

    from conftest import realdata_path

    path = realdata_path("c3d-parser/MH0222_BP06.c3d")
    assert main(["validate", str(path), "--json"]) == 0

    def reject(token):
        raise ValueError(f"non-standard JSON constant {token}")

    records = json.loads(capsys.readouterr().out, parse_constant=reject)
    sagittal = [r for r in records if r.get("quantity") == "moment" and r["plane"] == "sagittal"]
    assert {r["mode"] for r in sagittal} == {"pig-segments", "markers"}
    assert {"file", "side", "joint", "plane", "mode", "rms", "r", "n_cycles"} <= set(sagittal[0])
    assert all(r["rms"] < 0.02 and r["r"] > 0.99 for r in sagittal)


def test_run_lists_ten_rejected_contacts_and_counts_the_rest():
    """A long treadmill trial rejects hundreds of contacts (both feet on a belt): ``gaitid run`` lists
    the first ten with their reasons and counts the others, naming the table that has them all."""
    from gaitid.cli.run import rejected_contact_lines
    from gaitid.contacts import LISTED_REJECTED, FootContact

    def contact(k: int, valid: bool) -> FootContact:
        return FootContact((1,), "Left" if k % 2 else "Right", k * 0.5, k * 0.5 + 0.6, valid,
                           "" if valid else f"plate 1: both feet on plate 1 for 0.{k % 9 + 1}0 s")

    few = [contact(k, k % 3 == 0) for k in range(12)]  # 8 rejected
    assert rejected_contact_lines(few, "t") == [
        f"  contact not used for kinetics ({c.side}): {c.reason}" for c in few if not c.valid]
    many = [contact(k, k % 3 == 0) for k in range(300)]  # 200 rejected
    lines = rejected_contact_lines(many, "tm")
    rejected = [c for c in many if not c.valid]
    assert lines[:-1] == [f"  contact not used for kinetics ({c.side}): {c.reason}" for c in rejected[:LISTED_REJECTED]]
    assert lines[-1] == "  ... and 190 more contacts without a kinetic cycle (200 in all, each with its reason in " \
                        "tm_contacts.csv)"


def test_run_refuses_a_static_trial_unless_forced(tmp_path, capsys):
    """A static given to run was processed: exit 0, '0 gait cycles', an empty report. It is told
    from a walk by its content (markers still), as --static tells a walk from a static."""
    assert main(["run", STATIC, "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "static_synthetic.c3d" in err and "a static trial, not a walk (markers still" in err
    assert "--static STATIC" in err and "--force" in err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert main(["run", STATIC, "-o", str(tmp_path / "forced"), "--no-report", "--force"]) == 0
    assert "static_synthetic: 0 gait cycles" in capsys.readouterr().out
