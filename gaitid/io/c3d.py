"""Read a C3D trial into a :class:`gaitid.trial.Trial` (SI, Z-up lab) and write one back.

Choices made here (see also :mod:`gaitid.io.forceplates`, :mod:`gaitid.io.vertical`):

* **Validation first.** :func:`gaitid.io.c3d_check.check_c3d` inspects the header,
  the parameter section and the data size before ezc3d sees the file (ezc3d
  1.7.2 segfaults on some corrupted files and silently reads truncated ones).
* **Points.** POINT:LABELS (+ LABELS2, LABELS3...) name the POINT:USED points;
  missing labels become ``POINT<n>``, duplicates get ``_2``, ``_3``... (a warning
  says so). A sample is NaN where its residual is negative (C3D spec: invalid).
  Positions are converted from POINT:UNITS (mm, cm, m) to m.
* **Model outputs** are the points listed in the POINT group's type-group
  parameters: POINT:TYPE_GROUPS pairs (e.g. ``ANGLES``/``ANGLE``) when present,
  else ANGLES, FORCES, MOMENTS, POWERS, SCALARS. A label also matches when it
  is a listed name plus a suffix (``V``, ``_M``...). They are NOT rotated to the
  Z-up lab (Plug-in Gait kinetics are in segment frames). Units: Plug-in Gait
  writes body-mass-normalised kinetics under ``N``/``Nmm``/``W`` unit labels
  (Vicon's CSV export says N/kg, N.mm/kg, W/kg; plate Fz / GRF reproduces the
  mass), so forces become N/kg, moments N.m/kg, powers W/kg; angles stay in
  degrees.
* **Virtual points** (kept apart from markers, in m, rotated like markers):
  POINT:MODELED_MARKERS entries; Plug-in Gait segment quadruples (a prefix
  with all of ``O``, ``A``, ``L``, ``P`` suffixes: ``LFEO LFEA LFEL LFEP``...);
  joint centres and centre of mass (labels ending in ``JC``, containing
  ``Center``/``Centre``, or ``CentreOfMass``...). Everything else is a marker.
* **First frame**: TRIAL:ACTUAL_START_FIELD (two 16-bit words, low first) when
  present and positive, else the header's first frame (ezc3d reports it 0-based,
  so +1). Times follow the Trial docstring.
* **Events**: EVENT:TIMES row 1 minutes, row 2 seconds; labels ``LHS``/``RTO``
  style (Qualisys) become ``Foot Strike``/``Foot Off`` with the side as context.
* **Subject**: PROCESSING (Vicon): Bodymass kg; Height, leg lengths, widths,
  InterAsisDistance, MarkerDiameter mm -> m. A zero or negative value means
  "not set" (Plug-in Gait uses 0 for "compute it") and becomes None. Other
  PROCESSING values go to ``extra``: names with Length/Width/Distance/Diameter
  converted mm -> m, the rest as stored.
* **Force plates** are computed from the analog channels (:mod:`gaitid.io.forceplates`).
  A plate whose channels are all NaN is a :class:`DataError`.
* **Vertical axis** detected (:mod:`gaitid.io.vertical`) and the lab rotated to Z-up;
  ``Trial.lab_rotation`` records the rotation (file lab -> Z-up lab).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np

from gaitid.errors import DataError, FileFormatError, GaitIDError
from gaitid.io import forceplates as fpmod
from gaitid.io.c3d_check import check_c3d
from gaitid.io.vertical import detect_up, rotation_to_z_up
from gaitid.trial import Analogs, Event, ForcePlate, ModelOutput, PlateWrench, Subject, Trial

COP_THRESHOLD_N = 10.0

_DEFAULT_TYPE_GROUPS = [("ANGLES", "ANGLE"), ("FORCES", "FORCE"), ("MOMENTS", "MOMENT"), ("POWERS", "POWER"), ("SCALARS", "SCALAR")]
_KIND = {"ANGLE": "angle", "FORCE": "force", "MOMENT": "moment", "POWER": "power"}
_SUFFIX = re.compile(r"_?[A-Za-z0-9]{1,3}")  # model-output label suffixes: 'V', '_M', '_PyCGM'-like short tags
_JOINT_CENTRE = re.compile(r"(JC$|JC_|Cent(er|re)|^CentreOfMass)", re.IGNORECASE)
_PIG_QUAD = ("O", "A", "L", "P")

_SUBJECT_FIELDS = {  # PROCESSING name -> (Subject field, scale to SI)
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
_EVENT_CODES = {"HS": "Foot Strike", "FS": "Foot Strike", "IC": "Foot Strike", "TO": "Foot Off", "FO": "Foot Off"}


# --------------------------------------------------------------------------- reading


def read_c3d(path: str | os.PathLike, *, cop_threshold: float = COP_THRESHOLD_N) -> Trial:
    """Read a C3D file into a :class:`Trial` (SI units, Z-up right-handed lab).

    ``cop_threshold`` (N): the centre of pressure is NaN while |Fz| is below it.
    Raises :class:`gaitid.errors.GaitIDError` subclasses naming the file for any bad input.
    """
    path = Path(path)
    check_c3d(path)
    c = _load(path)
    try:
        return _build_trial(c, path, cop_threshold)
    except GaitIDError:
        raise
    except Exception as exc:  # malformed parameters that passed the checks
        raise FileFormatError(f"malformed C3D content ({type(exc).__name__}: {exc})", path) from exc


def _load(path: Path):
    import ezc3d

    try:
        return ezc3d.c3d(str(path))
    except Exception as exc:
        raise FileFormatError(f"not a readable C3D file (ezc3d: {exc})", path) from exc


def _build_trial(c, path: Path, cop_threshold: float) -> Trial:
    params = _params(c)
    point = params.get("POINT", {})
    rate = _scalar(point.get("RATE"), c["header"]["points"]["frame_rate"])
    if not np.isfinite(rate) or rate <= 0:
        raise FileFormatError(f"POINT:RATE is {rate}, not a positive rate", path)
    warnings: list[str] = []
    pts = _points(c, params, path, warnings)
    analogs = _analogs(c, params)
    plates = _plates(analogs, params, rate, path, cop_threshold)
    trial = Trial(
        path=path,
        point_rate=float(rate),
        first_frame=_first_frame(c, params),
        marker_labels=pts["marker_labels"],
        markers=pts["markers"],
        virtual_labels=pts["virtual_labels"],
        virtual_points=pts["virtual_points"],
        model_outputs=pts["model_outputs"],
        analogs=analogs,
        force_plates=plates,
        events=[],
        subject=_subject(params),
        manufacturer=_manufacturer(params),
        software=_software(params),
        warnings=warnings,
    )
    trial.events = _events(params, trial.point_rate)
    _to_z_up(trial)
    return trial


def _params(c) -> dict[str, dict]:
    """``{GROUP: {PARAM: value}}`` with upper-case names (C3D names are case-insensitive)."""
    out: dict[str, dict] = {}
    for gname, group in c["parameters"].items():
        if not isinstance(group, dict):
            continue
        g = out.setdefault(gname.upper(), {})
        for pname, p in group.items():
            if isinstance(p, dict) and "value" in p:
                g[pname.upper()] = p["value"]
    return out


def _scalar(value, default=None):
    arr = np.ravel(np.asarray(value if value is not None else [], dtype=object))
    if arr.size == 0:
        return default
    try:
        return float(arr[0])
    except (TypeError, ValueError):
        return default


def _strings(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value.strip()]
    return [str(v).strip() for v in np.ravel(np.asarray(value, dtype=object))]


def _first_frame(c, params) -> int:
    """Vicon frame number of the first stored frame (TRIAL:ACTUAL_START_FIELD, else header)."""
    start = np.ravel(params.get("TRIAL", {}).get("ACTUAL_START_FIELD", []))
    if start.size:
        words = [int(w) & 0xFFFF for w in start[:2]]
        value = words[0] + (words[1] << 16 if len(words) > 1 else 0)
        if value > 0:
            return value
    return int(c["header"]["points"]["first_frame"]) + 1


# ---- points


def _point_labels(point: dict, n: int, warnings: list[str]) -> list[str]:
    labels: list[str] = []
    for key in ["LABELS"] + [f"LABELS{i}" for i in range(2, 100)]:
        if key not in point:
            if key != "LABELS":
                break
            continue
        labels += _strings(point[key])
    labels = labels[:n] + [f"POINT{i + 1}" for i in range(len(labels), n)]
    labels = [lab if lab else f"POINT{i + 1}" for i, lab in enumerate(labels)]
    seen: dict[str, int] = {}
    out = []
    for lab in labels:
        k = seen.get(lab, 0) + 1
        seen[lab] = k
        out.append(lab if k == 1 else f"{lab}_{k}")
    dups = sorted(lab for lab, k in seen.items() if k > 1)
    if dups:
        warnings.append(f"duplicate point labels renamed with _2, _3...: {', '.join(dups)}")
    return out


def _type_groups(point: dict) -> list[tuple[str, str]]:
    tg = _strings(point.get("TYPE_GROUPS"))
    pairs = [(tg[i].upper(), tg[i + 1].upper()) for i in range(0, len(tg) - 1, 2)] if tg else []
    return pairs or _DEFAULT_TYPE_GROUPS


def _listed(label: str, names: set[str]) -> bool:
    if label in names:
        return True
    return any(label.startswith(n) and _SUFFIX.fullmatch(label[len(n) :]) for n in names if len(n) >= 4)


def classify_points(labels: list[str], point: dict) -> dict[str, tuple[str, str]]:
    """``{label: (category, group)}``: category 'model' (group = unit key, e.g. 'MOMENT'), 'virtual' or 'marker'."""
    out: dict[str, tuple[str, str]] = {}
    for group, unit_key in _type_groups(point):
        names = set(_strings(point.get(group)))
        if not names:
            continue
        for lab in labels:
            if lab not in out and _listed(lab, names):
                out[lab] = ("model", unit_key)
    modelled = set(_strings(point.get("MODELED_MARKERS")))
    prefixes = {lab[:-1] for lab in labels if len(lab) >= 2}
    quads = {p for p in prefixes if all(p + s in labels for s in _PIG_QUAD)}
    for lab in labels:
        if lab in out:
            continue
        if lab in modelled or (lab[:-1] in quads and lab[-1] in _PIG_QUAD) or _JOINT_CENTRE.search(lab):
            out[lab] = ("virtual", "")
        else:
            out[lab] = ("marker", "")
    return out


def _model_output(label: str, unit_key: str, unit: str, values: np.ndarray) -> ModelOutput:
    """One model output in SI (Plug-in Gait kinetics mass-normalised; angles in degrees)."""
    u = unit.strip()
    kind = _KIND.get(unit_key, "other")
    if kind == "angle":
        if u.lower().startswith("rad"):
            values = np.degrees(values)
        return ModelOutput(label, kind, "deg", values)
    if kind == "force":
        return ModelOutput(label, kind, "N/kg", values * fpmod.force_scale(u or "N"))
    if kind == "moment":
        length = u.lower().replace("n", "", 1).strip(". ") if u else "mm"
        return ModelOutput(label, kind, "N.m/kg", values * fpmod.length_scale(length or "m"))
    if kind == "power":
        return ModelOutput(label, kind, "W/kg", values)
    return ModelOutput(label, kind, u, values)


def _points(c, params, path: Path, warnings: list[str]) -> dict:
    point = params.get("POINT", {})
    data = c["data"]["points"]  # (4, n_points, n_frames)
    n_points = data.shape[1]
    if n_points == 0 or data.shape[2] == 0:
        raise DataError("the file holds no marker trajectories (POINT:USED or frame count is 0)", path)
    xyz = np.transpose(data[:3], (2, 1, 0)).astype(float)  # (n_frames, n_points, 3)
    residuals = c["data"]["meta_points"]["residuals"]
    if residuals.size:
        xyz[np.transpose(residuals[0] < 0)] = np.nan
    labels = _point_labels(point, n_points, warnings)
    kinds = classify_points(labels, point)
    scale = fpmod.length_scale(_strings(point.get("UNITS"))[0] if _strings(point.get("UNITS")) else "mm")
    marker_idx = [i for i, lab in enumerate(labels) if kinds[lab][0] == "marker"]
    virtual_idx = [i for i, lab in enumerate(labels) if kinds[lab][0] == "virtual"]
    markers = xyz[:, marker_idx, :] * scale
    if not marker_idx or not np.isfinite(markers).any():
        raise DataError("the file holds no marker data (every marker sample is missing or invalid)", path)
    empty = [labels[i] for i, j in zip(marker_idx, range(len(marker_idx))) if not np.isfinite(markers[:, j]).any()]
    if empty:
        warnings.append(f"{len(empty)} markers have no valid sample: {', '.join(empty[:10])}{'...' if len(empty) > 10 else ''}")
    outputs = {}
    for i, lab in enumerate(labels):
        cat, unit_key = kinds[lab]
        if cat == "model":
            unit = (_strings(point.get(f"{unit_key}_UNITS")) or [""])[0]
            outputs[lab] = _model_output(lab, unit_key, unit, xyz[:, i, :].copy())
    return {
        "marker_labels": [labels[i] for i in marker_idx],
        "markers": markers,
        "virtual_labels": [labels[i] for i in virtual_idx],
        "virtual_points": xyz[:, virtual_idx, :] * scale,
        "model_outputs": outputs,
    }


# ---- analogs and plates


def _analogs(c, params) -> Analogs | None:
    analog = params.get("ANALOG", {})
    values = c["data"]["analogs"]  # (1, n_channels, n_samples)
    if values.ndim != 3 or values.shape[1] == 0:
        return None
    n = values.shape[1]
    labels = _strings(analog.get("LABELS"))[:n]
    labels += [f"ANALOG{i + 1}" for i in range(len(labels), n)]
    units = _strings(analog.get("UNITS"))[:n]
    units += [""] * (n - len(units))
    rate = _scalar(analog.get("RATE"), c["header"]["analogs"]["frame_rate"])
    return Analogs(rate=float(rate), labels=labels, units=units, values=np.ascontiguousarray(values[0].T, dtype=float))


def _plates(analogs: Analogs | None, params, point_rate: float, path: Path, cop_threshold: float) -> list[ForcePlate]:
    fp = params.get("FORCE_PLATFORM", {})
    n_ch = 0 if analogs is None else analogs.values.shape[1]
    specs = fpmod.plate_specs(fp, n_ch, str(path.name))
    if not specs:
        return []
    if analogs is None or analogs.rate <= 0:
        raise FileFormatError("force plates are declared but the file has no analog data", path)
    units = params.get("POINT", {}).get("UNITS")
    len_scale = fpmod.length_scale(_strings(units)[0] if _strings(units) else "mm")
    f_scale = fpmod.force_scale((_strings(fp.get("UNITS")) or ["N"])[0])
    out = []
    for spec in specs:
        block = analogs.values[:, spec.channels]
        dead = ~np.isfinite(block).any(axis=0)
        if dead.any():
            ch = analogs.labels[spec.channels[int(np.argmax(dead))]]
            raise DataError(f"force plate {spec.index}: analog channel '{ch}' holds no finite sample (NaN only)", path)
        out.append(
            fpmod.compute_plate(
                analogs.values,
                spec,
                analog_rate=analogs.rate,
                point_rate=point_rate,
                len_scale=len_scale,
                f_scale=f_scale,
                cop_threshold=cop_threshold,
                channel_labels=analogs.labels,
            )
        )
    return out


# ---- events, subject, manufacturer


def _event_label(label: str, context: str) -> tuple[str, str]:
    """Normalise 'LHS'/'RTO'-style labels to ('Foot Strike'|'Foot Off', 'Left'|'Right')."""
    lab = label.strip()
    m = re.fullmatch(r"([LR])[_ ]?(HS|FS|IC|TO|FO)", lab, re.IGNORECASE)
    if m and context in ("", "General"):
        return _EVENT_CODES[m.group(2).upper()], "Left" if m.group(1).upper() == "L" else "Right"
    return lab, context or "General"


def _events(params, rate: float) -> list[Event]:
    ev = params.get("EVENT", {})
    labels = _strings(ev.get("LABELS"))
    times = np.asarray(ev.get("TIMES", []), dtype=float)
    n = len(labels)
    if n == 0 or times.size < n:
        return []
    if times.ndim == 1:
        times = times[: 2 * n].reshape(n, 2).T if times.size >= 2 * n else np.vstack([np.zeros(n), times[:n]])
    seconds = 60.0 * times[0, :n] + times[1, :n] if times.shape[0] >= 2 else times[0, :n]
    contexts = _strings(ev.get("CONTEXTS"))
    out = []
    for i in range(n):
        if not np.isfinite(seconds[i]):
            continue
        label, context = _event_label(labels[i], contexts[i] if i < len(contexts) else "")
        out.append(Event(label, context, float(seconds[i]), int(round(seconds[i] * rate)) + 1))
    return sorted(out, key=lambda e: (e.time, e.context, e.label))


def _subject(params) -> Subject:
    proc = params.get("PROCESSING", {})
    names = [n for n in _strings(params.get("SUBJECTS", {}).get("NAMES")) if n]
    subject = Subject(name=names[0] if names else None)
    for key, value in proc.items():
        v = _scalar(value)
        if v is None:
            continue
        field = next(((f, s) for k, (f, s) in _SUBJECT_FIELDS.items() if k.upper() == key), None)
        if field is not None:
            setattr(subject, field[0], v * field[1] if v > 0 else None)
        elif re.search(r"(LENGTH|WIDTH|DISTANCE|DIAMETER)$", key):
            subject.extra[key] = v * 1e-3
        else:
            subject.extra[key] = v
    return subject


def _manufacturer(params) -> str:
    return " ".join(_strings(params.get("MANUFACTURER", {}).get("COMPANY")))


def _software(params) -> str:
    m = params.get("MANUFACTURER", {})
    parts = _strings(m.get("SOFTWARE")) + _strings(m.get("VERSION_LABEL")) + _strings(m.get("VERSION"))
    return " ".join(p for p in parts if p)


# ---- vertical axis


def _to_z_up(trial: Trial) -> None:
    """Detect the up axis and rotate markers, virtual points and plates into the Z-up lab (in place)."""
    labelled = [i for i, lab in enumerate(trial.marker_labels) if not lab.startswith("*")]
    up, how = detect_up([p.analog.force for p in trial.force_plates], trial.markers[:, labelled])
    rot = rotation_to_z_up(up)
    trial.lab_rotation = rot
    if np.array_equal(rot, np.eye(3)):
        return
    axis = "XYZ"[int(np.argmax(np.abs(up)))]
    trial.warnings.append(f"lab rotated to Z up: file's up axis was {'+' if up.max() > 0 else '-'}{axis} (from {how})")
    trial.markers = trial.markers @ rot.T
    if trial.virtual_points is not None:
        trial.virtual_points = trial.virtual_points @ rot.T
    for plate in trial.force_plates:
        plate.corners = plate.corners @ rot.T
        for w in (plate.analog, plate.point):
            w.force, w.cop, w.free_moment = w.force @ rot.T, w.cop @ rot.T, w.free_moment @ rot.T
