"""Issue 13: every C3D force-plate type (1-7, Kistler COP correction) and plate offsets (ZERO, baseline).

Each type: a known load (force, centre of pressure, free moment) is turned into the
type's channels through the inverse of its equations (and calibration matrix), written
to a C3D file with ezc3d, and read back with gaitid: the force, COP and free moment
must come back exactly (float32 storage).
"""

from __future__ import annotations

import ezc3d
import numpy as np
import pytest

from gaitid.io import forceplates as fpmod
from gaitid.io.c3d import read_c3d

CORNERS = np.array([[600, 400, 0], [0, 400, 0], [0, 0, 0], [600, 0, 0]], float)  # mm, plate z up in the lab
N_FRAMES, SPF = 40, 10  # 100 Hz points, 1000 Hz analogs


def write_plate_file(path, plate_type, channels, origin, cal=None, poly=None, zero=None, point_rate=100.0):
    """A C3D with 3 markers and one plate of ``plate_type`` whose channels are ``channels`` (n_samples, n_ch)."""
    n_samples, n_ch = channels.shape
    n_frames = n_samples // SPF
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([point_rate])
    c["parameters"]["POINT"]["LABELS"]["value"] = ["A", "B", "C"]
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    pts = np.ones((4, 3, n_frames))
    pts[:3] = np.array([[100.0, 900.0, 1500.0], [200, 300, 1000], [50, 60, 900]]).T[:, :, None]
    c["data"]["points"] = pts
    c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([point_rate * SPF])
    c["parameters"]["ANALOG"]["LABELS"]["value"] = [f"ch{i}" for i in range(n_ch)]
    c["data"]["analogs"] = channels.T[None]

    def p(value, kind):
        return {"type": kind, "value": np.asarray(value), "description": "", "is_locked": False}

    fp = {"__METADATA__": {"DESCRIPTION": "", "IS_LOCKED": False}}
    fp["USED"] = p([1], 2)
    fp["TYPE"] = p([plate_type], 2)
    fp["CORNERS"] = p(CORNERS.T[:, :, None], 4)
    fp["ORIGIN"] = p(np.asarray(origin, float)[:, None], 4)
    fp["CHANNEL"] = p(np.arange(1, n_ch + 1)[:, None], 2)
    if cal is not None:
        fp["CAL_MATRIX"] = p(cal[:, :, None], 4)
    if poly is not None:  # stored (6, 2, plates): Px1..Px6 then Py1..Py6
        fp["FPCOPPOLY"] = p(np.column_stack([poly[:6], poly[6:]])[:, :, None], 4)
    if zero is not None:
        fp["ZERO"] = p(zero, 2)
    c["parameters"]["FORCE_PLATFORM"] = fp
    c.write(str(path))
    return path


def known_load(n, rng):
    """Force (N), COP about the surface centre (mm) and free moment Tz (N.mm), plate frame; always loaded."""
    t = np.linspace(0, 1, n)
    f = np.column_stack([40 * np.sin(3 * t), -30 * np.cos(2 * t), 700 + 100 * np.sin(5 * t)])
    cop = np.column_stack([150 * np.cos(4 * t) - 20, 120 * t - 60, np.zeros(n)])
    tz = 3000 * np.sin(7 * t) + rng.normal(0, 50, n)
    return f, cop, tz


def _moment_about_centre(f, cop, tz):
    m = np.cross(cop, f)
    m[:, 2] += tz
    return m


