"""The data-quality stage: every physics check of one trial (:mod:`gaitid.core.checks`), in stage
order, each a :class:`~gaitid.core.checks.Check` whatever it found (docs/checks.md)."""

from __future__ import annotations

from gaitid.contacts import FootContact
from gaitid.contacts.consistency import consistency_check
from gaitid.contacts.cop_check import cop_foot_check
from gaitid.contacts.decompose import shared_plates_check
from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.checks import Check
from gaitid.core.settings import Settings
from gaitid.core.trial import Trial
from gaitid.io.plate_checks import plate_geometry_check, plate_units_check
from gaitid.model.assembly import ModelKinematics
from gaitid.model.gait_markers import GaitMarkers
from gaitid.model.marker_faults import marker_fault_check
from gaitid.model.markerset import Model
from gaitid.subject.stage import SubjectData


def mass_check(subject: SubjectData) -> Check:
    """The body mass used against the plates (:func:`gaitid.subject.bodymass.check_mass`)."""
    name = "body mass"
    if subject.plates:
        return Check.not_run(name, "the mass was estimated from the plates, so it cannot be checked against them")
    mc = subject.mass_check
    if mc is None or mc.plates is None:
        return Check.not_run(name, mc.note if mc is not None else "not checked")
    detail = (f"{mc.mass:.1f} kg ({mc.source}) vs {mc.plates:.1f} kg on the plates in {mc.method} "
              f"({100 * mc.difference:+.1f} %, tolerance {100 * mc.tolerance:g} %)")
    return Check.outcome(name, detail, [mc.warning] if mc.warning else [])


def quality_checks(trial: Trial, model: Model, markers: GaitMarkers, subject: SubjectData,
                   kinematics: ModelKinematics, contacts: list[FootContact], loads: dict[str, FootLoad],
                   settings: Settings) -> list[Check]:
    """Every check's outcome, in stage order."""
    return [
        plate_geometry_check(trial, settings.plate_corner_tolerance_m, settings.plate_origin_offset_m,
                             settings.plate_origin_depth_m),
        plate_units_check(trial, settings.plate_cop_outside_m),
        cop_foot_check(trial, markers, contacts, settings.cop_foot_margin_m, settings.cop_min_travel),
        shared_plates_check(loads, contacts, trial.point_rate, settings.decompose_shared_plates),
        mass_check(subject),
        marker_fault_check(trial, model, kinematics, length_tolerance_m=settings.segment_length_tolerance_m,
                           asymmetry_tolerance=settings.segment_asymmetry_tolerance,
                           stuck_s=settings.stuck_marker_s, stuck_m=settings.stuck_marker_m,
                           side_margin_m=settings.marker_side_margin_m,
                           knock_m=settings.marker_knock_m, turn_deg=settings.marker_turn_deg),
        consistency_check(kinematics, loads, subject.subject.mass, trial, settings),
    ]
