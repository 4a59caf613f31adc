"""POINT:UNITS is honoured (mm, cm, m): a real file rewritten in other length units reads back equal."""

from __future__ import annotations

import ezc3d
import numpy as np
import pytest

from gaitid.io.c3d import read_c3d
from tests.conftest import realdata_path

MM_PER = {"mm": 1.0, "cm": 10.0, "m": 1000.0}


def _rewrite_in(src, dst, unit):
    """Points, corners, origin and moment channels converted from mm to ``unit`` (forces stay in N)."""
    k = MM_PER[unit]
    c = ezc3d.c3d(str(src))
    labels = c["parameters"]["POINT"]["LABELS"]["value"]
    outputs = set()
    for g in ("ANGLES", "FORCES", "MOMENTS", "POWERS"):
        outputs |= set(c["parameters"]["POINT"].get(g, {}).get("value", []))
    pts = c["data"]["points"]
    for i, lab in enumerate(labels):
        if lab not in outputs:  # model outputs are not lengths
            pts[:3, i] /= k
    c["data"]["points"] = pts
    c["parameters"]["POINT"]["UNITS"]["value"] = [unit]
    fp = c["parameters"]["FORCE_PLATFORM"]
    fp["CORNERS"]["value"] = fp["CORNERS"]["value"] / k
    fp["ORIGIN"]["value"] = fp["ORIGIN"]["value"] / k
    an = c["data"]["analogs"]
    for plate in range(fp["CHANNEL"]["value"].shape[1]):
        for ch in fp["CHANNEL"]["value"][3:6, plate]:
            an[0, ch - 1] /= k  # N.mm -> N.unit
    c["data"]["analogs"] = an
    c.write(str(dst))


@pytest.mark.parametrize("unit", ["cm", "m"])
def test_point_units_are_honoured(tmp_path, unit):
    src = realdata_path("c3d-parser/MH0222_BP06.c3d")
    dst = tmp_path / f"in_{unit}.c3d"
    _rewrite_in(src, dst, unit)
    a, b = read_c3d(src), read_c3d(dst)
    assert np.nanmax(np.abs(a.markers - b.markers)) < 1e-6
    assert np.nanmax(np.abs(a.virtual_points - b.virtual_points)) < 1e-6
    lo = a.model_outputs["LAnkleMoment"].values
    assert np.allclose(b.model_outputs["LAnkleMoment"].values, lo, equal_nan=True, atol=1e-6)
    for p, q in zip(a.force_plates, b.force_plates):
        assert np.allclose(p.corners, q.corners, atol=1e-7) and np.allclose(p.origin, q.origin, atol=1e-7)
        assert np.allclose(p.analog.force, q.analog.force, atol=1e-3)
        assert np.allclose(p.analog.cop, q.analog.cop, atol=1e-6, equal_nan=True)
        assert np.allclose(p.analog.free_moment, q.analog.free_moment, atol=1e-3, equal_nan=True)
