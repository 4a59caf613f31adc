"""``Result``: everything :func:`gaitid.process` produced for one trial, stage by stage.

A Result keeps each stage's output, so a user can see where a number came from: the
``trial`` (with the subject used), ``subject`` (:class:`~gaitid.subject.stage.SubjectData`: values and
their sources), ``markers`` (the gait markers used), ``kinematics`` (segment frames, joint
centres, angles), ``foot_contacts`` (plate assignment with reasons), ``event_choice`` (the
events used and the comparison behind the choice), ``loads`` (the load on each foot),
``joint_loads`` (the solver's output, SI, in ``settings.frame`` under ``settings.convention``),
``outputs`` (the per-frame output curves as arrays), ``cycles``, and the cycle tables. The
tidy per-frame table (:attr:`Result.frames`) and the contacts table are built from those when
asked for.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from gaitid.contacts import FootContact, contacts_table
from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.checks import Check, verdict
from gaitid.core.errors import DataError
from gaitid.core.settings import Settings
from gaitid.core.trial import Event, Trial
from gaitid.cycles.curves import Cycle
from gaitid.cycles.outputs import Outputs, frames_table
from gaitid.dynamics.types import JointLoads
from gaitid.emg import Emg, emg_table
from gaitid.events import EventChoice
from gaitid.model.assembly import ModelKinematics
from gaitid.model.gait_markers import GaitMarkers
from gaitid.model.gap_fill import MarkerFills
from gaitid.subject.stage import SubjectData

if TYPE_CHECKING:  # imported by the uncertainty stage, when a run asks for it
    from gaitid.uncertainty import Uncertainty


class CycleCurves(NamedTuple):
    """:meth:`Result.cycle_curves`: ``values`` (n_cycles, 101, k), ``percent`` (101,), ``cycles``
    (n_cycles,) numbers from 1, ``kinetic`` (n_cycles,) and the ``unit``."""

    values: np.ndarray
    percent: np.ndarray
    cycles: np.ndarray
    kinetic: np.ndarray
    unit: str


class _CycleTable:
    """A cycle table of ``Result``, a dataclass field (``Result(...)`` and ``dataclasses.replace``
    take it as any other): the table given, or for ``curves`` (``built``) None: the tidy long table
    of the Result's normalised arrays, built on first use and kept (:func:`gaitid.cycles.curves.curves_table`).
    With an uncertainty, its columns are joined on ``keys`` when the table is first read
    (:func:`gaitid.uncertainty.with_uncertainty`), once per uncertainty; a copy given a joined
    table joins it again, which replaces the columns, never adds them twice."""

    def __init__(self, keys: list[str], built: bool = False):
        self.keys, self.built = keys, built

    def __set_name__(self, owner, name):
        self.name = name
        self.slot = "_" + name if self.built else name  # where the table lives in __dict__ (and in pickles)

    def __get__(self, obj, owner=None):
        if obj is None:
            return None  # the field's default
        state = obj.__dict__
        table = state.get(self.slot)
        if table is None and self.built and state.get("normalised") is not None:
            from gaitid.cycles.curves import curves_table

            table = state[self.slot] = curves_table(obj.normalised, obj.cycles, obj.outputs.units)
        u = state.get("uncertainty")
        if u is not None and table is not None and state.get("_joined", {}).get(self.name) is not u:
            from gaitid.uncertainty import with_uncertainty

            table = state[self.slot] = with_uncertainty(table, getattr(u, self.name), self.keys)
            state.setdefault("_joined", {})[self.name] = u
        return table

    def __set__(self, obj, value):
        obj.__dict__[self.slot] = value
        obj.__dict__.get("_joined", {}).pop(self.name, None)


@dataclass(eq=False)
class Result:
    """Everything :func:`gaitid.process` produced for one trial (see the module docstring).

    Tables: ``frames`` (per-frame outputs, tidy long table: ``frame`` (Vicon frame number),
    ``time_s``, ``side`` ('Left'/'Right'), ``variable`` (``AnkleMoment``...), ``component``
    ('X', 'Y', 'Z'; '' for scalars), ``value``, ``unit``); ``curves`` (time-normalised cycles,
    :func:`gaitid.cycles.curves.cycle_curves`; the table is built from ``normalised`` on first use:
    ``{side: {variable: (n_cycles, 101) or (n_cycles, 101, 3)}}``,
    :func:`gaitid.cycles.curves.normalised_cycles`) and ``curves_summary`` (mean, SD and n per side and
    percent); ``parameters`` / ``parameters_summary`` (discrete parameters per cycle and their
    mean/SD); ``contacts`` (plate assignment with reasons); ``event_comparison`` (file vs
    detected events). ``warnings``: what the user should know, in stage order. ``checks``: the
    data-quality checks' outcomes (:class:`~gaitid.core.checks.Check`; :attr:`verdict` in one line).
    ``emg``: the EMG on the cycles (:class:`~gaitid.emg.Emg`; None without EMG channels), its tables
    ``emg_curves`` and ``emg_timing``. ``fills``: every marker gap filled (method) or left NaN (reason),
    :class:`~gaitid.model.gap_fill.MarkerFills` (docs/gaps.md). ``static``: the
    static trial used (its path; '?' for a Trial without one). ``uncertainty``:
    the :class:`~gaitid.uncertainty.Uncertainty` of the kinetic outputs when asked for; then
    every table above also has ``uncertainty_sd``, ``uncertainty_low95``, ``uncertainty_high95``
    and ``uncertainty_sd_linear`` columns (in the row's ``unit``; NaN for angles and moment
    contributions), joined when the table is first read.
    """

    trial: Trial
    settings: Settings
    subject: SubjectData
    markers: GaitMarkers
    kinematics: ModelKinematics
    foot_contacts: list[FootContact]
    event_choice: EventChoice
    loads: dict[str, FootLoad]
    joint_loads: dict[str, JointLoads]
    outputs: Outputs
    cycles: list[Cycle]
    curves: pd.DataFrame | None = field(default=_CycleTable(["side", "cycle", "variable", "component", "percent"],
                                                           built=True), repr=False)
    curves_summary: pd.DataFrame | None = field(default=_CycleTable(["side", "variable", "component", "percent"]))
    parameters: pd.DataFrame | None = field(default=_CycleTable(["side", "cycle", "parameter", "variable", "component"]))
    parameters_summary: pd.DataFrame | None = field(default=_CycleTable(["side", "parameter", "variable", "component"]))
    warnings: list[str] = field(default_factory=list)
    static: Path | str | None = None
    uncertainty: Uncertainty | None = None
    checks: list[Check] = field(default_factory=list)
    normalised: dict[str, dict[str, np.ndarray]] | None = field(default=None, repr=False)
    emg: Emg | None = field(default=None, repr=False)
    fills: MarkerFills | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        """The trial's file stem (shortened past 150 bytes: :func:`gaitid.io.atomic.output_stem`): its
        outputs are named ``<name>_curves.csv``..."""
        from gaitid.io.atomic import output_stem

        return output_stem(self.trial.path.stem) if self.trial.path is not None else "trial"

    @property
    def verdict(self) -> str:
        """The data-quality checks in one line (:func:`gaitid.core.checks.verdict`)."""
        return verdict(self.checks)

    @property
    def events(self) -> list[Event]:
        """The gait events used (see ``event_choice`` for the comparison behind them)."""
        return self.event_choice.events

    @property
    def event_comparison(self) -> pd.DataFrame:
        return self.event_choice.comparison

    @property
    def units(self) -> dict[str, str]:
        """{variable: unit} of the output variables."""
        return self.outputs.units

    @property
    def contacts(self) -> pd.DataFrame:
        """One row per foot contact (:func:`gaitid.contacts.contacts_table`)."""
        return contacts_table(self.foot_contacts)

    @property
    def curves_built(self) -> bool:
        """Whether ``curves`` holds a table (given, or built on first use); False while it would still
        be built from ``normalised`` (an export then writes it from the arrays, never building it)."""
        return self.__dict__.get("_curves") is not None or self.normalised is None

    @functools.cached_property
    def frames(self) -> pd.DataFrame:
        """The per-frame outputs as a tidy long table (built on first use), with the uncertainty
        columns when processed with uncertainty."""
        table = frames_table(self.trial, self.outputs, self.loads, getattr(self, "fills", None))
        if self.uncertainty is None:
            return table
        from gaitid.uncertainty import with_uncertainty

        extra = self.uncertainty.frames.assign(frame=lambda d: d["frame"].astype(table["frame"].dtype))
        return with_uncertainty(table, extra, ["frame", "side", "variable", "component"])

    @property
    def emg_curves(self) -> pd.DataFrame:
        """The EMG envelopes per cycle, long (``<trial>_emg.csv``; :func:`gaitid.emg.emg_table`): side,
        muscle, channel, cycle, percent, value, unit; no rows without EMG."""
        return emg_table(self.emg)

    @property
    def emg_timing(self) -> pd.DataFrame:
        """The EMG on-off timing per cycle (``<trial>_emg_timing.csv``; :mod:`gaitid.emg.timing`)."""
        from gaitid.emg import TIMING_COLUMNS

        return self.emg.timing if self.emg is not None else pd.DataFrame(columns=TIMING_COLUMNS)

    def curve(self, side: str, variable: str) -> np.ndarray:
        """Per-frame values (n_frames, k) of one output variable, in the table's units."""
        values = self.outputs.curves.get(side, {}).get(variable)
        if values is None:
            raise DataError(f"no output '{variable}' for side '{side}'")
        return np.asarray(values, float).reshape(self.trial.n_frames, -1)

    def cycle_curves(self, side: str, variable: str) -> CycleCurves:
        """One variable's time-normalised cycles of one side: ``values`` (n_cycles, 101, k) (k = 3
        components X, Y, Z, or 1 for a scalar such as a power), ``percent`` (101,) the 0-100 % axis and
        ``cycles`` (n_cycles,) their numbers (the ``cycle`` column of the tables, from 1), and
        ``kinetic`` (n_cycles,) bool: a moment or power is a cycle's only when its stance was on a plate,
        so take ``values[kinetic]`` for those, as the report does. In the table's units (``unit``); the
        values of the long table ``curves``' rows of that side and variable; NaN where not defined (e.g.
        a moment once the foot lands beside the plates). A copy: changing it changes nothing in the Result.
        Example: docs/examples/knee_moments_per_cycle.py."""
        from gaitid.cycles.curves import PERCENT

        arrays = (self.normalised or {}).get(side, {})
        if variable not in arrays:
            have = sorted(arrays) or ["none"]
            raise DataError(f"{self.name}: no cycle curves of '{variable}' for side '{side}' "
                            f"(variables of that side: {', '.join(have[:8])}{', ...' if len(have) > 8 else ''})")
        own = [c for c in self.cycles if c.side == side]
        a = np.array(arrays[variable], float)
        return CycleCurves(a.reshape(a.shape[0], a.shape[1], -1), PERCENT.copy(),
                           np.array([c.index for c in own], np.int64), np.array([c.kinetic for c in own], bool),
                           self.units.get(variable, ""))

    # exports live in gaitid.export; these are the documented entry points
    def to_csv(self, outdir: str | os.PathLike) -> list[Path]:
        from gaitid.export import write_tables

        return write_tables(self, outdir, "csv")

    def to_parquet(self, outdir: str | os.PathLike) -> list[Path]:
        from gaitid.export import write_tables

        return write_tables(self, outdir, "parquet")

    def to_excel(self, path: str | os.PathLike) -> Path:
        from gaitid.export import write_excel

        return write_excel(self, path)

    def to_c3d(self, path: str | os.PathLike, suffix: str | None = None, replace_outputs: bool = False) -> Path:
        """A copy of the input C3D with the results as Plug-in Gait stores its outputs (external
        moments in the distal frame, N.mm/kg, whatever the settings; :func:`gaitid.export.result_points`).
        The trial's own outputs are kept: gaitid's then carry ``suffix`` (default ``_gaitid`` when a
        plain name is taken), unless ``replace_outputs``."""
        from gaitid.export import write_results_c3d

        return write_results_c3d(self, path, suffix=suffix, replace_outputs=replace_outputs)

    def to_opensim(self, outdir: str | os.PathLike) -> list[Path]:
        from gaitid.export import write_opensim

        return write_opensim(self, outdir)

    def report(self, outdir: str | os.PathLike, formats: tuple[str, ...] = ("pdf", "html"), normative=None,
               clinical=None, uncertainty: bool | None = None) -> list[Path]:
        """Write the PDF/HTML report (:func:`gaitid.report.write_report`): ``normative`` (norms
        from :func:`gaitid.norms.read_norms`, or a bands CSV) adds the bands, the parameter norms and
        the gait indices (GPS, GVS/MAP, GDI); ``clinical``: gait indices computed elsewhere;
        ``uncertainty``: None/True/False, the toggle of the uncertainty bands and table."""
        from gaitid.report import write_report

        return write_report(self, outdir, formats=formats, normative=normative, clinical=clinical,
                            uncertainty=uncertainty)
