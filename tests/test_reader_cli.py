"""``gaitid info`` and the CLI's exit codes (0 ok, 1 gaitid error without traceback, 2 usage)."""

from __future__ import annotations

import re

import pytest

from gaitid.cli import main
from tests.conftest import REAL_C3D, realdata_path


def test_info_prints_the_trial_summary(capsys):
    path = realdata_path("c3d-parser/MH0222_BP06.c3d")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "duration: 2.79 s; frames 398-676 (279) at 100 Hz; analog 1000 Hz, 24 channels" in out
    assert re.search(r"plate 2: type 2, peak Fz 877 N = 1\.10 BW", out)
    assert re.search(r"plate 3: type 2, peak Fz 899 N = 1\.13 BW", out)
    assert "events (12):" in out and re.search(r"4\.170 s\s+frame\s+418\s+Left\s+Foot Strike", out)
    assert "name MH0222_BP; mass 81 kg; height 1.79 m" in out
    assert "moments (8, N.m/kg):" in out and "LAnkleMoment" in out
    assert "virtual points (36)" in out and "markers (18," in out
    assert "Vicon Nexus 2.8.1.111866h" in out


def test_info_on_a_trial_without_plates_or_events(capsys):
    assert main(["info", str(realdata_path("btkdata/PiG_Calibration3_FF.c3d"))]) == 0
    out = capsys.readouterr().out
    assert "force plates (0):\n  none" in out and "events (0):\n  none" in out


def test_gaitid_error_is_exit_1_with_message_and_no_traceback(tmp_path, capsys):
    bad = tmp_path / "broken.c3d"
    bad.write_bytes(b"not a c3d file at all" * 40)
    assert main(["info", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "broken.c3d" in err and "not a C3D file" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv", [[], ["frobnicate"], ["info"], ["info", "a.c3d", "--cop-threshold", "ten"]])
def test_usage_errors_are_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "usage" in capsys.readouterr().err


def test_help_and_version_exit_0(capsys):
    assert main(["--help"]) == 0
    assert "info" in capsys.readouterr().out
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("gaitid ")


@pytest.mark.parametrize("path", REAL_C3D, ids=lambda p: p.name)
def test_info_on_every_real_file(path, capsys):
    from gaitid.io.c3d import read_c3d

    t = read_c3d(path)
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"({t.n_frames}) at {t.point_rate:g} Hz" in out
    assert f"force plates ({len(t.force_plates)}):" in out and f"events ({len(t.events)}):" in out
    assert f"model outputs ({len(t.model_outputs)}):" in out
