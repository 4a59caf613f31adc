"""Marker-set models as data: load and validate ``models/*.toml``.

A model file says which markers a trial needs, which subject parameters it uses, how to
compute points (joint centres, virtual markers) and segment frames, which body-segment
parameter table applies, and how joint angles are defined. The format is documented in
``models/README.md``. Every problem found raises :class:`gaitid.core.errors.ModelError` naming
the file and the key.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gaitid.core.errors import ModelError
from gaitid.core.resources import models_dir
from gaitid.core.vocabulary import SIDES, side_key
from gaitid.model.point_methods import POINT_METHODS, point_method

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SEGMENT_METHODS = {
    "pelvis": {"lasi", "rasi", "sacrum"},
    "axes": {"origin", "primary", "secondary"},
    "axis_points": {"origin", "x", "y", "z"},
    "progression": {"follow"},
}
STATIC_METHODS = {"pig_foot": {"ankle", "toe", "heel", "shank"}}
_OPTIONAL = {  # keys allowed besides the method's required ones ('of' and 'offset' too, on any item)
    # a point: its method's optional keys (gaitid.model.point_methods); any point accepts every
    # method's, unused where they do not apply
    "point": {"side", "method", "label", "functional"}.union(*(m.optional for m in POINT_METHODS.values())),
    "segment": {"side", "method", "proximal", "distal", "bsip", "rotate", "angle_axes", "long_axis", "ml_axis",
                "bsip_endpoints"},
    "static": {"side", "method", "flat_foot", "sole_delta"},
}
# [gait] defaults for model files without the table: Plug-in Gait's labels
DEFAULT_GAIT = {
    "heel": ["{S}HEE"], "toe": ["{S}TOE"], "ankle": ["{S}ANK"],
    "pelvis": ["LASI", "RASI", "LPSI", "RPSI", "SACR"], "pelvis_front": ["LASI", "RASI"],
    "pelvis_back": ["LPSI", "RPSI", "SACR"],
}
SEQUENCES = {"".join(p) for p in ("XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX", "XYX", "XZX", "YXY", "YZY", "ZXZ", "ZYZ")}


@dataclass
class Model:
    """A validated model definition (the parsed TOML plus where it came from)."""

    name: str
    path: Path
    title: str
    bsip: str
    chain: list[str]
    root: str | None
    sides: dict[str, str]  # 'Left'/'Right' -> label prefix ('L', 'R')
    required_markers: list[str]
    optional_markers: list[str]
    one_of: list[list[str]]
    parameters: dict[str, dict]
    points: dict[str, dict]
    segments: dict[str, dict]
    static: dict[str, dict] = field(default_factory=dict)
    joints: dict[str, dict] = field(default_factory=dict)
    degrees_from_software: list[str] = field(default_factory=list)
    aliases: dict[str, list[str]] = field(default_factory=dict)  # label -> other names for it
    clusters: dict[str, dict] = field(default_factory=dict)  # technical clusters (CAST)
    gait: dict[str, list[str]] = field(default_factory=dict)  # [gait]: role -> candidate labels
    segment_markers: dict[str, list[str]] = field(default_factory=dict)  # segment -> markers on it (gap filling)

    def error(self, key: str, problem: str) -> ModelError:
        return ModelError(f"model key '{key}': {problem}", self.path)

    def per_side(self, kind: str, name: str) -> bool:
        item = getattr(self, kind + "s")[name]
        return item.get("side", "each") != "none"

    def labels_for(self, side_prefix: str) -> list[str]:
        """Required marker labels with ``{S}`` replaced by a side prefix."""
        return [m.replace("{S}", side_prefix) for m in self.required_markers]


def list_models() -> list[str]:
    """Names of the models shipped in ``models/`` (file names without ``.toml``)."""
    return sorted(p.stem for p in models_dir().glob("*.toml"))


def read_toml(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ModelError("model file not found", path) from None
    except tomllib.TOMLDecodeError as exc:
        raise ModelError(f"not valid TOML: {exc}", path) from None
    except OSError as exc:
        raise ModelError(f"cannot read the file: {exc}", path) from None


def resolve_path(name_or_path: str | Path, folder: Path | None = None, kind: str = "model") -> Path:
    """A model (or BSIP table) file from a shipped name (``'plugin-gait'``) or a path."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        return p
    base = folder if folder is not None else models_dir()
    candidate = base / f"{name_or_path}.toml"
    if candidate.exists():
        return candidate
    known = sorted(q.stem for q in base.glob("*.toml"))
    raise ModelError(f"no {kind} named '{name_or_path}' in {base} (known: {', '.join(known) or 'none'})", candidate)


