"""OpenSim files: TRC, Storage (.mot/.sto), ExternalLoads XML, and the Trial they make.

Real-file facts come from ../shared/realdata/README.md (read in place); synthetic
files are written by hand here with known values.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gaitid.core.errors import DataError, FileFormatError, GaitIDError, SettingsError, UnsupportedError
from gaitid.io.mot import (
    find_external_forces,
    read_external_loads,
    read_mot,
    read_sto,
    uniform_rate,
    write_external_loads,
    write_mot,
    write_sto,
)
from gaitid.io.opensim import plate_sides, read_opensim_trial, write_grf_mot
from gaitid.io.trc import Y_UP_TO_Z_UP, read_trc, write_trc
from tests.conftest import realdata_path

OSIM = "opensim-models/"
MASS = 72.6  # kg, subject01_Setup_Scale.xml


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _raw_trc(path: Path) -> tuple[list[str], np.ndarray]:
    """Independent plain-Python parse of a TRC (labels, (n, m, 3) in file units and frame)."""
    lines = path.read_text().splitlines()
    labels = [f for f in lines[3].split("\t")[2:] if f.strip()]
    rows = []
    for line in lines[5:]:
        if not line.strip():
            continue
        fields = line.split("\t")[2 : 2 + 3 * len(labels)]
        rows.append([float(f) if f.strip() else np.nan for f in fields])
    return labels, np.array(rows).reshape(len(rows), len(labels), 3)


# ----------------------------------------------------------------------------- frame change


def test_y_up_to_z_up_is_the_documented_proper_rotation():
    r = Y_UP_TO_Z_UP
    np.testing.assert_allclose(r @ r.T, np.eye(3))
    assert np.linalg.det(r) == pytest.approx(1.0)  # right-handed stays right-handed
    np.testing.assert_array_equal(r @ [1, 0, 0], [1, 0, 0])  # OpenSim X (forward) stays X
    np.testing.assert_array_equal(r @ [0, 1, 0], [0, 0, 1])  # OpenSim Y (up) becomes Z
    np.testing.assert_array_equal(r @ [0, 0, 1], [0, -1, 0])  # OpenSim Z (right) becomes -Y


# ----------------------------------------------------------------------------- TRC


def test_read_trc_walk_matches_the_file_in_metres_and_z_up():
    path = realdata_path(OSIM + "subject01_walk1.trc")
    trial = read_trc(path)
    assert (trial.point_rate, trial.n_frames, len(trial.marker_labels), trial.first_frame) == (60.0, 151, 41, 1)
    assert trial.time[0] == 0.0 and trial.time[-1] == pytest.approx(2.5)
    labels, raw_mm = _raw_trc(path)
    assert trial.marker_labels == labels
    expected = np.stack([raw_mm[..., 0], -raw_mm[..., 2], raw_mm[..., 1]], axis=-1) / 1000.0
    np.testing.assert_allclose(trial.markers, expected, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(trial.lab_rotation, Y_UP_TO_Z_UP)
    assert trial.warnings == []


def test_walk_trc_faces_x_with_the_head_on_top_and_right_markers_at_negative_y(walk):
    """subject01 walks on a treadmill: the pelvis stays put, feet point +X, the stance foot moves -X."""
    assert np.ptp(walk.point("V.Sacral")[:, 0]) < 0.1
    heel, toe = walk.point("R.Heel"), walk.point("R.Toe.Tip")
    assert np.median(toe[:, 0] - heel[:, 0]) > 0.2  # the foot points along +X (m)
    stance = walk.force_plates[0].point.force[:, 2] > 300.0
    belt = np.gradient(heel[:, 0], 1 / walk.point_rate)[stance]
    assert -1.5 < np.median(belt) < -0.8  # belt speed (m/s) under the right foot
    assert np.nanmin(walk.markers[..., 2]) > 0.0  # nothing below the floor
    assert 1.3 < np.median(walk.point("R.Acromium")[:, 2]) < 1.7  # shoulder height (m)
    assert np.median(walk.point("R.ASIS")[:, 1] - walk.point("L.ASIS")[:, 1]) < -0.15  # right is -Y


def test_read_trc_static_trial_has_the_medial_markers():
    trial = read_trc(realdata_path(OSIM + "subject01_static.trc"))
    assert (trial.point_rate, trial.n_frames, len(trial.marker_labels)) == (60.0, 300, 49)
    assert trial.has_points("R.Knee.Med", "L.Knee.Med", "R.Ankle.Med", "L.Ankle.Med")
    # a quiet static trial: the sacrum moves less than 2 cm
    assert np.ptp(trial.point("V.Sacral"), axis=0).max() < 0.02


SYNTH_TRC = (
    "PathFileType\t4\t(X/Y/Z)\tsynth.trc\n"
    "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames\n"
    "100.00\t100.00\t3\t2\tcm\t100.00\t51\t3\n"
    "Frame#\tTime\tA\t\t\tB\t\t\n"
    "\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n"
    "\n"
    "51\t0.500\t1.0\t2.0\t3.0\t4.0\t5.0\t6.0\n"
    "52\t0.510\t\t\t\t4.5\t5.5\t6.5\n"
    "53\t0.520\t0\t0\t0\n"
)


def test_trc_blank_fields_zero_triplets_and_short_rows_are_nan(tmp_path: Path):
    path = tmp_path / "synth.trc"
    path.write_text(SYNTH_TRC)
    trial = read_trc(path)
    assert trial.first_frame == 51 and trial.point_rate == 100.0
    np.testing.assert_allclose(trial.time, [0.50, 0.51, 0.52])
    a, b = trial.point("A"), trial.point("B")
    np.testing.assert_allclose(a[0], [0.01, -0.03, 0.02])  # cm -> m, then Y-up -> Z-up
    np.testing.assert_allclose(b[1], [0.045, -0.065, 0.055])
    assert np.isnan(a[1]).all() and np.isnan(a[2]).all() and np.isnan(b[2]).all()
    assert any("(0, 0, 0)" in w for w in trial.warnings)


def test_trc_up_z_keeps_the_axes(tmp_path: Path):
    path = tmp_path / "synth.trc"
    path.write_text(SYNTH_TRC)
    trial = read_trc(path, up="z")
    np.testing.assert_allclose(trial.point("A")[0], [0.01, 0.02, 0.03])
    np.testing.assert_array_equal(trial.lab_rotation, np.eye(3))
    with pytest.raises(SettingsError, match="up="):
        read_trc(path, up="x")


@pytest.mark.parametrize(
    "text, match",
    [
        ("hello\n", "PathFileType"),
        (SYNTH_TRC.replace("\tcm\t", "\tfurlong\t"), "units"),
        (SYNTH_TRC.replace("100.00\t100.00\t3", "60.00\t60.00\t3"), "DataRate 60 Hz disagrees"),
        (SYNTH_TRC.replace("\t4.5\t", "\tfour\t"), "not all numbers"),
    ],
)
def test_bad_trc_raises_a_clear_error_naming_the_file(tmp_path: Path, text: str, match: str):
    path = tmp_path / "bad.trc"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=match) as info:
        read_trc(path)
    assert "bad.trc" in str(info.value)


def test_missing_trc_raises_file_format_error(tmp_path: Path):
    with pytest.raises(FileFormatError, match="TRC file not found"):
        read_trc(tmp_path / "absent.trc")


def test_write_trc_round_trips_and_never_overwrites_its_input(tmp_path: Path):
    src = realdata_path(OSIM + "subject01_walk1.trc")
    trial = read_trc(src)
    trial.markers[5:8, 3] = np.nan  # a gap must survive as blank fields
    out = write_trc(trial, tmp_path / "copy.trc")
    back = read_trc(out)
    assert back.marker_labels == trial.marker_labels
    assert (back.first_frame, back.point_rate) == (trial.first_frame, trial.point_rate)
    np.testing.assert_allclose(back.markers, trial.markers, rtol=0, atol=1e-9)  # 6 decimals in mm
    assert np.isnan(back.markers[5:8, 3]).all()
    assert back.warnings == []
    before = _sha(src)
    with pytest.raises(GaitIDError, match="input"):
        write_trc(trial, src)
    assert _sha(src) == before
    out_z = write_trc(trial, tmp_path / "z_up.trc", up="z", units="m")
    np.testing.assert_allclose(read_trc(out_z, up="z").markers, trial.markers, rtol=0, atol=1e-6)


# ----------------------------------------------------------------------------- Storage files


def test_read_grf_mot_header_and_rate():
    table = read_mot(realdata_path(OSIM + "subject01_walk1_grf.mot"))
    assert table.values.shape == (1501, 18) and table.in_degrees is True
    assert (table.time[0], table.time[-1]) == (0.0, 2.5)
    assert uniform_rate(table) == 600.0  # printed times are rounded to 0.1 ms
    assert table.column("ground_force_vy").max() == pytest.approx(804.86, abs=0.01)
    assert table.column("1_ground_force_vy").max() == pytest.approx(810.84, abs=0.01)
    assert find_external_forces(table) == [
        ("ground_force_v", "ground_force_p", "ground_torque_"),
        ("1_ground_force_v", "1_ground_force_p", "1_ground_torque_"),
    ]
    df = table.to_dataframe()
    assert df.index.name == "time" and df.shape == (1501, 18)


def test_read_inverse_dynamics_sto():
    table = read_sto(realdata_path(OSIM + "InverseDynamicsOutput.sto"))
    assert table.name == "Inverse Dynamics" and table.in_degrees is False
    assert table.values.shape == (73, 23)
    assert table.time[0] == pytest.approx(0.4, abs=1e-5) and table.time[-1] == pytest.approx(1.6, abs=1e-5)
    assert uniform_rate(table) == 60.0
    assert table.column("ankle_angle_r_moment").min() == pytest.approx(-128, abs=1.0)  # README: plantarflexing


def test_read_ik_mot_with_comment_lines():
    table = read_mot(realdata_path(OSIM + "subject01_walk1_ik.mot"))
    assert table.values.shape == (211, 23) and table.in_degrees is True
    assert (table.time[0], table.time[-1]) == (0.5, 4.0)
    assert "Angles are in degrees." in table.comments


def test_storage_write_read_round_trip_with_nan(tmp_path: Path):
    rng = np.random.default_rng(0)
    time = np.arange(50) / 100.0
    values = rng.normal(size=(50, 3)) * 1e3
    values[3, 1] = np.nan
    for writer, reader, degrees in ((write_mot, read_mot, True), (write_sto, read_sto, False)):
        out = writer(tmp_path / f"t.{writer.__name__[-3:]}", ["a_x", "b", "c"], time, values, name="test")
        back = reader(out)
        assert back.labels == ["a_x", "b", "c"] and back.name == "test" and back.in_degrees is degrees
        np.testing.assert_allclose(back.time, time, rtol=1e-10)
        np.testing.assert_allclose(back.values, values, rtol=1e-9)  # 10 significant digits
        assert np.isnan(back.values[3, 1])
        assert back.warnings == []


def test_storage_writer_refuses_bad_labels_and_its_input(tmp_path: Path):
    time = np.arange(3.0)
    with pytest.raises(FileFormatError, match="labels"):
        write_mot(tmp_path / "x.mot", ["a b"], time, np.zeros((3, 1)))
    with pytest.raises(FileFormatError, match="shape"):
        write_mot(tmp_path / "x.mot", ["a"], time, np.zeros((4, 1)))
    src = tmp_path / "in.mot"
    write_mot(src, ["a"], time, np.ones((3, 1)))
    before = _sha(src)
    with pytest.raises(GaitIDError, match="input"):
        write_mot(src, ["a"], time, np.zeros((3, 1)), inputs=(src,))
    assert _sha(src) == before


@pytest.mark.parametrize(
    "text, match",
    [
        ("name\nversion=1\ntime\ta\n0\t1\n", "endheader"),
        ("x\nendheader\nt\ta\n0\t1\n", "'time'"),
        ("x\nendheader\ntime\ta\n0\t1\n1\tfoo\n", "not all numbers"),
        ("x\nendheader\ntime\ta\tb\n0\t1\n", "values per row"),
    ],
)
def test_bad_storage_raises_a_clear_error(tmp_path: Path, text: str, match: str):
    path = tmp_path / "bad.mot"
    path.write_text(text)
    with pytest.raises(FileFormatError, match=match) as info:
        read_mot(path)
    assert "bad.mot" in str(info.value)


def test_vec3_storage_is_unsupported(tmp_path: Path):
    path = tmp_path / "markers.sto"
    path.write_text("markers\nversion=3\nDataType=Vec3\nendheader\ntime\tA\n0\t1,2,3\n")
    with pytest.raises(UnsupportedError, match="DataType=Vec3"):
        read_sto(path)


def test_truncated_storage_is_flagged_and_uneven_time_refused(tmp_path: Path):
    path = tmp_path / "short.mot"
    path.write_text("x\nnRows=4\nendheader\ntime\ta\n0\t1\n0.01\t2\n0.05\t3\n")
    table = read_mot(path)
    assert any("nRows=4" in w for w in table.warnings)
    with pytest.raises(FileFormatError, match="not uniformly sampled"):
        uniform_rate(table)


# ----------------------------------------------------------------------------- ExternalLoads


def test_read_external_loads_maps_columns_to_the_feet():
    forces = read_external_loads(realdata_path(OSIM + "subject01_walk1_grf.xml"))  # datafile from the XML
    assert [f.body for f in forces] == ["calcn_r", "calcn_l"]
    right, left = forces
    assert right.columns[:3] == ["ground_force_vx", "ground_force_vy", "ground_force_vz"]
    assert left.torque_identifier == "1_ground_torque_"
    assert right.force.shape == (1501, 3)
    # README: peak vertical (vy) 805 N and 811 N = 1.13-1.14 body weights for 72.6 kg
    assert right.force[:, 1].max() / (MASS * 9.81) == pytest.approx(1.13, abs=0.005)
    assert left.force[:, 1].max() / (MASS * 9.81) == pytest.approx(1.14, abs=0.005)
    assert plate_sides(realdata_path(OSIM + "subject01_walk1_grf.xml")) == {1: "right", 2: "left"}


def _xml(datafile: str, expressed: str = "ground", force_id: str = "ground_force_v") -> str:
    return f"""<?xml version="1.0"?>
