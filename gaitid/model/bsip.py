"""Body-segment inertial parameters from tables (``models/bsip/*.toml``).

A table gives, per segment, the mass fraction of body mass, the centre-of-mass position
from the proximal endpoint as a fraction of segment length, and radii of gyration about the
centre of mass as fractions of segment length about the anteroposterior (``gyration_ap``),
mediolateral (``gyration_ml``, the flexion axis) and longitudinal (``gyration_long``) axes.
:func:`segment_parameters` turns a row, a body mass and a segment length into SI values: mass (kg), centre of mass, and the inertia
tensor about the centre of mass in the segment frame, I = m (k L)^2 on each axis
(principal axes assumed along the segment frame).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gaitid.core.errors import ModelError
from gaitid.core.resources import models_dir
from gaitid.model.markerset import read_toml, resolve_path

_FIELDS = ("mass_fraction", "com_from_proximal", "gyration_ap", "gyration_ml", "gyration_long")


@dataclass(frozen=True)
class SegmentRow:
    """One row of a table (dimensionless fractions) and its source."""

    mass_fraction: float
    com_from_proximal: float
    gyration_ap: float
    gyration_ml: float
    gyration_long: float
    source: str = ""
    endpoints: str = ""


@dataclass(frozen=True)
class BsipTable:
    name: str
    title: str
    source: str
    path: Path
    segments: dict[str, SegmentRow]

    def row(self, segment: str) -> SegmentRow:
        if segment not in self.segments:
            raise ModelError(
                f"table '{self.name}' has no segment '{segment}' (has: {', '.join(sorted(self.segments))})", self.path
            )
        return self.segments[segment]


@dataclass(frozen=True)
class SegmentParameters:
    """Inertial parameters of one segment in SI: mass (kg), centre of mass as a fraction of the
    proximal->distal endpoint vector, length (m), inertia (3, 3) kg.m^2 about the centre of
    mass in the segment frame."""

    mass: float
    com_from_proximal: float
    length: float
    inertia_seg: np.ndarray


def list_tables() -> list[str]:
    return sorted(p.stem for p in (models_dir() / "bsip").glob("*.toml"))


def load_table(name_or_path: str | Path) -> BsipTable:
    """Load and validate a BSIP table by name (``'dempster'``, ``'de_leva_1996_male'``...) or path
    (cached while the file is unchanged)."""
    path = resolve_path(name_or_path, models_dir() / "bsip", kind="BSIP table")
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _load_table_cached(path, stamp)


@functools.lru_cache(maxsize=32)
def _load_table_cached(path: Path, stamp: int | None) -> BsipTable:
    data = read_toml(path)
    head = data.get("table")
    if not isinstance(head, dict) or not isinstance(head.get("name"), str):
        raise ModelError("table key 'table.name' is missing", path)
    segs = data.get("segments")
    if not isinstance(segs, dict) or not segs:
        raise ModelError("table key 'segments' is missing or empty", path)
    rows = {}
    for seg, spec in segs.items():
        if not isinstance(spec, dict):
            raise ModelError(f"table key 'segments.{seg}' must be a table", path)
        values = {}
        for key in _FIELDS:
            v = spec.get(key)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not np.isfinite(v) or v < 0:
                raise ModelError(f"table key 'segments.{seg}.{key}' must be a non-negative number, not {v!r}", path)
            values[key] = float(v)
        if not 0 < values["mass_fraction"] < 1:
            raise ModelError(
                f"table key 'segments.{seg}.mass_fraction' must lie in (0, 1), not {values['mass_fraction']}", path
            )
        if values["com_from_proximal"] > 1:
            raise ModelError(f"table key 'segments.{seg}.com_from_proximal' must lie in [0, 1]", path)
        rows[seg] = SegmentRow(**values, source=str(spec.get("source", "")), endpoints=str(spec.get("endpoints", "")))
    return BsipTable(head["name"], str(head.get("title", "")), str(head.get("source", "")), path, rows)


def segment_parameters(
    row: SegmentRow,
    body_mass: float,
    length: float,
    long_axis: str = "z",
    ml_axis: str = "y",
    overrides: dict | None = None,
) -> SegmentParameters:
    """SI parameters of a segment from a table row, body mass (kg) and segment length (m).

    ``long_axis`` and ``ml_axis`` name the segment-frame axes that are longitudinal and
    mediolateral (the remaining one is anteroposterior): I_ml = m (k_ml L)^2,
    I_ap = m (k_ap L)^2, I_long = m (k_long L)^2. ``overrides`` may set ``mass`` (kg),
    ``com_from_proximal`` (fraction), ``length`` (m) or ``inertia`` (3 numbers, kg.m^2, about
    the segment x, y, z axes, or a 3x3 matrix) for this subject.
    """
    ov = dict(overrides or {})
    unknown = set(ov) - {"mass", "com_from_proximal", "length", "inertia"}
    if unknown:
        raise ModelError(f"unknown segment parameter override(s): {', '.join(sorted(unknown))}")
    length = float(ov.get("length", length))
    mass = float(ov.get("mass", row.mass_fraction * body_mass))
    com = float(ov.get("com_from_proximal", row.com_from_proximal))
    axes = {"x": 0, "y": 1, "z": 2}
    if long_axis not in axes or ml_axis not in axes or long_axis == ml_axis:
        raise ModelError(f"long_axis {long_axis!r} and ml_axis {ml_axis!r} must be two different axes of x, y, z")
    if "inertia" in ov:
        inertia = np.asarray(ov["inertia"], float)
        inertia = np.diag(inertia) if inertia.shape == (3,) else inertia
        if inertia.shape != (3, 3):
            raise ModelError("inertia override must be 3 numbers (about x, y, z) or a 3x3 matrix, kg.m^2")
    else:
        ap_axis = 3 - axes[long_axis] - axes[ml_axis]
        diag = np.zeros(3)
        diag[axes[long_axis]] = row.gyration_long
        diag[axes[ml_axis]] = row.gyration_ml
        diag[ap_axis] = row.gyration_ap
        inertia = np.diag(mass * (diag * length) ** 2)
    return SegmentParameters(mass, com, length, inertia)
