"""Subject data: a real Vicon Nexus .vsk (StaticParameters, full names, expressions), .mp,
tables (CSV/JSON/TOML), the safe expression evaluator, and the merge of sources."""

from __future__ import annotations

import math

import pytest

from gaitid.core.errors import FileFormatError, SettingsError
from gaitid.core.trial import Subject
from gaitid.model.markerset import load_model
from gaitid.subject.check import describe_missing, missing_parameters
from gaitid.subject.merge import merge_subject, subject_disagreements
from gaitid.subject.readers import (
    evaluate_expression,
    read_subject,
    read_subjects,
    vsk_parameters,
)
from tests.conftest import realdata_path

# What Nexus shows for pycgm-cadop/59993_Frame_SM.vsk (Vicon units: kg, mm, rad). Stored
# values are read as such; expression values computed by hand from the file's formulas:
# LeftAsisTrocanterDistance = 0.1288 * 800 - 48.56 = 54.48 (the file also stores 54.48);
# MeanLegLength = (800 + 800) / 2 = 800 (stored VALUE 0: stale);
# C = 800 * 0.115 - 15.3 = 76.7; HJCy = 200 / 2 - 76.7 sin(0.500000178813934) = 63.2281...;
# PelvisLength = 2 HJCy; LKNEy = 120 / 2; RANKy = -100 / 2.
NEXUS_VALUES = {
    "Bodymass": 65.0,
    "Height": 1700.0,
    "InterAsisDistance": 200.0,
    "LeftLegLength": 800.0,
    "RightLegLength": 800.0,
    "LeftKneeWidth": 120.0,
    "RightKneeWidth": 120.0,
    "LeftAnkleWidth": 100.0,
    "RightAnkleWidth": 100.0,
    "LeftAsisTrocanterDistance": 54.48,
    "RightAsisTrocanterDistance": 54.48,
    "LeftTibialTorsion": 0.0,
    "LeftSoleDelta": 0.0,
    "LeftStaticPlantFlex": 0.0995968654751778,
    "LeftStaticRotOff": -0.019973723217845,
    "RightStaticPlantFlex": 0.14440330862999,
    "RightStaticRotOff": -0.0793431922793388,
    "MeanLegLength": 800.0,
    "C": 76.7,
    "HJCy": 100.0 - 76.7 * math.sin(0.500000178813934),
    "PelvisLength": 2 * (100.0 - 76.7 * math.sin(0.500000178813934)),
    "LKNEy": 60.0,
    "RANKy": -50.0,
    "LeftFemurLength": 473.199005126953,  # a <Parameter> (the model's calibrated value)
}


@pytest.mark.realdata
def test_real_nexus_vsk_reads_to_the_values_nexus_shows():
    path = realdata_path("pycgm-cadop/59993_Frame_SM.vsk")
    values = vsk_parameters(path)
    for name, expected in NEXUS_VALUES.items():
        assert values[name] == pytest.approx(expected, abs=1e-6), name
    assert values["HJCy"] == pytest.approx(63.22805, abs=1e-4)


@pytest.mark.realdata
def test_real_nexus_vsk_gives_a_subject_in_si():
    s = read_subject(realdata_path("pycgm-cadop/59993_Frame_SM.vsk"))
    assert s.name == "59993_Frame_SM"
    assert (s.mass, s.height) == pytest.approx((65.0, 1.7))
    assert (s.leg_length_left, s.leg_length_right) == pytest.approx((0.8, 0.8))
    assert (s.knee_width_left, s.knee_width_right) == pytest.approx((0.12, 0.12))
    assert (s.ankle_width_left, s.ankle_width_right) == pytest.approx((0.1, 0.1))
    assert s.inter_asis_distance == pytest.approx(0.2)
    # other values keep PROCESSING's short names: lengths in m, angles in rad
    assert s.extra["LAsisTrocanterDistance"] == pytest.approx(0.05448)
    assert s.extra["RStaticPlantFlex"] == pytest.approx(0.14440330862999)
    assert s.extra["LStaticRotOff"] == pytest.approx(-0.019973723217845)
    # the model finds them under the names it looks for
    mk = load_model("plugin-gait")
    assert missing_parameters(mk, s) == []


