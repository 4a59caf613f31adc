"""The subject stage: the body mass, height and model parameters a trial is processed with.

:func:`subject_data` takes what the caller gives (nothing, a mass in kg, ``'plates'``, a
:class:`~gaitid.trial.Subject`, or a dict with ``mass``/``height`` in kg/m and model parameter
overrides) and the trial's own values (its PROCESSING group), and returns a
:class:`SubjectData` saying which value came from where. It never changes the trial or the
caller's objects: the stages after it read ``SubjectData.subject``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace

from gaitid.bodymass import MassEstimate, estimate_mass
from gaitid.contacts import FootContact
from gaitid.errors import DataError, SettingsError
from gaitid.model.gait_markers import GaitMarkers
from gaitid.trial import Subject, Trial

BODY_FIELDS = ("mass", "height", "name")


@dataclass(frozen=True)
class SubjectData:
    """The subject a trial is processed with.

    ``subject``: body data in SI (kg, m). ``parameters``: model parameter overrides given by the
    caller (SI, rad; e.g. ``{'knee_width': 0.1}`` or per side), None when none. ``sources``:
    for each Subject field set, where it came from ('file' = the trial's PROCESSING values,
    'caller', 'plates'). ``notes``: what was done (e.g. the mass estimate). ``mass_estimate``:
    the estimate when the mass came from the plates.
    """

    subject: Subject
    parameters: dict | None = None
    sources: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    mass_estimate: MassEstimate | None = None


def _sources(subject: Subject, source: str) -> dict[str, str]:
    names = [f.name for f in fields(Subject) if f.name != "extra" and getattr(subject, f.name) is not None]
    return {n: source for n in names} | {k: source for k in subject.extra}


def subject_data(trial: Trial, subject: Subject | dict | float | str | None = None,
                 contacts: list[FootContact] | None = None, markers: GaitMarkers | None = None) -> SubjectData:
    """The subject stage (see the module docstring). ``contacts``/``markers`` serve the mass
    estimate when ``subject='plates'``. Raises DataError when the body mass is unknown."""
    base = trial.subject
    if subject is None:
        out = SubjectData(base, None, _sources(base, "file"))
    elif isinstance(subject, str) and subject == "plates":
        est = estimate_mass(trial, contacts=contacts, markers=markers)
        note = (f"body mass {est.mass:.1f} kg estimated from the force plates ({est.method}, "
                f"{est.window_s[0]:.2f}-{est.window_s[1]:.2f} s); give the measured mass when known")
        out = SubjectData(replace(base, mass=est.mass), None, _sources(base, "file") | {"mass": "plates"},
                          (note,), est)
    elif isinstance(subject, Subject):
        out = SubjectData(subject, None, _sources(subject, "caller"))
    else:
        if isinstance(subject, (int, float)) and not isinstance(subject, bool):
            subject = {"mass": float(subject)}
        if not isinstance(subject, dict):
            raise SettingsError(f"subject must be a Subject, a mass in kg or a dict, not {type(subject).__name__}")
        rest = dict(subject)
        body = {k: rest.pop(k) for k in BODY_FIELDS if k in rest}
        for key, value in body.items():
            if key != "name" and not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
                raise SettingsError(f"subject {key}={value!r} must be a positive number (kg, m)")
        out = SubjectData(replace(base, **body), rest or None,
                          _sources(base, "file") | {k: "caller" for k in body} | {k: "caller" for k in rest})
    if out.subject.mass is None or not out.subject.mass > 0:
        raise DataError("body mass unknown: the file stores none; give it (--mass KG, or subject=KG), "
                        "or estimate it from the force plates (--mass plates, subject='plates')", trial.path)
    return out
