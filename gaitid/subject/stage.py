"""The subject stage: the body mass, height and model parameters a trial is processed with.

:func:`subject_data` merges what the caller gives over the trial's own values (its C3D
PROCESSING group): the caller's values win, the file's fill the gaps
(:func:`gaitid.model.subject.merge_subject`), and the result says which value came from where.
The caller may give nothing, a mass in kg, ``'plates'`` (the mass estimated from the force
plates), a :class:`~gaitid.core.trial.Subject` (e.g. read from a ``.vsk`` by
:func:`gaitid.model.subject_files.read_subject`), or a dict: Subject values (``mass`` kg, ``height``
m, ``leg_length``, ``knee_width``, ``ankle_width`` (both sides, or ``_left``/``_right``, or
``{'left': {...}}``), Vicon names in Vicon units) and model parameter overrides (any other
name of the model's ``[parameters]``, SI and rad, e.g. ``tibial_torsion``), which the model
applies over any subject value. It never changes the trial or the caller's objects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from gaitid.subject.bodymass import MassEstimate, estimate_mass
from gaitid.contacts import FootContact
from gaitid.core.errors import DataError, SettingsError
from gaitid.model.gait_markers import GaitMarkers
from gaitid.model.subject import (
    NUMERIC_FIELDS,
    SIDED,
    VICON_FIELDS,
    merge_subject,
    vicon_short_name,
)
from gaitid.core.trial import Subject, Trial
from gaitid.core.vocabulary import SIDES, side_key

FILE, CALLER, PLATES = "C3D PROCESSING", "caller", "estimated from the force plates"
_SUBJECT_KEYS = {"name", *NUMERIC_FIELDS, *SIDED} | {f"{b}_{u}" for b in (*NUMERIC_FIELDS, *SIDED)
                                                      for u in ("kg", "g", "m", "cm", "mm")}


@dataclass(frozen=True)
class SubjectData:
    """The subject a trial is processed with.

    ``subject``: body data in SI (kg, m), the caller's values over the file's. ``parameters``:
    model parameter overrides given by the caller (SI, rad; for both sides or per side), None
    when none. ``sources``: for each Subject value, where it came from ('C3D PROCESSING',
    'caller' or the caller's own record of it, 'estimated from the force plates').
    ``notes``: what was done (e.g. the mass estimate). ``mass_estimate``: the estimate when the
    mass came from the plates.
    """

    subject: Subject
    parameters: dict | None = None
    sources: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    mass_estimate: MassEstimate | None = None


def _is_subject_key(key: str) -> bool:
    return key.lower() in _SUBJECT_KEYS or vicon_short_name(str(key)) in VICON_FIELDS


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
        elif _is_subject_key(str(key)):
            subject[key] = value
        else:
            params[key] = value
    return subject, params


def subject_data(trial: Trial, subject: Subject | dict | float | str | None = None,
                 contacts: list[FootContact] | None = None, markers: GaitMarkers | None = None) -> SubjectData:
    """The subject stage (see the module docstring). ``contacts``/``markers`` serve the mass
    estimate when ``subject='plates'``. Raises DataError when the body mass is unknown."""
    params, notes, estimate = None, (), None
    if subject is None or (isinstance(subject, str) and subject == "plates"):
        layer = None
    elif isinstance(subject, Subject):
        layer = subject
    elif isinstance(subject, (int, float)) and not isinstance(subject, bool):
        layer = {"mass": float(subject)}
    elif isinstance(subject, dict):
        layer, params = split_subject_dict(subject)
        params = params or None
    else:
        raise SettingsError(f"subject must be a Subject, a mass in kg, 'plates' or a dict, not {type(subject).__name__}")
    if isinstance(layer, dict):
        for key in ("mass", "height"):
            value = layer.get(key)
            if value is not None and not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
                raise SettingsError(f"subject {key}={value!r} must be a positive number (kg, m)")
    merged, sources = merge_subject([(CALLER, layer), (FILE, trial.subject)])
    merged.name = trial.subject.name or merged.name
    if isinstance(subject, str) and subject == "plates":
        estimate = estimate_mass(trial, contacts=contacts, markers=markers)
        merged = replace(merged, mass=estimate.mass, sources={**merged.sources, "mass": PLATES})
        sources = merged.sources
        notes = (f"body mass {estimate.mass:.1f} kg estimated from the force plates ({estimate.method}, "
                 f"{estimate.window_s[0]:.2f}-{estimate.window_s[1]:.2f} s); give the measured mass when known",)
    if merged.mass is None or not merged.mass > 0:
        raise DataError("body mass unknown: the file stores none; give it (--mass KG, or subject=KG), "
                        "or estimate it from the force plates (--mass plates, subject='plates')", trial.path)
    return SubjectData(merged, params, dict(sources), notes, estimate)
