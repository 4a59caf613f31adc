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


def _to_dec(data: bytes) -> bytes:
    """An Intel float C3D rewritten as a DEC (VAX) one: every float x stored as IEEE(4x) with 16-bit halves swapped."""
    import struct

    buf = bytearray(data)

    def dec(offset: int, count: int) -> None:
        vals = np.frombuffer(bytes(buf[offset : offset + 4 * count]), dtype="<f4").astype(np.float64) * 4.0
        raw = vals.astype("<f4").tobytes()
        swapped = np.frombuffer(raw, dtype="<u2").reshape(-1, 2)[:, ::-1].tobytes()
        buf[offset : offset + 4 * count] = swapped

    dec(12, 1)  # header scale factor
    dec(20, 1)  # header frame rate
    base = (buf[0] - 1) * 512
    pos, end = base + 4, base + buf[base + 2] * 512
    while pos < end:
        n, gid = struct.unpack_from("<bb", buf, pos)
        if n == 0:
            break
        n = abs(n)
        (off,) = struct.unpack_from("<h", buf, pos + 2 + n)
        body = pos + 4 + n
        if gid > 0 and struct.unpack_from("<b", buf, body)[0] == 4:
            ndim = buf[body + 1]
            count = int(np.prod(list(buf[body + 2 : body + 2 + ndim]))) if ndim else 1
            dec(body + 2 + ndim, count)
        if off == 0:
            break
        pos += 2 + n + off
    buf[base + 3] = 85
    (words,) = struct.unpack_from("<H", buf, 2 * 8)  # header word 9: data start block
    start = (words - 1) * 512
    dec(start, (len(buf) - start) // 4)
    return bytes(buf)


def test_dec_float_file_reads_like_its_intel_original(tmp_path):
    """DEC (VAX) float files: no real one in the folder, so an Intel float file is converted word by word."""
    src = realdata_path("c3d-parser/MH0222_BP06.c3d")
    dst = tmp_path / "dec.c3d"
    dst.write_bytes(_to_dec(src.read_bytes()))
    a, b = read_c3d(src), read_c3d(dst)
    assert (b.point_rate, b.n_frames, b.first_frame) == (a.point_rate, a.n_frames, a.first_frame)
    assert np.array_equal(np.isnan(a.markers), np.isnan(b.markers))
    assert np.nanmax(np.abs(a.markers - b.markers)) == 0.0
    assert np.array_equal(a.analogs.values, b.analogs.values)
    assert b.subject.mass == a.subject.mass
    for p, q in zip(a.force_plates, b.force_plates):
        assert np.array_equal(p.corners, q.corners)
        assert np.array_equal(p.analog.force, q.analog.force)


@pytest.mark.parametrize("stated, real", [("m", "mm"), ("mm", "m")])
def test_markers_in_another_unit_than_point_units_says_are_refused(tmp_path, stated, real):
    """A file whose POINT:UNITS contradicts its numbers (mm data labelled m: markers 1000 times too
    far apart, kinetics off by orders of magnitude with no warning before) is refused, naming the
    field and the unit the numbers look like."""
    from gaitid.core.errors import DataError
    from tests.c3d_mutations import RawC3D

    source = realdata_path("c3d-parser/MH0222_BP06.c3d")  # stored in mm
    if real == "m":
        _rewrite_in(source, tmp_path / "in_m.c3d", "m")  # honest m
        source = tmp_path / "in_m.c3d"
    c = RawC3D(source.read_bytes())
    c.set_strings("POINT", "UNITS", [stated.encode()])
    bad = tmp_path / "bad.c3d"
    bad.write_bytes(c.to_bytes())
    with pytest.raises(DataError) as err:
        read_c3d(bad)
    text = str(err.value)
    assert f"read in POINT:UNITS = '{stated}'" in text and f"the numbers look like {real}" in text
    assert str(bad) in text


def test_every_real_trial_spans_what_a_person_spans():
    from gaitid.io.marker_units import MAX_EXTENT_M, MIN_EXTENT_M, marker_extent
    from tests.conftest import REAL_C3D

    if not REAL_C3D:
        pytest.skip("real data not available (tests read ../shared/realdata in place)")
    extents = [marker_extent(read_c3d(p).markers) for p in REAL_C3D]
    assert 0.9 < min(extents) and max(extents) < 3.0  # 0.92-2.93 m over the 13 files
    assert MIN_EXTENT_M < min(extents) / 10 and max(extents) * 10 < MAX_EXTENT_M


def test_a_trc_whose_units_are_wrong_is_refused(tmp_path):
    from gaitid.core.errors import DataError
    from gaitid.io.trc import read_trc

    text = realdata_path("opensim-models/subject01_walk1.trc").read_text()
    head = text.splitlines()
    fields = head[2].split("\t")
    assert fields[4].strip() == "mm"
    fields[4] = "m"
    bad = tmp_path / "walk.trc"
    bad.write_text("\n".join([*head[:2], "\t".join(fields), *head[3:]]) + "\n")
    with pytest.raises(DataError, match=r"Units = 'm'.*the numbers look like mm"):
        read_trc(bad)


def test_marker_extent_is_the_median_frame_range_in_either_memory_layout():
    """marker_extent against numpy's nanmax - nanmin per frame and axis, on markers stored frames-first
    or markers-first (the reader's), with gaps and frames of fewer than three markers left out."""
    import warnings

    from gaitid.io.marker_units import marker_extent

    rng = np.random.default_rng(2)
    x = rng.normal(size=(450, 20, 3)) * [0.3, 0.2, 0.5]
    x[rng.random(x.shape[:2]) < 0.2] = np.nan
    x[10:30, 3:] = np.nan  # frames with three markers or fewer
    step = x[:: 450 // 200]
    usable = np.isfinite(step[..., 0]).sum(axis=1) >= 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.median((np.nanmax(step, axis=1) - np.nanmin(step, axis=1))[usable].max(axis=1))
    for layout in (np.ascontiguousarray(x), np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)):
        assert marker_extent(layout) == expected
