"""Read a C3D trial into a :class:`gaitid.core.trial.Trial` (SI, Z-up lab) and write one back.

Choices made here (see also :mod:`gaitid.io.forceplates`, :mod:`gaitid.io.vertical`):

* **Own parser, ezc3d as oracle.** :func:`gaitid.io.c3d_check.check_c3d` walks
  the header and parameter section with every offset bounds-checked and
  :func:`gaitid.io.c3d_check.read_data` decodes the data section with numpy.
  ezc3d 1.7.2 segfaults or hangs on some corrupted parameter sections, reads a
  file cut to half without complaint, and its Python wrapper is slow; the tests
  check that points, validity and analogs equal ezc3d's on every real file, and
  ezc3d writes files (:func:`write_c3d`). A bad file is a gaitid error naming
  the file and the problem, never a crash.
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
  present and positive, else the header's first frame (1-based; ezc3d
  reports it 0-based). Times follow the Trial docstring.
* **Events**: EVENT:TIMES row 1 minutes, row 2 seconds; labels ``LHS``/``RTO``
  style (Qualisys) become ``Foot Strike``/``Foot Off`` with the side as context.
* **Subject**: PROCESSING (Vicon): Bodymass kg; Height, leg lengths, widths,
  InterAsisDistance, MarkerDiameter mm -> m. A zero length means "not set"
  (Plug-in Gait uses 0 for "compute it") and becomes None; a zero mass, a negative,
  non-finite or implausible value is left out and recorded in ``Subject.invalid``
  (:func:`gaitid.core.subject_record.stored_value`), which the subject stage refuses
  unless another source gives the value. Other
  PROCESSING values go to ``extra`` under their stored names: lengths (a name
  ending in Length/Width/Distance/Diameter/Thickness/Delta/Depth, the
  ShoulderOffset; Vicon, mm) converted to m, the rest as stored (Plug-in Gait's
  angles in rad; :func:`gaitid.core.subject_record.vicon_unit`).
* **Force plates** are computed from the analog channels (:mod:`gaitid.io.forceplates`).
  A plate whose channels are all NaN is a :class:`DataError`.
* **Vertical axis** detected (:mod:`gaitid.io.vertical`) and the lab rotated to Z-up;
  ``Trial.lab_rotation`` records the rotation (file lab -> Z-up lab).

Length: the C3D format's parameter groups (points, analogs, plates, events, subject, units,
vertical axis) are decoded here in one pass over the parsed layout.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import struct
from dataclasses import replace
from pathlib import Path

import numpy as np

from gaitid.core.errors import DataError, FileFormatError, GaitIDError, OutputError
from gaitid.core.rotation import cross
from gaitid.core.subject_record import VICON_SUBJECT_FIELDS, Subject, stored_value, vicon_unit
from gaitid.core.trial import Analogs, Event, ForcePlate, ModelOutput, Trial
from gaitid.core.vocabulary import COP_THRESHOLD_N
from gaitid.io import forceplates as fpmod
from gaitid.io.atomic import atomic_path, register_input, unchanged_while_read, verify_c3d
from gaitid.io.c3d_check import C3DData, C3DLayout, check_c3d, read_data
from gaitid.io.marker_units import check_marker_extent
from gaitid.io.vertical import body_up as markers_up
from gaitid.io.vertical import detect_up, rotation_to_z_up, up_from_forces

# The C3D copy is written by ezc3d in chunks of frames of at most this many values (4 per point,
# one per analog sample): ezc3d holds every value it writes as a C++ object, about 26 bytes each
# (20 kB per frame of the sample walk, whose file takes 3 kB per frame), so a long trial written
# at once would take several times the memory of processing it.
WRITE_CHUNK_VALUES = 2_000_000

_DEFAULT_TYPE_GROUPS = [("ANGLES", "ANGLE"), ("FORCES", "FORCE"), ("MOMENTS", "MOMENT"), ("POWERS", "POWER"), ("SCALARS", "SCALAR")]
_KIND = {"ANGLE": "angle", "FORCE": "force", "MOMENT": "moment", "POWER": "power"}
_SUFFIX = re.compile(r"_?[A-Za-z0-9]{1,3}")  # model-output label suffixes: 'V', '_M', '_PyCGM'-like short tags
_JOINT_CENTRE = re.compile(r"(JC$|JC_|Cent(er|re)|^CentreOfMass)", re.IGNORECASE)
_PIG_QUAD = ("O", "A", "L", "P")

MAX_EVENT_TIME_S = 1e6  # 11 days: an event time beyond it is corrupt (a trial lasts minutes, a session hours)
_SUBJECT_FIELDS = VICON_SUBJECT_FIELDS  # PROCESSING name -> (Subject field, scale to SI)
_EVENT_CODES = {"HS": "Foot Strike", "FS": "Foot Strike", "IC": "Foot Strike", "TO": "Foot Off", "FO": "Foot Off"}


# --------------------------------------------------------------------------- reading


def read_c3d(
    path: str | os.PathLike, *, cop_threshold: float = COP_THRESHOLD_N, plate_offsets: bool | str = True
) -> Trial:
    """Read a C3D file into a :class:`Trial` (SI units, Z-up right-handed lab).

    ``cop_threshold`` (N): the centre of pressure is NaN while |Fz| is below it.
    ``plate_offsets``: subtract FORCE_PLATFORM:ZERO and an unloaded plate baseline that reads as a
    load (:func:`gaitid.io.forceplates.plate_offsets`; a warning says what was done); ``'all'``:
    negative baselines too; False: the channels as stored.
    Raises :class:`gaitid.core.errors.GaitIDError` subclasses naming the file for any bad input.
    """
    path = Path(path)
    register_input(path)
    with unchanged_while_read(path):  # the header and parameters, then the frames: one version of the file
        layout = check_c3d(path)
        try:
            data = read_data(path, layout)
            return _build_trial(layout, data, path, cop_threshold, plate_offsets)
        except GaitIDError:
            raise
        except Exception as exc:  # malformed content that passed the checks
            raise FileFormatError(f"malformed C3D content ({type(exc).__name__}: {exc})", path) from exc


def _build_trial(layout: C3DLayout, data: C3DData, path: Path, cop_threshold: float, offsets: bool | str) -> Trial:
    params = _params(layout)
    point = params.get("POINT", {})
    rate = _scalar(point.get("RATE"), layout.frame_rate)
    if not np.isfinite(rate) or rate <= 0:
        raise FileFormatError(f"POINT:RATE is {rate}, not a positive rate", path)
    warnings: list[str] = []
    pts = _points(data, params, path, warnings)
    analogs = _analogs(data, params, rate, layout, warnings)
    plates = _plates(analogs, params, rate, path, cop_threshold, offsets, warnings)
    trial = Trial(
        path=path,
        point_rate=float(rate),
        first_frame=_first_frame(layout, params),
        marker_labels=pts["marker_labels"],
        markers=pts["markers"],
        virtual_labels=pts["virtual_labels"],
        virtual_points=pts["virtual_points"],
        model_outputs=pts["model_outputs"],
        analogs=analogs,
        force_plates=plates,
        events=_events(params, float(rate), warnings),
        subject=_subject(params),
        manufacturer=_manufacturer(params),
        software=_software(params),
        warnings=warnings,
    )
    return _to_z_up(trial)


def _params(layout: C3DLayout) -> dict[str, dict]:
    """``{GROUP: {PARAM: value}}`` with upper-case names (C3D names are case-insensitive), except
    PROCESSING, whose names are kept as stored (they become ``Subject.extra`` keys)."""
    out: dict[str, dict] = {}
    for group, values in layout.values.items():
        if group == "PROCESSING":
            out[group] = {layout.names[group][k]: v for k, v in values.items()}
        else:
            out[group] = dict(values)
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


def _first_frame(layout: C3DLayout, params) -> int:
    """Vicon frame number of the first stored frame (TRIAL:ACTUAL_START_FIELD, else header)."""
    start = np.ravel(params.get("TRIAL", {}).get("ACTUAL_START_FIELD", []))
    if start.size:
        words = [int(w) & 0xFFFF for w in start[:2]]
        value = words[0] + (words[1] << 16 if len(words) > 1 else 0)
        if value > 0:
            return value
    return int(layout.first_frame)


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


def _stems(label: str) -> list[str]:
    """The label without a model-output suffix (:data:`_SUFFIX`, 1-4 characters), stems of 4+ characters."""
    return [label[:-k] for k in range(1, 5) if len(label) - k >= 4 and _SUFFIX.fullmatch(label[-k:])]


def _matcher(names: set[str], stems=None):
    """``label -> bool``: the label is a listed name, or a listed name (4+ characters) plus a short
    suffix (``V``, ``_M``...). A set lookup per possible suffix length: linear in the labels.
    ``stems``: {label: :func:`_stems`}, when several groups test the same labels."""
    long_names = {n for n in names if len(n) >= 4}

    def listed(label: str) -> bool:
        if label in names:
            return True
        return any(st in long_names for st in (stems[label] if stems is not None else _stems(label)))

    return listed


def classify_points(labels: list[str], point: dict) -> dict[str, tuple[str, str]]:
    """``{label: (category, group)}``: category 'model' (group = unit key, e.g. 'MOMENT'), 'virtual' or 'marker'."""
    out: dict[str, tuple[str, str]] = {}
    stems = None
    for group, unit_key in _type_groups(point):
        if group.startswith("MODEL"):  # MODELED_MARKERS: positions, handled as virtual points below
            continue
        names = set(_strings_continued(point, group))
        if not names:
            continue
        stems = stems if stems is not None else {lab: _stems(lab) for lab in labels}
        listed = _matcher(names, stems)
        for lab in labels:
            if lab not in out and listed(lab):
                out[lab] = ("model", unit_key)
    modelled = set(_strings_continued(point, "MODELED_MARKERS"))
    label_set = set(labels)
    prefixes = {lab[:-1] for lab in labels if len(lab) >= 2}
    quads = {p for p in prefixes if all(p + s in label_set for s in _PIG_QUAD)}
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


def _points(data: C3DData, params, path: Path, warnings: list[str]) -> dict:
    point = params.get("POINT", {})
    xyz = data.points  # (n_frames, n_points, 3), NaN where invalid
    n_points = xyz.shape[1]
    if n_points == 0 or xyz.shape[0] == 0:
        raise DataError("the file holds no marker trajectories (POINT:USED or frame count is 0)", path)
    labels = _point_labels(point, n_points, warnings)
    kinds = classify_points(labels, point)
    unit = (_strings(point.get("UNITS")) or ["mm"])[0]
    if unit.lower() not in fpmod.LENGTH_UNITS:
        warnings.append(f"POINT:UNITS '{unit}' is not a known length unit: taken as mm")
    scale = fpmod.length_scale(unit)
    marker_idx = [i for i, lab in enumerate(labels) if kinds[lab][0] == "marker"]
    virtual_idx = [i for i, lab in enumerate(labels) if kinds[lab][0] == "virtual"]
    markers = xyz[:, marker_idx, :] * scale
    if not marker_idx or not np.isfinite(markers).any():
        raise DataError("the file holds no marker data (every marker sample is missing or invalid)", path)
    check_marker_extent(markers, unit, "POINT:UNITS", path)
    has_sample = np.isfinite(markers).any(axis=(0, 2))
    empty = [labels[i] for i, ok in zip(marker_idx, has_sample) if not ok]
    if empty:
        warnings.append(f"{len(empty)} markers have no valid sample: {', '.join(empty[:10])}{'...' if len(empty) > 10 else ''}")
    outputs = {}
    model_idx = [i for i, lab in enumerate(labels) if kinds[lab][0] == "model"]
    block = np.ascontiguousarray(xyz[:, model_idx, :].transpose(1, 0, 2))  # (outputs, n_frames, 3): one copy
    units: dict[str, str] = {}
    for j, i in enumerate(model_idx):
        unit_key = kinds[labels[i]][1]
        if unit_key not in units:
            units[unit_key] = (_strings(point.get(f"{unit_key}_UNITS")) or [""])[0]
        outputs[labels[i]] = _model_output(labels[i], unit_key, units[unit_key], block[j])
    return {
        "marker_labels": [labels[i] for i in marker_idx],
        "markers": markers,
        "virtual_labels": [labels[i] for i in virtual_idx],
        "virtual_points": xyz[:, virtual_idx, :] * scale,
        "model_outputs": outputs,
    }


# ---- analogs and plates


def _analogs(data: C3DData, params, point_rate: float, layout: C3DLayout, warnings: list[str]) -> Analogs | None:
    analog = params.get("ANALOG", {})
    values = data.analogs  # (n_samples, n_channels)
    if values.shape[1] == 0:
        return None
    n = values.shape[1]
    labels = _strings_continued(analog, "LABELS")[:n]
    labels += [f"ANALOG{i + 1}" for i in range(len(labels), n)]
    units = _strings_continued(analog, "UNITS")[:n]
    units += [""] * (n - len(units))
    # the data layout fixes the analog rate: samples per frame x point rate (ANALOG:RATE must agree)
    rate = point_rate * layout.analog_samples_per_frame
    stored = _scalar(analog.get("RATE"), rate)
    if stored is None or not np.isfinite(stored) or abs(stored - rate) > 1e-6 * rate:
        warnings.append(f"ANALOG:RATE {stored} Hz disagrees with the data layout; using {rate:g} Hz")
    descriptions = _strings_continued(analog, "DESCRIPTIONS")[:n]
    descriptions += [""] * (n - len(descriptions))
    return Analogs(rate=float(rate), labels=labels, units=units, values=values, descriptions=descriptions)


def _strings_continued(group: dict, name: str) -> list[str]:
    out = _strings(group.get(name))
    for i in range(2, 100):
        if f"{name}{i}" not in group:
            break
        out += _strings(group[f"{name}{i}"])
    return out


def _plates(analogs: Analogs | None, params, point_rate: float, path: Path, cop_threshold: float, offsets: bool | str,
            warnings: list[str]) -> list[ForcePlate]:
    fp = params.get("FORCE_PLATFORM", {})
    n_ch = 0 if analogs is None else analogs.values.shape[1]
    specs = fpmod.plate_specs(fp, n_ch, str(path))
    if not specs:
        return []
    if analogs is None or analogs.rate <= 0:
        raise FileFormatError("force plates are declared but the file has no analog data", path)
    units = params.get("POINT", {}).get("UNITS")
    length_unit = _strings(units)[0] if _strings(units) else "mm"
    force_unit = (_strings(fp.get("UNITS")) or ["N"])[0]
    len_scale = fpmod.length_scale(length_unit)
    f_scale = fpmod.force_scale(force_unit)
    zero = np.ravel(np.asarray(fp.get("ZERO", []), dtype=object))
    zero_frames = None
    if zero.size >= 2 and all(isinstance(v, (int, np.integer)) for v in zero[:2]):
        zero_frames = (int(zero[0]), int(zero[1]))
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
                zero_frames=zero_frames,
                offsets=offsets,
            )
        )
        out[-1].units_read = fpmod.channel_units(spec.type, force_unit, length_unit)
        out[-1].units_stored = tuple(analogs.units[i].strip() for i in spec.channels)
        if out[-1].offset_note:
            warnings.append(f"force plate {spec.index}: {out[-1].offset_note}")
    return out


# ---- events, subject, manufacturer


def _event_label(label: str, context: str) -> tuple[str, str]:
    """Normalise 'LHS'/'RTO'-style labels to ('Foot Strike'|'Foot Off', 'Left'|'Right')."""
    lab = label.strip()
    m = re.fullmatch(r"([LR])[_ ]?(HS|FS|IC|TO|FO)", lab, re.IGNORECASE)
    if m and context in ("", "General"):
        return _EVENT_CODES[m.group(2).upper()], "Left" if m.group(1).upper() == "L" else "Right"
    return lab, context or "General"


def _events(params, rate: float, warnings: list[str]) -> list[Event]:
    ev = params.get("EVENT", {})
    labels = _strings_continued(ev, "LABELS")
    times = _event_times(ev)
    used = _scalar(ev.get("USED"))
    n = len(labels) if used is None else min(len(labels), max(0, int(used)))
    if n == 0 or times.size < n:
        return []
    if times.ndim == 1:
        times = times[: 2 * n].reshape(n, 2).T if times.size >= 2 * n else np.vstack([np.zeros(n), times[:n]])
    seconds = 60.0 * times[0, :n] + times[1, :n] if times.shape[0] >= 2 else times[0, :n]
    contexts = _strings_continued(ev, "CONTEXTS")
    out = []
    for i in range(n):
        if not np.isfinite(seconds[i]):
            continue
        label, context = _event_label(labels[i], contexts[i] if i < len(contexts) else "")
        if abs(seconds[i]) > MAX_EVENT_TIME_S:  # (its frame number would overflow the tables' integers)
            warnings.append(f"EVENT:TIMES: {context} {label} at {seconds[i]:g} s lies beyond any recording "
                            f"(|time| > {MAX_EVENT_TIME_S:g} s); left out")
            continue
        out.append(Event(label, context, float(seconds[i]), int(round(seconds[i] * rate)) + 1))
    return sorted(out, key=lambda e: (e.time, e.context, e.label))


def _event_times(ev: dict) -> np.ndarray:
    """EVENT:TIMES (2, n), continued in TIMES2, TIMES3... when every part is (2, k); else TIMES as stored."""
    try:
        times = np.asarray(ev.get("TIMES", []), dtype=float)
        parts = [times]
        for i in range(2, 100):
            if f"TIMES{i}" not in ev:
                break
            parts.append(np.asarray(ev[f"TIMES{i}"], dtype=float))
    except (TypeError, ValueError):
        return np.zeros(0)
    if len(parts) > 1 and all(p.ndim == 2 and p.shape[0] == 2 for p in parts):
        return np.concatenate(parts, axis=1)
    return times


def _subject(params) -> Subject:
    proc = params.get("PROCESSING", {})
    names = [n for n in _strings(params.get("SUBJECTS", {}).get("NAMES")) if n]
    subject = Subject(name=names[0] if names else None)
    for key, value in proc.items():
        v = _scalar(value)
        if v is None:
            continue
        field = next(((f, s) for k, (f, s) in _SUBJECT_FIELDS.items() if k.upper() == key.upper()), None)
        if field is not None:
            stored_value(subject, field[0], v, field[1], key, "kg" if field[0] == "mass" else "mm")
        elif math.isfinite(v):
            unit = vicon_unit(key)  # the one grammar of Vicon names: lengths in mm -> m, angles in rad
            subject.extra[key] = v * unit[1] if unit else v
    return subject


def _manufacturer(params) -> str:
    return " ".join(_strings(params.get("MANUFACTURER", {}).get("COMPANY")))


def _software(params) -> str:
    m = params.get("MANUFACTURER", {})
    parts = _strings(m.get("SOFTWARE")) + _strings(m.get("VERSION_LABEL")) + _strings(m.get("VERSION"))
    return " ".join(p for p in parts if p)


# ---- vertical axis


def _to_z_up(trial: Trial) -> Trial:
    """The trial just built with its up axis detected and its markers, virtual points and plates
    rotated into the Z-up lab (its plates, the reader's own, rotated in place)."""
    labelled = [i for i, lab in enumerate(trial.marker_labels) if not lab.startswith("*")]
    up, how = detect_up([p.analog.force for p in trial.force_plates], trial.markers[:, labelled])
    body_up = markers_up(trial.markers[:, labelled]) if how == "force plates" else None
    if body_up is not None and not np.array_equal(body_up, up):
        against = [p.index for p in trial.force_plates
                   if (f := up_from_forces([p.analog.force])) is not None and float(f @ body_up) < 0.5]
        raise DataError(f"the force plates' mean force on the subject points along {_axis_name(up)}, but the "
                        f"markers stand along {_axis_name(body_up)}: force plate(s) {', '.join(map(str, against)) or '?'} do not push "
                        "up (corners in mirrored order, a negated or mislabelled vertical channel); gaitid does not "
                        "turn the lab to follow the plates when the body says otherwise: correct the plates' "
                        "FORCE_PLATFORM:CORNERS or ANALOG:SCALE in the file", trial.path)
    rot = rotation_to_z_up(up)
    if np.array_equal(rot, np.eye(3)):
        return replace(trial, lab_rotation=rot)
    trial.warnings.append(f"lab rotated to Z up: file's up axis was {_axis_name(up)} (from {how})")
    for plate in trial.force_plates:
        plate.corners = plate.corners @ rot.T
        for w in (plate.analog, plate.point):
            w.force, w.cop, w.free_moment = w.force @ rot.T, w.cop @ rot.T, w.free_moment @ rot.T
    virtual = trial.virtual_points @ rot.T if trial.virtual_points is not None else None
    return replace(trial, lab_rotation=rot, markers=trial.markers @ rot.T, virtual_points=virtual)


def _axis_name(axis: np.ndarray) -> str:
    """'+X', '-Z'... of a signed lab axis (3,)."""
    k = int(np.argmax(np.abs(axis)))
    return f"{'+' if axis[k] > 0 else '-'}{'XYZ'[k]}"


# --------------------------------------------------------------------------- writing

# model outputs as Plug-in Gait stores them: kind -> (POINT group, unit key, unit label, factor
# from the per-kg SI value read: moments in N.mm/kg under "Nmm"); the reader undoes it (_model_output)
OUTPUT_GROUPS = {"angle": ("ANGLES", "ANGLE", "deg", 1.0), "force": ("FORCES", "FORCE", "N", 1.0),
                 "moment": ("MOMENTS", "MOMENT", "Nmm", 1e3), "power": ("POWERS", "POWER", "W", 1.0)}
_C3D_CHAR, _C3D_INT, _C3D_FLOAT = -1, 2, 4  # C3D parameter data types (as ezc3d's type codes)
_SUBJECT_OUT = {field: (name, 1.0 / scale) for name, (field, scale) in _SUBJECT_FIELDS.items()}
_MAX_ENTRIES = 255  # a C3D dimension is one byte: longer lists continue in NAME2, NAME3...


def write_c3d(
    trial: Trial,
    path: str | os.PathLike,
    *,
    extra_points: dict[str, tuple[str, np.ndarray]] | None = None,
    file_lab: bool = False,
) -> Path:
    """Write ``trial`` to a C3D file, atomically, from gaitid's own parsed Trial.

    Points are written in mm: markers, then virtual points (listed in
    POINT:MODELED_MARKERS), then model outputs in Plug-in Gait's stored units
    (N, Nmm, W, deg; values per kg as read) listed in POINT:ANGLES/FORCES/
    MOMENTS/POWERS, then ``extra_points`` (``{label: (POINT group, (n_frames, 3)
    values as stored)}``; an extra point replaces a point of the same label).
    Lists longer than 255 entries continue in LABELS2, DESCRIPTIONS2, ... (the C3D
    convention; also for events and the type-group lists); more than 65535 frames
    are written with TRIAL:ACTUAL_END_FIELD and POINT:LONG_FRAMES. Each force plate
    is written as a type-2 plate (6 channels ``F{i}x..M{i}z`` in N and N.mm, plate
    frame, moment about the sensor origin) synthesised from its analog-rate wrench
    (so offsets the reader removed stay removed), with its corners and origin;
    other analog channels are kept. The moment of an unloaded sample (COP NaN) is
    written as 0. Events, TRIAL:ACTUAL_START_FIELD and PROCESSING anthropometry
    are written too, so :func:`read_c3d` gives back the same markers, plates and
    events (to float32 precision).

    ``file_lab``: write markers, virtual points and plates in the file's own lab
    (``trial.lab_rotation`` undone) instead of gaitid's Z-up lab.
    The file is verified (header, parameters, size) before it replaces ``path``;
    never replaces a file this process read (:mod:`gaitid.io.atomic`). A trial of more than
    :data:`WRITE_CHUNK_VALUES` values is handed to ezc3d in chunks of frames spliced into the
    same file a single write gives (ezc3d's memory per value is several times the file's).
    """
    path = Path(path)
    if path.suffix.lower() != ".c3d":
        raise FileFormatError("output file name must end in .c3d", path)
    rot = trial.lab_rotation if file_lab else np.eye(3)
    extra = extra_points or {}
    n = trial.n_frames
    per = max(1, WRITE_CHUNK_VALUES // _values_per_frame(trial, extra))
    c, n_points = _ezc3d_object(trial, path, rot, extra, slice(0, min(per, n)))
    inputs = (trial.path,) if trial.path is not None else ()
    try:
        with atomic_path(path, inputs=inputs, verify=verify_c3d(n, n_points)) as tmp:
            c.write(str(tmp))
            del c
            if per < n:
                _append_frames(tmp, n, per, lambda sl: _ezc3d_object(trial, path, rot, extra, sl)[0])
    except GaitIDError:
        raise
    except Exception as exc:
        raise OutputError(f"could not write the C3D file ({type(exc).__name__}: {exc})", path) from exc
    return path


def _free_ezc3d_copies() -> None:
    """ezc3d (up to 1.7.2 at least) converts an array that is not float64 (the boolean camera masks
    ``write`` always passes) to float64 in C and never frees the copy (pyomeca/ezc3d#404): 56 bytes
    per point and frame, lost at every write (a batch worker would grow by the results C3D's masks
    with every trial). Its ``import_numpy_data`` is wrapped once to hand it float64 arrays, which
    it reads in place: the same values reach ezc3d, and no copy is made there."""
    from ezc3d import ezc3d as swig

    original = getattr(swig.c3d, "import_numpy_data", None)  # (an ezc3d without it: nothing to wrap)
    if original is None or getattr(original, "_gaitid_float64", False):
        return

    def import_numpy_data(self, *arrays):
        return original(self, *(a if a is None else np.asarray(a, dtype=np.float64) for a in arrays))

    import_numpy_data._gaitid_float64 = True
    swig.c3d.import_numpy_data = import_numpy_data


def _end_block(start: int, data_bytes: int) -> int:
    """The last block of an ezc3d file whose data start at byte ``start``: ezc3d follows the data
    with a partial or an empty block."""
    return start // 512 + data_bytes // 512 + 1


def _int16(value: int) -> int:
    return (value + 0x8000) % 0x10000 - 0x8000


def _ezc3d_object(trial: Trial, path: Path, rot: np.ndarray, extra: dict, frames: slice):
    """An ezc3d object holding the frames ``frames`` of ``trial`` and the parameters of the
    whole trial (its events, plates, frame range...); and its number of points."""
    import ezc3d

    _free_ezc3d_copies()
    c = ezc3d.c3d()
    n_points = _write_points(c, trial, rot, extra, frames)
    _write_analogs_and_plates(c, trial, path, rot, frames)
    _write_events(c, trial)
    _write_subject(c, trial)
    return c, n_points


def _values_per_frame(trial: Trial, extra: dict) -> int:
    """An upper bound of the values ezc3d holds per frame: 4 per point, one per analog sample."""
    points = len(trial.marker_labels) + len(trial.virtual_labels) + len(trial.model_outputs) + len(extra)
    channels = 0
    if trial.analogs is not None:
        channels = trial.analogs.values.shape[1] * max(1, round(trial.analogs.rate / trial.point_rate))
    for p in trial.force_plates:
        channels += 6 * max(1, round(p.analog.rate / trial.point_rate))
    return max(1, 4 * points + channels)


def _append_frames(tmp: Path, n: int, per: int, chunk) -> None:
    """Complete the C3D file ``tmp``, which ezc3d wrote with the trial's parameters and its first
    ``per`` frames, up to ``n`` frames: each further chunk of ``per`` frames is written by ezc3d
    (``chunk(frames)``: its ezc3d object) to a scratch file and its data bytes appended; then the
    frame count (header, POINT:FRAMES), ROTATION:DATA_START and the end padding are set as ezc3d
    sets them for ``n`` frames: the file is the one a single ezc3d write of the whole trial gives
    (tested byte for byte), written with ezc3d's memory for ``per`` frames only."""
    first = check_c3d(tmp)  # (its frame count: the whole trial's when TRIAL says so; the data hold ``per`` frames)
    start = (first.data_start_block - 1) * 512
    frame_bytes = (4 * first.n_points + first.analog_words_per_frame) * first.word_bytes
    patches = [("POINT", "FRAMES", lambda k: min(k, 0xFFFF)),
               ("ROTATION", "DATA_START", lambda k: _end_block(start, k * frame_bytes) + 1)]
    patches = [(g, k, rule) for g, k, rule in patches if k in first.offsets.get(g, {})]
    with open(tmp, "rb") as fh:  # the int16 words as stored: what is patched below, checked for ``per`` frames
        stored = []
        for g, k, _ in patches:
            fh.seek(first.offsets[g][k])
            stored.append(struct.unpack("<h", fh.read(2))[0])
    found = [first.last_frame, *stored]
    expected = [min(first.first_frame + per - 1, 0xFFFF), *(_int16(rule(per)) for _, _, rule in patches)]
    if found != expected:  # not the ezc3d this was written for: stop rather than guess
        raise OutputError(f"ezc3d wrote a frame count or data end this writer does not expect ({found}, "
                          f"{expected} expected); cannot complete a file of {n} frames", tmp)
    scratch = tmp.with_name(f"{tmp.stem}-chunk.c3d")  # named as atomic_path's temporaries: a killed run's is cleaned
    try:
        with open(tmp, "r+b") as out:
            out.truncate(start + per * frame_bytes)
            out.seek(0, os.SEEK_END)
            for a in range(per, n, per):
                b = min(a + per, n)
                c = chunk(slice(a, b))
                c.write(str(scratch))
                del c
                part = check_c3d(scratch)
                with open(scratch, "rb") as src:
                    src.seek((part.data_start_block - 1) * 512)
                    data = src.read((b - a) * frame_bytes)
                if len(data) != (b - a) * frame_bytes:
                    raise OutputError(f"ezc3d wrote {len(data)} bytes of data for frames {a + 1}-{b}, "
                                      f"{(b - a) * frame_bytes} expected", tmp)
                out.write(data)
            out.truncate(_end_block(start, n * frame_bytes) * 512)
            out.seek(8)  # header word 5: the last frame, at most 65535
            out.write(struct.pack("<H", min(first.first_frame + n - 1, 0xFFFF)))
            for group, name, rule in patches:  # int16, as ezc3d stores them (wrapping past 32767)
                out.seek(first.offsets[group][name])
                out.write(struct.pack("<h", _int16(rule(n))))
    finally:
        with contextlib.suppress(OSError):
            scratch.unlink()


def _param(c, group: str, name: str, value, kind: str = "float") -> None:
    """Set GROUP:NAME in an ezc3d object (kind 'int', 'float' or 'str'); creates the group if needed.
    A list (or the last dimension of an array) longer than 255 continues in NAME2, NAME3..."""
    groups = c["parameters"]
    if group not in groups:
        groups[group] = {"__METADATA__": {"DESCRIPTION": "", "IS_LOCKED": False}}
    if kind == "str":
        value = [str(v)[:255] for v in value]
    else:
        value = np.asarray(value, dtype=np.int64 if kind == "int" else float)
    n = len(value) if kind == "str" else (value.shape[-1] if value.ndim else 1)
    for k, start in enumerate(range(0, max(n, 1), _MAX_ENTRIES)):
        key = name if k == 0 else f"{name}{k + 1}"
        part = value[start : start + _MAX_ENTRIES] if (kind == "str" or value.ndim) else value
        if kind == "str":
            entry = {"type": _C3D_CHAR, "value": list(part)}
        else:
            entry = {"type": _C3D_INT if kind == "int" else _C3D_FLOAT, "value": part if value.ndim < 2 else
                     value[..., start : start + _MAX_ENTRIES]}
        entry.update(description="", is_locked=False)
        groups[group][key] = entry


def _write_points(c, trial: Trial, rot: np.ndarray, extra: dict[str, tuple[str, np.ndarray]], frames: slice) -> int:
    """The points of the frames ``frames`` (the parameters: of the whole trial); returns their number."""
    n = trial.n_frames
    blocks, labels = [trial.markers[frames] @ rot * 1e3], list(trial.marker_labels)
    if trial.virtual_points is not None and trial.virtual_labels:
        blocks.append(trial.virtual_points[frames] @ rot * 1e3)
        labels += trial.virtual_labels
    groups: dict[str, list[str]] = {}
    for out in trial.model_outputs.values():
        if out.label in extra:
            continue  # replaced below
        group, _, _, scale = OUTPUT_GROUPS.get(out.kind, ("SCALARS", "SCALAR", out.unit, 1.0))
        blocks.append((out.values[frames] * scale)[:, None, :])
        labels.append(out.label)
        groups.setdefault(group, []).append(out.label)
    xyz = np.concatenate(blocks, axis=1)  # (n, n_points, 3)
    if extra:
        index = {lab: i for i, lab in enumerate(labels)}
        new = []
        for label, (group, values) in extra.items():
            values = np.asarray(values, dtype=float).reshape(n, 3)[frames]
            if label in index:
                xyz[:, index[label], :] = values
            else:
                new.append(values[:, None, :])
                labels.append(label)
            groups.setdefault(group, [])
            if label not in groups[group]:
                groups[group].append(label)
        if new:
            xyz = np.concatenate([xyz] + new, axis=1)
    xyz = np.where(np.isfinite(xyz), xyz, np.nan)
    points = np.ones((4, xyz.shape[1], xyz.shape[0]))
    points[:3] = np.transpose(xyz, (2, 1, 0))
    c["data"]["points"] = points
    c["data"]["meta_points"] = {"residuals": np.where(np.isnan(points[:3]).any(axis=0, keepdims=True), -1.0, 0.0)}
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([trial.point_rate])
    c["parameters"]["POINT"]["LABELS"]["value"] = labels  # ezc3d continues them in LABELS2...
    c["parameters"]["POINT"]["DESCRIPTIONS"]["value"] = [""] * len(labels)
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    for kind, (group, unit_key, unit, _) in OUTPUT_GROUPS.items():
        _param(c, "POINT", f"{unit_key}_UNITS", [unit], "str")
    type_groups = []
    for group, names in groups.items():
        _param(c, "POINT", group, names, "str")
        type_groups += [group, group[:-1]]
    if trial.virtual_labels:
        _param(c, "POINT", "MODELED_MARKERS", trial.virtual_labels, "str")
    if type_groups:
        _param(c, "POINT", "TYPE_GROUPS", type_groups, "str")
    first = int(trial.first_frame)
    last = first + n - 1
    c["header"]["points"]["first_frame"] = min(max(first - 1, 0), 65534)
    _param(c, "TRIAL", "ACTUAL_START_FIELD", [first & 0xFFFF, first >> 16], "int")
    _param(c, "TRIAL", "ACTUAL_END_FIELD", [last & 0xFFFF, last >> 16], "int")
    if n > 0xFFFF:
        _param(c, "POINT", "LONG_FRAMES", [float(n)])
    _param(c, "MANUFACTURER", "COMPANY", [trial.manufacturer or "gaitid"], "str")
    from gaitid import __version__

    _param(c, "MANUFACTURER", "SOFTWARE", [f"gaitid {__version__}"], "str")
    return xyz.shape[1]


def _write_analogs_and_plates(c, trial: Trial, path: Path, rot: np.ndarray, frames: slice) -> None:
    """The analog samples of the frames ``frames`` (the parameters: of the whole trial)."""
    plates = trial.force_plates
    if trial.analogs is not None:
        rate = trial.analogs.rate
    elif plates:
        rate = plates[0].analog.rate
    else:
        return
    factor = rate / trial.point_rate
    if abs(factor - round(factor)) > 1e-9 or round(factor) < 1:
        raise DataError(f"analog rate {rate} Hz is not a whole multiple of the point rate {trial.point_rate} Hz", path)
    per_frame = int(round(factor))
    n_samples = trial.n_frames * per_frame
    samples = slice(frames.start * per_frame, frames.stop * per_frame)
    plate_channels = {lab for p in plates for lab in p.channels}
    labels, units, cols = [], [], []
    if trial.analogs is not None:
        values = trial.analogs.values
        if values.shape[0] < n_samples:
            raise DataError(f"the trial has {values.shape[0]} analog samples, {n_samples} expected", path)
        for j, lab in enumerate(trial.analogs.labels):
            if lab not in plate_channels:
                labels.append(lab)
                units.append(trial.analogs.units[j])
                cols.append(values[samples, j])
    channel_table = []
    for k, p in enumerate(plates, start=1):
        if p.analog.n_samples != n_samples:
            raise DataError(f"force plate {p.index} has {p.analog.n_samples} samples, expected {n_samples}", path)
        f_p, m_p = _plate_channels(p, samples)
        channel_table.append(list(range(len(cols) + 1, len(cols) + 7)))
        for name, unit, col in zip(("Fx", "Fy", "Fz", "Mx", "My", "Mz"), ("N",) * 3 + ("Nmm",) * 3, np.hstack([f_p, m_p]).T):
            labels.append(f"F{k}{name[1]}" if name[0] == "F" else f"M{k}{name[1]}")
            units.append(unit)
            cols.append(col)
    if not cols:
        return
    data = np.asarray(cols, dtype=float)
    c["data"]["analogs"] = np.where(np.isfinite(data), data, np.nan)[None, :, :]
    c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([rate])
    c["parameters"]["ANALOG"]["LABELS"]["value"] = labels
    c["parameters"]["ANALOG"]["DESCRIPTIONS"]["value"] = [""] * len(labels)
    c["parameters"]["ANALOG"]["UNITS"]["value"] = units
    c["parameters"]["ANALOG"]["SCALE"]["value"] = np.ones(len(labels))
    c["parameters"]["ANALOG"]["OFFSET"]["value"] = np.zeros(len(labels), dtype=int)
    if plates:
        _param(c, "FORCE_PLATFORM", "USED", [len(plates)], "int")
        _param(c, "FORCE_PLATFORM", "TYPE", [2] * len(plates), "int")
        _param(c, "FORCE_PLATFORM", "ZERO", [0, 0], "int")
        _param(c, "FORCE_PLATFORM", "CORNERS", np.stack([(p.corners @ rot).T * 1e3 for p in plates], axis=2))
        _param(c, "FORCE_PLATFORM", "ORIGIN", np.stack([p.origin * 1e3 for p in plates], axis=1))
        _param(c, "FORCE_PLATFORM", "CHANNEL", np.array(channel_table).T, "int")


def _plate_channels(p: ForcePlate, samples: slice) -> tuple[np.ndarray, np.ndarray]:
    """Type-2 channels (plate frame, N and N.mm about the sensor origin) reproducing ``p.analog``
    over the analog samples ``samples``. The plate frame does not depend on the lab the corners are given in."""
    rot = fpmod.plate_frame(p.corners)
    centre = p.corners.mean(axis=0)
    w = p.analog
    force = w.force[samples]
    m_centre = cross(w.cop[samples] - centre, force) + w.free_moment[samples]  # lab, about the surface centre
    m_centre[~np.isfinite(m_centre).all(axis=1)] = 0.0
    f_p = force @ rot
    origin = p.origin * 1e3
    if origin[2] > 0:  # the reader's type-2 rule flips a positive Z
        origin = -origin
    m_p = (m_centre @ rot) * 1e3 - cross(f_p, origin)
    return f_p, m_p


def _write_events(c, trial: Trial) -> None:
    if not trial.events:
        return
    n = len(trial.events)
    times = np.zeros((2, n))
    times[1] = [e.time for e in trial.events]
    _param(c, "EVENT", "USED", [n], "int")
    _param(c, "EVENT", "LABELS", [e.label for e in trial.events], "str")
    _param(c, "EVENT", "CONTEXTS", [e.context for e in trial.events], "str")
    _param(c, "EVENT", "DESCRIPTIONS", [e.source for e in trial.events], "str")
    _param(c, "EVENT", "TIMES", times)


def _write_subject(c, trial: Trial) -> None:
    s = trial.subject
    if s.name:
        _param(c, "SUBJECTS", "USED", [1], "int")
        _param(c, "SUBJECTS", "NAMES", [s.name], "str")
    for field, (name, scale) in _SUBJECT_OUT.items():
        value = getattr(s, field)
        if value is not None and np.isfinite(value):
            _param(c, "PROCESSING", name, [value * scale])
