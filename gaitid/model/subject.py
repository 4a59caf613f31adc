"""Subject measurements from a file: a Vicon subject file (``.vsk``), a Vicon subject
measurement file (``.mp``) or a TOML file.

Both give a :class:`gaitid.trial.Subject` in SI units, the same as the C3D reader makes
from the PROCESSING group, so ``build_segments(trial, subject=read_subject(path))`` uses
them instead of the trial's own values.

- ``.vsk`` (Vicon Nexus XML): every ``<Parameter NAME=... VALUE=...>``; Vicon names and
  units as in PROCESSING (Bodymass kg; Height, leg lengths, widths, InterAsisDistance,
  MarkerDiameter mm; other ``...Length/Width/Distance/Diameter`` mm -> m in ``extra``; the
  rest, e.g. StaticPlantFlex in rad, as stored).
- ``.mp`` (Vicon subject measurements, ``$Bodymass = 74`` lines): the same names with
  ``Left``/``Right`` spelled out (``$LeftLegLength``), same units.
- ``.toml``: ``mass`` (kg), ``height``, ``leg_length_left``... (m: the Subject field names)
  and an optional ``[extra]`` table of Vicon-named values, taken as given (SI, rad).
"""

from __future__ import annotations

import math
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import fields
from pathlib import Path

from gaitid.errors import FileFormatError
from gaitid.io.atomic import register_input
from gaitid.trial import VICON_SUBJECT_FIELDS, Subject

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

VICON_FIELDS = VICON_SUBJECT_FIELDS  # Vicon name -> (Subject field, scale to SI)
_MM = re.compile(r"[A-Za-z]+(Length|Width|Distance|Diameter)")


def subject_from_vicon(values: dict[str, float], name: str | None = None) -> Subject:
    """A Subject from Vicon-named values in Vicon units (mm, kg, rad). Zero or negative
    anthropometry means "not set" (Plug-in Gait's convention) and becomes None."""
    subject = Subject(name=name)
    lower = {k.lower(): v for k, v in VICON_FIELDS.items()}
    for key, v in values.items():
        if not math.isfinite(v):
            continue
        field = lower.get(key.lower())
        if field is not None:
            setattr(subject, field[0], v * field[1] if v > 0 else None)
        elif _MM.fullmatch(key):
            subject.extra[key] = v * 1e-3
        else:
            subject.extra[key] = v
    return subject


def read_subject(path: str | Path) -> Subject:
    """Read a ``.vsk``, ``.mp`` or ``.toml`` subject file (see the module docstring)."""
    path = Path(path)
    register_input(path)  # no output of this run may replace it
    if not path.is_file():
        raise FileFormatError("subject file not found", path)
    suffix = path.suffix.lower()
    if suffix == ".vsk":
        return _read_vsk(path)
    if suffix == ".toml":
        return _read_toml(path)
    if suffix == ".mp":
        return _read_mp(path)
    raise FileFormatError(f"unknown subject file type '{path.suffix}' (expected .vsk, .mp or .toml)", path)


def _read_mp(path: Path) -> Subject:
    """``$Name = value`` lines; ``$LeftLegLength`` is the PROCESSING group's ``LLegLength``."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}", path) from None
    values = {}
    for line in text.splitlines():
        m = re.match(r"\s*\$(\w+)\s*=\s*([-+0-9.eE]+)\s*$", line)
        if m:
            name = re.sub(r"^(Left|Right)", lambda g: g.group(1)[0], m.group(1))
            try:
                values[name] = float(m.group(2))
            except ValueError:
                continue
    return subject_from_vicon(values, name=path.stem)


def _read_vsk(path: Path) -> Subject:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise FileFormatError(f"not a readable Vicon subject (XML) file: {exc}", path) from None
    values = {}
    for p in root.iter("Parameter"):
        name, value = p.get("NAME"), p.get("VALUE")
        if name is None or value is None:
            continue
        try:
            values[name] = float(value)
        except ValueError:
            raise FileFormatError(f"parameter '{name}' has a non-numeric VALUE {value!r}", path) from None
    if not values:
        raise FileFormatError("no <Parameter NAME=... VALUE=...> entries: not a Vicon subject file", path)
    return subject_from_vicon(values, name=path.stem)


def _read_toml(path: Path) -> Subject:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise FileFormatError(f"not valid TOML: {exc}", path) from None
    known = {f.name for f in fields(Subject)} - {"extra"}
    subject = Subject()
    for key, value in data.items():
        if key == "extra":
            if not isinstance(value, dict):
                raise FileFormatError("key 'extra' must be a table of numbers", path)
            for k, v in value.items():
                if not isinstance(v, (int, float)) or isinstance(v, bool):
                    raise FileFormatError(f"key 'extra.{k}' must be a number, not {v!r}", path)
                subject.extra[k] = float(v)
        elif key == "name":
            subject.name = str(value)
        elif key in known:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise FileFormatError(f"key '{key}' must be a positive number (SI: kg, m), not {value!r}", path)
            setattr(subject, key, float(value))
        else:
            raise FileFormatError(f"unknown key '{key}' (known: {', '.join(sorted(known))}, extra)", path)
    return subject
