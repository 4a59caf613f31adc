"""Bad input never crashes and never gives silent garbage: a gaitid error naming the file and the problem.

The corrupted-parameter cases reproduce mutants found by tests/test_fuzz_c3d.py
that made ezc3d 1.7.2 segfault or hang; they run read_c3d in a child process so
a regression fails the test instead of killing pytest.
"""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import ezc3d
import numpy as np
import pytest

from gaitid.core.errors import DataError, FileFormatError, GaitIDError, UnsupportedError
from gaitid.io.c3d import read_c3d
from gaitid.io.c3d_check import check_c3d
from tests.conftest import realdata_path

REPO = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- path-level problems


def test_missing_file(tmp_path):
    p = tmp_path / "nope.c3d"
    with pytest.raises(FileFormatError, match="file not found") as err:
        read_c3d(p)
    assert str(p) in str(err.value)


def test_directory(tmp_path):
    with pytest.raises(FileFormatError, match="is a directory"):
        read_c3d(tmp_path)


def test_empty_file(tmp_path):
    p = tmp_path / "empty.c3d"
    p.write_bytes(b"")
    with pytest.raises(FileFormatError, match="empty"):
        read_c3d(p)


def test_text_file_is_not_c3d(tmp_path):
    p = tmp_path / "notes.c3d"
    p.write_text("subject,mass\nA,70\n" * 100)
    with pytest.raises(FileFormatError, match="not a C3D file"):
        read_c3d(p)


def test_file_shorter_than_a_header(tmp_path):
    p = tmp_path / "short.c3d"
    p.write_bytes(b"\x02\x50" + b"\x00" * 100)
    with pytest.raises(FileFormatError, match="shorter than a C3D header"):
        read_c3d(p)


@pytest.mark.parametrize("fraction", [0.5, 0.9, 0.999])
def test_truncated_real_file(tmp_path, fraction):
    """ezc3d alone reads a half file without complaint; gaitid says it is truncated."""
    src = realdata_path("c3d-parser/MH0222_BP06.c3d")
    data = src.read_bytes()
    p = tmp_path / "cut.c3d"
    p.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(FileFormatError, match="truncated") as err:
        read_c3d(p)
    assert "cut.c3d" in str(err.value)


def test_input_file_is_never_modified(tmp_path):
    src = realdata_path("btkdata/Eb015pi.c3d")
    before = src.read_bytes()
    read_c3d(src)
    assert src.read_bytes() == before


# ---------------------------------------------------------------- corrupted parameter sections


def _records(data: bytes) -> dict[str, tuple[int, int, int]]:
    """``{'GROUP:NAME' or 'GROUP': (record start, name length, data start)}`` walking the parameter section."""
    base = (data[0] - 1) * 512
    pos, end = base + 4, base + data[base + 2] * 512
    groups, raw = {}, []
    while pos < end:
        n, gid = struct.unpack_from("<bb", data, pos)
        if n == 0:
            break
        n = abs(n)
        name = data[pos + 2 : pos + 2 + n].decode("latin-1")
        (off,) = struct.unpack_from("<h", data, pos + 2 + n)
        body = pos + 4 + n
        if gid < 0:
            groups[-gid] = name
            raw.append((name, pos, n, body))
        else:
            raw.append(((gid, name), pos, n, body + 2 + data[body + 1]))
        if off == 0:
            break
        pos += 2 + n + off
    out = {}
    for key, pos, n, start in raw:
        out[key if isinstance(key, str) else f"{groups[key[0]]}:{key[1]}"] = (pos, n, start)
    return out


def _corrupt(rel: str, tmp_path: Path, edit) -> Path:
    data = bytearray(realdata_path(rel).read_bytes())
    edit(data, _records(bytes(data)))
    p = tmp_path / ("corrupt-" + Path(rel).name)
    p.write_bytes(bytes(data))
    return p


