"""The subject's anthropometry: the :class:`Subject` record and the one grammar of its keys.

A Subject holds body data in SI (kg, m); a trial carries its file's (the C3D PROCESSING
group, :attr:`gaitid.core.trial.Trial.subject`). Every source of subject data is read into one
through this grammar:

- Vicon names in Vicon units (kg, mm, rad): :data:`VICON_SUBJECT_FIELDS` and
  :func:`subject_from_vicon` (``LeftLegLength`` is shortened to PROCESSING's ``LLegLength``);
- tables and dicts (:func:`subject_from_mapping`, :func:`as_subject`): ``name`` (or ``subject``),
  the Subject fields in SI or with the unit in the name (``height_mm``), ``leg_length``,
  ``knee_width``, ``ankle_width`` for both sides, Vicon names in Vicon units;
- a caller's dict split into Subject values and model parameter overrides
  (:func:`split_subject_dict`);
- a value looked up by Subject field or ``extra`` name (:func:`subject_value`), as the models'
  ``[parameters]`` name their sources.

Values are checked against one range per quantity (:data:`PLAUSIBLE`, which catches a value written
in the wrong unit), whatever their source. A value the user typed (the command line, a caller's
dict) or wrote in a subject table is checked by :func:`check_plausible` and refused (SettingsError;
for a table, the reader's error names the file). A value a Vicon file stores (the C3D's
PROCESSING group, a ``.vsk``/``.mp``) is checked by :func:`stored_value`:
a non-finite, negative or implausible value, or a zero body mass, is kept out of the Subject and
recorded in ``Subject.invalid`` (an :class:`InvalidValue` naming the stored name, the value and
the range); a zero length is Plug-in Gait's "not set" (recorded too, as ``unset``). The merge
(:mod:`gaitid.subject.merge`) then refuses it (DataError) unless another source gives the value,
which it says. Merging several sources, subject files and the layers a run uses: :mod:`gaitid.subject`.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields, replace

from gaitid.core.errors import SettingsError
from gaitid.core.vocabulary import SIDES, side_key


@dataclass
class Subject:
    """Anthropometry in SI (kg, m). Any field may be None when the file does not store it."""

    name: str | None = None
    mass: float | None = None
    height: float | None = None
    leg_length_left: float | None = None
    leg_length_right: float | None = None
    knee_width_left: float | None = None
    knee_width_right: float | None = None
    ankle_width_left: float | None = None
    ankle_width_right: float | None = None
    inter_asis_distance: float | None = None
    marker_diameter: float | None = None
    extra: dict = field(default_factory=dict)  # any other PROCESSING values, SI where the unit is known
    sources: dict = field(default_factory=dict)  # field or extra name -> where its value came from (merge_subject)
    # field -> InvalidValue: what a file stores for it that cannot be used (stored_value); left out
    # of the repr, which lists the values used
    invalid: dict = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class InvalidValue:
    """A value a source stores for a Subject ``field`` that cannot be used: ``stored`` (its name
    and value as stored, ``Bodymass = 5000 kg``), ``why`` (``not plausible (expected 2-400
    kg)``), ``unset`` (a zero length: Plug-in Gait's "not set", not an error), ``source`` (where,
    set by the merge)."""

    field: str
    stored: str
    why: str
    unset: bool = False
    source: str | None = None

    def describe(self) -> str:
        """``C3D PROCESSING stores Bodymass = 5000 kg: not plausible (expected 2-400 kg)``."""
        return f"{self.source or 'the file'} stores {self.stored}: {self.why}"


# Vicon anthropometry name (C3D PROCESSING group, .vsk, .mp) -> (Subject field, scale to SI)
VICON_SUBJECT_FIELDS = {
    "Bodymass": ("mass", 1.0),
    "Height": ("height", 1e-3),
    "LLegLength": ("leg_length_left", 1e-3),
    "RLegLength": ("leg_length_right", 1e-3),
    "LKneeWidth": ("knee_width_left", 1e-3),
    "RKneeWidth": ("knee_width_right", 1e-3),
    "LAnkleWidth": ("ankle_width_left", 1e-3),
    "RAnkleWidth": ("ankle_width_right", 1e-3),
    "InterAsisDistance": ("inter_asis_distance", 1e-3),
    "MarkerDiameter": ("marker_diameter", 1e-3),
}
# Vicon's other subject values whose unit is known (C3D PROCESSING, .vsk, .mp): lengths in mm (a
# name ending so, or the shoulder offset), Plug-in Gait's angles in rad; any other name's unit is
# unknown (flags, marker offsets such as %RMMAX): kept as stored and not listed in subject tables
VICON_LENGTH = re.compile(r"[A-Za-z]+(Length|Width|Distance|Diameter|Thickness|Delta|Depth)|[LR]?ShoulderOffset",
                          re.IGNORECASE)
VICON_ANGLE = re.compile(r"[LR]?(ThighRotation|ShankRotation|TibialTorsion|AnkleAbAdd|StaticPlantFlex|StaticRotOff)"
                         r"|HeadOffset", re.IGNORECASE)
NUMERIC_FIELDS = tuple(f.name for f in fields(Subject) if f.name not in ("name", "extra", "sources", "invalid"))
SIDED = ("leg_length", "knee_width", "ankle_width")  # Subject fields with _left / _right

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


def vicon_unit(name: str, quantity: str | None = None) -> tuple[str, float] | None:
    """(SI unit, scale from the stored unit) of a Vicon subject value other than the Subject
    fields: ``('m', 1e-3)`` for a length (stored in mm), ``('rad', 1.0)`` for an angle; None when
    its unit is not known. ``quantity``: the .vsk's QUANTITY ('length', 'angle'), when it says."""
    short = vicon_short_name(name)
    if quantity == "length" or quantity is None and VICON_LENGTH.fullmatch(short):
        return "m", 1e-3
    if quantity == "angle" or quantity is None and VICON_ANGLE.fullmatch(short):
        return "rad", 1.0
    return None


