"""Subject files: Vicon .vsk (XML, mm) and TOML (SI) -> Subject in SI."""

from __future__ import annotations

import pytest

from gaitid.errors import FileFormatError
from gaitid.model.subject import read_subject

VSK = """<?xml version="1.0" encoding="UTF-8" standalone="no" ?>
<KinematicModel VERSION="1.0" MODEL="PlugInGait">
  <Parameters>
    <Parameter NAME="Bodymass" VALUE="74" PRIOR="0" />
    <Parameter NAME="Height" VALUE="1760" PRIOR="0" />
    <Parameter NAME="LLegLength" VALUE="920" PRIOR="0" />
    <Parameter NAME="RLegLength" VALUE="915" PRIOR="0" />
    <Parameter NAME="LKneeWidth" VALUE="102" PRIOR="0" />
    <Parameter NAME="RKneeWidth" VALUE="103" PRIOR="0" />
    <Parameter NAME="LAnkleWidth" VALUE="70" PRIOR="0" />
    <Parameter NAME="RAnkleWidth" VALUE="71" PRIOR="0" />
    <Parameter NAME="InterAsisDistance" VALUE="0" PRIOR="0" />
    <Parameter NAME="LAsisTrocanterDistance" VALUE="69.936" PRIOR="0" />
    <Parameter NAME="LStaticPlantFlex" VALUE="0.1624" PRIOR="0" />
  </Parameters>
</KinematicModel>
"""


def test_vsk_values_in_si(tmp_path):
    p = tmp_path / "flatFoot.vsk"
    p.write_text(VSK)
    s = read_subject(p)
    assert s.name == "flatFoot" and s.mass == 74.0 and s.height == pytest.approx(1.76)
    assert (s.leg_length_left, s.leg_length_right) == pytest.approx((0.920, 0.915))
    assert (s.knee_width_left, s.ankle_width_right) == pytest.approx((0.102, 0.071))
    assert s.inter_asis_distance is None  # 0 = "compute it" in Plug-in Gait
    assert s.extra["LAsisTrocanterDistance"] == pytest.approx(0.069936)
    assert s.extra["LStaticPlantFlex"] == pytest.approx(0.1624)  # rad, as stored


def test_toml_subject(tmp_path):
    p = tmp_path / "s.toml"
    p.write_text('name = "P1"\nmass = 63.6\nknee_width_left = 0.086\n[extra]\nLTibialTorsion = -0.2\n')
    s = read_subject(p)
    assert (s.name, s.mass, s.knee_width_left, s.extra["LTibialTorsion"]) == ("P1", 63.6, 0.086, -0.2)


@pytest.mark.parametrize(
    "name, text, match",
    [
        ("a.toml", "mass = -3\n", "positive"),
        ("a.toml", "weight = 70\n", "unknown key 'weight'"),
        ("a.toml", "mass = [", "not valid TOML"),
        ("a.vsk", "<KinematicModel>", "not a readable"),
        ("a.vsk", "<KinematicModel><Parameters/></KinematicModel>", "no <Parameter"),
        ("a.vsk", '<K><Parameter NAME="Bodymass" VALUE="heavy"/></K>', "non-numeric"),
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


def test_build_segments_takes_a_subject_file(tmp_path):
    from gaitid import read_c3d
    from gaitid.model.build import build_segments
    from tests.conftest import realdata_path

    trial = read_c3d(realdata_path("python-gaitalytics/test_small.c3d"))
    p = tmp_path / "s.toml"
    p.write_text("mass = 80.0\nleg_length_left = 0.85\nleg_length_right = 0.85\nknee_width_left = 0.09\n"
                 "knee_width_right = 0.09\nankle_width_left = 0.07\nankle_width_right = 0.07\n")
    mk = build_segments(trial, subject=p)
    assert mk.chains["Left"][2].mass == pytest.approx(8.0)
    assert mk.parameters["Left"]["knee_width"] == pytest.approx(0.09)