<OpenSimDocument Version="40000"><ExternalLoads name="x"><objects>
<ExternalForce name="right"><applied_to_body>calcn_r</applied_to_body>
<force_expressed_in_body>{expressed}</force_expressed_in_body>
<point_expressed_in_body>ground</point_expressed_in_body>
<force_identifier>{force_id}</force_identifier><point_identifier>ground_force_p</point_identifier>
<torque_identifier>ground_torque_</torque_identifier></ExternalForce>
<ExternalForce name="off"><appliesForce>false</appliesForce><applied_to_body>calcn_l</applied_to_body>
<force_identifier>nothing_v</force_identifier></ExternalForce>
</objects><datafile>{datafile}</datafile></ExternalLoads></OpenSimDocument>"""


def test_external_loads_errors_name_the_problem(tmp_path: Path):
    mot = realdata_path(OSIM + "subject01_walk1_grf.mot")
    good = tmp_path / "good.xml"
    good.write_text(_xml(str(mot)))
    assert [f.name for f in read_external_loads(good)] == ["right"]  # the disabled force is skipped
    body_frame = tmp_path / "body.xml"
    body_frame.write_text(_xml(str(mot), expressed="calcn_r"))
    with pytest.raises(UnsupportedError, match="force_expressed_in_body is 'calcn_r'"):
        read_external_loads(body_frame)
    missing = tmp_path / "missing.xml"
    missing.write_text(_xml(str(mot), force_id="2_ground_force_v"))
    with pytest.raises(FileFormatError, match="2_ground_force_vx"):
        read_external_loads(missing)
    broken = tmp_path / "broken.xml"
    broken.write_text("<OpenSimDocument><ExternalLoads>")
    with pytest.raises(FileFormatError, match="not valid XML"):
        read_external_loads(broken)


# ----------------------------------------------------------------------------- the Trial


@pytest.fixture(scope="module")
def walk():
    return read_opensim_trial(
        realdata_path(OSIM + "subject01_walk1.trc"),
        external_loads_xml=realdata_path(OSIM + "subject01_walk1_grf.xml"),
        mass=MASS,
    )


def test_opensim_trial_plates_on_the_trial_clock(walk):
    assert walk.subject.mass == MASS and walk.warnings == []
    assert [p.index for p in walk.force_plates] == [1, 2]
    raw = read_mot(realdata_path(OSIM + "subject01_walk1_grf.mot"))
    for plate, prefix in zip(walk.force_plates, ("", "1_")):
        assert plate.type == 0 and np.isnan(plate.corners).all()
        a = plate.analog
        assert (a.rate, a.n_samples, plate.point.n_samples) == (600.0, 151 * 10, 151)
        # analog sample j is at t = j / 600 s: the GRF file itself, rotated (vy -> z, vz -> -y)
        np.testing.assert_allclose(a.force[:1501, 2], raw.column(prefix + "ground_force_vy"))
        np.testing.assert_allclose(a.force[:1501, 1], -raw.column(prefix + "ground_force_vz"))
        assert np.isnan(a.force[1501:]).all()  # beyond the GRF file's 2.5 s
        loaded = a.force[:, 2] >= 10.0
        np.testing.assert_allclose(a.cop[loaded, 2], -0.0075)  # OpenSim py = -7.5 mm: the floor
        assert np.isnan(a.cop[~loaded]).all()
        assert np.nanmax(a.force[:, 2]) / (MASS * 9.81) == pytest.approx(1.135, abs=0.01)


def test_opensim_point_rate_wrench_agrees_with_the_analog_one_under_load(walk):
    for plate in walk.force_plates:
        at_frames = np.arange(151) * 10
        fz = plate.point.force[:, 2]
        loaded = fz > 200.0
        assert loaded.sum() > 20
        np.testing.assert_allclose(plate.point.force[loaded], plate.analog.force[at_frames][loaded], atol=0.02 * fz.max())
        cop_gap = np.linalg.norm(plate.point.cop[loaded] - plate.analog.cop[at_frames][loaded], axis=1)
        assert cop_gap.max() < 0.003  # m
        np.testing.assert_allclose(plate.point.free_moment[loaded, :2], 0.0)


def test_opensim_cop_lies_under_the_foot_it_is_applied_to(walk):
    """Markers and forces share one frame: the COP in stance is between heel and toe of its foot."""
    for plate, side in zip(walk.force_plates, "RL"):
        heel, toe = walk.point(f"{side}.Heel"), walk.point(f"{side}.Toe.Tip")
        stance = plate.point.force[:, 2] > 300.0
        cop = plate.point.cop[stance, :2]
        h, t = heel[stance, :2], toe[stance, :2]
        along = np.einsum("ij,ij->i", cop - h, t - h) / np.einsum("ij,ij->i", t - h, t - h)
        assert np.all((along > -0.2) & (along < 1.2))
        other = walk.point(f"{'L' if side == 'R' else 'R'}.Heel")[stance, :2]
        assert np.median(np.linalg.norm(cop - h, axis=1)) < np.median(np.linalg.norm(cop - other, axis=1))


def test_opensim_trial_without_xml_finds_the_forces(walk):
    bare = read_opensim_trial(
        realdata_path(OSIM + "subject01_walk1.trc"), realdata_path(OSIM + "subject01_walk1_grf.mot")
    )
    assert [p.index for p in bare.force_plates] == [1, 2]
    for a, b in zip(bare.force_plates, walk.force_plates):
        np.testing.assert_array_equal(a.point.force, b.point.force)
    assert bare.subject.mass is None


def test_gaitalytics_mot_keeps_plate_numbers_from_the_labels():
    table = read_mot(realdata_path("python-gaitalytics/test_small.mot"))
    assert [f[0] for f in find_external_forces(table)] == [f"ground_force{k}_v" for k in (4, 1, 2, 3)]
    assert uniform_rate(table) == 1000.0 and table.time[0] == pytest.approx(2.48)


def test_write_grf_mot_and_xml_round_trip(walk, tmp_path: Path):
    trc = write_trc(walk, tmp_path / "walk.trc")
    mot = write_grf_mot(walk, tmp_path / "walk_grf.mot", xml_path=tmp_path / "walk_grf.xml",
                        bodies={1: "calcn_r", 2: "calcn_l"})
    assert plate_sides(tmp_path / "walk_grf.xml") == {1: "right", 2: "left"}
    back = read_opensim_trial(trc, external_loads_xml=tmp_path / "walk_grf.xml")
    assert read_mot(mot).labels[:3] == ["ground_force1_vx", "ground_force1_vy", "ground_force1_vz"]
    for a, b in zip(back.force_plates, walk.force_plates):
        for name in ("cop", "free_moment"):
            np.testing.assert_allclose(getattr(a.analog, name), getattr(b.analog, name), rtol=1e-8, atol=1e-9)
        loaded = np.isfinite(b.analog.cop).all(axis=1)  # below the COP threshold: no load, written 0
        np.testing.assert_allclose(a.analog.force[loaded], b.analog.force[loaded], rtol=1e-8, atol=1e-9)
        np.testing.assert_array_equal(a.analog.force[~loaded], 0.0)
    with pytest.raises(DataError, match="no body given"):
        write_grf_mot(walk, tmp_path / "x.mot", xml_path=tmp_path / "x.xml", bodies={1: "calcn_r"})


def test_unloaded_frames_are_written_as_opensim_writes_them_and_kept_by_a_round_trip(walk, tmp_path: Path):
    """OpenSim's own subject01_walk1_grf.mot: where a plate is unloaded its force and torque are
    exactly 0 and its COP a finite point near the foot, never the origin. gaitid used to write the
    sub-threshold force (0-10 N) at (0, 0, 0) with zero torque: a moment of up to 3 N.m at the joints."""
    ref = read_mot(realdata_path(OSIM + "subject01_walk1_grf.mot"))
    for fid, pid, tid in find_external_forces(ref):
        unloaded = (ref.vector(fid) == 0).all(axis=1)
        assert unloaded.sum() > 100
        assert (ref.vector(tid)[unloaded] == 0).all()
        assert np.isfinite(ref.vector(pid)[unloaded]).all() and (np.abs(ref.vector(pid)[unloaded][:, 0]) > 0.2).all()
    mot = write_grf_mot(walk, tmp_path / "walk_grf.mot")
    table = read_mot(mot)
    for plate, (fid, pid, tid) in zip(walk.force_plates, find_external_forces(table)):
        unloaded = ~np.isfinite(plate.analog.cop).all(axis=1)
        weak = unloaded & (np.linalg.norm(plate.analog.force, axis=1) > 1.0)  # 1-10 N: used to act at 0
        assert unloaded.sum() > 100 and weak.sum() > 10
        np.testing.assert_array_equal(table.vector(fid)[unloaded], 0.0)
        np.testing.assert_array_equal(table.vector(tid)[unloaded], 0.0)
        cop = table.vector(pid)
        # held at the last defined COP (the first one before any): on the walkway, not at the origin
        last = np.flatnonzero(~unloaded)
        held = last[np.clip(np.searchsorted(last, np.arange(unloaded.size), side="right") - 1, 0, None)]
        np.testing.assert_array_equal(cop[unloaded], cop[held[unloaded]])
        assert (np.abs(cop[unloaded][:, 0]) > 0.2).all()
    # the TRC/MOT round trip keeps it: read back and written again, the same numbers
    trc = write_trc(walk, tmp_path / "walk.trc")
    write_external_loads(tmp_path / "walk_grf.xml", [("calcn_r", "ground_force1_v", "ground_force1_p",
                                                      "ground_torque1_"),
                                                     ("calcn_l", "ground_force2_v", "ground_force2_p",
                                                      "ground_torque2_")], datafile="walk_grf.mot")
    back = read_opensim_trial(trc, external_loads_xml=tmp_path / "walk_grf.xml")
    again = read_mot(write_grf_mot(back, tmp_path / "again_grf.mot"))
    np.testing.assert_allclose(again.values, table.values, rtol=1e-9, atol=1e-9)


# ----------------------------------------------------------------------------- time alignment


def _grf_file(path: Path, t0: float, rate: float, n: int, f) -> None:
    t = t0 + np.arange(n) / rate
    fy = f(t)
    z = np.zeros_like(t)
    cols = [fy * 0.1, fy, z, z + 0.3, z, z + 0.1, z, z + 2.0, z]
    labels = ["ground_force_vx", "ground_force_vy", "ground_force_vz", "ground_force_px", "ground_force_py",
              "ground_force_pz", "ground_torque_x", "ground_torque_y", "ground_torque_z"]
    write_mot(path, labels, t, np.column_stack(cols))


def _vertical(t):
    return 600.0 + 100.0 * np.sin(2 * np.pi * 1.5 * t)


def test_grf_and_markers_starting_at_different_times_are_aligned(tmp_path: Path):
    trc = tmp_path / "s.trc"
    trc.write_text(SYNTH_TRC)  # 100 Hz, frames 51-53, t = 0.50-0.52 s
    mot = tmp_path / "s.mot"
    _grf_file(mot, 0.3, 1000.0, 400, _vertical)  # 0.3-0.699 s
    trial = read_opensim_trial(trc, mot)
    plate = trial.force_plates[0]
    t_analog = 0.5 + np.arange(30) / 1000.0
    np.testing.assert_allclose(plate.analog.force[:, 2], _vertical(t_analog), rtol=1e-9)
    np.testing.assert_allclose(plate.point.force[:, 2], _vertical(trial.time), rtol=1e-3)
    np.testing.assert_allclose(plate.analog.free_moment[:, 2], 2.0)  # torque_y (up) -> z
    np.testing.assert_allclose(plate.point.cop, np.tile([0.3, -0.1, 0.0], (3, 1)), atol=1e-9)
    assert not any("interpolated" in w for w in trial.warnings)


def test_grf_off_the_marker_grid_is_interpolated_with_a_warning(tmp_path: Path):
    trc = tmp_path / "s.trc"
    trc.write_text(SYNTH_TRC)
    mot = tmp_path / "s.mot"
    _grf_file(mot, 0.3003, 1250.0, 500, _vertical)  # rate not a multiple of 100 Hz, clock offset
    trial = read_opensim_trial(trc, mot)
    plate = trial.force_plates[0]
    assert plate.analog.rate == 1200.0  # 12 samples per frame, as a C3D file would have
    t_analog = 0.5 + np.arange(36) / 1200.0
    np.testing.assert_allclose(plate.analog.force[:, 2], _vertical(t_analog), rtol=1e-5)
    assert any("interpolated" in w for w in trial.warnings)


def test_grf_not_overlapping_the_markers_is_an_error(tmp_path: Path):
    trc = tmp_path / "s.trc"
    trc.write_text(SYNTH_TRC)
    mot = tmp_path / "s.mot"
    _grf_file(mot, 2.0, 1000.0, 100, _vertical)
    with pytest.raises(DataError, match="does not overlap"):
        read_opensim_trial(trc, mot)
    with pytest.raises(DataError, match="mass"):
        read_opensim_trial(trc, mass=-3)


# ----------------------------------------------------------------------------- cross-check with the C3D reader


def test_gaitalytics_mot_matches_the_c3d_plates_after_the_frame_change(tmp_path: Path):
    """test_small.mot holds test_small.c3d's GRFs in OpenSim format (README): same forces and COPs.

    The C3D starts at frame 249 at 100 Hz, i.e. t = 2.48 s, the .mot's first time: no
    offset. The .mot's ``ground_force{k}`` is C3D plate k. Its torque is the negative of
    the C3D reader's free moment (r = -1): gaitid's comes from the same channels as its
    force (on the subject); the exporter most likely wrote the torque on the plate.
    If this assertion flips, the C3D free-moment sign changed: check io/forceplates.py.
    """
    c3d_reader = pytest.importorskip("gaitid.io.c3d")
    c3d = c3d_reader.read_c3d(realdata_path("python-gaitalytics/test_small.c3d"))
    mot = realdata_path("python-gaitalytics/test_small.mot")
    trc = write_trc(c3d, tmp_path / "test_small.trc")  # the C3D markers, written Y up as OpenSim wants
    osim = read_opensim_trial(trc, mot)
    assert osim.first_frame == c3d.first_frame == 249 and osim.warnings == []
    by_index = {p.index: p for p in c3d.force_plates}
    assert sorted(by_index) == sorted(p.index for p in osim.force_plates) == [1, 2, 3, 4]
    for plate in osim.force_plates:
        ref = by_index[plate.index]
        a, b = plate.analog, ref.analog
        assert a.n_samples == b.n_samples == 3370
        np.testing.assert_allclose(a.force, b.force, rtol=0, atol=1e-5)  # printed to 1e-6 N
        loaded = b.force[:, 2] > 50.0
        if plate.index == 3:
            assert not loaded.any()  # plate 3 is never stepped on (max |Fz| 33 N)
            continue
        np.testing.assert_allclose(a.cop[loaded], b.cop[loaded], rtol=0, atol=1e-5)
        np.testing.assert_allclose(a.free_moment[loaded, 2], -b.free_moment[loaded, 2], rtol=0, atol=1e-4)
        stance = ref.point.force[:, 2] > 200.0
        np.testing.assert_allclose(plate.point.force, ref.point.force, rtol=0, atol=1e-4)
        np.testing.assert_allclose(plate.point.cop[stance], ref.point.cop[stance], rtol=0, atol=2e-3)


def test_trc_frame_column_disagreeing_with_time_is_a_warning_and_time_wins(tmp_path: Path):
    path = tmp_path / "s.trc"
    path.write_text(SYNTH_TRC.replace("\n51\t", "\n1\t"))  # Frame# 1 but Time 0.500 s at 100 Hz
    trial = read_trc(path)
    assert trial.first_frame == 51
    assert any("Frame# 1" in w for w in trial.warnings)


def test_trc_time_off_the_frame_grid_keeps_the_grf_in_sync(tmp_path: Path):
    """Markers sampled at 0.5025 s + k/100: the trial clock rounds to frame 51 (0.50 s) with a
    warning, but the GRF is taken at the markers' true times."""
    trc = tmp_path / "s.trc"
    trc.write_text(SYNTH_TRC.replace("0.500", "0.5025").replace("0.510", "0.5125").replace("0.520", "0.5225"))
    mot = tmp_path / "s.mot"
    _grf_file(mot, 0.3, 1000.0, 400, _vertical)
    trial = read_opensim_trial(trc, mot)
    assert trial.first_frame == 51
    assert any("off the 100 Hz grid" in w for w in trial.warnings)
    t_true = 0.5025 + np.arange(30) / 1000.0
    # linear interpolation half-way between 1 kHz samples: error h^2/8 * |f''| = 1.1e-3 N here
    np.testing.assert_allclose(trial.force_plates[0].analog.force[:, 2], _vertical(t_true), rtol=0, atol=1.5e-3)
    assert any("interpolated" in w for w in trial.warnings)


