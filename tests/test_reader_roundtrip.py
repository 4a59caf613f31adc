"""write_c3d then read_c3d gives the same markers, virtual points, model outputs, plates, events and subject."""

from __future__ import annotations

import numpy as np
import pytest

import gaitid
from gaitid.core.errors import FileFormatError, OutputError
from gaitid.io.c3d import read_c3d, write_c3d
from tests.conftest import realdata_path

FILES = [
    "c3d-parser/MH0222_BP06.c3d",  # Vicon float, PiG outputs, 4 plates (2 unloaded)
    "btkdata/Gait.c3d",  # DEC integer file, type-4 plates with calibration matrix
    "btkdata/Eb015pi.c3d",  # integer file, walks along Y
    "ezc3d-testfiles/Qualisys.c3d",  # late first frame (705), 2000 Hz analogs
]


@pytest.mark.parametrize("rel", FILES)
def test_round_trip(tmp_path, rel):
    a = read_c3d(realdata_path(rel))
    out = write_c3d(a, tmp_path / "out.c3d")
    b = read_c3d(out)
    assert (b.point_rate, b.first_frame, b.n_frames) == (a.point_rate, a.first_frame, a.n_frames)
    assert b.marker_labels == a.marker_labels and b.virtual_labels == a.virtual_labels
    assert np.array_equal(np.isnan(a.markers), np.isnan(b.markers))
    assert np.nanmax(np.abs(a.markers - b.markers)) < 1e-6  # float32 mm
    for label, m in a.model_outputs.items():
        n = b.model_outputs[label]
        assert (n.kind, n.unit) == (m.kind, m.unit)
        assert np.allclose(n.values, m.values, rtol=1e-6, atol=1e-6, equal_nan=True)
    assert [p.index for p in b.force_plates] == [p.index for p in a.force_plates]
    for p, q in zip(a.force_plates, b.force_plates):
        assert np.allclose(q.corners, p.corners, atol=1e-7) and np.allclose(q.origin, p.origin, atol=1e-7)
        scale = max(1.0, np.abs(p.analog.force).max())
        assert np.allclose(q.analog.force, p.analog.force, rtol=0, atol=1e-6 * scale)
        loaded = np.isfinite(p.analog.cop[:, 0])
        assert np.array_equal(np.isfinite(q.analog.cop[:, 0]), loaded)
        assert np.allclose(q.analog.cop[loaded], p.analog.cop[loaded], atol=1e-6)
        assert np.allclose(q.analog.free_moment[loaded], p.analog.free_moment[loaded], atol=1e-3)
        assert np.allclose(q.point.force, p.point.force, rtol=0, atol=1e-6 * scale)
    assert [(e.label, e.context, e.frame) for e in b.events] == [(e.label, e.context, e.frame) for e in a.events]
    assert np.allclose([e.time for e in b.events], [e.time for e in a.events], atol=1e-6)
    assert b.subject.mass == a.subject.mass or b.subject.mass == pytest.approx(a.subject.mass)
    assert b.subject.name == a.subject.name


def test_public_api_and_atomic_write(tmp_path):
    a = gaitid.read_c3d(realdata_path("btkdata/Eb015pi.c3d"))
    target = tmp_path / "trial.c3d"
    target.write_bytes(b"old content")
    gaitid.write_c3d(a, target)
    assert target.read_bytes()[1] == 0x50  # replaced by a C3D file
    assert [p.name for p in tmp_path.iterdir()] == ["trial.c3d"]  # no temp file left behind


def test_write_refuses_to_overwrite_the_input(tmp_path):
    src = realdata_path("btkdata/Eb015pi.c3d")
    copy = tmp_path / "in.c3d"
    copy.write_bytes(src.read_bytes())
    a = read_c3d(copy)
    with pytest.raises(OutputError, match="overwrite"):
        write_c3d(a, copy)
    assert copy.read_bytes() == src.read_bytes()


def test_write_needs_c3d_suffix(tmp_path):
    a = read_c3d(realdata_path("btkdata/Eb015pi.c3d"))
    with pytest.raises(FileFormatError, match=r"\.c3d"):
        write_c3d(a, tmp_path / "trial.txt")