def _expect(model_path: Path, table: dict, key: str, where: str, kind: type | tuple, required: bool = True) -> Any:
    if key not in table:
        if required:
            raise ModelError(f"model key '{where}.{key}' is missing", model_path)
        return None
    value = table[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ModelError(f"model key '{where}.{key}' must be {names}, not {value!r}", model_path)
    return value


def load_model(name_or_path: str | Path) -> Model:
    """Load and validate a model from ``models/<name>.toml`` or a file path (cached while the
    file is unchanged; treat the result as read-only)."""
    path = resolve_path(name_or_path)
    try:
        stamp = path.stat().st_mtime_ns
    except OSError:
        stamp = None
    return _load_model_cached(path, stamp)


def per_model(cache: dict, model: Model, key: tuple, build, limit: int = 16):
    """``build()``, computed once per ``model`` object (read-only, shared as :func:`load_model`
    shares it) and ``key`` and kept in ``cache``: a model is unhashable, so it is keyed by its id
    and kept alive by the cache so that the id stays its own; at ``limit`` entries the cache starts
    over. Thread-safe: the value is returned as built, never read back."""
    full = (id(model),) + tuple(key)
    hit = cache.get(full)
    if hit is not None and hit[0] is model:
        return hit[1]
    value = build()
    if len(cache) >= limit:
        cache.clear()
    cache[full] = (model, value)
    return value


def _merge(base: dict, child: dict) -> dict:
    """``child`` over ``base``: tables merge one level down (a point/segment/... is replaced
    whole), other values are replaced."""
    out = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            out[key] = {**base[key], **value}
        else:
            out[key] = value
    return out


def _read_extended(path: Path, seen: tuple = ()) -> dict:
    """The TOML of a model file, merged over the model it ``extends`` (model.extends = name or path)."""
    data = read_toml(path)
    parent = data.get("model", {}).get("extends") if isinstance(data.get("model"), dict) else None
    if parent is None:
        return data
    if not isinstance(parent, str):
        raise ModelError("model key 'model.extends' must be a model name or a path", path)
    local = path.parent / (parent if parent.endswith(".toml") else f"{parent}.toml")
    ppath = local if local.exists() else resolve_path(parent)
    if ppath.resolve() in seen or ppath.resolve() == path.resolve():
        raise ModelError(f"model key 'model.extends': circular ({parent})", path)
    base = _read_extended(ppath, seen + (path.resolve(),))
    merged = _merge(base, data)
    merged["model"].pop("extends", None)
    return merged


@functools.lru_cache(maxsize=32)
def _load_model_cached(path: Path, stamp: int | None) -> Model:
    data = _read_extended(path)
    head = _expect(path, data, "model", "", dict)
    sides = _expect(path, head, "sides", "model", dict, required=False) or {"left": "L", "right": "R"}
    if set(sides) != {side_key(s) for s in SIDES} or not all(isinstance(v, str) for v in sides.values()):
        raise ModelError("model key 'model.sides' must map 'left' and 'right' to label prefixes", path)
    sides = {s: sides[side_key(s)] for s in SIDES}
    gait = {**DEFAULT_GAIT, **(_expect(path, data, "gait", "", dict, required=False) or {})}
    for role, labels in gait.items():
        if role not in DEFAULT_GAIT:
            raise ModelError(f"model key 'gait.{role}' is not one of {', '.join(DEFAULT_GAIT)}", path)
        if isinstance(labels, str):
            gait[role] = [labels]
        elif not (isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels)):
            raise ModelError(f"model key 'gait.{role}' must be a list of marker labels", path)
    markers = _expect(path, data, "markers", "", dict, required=False) or {}
    for key in ("required", "optional"):
        lst = markers.get(key, [])
        if not isinstance(lst, list) or not all(isinstance(m, str) for m in lst):
            raise ModelError(f"model key 'markers.{key}' must be a list of marker labels", path)
    one_of = markers.get("one_of", [])
    if not isinstance(one_of, list) or not all(
        isinstance(g, list) and all(isinstance(m, str) for m in g) for g in one_of
    ):
        raise ModelError("model key 'markers.one_of' must be a list of lists of marker labels", path)
    model = Model(
        name=_expect(path, head, "name", "model", str),
        path=path,
        title=head.get("title", ""),
        bsip=_expect(path, head, "bsip", "model", str),
        chain=_expect(path, head, "chain", "model", list),
        root=_expect(path, head, "root", "model", str, required=False),
        sides=sides,
        required_markers=markers.get("required", []),
        optional_markers=markers.get("optional", []),
        one_of=one_of,
        parameters=_expect(path, data, "parameters", "", dict, required=False) or {},
        points=_expect(path, data, "points", "", dict, required=False) or {},
        segments=_expect(path, data, "segments", "", dict),
        static=_expect(path, data, "static", "", dict, required=False) or {},
        joints=_expect(path, data, "joints", "", dict, required=False) or {},
        degrees_from_software=_expect(path, head, "degrees_from_software", "model", list, required=False) or [],
        aliases=_expect(path, data, "aliases", "", dict, required=False) or {},
        clusters=_expect(path, data, "clusters", "", dict, required=False) or {},
        gait=gait,
        segment_markers=_expect(path, data, "segment_markers", "", dict, required=False) or {},
    )
    _validate(model)
    return model


