"""The subject stage: the body mass, height and model parameters a trial is processed with.

The one way in, for ``run``, ``batch``, ``validate`` and the API:

- :func:`gather_subject` (before processing, from the caller's
  :class:`~gaitid.subject.layers.SubjectOptions`): every
  source merged, most trusted first (:func:`gaitid.subject.layers.subject_layers`: values typed
  on the command line, the ``--subject`` file, the C3D's PROCESSING values, the Vicon subject
  files beside the trial; :func:`gaitid.subject.merge.merge_subject`), with notes on sources
  not used or disagreeing. It returns the :class:`SubjectData` to give to ``process``.
- :func:`subject_data` (the stage of :func:`gaitid.pipeline.process`): what the caller gives
  over the trial's own values (its C3D PROCESSING group): the caller's values win, the file's
  fill the gaps, and the result says which value came from where. The caller may give nothing,
  a mass in kg, ``'plates'`` (the mass estimated from the force plates), a
  :class:`~gaitid.core.subject_record.Subject` (e.g. read from a ``.vsk`` by
  :func:`gaitid.subject.readers.read_subject`), a :class:`SubjectData` (:func:`gather_subject`'s),
  or a dict: Subject values (``mass`` kg, ``height`` m, ``leg_length``, ``knee_width``,
  ``ankle_width`` (both sides, or ``_left``/``_right``, or ``{'left': {...}}``), Vicon names in
  Vicon units) and model parameter overrides (any other name of the model's ``[parameters]``,
  SI and rad, e.g. ``tibial_torsion``; :func:`gaitid.core.subject_record.split_subject_dict`),
  which the model applies over any subject value.

Every source's values go through the same plausible ranges
(:data:`gaitid.core.subject_record.PLAUSIBLE`): a value the user typed (command line, a caller's
dict or mass) that is implausible is refused (SettingsError); a value a file stores (the C3D, a
``.vsk``/``.mp``, a table) that is implausible, negative, non-finite, or a zero mass, is refused
(DataError naming the source, the stored name and value, the range and the option that gives
it), unless another source gives that value: then a warning names the value ignored and the one
used. :func:`subject_data` then checks the body mass against the plates
(:func:`gaitid.subject.bodymass.check_mass`, ``Settings.mass_tolerance``): a warning with both
numbers when they disagree; ``SubjectData.mass_check`` records the comparison, or why the plates
could not tell (no warning then).

Neither changes the trial or the caller's objects.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from gaitid.contacts import FootContact
from gaitid.core.errors import DataError, SettingsError
from gaitid.core.subject_record import Subject, split_subject_dict
from gaitid.core.trial import Trial
from gaitid.model.functional import FunctionalCalibration
from gaitid.model.gait_markers import GaitMarkers
from gaitid.subject.bodymass import MassCheck, MassEstimate, check_mass, estimate_mass
from gaitid.subject.layers import SubjectOptions, subject_layers
from gaitid.subject.merge import ignored_values, invalid_error, merge_subject, subject_disagreements

FILE, CALLER, PLATES = "C3D PROCESSING", "caller", "estimated from the force plates"


@dataclass(frozen=True)
class SubjectData:
    """The subject a trial is processed with.

    ``subject``: body data in SI (kg, m), the caller's values over the file's. ``parameters``:
    model parameter overrides given by the caller (SI, rad; for both sides or per side), None
    when none. ``sources``: for each Subject value, where it came from ('C3D PROCESSING',
    'caller' or the caller's own record of it, 'estimated from the force plates').
    ``notes``: what the user should know (the mass estimate, values ignored, a mass the plates
    contradict), carried into ``Result.warnings``. ``mass_estimate``: the estimate when the
    mass came from the plates. ``plates``: the mass is estimated from the force plates (by
    :func:`subject_data`, which needs the trial's contacts; :func:`gather_subject` only asks).
    ``mass_check``: the mass against the plates (:class:`~gaitid.subject.bodymass.MassCheck`:
    both masses and the method, or why the plates could not tell); None when the mass is the
    plates' own estimate or before :func:`subject_data`.
    """

    subject: Subject
    parameters: dict | None = None
    sources: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    mass_estimate: MassEstimate | None = None
    plates: bool = False
    mass_check: MassCheck | None = None


def subject_data(trial: Trial, subject: SubjectData | Subject | dict | float | str | None = None,
                 contacts: list[FootContact] | None = None, markers: GaitMarkers | None = None,
                 mass_tolerance: float = 0.15, functional: FunctionalCalibration | None = None) -> SubjectData:
    """The subject stage (see the module docstring). ``contacts``/``markers`` serve the mass
    estimate when the mass comes from the plates, and the check of the mass against the plates
    (``mass_tolerance``: ``Settings.mass_tolerance``). ``functional``: a session's functional
    calibration (:func:`gaitid.model.functional.session_calibration`), whose hip centres and knee
    axes become subject values (``hip_centre_left_x``..., source naming the method, its residual
    and range) over any other source's. Raises DataError when the body mass is
    unknown, or a file stores an invalid value that no other source replaces."""
    params, notes, estimate, plates, check = None, [], None, False, None
    if isinstance(subject, SubjectData):
        layer, params, plates = subject.subject, subject.parameters, subject.plates
    elif subject is None or (isinstance(subject, str) and subject == "plates"):
        layer, plates = None, subject is not None
    elif isinstance(subject, Subject):
        layer = subject
    elif isinstance(subject, (int, float)) and not isinstance(subject, bool):
        layer = {"mass": float(subject)}
    elif isinstance(subject, dict):
        layer, params = split_subject_dict(subject)
        params = params or None
    else:
        raise SettingsError(f"subject must be a Subject, a mass in kg, 'plates' or a dict, not {type(subject).__name__}")
    layers = [(CALLER, layer), (FILE, trial.subject)]
    merged, sources = merge_subject(layers)
    merged.name = trial.subject.name or merged.name
    if not isinstance(subject, SubjectData):  # gather_subject has said these already
        notes += ignored_values(layers)
    if plates:
        estimate = estimate_mass(trial, contacts=contacts, markers=markers)
        if "mass" in merged.invalid:
            notes.append(f"{merged.invalid['mass'].describe()}; ignored, the mass estimated from the plates used")
        merged = replace(merged, mass=estimate.mass, sources={**merged.sources, "mass": PLATES},
                         invalid={k: v for k, v in merged.invalid.items() if k != "mass"})
        sources = merged.sources
        notes.append(f"body mass {estimate.mass:.1f} kg estimated from the force plates ({estimate.method}, "
                     f"{estimate.window_s[0]:.2f}-{estimate.window_s[1]:.2f} s); give the measured mass when known")
    if functional is not None:
        values, given = functional.subject_values()
        merged = replace(merged, extra={**merged.extra, **values}, sources={**merged.sources, **given})
        sources = merged.sources
        notes += functional.notes()
    refused = invalid_error(merged, trial.path)
    if refused is not None:
        raise refused
    if merged.mass is None or not merged.mass > 0:
        raise DataError("body mass unknown: the file stores none; give it (subject=KG; --mass KG on the command "
                        "line), or estimate it from the force plates (subject='plates'; --mass plates)", trial.path,
                        cli="body mass unknown: the file stores none; give it (--mass KG), or estimate it from "
                            "the force plates (--mass plates)")
    if not plates:
        check = check_mass(trial, merged.mass, sources.get("mass", "?"), contacts=contacts, markers=markers,
                           tolerance=mass_tolerance)
        notes += [check.warning] if check.warning else []
    return SubjectData(merged, params, dict(sources), tuple(notes), estimate, plates, check)


def gather_subject(trial: Trial, options: SubjectOptions | None = None, path: str | os.PathLike | None = None
                   ) -> tuple[SubjectData, list[str]]:
    """The subject ``trial`` is processed with, from every source (see the module docstring),
    and notes on the sources (not used, values on which they disagree). ``path``: where the
    trial lies (default ``trial.path``), for the subject files beside it. The name is the file's
    (whose trial it is), never a subject file's. Give the SubjectData to ``process``."""
    options = options or SubjectOptions()
    layers, notes = subject_layers(trial.subject, path if path is not None else trial.path, cli=options.values,
                                   subject_file=options.file)
    merged, _ = merge_subject(layers)
    merged.name = trial.subject.name or merged.name
    notes += ignored_values(layers)
    notes += [f"subject values differ between sources: {d}" for d in subject_disagreements(layers)]
    if options.plates:
        merged.sources["mass"] = "estimated from the force plates (--mass plates)"
    return SubjectData(merged, sources=dict(merged.sources), plates=options.plates), notes