@settings(max_examples=25, deadline=None)
@given(
    values=arrays(np.float64, (7, 4), elements=st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)),
    rate=st.sampled_from([50.0, 100.0, 120.0, 1000.0]),
)
def test_storage_round_trip_holds_for_any_finite_values(tmp_path_factory, values, rate):
    path = tmp_path_factory.mktemp("rt") / "x.sto"
    time = 0.25 + np.arange(7) / rate
    back = read_sto(write_sto(path, ["q1", "q2", "f_x", "f_y"], time, values))
    np.testing.assert_allclose(back.values, values, rtol=1e-9, atol=1e-300)
    assert uniform_rate(back) == rate


def test_scale_setup_gives_the_subject():
    from gaitid.io.opensim import read_scale_subject

    subject = read_scale_subject(realdata_path(OSIM + "subject01_Setup_Scale.xml"))
    assert (subject.name, subject.mass, subject.height) == ("subject01", 72.6, pytest.approx(1.8034))
    trial = read_opensim_trial(realdata_path(OSIM + "subject01_static.trc"), subject=subject, mass=70.0)
    assert trial.subject.mass == 70.0 and subject.mass == 72.6  # the override does not touch the input
    with pytest.raises(FileFormatError, match="ScaleTool"):
        read_scale_subject(realdata_path(OSIM + "subject01_walk1_grf.xml"))


