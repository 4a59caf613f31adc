"""The whole job for one trial: :func:`process`, a chain of named stages.

In the order a biomechanist thinks, each stage a function of the previous ones' outputs,
callable on its own:

1. :func:`load_trial` -> :class:`~gaitid.core.trial.Trial` (C3D, or OpenSim TRC + GRF MOT);
   the model (``models/*.toml``), its markers checked, their gaps filled (:func:`marker_gaps`,
   recorded in ``Result.fills``), and the gait markers it names (:func:`~gaitid.model.gait_markers.gait_markers`);
2. :func:`foot_contacts` -> which foot loads which plate, assigned once, overrides applied
   (:mod:`gaitid.contacts`; a drifting plate's unloaded baseline subtracted first; a plate both
   feet load split into each foot's share, flagged 'decomposed'); contacts depend only on the
   trial, so they come before the subject, whose mass may be estimated from them;
3. :func:`~gaitid.subject.stage.subject_data` -> the body mass, height and model parameters used,
   with their sources (and the functional calibration's joint centres, when given);
4. :func:`segment_kinematics` -> segment frames, joint centres, body-segment parameters,
   derivatives, joint angles (:mod:`gaitid.model`);
5. :func:`~gaitid.events.gait_events` -> the file's events checked against those detected
   from the contacts and from kinematics;
6. :func:`measured_loads` -> the load on each foot per frame: the plates it alone loads on that
   frame (:mod:`gaitid.contacts.ownership`, :func:`~gaitid.contacts.foot_loads.foot_loads`), NaN where unknown;
7. :func:`joint_loads` -> the solver (:func:`gaitid.dynamics.inverse_dynamics`) per leg;
8. :func:`~gaitid.cycles.outputs.output_curves` -> Plug-in Gait-named output variables;
9. :func:`cycle_tables` -> cycles, 0-100 % curves, discrete parameters, mean +- SD;
   :func:`~gaitid.emg.emg_stage` -> the EMG channels' envelopes on the cycles and their on-off timing;
   :func:`~gaitid.pipeline.quality.quality_checks` -> every data check's outcome (``Result.checks``);
10. :func:`kinetic_uncertainty` (when asked) -> the SD and 95 % interval of every kinetic output
    (:mod:`gaitid.uncertainty`).

No stage changes its inputs; the :class:`~gaitid.pipeline.result.Result` keeps every stage's output.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from gaitid.contacts import FootContact, PlateOwnership, assign_contacts, plate_ownership
from gaitid.contacts.decompose import shared_plate_contacts, with_split
from gaitid.contacts.foot_loads import FootLoad, filtered_load, foot_loads
from gaitid.contacts.intervals import cut_notes, unloaded_baselines
from gaitid.core.checks import Check
from gaitid.core.errors import GaitIDError
from gaitid.core.settings import Settings
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import COP_THRESHOLD_N, SIDES
from gaitid.cycles.clinical import clinical_columns
from gaitid.cycles.curves import Cycle, curves_summary, cycle_columns, gait_cycles, normalised_cycles
from gaitid.cycles.marker_cover import covered_frames, mark_uncovered
from gaitid.cycles.outputs import Outputs, output_curves
from gaitid.cycles.parameters import label_decomposed, parameter_table, spatiotemporal_columns, summarise
from gaitid.dynamics import inverse_dynamics
from gaitid.dynamics.types import JointLoads
from gaitid.emg import emg_stage
from gaitid.events import gait_events
from gaitid.model.assembly import ModelKinematics, build_segments
from gaitid.model.functional import session_calibration
from gaitid.model.gait_markers import GaitMarkers, gait_markers
from gaitid.model.gap_fill import MarkerFills, fill_marker_gaps
from gaitid.model.markerset import Model, load_model
from gaitid.model.trial_markers import require_markers
from gaitid.pipeline.quality import quality_checks
from gaitid.pipeline.result import Result
from gaitid.subject.stage import SubjectData, subject_data
from gaitid.uncertainty.nominal import NominalRun  # the record alone: the stage is imported when a run asks for it

if TYPE_CHECKING:  # the uncertainty stage is imported only when a run asks for it
    from gaitid.uncertainty import Uncertainty


def load_trial(source: str | os.PathLike | Trial, *, cop_threshold: float = COP_THRESHOLD_N) -> Trial:
    """A Trial from a Trial (returned as is), a C3D path, or an OpenSim ``.trc`` (GRF
    ``<name>_grf.mot`` and ``_grf.xml`` beside it)."""
    if isinstance(source, Trial):
        return source
    path = Path(source)
    if path.suffix.lower() == ".trc":
        from gaitid.io.opensim import read_opensim_trial

        grf = path.with_name(path.stem + "_grf.mot")
        xml = path.with_name(path.stem + "_grf.xml")
        return read_opensim_trial(path, grf if grf.exists() else None, xml if xml.exists() else None,
                                  cop_threshold=cop_threshold)
    from gaitid.io.c3d import read_c3d

    return read_c3d(path, cop_threshold=cop_threshold)


def marker_gaps(trial: Trial, model: Model, settings: Settings, static: Trial | None = None
                ) -> tuple[Trial, MarkerFills]:
    """The gap-filling stage (:mod:`gaitid.model.gap_fill`): the trial with its markers' interior gaps
    filled by spline, rigid body (the segment's shape from the ``static`` trial when there is one) or
    principal components as ``settings`` allow, and the record of every gap."""
    return fill_marker_gaps(trial, model, max_gap_frames=settings.max_gap_frames, max_fill_s=settings.max_fill_s,
                            rigid=settings.fill_rigid, pca=settings.fill_pca, static=static)


def foot_contacts(trial: Trial, markers: GaitMarkers, settings: Settings
                  ) -> tuple[Trial, list[FootContact], PlateOwnership]:
    """The contacts stage: each plate's unloaded reading subtracted where it would make contacts
    (:func:`~gaitid.contacts.intervals.unloaded_baselines`; the returned trial, with the notes), who
    loads each plate on every frame (:func:`gaitid.contacts.plate_ownership`, computed once per trial;
    each foot's share of a plate both feet load, :mod:`gaitid.contacts.decompose`) and every plate
    contact given to a foot or invalid with the reason (cut where no foot is on the plate)."""
    trial, _ = unloaded_baselines(trial, markers, settings.contact_threshold_n)
    ownership = plate_ownership(trial, markers, settings.contact_threshold_n)
    if settings.decompose_shared_plates:  # each foot's share of a plate both feet load
        ownership = with_split(trial, markers, ownership)
    contacts = assign_contacts(trial, markers, overrides=settings.plates, threshold=settings.contact_threshold_n,
                               min_duration=settings.min_contact_s, ownership=ownership)
    contacts = shared_plate_contacts(trial, ownership, contacts, settings.min_contact_s)
    notes = cut_notes([iv for c in contacts for iv in c.intervals])
    return (replace(trial, warnings=[*trial.warnings, *notes]) if notes else trial), contacts, ownership


def measured_loads(trial: Trial, contacts: list[FootContact], ownership: PlateOwnership, events,
                   settings: Settings):
    """The foot-loads stage: each foot's load per frame, the sum of the plates it alone loads on that
    frame (``ownership``, from the contacts stage), zero in swing, NaN where not wholly measured."""
    return foot_loads(trial, contacts, events, ownership, settings.contact_threshold_n)


def segment_kinematics(trial: Trial, model: Model, static: Trial | None, subject: SubjectData,
                       settings: Settings, segment_parameters: dict | None = None) -> ModelKinematics:
    """The kinematics stage: the model applied to the trial (and its static) with the subject's
    data and the caller's model parameter overrides."""
    return build_segments(trial, model, static=static, subject=subject.subject, parameters=subject.parameters,
                          bsip=settings.bsip, marker_cutoff_hz=settings.marker_cutoff_hz,
                          max_gap_frames=settings.max_gap_frames, filter_order=settings.filter_order,
                          segment_overrides=segment_parameters, flat_foot=settings.flat_foot)


def joint_loads(kinematics: ModelKinematics, loads: dict[str, FootLoad], settings: Settings) -> dict[str, JointLoads]:
    """The solver stage: each leg's joint forces and moments (and their contributions), from the
    foot's load filtered like the markers, in ``settings.frame`` under ``settings.convention``."""
    root_R = kinematics.root.R if kinematics.root is not None else None
    out = {}
    for side in SIDES:
        load = filtered_load(loads[side], kinematics.rate, settings.force_cutoff, settings.filter_order)
        out[side] = inverse_dynamics(kinematics.chains[side], kinematics.motion[side], [load],
                                     gravity_lab=(0.0, 0.0, -settings.gravity_m_s2), frame=settings.frame,
                                     convention=settings.convention, proximal_R=root_R)
    return out


def cycle_tables(trial: Trial, outputs: Outputs, cycles: list[Cycle], markers: GaitMarkers, settings: Settings):
    """The cycles stage: 0-100 % curves of every cycle as arrays (:func:`~gaitid.cycles.curves.normalised_cycles`;
    ``Result.curves`` builds their long table when asked), their mean and SD, and the discrete
    parameters (spatio-temporal, and the clinical ones in their phase, :mod:`gaitid.cycles.clinical`) with
    their mean and SD (the summaries None when there is no cycle)."""
    arrays = normalised_cycles(outputs.curves, trial.time, cycles)
    clinical = clinical_columns({side: (by_name, outputs.units) for side, by_name in arrays.items()},
                                cycle_columns(cycles), convention=settings.convention, frame=settings.frame,
                                point_rate=trial.point_rate)
    params = label_decomposed(parameter_table(spatiotemporal_columns(trial, cycles, markers), clinical), cycles)
    return arrays, curves_summary(arrays, outputs.units), params, summarise(params) if not params.empty else None


def kinetic_uncertainty(nominal: NominalRun, uncertainty) -> Uncertainty | None:
    """The uncertainty stage (:mod:`gaitid.uncertainty`) of the ``nominal`` run (the stages' products,
    one record): None unless asked for (``uncertainty``: True, a Monte Carlo sample count, a dict or
    :class:`~gaitid.uncertainty.UncertaintySettings`)."""
    if uncertainty is None or uncertainty is False:
        return None
    from gaitid.uncertainty import joint_load_uncertainty, uncertainty_settings

    how = uncertainty_settings(uncertainty)
    if how is None:
        return None
    return joint_load_uncertainty(nominal, how)


def process(source: str | os.PathLike | Trial, model: str | None = None, subject=None,
            static: str | os.PathLike | Trial | None = None, settings: Settings | None = None,
            segment_parameters: dict | None = None, uncertainty=None, warnings: Iterable[str] = (),
            functional=None, **changes) -> Result:
    """Process one trial end to end and return a :class:`~gaitid.pipeline.result.Result`.

    ``source``: a C3D (or OpenSim ``.trc``) path, or a Trial (never modified). ``model``: model name or file (default
    'plugin-gait'). ``subject``: body mass in kg, ``'plates'``, a Subject, a dict (``mass``, ``height``, model
    parameters) or :func:`~gaitid.subject.stage.gather_subject`'s SubjectData (default: the file's values; see
    :func:`~gaitid.subject.stage.subject_data`). ``static``: the static trial. ``functional``: functional trials (hip
    star arc, knee flexion) or a :func:`~gaitid.model.functional.session_calibration`. ``settings``, ``changes``: see
    Settings. ``segment_parameters``: inertial parameters replacing the table's, e.g. ``{'thigh': {'mass': 7.2,
    'com_from_proximal': 0.433, 'inertia': [0.139, 0.139, 0.030]}}`` (kg, fraction of length, kg.m^2; 'left.thigh':
    one side). ``uncertainty``: SD and 95 % interval of the kinetics. ``warnings``: the caller's notes."""
    settings = (settings or Settings()).replace(**({"model": model} if model else {}), **changes)
    trial = load_trial(source, cop_threshold=settings.cop_threshold_n)
    static_trial = load_trial(static, cop_threshold=settings.cop_threshold_n) if static is not None else None
    model_def = require_markers(trial, load_model(settings.model), static_trial)
    trial, fills = marker_gaps(trial, model_def, settings, static_trial)
    markers = gait_markers(model_def, trial)
    trial, contacts, ownership = foot_contacts(trial, markers, settings)
    subj = subject_data(trial, subject, contacts, markers, settings.mass_tolerance,
                        session_calibration(functional, static_trial, settings))
    kinematics = segment_kinematics(trial, model_def, static_trial, subj, settings, segment_parameters)
    choice = gait_events(trial, contacts, markers, settings.events, fills=fills, trusted_s=settings.trusted_spline_s)
    loads = measured_loads(trial, contacts, ownership, choice.events, settings)
    joints = joint_loads(kinematics, loads, settings)
    outputs = output_curves(kinematics, joints, loads, model_def, settings, subj.subject)
    cycles = mark_uncovered(gait_cycles(choice.events, contacts), trial, covered_frames(kinematics.frames))
    normalised, curves_summary, params, params_summary = cycle_tables(trial, outputs, cycles, markers, settings)
    emg = emg_stage(trial, cycles, settings)
    checks = quality_checks(trial, model_def, markers, subj, kinematics, contacts, loads, settings)
    unc = kinetic_uncertainty(NominalRun(trial, model_def, static_trial, settings, subj.subject, segment_parameters,
                                         kinematics, loads, outputs, cycles), uncertainty)
    return Result(replace(trial, subject=subj.subject), settings, subj, markers, kinematics, contacts, choice, loads,
                  joints, outputs, cycles, None, curves_summary, params, params_summary, normalised=normalised,
                  static=static_trial and (static_trial.path or "?"), uncertainty=unc, checks=checks, emg=emg,
                  fills=fills, warnings=collect_warnings(trial, subj, kinematics, choice, cycles, checks, settings,
                                                         warnings, emg))


def collect_warnings(trial: Trial, subject: SubjectData, kinematics: ModelKinematics, choice,
                     cycles: list[Cycle], checks: list[Check], settings: Settings, given: Iterable[str] = (),
                     emg=None) -> list[str]:
    """What the user should know, stage by stage: the reader's, the caller's (``given``), the
    subject's, the model's, the events' (and how many detected events disagree with the file's),
    the data-quality checks', missing cycles, the EMG's (``emg``: :class:`~gaitid.emg.Emg` or None)."""
    out = [*trial.warnings, *given, *subject.notes, *kinematics.warnings, *choice.notes]
    out += [w for check in checks for w in check.warnings if w not in out]
    if choice.disagreements:
        out.append(f"{choice.disagreements} detected event(s) disagree with the file's (more than 1 frame for "
                   f"plate events, 3 for kinematic ones; see Result.event_comparison); using the "
                   f"{'file' if settings.events == 'file' else settings.events} events")
    if not cycles:
        out.append("no complete gait cycle (foot strike, foot off, foot strike of one foot) in the events")
    return out + list(emg.warnings if emg is not None else ())


def process_safely(source, **kwargs) -> Result | GaitIDError:
    """:func:`process`, returning the GaitIDError instead of raising it (for batch runs)."""
    try:
        return process(source, **kwargs)
    except GaitIDError as exc:
        return exc