def required_markers(model: str | Path | Model) -> dict[str, list]:
    """The trial labels a model needs, ``{S}`` resolved for both sides.

    Returns ``{'required': [...], 'one_of': [[...], ...], 'optional': [...],
    'from_static': [...], 'aliases': {label: [other names]}}``: ``from_static`` are the
    required landmarks a technical cluster rebuilds when a static trial is given (then the
    walking trial need not have them)."""
    m = model if isinstance(model, Model) else load_model(model)

    def both(labels):
        out = []
        for lab in labels:
            for pre in ([m.sides[s] for s in SIDES] if "{S}" in lab else [""]):
                name = lab.replace("{S}", pre)
                if name not in out:
                    out.append(name)
        return out

    from_static = both([l for c in m.clusters.values() for l in c.get("landmarks", [])])
    aliases = {}
    for canon, others in m.aliases.items():
        for pre in ([m.sides[s] for s in SIDES] if "{S}" in canon else [""]):
            aliases[canon.replace("{S}", pre)] = [o.replace("{S}", pre) for o in others]
    return {"required": both(m.required_markers), "one_of": [list(g) for g in m.one_of],
            "optional": both(m.optional_markers), "from_static": from_static, "aliases": aliases}


def _check_rotation(model: Model, rot, key: str) -> None:
    if not isinstance(rot, dict) or rot.get("axis") not in ("x", "y", "z") or rot.get("param") not in model.parameters:
        raise model.error(key, "each entry needs axis = 'x'|'y'|'z' and param = a name from [parameters]")