def _read_in_child(paths: list[Path]) -> list[str]:
    """read_c3d each path in one child process (one start-up); one output line per path."""
    code = (
        "import sys\nfrom gaitid.core.errors import GaitIDError\nfrom gaitid.io.c3d import read_c3d\n"
        "for p in sys.argv[1:]:\n"
        "    try:\n        read_c3d(p); print('TRIAL', flush=True)\n"
        "    except GaitIDError as e:\n        print('GAITID', type(e).__name__, e, flush=True)\n"
    )
    r = subprocess.run([sys.executable, "-c", code, *map(str, paths)], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert r.returncode == 0, f"child died with code {r.returncode} after {r.stdout!r}: {r.stderr[-500:]}"
    lines = r.stdout.strip().splitlines()
    assert len(lines) == len(paths)
    return lines


CASES = {
    # group/parameter name corrupted: ANALOG:SCALE disappears (ezc3d indexes it: segfault)
    "analog-scale-renamed": ("btkdata/Gait.c3d", lambda d, r: d.__setitem__(r["ANALOG:SCALE"][0] + 3, ord("F")), "ANALOG:SCALE"),
    # a description length that runs into the next record (ezc3d: segfault or hang)
    "description-overrun": (
        "btkdata/PiG_Calibration3_FF.c3d",
        lambda d, r: d.__setitem__(r["PROCESSING:LSoleDelta"][2] + 4, 248),
        "description runs past",
    ),
    # a parameter turned into group id -128 (ezc3d: segfault)
    "group-id-minus-128": ("btkdata/PiG_Calibration3_FF.c3d", lambda d, r: d.__setitem__(r["POINT:DESCRIPTIONS"][0] + 1, 128), "-128"),
    # a parameter turned into a group reusing another group's id (ezc3d: segfault)
    "group-id-reused": ("btkdata/PlugInC3D.c3d", lambda d, r: d.__setitem__(r["POINT:LABELS"][0] + 1, 255), "reuses the id"),
    # a parameter turned into a group with a far id: ezc3d fills the gap with nameless groups (segfault)
    "group-id-gap": ("btkdata/PlugInC3D.c3d", lambda d, r: d.__setitem__(r["POINT:DESCRIPTIONS"][0] + 1, 200), "without gaps"),
    # a text parameter with 0 dimensions (ezc3d reads dims[0]: segfault)
    "text-without-dimensions": (
        "btkdata/PlugInC3D.c3d",
        lambda d, r: d.__setitem__(r["SUBJECTS:MODELS"][0] + 4 + r["SUBJECTS:MODELS"][1] + 1, 0),
        "has no dimensions",
    ),
    # a parameter's data type changed from float to byte (ezc3d: hang)
    "type-changed": (
        "btkdata/PiG_Calibration3_FF.c3d",
        lambda d, r: d.__setitem__(r["PROCESSING:LAsisTrocanterDistance"][0] + 4 + r["PROCESSING:LAsisTrocanterDistance"][1], 1),
        "runs past its record",
    ),
}


@pytest.fixture(scope="module")
def corrupted_outputs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("corrupt")
    paths = {}
    for case, (rel, edit, _) in CASES.items():
        (tmp / case).mkdir()
        paths[case] = _corrupt(rel, tmp / case, edit)
    return paths, dict(zip(paths, _read_in_child(list(paths.values()))))


@pytest.mark.parametrize("case", sorted(CASES))
def test_corrupted_parameter_section_gives_gaitid_error(corrupted_outputs, case):
    paths, outputs = corrupted_outputs
    out = outputs[case]
    assert out.startswith("GAITID FileFormatError"), out
    assert CASES[case][2] in out and paths[case].name in out


def test_processor_mips_is_unsupported(tmp_path):
    data = bytearray(realdata_path("btkdata/Eb015pi.c3d").read_bytes())
    data[(data[0] - 1) * 512 + 3] = 86
    p = tmp_path / "mips.c3d"
    p.write_bytes(bytes(data))
    with pytest.raises(UnsupportedError, match="big-endian"):
        read_c3d(p)


def test_header_point_count_disagrees_with_parameters(tmp_path):
    data = bytearray(realdata_path("btkdata/Eb015pi.c3d").read_bytes())
    data[2:4] = struct.pack("<H", 27)  # header word 2: number of points (file has 26)
    p = tmp_path / "points.c3d"
    p.write_bytes(bytes(data))
    with pytest.raises(FileFormatError, match="header says 27 points but POINT:USED says 26"):
        read_c3d(p)


def test_check_reports_layout_of_real_files():
    layout = check_c3d(realdata_path("btkdata/Gait.c3d"))  # DEC floats
    assert layout.processor == 85 and layout.frame_rate == pytest.approx(100.0)
    assert layout.n_points == 33 and layout.n_frames == 487 and layout.analog_samples_per_frame == 10
    assert layout.params["POINT"]["RATE"][0] == pytest.approx(100.0)


# ---------------------------------------------------------------- content problems (synthetic files written by ezc3d)


def _write(tmp_path, name, points, analogs=None, plate_type=None, analog_labels=None):
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([100.0])
    c["parameters"]["POINT"]["LABELS"]["value"] = [f"M{i}" for i in range(points.shape[1])]
    c["data"]["points"] = points
    if analogs is not None:
        c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([1000.0])
        c["parameters"]["ANALOG"]["LABELS"]["value"] = analog_labels or [f"A{i}" for i in range(analogs.shape[1])]
        c["data"]["analogs"] = analogs
    if plate_type is not None:
        def prm(v, t):
            return {"type": t, "value": np.asarray(v), "description": "", "is_locked": False}

        corners = np.array([[600, 400, 0], [0, 400, 0], [0, 0, 0], [600, 0, 0]], float).T[:, :, None]
        c["parameters"]["FORCE_PLATFORM"] = {
            "__METADATA__": {"DESCRIPTION": "", "IS_LOCKED": False},
            "USED": prm([1], 2),
            "TYPE": prm([plate_type], 2),
            "CORNERS": prm(corners, 4),
            "ORIGIN": prm(np.array([[0.0, 0.0, -40.0]]).T, 4),
            "CHANNEL": prm(np.arange(1, 7)[:, None], 2),
        }
    p = tmp_path / name
    c.write(str(p))
    return p


def _points(n_frames=20, n=3):
    pts = np.ones((4, n, n_frames))
    pts[:3] = np.linspace(100, 1500, n)[None, :, None]
    return pts


def test_file_without_markers(tmp_path):
    p = _write(tmp_path, "nomarkers.c3d", np.ones((4, 0, 20)), analogs=np.ones((1, 6, 200)))
    with pytest.raises(DataError, match="no marker") as err:
        read_c3d(p)
    assert "nomarkers.c3d" in str(err.value)


def test_file_whose_markers_are_all_nan(tmp_path):
    pts = _points()
    pts[:3] = np.nan
    p = _write(tmp_path, "allnan.c3d", pts)
    with pytest.raises(DataError, match="no marker data"):
        read_c3d(p)


def test_nan_only_plate_channel_names_plate_and_channel(tmp_path):
    analogs = np.full((1, 6, 200), 100.0)
    analogs[0, 2] = np.nan
    p = _write(tmp_path, "nanplate.c3d", _points(), analogs, plate_type=2, analog_labels=["Fx", "Fy", "Fz", "Mx", "My", "Mz"])
    with pytest.raises(DataError, match="force plate 1: analog channel 'Fz' holds no finite sample"):
        read_c3d(p)


@pytest.mark.parametrize("plate_type", [11, 12, 21])
def test_unsupported_plate_type_in_a_file(tmp_path, plate_type):
    p = _write(tmp_path, f"type{plate_type}.c3d", _points(), np.ones((1, 6, 200)), plate_type=plate_type)
    with pytest.raises(UnsupportedError, match=f"force plate 1 is type {plate_type} .*which gaitid does not read") as err:
        read_c3d(p)
    assert p.name in str(err.value)


@pytest.mark.parametrize("plate_type", [5, 6, 7])
def test_calibrated_plate_types_without_their_matrix_name_plate_type_and_shape(tmp_path, plate_type):
    p = _write(tmp_path, f"type{plate_type}.c3d", _points(), np.ones((1, 12, 200)), plate_type=plate_type)
    with pytest.raises(FileFormatError, match=f"force plate 1 \\(type {plate_type}\\)") as err:
        read_c3d(p)
    assert p.name in str(err.value)


def test_every_error_is_a_gaitid_error(tmp_path):
    for bad in (tmp_path / "missing.c3d", tmp_path):
        with pytest.raises(GaitIDError):
            read_c3d(bad)
