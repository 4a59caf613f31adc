"""The body mass (and the other anthropometry) is never confidently wrong: one plausibility check
for every source (a C3D's PROCESSING values, a .vsk, a table, the command line, a caller's dict),
and the mass used checked against what the force plates carry. Mutated copies of real trials
(written to tmp_path, one parameter changed, every other byte the original's) must each give an
error or a warning naming the problem; the clean real and synthetic trials none."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from gaitid import process
from gaitid.cli import main
from gaitid.core.errors import DataError, SettingsError
from gaitid.core.resources import sample_data_dir
from gaitid.core.settings import Settings
from gaitid.io.c3d import read_c3d
from gaitid.subject.bodymass import check_mass
from gaitid.subject.layers import SubjectOptions
from gaitid.subject.stage import gather_subject
from tests.c3d_mutations import RawC3D, mutated
from tests.conftest import realdata_path, synthetic_trial

WALK = sample_data_dir() / "walk_synthetic.c3d"
TRIALS = {"c3d-parser/MH0222_BP06.c3d": 81.0, "biomechzoo/HC030A05.c3d": 45.8}  # the README's stored masses


def body_mass(value: float):
    def edit(c: RawC3D) -> None:
        c.set_numbers("PROCESSING", "BODYMASS", [value], dims=c.param("PROCESSING", "BODYMASS").dims)
    return edit


def plate_gain(plate: int, factor: float):
    """Plate ``plate`` (1-based)'s analog channels scaled by ``factor`` (ANALOG:SCALE), as a wrong
    amplifier range or calibration would."""
    def edit(c: RawC3D) -> None:
        rows = c.param("FORCE_PLATFORM", "CHANNEL").dims[0]
        channels = c.numbers("FORCE_PLATFORM", "CHANNEL").astype(int).reshape(-1, rows)[plate - 1] - 1
        scale = c.numbers("ANALOG", "SCALE").copy()
        scale[channels] *= factor
        c.set_numbers("ANALOG", "SCALE", scale, dims=c.param("ANALOG", "SCALE").dims)
    return edit


def mass_warnings(result) -> list[str]:
    return [w for w in result.warnings if w.startswith("body mass") or "Bodymass" in w]


@pytest.mark.realdata
@pytest.mark.parametrize("value, why", [(5000.0, "not plausible (expected 2-400 kg)"),
                                        (0.0, "not a body mass (must be positive)"),
                                        (-70.0, "not a body mass (must be positive)"),
                                        (math.nan, "not a number")])
def test_a_stored_mass_that_cannot_be_right_is_refused_naming_the_file_value_and_option(tmp_path, value, why):
    source = realdata_path("c3d-parser/MH0222_BP06.c3d")
    path = mutated(source, tmp_path, "mass.c3d", body_mass(value))
    trial = read_c3d(path)
    assert trial.subject.mass is None and trial.subject.invalid["mass"].why == why  # recorded, not dropped
    with pytest.raises(DataError) as exc:
        process(trial)
    text = str(exc.value)
    assert f"C3D PROCESSING stores Bodymass = {value:g}" in text and why in text
    assert "mass.c3d" in text and "--mass KG" in text and "stores none" not in text
    # a typed mass overrides it, and the warning names the value ignored
    result = process(trial, subject=81.0)
    assert result.subject.subject.mass == 81.0
    assert any(f"Bodymass = {value:g}" in w and "ignored, mass 81 kg from caller used" in w for w in result.warnings)


@pytest.mark.realdata
@pytest.mark.slow
def test_the_command_line_refuses_an_implausible_stored_mass_and_takes_a_typed_one(tmp_path, capsys):
    path = mutated(realdata_path("c3d-parser/MH0222_BP06.c3d"), tmp_path, "walk.c3d", body_mass(5000.0))
    assert main(["run", str(path), "--no-report", "-o", str(tmp_path / "a")]) == 1
    err = capsys.readouterr().err
    assert "Bodymass = 5000 kg: not plausible (expected 2-400 kg)" in err and "--mass KG" in err
    assert main(["run", str(path), "--mass", "81", "--no-report", "-o", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "Bodymass = 5000 kg" in out and "ignored, mass 81 kg from command line used" in out


@pytest.mark.realdata
@pytest.mark.parametrize("relative", list(TRIALS))
@pytest.mark.parametrize("factor", [1.3, 0.7])
def test_a_mass_the_plates_contradict_is_a_warning_with_both_numbers(tmp_path, relative, factor):
    source = realdata_path(relative)
    clean = process(source)
    plates = clean.subject.mass_check.plates  # what the plates carry: the clean file's stored mass within 4 %
    assert plates == pytest.approx(TRIALS[relative], rel=0.04) and not mass_warnings(clean)
    result = process(mutated(source, tmp_path, "mass.c3d", body_mass(TRIALS[relative] * factor)))
    mass = TRIALS[relative] * factor
    (warning,) = mass_warnings(result)
    assert f"body mass {mass:.1f} kg from C3D PROCESSING, but the plates carry {plates:.1f} kg" in warning
    assert f"({100 * (plates / mass - 1):+.0f} %" in warning and "check the mass" in warning
    assert result.subject.mass_check.difference == pytest.approx(plates / mass - 1)
    # the tolerance is a setting: math.inf turns the warning off
    assert not mass_warnings(process(result.trial.path, mass_tolerance=math.inf))


@pytest.mark.realdata
@pytest.mark.parametrize("relative", list(TRIALS))
def test_a_plate_gain_off_by_1000_is_a_warning(tmp_path, relative):
    source = realdata_path(relative)
    clean = process(source)
    loaded = next(c.plates[0] for c in clean.foot_contacts if c.valid)  # a plate the subject stands on
    result = process(mutated(source, tmp_path, "gain.c3d", plate_gain(loaded, 1000.0)))
    (warning,) = mass_warnings(result)
    assert f"body mass {TRIALS[relative]:.1f} kg from C3D PROCESSING" in warning and "plate gains" in warning
    assert result.subject.mass_check.plates > 100 * TRIALS[relative]


def mutated_vsk(folder: Path, name: str, value: str) -> Path:
    text = realdata_path("pycgm-cadop/59993_Frame_SM.vsk").read_text()
    out = folder / "59993_Frame_SM.vsk"
    new, n = re.subn(rf'(NAME="{name}" PRIOR="[^"]*" QUANTITY="[^"]*" READONLY="0" REQUIRED="1" VALUE=")[^"]*"',
                     rf'\g<1>{value}"', text)
    assert n == 1
    out.write_text(new)
    return out


@pytest.mark.realdata
@pytest.mark.parametrize("value, why", [("5000", "not plausible (expected 2-400 kg)"), ("inf", "not a number"),
                                        ("0", "not a body mass (must be positive)")])
def test_a_vsk_mass_that_cannot_be_right_is_refused_or_overridden_never_dropped(tmp_path, value, why):
    vsk = mutated_vsk(tmp_path, "Bodymass", value)
    bare = realdata_path("btkdata/PlugInC3D.c3d")  # stores no subject data: the vsk is the only source
    trial = read_c3d(bare)
    given, notes = gather_subject(trial, SubjectOptions(file=vsk))
    with pytest.raises(DataError) as exc:
        process(trial, subject=given, warnings=notes)
    text = str(exc.value)
    assert f"--subject 59993_Frame_SM.vsk stores Bodymass = {value}" in text and why in text and "--mass KG" in text
    # a trial that stores a valid mass: that one is used, and the vsk's named as ignored
    stored = read_c3d(realdata_path("c3d-parser/MH0222_BP06.c3d"))
    given, notes = gather_subject(stored, SubjectOptions(file=vsk))
    assert given.subject.mass == 81.0
    assert [n for n in notes if "Bodymass" in n] == [
        f"--subject 59993_Frame_SM.vsk stores Bodymass = {value}{' kg' if value != 'inf' else ''}: {why}; ignored, "
        "mass 81 kg from C3D PROCESSING used"]


@pytest.mark.realdata
def test_a_zero_length_in_a_file_is_plugin_gaits_not_set_and_no_alarm():
    trial = read_c3d(realdata_path("btkdata/PiG_Calibration-FlatFoot-Full.c3d"))  # InterAsisDistance 0
    assert trial.subject.inter_asis_distance is None
    assert trial.subject.invalid["inter_asis_distance"].unset
    assert trial.subject.mass == 47.5 and "mass" not in trial.subject.invalid


def test_typed_values_go_through_the_same_ranges():
    for subject in (5000.0, 0.0, -70.0, {"mass": 0}, {"mass": -70}, {"mass": math.nan}, {"height": 1760},
                    {"leg_length": 9.2}, {"knee_width_mm": 5000}):
        with pytest.raises(SettingsError):
            process(WALK, subject=subject)
    with pytest.raises(SettingsError, match="mass_tolerance"):
        Settings(mass_tolerance=0)
    with pytest.raises(SettingsError, match="mass_tolerance"):
        Settings(mass_tolerance=float("nan"))


def test_when_the_plates_cannot_tell_the_check_says_so_and_warns_nothing():
    trial = read_c3d(WALK)  # walking, no quiet standing; without contacts no single support is tried
    check = check_mass(trial, 500.0, "test")
    assert check.plates is None and check.warning is None and math.isnan(check.difference)
    assert "cannot tell" in check.note


CLEAN = {  # every clean trial that processes, with the options it needs (benchmarks/compare_results.py)
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": "btkdata/PiG_Calibration-FlatFoot-Full.c3d"},
    "btkdata/PiG_Motion3_FF.c3d": {"static": "btkdata/PiG_Calibration3_FF.c3d"}, "btkdata/FunctionalWalk.c3d": {},
    "btkdata/PlugInC3D.c3d": {"subject": {"mass": 66.7, "leg_length": 0.9, "knee_width": 0.1, "ankle_width": 0.07}},
    "biomechzoo/HC030A05.c3d": {}, "c3d-parser/MH0222_BP06.c3d": {}, "python-gaitalytics/test_small.c3d": {},
    "opensim-models/subject01_walk1.trc": {"model": "isb-cast", "subject": 72.6,
                                           "static": "opensim-models/subject01_static.trc"},
}


@pytest.mark.realdata
@pytest.mark.parametrize("relative", list(CLEAN))
def test_every_clean_real_trial_agrees_with_its_plates_with_margin(relative):
    options = dict(CLEAN[relative])
    if "static" in options:
        options["static"] = realdata_path(options["static"])
    result = process(realdata_path(relative), **options)
    check = result.subject.mass_check
    assert check.method == "single support" and abs(check.difference) < 0.05  # docs/sessions.md's table
    assert abs(check.difference) < Settings().mass_tolerance / 3 and not mass_warnings(result)


@pytest.mark.parametrize("kind", ["walk", "treadmill", "stairs"])
def test_the_synthetic_trials_agree_with_their_plates(tmp_path, kind):
    path = synthetic_trial(kind, tmp_path)
    result = process(path)
    check = result.subject.mass_check
    assert check.mass == 72.0 and not mass_warnings(result)
    # the treadmill's whole strides carry the body weight (impulse-momentum): to 0.5 %; single support
    # approximates the centre of mass by the trunk markers: within 5 %
    assert (check.method, abs(check.difference) < 0.005) == ("treadmill strides", True) if kind == "treadmill" \
        else (check.method, abs(check.difference) < 0.05) == ("single support", True)

