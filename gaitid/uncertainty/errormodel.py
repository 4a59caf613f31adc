"""The error model: how wrong each input of a trial may be, as data (``models/uncertainty/*.toml``).

:func:`load_error_model` reads the shipped model (``'default'``) or a lab's own file; a lab's
file may leave sections out, they keep the default's values. Every figure is one standard
deviation of a zero-mean normal error, in SI here (the file is in mm): marker noise (white, per
coordinate, before the filter), per joint-centre method the error of the centre and of the
palpated landmarks it uses ([ap, ml, long] in the frame of the segment above the joint; one
section per method of :data:`gaitid.model.point_methods.POINT_METHODS`, no other), per BSIP
table the spread of segment masses, centres of mass and radii of gyration, per plate kind the
centre-of-pressure offset and the force scale error, and the error of a foot's load decomposed
from a plate both feet load (force, % body weight; centre of pressure). Each figure keeps its
``source``.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaitid.core.errors import ModelError
from gaitid.core.resources import models_dir
from gaitid.model.markerset import read_toml, resolve_path
from gaitid.model.point_methods import POINT_METHODS

PLATE_KINDS = ("floor", "floor_uncorrected", "treadmill")
SOURCES = ("joint_centres", "bsip", "plates", "markers", "decomposition")  # the error sources, in report order
#: each source's random stream (numpy.random.default_rng([seed, k])) and the marker noise's: fixed
#: numbers, so a new source takes the next unused one and no other source's draws move
STREAMS = {"joint_centres": 0, "bsip": 1, "plates": 2, "markers": 3, "decomposition": 5}
NOISE_STREAM = 4
#: sources that act on some trials only: listed in a trial's contributions only when they act on it
WHERE_THEY_ACT = ("decomposition",)
MM = 1e-3


@dataclass(frozen=True)
class JointCentreError:
    """One joint-centre method's error: ``centre_sd`` and ``landmark_sd`` (3,) m, [ap, ml, long]."""

    centre_sd: np.ndarray
    landmark_sd: np.ndarray
    source: str = ""


@dataclass(frozen=True)
class BsipError:
    """Spread of a segment's parameters: mass (relative SD), centre of mass (SD, fraction of
    the segment length, along it), radii of gyration (relative SD)."""

    mass_cv: float
    com_sd: float
    gyration_cv: float
    source: str = ""


@dataclass(frozen=True)
class PlateError:
    """A plate kind's error: centre-of-pressure offset SD (m, each horizontal axis) and force scale SD."""

    cop_sd: float
    force_cv: float
    source: str = ""


@dataclass(frozen=True)
class DecompositionError:
    """The error of a foot's load on the frames it is decomposed from a plate both feet load
    (:mod:`gaitid.contacts.decompose`): ``force_sd`` (3,) fractions of body weight along lab x, y
    (horizontal) and z; ``cop_sd`` m along each lab horizontal axis."""

    force_sd: np.ndarray
    cop_sd: float
    source: str = ""


NO_DECOMPOSITION_ERROR = DecompositionError(np.zeros(3), 0.0, "")