def _validate(model: Model) -> None:
    err = model.error
    for name, spec in model.parameters.items():
        if not isinstance(spec, dict):
            raise err(f"parameters.{name}", "must be a table like { from = [...], default = ... }")
        src = spec.get("from", [])
        if not isinstance(src, list) or not all(isinstance(s, str) for s in src):
            raise err(f"parameters.{name}.from", "must be a list of Subject fields or PROCESSING names")
        unknown = set(spec) - {"from", "scale", "default", "required", "mean", "static", "angle"}
        if unknown:
            raise err(f"parameters.{name}", f"unknown key(s) {', '.join(sorted(unknown))}")
    for kind, table in (("point", model.points), ("segment", model.segments), ("static", model.static)):
        for name, spec in table.items():
            where = f"{kind}s.{name}" if kind != "static" else f"static.{name}"
            if not isinstance(spec, dict):
                raise err(where, "must be a table")
            method = spec.get("method")
            if kind == "point":  # a ModelError naming the file, the point and the known methods
                entry = point_method(method, model.path, f"{where}.method")
                required, check = entry.required, entry.check
            else:
                methods = SEGMENT_METHODS if kind == "segment" else STATIC_METHODS
                if method not in methods:
                    raise err(f"{where}.method", f"{method!r} is not one of {', '.join(sorted(methods))}")
                required, check = methods[method], None
            missing = required - set(spec)
            if missing:
                raise err(where, f"method '{method}' needs key(s) {', '.join(sorted(missing))}")
            extra = set(spec) - required - _OPTIONAL[kind] - {"of", "offset"}
            if extra:
                raise err(where, f"unknown key(s) {', '.join(sorted(extra))}")
            if spec.get("side", "each") not in ("each", "none"):
                raise err(f"{where}.side", "must be 'each' (per side, the default) or 'none'")
            if check is not None:
                check(model, where, spec)
            if kind == "point" and "functional" in spec and not (isinstance(spec["functional"], str)
                                                                and "segment" in spec):
                raise err(f"{where}.functional", "names the subject values of a functional centre "
                          "(functional = \"hip_centre\") in the point's segment: the point needs 'segment'")
            for rot in spec.get("rotate", []) if kind == "segment" else []:
                _check_rotation(model, rot, f"{where}.rotate")
            axes = spec.get("angle_axes")
            if axes is not None and (
                not isinstance(axes, list) or len(axes) != 3 or sorted(a.lstrip("-") for a in axes) != ["x", "y", "z"]
            ):
                raise err(f"{where}.angle_axes", "must list the three axes, e.g. ['-z', 'y', 'x']")
    for seg, labels in model.segment_markers.items():
        if seg not in model.segments:
            raise err(f"segment_markers.{seg}", f"is not a segment of the model ({', '.join(model.segments)})")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise err(f"segment_markers.{seg}", "must be a list of marker labels")
    for canon, others in model.aliases.items():
        if not isinstance(others, list) or not all(isinstance(o, str) for o in others):
            raise err(f"aliases.{canon}", "must be a list of other labels for the same marker")
    for name, spec in model.clusters.items():
        where = f"clusters.{name}"
        if not isinstance(spec, dict):
            raise err(where, "must be a table")
        mk, lm = spec.get("markers"), spec.get("landmarks")
        if not isinstance(mk, list) or len(mk) < 3 or not all(isinstance(x, str) for x in mk):
            raise err(f"{where}.markers", "must list three or more marker labels (a rigid cluster)")
        if not isinstance(lm, list) or not lm or not all(isinstance(x, str) for x in lm):
            raise err(f"{where}.landmarks", "must list the anatomical landmark labels the cluster carries")
        thr = spec.get("max_residual", 0.005)
        if not isinstance(thr, (int, float)) or not thr > 0:
            raise err(f"{where}.max_residual", "must be a positive distance in m")
        extra = set(spec) - {"markers", "landmarks", "max_residual", "segment"}
        if extra:
            raise err(where, f"unknown key(s) {', '.join(sorted(extra))}")
    for name in model.chain:
        if name not in model.segments:
            raise err("model.chain", f"segment '{name}' is not defined in [segments]")
        seg = model.segments[name]
        if "proximal" not in seg or "distal" not in seg:
            raise err(f"segments.{name}", "a chain segment needs 'proximal' and 'distal' points (its joint centres)")
        ends = seg.get("bsip_endpoints")
        good = isinstance(ends, list) and len(ends) == 2 and all(isinstance(e, str) for e in ends)
        if ends is not None and not good:
            raise err(f"segments.{name}.bsip_endpoints", "must be two points [from, to] (the table's segment length)")
    if model.root is not None and model.root not in model.segments:
        raise err("model.root", f"segment '{model.root}' is not defined in [segments]")
    for name, spec in model.joints.items():
        where = f"joints.{name}"
        if not isinstance(spec, dict):
            raise err(where, "must be a table")
        for key in ("proximal", "distal"):
            if spec.get(key) not in model.segments:
                raise err(f"{where}.{key}", f"{spec.get(key)!r} is not a segment of this model")
        for rot in spec.get("proximal_rotate", []):
            _check_rotation(model, rot, f"{where}.proximal_rotate")
        if spec.get("sequence", "YXZ").upper() not in SEQUENCES:
            raise err(f"{where}.sequence", f"{spec.get('sequence')!r} is not a Cardan/Euler sequence such as 'YXZ'")
        for key in ("outputs", "left", "right", "offsets"):
            v = spec.get(key, [1, 2, 3] if key == "outputs" else [1, 1, 1])
            if not isinstance(v, list) or len(v) != 3 or not all(isinstance(x, (int, float)) for x in v):
                raise err(f"{where}.{key}", "must be a list of three numbers")
        if sorted(spec.get("outputs", [1, 2, 3])) != [1, 2, 3]:
            raise err(f"{where}.outputs", "must be a permutation of [1, 2, 3]")