def _sensor_map(kind, a, b):
    """Matrix A with [F; M about the sensor origin] = A @ channels, from the C3D/Kistler sensor layout
    (sensor 1 at (+a, +b), 2 at (-a, +b), 3 at (-a, -b), 4 at (+a, -b)); built from the sensor positions,
    not from the reader's formulas."""
    pos = np.array([[a, b, 0], [-a, b, 0], [-a, -b, 0], [a, -b, 0]], float)
    if kind == "12":  # fx1 fy1 fz1 ... fx4 fy4 fz4: each sensor a force at its position
        cols = []
        for k in range(4):
            for axis in range(3):
                e = np.zeros(3)
                e[axis] = 1.0
                cols.append(np.concatenate([e, np.cross(pos[k], e)]))
        return np.array(cols).T
    # 8 channels fx12 fx34 fy14 fy23 fz1 fz2 fz3 fz4: a shared channel acts at the mean position of its pair
    pairs = [((0, 1), 0), ((2, 3), 0), ((0, 3), 1), ((1, 2), 1)]
    cols = []
    for (i, j), axis in pairs:
        e = np.zeros(3)
        e[axis] = 1.0
        cols.append(np.concatenate([e, np.cross((pos[i] + pos[j]) / 2, e)]))
    for k in range(4):
        cols.append(np.concatenate([[0, 0, 1.0], np.cross(pos[k], [0, 0, 1.0])]))
    return np.array(cols).T


def channels_for(plate_type, f, m_centre, origin, cal, rng):
    """The type's stored channels for a wrench (F, moment about the surface centre), plate frame."""
    o = np.asarray(origin, float)
    if plate_type in (2, 4, 5):
        m_o = m_centre - np.cross(f, o)  # the reader's M_c = M_o + F x origin
        target = np.hstack([f, m_o])
        if plate_type == 2:
            return target
        return target @ np.linalg.pinv(cal).T  # cal @ raw = target (type 5: 6x8, least-norm raw)
    a, b, az0 = o
    m_o = m_centre - np.cross(f, [0, 0, az0])
    A = _sensor_map("12" if plate_type == 6 else "8", a, b)
    sensors = np.hstack([f, m_o]) @ np.linalg.pinv(A).T
    if plate_type == 3:
        return sensors
    return sensors @ np.linalg.inv(cal).T


def _lab(plate, f, cop, tz):
    rot = fpmod.plate_frame(CORNERS)
    centre = CORNERS.mean(axis=0)
    return f @ rot.T, (cop @ rot.T + centre) * 1e-3, np.column_stack([0 * tz, 0 * tz, tz * 1e-3]) @ rot.T


def _check(plate, f, cop, tz):
    force, cop_lab, free = _lab(plate, f, cop, tz)
    w = plate.analog
    np.testing.assert_allclose(w.force, force, rtol=0, atol=2e-3 * 800)
    np.testing.assert_allclose(w.cop, cop_lab, rtol=0, atol=1e-5)  # 0.01 mm
    np.testing.assert_allclose(w.free_moment, free, rtol=0, atol=2e-3)  # N.m


@pytest.mark.parametrize("plate_type", [1, 2, 3, 4, 5, 6, 7])
def test_every_plate_type_recovers_a_known_load(tmp_path, plate_type):
    rng = np.random.default_rng(plate_type)
    n = N_FRAMES * SPF
    f, cop, tz = known_load(n, rng)
    origin = [120.0, 200.0, -40.0] if plate_type in (3, 6, 7) else [1.5, -2.0, -40.0]
    k = {4: 6, 5: 6, 6: 12, 7: 8}.get(plate_type)
    cal = None
    if plate_type == 5:
        cal = rng.normal(0, 1, (6, 8)) + np.hstack([np.eye(6) * 3, np.zeros((6, 2))])
    elif k:
        cal = np.eye(k) + rng.normal(0, 0.05, (k, k))
    if plate_type == 1:
        channels = np.column_stack([f, cop[:, 0], cop[:, 1], tz])
    else:
        channels = channels_for(plate_type, f, _moment_about_centre(f, cop, tz), origin, cal, rng)
    path = write_plate_file(tmp_path / f"type{plate_type}.c3d", plate_type, channels, origin, cal)
    trial = read_c3d(path)
    plate = trial.force_plates[0]
    assert plate.type == plate_type and len(plate.channels) == fpmod.N_CHANNELS[plate_type]
    assert plate.offset_note == ""  # loaded all the time: nothing subtracted
    _check(plate, f, cop, tz)


