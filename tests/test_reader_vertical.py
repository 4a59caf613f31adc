"""Vertical-axis detection and the Z-up rotation; Y-up files (rotated real files written with ezc3d) read back equal."""

from __future__ import annotations

import ezc3d
import numpy as np
import pytest

from gaitid.io.c3d import read_c3d
from gaitid.io.vertical import detect_up, rotation_to_z_up, up_from_markers
from tests.conftest import REAL_C3D, realdata_path

AXES = [np.array(v, float) for v in ([1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1])]


@pytest.mark.parametrize("up", AXES, ids=lambda v: str(v.astype(int)))
def test_rotation_to_z_up_is_proper_and_maps_up_to_z(up):
    r = rotation_to_z_up(up)
    assert np.allclose(r @ r.T, np.eye(3)) and np.linalg.det(r) == pytest.approx(1.0)
    assert np.allclose(r @ up, [0, 0, 1])
    assert np.all(np.isin(r, [-1.0, 0.0, 1.0]))  # exact: no rounding error enters the data


def test_y_up_rotation_is_the_opensim_convention():
    """OpenSim (X forward, Y up, Z right) -> gaitid: X forward, Y left, Z up."""
    r = rotation_to_z_up(np.array([0.0, 1.0, 0.0]))
    assert np.allclose(r @ [1, 0, 0], [1, 0, 0])
    assert np.allclose(r @ [0, 0, 1], [0, -1, 0])  # right -> -left


@pytest.mark.parametrize("path", REAL_C3D, ids=lambda p: p.name)
def test_marker_layout_alone_finds_z_up_in_every_real_file(path):
    t = read_c3d(path)
    labelled = [i for i, lab in enumerate(t.marker_labels) if not lab.startswith("*")]
    assert np.allclose(up_from_markers(t.markers[:, labelled]), [0, 0, 1])


def test_plate_forces_decide_before_markers():
    rng = np.random.default_rng(0)
    forces = [np.column_stack([rng.normal(0, 30, 500), rng.normal(600, 50, 500), rng.normal(0, 30, 500)])]
    markers = rng.uniform(0, 1, (10, 20, 3)) * [0.3, 0.3, 1.7]  # markers alone would say Z
    up, how = detect_up(forces, markers)
    assert np.allclose(up, [0, 1, 0]) and how == "force plates"
    up, how = detect_up([np.zeros((500, 3))], markers)
    assert np.allclose(up, [0, 0, 1]) and how == "markers"


# Z-up lab -> Y-up lab (OpenSim / Motion Analysis style: X forward, Y up, Z right)
TO_Y_UP = np.array([[1.0, 0, 0], [0, 0, 1], [0, -1, 0]])


def _write_y_up(src, dst):
    c = ezc3d.c3d(str(src))
    pts = c["data"]["points"]
    pts[:3] = np.einsum("ij,jkl->ikl", TO_Y_UP, pts[:3])
    c["data"]["points"] = pts
    labels = c["parameters"]["POINT"]["LABELS"]
    labels["value"] = labels["value"][: pts.shape[1]]  # Eb015pi lists more labels than points
    analog = c["parameters"]["ANALOG"]
    for key in ("LABELS", "DESCRIPTIONS", "UNITS"):
        if key in analog:
            analog[key]["value"] = analog[key]["value"][: c["data"]["analogs"].shape[1]]
    fp = c["parameters"]["FORCE_PLATFORM"]
    if "CORNERS" in fp and np.size(fp["CORNERS"]["value"]):
        fp["CORNERS"]["value"] = np.einsum("ij,jkl->ikl", TO_Y_UP, fp["CORNERS"]["value"])
    c.write(str(dst))


@pytest.mark.parametrize(
    "rel, how",
    [
        ("c3d-parser/MH0222_BP06.c3d", "force plates"),
        ("btkdata/Eb015pi.c3d", "force plates"),  # walks along Y
        ("btkdata/PiG_Calibration3_FF.c3d", "markers"),  # no plates
    ],
)
def test_y_up_file_reads_back_equal_to_the_original(tmp_path, rel, how):
    src = realdata_path(rel)
    dst = tmp_path / "yup.c3d"
    _write_y_up(src, dst)
    a, b = read_c3d(src), read_c3d(dst)
    assert np.allclose(b.lab_rotation @ TO_Y_UP, np.eye(3))
    assert any(how in w and "+Y" in w for w in b.warnings)
    tol = 1e-6  # ezc3d rewrites points as float32 (mm)
    assert b.marker_labels == a.marker_labels
    assert np.array_equal(np.isnan(a.markers), np.isnan(b.markers))
    assert np.nanmax(np.abs(a.markers - b.markers)) < tol
    if a.virtual_labels:
        assert np.nanmax(np.abs(a.virtual_points - b.virtual_points)) < tol
    assert len(a.force_plates) == len(b.force_plates)
    for p, q in zip(a.force_plates, b.force_plates):
        assert np.allclose(p.corners, q.corners, atol=tol)
        for w, v in ((p.analog, q.analog), (p.point, q.point)):
            assert np.allclose(w.force, v.force, atol=1e-3, equal_nan=True)
            assert np.array_equal(np.isnan(w.cop), np.isnan(v.cop))  # COP threshold on the vertical force
            assert np.allclose(w.cop, v.cop, atol=tol, equal_nan=True)
            assert np.allclose(w.free_moment, v.free_moment, atol=1e-3, equal_nan=True)
    assert [(e.label, e.context, e.frame) for e in a.events] == [(e.label, e.context, e.frame) for e in b.events]