SHORT_VSK = """<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<KinematicModel VERSION="1.0" MODEL="PlugInGait">
  <Parameters>
    <Parameter NAME="Bodymass" VALUE="74" PRIOR="0" />
    <Parameter NAME="Height" VALUE="1760" PRIOR="0" />
    <Parameter NAME="LLegLength" VALUE="920" PRIOR="0" />
    <Parameter NAME="RLegLength" VALUE="915" PRIOR="0" />
    <Parameter NAME="LKneeWidth" VALUE="102" PRIOR="0" />
    <Parameter NAME="RKneeWidth" VALUE="103" PRIOR="0" />
    <Parameter NAME="LAnkleWidth" VALUE="70" PRIOR="0" />
    <StaticParameter NAME="RAnkleWidth" VALUE="0" EXPRESSION="LAnkleWidth + 1" QUANTITY="length" />
    <Parameter NAME="InterAsisDistance" VALUE="0" PRIOR="0" />
    <StaticParameter NAME="LStaticPlantFlex" VALUE="0.1624" QUANTITY="angle" />
  </Parameters>
</KinematicModel>
"""


def test_vsk_with_short_names_and_a_stale_expression_value(tmp_path):
    p = tmp_path / "flatFoot.vsk"
    p.write_text(SHORT_VSK)
    s = read_subject(p)
    assert s.name == "flatFoot" and s.mass == 74.0 and s.height == pytest.approx(1.76)
    assert (s.leg_length_left, s.leg_length_right) == pytest.approx((0.920, 0.915))
    assert s.ankle_width_right == pytest.approx(0.071)  # LAnkleWidth + 1 mm, not the stored 0
    assert s.inter_asis_distance is None  # 0 = "compute it" in Plug-in Gait
    assert s.extra["LStaticPlantFlex"] == pytest.approx(0.1624)  # rad, as stored


def test_expressions_are_evaluated_without_eval():
    names = {"LeftLegLength": 800.0, "Theta": 0.5, "A": 2.0}
    look = names.__getitem__
    assert evaluate_expression("( 0.1288 * LeftLegLength ) - 48.56", look) == pytest.approx(54.48)
    assert evaluate_expression("-LeftLegLength / 2", look) == -400.0
    assert evaluate_expression("A ^ 3 + A ** 2", look) == 12.0  # ^ is a power, as Vicon writes it
    assert evaluate_expression("SIN(Theta) * cos(0) + sqrt(16) + atan2(1, 1)", look) == pytest.approx(
        math.sin(0.5) + 4 + math.pi / 4)
    assert evaluate_expression("max(A, 3) - min(A, 3) + abs(-1)", look) == 2.0
    with pytest.raises(KeyError):
        evaluate_expression("Unknown * 2", look)
    for bad in ("__import__('os').system('true')", "A.real", "[1, 2]", "lambda: 1", "open('x')", "1 if A else 2",
                "A +", "1 / 0"):
        with pytest.raises(ValueError):
            evaluate_expression(bad, look)


def test_vsk_expression_cycles_and_unknown_names_fall_back_on_the_stored_value(tmp_path):
    p = tmp_path / "s.vsk"
    p.write_text('<K><StaticParameter NAME="Bodymass" VALUE="70"/>'
                 '<StaticParameter NAME="A" VALUE="5" EXPRESSION="B + 1"/>'
                 '<StaticParameter NAME="B" VALUE="0" EXPRESSION="A + 1"/>'
                 '<StaticParameter NAME="Z" VALUE="3" EXPRESSION="Nowhere * 2"/>'
                 '<StaticParameter NAME="Y" EXPRESSION="Nowhere * 2"/></K>')
    v = vsk_parameters(p)
    assert v["Bodymass"] == 70.0 and v["Z"] == 3.0 and "Y" not in v
    assert {v["A"], v["B"]} <= {5.0, 6.0, 0.0, 1.0}  # a cycle: stored values, never a hang