@dataclass(frozen=True)
class ErrorModel:
    """The error model (see the module docstring). Look-ups fall back from the specific to the
    general: a joint's sub-table, then its method's; a segment's sub-table, then the table's,
    then ``bsip.default``."""

    name: str
    path: Path | None
    marker_noise: float  # m, per coordinate, before filtering
    marker_source: str
    joint_centres: dict[str, dict[str, JointCentreError]] = field(default_factory=dict)
    bsip: dict[str, dict[str, BsipError]] = field(default_factory=dict)
    plates: dict[str, PlateError] = field(default_factory=dict)
    decomposition: DecompositionError = NO_DECOMPOSITION_ERROR

    def joint_centre(self, method: str, joint: str) -> JointCentreError:
        """The error of a joint centre computed by the point method ``method`` ('davis',
        'chord'...) for ``joint`` ('hip', 'knee', 'ankle'): the method's section
        (:data:`gaitid.model.point_methods.POINT_METHODS`), its joint's sub-table if any.
        ModelError for a method gaitid does not know or a section the model lacks: never a
        silent zero."""
        if method not in POINT_METHODS:
            raise ModelError(f"no joint-centre error for {method!r}: not a point method "
                             f"(known: {', '.join(sorted(POINT_METHODS))})", self.path)
        section = POINT_METHODS[method].error
        by_joint = self.joint_centres.get(section)
        if by_joint is None:
            raise ModelError(f"error model has no [joint_centres.{section}] section (the error of the point "
                             f"method '{method}')", self.path)
        return by_joint.get(joint, by_joint[""])

    def bsip_error(self, table: str, segment: str) -> BsipError:
        by_segment = self.bsip.get(table, self.bsip["default"])
        return by_segment.get(segment, by_segment[""])

    def plate(self, kind: str) -> PlateError:
        if kind not in self.plates:
            raise ModelError(f"no plate kind '{kind}' in the error model (has: {', '.join(sorted(self.plates))})",
                             self.path)
        return self.plates[kind]

    def scaled(self, factor: float) -> "ErrorModel":
        """Every SD multiplied by ``factor`` (e.g. 0.2: the small-error regime where the
        linearised propagation must agree with the Monte Carlo)."""
        jc = {m: {j: dataclasses.replace(e, centre_sd=e.centre_sd * factor, landmark_sd=e.landmark_sd * factor)
                  for j, e in by.items()} for m, by in self.joint_centres.items()}
        bs = {t: {s: dataclasses.replace(e, mass_cv=e.mass_cv * factor, com_sd=e.com_sd * factor,
                                         gyration_cv=e.gyration_cv * factor) for s, e in by.items()}
              for t, by in self.bsip.items()}
        pl = {k: dataclasses.replace(e, cop_sd=e.cop_sd * factor, force_cv=e.force_cv * factor)
              for k, e in self.plates.items()}
        de = dataclasses.replace(self.decomposition, force_sd=self.decomposition.force_sd * factor,
                                 cop_sd=self.decomposition.cop_sd * factor)
        return dataclasses.replace(self, name=f"{self.name} x {factor:g}", marker_noise=self.marker_noise * factor,
                                   joint_centres=jc, bsip=bs, plates=pl, decomposition=de)

    def table(self) -> list[dict]:
        """Every figure of the model as rows (source, item, quantity, value, unit, reference)."""
        rows = [dict(source="markers", item="all markers", quantity="noise SD per coordinate",
                     value=self.marker_noise / MM, unit="mm", reference=self.marker_source)]
        for method, by in self.joint_centres.items():
            for joint, e in by.items():
                item = method + (f" ({joint})" if joint else "")
                for q, v in (("centre SD", e.centre_sd), ("landmark SD", e.landmark_sd)):
                    rows += [dict(source="joint_centres", item=item, quantity=f"{q} {axis}", value=x / MM, unit="mm",
                                  reference=e.source) for axis, x in zip(("ap", "ml", "long"), v)]
        for name, by in self.bsip.items():
            for seg, e in by.items():
                item = name + (f" ({seg})" if seg else "")
                for q, v, u in (("mass SD", e.mass_cv * 100, "%"), ("centre of mass SD", e.com_sd * 100, "% length"),
                                ("radius of gyration SD", e.gyration_cv * 100, "%")):
                    rows.append(dict(source="bsip", item=item, quantity=q, value=v, unit=u, reference=e.source))
        for kind, e in self.plates.items():
            rows.append(dict(source="plates", item=kind, quantity="COP offset SD per axis", value=e.cop_sd / MM,
                             unit="mm", reference=e.source))
            rows.append(dict(source="plates", item=kind, quantity="force scale SD", value=e.force_cv * 100, unit="%",
                             reference=e.source))
        d = self.decomposition
        for q, v in (("horizontal force SD", d.force_sd[0]), ("vertical force SD", d.force_sd[2])):
            rows.append(dict(source="decomposition", item="decomposed foot load", quantity=q, value=v * 100,
                             unit="% body weight", reference=d.source))
        rows.append(dict(source="decomposition", item="decomposed foot load", quantity="COP offset SD per axis",
                         value=d.cop_sd / MM, unit="mm", reference=d.source))
        return rows


def _number(path: Path, where: str, value, default=None) -> float:
    if value is None and default is not None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ModelError(f"error model key '{where}' must be a non-negative number, not {value!r}", path)
    return float(value)