# Kistler 9281E11's published COP correction coefficients (Kistler manual, "COP correction algorithm")
KISTLER_PX = [2.51997e-15, -2.18826e-10, -2.69254e-07, -4.85912e-11, 4.55731e-06, -4.18892e-02]
KISTLER_PY = [2.83750e-15, -1.00051e-10, -2.05349e-06, -1.16374e-10, 4.71553e-06, 6.89265e-02]


@pytest.mark.parametrize("plate_type", [3, 7])
def test_kistler_cop_correction(tmp_path, plate_type):
    rng = np.random.default_rng(30 + plate_type)
    n = N_FRAMES * SPF
    f, measured, tz_measured = known_load(n, rng)
    origin = [120.0, 200.0, -40.0]
    cal = np.eye(8) + rng.normal(0, 0.05, (8, 8)) if plate_type == 7 else None
    channels = channels_for(plate_type, f, _moment_about_centre(f, measured, tz_measured), origin, cal, rng)
    poly = np.array(KISTLER_PX + KISTLER_PY)
    path = write_plate_file(tmp_path / "kistler.c3d", plate_type, channels, origin, cal, poly=poly)
    plate = read_c3d(path).force_plates[0]
    x, y = measured[:, 0], measured[:, 1]  # mm
    px, py = KISTLER_PX, KISTLER_PY
    true = measured.copy()
    true[:, 0] = x - ((px[0] * y**4 + px[1] * y**2 + px[2]) * x**3 + (px[3] * y**4 + px[4] * y**2 + px[5]) * x)
    true[:, 1] = y - ((py[0] * x**4 + py[1] * x**2 + py[2]) * y**3 + (py[3] * x**4 + py[4] * x**2 + py[5]) * y)
    assert np.abs(true - measured).max() > 5.0  # the correction matters here (mm)
    # the moment about the centre is what the plate measured; the free moment follows the corrected COP
    m_c = _moment_about_centre(f, measured, tz_measured)
    tz_true = m_c[:, 2] + np.cross(f, true)[:, 2]
    _check(plate, f, true, tz_true)
    without = read_c3d(write_plate_file(tmp_path / "plain.c3d", plate_type, channels, origin, cal)).force_plates[0]
    _check(without, f, measured, tz_measured)


# ---- offsets


def _stepping(n, rng, offset_n=0.0):
    """Type-2 channels (N, N.mm): two foot contacts of ~700 N separated by unloaded stretches reading
    ``offset_n`` (plus 0.5 N noise)."""
    t = np.arange(n) / (100.0 * SPF)
    fz = np.zeros(n)
    for start, stop in ((0.3, 0.9), (1.4, 2.0)):
        on = (t >= start) & (t < stop)
        fz[on] = 700 * np.sin(np.pi * (t[on] - start) / (stop - start))
    ch = np.column_stack([0.1 * fz, -0.05 * fz, fz, 40 * fz, -30 * fz, 0 * fz])
    ch[:, 2] += offset_n + rng.normal(0, 0.5, n)
    return ch, fz


def test_unloaded_baseline_is_detected_and_subtracted(tmp_path):
    rng = np.random.default_rng(5)
    n = 250 * SPF  # 2.5 s
    ch, fz = _stepping(n, rng, offset_n=22.0)
    trial = read_c3d(write_plate_file(tmp_path / "offset.c3d", 2, ch, [0, 0, -40]))
    plate = trial.force_plates[0]
    assert plate.offset[2] == pytest.approx(22.0, abs=0.2) and np.allclose(plate.offset[[0, 1, 3, 4, 5]], 0, atol=1e-6)
    assert "unloaded baseline of +22.0 N subtracted" in plate.offset_note
    assert any("force plate 1: unloaded baseline" in w for w in trial.warnings)
    np.testing.assert_allclose(plate.analog.force[:, 2], fz, atol=2.5)
    # the two contacts are apart again: the plate reads below 10 N between them
    gap = (np.arange(n) >= 1000) & (np.arange(n) < 1300)
    assert np.abs(plate.analog.force[gap, 2]).max() < 3.0
    raw = read_c3d(tmp_path / "offset.c3d", plate_offsets=False).force_plates[0]
    assert raw.analog.force[gap, 2].min() > 19.0 and raw.offset_note == ""


