"""Subject data from every source a lab has, read into a :class:`gaitid.core.trial.Subject` (SI),
and merged so that each value comes from the most trusted source that has it.

Readers of subject files (.vsk with expressions, .mp, tables): :mod:`gaitid.model.subject_files`.
The key grammar of tables and dicts (:func:`subject_from_mapping`): ``name`` (or ``subject``), the
Subject fields in SI or with the unit in the name (``height_mm``), Vicon names in Vicon units.

Merging (:func:`merge_subject`): a list of ``(source name, Subject or dict)`` layers, the most
trusted first; each value is taken from the first layer that has it, later layers only fill
gaps, and the result records which layer each value came from (``Subject.sources``). The
order the command line and batch use (:data:`PRECEDENCE`):

1. values typed on the command line (``--mass``, ``--leg-length``...): the user's explicit word;
2. the ``--subject FILE`` the user named;
3. the C3D's PROCESSING values: what the trial was captured and (for Vicon) modelled with;
4. a ``.vsk`` / ``.mp`` found beside the trial: the session's subject file, possibly edited
   after the capture, so it only fills what the C3D lacks.

Where two layers disagree on a value, :func:`subject_disagreements` says so.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import fields, replace
from pathlib import Path

from gaitid.core.errors import SettingsError
from gaitid.core.trial import VICON_SUBJECT_FIELDS, Subject

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

VICON_FIELDS = VICON_SUBJECT_FIELDS  # Vicon name -> (Subject field, scale to SI)
_MM = re.compile(r"[A-Za-z]+(Length|Width|Distance|Diameter|Offset|Thickness|Delta)")
NUMERIC_FIELDS = tuple(f.name for f in fields(Subject) if f.name not in ("name", "extra", "sources"))
SIDED = ("leg_length", "knee_width", "ankle_width")  # Subject fields with _left / _right
SUBJECT_FILE_TYPES = (".vsk", ".mp", ".csv", ".json", ".toml")
PRECEDENCE = ("command line", "--subject file", "C3D PROCESSING", "subject file beside the trial")

# plausible range of each Subject field (SI): catches values written in the wrong unit
PLAUSIBLE = {
    "mass": (2.0, 400.0, "kg"),
    "height": (0.4, 2.6, "m"),
    "leg_length": (0.2, 1.4, "m"),
    "knee_width": (0.03, 0.25, "m"),
    "ankle_width": (0.02, 0.2, "m"),
    "inter_asis_distance": (0.08, 0.5, "m"),
    "marker_diameter": (0.002, 0.05, "m"),
}
# the command-line option that supplies each Subject field
OPTIONS = {
    "mass": "--mass KG",
    "height": "--height M",
    "leg_length": "--leg-length L,R",
    "knee_width": "--knee-width L,R",
    "ankle_width": "--ankle-width L,R",
}
_UNIT_SCALE = {"kg": 1.0, "g": 1e-3, "m": 1.0, "cm": 1e-2, "mm": 1e-3, "rad": 1.0, "deg": math.pi / 180.0}


def _base(field: str) -> str:
    """'leg_length_left' -> 'leg_length'."""
    return re.sub(r"_(left|right)$", "", field)


def field_unit(field: str) -> str:
    """SI unit of a Subject field ('kg' for mass, 'm' for the others)."""
    return "kg" if field == "mass" else "m"


def check_plausible(field: str, value: float, where: str, hint: str = "") -> float:
    """``value`` (SI) if it is a plausible ``field``; else a SettingsError naming ``where``."""
    lo, hi, unit = PLAUSIBLE.get(_base(field), (0.0, math.inf, field_unit(field)))
    if not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        raise SettingsError(f"{where}: {field} = {value!r} {unit} is not plausible (expected {lo:g}-{hi:g} {unit})"
                            + (f"; {hint}" if hint else ""))
    return float(value)


# ----------------------------------------------------------------------------- Vicon values


def vicon_short_name(name: str) -> str:
    """Nexus' full names to the PROCESSING group's: ``LeftLegLength`` -> ``LLegLength``."""
    return re.sub(r"^(Left|Right)(?=[A-Z])", lambda m: m.group(1)[0], name)


def subject_from_vicon(values: dict[str, float], name: str | None = None,
                       quantities: dict[str, str] | None = None) -> Subject:
    """A Subject from Vicon-named values in Vicon units (kg, mm, rad). Zero or negative
    anthropometry means "not set" (Plug-in Gait's convention) and becomes None. Names are
    shortened as PROCESSING spells them (``LeftKneeWidth`` -> ``LKneeWidth``); other values go
    to ``extra``: lengths (``quantities[name] == 'length'``, or a name ending in Length, Width,
    Distance, Diameter, Offset, Thickness, Delta) in m, the rest as stored (angles in rad)."""
    subject = Subject(name=name)
    lower = {k.lower(): v for k, v in VICON_FIELDS.items()}
    quantities = quantities or {}
    for key, v in values.items():
        if v is None or not math.isfinite(v):
            continue
        short = vicon_short_name(key)
        field = lower.get(short.lower())
        if field is not None:
            setattr(subject, field[0], v * field[1] if v > 0 else None)
        elif quantities.get(key) == "length" or (key not in quantities and _MM.fullmatch(short)):
            subject.extra[short] = v * 1e-3
        else:
            subject.extra[short] = v
    return subject


# ----------------------------------------------------------------------------- expressions


# ----------------------------------------------------------------------------- .vsk


# ----------------------------------------------------------------------------- .mp


# ----------------------------------------------------------------------------- tables


_NAME_KEYS = ("name", "subject", "subject_name", "id", "subject_id")
_KEY = re.compile(r"^(?P<base>[a-z_]+?)(?:_(?P<unit>kg|g|m|cm|mm))?$")


def _number(value) -> float | None:
    """A number from a cell: int/float, or text such as '74', '74.5' or '74,5' (decimal comma);
    None for an empty cell or text that is not a number."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    if re.fullmatch(r"[-+]?\d+,\d+", text):
        text = text.replace(",", ".")
    try:
        return float(text) if text else None
    except ValueError:
        return None


def subject_from_mapping(data: dict, where: str) -> Subject:
    """A Subject from one table row / JSON or TOML entry (see the module docstring for the
    keys); ``where`` names the file and row in errors."""
    subject = Subject()
    lower_vicon = {k.lower(): k for k in VICON_FIELDS}
    for key, raw in data.items():
        k = str(key).strip()
        if k == "":
            continue
        if k.lower() in _NAME_KEYS:
            if raw not in (None, ""):
                subject.name = str(raw).strip()
            continue
        if k in ("left", "right") and isinstance(raw, dict):  # {'left': {'leg_length': ...}}
            side = subject_from_mapping({f"{kk}_{k}": vv for kk, vv in raw.items()}, where)
            for f in NUMERIC_FIELDS:
                if getattr(side, f) is not None:
                    setattr(subject, f, getattr(side, f))
            continue
        if k == "extra" and isinstance(raw, dict):  # TOML [extra]: Vicon names, SI
            for ek, ev in raw.items():
                v = _number(ev) if not isinstance(ev, str) else None
                if v is None:
                    raise SettingsError(f"{where}: 'extra.{ek}' must be a number, not {ev!r}")
                subject.extra[str(ek)] = v
            continue
        value = _number(raw)
        m = _KEY.match(k)
        base = m.group("base") if m else None
        unit = m.group("unit") if m else None
        targets = ([f"{base}_left", f"{base}_right"] if base in SIDED
                   else [base] if base in NUMERIC_FIELDS else [])
        if not targets and base is not None and unit is None and k in NUMERIC_FIELDS:
            targets = [k]
        if targets:
            if value is None:
                if raw in (None, ""):
                    continue  # an empty cell: not given
                raise SettingsError(f"{where}: '{k}' must be a number, not {raw!r}")
            if value == 0:
                continue  # 0 = not measured (Plug-in Gait's convention)
            if value < 0:
                raise SettingsError(f"{where}: '{k}' = {raw!r} must be a positive number")
            scale = _UNIT_SCALE[unit] if unit else 1.0
            if unit is not None and (unit in ("kg", "g")) != (base == "mass"):
                raise SettingsError(f"{where}: '{k}': a {'mass' if base == 'mass' else 'length'} "
                                    f"cannot be in {unit}")
            for f in targets:
                shown = "mm" if base != "mass" else "kg"
                hint = "" if unit else f"write the unit in the name, e.g. '{k}_{shown}'"
                setattr(subject, f, check_plausible(f, value * scale, f"{where}: '{k}'", hint))
            continue
        vic = lower_vicon.get(vicon_short_name(k).lower())
        if vic is not None:
            if value is None:
                if raw in (None, ""):
                    continue
                raise SettingsError(f"{where}: '{k}' must be a number, not {raw!r}")
            if value == 0:
                continue
            if value < 0:
                raise SettingsError(f"{where}: '{k}' = {raw!r} must be a positive number")
            f, scale = VICON_FIELDS[vic]
            unit_vicon = "kg" if f == "mass" else "mm"
            setattr(subject, f, check_plausible(
                f, value * scale, f"{where}: '{k}' (a Vicon name, so in {unit_vicon})",
                f"for SI values name it '{f}'"))
            continue
        if value is not None and re.fullmatch(r"[A-Z][A-Za-z0-9]+", k):  # another Vicon-named value
            more = subject_from_vicon({k: value})
            subject.extra.update(more.extra)
            continue
        if value is None:
            continue  # text metadata (date, group, notes...)
        known = ", ".join(("name", *NUMERIC_FIELDS, *SIDED))
        raise SettingsError(f"{where}: unknown key '{k}' (SI keys: {known}, optionally with _kg/_m/_cm/_mm; "
                            "or Vicon names such as Bodymass, LLegLength, LeftKneeWidth in kg/mm)")
    return subject


# ----------------------------------------------------------------------------- merging


def as_subject(value: Subject | dict | None, where: str = "subject") -> Subject:
    """A Subject from a Subject (returned as is) or a dict of values (SI keys as in tables:
    ``mass``, ``height``, ``leg_length_left``, ``leg_length`` for both sides, per-side
    ``{'left': {'leg_length': ...}}``, Vicon names in Vicon units)."""
    if value is None:
        return Subject()
    if isinstance(value, Subject):
        return value
    if isinstance(value, dict):
        return subject_from_mapping(value, where)
    raise SettingsError(f"{where}: expected a Subject or a dict of values, not {type(value).__name__}")


def merge_subject(layers) -> tuple[Subject, dict[str, str]]:
    """Merge ``[(source name, Subject | dict | None), ...]``, most trusted first: each value is
    the first layer's that has it (later layers only fill gaps). Returns a new Subject (the
    inputs are not changed) and ``{field or extra name: source name}``, also stored in the
    Subject's ``sources``. ``extra`` names match case-insensitively."""
    merged = Subject()
    sources: dict[str, str] = {}
    seen_extra: dict[str, str] = {}  # lower -> spelling kept
    for source, value in layers:
        s = as_subject(value, str(source))
        if merged.name is None and s.name:
            merged.name = s.name
        for f in NUMERIC_FIELDS:
            v = getattr(s, f)
            if getattr(merged, f) is None and v is not None:
                setattr(merged, f, v)
                sources[f] = s.sources.get(f, source) if s.sources else source
        for k, v in s.extra.items():
            if k.lower() not in seen_extra and v is not None:
                seen_extra[k.lower()] = k
                merged.extra[k] = v
                sources[k] = s.sources.get(k, source) if s.sources else source
    merged.sources = dict(sources)
    return merged, sources


def subject_disagreements(layers, rel_tol: float = 0.005) -> list[str]:
    """Values two layers give differently (relative difference > ``rel_tol``): which one the
    merge uses and which it overrides, e.g. ``mass 74 kg (C3D PROCESSING) used; flatFoot.vsk
    says 75 kg``."""
    out = []
    subjects = [(src, as_subject(v, str(src))) for src, v in layers]
    for f in NUMERIC_FIELDS:
        first = None
        for src, s in subjects:
            v = getattr(s, f)
            if v is None:
                continue
            if first is None:
                first = (src, v)
            elif abs(v - first[1]) > rel_tol * max(abs(first[1]), 1e-12):
                out.append(f"{f} {_fmt(f, first[1])} ({first[0]}) used; {src} says {_fmt(f, v)}")
    return out


def _fmt(field: str, v: float) -> str:
    return f"{v:g} kg" if field == "mass" else f"{v * 1000:g} mm"


def subject_value(subject: Subject, key: str) -> float | None:
    """A value by Subject field name or ``extra`` name (case-insensitive); None when unset."""
    names = {f.name for f in fields(Subject)}
    v = getattr(subject, key) if key in NUMERIC_FIELDS and key in names else None
    if v is None:
        low = key.lower()
        v = next((val for k, val in subject.extra.items() if k.lower() == low), None)
    try:
        v = float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return v if v is not None and math.isfinite(v) else None


def missing_parameters(model, subject: Subject) -> list[tuple[str, str, list[str]]]:
    """The model's required subject parameters the subject does not give:
    ``[(parameter, side, [Subject fields / Vicon names looked for]), ...]``."""
    out = []
    for name, spec in model.parameters.items():
        if not spec.get("required"):
            continue
        for side in ("left", "right"):  # the model files' per-side keys (gaitid.core.vocabulary.side_key)
            prefix = model.sides[side.capitalize()]
            srcs = [s.replace("{side}", side).replace("{S}", prefix) for s in spec.get("from", [])]
            if not any(subject_value(subject, s) is not None for s in srcs):
                out.append((name, side, srcs))
    return out


def option_for(sources: list[str]) -> str | None:
    """The command-line option that supplies a parameter looked for under ``sources``."""
    for s in sources:
        base = _base(s)
        if base in OPTIONS:
            return OPTIONS[base]
    return None


def describe_missing(model, missing, path=None) -> str:
    """An error text for :func:`missing_parameters`' result: the parameters, the sides and the
    options that supply them."""
    names: dict[str, list[str]] = {}
    options: list[str] = []
    vicon: list[str] = []
    for name, side, srcs in missing:
        names.setdefault(name, []).append(side)
        opt = option_for(srcs)
        if opt and opt not in options:
            options.append(opt)
        vicon += [s for s in srcs if s[:1].isupper() and s not in vicon]
    parts = [f"{n} ({'left and right' if len(sides) == 2 else sides[0]})" for n, sides in names.items()]
    give = " ".join(options)
    where = "the trial stores none" if path is None else f"{Path(path).name} stores none"
    return (f"model '{model.name}' needs the subject's {', '.join(parts)} and {where}: give "
            + (f"{give}, or " if give else "")
            + f"a --subject file (.vsk/.mp with {', '.join(vicon[:3])}{'...' if len(vicon) > 3 else ''}, "
              "or a table); 'gaitid models' lists each model's parameters")


def subject_table(subject: Subject):
    """The subject's values as a table: parameter, value, unit, source (one row each)."""
    import pandas as pd

    rows = []
    for f in NUMERIC_FIELDS:
        v = getattr(subject, f)
        if v is not None:
            rows.append({"parameter": f, "value": v, "unit": field_unit(f),
                         "source": subject.sources.get(f, "")})
    for k, v in subject.extra.items():
        unit = "m" if _MM.fullmatch(k) else ""
        rows.append({"parameter": k, "value": v, "unit": unit, "source": subject.sources.get(k, "")})
    return pd.DataFrame(rows, columns=["parameter", "value", "unit", "source"])


def with_sources(subject: Subject, source: str) -> Subject:
    """A copy of ``subject`` whose every set value is recorded as coming from ``source``."""
    srcs = {f: source for f in NUMERIC_FIELDS if getattr(subject, f) is not None}
    srcs.update({k: source for k in subject.extra})
    return replace(subject, extra=dict(subject.extra), sources=srcs)