def test_csv_table_one_row_per_subject_with_units_in_the_column_names(tmp_path):
    p = tmp_path / "subjects.csv"
    p.write_text("subject;mass_kg;height_mm;leg_length_mm;knee_width_left_cm;knee_width_right;LAnkleWidth;date\n"
                 "P01;70,5;1760;920;10.2;0.103;70;2024-05-01\n"
                 "P02;55;1600;;;;;2024-05-02\n")
    subjects = read_subjects(p)
    assert list(subjects) == ["P01", "P02"]
    a = subjects["P01"]
    assert (a.mass, a.height, a.leg_length_left, a.leg_length_right) == pytest.approx((70.5, 1.76, 0.92, 0.92))
    assert (a.knee_width_left, a.knee_width_right, a.ankle_width_left) == pytest.approx((0.102, 0.103, 0.070))
    b = read_subject(p, "p02")
    assert (b.mass, b.height, b.leg_length_left) == (55.0, 1.6, None)
    with pytest.raises(FileFormatError, match="2 subjects in the file"):
        read_subject(p)
    with pytest.raises(FileFormatError, match="no subject 'P03'"):
        read_subject(p, "P03")


def test_json_and_toml_tables(tmp_path):
    j = tmp_path / "s.json"
    j.write_text('[{"name": "A", "mass": 60, "leg_length": 0.85}, {"name": "B", "mass": 80, '
                 '"left": {"knee_width": 0.1}, "right": {"knee_width": 0.11}}]')
    s = read_subjects(j)
    assert s["A"].leg_length_right == 0.85 and (s["B"].knee_width_left, s["B"].knee_width_right) == (0.1, 0.11)
    t = tmp_path / "s.toml"
    t.write_text('[subjects.P1]\nmass = 63.6\nheight_cm = 158\n[subjects.P2]\nBodymass = 70\nLLegLength = 900\n')
    s = read_subjects(t)
    assert (s["P1"].mass, s["P1"].height) == pytest.approx((63.6, 1.58))
    assert (s["P2"].mass, s["P2"].leg_length_left) == pytest.approx((70.0, 0.9))
    one = tmp_path / "one.toml"
    one.write_text('name = "P1"\nmass = 63.6\nknee_width_left = 0.086\n[extra]\nLTibialTorsion = -0.2\n')
    s = read_subject(one)
    assert (s.name, s.mass, s.knee_width_left, s.extra["LTibialTorsion"]) == ("P1", 63.6, 0.086, -0.2)


@pytest.mark.parametrize(
    "name, text, match",
    [
        ("a.toml", "mass = -3\n", "positive"),
        ("a.toml", "weight = 70\n", "unknown key 'weight'"),
        ("a.toml", "mass = [", "not valid TOML"),
        ("a.toml", "height = 1760\n", "height_mm"),  # a height in mm under an SI name
        ("a.csv", "name,Height\nP,1.76\n", "in mm"),  # a Vicon name in m
        ("a.csv", "name,knee_width_left_kg\nP,1\n", "cannot be in kg"),
        ("a.csv", "name,mass\nP,heavy\n", "must be a number"),
        ("a.vsk", "<KinematicModel>", "not a readable"),
        ("a.vsk", "<KinematicModel><Parameters/></KinematicModel>", "no <StaticParameter> or <Parameter"),
        ("a.vsk", '<K><Parameter NAME="Bodymass" VALUE="heavy"/></K>', "non-numeric"),
        ("a.mp", "nothing here\n", "not a Vicon subject measurement"),
        ("a.txt", "mass = 3", "unknown subject file type"),
    ],
)
def test_bad_subject_files_name_the_file_and_problem(tmp_path, name, text, match):
    p = tmp_path / name
    p.write_text(text)
    with pytest.raises(FileFormatError, match=match) as exc:
        read_subject(p)
    assert name in str(exc.value)
    with pytest.raises(FileFormatError, match="not found"):
        read_subject(tmp_path / "missing.vsk")


