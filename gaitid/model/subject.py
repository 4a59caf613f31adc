"""Subject data from every source a lab has, read into a :class:`gaitid.trial.Subject` (SI),
and merged so that each value comes from the most trusted source that has it.

Sources (each reader returns a Subject in SI: kg, m, rad):

- the C3D's PROCESSING group (read by :func:`gaitid.io.c3d.read_c3d` into ``trial.subject``);
- a Vicon Nexus subject file ``.vsk`` (:func:`read_vsk`): every ``<StaticParameter>`` and
  ``<Parameter>``, full Vicon names (``LeftLegLength``), values as stored (mass kg, lengths mm,
  angles rad; ``QUANTITY`` says which); a parameter given by an ``EXPRESSION`` (``( 0.1288 *
  LeftLegLength ) - 48.56``) gets the expression's value, computed from the file's other
  parameters as Nexus does (:func:`evaluate_expression`: + - * / ^ **, parentheses, sin, cos,
  tan, asin, acos, atan, atan2, sqrt, abs, exp, log, min, max; no ``eval``);
- a Vicon subject measurement file ``.mp`` (``$LeftLegLength = 920``, same names and units);
- a table for labs without Vicon, one subject per row or entry: ``.csv`` (header row),
  ``.json`` (an object, a list of objects, or ``{"subjects": {name: {...}}}``) or ``.toml``
  (top-level keys, ``[subjects.NAME]`` tables or ``[[subject]]`` entries). Keys: ``name`` (or
  ``subject``), the Subject fields (``mass``, ``height``, ``leg_length_left``...; ``leg_length``,
  ``knee_width``, ``ankle_width`` for both sides) in SI, or with the unit in the name
  (``height_mm``, ``leg_length_left_cm``, ``mass_kg``); Vicon names (``Bodymass``,
  ``LLegLength``, ``LeftKneeWidth``, ``LTibialTorsion``) in Vicon units (kg, mm, rad); a TOML
  ``[extra]`` table of Vicon-named values taken as SI. Text columns such as ``date`` or
  ``group`` are ignored. A value outside the plausible range of its quantity (a height of
  1760 "m") is an error that names the column and the unit to write.

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

import ast
import csv
import json
import math
import operator
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import fields, replace
from pathlib import Path

from gaitid.errors import FileFormatError, SettingsError
from gaitid.trial import VICON_SUBJECT_FIELDS, Subject

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

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

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.Pow: math.pow}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos,
              "atan": math.atan, "atan2": math.atan2, "sqrt": math.sqrt, "abs": abs, "exp": math.exp,
              "log": math.log, "log10": math.log10, "min": min, "max": max, "pow": math.pow}


def evaluate_expression(text: str, lookup) -> float:
    """Value of an arithmetic expression such as ``( 0.1288 * LeftLegLength ) - 48.56``.

    ``lookup(name) -> float`` gives a named value (a KeyError for an unknown name). Only
    numbers, names, + - * / ^ ** (^ is a power, as Vicon writes it), unary signs, parentheses
    and the functions sin, cos, tan, asin, acos, atan, atan2, sqrt, abs, exp, log, log10, min,
    max, pow (case-insensitive) are allowed; anything else is a ValueError. Nothing is
    executed: the text is parsed with :mod:`ast` and the tree walked here."""
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")  # Vicon writes powers as ^
    except SyntaxError:
        raise ValueError(f"not an arithmetic expression: {text!r}") from None

    def walk(node) -> float:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return float(node.value)
        if isinstance(node, ast.Name):
            return float(lookup(node.id))
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return float(_BINARY[type(node.op)](walk(node.left), walk(node.right)))
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            return float(_UNARY[type(node.op)](walk(node.operand)))
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords
                and node.func.id.lower() in _FUNCTIONS):
            return float(_FUNCTIONS[node.func.id.lower()](*(walk(a) for a in node.args)))
        raise ValueError(f"{ast.dump(node)[:40]}... is not allowed in a subject-parameter expression")

    try:
        return walk(tree)
    except (ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ValueError(f"cannot evaluate {text!r}: {exc}") from None


# ----------------------------------------------------------------------------- .vsk


def _vsk_elements(path: Path) -> list[dict]:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        raise FileFormatError(f"not a readable Vicon subject (XML) file: {exc}", path) from None
    out = [dict(el.attrib) for el in root.iter() if el.tag in ("StaticParameter", "Parameter") and el.get("NAME")]
    if not out:
        raise FileFormatError("no <StaticParameter> or <Parameter NAME=... VALUE=...> entries: "
                              "not a Vicon subject file", path)
    return out


def vsk_parameters(path: str | Path) -> dict[str, float]:
    """Every parameter of a Vicon ``.vsk`` by its Vicon name, in Vicon units as Nexus shows
    them (Bodymass kg, lengths mm, angles rad): ``VALUE``, or for a parameter with an
    ``EXPRESSION`` the expression's value from the other parameters (Nexus recomputes these;
    the stored VALUE may be stale, e.g. 0). A parameter with neither a number nor a computable
    expression is left out."""
    return _vsk_values(Path(path))[0]


def _vsk_values(path: Path) -> tuple[dict[str, float], dict[str, str]]:
    elements = _vsk_elements(path)
    raw: dict[str, dict] = {}
    for el in elements:
        raw.setdefault(el["NAME"], el)  # first definition wins (StaticParameter precedes Parameter)
    values: dict[str, float] = {}
    failed: set[str] = set()
    busy: set[str] = set()

    def stored(el) -> float | None:
        try:
            return float(el.get("VALUE"))
        except (TypeError, ValueError):
            if el.get("VALUE") not in (None, "") and not el.get("EXPRESSION"):
                raise FileFormatError(f"parameter '{el['NAME']}' has a non-numeric VALUE {el.get('VALUE')!r}",
                                      path) from None
            return None

    def value(name: str) -> float:
        if name in values:
            return values[name]
        if name not in raw or name in failed:
            raise KeyError(name)
        if name in busy:
            raise ValueError(f"circular expression through '{name}'")
        el = raw[name]
        busy.add(name)
        try:
            if el.get("EXPRESSION"):
                try:
                    v = evaluate_expression(el["EXPRESSION"], value)
                except (KeyError, ValueError):
                    v = stored(el)  # an expression we cannot compute: keep what Nexus stored
            else:
                v = stored(el)
        finally:
            busy.discard(name)
        if v is None or not math.isfinite(v):
            failed.add(name)
            raise KeyError(name)
        values[name] = v
        return v

    for name in raw:
        try:
            value(name)
        except (KeyError, ValueError):
            pass
    quantities = {name: (el.get("QUANTITY") or "").lower() for name, el in raw.items() if el.get("QUANTITY")}
    return {n: values[n] for n in raw if n in values}, quantities


def read_vsk(path: str | Path) -> Subject:
    """A Subject from a Vicon Nexus ``.vsk`` (see :func:`vsk_parameters`); the name is the
    file's stem, as Nexus names subject files."""
    path = Path(path)
    values, quantities = _vsk_values(path)
    return subject_from_vicon(values, name=path.stem, quantities=quantities)