FUNCTIONAL_VALUE = re.compile(r"(hip_centre|knee_axis|knee_axis_point)_(left|right)_(x|y|z|residual)")  # functional


def extra_unit(name: str) -> str:
    """SI unit of a ``Subject.extra`` value ('m', 'rad', '1' for a functional knee axis's unit
    components; '' when not known: see :func:`vicon_unit`)."""
    hit = FUNCTIONAL_VALUE.fullmatch(name)
    if hit:
        return "1" if hit[1] == "knee_axis" and hit[3] != "residual" else "m"
    unit = vicon_unit(name)
    return unit[0] if unit else ""


def plausible_range(field: str) -> tuple[float, float, str]:
    """(low, high, SI unit) of a Subject field's plausible values."""
    return PLAUSIBLE.get(_base(field), (0.0, math.inf, field_unit(field)))


def check_plausible(field: str, value: float, where: str, hint: str = "") -> float:
    """``value`` (SI) if it is a plausible ``field``; else a SettingsError naming ``where``: the
    check of a value the user typed (command line, a caller's dict)."""
    lo, hi, unit = plausible_range(field)
    if isinstance(value, bool) or not (isinstance(value, (int, float)) and math.isfinite(value) and lo <= value <= hi):
        raise SettingsError(f"{where}: {field} = {value!r} {unit} is not plausible (expected {lo:g}-{hi:g} {unit})"
                            + (f"; {hint}" if hint else ""))
    return float(value)


def stored_value(subject: Subject, field: str, value: float, scale: float, name: str, unit: str,
                 hint: str = "") -> None:
    """Set ``subject.<field>`` to ``value * scale`` (SI) from a file, or record why not in
    ``subject.invalid`` (``name`` and ``unit``: as the file stores it, e.g. 'Bodymass', 'kg'):
    a non-finite or negative value, a zero mass, a value outside the plausible range are
    invalid; a zero length is "not set" (Plug-in Gait's 0 = compute it)."""
    lo, hi, _ = plausible_range(field)
    shown = f"{name} = {value:g} {unit}" if math.isfinite(value) else f"{name} = {value}"
    why = None
    if not math.isfinite(value):
        why = "not a number"
    elif value == 0 and field != "mass":
        subject.invalid[field] = InvalidValue(field, shown, "0, i.e. not set", unset=True)
        return
    elif value <= 0:
        why = f"not a {'body mass' if field == 'mass' else 'length'} (must be positive)"
    elif not lo <= value * scale <= hi:
        why = f"not plausible (expected {lo / scale:g}-{hi / scale:g} {unit})" + (f"; {hint}" if hint else "")
    if why is None:
        setattr(subject, field, float(value * scale))
        subject.invalid.pop(field, None)
    else:
        setattr(subject, field, None)
        subject.invalid[field] = InvalidValue(field, shown, why)


# ----------------------------------------------------------------------------- Vicon values


def vicon_short_name(name: str) -> str:
    """Nexus' full names to the PROCESSING group's: ``LeftLegLength`` -> ``LLegLength``."""
    return re.sub(r"^(Left|Right)(?=[A-Z])", lambda m: m.group(1)[0], name)


