"""Static trials recognised by content, subjects, and pairing that never takes another
subject's static: misleading names, two subjects in one folder, equal file times, ties,
sibling sessions, Vicon subject files and patient folders, and every real trial."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from gaitid.batch import describe_plan, plan
from gaitid.batch.pairing import pair_statics, session_key
from gaitid.batch.session import classify_trial, name_words, scan_trial
from gaitid.core.resources import sample_data_dir
from gaitid.core.trial import Subject
from gaitid.io.c3d import read_c3d, write_c3d
from gaitid.subject.layers import subject_layers
from gaitid.subject.merge import merge_subject
from tests.conftest import REAL_C3D, realdata_path

WALK = sample_data_dir() / "walk_synthetic.c3d"
STATIC = sample_data_dir() / "static_synthetic.c3d"
T0 = 1_700_000_000  # one modification time for every file: time must never decide


def person(name: str | None, mass: float | None, leg: float | None = None) -> Subject:
    if mass is None:
        return Subject(name=name)
    leg = leg if leg is not None else 0.5 * mass / 70 + 0.45
    return Subject(name=name, mass=mass, height=1.75, leg_length_left=leg, leg_length_right=leg,
                   knee_width_left=0.105, knee_width_right=0.105, ankle_width_left=0.07, ankle_width_right=0.07)


def write(src: Path, dst: Path, subject: Subject) -> Path:
    """A copy of a sample trial as another person (SUBJECTS:NAMES and PROCESSING replaced)."""
    trial = read_c3d(src)
    trial = dataclasses.replace(trial, subject=subject)
    dst.parent.mkdir(parents=True, exist_ok=True)
    write_c3d(trial, dst)
    os.utime(dst, (T0, T0))
    return dst


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lab")
    anna, pascal = person("Anna", 60.0), person("Pascal", 80.0)
    # two subjects in one folder, names that fooled the old 'cal'/'static' substring rule
    write(WALK, root / "mixed" / "ClinicalWalk01.c3d", anna)
    write(WALK, root / "mixed" / "Pascal_walk01.c3d", pascal)
    write(STATIC, root / "mixed" / "Anna_standing.c3d", anna)
    write(STATIC, root / "mixed" / "Pascal_cal.c3d", pascal)
    # no subject names and no anthropometry anywhere: only the names can tell
    write(WALK, root / "unnamed" / "SubjA_walk.c3d", person(None, None))
    write(WALK, root / "unnamed" / "SubjB_walk.c3d", person(None, None))
    write(STATIC, root / "unnamed" / "SubjA_static.c3d", person(None, None))
    write(STATIC, root / "unnamed" / "SubjB_static.c3d", person(None, None))
    # a walk whose only static in the folder is another subject's (anthropometry differs)
    write(WALK, root / "alone" / "FunctionalWalk.c3d", person(None, 66.0, leg=0.885))
    write(STATIC, root / "alone" / "Calibration.c3d", person(None, 47.5, leg=0.80))
    # two statics of one subject: a tie, reported
    write(WALK, root / "tie" / "walk.c3d", anna)
    write(STATIC, root / "tie" / "first.c3d", anna)
    write(STATIC, root / "tie" / "second.c3d", anna)
    # two sessions of one patient: the static of the other session is never used
    write(WALK, root / "P01" / "2023" / "walk.c3d", anna)
    write(STATIC, root / "P01" / "2024" / "static.c3d", anna)
    # a Vicon session: subject file beside unnamed trials
    write(WALK, root / "nexus" / "Trial03.c3d", person(None, None))
    write(STATIC, root / "nexus" / "Trial01.c3d", person(None, None))
    (root / "nexus" / "Carl.mp").write_text("$Bodymass = 71\n$Height = 1780\n$LeftLegLength = 910\n"
                                            "$RightLegLength = 905\n$LeftKneeWidth = 104\n$RightKneeWidth = 104\n"
                                            "$LeftAnkleWidth = 71\n$RightAnkleWidth = 70\n")
    # a Vicon database: patient folder above the session folder
    (root / "db" / "Dora").mkdir(parents=True)
    (root / "db" / "Dora" / "Dora.Patient.enf").write_text("[SUBJECT_INFO]\n")
    write(WALK, root / "db" / "Dora" / "Session 1" / "Walk 1.c3d", person(None, None))
    write(STATIC, root / "db" / "Dora" / "Session 1" / "Static 1.c3d", person(None, None))
    for p in root.rglob("*"):
        os.utime(p, (T0, T0))
    return root


def pairing(lab: Path, folder: str) -> dict[str, str | None]:
    jobs = plan([lab / folder], lab.parent / f"out-{folder}", cache=False)
    return {j.path.name: (j.static.name if j.static else None) for j in jobs}


def test_words_not_substrings():
    assert name_words("ClinicalWalk01") == ["clinical", "walk", "01"]
    assert name_words("PiG_Calibration3_FF") == ["pi", "g", "calibration", "3", "ff"]


def test_synthetic_static_and_walk_by_content():
    assert classify_trial(read_c3d(STATIC))[0] == "static"
    kind, reasons = classify_trial(read_c3d(WALK))
    assert kind == "walking" and "plate loads come and go" in "; ".join(reasons)


@pytest.mark.realdata
@pytest.mark.parametrize("path", REAL_C3D, ids=[p.name for p in REAL_C3D])
def test_every_real_trial_is_classified_by_content(path):
    kind, reasons = classify_trial(read_c3d(path))
    expected = "static" if path.name.startswith("PiG_Calibration") else "walking"
    assert kind == expected, reasons


@pytest.mark.realdata
def test_opensim_static_and_treadmill_walk():
    from gaitid.pipeline import load_trial

    assert classify_trial(load_trial(realdata_path("opensim-models/subject01_static.trc")))[0] == "static"
    kind, reasons = classify_trial(load_trial(realdata_path("opensim-models/subject01_walk1.trc")))
    assert kind == "walking" and "in place" in reasons[0]  # the pelvis barely travels: steps all the same


def test_two_subjects_in_one_folder_with_misleading_names(lab):
    assert pairing(lab, "mixed") == {"ClinicalWalk01.c3d": "Anna_standing.c3d", "Pascal_walk01.c3d": "Pascal_cal.c3d"}
    jobs = plan([lab / "mixed"], lab.parent / "out-mixed2", cache=False)
    assert "same subject (C3D subject 'Anna')" in jobs[0].pairing and "another subject" in jobs[0].pairing
    # sessions by subject, not by folder
    assert sorted(j.session_label for j in jobs) == ["Anna_mixed", "Pascal_mixed"]


def test_unnamed_trials_are_paired_by_name_words(lab):
    assert pairing(lab, "unnamed") == {"SubjA_walk.c3d": "SubjA_static.c3d", "SubjB_walk.c3d": "SubjB_static.c3d"}


def test_another_subjects_static_is_refused_with_the_reason(lab):
    jobs = plan([lab / "alone"], lab.parent / "out-alone", cache=False)
    assert [j.static for j in jobs] == [None]
    assert "another subject's anthropometry (mass 66 vs 47.5 kg)" in jobs[0].pairing
    assert any(n.startswith("no static trial:") for n in jobs[0].notes)  # goes to the report's warnings


def test_a_tie_is_reported_never_broken_by_file_time(lab):
    infos = [scan_trial(p) for p in sorted((lab / "tie").glob("*.c3d"))]
    pairs = pair_statics([i for i in infos if i.kind == "walking"], [i for i in infos if i.kind == "static"])
    (p,) = pairs.values()
    assert p.static is None and "tie between first.c3d, second.c3d" in p.reason
    assert [c.name for c in p.candidates] == ["first.c3d", "second.c3d"]
    # the lab resolves it with a pairing table
    table = lab.parent / "pairs.csv"
    table.write_text(f"trial,static\nwalk.c3d,{lab / 'tie' / 'second.c3d'}\n")
    jobs = plan([lab / "tie"], lab.parent / "out-tie", pairing=table, cache=False)
    assert jobs[0].static.name == "second.c3d" and jobs[0].pairing == "named in the pairing table"


def test_a_pairing_table_cannot_name_a_walking_trial_or_another_subject(lab):
    table = lab.parent / "bad-pairs.csv"
    table.write_text(f"path,static\n{lab / 'mixed' / 'ClinicalWalk01.c3d'},{lab / 'mixed' / 'Pascal_walk01.c3d'}\n")
    jobs = plan([lab / "mixed"], lab.parent / "out-bad", pairing=table, cache=False)
    job = next(j for j in jobs if j.path.name == "ClinicalWalk01.c3d")
    assert job.static is None
    assert "Pascal_walk01.c3d is a walking trial" in job.pairing and "another subject" in job.pairing


def test_another_sessions_static_is_not_used(lab):
    assert pairing(lab, "P01") == {"walk.c3d": None}


def test_vicon_subject_file_names_the_subject_and_fills_its_data(lab):
    jobs = plan([lab / "nexus"], lab.parent / "out-nexus", cache=False)
    (job,) = jobs
    assert job.static.name == "Trial01.c3d" and "subject file Carl in the folder" in job.pairing
    trial = read_c3d(job.path)
    layers, notes = subject_layers(trial.subject, job.info.path)
    merged, prov = merge_subject(layers)
    assert (merged.mass, merged.leg_length_right, merged.ankle_width_left) == pytest.approx((71.0, 0.905, 0.071))
    assert prov["mass"] == "Carl.mp beside the trial" and notes == []
    text = describe_plan(jobs)
    assert "Carl.mp beside the trial: mass 71 kg, height 1780 mm, leg length 910/905 mm (L/R)" in text


def test_vicon_patient_folder_is_the_subject(lab):
    jobs = plan([lab / "db"], lab.parent / "out-db", cache=False)
    (job,) = jobs
    assert job.static.name == "Static 1.c3d" and "Vicon patient folder 'Dora'" in job.pairing
    assert session_key(job.info, None)[1] == "Dora_Session 1"


def test_a_subject_file_of_another_subject_beside_the_trial_is_not_used(lab, tmp_path):
    folder = tmp_path / "s"
    write(WALK, folder / "walk.c3d", person("Anna", 60.0))
    (folder / "Bert.vsk").write_text('<K><StaticParameter NAME="Bodymass" VALUE="90"/></K>')
    info = scan_trial(folder / "walk.c3d")
    layers, notes = subject_layers(read_c3d(folder / "walk.c3d").subject, info.path)
    assert [name for name, _ in layers] == ["C3D PROCESSING"]
    assert "Bert.vsk" in notes[0] and "'Anna'" in notes[0]


@pytest.mark.realdata
def test_every_real_walking_trial_gets_its_own_subjects_static_or_a_reason(realdata):
    jobs = {j.path.name: j for j in plan([realdata], realdata.parent / "never-written", cache=False)}
    assert "PiG_Calibration3_FF.c3d" not in jobs and "PiG_Calibration-FlatFoot-Full.c3d" not in jobs
    assert jobs["PiG_Motion-FlatFoot-Full.c3d"].static.name == "PiG_Calibration-FlatFoot-Full.c3d"  # BELT_C
    assert jobs["PiG_Motion3_FF.c3d"].static.name == "PiG_Calibration3_FF.c3d"  # flatFoot
    for name in ("FunctionalWalk.c3d", "PlugInC3D.c3d", "Gait.c3d", "Eb015pi.c3d"):
        assert jobs[name].static is None, name
    assert "another subject's anthropometry" in jobs["FunctionalWalk.c3d"].pairing
    assert "another subject (C3D subject 'BELT_C', this trial: C3D subject '42798')" in jobs["PlugInC3D.c3d"].pairing
    assert "another marker set" in jobs["Eb015pi.c3d"].pairing
    assert "trials of 3 subjects" in jobs["Gait.c3d"].pairing
    assert all(j.pairing for j in jobs.values())
    assert not (realdata.parent / "never-written").exists()


def test_column_percentiles_are_numpy_nanpercentile_bit_for_bit():
    """The scan's marker extents: numpy.nanpercentile's values without its per-column loop
    (random columns with gaps, ties, an empty column)."""
    import warnings

    import numpy as np

    from gaitid.batch.session import column_percentiles

    rng = np.random.default_rng(3)
    for case in range(100):
        n, m = rng.integers(1, 400), rng.integers(1, 60)
        a = rng.normal(size=(n, m)) * rng.uniform(0.001, 1000)
        a[rng.random((n, m)) < rng.uniform(0, 0.6)] = np.nan
        if case % 5 == 0:
            a[:, 0] = np.nan
        if case % 7 == 0:
            a = np.round(a, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.nanpercentile(a, [2.5, 97.5, 50], axis=0)
        np.testing.assert_array_equal(column_percentiles(a, [2.5, 97.5, 50]), expected)