def test_merge_fills_gaps_in_order_and_records_the_source_of_each_value():
    cli = {"leg_length_left": 0.90, "leg_length_right": 0.91}
    c3d = Subject(name="P1", mass=70.0, leg_length_left=0.88, extra={"LTibialTorsion": 0.1})
    vsk = Subject(name="P1", mass=72.0, height=1.75, knee_width_left=0.1, extra={"ltibialtorsion": 0.3, "X": 1.0})
    before = (c3d.mass, dict(c3d.extra), c3d.sources)
    merged, prov = merge_subject([("command line", cli), ("C3D PROCESSING", c3d), ("P1.vsk beside the trial", vsk)])
    assert (merged.leg_length_left, merged.leg_length_right) == (0.90, 0.91)  # typed values win
    assert (merged.mass, merged.height, merged.knee_width_left) == (70.0, 1.75, 0.1)  # the C3D's, then the vsk fills
    assert merged.extra == {"LTibialTorsion": 0.1, "X": 1.0}  # extra names match case-insensitively
    assert prov == {"leg_length_left": "command line", "leg_length_right": "command line", "mass": "C3D PROCESSING",
                    "height": "P1.vsk beside the trial", "knee_width_left": "P1.vsk beside the trial",
                    "LTibialTorsion": "C3D PROCESSING", "X": "P1.vsk beside the trial"}
    assert merged.sources == prov and merged.name == "P1"
    assert (c3d.mass, c3d.extra, c3d.sources) == before  # inputs untouched
    notes = subject_disagreements([("C3D PROCESSING", c3d), ("P1.vsk", vsk)])
    assert notes == ["mass 70 kg (C3D PROCESSING) used; P1.vsk says 72 kg"]
    with pytest.raises(SettingsError, match="unknown key 'weight'"):
        merge_subject([("command line", {"weight": 70})])


def test_missing_parameters_name_the_options_that_supply_them():
    model = load_model("plugin-gait")
    s = Subject(mass=70.0, leg_length_left=0.9, leg_length_right=0.9, knee_width_left=0.1)
    missing = missing_parameters(model, s)
    assert [(n, side) for n, side, _ in missing] == [("knee_width", "right"), ("ankle_width", "left"),
                                                     ("ankle_width", "right")]
    text = describe_missing(model, missing, "/x/PlugInC3D.c3d")
    assert "knee_width (right), ankle_width (left and right)" in text
    assert "--knee-width L,R --ankle-width L,R" in text and "PlugInC3D.c3d stores none" in text
    assert "subject={" not in text  # no Python advice for a command-line user


def test_build_segments_takes_a_subject_read_from_a_file(tmp_path):
    from gaitid import ModelError, read_c3d
    from gaitid.model.assembly import build_segments

    trial = read_c3d(realdata_path("python-gaitalytics/test_small.c3d"))
    p = tmp_path / "s.toml"
    p.write_text("mass = 80.0\nleg_length_left = 0.85\nleg_length_right = 0.85\nknee_width_left = 0.09\n"
                 "knee_width_right = 0.09\nankle_width_left = 0.07\nankle_width_right = 0.07\n")
    mk = build_segments(trial, subject=read_subject(p))
    assert mk.chains["Left"][2].mass == pytest.approx(8.0)
    assert mk.parameters["Left"]["knee_width"] == pytest.approx(0.09)
    with pytest.raises(ModelError, match="read_subject"):  # the model reads no file: the subject stage does
        build_segments(trial, subject=p)