def subject_from_vicon(values: dict[str, float], name: str | None = None,
                       quantities: dict[str, str] | None = None) -> Subject:
    """A Subject from Vicon-named values in Vicon units (kg, mm, rad). Anthropometry goes through
    :func:`stored_value`: an invalid value (non-finite, negative, implausible, a zero mass) is
    recorded in ``Subject.invalid``, a zero length is "not set" (Plug-in Gait). Names are
    shortened as PROCESSING spells them (``LeftKneeWidth`` -> ``LKneeWidth``); other values go
    to ``extra``: lengths (``quantities[name] == 'length'``, or a length's name,
    :data:`VICON_LENGTH`) in m, the rest as stored (angles in rad; :func:`vicon_unit`)."""
    subject = Subject(name=name)
    lower = {k.lower(): v for k, v in VICON_SUBJECT_FIELDS.items()}
    quantities = quantities or {}
    for key, v in values.items():
        if v is None:
            continue
        short = vicon_short_name(key)
        field = lower.get(short.lower())
        if field is not None:
            stored_value(subject, field[0], v, field[1], key, "kg" if field[0] == "mass" else "mm")
        elif math.isfinite(v):
            unit = vicon_unit(short, quantities.get(key))
            subject.extra[short] = v * unit[1] if unit else v
    return subject


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
    keys); ``where`` names the file and row in errors. A value that is not a number, negative,
    implausible (:func:`check_plausible`), or a zero mass, is a SettingsError (a table is the
    user's own file: they fix it); a zero length is "not measured" (Plug-in Gait's 0)."""
    subject = Subject()
    lower_vicon = {k.lower(): k for k in VICON_SUBJECT_FIELDS}
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
        vic = None if targets else lower_vicon.get(vicon_short_name(k).lower())
        if vic is not None:
            f, scale = VICON_SUBJECT_FIELDS[vic]
            targets, unit = [f], ("kg" if f == "mass" else "mm")
            hint = f"a Vicon name, so in {unit}; for SI values name it '{f}'"
        elif targets:
            if unit is not None and (unit in ("kg", "g")) != (base == "mass"):
                raise SettingsError(f"{where}: '{k}': a {'mass' if base == 'mass' else 'length'} "
                                    f"cannot be in {unit}")
            scale = _UNIT_SCALE[unit] if unit else 1.0
            hint = "" if unit else f"write the unit in the name, e.g. '{k}_{'kg' if base == 'mass' else 'mm'}'"
        if targets:
            if value is None:
                if raw in (None, ""):
                    continue  # an empty cell: not given
                raise SettingsError(f"{where}: '{k}' must be a number, not {raw!r}")
            for f in targets:
                if value == 0 and f != "mass":
                    continue  # 0 = not measured (Plug-in Gait's convention)
                elif value <= 0:
                    raise SettingsError(f"{where}: '{k}' = {raw!r} must be a positive number")
                else:
                    setattr(subject, f, check_plausible(f, value * scale, f"{where}: '{k}'"
                                                        + (f" ({hint.split(';')[0]})" if vic else ""),
                                                        hint.split("; ")[-1] if hint else ""))
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


def lower_keys(extra: dict) -> dict:
    """``extra`` keyed by lower-case name, the first of names differing only in case kept."""
    out: dict = {}
    for k, val in extra.items():
        out.setdefault(k.lower(), val)
    return out


def subject_value(subject: Subject, key: str, extra_lower: dict | None = None) -> float | None:
    """A value by Subject field name or ``extra`` name (case-insensitive; the first of names
    differing only in case); None when unset or not a finite number. ``extra_lower``:
    :func:`lower_keys` of ``subject.extra``, for a caller that looks up many."""
    v = getattr(subject, key) if key in NUMERIC_FIELDS else None
    if v is None:
        v = (extra_lower if extra_lower is not None else lower_keys(subject.extra)).get(key.lower())
    try:
        v = float(v) if v is not None else None
    except (TypeError, ValueError):
        return None
    return v if v is not None and math.isfinite(v) else None


def option_for(sources: list[str]) -> str | None:
    """The command-line option that supplies a parameter looked for under ``sources``."""
    for s in sources:
        base = _base(s)
        if base in OPTIONS:
            return OPTIONS[base]
    return None


def format_value(field: str, value: float) -> str:
    """A Subject value as labs write it: ``74 kg``, ``920 mm``."""
    return f"{value:g} kg" if field_unit(field) == "kg" else f"{value * 1000:g} mm"


# ----------------------------------------------------------------------------- a caller's dict


_SUBJECT_KEYS = {"name", *NUMERIC_FIELDS, *SIDED} | {f"{b}_{u}" for b in (*NUMERIC_FIELDS, *SIDED)
                                                      for u in ("kg", "g", "m", "cm", "mm")}


def is_subject_key(key: str) -> bool:
    """Whether a caller's dict key names a Subject value (a field, a field with its unit, a
    sided base such as ``leg_length``, or a Vicon anthropometry name) rather than a model
    parameter."""
    return key.lower() in _SUBJECT_KEYS or vicon_short_name(str(key)) in VICON_SUBJECT_FIELDS


def split_subject_dict(values: dict) -> tuple[dict, dict]:
    """A caller's dict split into Subject values and model parameter overrides (both sides, or
    per side under 'left'/'right' in any case)."""
    subject, params = {}, {}
    for key, value in values.items():
        side = next((s for s in SIDES if str(key).lower() == side_key(s)), None)
        if side is not None and isinstance(value, dict):
            sv, pv = split_subject_dict(value)
            if sv:
                subject[side_key(side)] = sv
            if pv:
                params[side_key(side)] = pv
        elif is_subject_key(str(key)):
            subject[key] = value
        else:
            params[key] = value
    return subject, params