# ----------------------------------------------------------------------------- .mp


def _read_mp(path: Path) -> Subject:
    """``$Name = value`` lines; ``$LeftLegLength`` is the PROCESSING group's ``LLegLength``."""
    text = _text(path)
    values = {}
    for line in text.splitlines():
        m = re.match(r"\s*\$(\w+)\s*=\s*([-+0-9.eE]+)\s*$", line)
        if m:
            try:
                values[vicon_short_name(m.group(1))] = float(m.group(2))
            except ValueError:
                continue
    if not values:
        raise FileFormatError("no '$Name = value' lines: not a Vicon subject measurement (.mp) file", path)
    return subject_from_vicon(values, name=path.stem)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig", errors="replace")
    except OSError as exc:
        raise FileFormatError(f"cannot read the file: {exc.strerror or exc}", path) from None


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


def _rows_csv(path: Path) -> list[tuple[str, dict]]:
    text = _text(path)
    try:
        dialect = csv.Sniffer().sniff(text.splitlines()[0] if text else ",", delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(text.splitlines(), dialect=dialect)
    if not reader.fieldnames:
        raise FileFormatError("empty table: expected a header row (name, mass, height_mm, ...)", path)
    return [(f"row {i + 2}", row) for i, row in enumerate(reader) if any((v or "").strip() for v in row.values())]


def _rows_json(path: Path) -> list[tuple[str, dict]]:
    try:
        data = json.loads(_text(path))
    except ValueError as exc:
        raise FileFormatError(f"not valid JSON: {exc}", path) from None
    return _rows_nested(data, path)


def _rows_toml(path: Path) -> list[tuple[str, dict]]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise FileFormatError(f"not valid TOML: {exc}", path) from None
    if isinstance(data.get("subject"), list):
        return [(f"[[subject]] {i + 1}", dict(e)) for i, e in enumerate(data["subject"]) if isinstance(e, dict)]
    return _rows_nested(data, path)


def _rows_nested(data, path: Path) -> list[tuple[str, dict]]:
    if isinstance(data, list):
        if not all(isinstance(e, dict) for e in data):
            raise FileFormatError("a list of subjects must hold objects ({\"name\": ..., \"mass\": ...})", path)
        return [(f"entry {i + 1}", e) for i, e in enumerate(data)]
    if not isinstance(data, dict):
        raise FileFormatError("expected an object (one subject) or a list of objects", path)
    subjects = data.get("subjects")
    if isinstance(subjects, dict):
        rows = []
        for name, entry in subjects.items():
            if not isinstance(entry, dict):
                raise FileFormatError(f"subjects.{name} must be a table of values", path)
            rows.append((f"subjects.{name}", {"name": name, **entry}))
        return rows
    return [("", data)]


def read_subjects(path: str | Path) -> dict[str, Subject]:
    """Every subject of a subject file, by name (see the module docstring for the formats).
    A ``.vsk`` / ``.mp`` holds one subject named after the file; a table row without a name
    is named ``<file stem>`` (one row) or ``<file stem>#<row>``."""
    path = Path(path)
    if not path.is_file():
        raise FileFormatError("subject file not found", path)
    suffix = path.suffix.lower()
    if suffix == ".vsk":
        s = read_vsk(path)
        return {s.name: s}
    if suffix == ".mp":
        s = _read_mp(path)
        return {s.name: s}
    readers = {".csv": _rows_csv, ".json": _rows_json, ".toml": _rows_toml}
    if suffix not in readers:
        raise FileFormatError(f"unknown subject file type '{path.suffix}' (expected "
                              f"{', '.join(SUBJECT_FILE_TYPES)})", path)
    rows = readers[suffix](path)
    if not rows:
        raise FileFormatError("no subject in the file", path)
    out: dict[str, Subject] = {}
    for i, (where, row) in enumerate(rows):
        try:
            s = subject_from_mapping(row, where or "values")
        except SettingsError as exc:
            raise FileFormatError(exc.reason, path) from None
        if s.name is None:
            s.name = path.stem if len(rows) == 1 else f"{path.stem}#{i + 1}"
        if s.name in out:
            raise FileFormatError(f"subject '{s.name}' appears twice", path)
        out[s.name] = s
    return out


def read_subject(path: str | Path, name: str | None = None) -> Subject:
    """One subject from a subject file: the only one, or the one called ``name``
    (case-insensitive) in a table of several."""
    subjects = read_subjects(path)
    if name is None:
        if len(subjects) == 1:
            return next(iter(subjects.values()))
        raise FileFormatError(f"{len(subjects)} subjects in the file ({', '.join(subjects)}): say which", path)
    pick = select_subject(subjects, [name])
    if pick is None:
        raise FileFormatError(f"no subject '{name}' in the file (it has {', '.join(subjects)})", path)
    return pick


def select_subject(subjects: dict[str, Subject], names) -> Subject | None:
    """The subject whose name matches the first of ``names`` (case-insensitive) found."""
    lower = {k.lower(): v for k, v in subjects.items() if k}
    for n in names:
        if n and n.lower() in lower:
            return lower[n.lower()]
    return None


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
        for side in ("left", "right"):
            prefix = model.sides[side]
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