def test_a_negative_baseline_is_reported_and_left_unless_asked(tmp_path):
    rng = np.random.default_rng(9)
    ch, fz = _stepping(250 * SPF, rng, offset_n=-18.0)
    path = write_plate_file(tmp_path / "negative.c3d", 2, ch, [0, 0, -40])
    trial = read_c3d(path)
    plate = trial.force_plates[0]
    assert not plate.offset.any() and plate.offset_note.startswith("reads -18.0 N unloaded")
    assert any(w.startswith("force plate 1: reads -18.0 N unloaded") for w in trial.warnings)
    fixed = read_c3d(path, plate_offsets="all").force_plates[0]
    assert fixed.offset[2] == pytest.approx(-18.0, abs=0.2) and "unloaded baseline of -18.0 N" in fixed.offset_note
    np.testing.assert_allclose(fixed.analog.force[:, 2], fz, atol=2.5)


def test_a_small_baseline_is_left_alone(tmp_path):
    rng = np.random.default_rng(6)
    ch, fz = _stepping(250 * SPF, rng, offset_n=4.0)  # "a few newtons": below BASELINE_MIN_N
    plate = read_c3d(write_plate_file(tmp_path / "small.c3d", 2, ch, [0, 0, -40])).force_plates[0]
    assert plate.offset_note == "" and not plate.offset.any()


@pytest.mark.parametrize("load", ["standing", "treadmill"])
def test_a_plate_loaded_all_trial_long_is_not_moved(tmp_path, load):
    rng = np.random.default_rng(7)
    n = 300 * SPF
    t = np.arange(n) / 1000.0
    if load == "standing":  # quiet standing: 650 N with sway
        fz = 650 + 4 * np.sin(2 * np.pi * 0.3 * t) + rng.normal(0, 1, n)
    else:  # a treadmill plate: a constant belt load plus steps
        fz = 300 + np.clip(900 * np.sin(2 * np.pi * 0.9 * t), 0, None)
    ch = np.column_stack([0 * fz, 0 * fz, fz, 30 * fz, -20 * fz, 0 * fz])
    plate = read_c3d(write_plate_file(tmp_path / f"{load}.c3d", 2, ch, [0, 0, -40], zero=[1, 10])).force_plates[0]
    assert not plate.offset.any()
    assert "ZERO frames 1-10 not used: the plate is loaded there" in plate.offset_note
    np.testing.assert_allclose(plate.analog.force[:, 2], fz, atol=1e-3)


def test_zero_range_is_applied(tmp_path):
    rng = np.random.default_rng(8)
    ch, fz = _stepping(250 * SPF, rng, offset_n=-15.0)
    ch[:, 3] += 500.0  # a moment offset too (N.mm)
    plate = read_c3d(write_plate_file(tmp_path / "zero.c3d", 2, ch, [0, 0, -40], zero=[1, 20])).force_plates[0]
    assert plate.offset_note.startswith("FORCE_PLATFORM:ZERO frames 1-20 subtracted (the plate read -15.0 N there)")
    assert plate.offset[3] == pytest.approx(500.0, abs=1e-3) and plate.offset[2] == pytest.approx(-15.0, abs=0.2)
    np.testing.assert_allclose(plate.analog.force[:, 2], fz, atol=2.5)
