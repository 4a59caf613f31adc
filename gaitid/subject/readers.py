"""Subject files, read into a :class:`gaitid.core.subject_record.Subject` (SI).

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
  1760 "m"), negative, or a zero mass, is an error that names the file, the row, the column and
  the unit to write: a table is the user's own file.

A ``.vsk``'s or ``.mp``'s anthropometry goes through the same plausible ranges
(:func:`gaitid.core.subject_record.stored_value`): a value outside its range, negative, non-finite
(``inf``, ``nan``), or a zero mass is kept out of the Subject and recorded in ``Subject.invalid``
with the name, value and range; the subject stage refuses it unless a more trusted source gives
that value (then a warning says which value it ignored). A zero length is Plug-in Gait's "not set".

Limits (a FileFormatError naming the file): a file beyond :data:`MAX_SUBJECT_FILE_BYTES`, JSON, TOML
or XML nested too deeply, a ``.vsk`` chain of more than :data:`MAX_EXPRESSION_CHAIN` expressions each
naming the next. An expression longer than :data:`MAX_EXPRESSION_CHARS` or too deeply nested to
evaluate is one gaitid cannot compute: the parameter keeps its stored VALUE, as for any such one.
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
from pathlib import Path

from gaitid.core.errors import FileFormatError, SettingsError
from gaitid.core.subject_record import Subject, subject_from_mapping, subject_from_vicon, vicon_short_name
from gaitid.io.atomic import register_input
from gaitid.io.input_files import input_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SUBJECT_FILE_TYPES = (".vsk", ".mp", ".csv", ".json", ".toml")
# A lab's subject files take a few kB (a Plug-in Gait .vsk: 44 kB; a table of a thousand subjects:
# about 50 kB); the parsers hold 30-50 times a file's size in memory (a 10 MB CSV of 390,000
# subjects: 7 s, 480 MB; 63 MB took 95 s and 3.1 GB), so a larger file is refused with the reason.
MAX_SUBJECT_FILE_BYTES = 10 * 2**20
# A .vsk parameter defined by an expression naming another, which names another...: Nexus' chains
# are a few links long; a longer one is refused (it would exhaust Python's recursion).
MAX_EXPRESSION_CHAIN = 100
MAX_EXPRESSION_CHARS = 2000  # Plug-in Gait's longest formula takes about 60 characters

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
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"an expression of {len(text)} characters, beyond the {MAX_EXPRESSION_CHARS} "
                         "a subject parameter's formula takes")
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")  # Vicon writes powers as ^
    except (SyntaxError, RecursionError, MemoryError):  # (Memory: "too many nested parentheses")
        raise ValueError(f"not an arithmetic expression: {text[:60]!r}") from None

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
        raise ValueError(f"cannot evaluate {text[:60]!r}: {exc}") from None
    except RecursionError:
        raise ValueError(f"{text[:60]!r}... is nested too deeply to evaluate") from None


def _vsk_elements(path: Path) -> list[dict]:
    input_file(path, "subject file", MAX_SUBJECT_FILE_BYTES)
    try:
        root = ET.parse(path).getroot()
    except RecursionError:
        raise FileFormatError("XML nested too deeply: not a Vicon subject file", path) from None
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


def _vsk_values(path: Path) -> tuple[dict[str, float], dict[str, str], dict[str, float]]:
    """(finite values, QUANTITY by name, non-finite stored values by name)."""
    elements = _vsk_elements(path)
    raw: dict[str, dict] = {}
    for el in elements:
        raw.setdefault(el["NAME"], el)  # first definition wins (StaticParameter precedes Parameter)
    values: dict[str, float] = {}
    failed: set[str] = set()
    busy: set[str] = set()
    broken: dict[str, float] = {}

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
        if len(busy) >= MAX_EXPRESSION_CHAIN:
            raise FileFormatError(f"parameter '{name}' is reached through a chain of more than "
                                  f"{MAX_EXPRESSION_CHAIN} expressions each naming the next: not a subject file "
                                  "gaitid can evaluate", path)
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
            if v is not None:
                broken[name] = v  # inf, nan: not a value, but not dropped silently (read_vsk)
            raise KeyError(name)
        values[name] = v
        return v

    for name in raw:
        try:
            value(name)
        except (KeyError, ValueError):
            pass
    quantities = {name: (el.get("QUANTITY") or "").lower() for name, el in raw.items() if el.get("QUANTITY")}
    return {n: values[n] for n in raw if n in values}, quantities, broken


def read_vsk(path: str | Path) -> Subject:
    """A Subject from a Vicon Nexus ``.vsk`` (see :func:`vsk_parameters`); the name is the
    file's stem, as Nexus names subject files. A non-finite anthropometric value (``inf``,
    ``nan``) is recorded as invalid (``Subject.invalid``), never dropped silently."""
    path = Path(path)
    values, quantities, broken = _vsk_values(path)
    return subject_from_vicon({**values, **broken}, name=path.stem, quantities=quantities)


def _read_mp(path: Path) -> Subject:
    """``$Name = value`` lines; ``$LeftLegLength`` is the PROCESSING group's ``LLegLength``."""
    text = _text(path)
    values = {}
    for line in text.splitlines():
        m = re.match(r"\s*\$(\w+)\s*=\s*([-+0-9.eE]+|[-+]?(?i:inf|nan))\s*$", line)
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
    except RecursionError:
        raise FileFormatError("JSON nested too deeply: not a subject table", path) from None
    return _rows_nested(data, path)


def _rows_toml(path: Path) -> list[tuple[str, dict]]:
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise FileFormatError(f"not valid TOML: {exc}", path) from None
    except RecursionError:
        raise FileFormatError("TOML nested too deeply: not a subject table", path) from None
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
    register_input(path)  # no output of this run may replace it
    input_file(path, "subject file", MAX_SUBJECT_FILE_BYTES)
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
