"""OpenSim Storage files (``.mot`` / ``.sto``) and ExternalLoads XML: read and write.

A Storage file is a header ended by ``endheader``, one line of column labels
(the first is ``time``, in s) and rows of numbers separated by tabs or spaces.
The header holds ``key=value`` lines (``version``, ``nRows``, ``nColumns``,
``inDegrees``) or, in the older SIMM style, ``key value`` lines (``datacolumns``,
``datarows``, ``range``); its first line is usually the table's name. ``inDegrees``
says whether rotational coordinates are in degrees; translations and forces are
SI (m, N, N.m) by OpenSim's rule, and the values are returned as stored.

An ExternalLoads XML (OpenSim ``ExternalLoads`` / ``ExternalForce``) maps columns
of a GRF file to bodies: for each force, ``<force_identifier>`` + ``x|y|z`` are
the force on the body (N), ``<point_identifier>`` + ``x|y|z`` its point of
application (m) and ``<torque_identifier>`` + ``x|y|z`` a torque on the body
(N.m); all expressed in the OpenSim ground frame (Y up) when
``force_expressed_in_body`` and ``point_expressed_in_body`` are ``ground``, the
only case supported here. Nothing here changes frames: :mod:`gaitid.io.opensim`
turns these into a Z-up :class:`~gaitid.core.trial.Trial`.

Length: one file format and its companion XML, read and written, kept together so the
round trip is checked in one place.
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import FileFormatError, UnsupportedError
from gaitid.io.atomic import atomic_path, register_input, unchanged_while_read
from gaitid.io.input_files import input_file

__all__ = [
    "Storage",
    "ExternalForce",
    "read_storage",
    "read_mot",
    "read_sto",
    "write_mot",
    "write_sto",
    "read_external_loads",
    "write_external_loads",
    "find_external_forces",
    "uniform_rate",
    "grid_start",
]


@dataclass
class Storage:
    """One OpenSim Storage table, values as stored in the file.

    ``time`` (n,) s; ``values`` (n, m) for the columns ``labels`` (time excluded);
    ``in_degrees``: the header's ``inDegrees`` flag (None when absent); ``header``:
    the other ``key=value`` header entries as strings; ``comments``: free header lines.
    """

    name: str
    labels: list[str]
    time: np.ndarray
    values: np.ndarray
    in_degrees: bool | None = None
    header: dict[str, str] = field(default_factory=dict)
    comments: list[str] = field(default_factory=list)
    path: Path | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def n_rows(self) -> int:
        return self.time.shape[0]

    def column(self, label: str) -> np.ndarray:
        """One column (n,) by label; FileFormatError naming the file when absent."""
        try:
            return self.values[:, self.labels.index(label)]
        except ValueError:
            raise FileFormatError(f"no column '{label}' (columns: {', '.join(self.labels[:12])}...)", self.path) from None

    def vector(self, identifier: str) -> np.ndarray:
        """Columns ``identifier+'x'``, ``+'y'``, ``+'z'`` as an (n, 3) array."""
        return np.column_stack([self.column(identifier + axis) for axis in "xyz"])

    def to_dataframe(self) -> pd.DataFrame:
        """A DataFrame indexed by ``time`` (s), one column per label."""
        frame = pd.DataFrame(self.values, columns=self.labels)
        frame.index = pd.Index(self.time, name="time")
        return frame


@dataclass
class ExternalForce:
    """One ``ExternalForce`` of an ExternalLoads XML with its data from the GRF file.

    ``force`` (n, 3) N acting on ``body``; ``point`` (n, 3) m its point of application
    (NaN when the XML names no point: OpenSim then applies it at the body origin);
    ``torque`` (n, 3) N.m acting on ``body`` (zeros when the XML names no torque).
    All in the OpenSim ground frame (Y up), at the GRF file's ``time`` (n,) s.
    """

    name: str
    body: str
    force_identifier: str
    point_identifier: str
    torque_identifier: str
    time: np.ndarray
    force: np.ndarray
    point: np.ndarray
    torque: np.ndarray
    source: Path | None = None

    @classmethod
    def from_table(cls, table: "Storage", name: str, body: str, force_id: str, point_id: str,
                   torque_id: str) -> "ExternalForce":
        """The force whose columns ``force_id``/``point_id``/``torque_id`` (+ x, y, z) are in
        ``table``; no point column: NaN points, no torque column: zero torque."""
        n = table.n_rows
        return cls(
            name=name,
            body=body,
            force_identifier=force_id,
            point_identifier=point_id,
            torque_identifier=torque_id,
            time=table.time,
            force=table.vector(force_id),
            point=table.vector(point_id) if point_id else np.full((n, 3), np.nan),
            torque=table.vector(torque_id) if torque_id else np.zeros((n, 3)),
            source=table.path,
        )

    @property
    def columns(self) -> list[str]:
        """The GRF-file columns this force uses."""
        ids = [self.force_identifier, self.point_identifier, self.torque_identifier]
        return [i + axis for i in ids if i for axis in "xyz"]


# --------------------------------------------------------------------------- reading

_MAX_HEADER_LINES = 1000


def _split_header(path: Path, text: str) -> tuple[list[str], int]:
    """Header lines (without 'endheader') and the index of the first line after it."""
    lines = text.splitlines()
    for i, line in enumerate(lines[:_MAX_HEADER_LINES]):
        if line.strip().lower() == "endheader":
            return lines[:i], i + 1
    raise FileFormatError("not an OpenSim Storage file: no 'endheader' line in the header", path)


def _parse_header(lines: list[str]) -> tuple[str, dict[str, str], list[str]]:
    name = ""
    header: dict[str, str] = {}
    comments: list[str] = []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if "=" in line:
            key, _, value = line.partition("=")
            header[key.strip()] = value.strip()
            continue
        parts = line.split(None, 1)
        if parts[0].lower() in ("datacolumns", "datarows", "range", "name") and len(parts) == 2:
            if parts[0].lower() == "name":
                name = parts[1]
            else:
                header[parts[0]] = parts[1]
        elif i == 0:
            name = line
        else:
            comments.append(line)
    return name, header, comments


def _declared(header: dict[str, str], *keys: str) -> int | None:
    for key in keys:
        for k, v in header.items():
            if k.lower() == key.lower():
                try:
                    return int(v)
                except ValueError:
                    return None
    return None


def read_storage(path: str | Path) -> Storage:
    """Read an OpenSim ``.mot`` or ``.sto`` file (values as stored, see :class:`Storage`)."""
    path = Path(path)
    input_file(path, "OpenSim storage file")  # a FIFO or a device would block the read below
    register_input(path)
    try:
        with unchanged_while_read(path):
            text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}", path) from None
    header_lines, start = _split_header(path, text)
    name, header, comments = _parse_header(header_lines)
    data_type = next((v for k, v in header.items() if k.lower() == "datatype"), "double")
    if data_type.lower() != "double":
        raise UnsupportedError(
            f"DataType={data_type}: only tables of plain numbers (DataType=double) are supported", path
        )
    body = text.splitlines()[start:]
    while body and not body[0].strip():
        body = body[1:]
    if not body:
        raise FileFormatError("no column labels after 'endheader'", path)
    labels = body[0].split()
    if not labels or labels[0].lower() != "time":
        raise FileFormatError(f"the first column must be 'time', found {labels[:1]}", path)
    try:
        table = pd.read_csv(
            io.StringIO("\n".join(body[1:])), sep=r"\s+", header=None, dtype=np.float64, engine="c"
        )
    except pd.errors.EmptyDataError:
        table = pd.DataFrame(np.empty((0, len(labels))))
    except (ValueError, pd.errors.ParserError) as exc:
        raise FileFormatError(f"data rows are not all numbers or not all of the same length ({exc})", path) from None
    data = table.to_numpy(dtype=np.float64)
    if data.shape[1] != len(labels):
        raise FileFormatError(f"{len(labels)} column labels but {data.shape[1]} values per row", path)
    if data.shape[0] == 0:
        raise FileFormatError("no data rows", path)
    if np.isnan(data[:, 0]).any():
        raise FileFormatError("missing values in the 'time' column", path)
    warnings = []
    n_rows = _declared(header, "nRows", "datarows")
    if n_rows is not None and n_rows != data.shape[0]:
        warnings.append(f"{path}: header says nRows={n_rows} but {data.shape[0]} rows were read (file truncated?)")
    n_cols = _declared(header, "nColumns", "datacolumns")
    if n_cols is not None and n_cols != len(labels):
        warnings.append(f"{path}: header says nColumns={n_cols} but there are {len(labels)} columns")
    in_degrees = None
    for key in list(header):
        if key.lower() == "indegrees":
            flag = header.pop(key).lower()
            in_degrees = flag in ("yes", "true", "1")
    return Storage(
        name=name,
        labels=labels[1:],
        time=data[:, 0].copy(),
        values=np.ascontiguousarray(data[:, 1:]),
        in_degrees=in_degrees,
        header=header,
        comments=comments,
        path=path,
        warnings=warnings,
    )


def read_mot(path: str | Path) -> Storage:
    """Read an OpenSim motion file (``.mot``: coordinates or ground reaction forces)."""
    return read_storage(path)


def read_sto(path: str | Path) -> Storage:
    """Read an OpenSim storage file (``.sto``: results such as inverse-dynamics moments)."""
    return read_storage(path)


def uniform_rate(times: Storage | np.ndarray, *, path: str | Path | None = None, tolerance: float = 0.25) -> float:
    """Sampling rate (Hz) of a uniformly sampled table (or time array, s), from its first and last times.

    The printed times are often rounded (``0.0017`` for 1/600 s), so the rate is
    ``(n - 1) / (t_last - t_first)``, snapped to an integer within 1e-4 relative;
    FileFormatError (naming ``path``) when times decrease or a time departs from the
    uniform grid by more than ``tolerance`` of a step.
    """
    if isinstance(times, Storage):
        t, path = times.time, times.path
    else:
        t = np.asarray(times, dtype=np.float64)
    if t.shape[0] < 2:
        raise FileFormatError("fewer than two rows: no sampling rate", path)
    span = t[-1] - t[0]
    if not np.all(np.diff(t) > 0) or span <= 0:
        raise FileFormatError("the 'time' column is not strictly increasing", path)
    rate = (t.shape[0] - 1) / span
    if abs(rate - round(rate)) < 1e-4 * rate:  # printed times are rounded: 999.99999 Hz is 1000 Hz
        rate = float(round(rate))
    grid = t[0] + np.arange(t.shape[0]) / rate
    worst = float(np.max(np.abs(t - grid)) * rate)
    if worst > tolerance:
        raise FileFormatError(
            f"the 'time' column is not uniformly sampled (a time is {worst:.2f} steps off the grid at {rate:.4g} Hz)",
            path,
        )
    return float(rate)


def grid_start(times: np.ndarray, rate: float) -> float:
    """Start time (s) of the uniform grid ``t0 + k / rate`` that best fits printed times.

    The mean of ``t_k - k / rate``: printed times are rounded (OpenSim writes 1/60 s as
    0.017), and the mean over all rows recovers ``t0`` far better than the first value.
    """
    t = np.asarray(times, dtype=np.float64)
    k = np.arange(t.shape[0])
    ok = np.isfinite(t)
    return float(np.mean(t[ok] - k[ok] / rate))


# --------------------------------------------------------------------------- writing

def _format_rows(time: np.ndarray, values: np.ndarray, fmt: str) -> str:
    data = np.column_stack([time, values])
    buffer = io.StringIO()
    np.savetxt(buffer, data, fmt=fmt, delimiter="\t")
    return buffer.getvalue().replace("nan", "NaN")


def _write_storage(
    path: str | Path,
    labels: list[str],
    time: np.ndarray,
    values: np.ndarray,
    *,
    name: str,
    in_degrees: bool,
    comments: list[str] | tuple[str, ...],
    header: dict[str, str] | None,
    precision: int,
    inputs: tuple[str | Path, ...],
) -> Path:
    path = Path(path)
    time = np.asarray(time, dtype=np.float64).reshape(-1)
    values = np.asarray(values, dtype=np.float64)
    if values.ndim == 1:
        values = values[:, None]
    if values.shape != (time.shape[0], len(labels)):
        raise FileFormatError(
            f"cannot write: {len(labels)} labels and {time.shape[0]} times but values of shape {values.shape}", path
        )
    bad = [lab for lab in labels if not lab or any(c.isspace() for c in lab)]
    if bad or len(set(labels)) != len(labels) or "time" in (lab.lower() for lab in labels):
        raise FileFormatError(f"cannot write: column labels must be unique, non-empty, without spaces, not 'time' ({bad})", path)
    lines = [name or path.stem, "version=1", f"nRows={time.shape[0]}", f"nColumns={len(labels) + 1}"]
    lines.append(f"inDegrees={'yes' if in_degrees else 'no'}")
    for key, value in (header or {}).items():
        if key.lower() not in ("version", "nrows", "ncolumns", "indegrees"):
            lines.append(f"{key}={value}")
    lines.extend(comments)
    lines.append("endheader")
    lines.append("\t".join(["time", *labels]))
    text = "\n".join(lines) + "\n" + _format_rows(time, values, f"%.{precision}g")
    with atomic_path(path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def write_mot(
    path: str | Path,
    labels: list[str],
    time: np.ndarray,
    values: np.ndarray,
    *,
    name: str = "",
    in_degrees: bool = True,
    comments: list[str] | tuple[str, ...] = (),
    header: dict[str, str] | None = None,
    precision: int = 10,
    inputs: tuple[str | Path, ...] = (),
) -> Path:
    """Write an OpenSim ``.mot`` (version 1 Storage, tab separated), atomically.

    ``labels`` excludes ``time``; ``time`` (n,) s; ``values`` (n, m) as they should be
    stored (angles in degrees when ``in_degrees``; forces N, points m, torques N.m).
    NaN is written as ``NaN``. ``precision``: significant digits. ``inputs``: files
    read to make this one; writing onto one of them raises.
    """
    return _write_storage(
        path, list(labels), time, values, name=name, in_degrees=in_degrees, comments=comments,
        header=header, precision=precision, inputs=inputs,
    )


def write_sto(
    path: str | Path,
    labels: list[str],
    time: np.ndarray,
    values: np.ndarray,
    *,
    name: str = "",
    in_degrees: bool = False,
    comments: list[str] | tuple[str, ...] = (),
    header: dict[str, str] | None = None,
    precision: int = 10,
    inputs: tuple[str | Path, ...] = (),
) -> Path:
    """Write an OpenSim ``.sto`` results table (same layout as :func:`write_mot`,
    ``inDegrees=no`` by default, as OpenSim writes inverse-dynamics output)."""
    return _write_storage(
        path, list(labels), time, values, name=name, in_degrees=in_degrees, comments=comments,
        header=header, precision=precision, inputs=inputs,
    )


# --------------------------------------------------------------------------- ExternalLoads

_FORCE_V = re.compile(r"^(.*force\d*_v)x$")


def find_external_forces(table: Storage) -> list[tuple[str, str, str]]:
    """The (force, point, torque) identifiers of a GRF table without an XML.

    OpenSim's naming: a force ``<a>force<k>_v[xyz]`` has its point in
    ``<a>force<k>_p[xyz]`` and its torque in ``<a>torque<k>_[xyz]`` (e.g.
    ``ground_force_v``/``ground_force_p``/``ground_torque_``, ``1_ground_force_v``...,
    ``ground_force4_v``...). Point or torque identifiers are '' when their columns are absent.
    """
    labels = set(table.labels)
    found = []
    for label in table.labels:
        match = _FORCE_V.match(label)
        if not match or not {match.group(1) + "y", match.group(1) + "z"} <= labels:
            continue
        force_id = match.group(1)
        point_id = force_id[:-1] + "p"
        stem = force_id[:-1]  # e.g. 'ground_force4_'
        cut = stem.rfind("force")
        torque_id = stem[:cut] + "torque" + stem[cut + len("force"):]
        if not {point_id + a for a in "xyz"} <= labels:
            point_id = ""
        if not {torque_id + a for a in "xyz"} <= labels:
            torque_id = ""
        found.append((force_id, point_id, torque_id))
    return found


def _text(element: ET.Element, tag: str) -> str | None:
    child = element.find(tag)
    return None if child is None or child.text is None else child.text.strip()


def parse_xml(path: Path) -> ET.Element:
    """The root element of an XML file; a FileFormatError naming the file when it cannot be read."""
    input_file(path, "XML file")
    register_input(path)
    try:
        return ET.parse(path).getroot()
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}", path) from None
    except ET.ParseError as exc:
        raise FileFormatError(f"not valid XML ({exc})", path) from None


def read_external_loads(
    xml_path: str | Path, mot_path: str | Path | None = None, *, warnings: list[str] | None = None
) -> list[ExternalForce]:
    """The enabled ExternalForces of an ExternalLoads XML, with their data.

    ``mot_path``: the GRF file; by default the XML's ``<datafile>``, relative to the
    XML's folder. Forces and points must be expressed in ``ground`` (else
    UnsupportedError). Returns them in the XML's order, in OpenSim ground (Y up).
    ``warnings``: a list that receives the GRF file's warnings (e.g. nRows mismatch).
    """
    xml_path = Path(xml_path)
    root = parse_xml(xml_path)
    loads = root if root.tag == "ExternalLoads" else root.find(".//ExternalLoads")
    if loads is None:
        raise FileFormatError("no <ExternalLoads> element: not an OpenSim ExternalLoads file", xml_path)
    if mot_path is None:
        datafile = _text(loads, "datafile")
        if not datafile:
            raise FileFormatError("no <datafile> in the ExternalLoads and no GRF file given", xml_path)
        mot_path = xml_path.parent / datafile
    table = read_storage(mot_path)
    if warnings is not None:
        warnings.extend(table.warnings)
    forces = []
    for element in loads.iter("ExternalForce"):
        name = element.get("name", "")
        disabled = (_text(element, "isDisabled") or "false").lower() == "true"
        applies = (_text(element, "appliesForce") or "true").lower() == "true"
        if disabled or not applies:
            continue
        where = f"ExternalForce '{name}'"
        for tag in ("force_expressed_in_body", "point_expressed_in_body"):
            frame = _text(element, tag) or "ground"
            if frame != "ground":
                raise UnsupportedError(
                    f"{where}: {tag} is '{frame}'; only forces and points expressed in 'ground' are supported", xml_path
                )
        body = _text(element, "applied_to_body")
        force_id = _text(element, "force_identifier")
        if not body or not force_id:
            raise FileFormatError(f"{where}: applied_to_body and force_identifier are required", xml_path)
        point_id = _text(element, "point_identifier") or ""
        torque_id = _text(element, "torque_identifier") or ""
        missing = [i + a for i in (force_id, point_id, torque_id) if i for a in "xyz" if i + a not in table.labels]
        if missing:
            raise FileFormatError(
                f"{where} (body {body}) needs columns missing from {table.path}: {', '.join(missing)}", xml_path
            )
        forces.append(ExternalForce.from_table(table, name, body, force_id, point_id, torque_id))
    if not forces:
        raise FileFormatError("no enabled ExternalForce in the ExternalLoads", xml_path)
    return forces


def write_external_loads(
    xml_path: str | Path,
    forces: list[tuple[str, str, str, str]],
    datafile: str,
    *,
    name: str = "externalloads",
    inputs: tuple[str | Path, ...] = (),
) -> Path:
    """Write an OpenSim 4 ExternalLoads XML, atomically.

    ``forces``: (body, force_identifier, point_identifier, torque_identifier) per
    force, all expressed in ground; ``datafile``: the GRF file's name as the XML
    should cite it (relative to the XML's folder).
    """
    xml_path = Path(xml_path)
    doc = ET.Element("OpenSimDocument", Version="40000")
    loads = ET.SubElement(doc, "ExternalLoads", name=name)
    objects = ET.SubElement(loads, "objects")
    for k, (body, force_id, point_id, torque_id) in enumerate(forces, start=1):
        ext = ET.SubElement(objects, "ExternalForce", name=f"ExternalForce_{k}")
        for tag, value in (
            ("applied_to_body", body),
            ("force_expressed_in_body", "ground"),
            ("point_expressed_in_body", "ground"),
            ("force_identifier", force_id),
            ("point_identifier", point_id),
            ("torque_identifier", torque_id),
        ):
            ET.SubElement(ext, tag).text = value
    ET.SubElement(loads, "groups")
    ET.SubElement(loads, "datafile").text = datafile
    ET.indent(doc, space="\t")
    text = '<?xml version="1.0" encoding="UTF-8" ?>\n' + ET.tostring(doc, encoding="unicode") + "\n"
    with atomic_path(xml_path, inputs=inputs) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return xml_path