def test_rounded_printed_times_still_land_on_the_grid(tmp_path: Path):
    """OpenSim prints 1/60 s as 0.017 and 1/600 s as 0.0017: a TRC cut to start at frame 11
    (Time 0.167) must still be read as exactly frame 11, and the 600 Hz GRF taken from
    its row 100 without interpolation."""
    lines = realdata_path(OSIM + "subject01_walk1.trc").read_text().splitlines()
    cut = tmp_path / "cut.trc"
    cut.write_text("\n".join(lines[:6] + lines[16:]) + "\n")  # data rows 11..151
    assert lines[16].split("\t")[1] == "0.167000"
    trial = read_opensim_trial(cut, realdata_path(OSIM + "subject01_walk1_grf.mot"))
    assert trial.first_frame == 11 and trial.time[0] == pytest.approx(10 / 60, abs=1e-12)
    assert not any("interpolated" in w or "off the" in w for w in trial.warnings)
    raw = read_mot(realdata_path(OSIM + "subject01_walk1_grf.mot")).column("ground_force_vy")
    np.testing.assert_array_equal(trial.force_plates[0].analog.force[:1401, 2], raw[100:])


def test_write_external_loads_reads_back(tmp_path: Path):
    mot = realdata_path(OSIM + "subject01_walk1_grf.mot")
    xml = write_external_loads(
        tmp_path / "loads.xml",
        [("calcn_l", "1_ground_force_v", "1_ground_force_p", "1_ground_torque_"),
         ("calcn_r", "ground_force_v", "ground_force_p", "ground_torque_")],
        datafile=str(mot),
    )
    forces = read_external_loads(xml)
    assert [(f.body, f.force_identifier) for f in forces] == [("calcn_l", "1_ground_force_v"), ("calcn_r", "ground_force_v")]
    assert plate_sides(xml) == {1: "left", 2: "right"}
    np.testing.assert_array_equal(forces[1].torque, read_mot(mot).vector("ground_torque_"))
