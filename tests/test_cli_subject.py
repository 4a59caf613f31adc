"""Subject data and static trials from the command line: --subject (a real Nexus .vsk),
single-value options with units, errors that name the option to use, --static checked by
content and subject, batch --dry-run, and `gaitid models` listing subject parameters."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from gaitid.cli import main
from gaitid.core.resources import sample_data_dir
from tests.conftest import realdata_path

WALK = str(sample_data_dir() / "walk_synthetic.c3d")
STATIC = str(sample_data_dir() / "static_synthetic.c3d")

pytestmark = pytest.mark.slow


def subject_csv(folder, name) -> dict:
    t = pd.read_csv(folder / f"{name}_subject.csv", keep_default_na=False)
    return {r.parameter: (r.value, r.unit, r.source) for r in t.itertuples()}


@pytest.mark.realdata
def test_a_trial_without_anthropometry_runs_with_a_real_vsk(tmp_path, capsys):
    trial = realdata_path("btkdata/PlugInC3D.c3d")  # stores no mass, leg lengths or widths
    vsk = realdata_path("pycgm-cadop/59993_Frame_SM.vsk")
    code = main(["run", str(trial), "--subject", str(vsk), "--no-report", "-o", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0, out
    s = subject_csv(tmp_path, "PlugInC3D")
    src = "--subject 59993_Frame_SM.vsk"
    assert s["mass"] == (65.0, "kg", src)
    assert s["leg_length_left"] == (pytest.approx(0.8), "m", src)
    assert s["knee_width_right"] == (pytest.approx(0.12), "m", src)
    assert s["LAsisTrocanterDistance"][0] == pytest.approx(0.05448)  # an expression, evaluated
    assert "subject 42798: mass 65.0 kg (--subject 59993_Frame_SM.vsk)" in out
    # the vsk is another subject's: said, not hidden
    assert "named '59993_Frame_SM' but the trial's subject is '42798'" in out


@pytest.mark.realdata
def test_typed_values_win_over_the_file_and_say_so(tmp_path, capsys):
    trial = realdata_path("btkdata/PlugInC3D.c3d")
    vsk = realdata_path("pycgm-cadop/59993_Frame_SM.vsk")
    code = main(["run", str(trial), "--subject", str(vsk), "--leg-length", "960,955mm", "--mass", "66.7",
                 "--no-report", "-o", str(tmp_path)])
    assert code == 0, capsys.readouterr()
    s = subject_csv(tmp_path, "PlugInC3D")
    assert s["mass"] == (66.7, "kg", "command line")
    assert (s["leg_length_left"][0], s["leg_length_right"][0]) == pytest.approx((0.96, 0.955))
    assert s["ankle_width_left"][2] == "--subject 59993_Frame_SM.vsk"


@pytest.mark.realdata
def test_missing_anthropometry_and_markers_name_the_options(tmp_path, capsys):
    code = main(["run", str(realdata_path("btkdata/PlugInC3D.c3d")), "--mass", "66.7", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "--leg-length L,R --knee-width L,R --ankle-width L,R" in err and "subject={" not in err
    code = main(["run", str(realdata_path("ezc3d-testfiles/Qualisys.c3d")), "--mass", "70", "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "the trial's markers fit: isb, isb-cast, isb-davis (--model isb)" in err


@pytest.mark.realdata
def test_the_missing_mass_error_names_only_command_line_options(tmp_path, capsys):
    """PlugInC3D stores no body mass: the command line is told --mass KG / --mass plates, a script
    subject=KG / subject='plates' (the error carries both)."""
    from gaitid import process
    from gaitid.core.errors import DataError

    trial = realdata_path("btkdata/PlugInC3D.c3d")
    sizes = ["--leg-length", "900mm", "--knee-width", "100mm", "--ankle-width", "70mm"]
    assert main(["run", str(trial), "-o", str(tmp_path), "--no-report", *sizes]) == 1
    err = capsys.readouterr().err
    assert "body mass unknown: the file stores none; give it (--mass KG), or estimate it from the force plates " \
           "(--mass plates)" in err
    assert "subject=" not in err
    with pytest.raises(DataError, match=r"give it \(subject=KG; --mass KG on the command line\)"):
        process(trial, subject={"leg_length": 0.9, "knee_width": 0.1, "ankle_width": 0.07})


def test_length_options_take_units_and_refuse_implausible_values(tmp_path, capsys):
    assert main(["run", WALK, "-o", str(tmp_path), "--height", "1760"]) == 2
    assert "write the unit, e.g. 1760mm" in capsys.readouterr().err
    assert main(["run", WALK, "-o", str(tmp_path), "--knee-width", "105mm,2cm,3"]) == 2
    capsys.readouterr()
    # a value suggested in the unit where it is plausible: 168 is a height in cm, not in mm
    assert main(["run", WALK, "-o", str(tmp_path), "--height", "168"]) == 2
    assert "write the unit, e.g. 168cm" in capsys.readouterr().err
    assert main(["run", WALK, "-o", str(tmp_path), "--height", "168mm"]) == 2
    assert "height = 0.168 m is not plausible (expected 0.4-2.6 m); did you mean 168cm?" in capsys.readouterr().err
    assert main(["run", WALK, "-o", str(tmp_path), "--knee-width", "10"]) == 2
    assert "write the unit, e.g. 10cm" in capsys.readouterr().err
    assert main(["run", WALK, "-o", str(tmp_path), "--mass", "7000"]) == 2
    assert main(["validate", WALK, "--mass", "plates"]) == 2


def test_static_checked_by_content(tmp_path, capsys):
    walk2 = tmp_path / "another_walk.c3d"
    shutil.copy(WALK, walk2)
    code = main(["run", WALK, "--static", str(walk2), "--no-report", "-o", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 1
    assert "another_walk.c3d is a walking trial" in err and "walk_synthetic.c3d" in err and "--force" in err
    code = main(["run", WALK, "--static", str(walk2), "--force", "--no-report", "-o", str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert code == 0 and "another_walk.c3d used despite" in out
    code = main(["run", WALK, "--static", "auto", "--no-report", "-o", str(tmp_path / "c")])
    out = capsys.readouterr().out
    assert code == 0 and "--static auto: static_synthetic.c3d (same subject" in out


@pytest.mark.realdata
def test_another_subjects_static_is_refused(tmp_path, capsys):
    code = main(["run", str(realdata_path("btkdata/PiG_Motion3_FF.c3d")), "--static",
                 str(realdata_path("btkdata/PiG_Calibration-FlatFoot-Full.c3d")), "-o", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1 and "another subject (C3D subject 'BELT_C', this trial: C3D subject 'flatFoot')" in err


def test_models_lists_subject_parameters_and_their_options(capsys):
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "needs leg_length per side: --leg-length L,R, or LLegLength/RLegLength" in out
    assert "needs knee_width per side: --knee-width L,R" in out
    isb = out[out.index("isb:"):out.index("isb-cast:")]
    assert "needs" not in isb and "pelvis_width" in isb  # nothing required beyond the mass


@pytest.mark.realdata
def test_batch_dry_run_prints_pairing_and_subject_data(realdata, tmp_path, capsys):
    out_dir = tmp_path / "out"
    assert main(["batch", str(realdata / "btkdata"), "-o", str(out_dir), "--dry-run", "--leg-length", "0.9"]) == 0
    out = capsys.readouterr().out
    block = out[out.index("PiG_Motion3_FF.c3d"):out.index("PlugInC3D.c3d")]
    assert "static:  PiG_Calibration3_FF.c3d (same subject (C3D subject 'flatFoot'), same folder" in block
    assert "command line: leg length 900/900 mm (L/R)" in block
    assert "C3D PROCESSING: mass 74 kg, height 1760 mm, knee width 102/102 mm (L/R)" in block
    assert "6 trials to process (dry run: nothing processed)" in out
    assert not out_dir.exists()


@pytest.mark.realdata
def test_validate_takes_subject_options(capsys):
    trial = str(realdata_path("btkdata/PlugInC3D.c3d"))
    assert main(["validate", trial, "--json"]) == 0
    first = capsys.readouterr().out
    assert "needs the subject's leg_length" in first and "--leg-length" in first
    assert main(["validate", trial, "--json", "--leg-length", "960mm", "--knee-width", "108,112mm",
                 "--ankle-width", "82,83mm"]) == 0
    out = capsys.readouterr().out
    assert '"mode": "markers"' in out and '"rms"' in out and "needs the subject" not in out


@pytest.mark.realdata
def test_run_batch_validate_and_process_use_the_same_subject(tmp_path, capsys, monkeypatch):
    """One way in: for the same trial, options and subject file beside it, `run`, `batch`,
    `validate` and the API process the trial with the same merged subject and sources."""
    import gaitid.pipeline
    from gaitid import process, read_c3d
    from gaitid.subject.layers import SubjectOptions
    from gaitid.subject.merge import subject_table
    from gaitid.subject.stage import gather_subject
    from gaitid.validation.plugin_gait import validate_file

    folder = tmp_path / "session"
    folder.mkdir()
    walk = folder / "PiG_Motion3_FF.c3d"
    shutil.copy(realdata_path("btkdata/PiG_Motion3_FF.c3d"), walk)  # C3D subject 'flatFoot', 74 kg, no marker size
    (folder / "flatFoot.vsk").write_text('<KinematicModel><Parameters><StaticParameter NAME="Bodymass" VALUE="75"/>'
                                         '<StaticParameter NAME="MarkerDiameter" VALUE="14"/></Parameters>'
                                         '</KinematicModel>')

    def rows(table) -> dict:
        return {r.parameter: (r.value, r.source) for r in table.itertuples()}

    assert main(["run", str(walk), "--mass", "81", "--no-report", "-o", str(tmp_path / "run")]) == 0
    ran = subject_csv(tmp_path / "run", "PiG_Motion3_FF")
    assert main(["batch", str(folder), "--mass", "81", "--no-report", "-o", str(tmp_path / "batch")]) == 0
    batched = subject_csv(tmp_path / "batch" / "PiG_Motion3_FF", "PiG_Motion3_FF")
    trial = read_c3d(walk)
    given, notes = gather_subject(trial, SubjectOptions({"mass": 81.0}))
    api = rows(subject_table(process(trial, subject=given, warnings=notes).trial.subject))
    seen = []
    real_process = gaitid.pipeline.process
    monkeypatch.setattr(gaitid.pipeline, "process", lambda *a, **k: seen.append(real_process(*a, **k)) or seen[-1])
    assert validate_file(walk, mass=81.0, modes=("pig-segments",)) and seen
    validated = rows(subject_table(seen[-1].trial.subject))
    capsys.readouterr()

    assert ran["mass"] == (81.0, "kg", "command line")
    assert ran["height"] == (pytest.approx(1.76), "m", "C3D PROCESSING")
    assert ran["marker_diameter"] == (pytest.approx(0.014), "m", "flatFoot.vsk beside the trial")
    assert batched == ran
    assert api == validated == {k: (v, src) for k, (v, _, src) in ran.items()}
    assert ("subject values differ between sources: mass 81 kg (command line) used; flatFoot.vsk beside the trial "
            "says 75 kg") in notes


@pytest.mark.realdata
def test_subject_table_is_in_si_with_the_true_unit_of_every_row(tmp_path, capsys):
    """HC030A05 stores Plug-in Gait's upper-body values in mm (LShoulderOffset 35, LElbowWidth 84,
    LHandThickness 31), its rotations in rad and about 70 flags and marker offsets of unknown unit:
    the table gives the lengths in m, the angles in rad, and lists no value whose unit is unknown."""
    code = main(["run", str(realdata_path("biomechzoo/HC030A05.c3d")), "--no-report", "-o", str(tmp_path)])
    assert code == 0, capsys.readouterr()
    s = subject_csv(tmp_path, "HC030A05")
    c3d = "C3D PROCESSING"
    assert s["LShoulderOffset"] == (0.035, "m", c3d)
    assert s["LElbowWidth"] == (0.084, "m", c3d)
    assert s["RHandThickness"] == (0.031, "m", c3d)
    assert s["LAsisTrocanterDistance"][:2] == (pytest.approx(0.058344, abs=1e-6), "m")
    assert s["LFemurLength"][:2] == (pytest.approx(0.352333, abs=1e-6), "m")
    assert s["LStaticPlantFlex"][:2] == (pytest.approx(0.190487, abs=1e-6), "rad")
    assert s["HeadOffset"][:2] == (pytest.approx(0.009777, abs=1e-6), "rad")  # an angle, not a length
    assert s["leg_length_left"] == (0.83, "m", c3d)  # no float noise from the mm -> m conversion
    assert all(unit in ("kg", "m", "rad") for _, unit, _ in s.values())
    assert not any(name.startswith(("%", "$")) for name in s)  # Vicon's marker offsets and flags
    assert "UseFloorFF" not in s and "SpineOffset" not in s  # a flag; a value of unknown unit
    assert len(s) == 40


def test_the_subject_file_given_is_not_called_unused_beside_the_trial(tmp_path, capsys):
    """`--subject RoboSM.vsk` lying beside the trial is used as the --subject layer, and no note
    calls it "beside the trial not used"; another subject's file there is still named."""
    vsk = realdata_path("pycgm-cadop/59993_Frame_SM.vsk")
    shutil.copy(WALK, tmp_path / "walk.c3d")
    shutil.copy(vsk, tmp_path / "RoboSM.vsk")
    out = tmp_path / "out"
    code = main(["run", str(tmp_path / "walk.c3d"), "--subject", str(tmp_path / "RoboSM.vsk"), "--no-report",
                 "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "not used" not in text
    assert "--subject RoboSM.vsk is named 'RoboSM' but the trial's subject is 'synthetic'" in text
    assert subject_csv(out, "walk")["LShoulderOffset"] == (0.05, "m", "--subject RoboSM.vsk")
    shutil.copy(vsk, tmp_path / "Other.vsk")
    code = main(["run", str(tmp_path / "walk.c3d"), "--subject", str(tmp_path / "RoboSM.vsk"), "--no-report",
                 "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "subject file(s) Other.vsk beside the trial not used" in text
    assert "RoboSM.vsk beside" not in text
