"""Vectorised force-plate wrenches (gaitid.io.forceplates) against ezc3d's own extraction (the oracle).

Real files: types 2 and 4. Types 1 and 3 (no real file has them): synthetic C3D
files written with ezc3d and extracted by ezc3d. Agreement 1e-9 relative to the
largest magnitude of each quantity.
"""

from __future__ import annotations

import ezc3d
import numpy as np
import pytest

from gaitid.core.errors import FileFormatError, UnsupportedError
from gaitid.io import forceplates as fpmod
from gaitid.io.c3d import read_c3d
from tests.conftest import REAL_C3D

TOL = 1e-9


def _compare_with_ezc3d(path, trial, cop_threshold=10.0, normal_free_moment=False):
    c = ezc3d.c3d(str(path), extract_forceplat_data=True)
    oracle = c["data"]["platform"]
    assert len(oracle) == len(trial.force_plates)
    units = c["parameters"]["POINT"]["UNITS"]["value"]
    to_m = fpmod.length_scale(units[0] if units else "mm")
    for ez, plate in zip(oracle, trial.force_plates):
        force = ez["force"].T
        scale_f = max(np.abs(force).max(), 1.0)
        assert np.abs(plate.analog.force - force).max() <= TOL * scale_f
        loaded = np.abs(force[:, 2]) >= cop_threshold
        assert np.all(np.isnan(plate.analog.cop[~loaded]))
        if loaded.any():
            cop = ez["center_of_pressure"].T[loaded] * to_m
            assert np.abs(plate.analog.cop[loaded] - cop).max() <= TOL * max(np.abs(cop).max(), 1.0)
            tz = ez["Tz"].T[loaded] * to_m
            ours = plate.analog.free_moment[loaded]
            if normal_free_moment:  # Kistler COP correction: gaitid keeps only the normal (here lab Z) part
                tz, ours = tz[:, 2], ours[:, 2]
                assert np.abs(plate.analog.free_moment[loaded][:, :2]).max() == 0.0
            assert np.abs(ours - tz).max() <= TOL * max(np.abs(tz).max(), 1.0)
        corners = ez["corners"].T * to_m
        assert np.allclose(plate.corners, corners, rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", REAL_C3D, ids=lambda p: p.name)
def test_real_plates_match_ezc3d_extraction(path):
    trial = read_c3d(path, plate_offsets=False)  # ezc3d applies neither ZERO nor a baseline
    _compare_with_ezc3d(path, trial)


def _synthetic(tmp_path, plate_type, channels, origin, corners_mm, cal=None, poly=None, name="plate.c3d"):
    """A small C3D (20 frames at 100 Hz, 1000 Hz analogs) with one plate of ``plate_type`` written by ezc3d."""
    n_frames, n_ch = 20, channels.shape[1]
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([100.0])
    c["parameters"]["POINT"]["LABELS"]["value"] = ["A", "B", "C"]
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    pts = np.ones((4, 3, n_frames))
    pts[:3] = np.random.default_rng(1).uniform(0, 1000, (3, 3, n_frames))
    pts[2] = np.array([100.0, 900.0, 1500.0])[:, None]  # z up
    c["data"]["points"] = pts
    c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([1000.0])
    c["parameters"]["ANALOG"]["LABELS"]["value"] = [f"ch{i}" for i in range(n_ch)]
    c["data"]["analogs"] = channels.T[None]
    fp = {"__METADATA__": {"DESCRIPTION": "", "IS_LOCKED": False}}

    def p(value, kind):
        return {"type": kind, "value": np.asarray(value), "description": "", "is_locked": False}

    fp["USED"] = p([1], 2)
    fp["TYPE"] = p([plate_type], 2)
    fp["CORNERS"] = p(np.asarray(corners_mm, float).T[:, :, None], 4)
    fp["ORIGIN"] = p(np.asarray(origin, float)[:, None], 4)
    fp["CHANNEL"] = p(np.arange(1, n_ch + 1)[:, None], 2)
    if cal is not None:
        fp["CAL_MATRIX"] = p(cal[:, :, None], 4)
    if poly is not None:
        fp["FPCOPPOLY"] = p(poly[:, None], 4)
    c["parameters"]["FORCE_PLATFORM"] = fp
    path = tmp_path / name
    c.write(str(path))
    return path


def _stance_channels(n, rng, plate_type):
    """Plausible stance-like raw channels: Fz ramps 0 -> 800 N -> 0 (with zero-load samples)."""
    t = np.linspace(0, 1, n)
    fz = np.clip(800 * np.sin(np.pi * (1.2 * t - 0.1)), 0, None)
    if plate_type == 1:  # Fx Fy Fz COPx COPy Tz (COP in mm about the centre)
        return np.column_stack([0.1 * fz, -0.05 * fz, fz, 50 * np.cos(3 * t), 120 * t - 60, 2000 * np.sin(5 * t)])
    if plate_type == 3:  # fx12 fx34 fy14 fy23 fz1..fz4
        w = rng.uniform(0.15, 0.35, (n, 4))
        w /= w.sum(axis=1, keepdims=True)
        return np.column_stack([0.05 * fz, 0.04 * fz, -0.03 * fz, -0.02 * fz, *(w * fz[:, None]).T])
    return np.column_stack([0.1 * fz, -0.05 * fz, fz, 30 * fz + rng.normal(0, 100, n), -40 * fz, 500 * np.sin(7 * t)])


CORNERS = [[600, 400, 0], [0, 400, 0], [0, 0, 0], [600, 0, 0]]


@pytest.mark.parametrize("plate_type", [1, 2, 3, 4])
def test_synthetic_plate_types_match_ezc3d(tmp_path, plate_type):
    rng = np.random.default_rng(plate_type)
    channels = _stance_channels(20 * 10, rng, plate_type)
    cal = poly = None
    if plate_type == 4:
        cal = np.eye(6) + rng.normal(0, 0.02, (6, 6))
    if plate_type == 3:
        poly = rng.normal(0, 1e-7, 12)
    origin = [120.0, 200.0, -40.0] if plate_type == 3 else [1.0, -2.0, -40.0]
    path = _synthetic(tmp_path, plate_type, channels, origin, CORNERS, cal, poly)
    trial = read_c3d(path)
    assert trial.force_plates[0].type == plate_type
    _compare_with_ezc3d(path, trial, normal_free_moment=plate_type == 3)


def test_cop_threshold_is_configurable(tmp_path):
    channels = _stance_channels(200, np.random.default_rng(0), 2)
    path = _synthetic(tmp_path, 2, channels, [0, 0, -40], CORNERS)
    fz = read_c3d(path).force_plates[0].analog.force[:, 2]
    for thr in (10.0, 300.0):
        cop = read_c3d(path, cop_threshold=thr).force_plates[0].analog.cop
        assert np.array_equal(np.isnan(cop[:, 0]), np.abs(fz) < thr)


def test_point_rate_wrench_is_the_decimated_analog_wrench(tmp_path):
    """A slowly varying load: the point-rate force equals the analog force at each frame's first sample."""
    t = np.arange(200) / 1000.0
    fz = 600 + 100 * np.sin(2 * np.pi * 2 * t)  # 2 Hz, far below the 50 Hz point Nyquist
    channels = np.column_stack([0.1 * fz, 0.0 * fz, fz, 20 * fz, -30 * fz, 0 * fz])
    path = _synthetic(tmp_path, 2, channels, [0, 0, -40], CORNERS)
    plate = read_c3d(path).force_plates[0]
    assert plate.point.force.shape == (20, 3) and plate.point.rate == 100
    err = np.abs(plate.point.force - plate.analog.force[::10]).max(axis=1)
    assert err[2:-2].max() < 0.2 and err.max() < 2.0  # FIR ripple inside, padding effect at the ends
    assert np.allclose(plate.point.cop[2:-2], plate.analog.cop[::10][2:-2], rtol=0, atol=1e-4)


@pytest.mark.parametrize("bad_type", [11, 12, 21, 9, 0])
def test_unsupported_plate_types_name_plate_and_type(bad_type):
    fp = {"USED": [2], "TYPE": [2, bad_type], "CORNERS": np.zeros((3, 4, 2)), "ORIGIN": np.zeros((3, 2)), "CHANNEL": np.ones((6, 2))}
    with pytest.raises(UnsupportedError) as err:
        fpmod.plate_specs(fp, 12, "trial.c3d")
    assert "force plate 2" in str(err.value) and str(bad_type) in str(err.value) and "trial.c3d" in str(err.value)


def test_plate_channel_out_of_range_is_a_format_error():
    corners = np.asarray(CORNERS, float).T[:, :, None]
    fp = {"USED": [1], "TYPE": [2], "CORNERS": corners, "ORIGIN": np.zeros((3, 1)), "CHANNEL": np.array([[1, 2, 3, 4, 5, 9]]).T}
    with pytest.raises(FileFormatError, match="force plate 1.*channel 9.*6 analog channels"):
        fpmod.plate_specs(fp, 6, "trial.c3d")


def test_degenerate_corners_are_a_format_error():
    fp = {"USED": [1], "TYPE": [2], "CORNERS": np.zeros((3, 4, 1)), "ORIGIN": np.zeros((3, 1)), "CHANNEL": np.arange(1, 7)[:, None]}
    with pytest.raises(FileFormatError, match="degenerate"):
        fpmod.plate_specs(fp, 6, "trial.c3d")


def test_plate_frame_is_a_rotation_with_c3d_corner_rule():
    r = fpmod.plate_frame(np.asarray(CORNERS, float))
    assert np.allclose(r @ r.T, np.eye(3)) and np.linalg.det(r) == pytest.approx(1.0)
    # x = c0 - c1 = +X lab, y = c0 - c3 = +Y lab, z = x × y = +Z lab
    assert np.allclose(r, np.eye(3))


@pytest.mark.parametrize("path", REAL_C3D, ids=lambda p: p.name)
def test_data_section_decoding_equals_ezc3d(path):
    """gaitid's numpy decoder (Intel/DEC, float/integer files) gives ezc3d 1.7.2's points, validity and analogs."""
    from gaitid.io.c3d_check import check_c3d, read_data

    layout = check_c3d(path)
    data = read_data(path, layout)
    c = ezc3d.c3d(str(path))
    points = np.transpose(c["data"]["points"][:3], (2, 1, 0))
    assert np.array_equal(np.isnan(points), np.isnan(data.points))
    assert np.array_equal(points[~np.isnan(points)], data.points[~np.isnan(data.points)])
    assert np.array_equal(c["data"]["meta_points"]["residuals"][0].T >= 0, data.valid)
    analogs = c["data"]["analogs"][0].T
    assert analogs.shape == data.analogs.shape or analogs.size == data.analogs.size == 0
    assert np.array_equal(analogs, data.analogs) or analogs.size == 0


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    turn=st.integers(0, 3),
    z_down=st.booleans(),
    fx=st.floats(-200, 200), fy=st.floats(-200, 200), fz=st.floats(50, 1500),
    u=st.floats(-0.45, 0.45), v=st.floats(-0.45, 0.45), tz=st.floats(-20, 20),
    ox=st.floats(-3, 3), oy=st.floats(-3, 3), oz=st.floats(-60, -20),
)
def test_known_wrench_is_recovered_from_type2_channels(turn, z_down, fx, fy, fz, u, v, tz, ox, oy, oz):
    """Closed form: channels made from a known GRF, COP and free moment give them back (any plate orientation)."""
    # a 600 x 400 mm plate at (1000, 500) mm, its corners listed so the plate axes point anywhere in the floor
    half = np.array([[300, 200], [-300, 200], [-300, -200], [300, -200]], float)
    ang = turn * np.pi / 2
    rot2 = np.array([[np.cos(ang), -np.sin(ang)], [np.sin(ang), np.cos(ang)]])
    xy = half @ rot2.T
    if z_down:
        xy = xy[[1, 0, 3, 2]]  # mirrored order: plate z axis points down (AMTI style)
    corners = np.column_stack([xy + [1000.0, 500.0], np.zeros(4)])
    r = fpmod.plate_frame(corners)
    centre = corners.mean(axis=0)
    force = np.array([fx, fy, fz])  # N, on the subject, lab
    cop = centre + np.array([u * 500, v * 300, 0.0])  # mm, on the surface
    free = np.array([0.0, 0.0, tz * 1e3])  # N.mm about the COP, lab
    origin = np.array([ox, oy, oz])  # plate frame, mm, sensor origin -> surface centre
    m_centre = np.cross(cop - centre, force) + free  # lab, about the surface centre
    f_p, m_c_p = force @ r, m_centre @ r
    m_origin_p = m_c_p - np.cross(f_p, origin)  # what the sensor measures about its origin
    channels = np.tile(np.concatenate([f_p, m_origin_p]), (10, 1))
    spec = fpmod.PlateSpec(1, 2, corners, origin, np.arange(6), None, None)
    plate = fpmod.compute_plate(channels, spec, analog_rate=1000, point_rate=100, len_scale=1e-3, f_scale=1.0)
    assert np.allclose(plate.analog.force, force, atol=1e-9)
    assert np.allclose(plate.analog.cop, cop * 1e-3, atol=1e-9)
    assert np.allclose(plate.analog.free_moment, free * 1e-3, atol=1e-9)
    assert np.allclose(plate.point.force, force, atol=1e-9)
    assert np.allclose(plate.point.cop, cop * 1e-3, atol=1e-9)
