"""TRC marker files (Motion Analysis / OpenSim): read into a Trial, write from one.

Layout (tab separated): ``PathFileType 4 (X/Y/Z) name``; a line of header keys
(``DataRate CameraRate NumFrames NumMarkers Units OrigDataRate OrigDataStartFrame
OrigNumFrames``) and a line of their values; ``Frame# Time label<tab><tab><tab>...``;
``<tab><tab>X1 Y1 Z1 X2 ...``; an optional blank line; then one row per frame.
A missing marker is three blank fields. Units ``mm``, ``cm`` or ``m``.

OpenSim's ground is Y up (X forward, Z to the subject's right). Our lab is Z up,
so a Y-up file is rotated by :data:`Y_UP_TO_Z_UP` (x' = x, y' = -z, z' = y: X stays
forward, OpenSim Y becomes Z, a proper rotation, det +1) and the rotation is kept
in ``Trial.lab_rotation`` (file lab -> our lab, ``v_lab = lab_rotation @ v_file``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import FileFormatError, SettingsError
from gaitid.core.trial import Trial
from gaitid.io.atomic import atomic_path, register_input, unchanged_while_read
from gaitid.io.input_files import input_file
from gaitid.io.marker_units import check_marker_extent
from gaitid.io.mot import grid_start

__all__ = ["Y_UP_TO_Z_UP", "UNIT_SCALE", "read_trc", "read_trc_with_time", "write_trc", "up_rotation"]

#: OpenSim ground (Y up) -> gaitid lab (Z up): x' = x, y' = -z, z' = y. Proper rotation
#: (+90 deg about X); ``v_lab = Y_UP_TO_Z_UP @ v_opensim``.
Y_UP_TO_Z_UP = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])

#: metres per file unit
UNIT_SCALE = {"mm": 1e-3, "millimeters": 1e-3, "cm": 1e-2, "centimeters": 1e-2, "m": 1.0, "meters": 1.0}


def up_rotation(up: str) -> np.ndarray:
    """The rotation file lab -> Z-up lab for a file whose vertical axis is ``up`` ('y' or 'z')."""
    if up == "y":
        return Y_UP_TO_Z_UP.copy()
    if up == "z":
        return np.eye(3)
    raise SettingsError(f"up={up!r}: must be 'y' (OpenSim, Y up) or 'z' (already Z up)")


def _fields(line: str) -> list[str]:
    return [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]


def _header(path: Path, lines: list[str]) -> dict[str, str]:
    if len(lines) < 5 or not lines[0].startswith("PathFileType"):
        raise FileFormatError("not a TRC file: the first line must start with 'PathFileType'", path)
    keys, values = _fields(lines[1]), _fields(lines[2])
    header = {k: v for k, v in zip(keys, values) if k}
    for key in ("DataRate", "NumFrames", "NumMarkers", "Units"):
        if key not in header or not header[key]:
            raise FileFormatError(f"TRC header has no {key} (line 2 keys: {' '.join(keys)})", path)
    return header


def _number(path: Path, header: dict[str, str], key: str, kind: type = float):
    try:
        value = kind(float(header[key]))
    except ValueError:
        raise FileFormatError(f"TRC header {key}={header[key]!r} is not a number", path) from None
    return value


def read_trc(path: str | Path, *, up: str = "y") -> Trial:
    """Read a TRC file into a :class:`~gaitid.core.trial.Trial` (see :func:`read_trc_with_time`)."""
    return read_trc_with_time(path, up=up)[0]


def read_trc_with_time(path: str | Path, *, up: str = "y") -> tuple[Trial, float]:
    """Read a TRC file into a :class:`~gaitid.core.trial.Trial` (markers in m, Z-up lab).

    ``up``: the file's vertical axis, 'y' for OpenSim files (rotated by
    :data:`Y_UP_TO_Z_UP`) or 'z'. Blank fields, and exact (0, 0, 0) triplets, are
    missing markers: NaN. ``first_frame`` comes from the first Time value
    (``round(t0 * DataRate) + 1``) so that ``Trial.time`` equals the file's Time column;
    also returns the time ``t0`` (s) of the first row, fitted to all rows (printed
    times are rounded, :func:`gaitid.io.mot.grid_start`). Within 0.05 frame of the frame
    grid ``t0`` is snapped onto it; otherwise it is kept (for syncing a GRF file), and
    ``Trial.time`` is rounded to the grid with a warning saying by how much.
    """
    path = Path(path)
    input_file(path, "TRC file")  # a FIFO or a device would block the read below
    register_input(path)
    rotation = up_rotation(up)
    try:
        with unchanged_while_read(path):
            text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}", path) from None
    lines = text.splitlines()
    header = _header(path, lines)
    rate = _number(path, header, "DataRate")
    if not rate > 0:
        raise FileFormatError(f"TRC header DataRate={header['DataRate']} must be positive", path)
    n_declared = _number(path, header, "NumFrames", int)
    m_declared = _number(path, header, "NumMarkers", int)
    unit = header["Units"].strip().lower()
    if unit not in UNIT_SCALE:
        raise FileFormatError(f"TRC units {header['Units']!r} not understood (expected mm, cm or m)", path)
    label_fields = lines[3].split("\t")
    if len(label_fields) < 2 or label_fields[0].strip().lower() not in ("frame#", "frame"):
        raise FileFormatError("line 4 of a TRC file must start with 'Frame#' and 'Time'", path)
    labels = [f.strip() for f in label_fields[2:] if f.strip()]
    warnings: list[str] = []
    if len(labels) != m_declared:
        warnings.append(f"{path}: header NumMarkers={m_declared} but {len(labels)} marker labels; using the labels")
    if len(set(labels)) != len(labels):
        dup = sorted({lab for lab in labels if labels.count(lab) > 1})
        warnings.append(f"{path}: duplicate marker labels {dup}; Trial.point() returns the first")
    body = [line for line in lines[5:] if line.strip()]
    if not body:
        raise FileFormatError("no data rows", path)
    sep = "\t" if "\t" in body[0] else r"\s+"
    try:
        table = pd.read_csv(io.StringIO("\n".join(body)), sep=sep, header=None, dtype=np.float64, engine="c")
    except (ValueError, pd.errors.ParserError) as exc:
        raise FileFormatError(f"data rows are not all numbers ({exc})", path) from None
    data = table.to_numpy(dtype=np.float64)
    width = 2 + 3 * len(labels)
    if data.shape[1] < width:  # rows end early when the last markers are missing
        data = np.hstack([data, np.full((data.shape[0], width - data.shape[1]), np.nan)])
    elif data.shape[1] > width and np.isfinite(data[:, width:]).any():
        warnings.append(f"{path}: {data.shape[1] - width} unlabelled data columns ignored")
    n = data.shape[0]
    if n != n_declared:
        warnings.append(f"{path}: header NumFrames={n_declared} but {n} rows were read")
    frame_col, time_col = data[:, 0], data[:, 1]
    if np.isfinite(time_col).all():
        t0 = grid_start(time_col, rate)
        span = float(time_col[-1] - time_col[0])
        if n > 1 and abs(span * rate - (n - 1)) > 0.5:
            raise FileFormatError(
                f"DataRate {rate:g} Hz disagrees with the Time column ({n} frames over {span:g} s)", path
            )
        first_frame = int(round(t0 * rate)) + 1
        offset = t0 * rate - (first_frame - 1)
        if abs(offset) > 0.05:
            warnings.append(f"{path}: first Time {t0:g} s is {offset:+.2f} frame off the {rate:g} Hz grid")
        else:
            t0 = (first_frame - 1) / rate
        if np.isfinite(frame_col[0]) and int(frame_col[0]) != first_frame:
            warnings.append(
                f"{path}: first Frame# {int(frame_col[0])} but Time {t0:g} s gives frame {first_frame}; using Time"
            )
    elif np.isfinite(frame_col[0]):
        first_frame = int(frame_col[0])
        t0 = (first_frame - 1) / rate
        warnings.append(f"{path}: no usable Time column; first frame from Frame#")
    else:
        raise FileFormatError("neither the Frame# nor the Time column holds numbers", path)
    xyz = data[:, 2:width].reshape(n, len(labels), 3) * UNIT_SCALE[unit]
    zeros = np.all(xyz == 0.0, axis=2)
    if zeros.any():
        xyz[zeros] = np.nan
        warnings.append(f"{path}: {int(zeros.sum())} marker samples at exactly (0, 0, 0) treated as missing")
    markers = xyz @ rotation.T
    check_marker_extent(markers, header["Units"].strip(), "the header's Units", path)
    if np.isfinite(markers[..., 2]).any() and np.nanmedian(markers[..., 2]) < 0:
        warnings.append(f"{path}: most markers are below the floor after rotation; is the file {up.upper()} up?")
    trial = Trial(
        path=path,
        point_rate=float(rate),
        first_frame=first_frame,
        marker_labels=labels,
        markers=markers,
        lab_rotation=rotation,
        software=f"TRC ({lines[0].split(chr(9))[-1].strip() or path.name})",
        warnings=warnings,
    )
    return trial, t0


def write_trc(
    trial: Trial,
    path: str | Path,
    *,
    units: str = "mm",
    up: str = "y",
    include_virtual: bool = False,
    decimals: int = 6,
    inputs: tuple[str | Path, ...] = (),
) -> Path:
    """Write the trial's markers as a TRC file, atomically; refuses to overwrite an input.

    ``up='y'`` writes OpenSim's Y-up frame (``v_file = Y_UP_TO_Z_UP.T @ v_lab``),
    ``'z'`` our lab as is. ``units``: mm, cm or m; ``decimals`` printed in that unit.
    NaN markers are written as blank fields. ``include_virtual`` adds the virtual points.
    The trial's own file and ``inputs`` are never overwritten.
    """
    path = Path(path)
    unit = units.lower()
    if unit not in UNIT_SCALE:
        raise SettingsError(f"units={units!r}: must be mm, cm or m")
    rotation = up_rotation(up)
    labels = list(trial.marker_labels)
    points = trial.markers
    if include_virtual and trial.virtual_points is not None and trial.virtual_labels:
        labels += list(trial.virtual_labels)
        points = np.concatenate([points, trial.virtual_points], axis=1)
    bad = [lab for lab in labels if not lab.strip() or "\t" in lab or "\n" in lab]
    if bad:
        raise FileFormatError(f"cannot write marker labels {bad!r} to a TRC file", path)
    n, m = points.shape[0], len(labels)
    values = (points @ rotation) / UNIT_SCALE[unit]  # row vectors: v_file = R.T v_lab
    rate = trial.point_rate
    head = [
        f"PathFileType\t4\t(X/Y/Z)\t{path.name}",
        "DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames",
        f"{rate:.10g}\t{rate:.10g}\t{n}\t{m}\t{unit}\t{rate:.10g}\t{trial.first_frame}\t{n}",
        "Frame#\tTime\t" + "".join(f"{lab}\t\t\t" for lab in labels),
        "\t\t" + "\t".join(f"X{k}\tY{k}\tZ{k}" for k in range(1, m + 1)),
        "",
    ]
    data = np.column_stack([trial.frames, trial.time, values.reshape(n, 3 * m)])
    buffer = io.StringIO()
    np.savetxt(buffer, data, fmt=["%d", "%.8f"] + [f"%.{decimals}f"] * (3 * m), delimiter="\t")
    rows = buffer.getvalue().replace("\tnan", "\t").replace("\t-nan", "\t")
    own = (trial.path,) if trial.path is not None else ()
    with atomic_path(path, inputs=tuple(inputs) + own) as tmp:
        tmp.write_text("\n".join(head) + "\n" + rows, encoding="utf-8")
    return path
