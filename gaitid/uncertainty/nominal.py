"""The nominal run the uncertainty stage perturbs: one record of the pipeline's products.

:func:`gaitid.process` builds a :class:`NominalRun` on every run (it costs nothing; this module
imports no other module of the stage) and hands it to the stage, which rebuilds the model, the
feet's loads and the outputs for every column of its design from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.settings import Settings
from gaitid.core.trial import Subject, Trial
from gaitid.cycles.curves import Cycle
from gaitid.cycles.outputs import Outputs
from gaitid.model.assembly import ModelKinematics
from gaitid.model.markerset import Model


@dataclass(frozen=True)
class NominalRun:
    """One trial as :func:`gaitid.process` ran it. What it was run with: the ``trial``, the
    ``model`` definition, the ``static`` trial (None without one), the ``settings``, the
    ``subject`` used (body mass in kg: the segments' masses and the outputs' normalisation) and
    the per-subject ``segment_parameters`` (None without). What came out: the ``kinematics``
    (:func:`gaitid.model.assembly.build_segments`), each foot's ``loads`` (unfiltered), the
    ``outputs`` (their units are the uncertainty tables' units) and the gait ``cycles``."""

    trial: Trial
    model: Model
    static: Trial | None
    settings: Settings
    subject: Subject
    segment_parameters: dict | None
    kinematics: ModelKinematics
    loads: dict[str, FootLoad]
    outputs: Outputs
    cycles: list[Cycle]