def model_parameters(model: str | Path | Model) -> list[dict]:
    """The subject parameters a model uses, for ``gaitid models`` and error messages: one dict
    per parameter with ``name``, ``required`` (bool), ``sources`` (Subject fields and Vicon
    names looked for, ``{S}``/``{side}`` kept), ``default`` (None, a number in SI/rad, or
    ``'markers:A,B'``: measured between two markers), ``static`` (calibrated from a static
    trial), ``option`` (the command-line option that supplies it, or None)."""
    from gaitid.core.subject_record import option_for

    m = model if isinstance(model, Model) else load_model(model)
    out = []
    for name, spec in m.parameters.items():
        srcs = list(spec.get("from", []))
        resolved = [s.replace("{side}", side_key(SIDES[0])).replace("{S}", m.sides[SIDES[0]]) for s in srcs]
        out.append({"name": name, "required": bool(spec.get("required")), "sources": srcs,
                    "default": spec.get("default"), "static": bool(spec.get("static")),
                    "per_side": any("{side}" in s or "{S}" in s for s in srcs),
                    "option": option_for(resolved)})
    return out


def missing_markers(model: str | Path | Model, labels, static: bool = False) -> list[str]:
    """The labels (or groups) a model needs that ``labels`` lack, aliases allowed; landmarks a
    technical cluster rebuilds count as present when ``static`` (a static trial is given)."""
    need = required_markers(model)
    have = set(labels)
    aliases = need["aliases"]

    def present(lab: str) -> bool:
        return lab in have or any(a in have for a in aliases.get(lab, []))

    rebuilt = set(need["from_static"]) if static else set()
    missing = [lab for lab in need["required"] if lab not in rebuilt and not present(lab)]
    groups = need["one_of"]
    if groups and not any(all(present(lab) for lab in g) for g in groups):
        missing.append(" or ".join("+".join(g) for g in groups))
    return missing


def models_fitting(labels, static: bool = False) -> list[str]:
    """Installed models (``models/*.toml``) whose markers the trial's ``labels`` have."""
    out = []
    for name in list_models():
        try:
            if not missing_markers(name, labels, static):
                out.append(name)
        except ModelError:
            continue
    return out