def _triple(path: Path, where: str, value, default: np.ndarray | None) -> np.ndarray:
    if value is None and default is not None:
        return default
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value] * 3
    if not (isinstance(value, list) and len(value) == 3):
        raise ModelError(f"error model key '{where}' must be 3 numbers [ap, ml, long] in mm, not {value!r}", path)
    return np.array([_number(path, where, v) for v in value]) * MM


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _parse(data: dict, path: Path) -> ErrorModel:
    head = data.get("model", {})
    markers = data.get("markers", {})
    noise = _number(path, "markers.noise_mm", markers.get("noise_mm", 0.0)) * MM
    jcs: dict[str, dict[str, JointCentreError]] = {}
    sections = sorted({m.error for m in POINT_METHODS.values()})  # one per point method
    for method, spec in data.get("joint_centres", {}).items():
        if not isinstance(spec, dict):
            raise ModelError(f"error model key 'joint_centres.{method}' must be a table", path)
        if method not in sections:
            raise ModelError(f"error model key 'joint_centres.{method}': not a point method (known: "
                             f"{', '.join(sections)})", path)
        base = JointCentreError(_triple(path, f"joint_centres.{method}.centre_sd_mm", spec.get("centre_sd_mm", 0.0), None),
                                _triple(path, f"joint_centres.{method}.landmark_sd_mm", spec.get("landmark_sd_mm", 0.0),
                                        None), str(spec.get("source", "")))
        jcs[method] = {"": base}
        for joint, sub in spec.items():
            if isinstance(sub, dict):
                w = f"joint_centres.{method}.{joint}"
                jcs[method][joint] = JointCentreError(_triple(path, f"{w}.centre_sd_mm", sub.get("centre_sd_mm"), base.centre_sd),
                                                      _triple(path, f"{w}.landmark_sd_mm", sub.get("landmark_sd_mm"),
                                                              base.landmark_sd), str(sub.get("source", base.source)))
    lacking = [s for s in sections if s not in jcs]
    if lacking:
        raise ModelError(f"error model needs a [joint_centres.<method>] section for every point method: "
                         f"{', '.join(lacking)} missing", path)
    bsip: dict[str, dict[str, BsipError]] = {}
    for table, spec in data.get("bsip", {}).items():
        if not isinstance(spec, dict):
            raise ModelError(f"error model key 'bsip.{table}' must be a table", path)
        w = f"bsip.{table}"
        base = BsipError(_number(path, f"{w}.mass_cv", spec.get("mass_cv", 0.0)),
                         _number(path, f"{w}.com_sd", spec.get("com_sd", 0.0)),
                         _number(path, f"{w}.gyration_cv", spec.get("gyration_cv", 0.0)), str(spec.get("source", "")))
        bsip[table] = {"": base}
        for seg, sub in spec.items():
            if isinstance(sub, dict):
                bsip[table][seg] = BsipError(*(_number(path, f"{w}.{seg}.{k}", sub.get(k), getattr(base, k))
                                               for k in ("mass_cv", "com_sd", "gyration_cv")),
                                             str(sub.get("source", base.source)))
    if "default" not in bsip:
        raise ModelError("error model needs a [bsip.default] section", path)
    plates = {}
    for kind, spec in data.get("plates", {}).items():
        if not isinstance(spec, dict):
            raise ModelError(f"error model key 'plates.{kind}' must be a table", path)
        plates[kind] = PlateError(_number(path, f"plates.{kind}.cop_sd_mm", spec.get("cop_sd_mm", 0.0)) * MM,
                                  _number(path, f"plates.{kind}.force_cv", spec.get("force_cv", 0.0)),
                                  str(spec.get("source", "")))
    spec = data.get("decomposition", {})
    if not isinstance(spec, dict):
        raise ModelError("error model key 'decomposition' must be a table", path)
    h = _number(path, "decomposition.horizontal_sd_bw", spec.get("horizontal_sd_bw", 0.0))
    v = _number(path, "decomposition.vertical_sd_bw", spec.get("vertical_sd_bw", 0.0))
    decomposition = DecompositionError(np.array([h, h, v]),
                                       _number(path, "decomposition.cop_sd_mm", spec.get("cop_sd_mm", 0.0)) * MM,
                                       str(spec.get("source", "")))
    return ErrorModel(str(head.get("name", path.stem)), path, noise, str(markers.get("source", "")), jcs, bsip, plates,
                      decomposition)


def load_error_model(name_or_path: str | Path | ErrorModel = "default") -> ErrorModel:
    """The shipped error model by name (``models/uncertainty/<name>.toml``) or a lab's file by
    path, merged over the default (sections it leaves out keep the default's values). An
    :class:`ErrorModel` is returned as is. ModelError naming the file and key when a figure is
    not a non-negative number."""
    if isinstance(name_or_path, ErrorModel):
        return name_or_path
    folder = models_dir() / "uncertainty"
    default_path = folder / "default.toml"
    path = resolve_path(name_or_path, folder, kind="error model")
    data = read_toml(default_path)
    if path.resolve() != default_path.resolve():
        data = _merge(data, _attributed(read_toml(path), f"given in {path}"))
    return _parse(data, path)


def _attributed(data: dict, source: str) -> dict:
    """A lab file's sections that give figures but no ``source`` get one (the file), so a lab's
    figure never carries the default's reference."""
    out = {}
    for k, v in data.items():
        if isinstance(v, dict):
            v = _attributed(v, source)
            if "source" not in v and any(not isinstance(x, dict) for x in v.values()):
                v["source"] = source
        out[k] = v
    return out
