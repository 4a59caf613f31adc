"""The whole job for one trial: read, model, events, plates, solve, cycles.

:func:`process` joins the stages, each a plain function of the previous one's value:

1. :func:`gaitid.read_c3d` (or the OpenSim readers) -> :class:`~gaitid.trial.Trial`;
2. :func:`gaitid.model.build.build_segments` -> foot/shank/thigh motion per side;
3. :func:`gaitid.events.trial_events` -> gait events (the file's, checked against
   plate and kinematic detection), :func:`gaitid.plates.assign_contacts` -> which
   foot is on which plate, :func:`gaitid.plates.foot_loads` -> loads per foot;
4. force-plate wrenches filtered like the markers (``Settings.force_cutoff``);
5. :func:`gaitid.dynamics.inverse_dynamics` per leg -> joint forces and moments and
   their inertial / velocity / gravity / external parts; joint powers;
6. :mod:`gaitid.cycles` -> cycles, normalised curves, discrete parameters, mean +- SD.

Output variables are named as Plug-in Gait names them, without the side prefix
(``AnkleMoment``, ``KneeAngles``, ``HipPower``...), plus gaitid's own
``AnkleMomentInertial``/``Velocity``/``Gravity``/``External`` and ``GroundReactionForce``.
Joint forces and moments are expressed in the frame ``Settings.frame`` (distal segment by
default) and reported as Plug-in Gait reports them: X sagittal, Y frontal, Z transverse, with
the per-joint, per-side axes and signs the model file gives (``moment_axes``/``force_axes``,
table in docs/conventions.md); ``convention='external'`` with the distal frame equals Plug-in
Gait's outputs sign by sign, 'internal' is their plain negation. ``frame='lab'`` is not mapped
(lab X, Y, Z). Ground reaction forces are in the lab frame. Units follow ``Settings.normalise``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid import kinematics as kin
from gaitid.cycles import (
    Cycle,
    cycle_curves,
    gait_cycles,
    kinetic_parameters,
    spatiotemporal_parameters,
    summarise,
)
from gaitid.dynamics import inverse_dynamics
from gaitid.dynamics.types import CONTRIBUTIONS, ExternalLoad, JointLoads
from gaitid.errors import DataError, GaitIDError, SettingsError
from gaitid.events import GaitMarkers, trial_events
from gaitid.model.build import ModelKinematics, build_segments
from gaitid.model.markerset import load_model
from gaitid.plates import FootLoad, assign_contacts, contacts_table, foot_loads
from gaitid.settings import Settings
from gaitid.trial import Event, Subject, Trial

SIDES = ("Left", "Right")
JOINTS = ("Ankle", "Knee", "Hip")  # joints of the foot, shank, thigh chain, distal to proximal
PART_NAMES = {c: c.capitalize() for c in CONTRIBUTIONS}  # 'inertial' -> 'AnkleMomentInertial'
FRAME_COLUMNS = ["frame", "time_s", "side", "variable", "component", "value", "unit"]


@dataclass
class Result:
    """Everything :func:`process` produced for one trial.

    ``frames``: per-frame outputs, tidy long table with columns ``frame`` (Vicon frame
    number), ``time_s``, ``side`` ('Left'/'Right'), ``variable`` (``AnkleMoment``...),
    ``component`` ('X', 'Y', 'Z'; '' for scalars), ``value``, ``unit``.
    ``curves``: time-normalised cycles (see :func:`gaitid.cycles.cycle_curves`);
    ``curves_summary``: their mean, SD and n per side and percent. ``parameters`` /
    ``parameters_summary``: discrete parameters per cycle and their mean/SD.
    ``events`` used, ``event_comparison`` (file vs detected), ``contacts`` (plate
    assignment with reasons), ``cycles``; ``kinematics`` and ``joint_loads`` (SI,
    unnormalised, per side) for scripts that want the raw arrays.
    """

    trial: Trial
    settings: Settings
    frames: pd.DataFrame
    events: list[Event]
    event_comparison: pd.DataFrame
    contacts: pd.DataFrame
    cycles: list[Cycle]
    curves: pd.DataFrame
    curves_summary: pd.DataFrame | None
    parameters: pd.DataFrame
    parameters_summary: pd.DataFrame | None
    kinematics: ModelKinematics
    joint_loads: dict[str, JointLoads]
    loads: dict[str, FootLoad]
    units: dict[str, str]
    warnings: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.trial.path.stem if self.trial.path is not None else "trial"

    def curve(self, side: str, variable: str) -> np.ndarray:
        """Per-frame values (n_frames, k) of one output variable, in the table's units."""
        f = self.frames
        sel = f[(f["side"] == side) & (f["variable"] == variable)]
        if sel.empty:
            raise DataError(f"no output '{variable}' for side '{side}'")
        wide = sel.pivot(index="frame", columns="component", values="value")
        return wide.reindex(self.trial.frames).to_numpy()

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

    def to_c3d(self, path: str | os.PathLike, suffix: str = "") -> Path:
        from gaitid.export import write_results_c3d

        return write_results_c3d(self, path, suffix=suffix)

    def to_opensim(self, outdir: str | os.PathLike) -> list[Path]:
        from gaitid.export import write_opensim

        return write_opensim(self, outdir)

    def report(self, outdir: str | os.PathLike, formats: tuple[str, ...] = ("pdf", "html"), normative=None) -> list[Path]:
        from gaitid.report import write_report

        return write_report(self, outdir, formats=formats, normative=normative)


# --------------------------------------------------------------------------- stages


def load_trial(source: str | os.PathLike | Trial, *, cop_threshold: float = 10.0) -> Trial:
    """A Trial from a Trial, a C3D path, or an OpenSim ``.trc`` (GRF ``<name>_grf.mot`` beside it)."""
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


def _subject(trial: Trial, subject: Subject | dict | float | str | None,
             plates: dict | None = None) -> tuple[Trial, dict | None]:
    """Apply a Subject, a mass (kg), ``'plates'`` (mass estimated from the force plates,
    with a warning) or a dict (``mass``/``height`` in kg/m plus model parameter overrides)
    to the trial; returns the trial and the model overrides."""
    if subject is None:
        return trial, None
    if isinstance(subject, str) and subject == "plates":
        from gaitid.bodymass import estimate_mass

        est = estimate_mass(trial, plates=plates or None)
        trial.subject.mass = est.mass
        trial.warnings.append(f"body mass {est.mass:.1f} kg estimated from the force plates ({est.method}, "
                              f"{est.window_s[0]:.2f}-{est.window_s[1]:.2f} s); give the measured mass when known")
        return trial, None
    if isinstance(subject, Subject):
        trial.subject = subject
        return trial, None
    if isinstance(subject, (int, float)):
        subject = {"mass": float(subject)}
    if not isinstance(subject, dict):
        raise SettingsError(f"subject must be a Subject, a mass in kg or a dict, not {type(subject).__name__}")
    rest = dict(subject)
    for key in ("mass", "height", "name"):
        if key in rest:
            value = rest.pop(key)
            if key != "name" and not (isinstance(value, (int, float)) and value > 0 and math.isfinite(value)):
                raise SettingsError(f"subject {key}={value!r} must be a positive number (kg, m)")
            setattr(trial.subject, key, value)
    return trial, (rest or None)


def filtered_load(load: FootLoad, rate: float, cutoff_hz: float | None, order: int) -> ExternalLoad:
    """The foot's external load for the solver, low-pass filtered (zero lag) when asked.

    The wrench is moved to a fixed point O (the mean centre of pressure, on the plate
    surface): force F and moment M_O = (COP - O) x F + T_free, both continuous through
    contact (zero in swing) and so safe to filter; the solver receives F at O plus the
    couple M_O, which is exactly the plate's wrench. NaN (unknown load) stays NaN.
    """
    F, cop, T = load.force_lab, load.cop_lab, load.free_moment_lab
    on = load.state == "plate"
    O = np.nanmean(cop[on], axis=0) if on.any() else np.zeros(3)
    M_O = np.cross(cop - O, F) + T
    if cutoff_hz is not None:
        F = kin.butter_lowpass(F, rate, cutoff_hz, order)
        M_O = kin.butter_lowpass(M_O, rate, cutoff_hz, order)
    point = np.where(np.isnan(F).any(axis=1, keepdims=True), np.nan, np.broadcast_to(O, F.shape))
    return ExternalLoad(0, F, point, M_O)


def _events(trial: Trial, settings: Settings, markers: GaitMarkers):
    return trial_events(trial, prefer=settings.events, markers=markers, threshold=settings.contact_threshold_n,
                        min_duration=settings.min_contact_s)


def _norm(settings: Settings, subject: Subject) -> dict[str, tuple[float, str]]:
    """Divisor and unit per quantity for the chosen normalisation."""
    g = settings.gravity_m_s2
    if settings.normalise == "none":
        return {"force": (1.0, "N"), "moment": (1.0, "N.m"), "power": (1.0, "W")}
    m = subject.mass
    if settings.normalise == "mass":
        return {"force": (m, "N/kg"), "moment": (m, "N.m/kg"), "power": (m, "W/kg")}
    h = subject.height
    if h is None or not h > 0:
        raise SettingsError("normalise='bw-height' needs the subject's height (m)")
    return {"force": (m * g, "BW"), "moment": (m * g * h, "BW.H"), "power": (m * g * math.sqrt(g * h), "BW.sqrt(g.H)")}


def _frame_R(chain, j: int, frame: str, root_R) -> np.ndarray | None:
    """Rotation (segment -> lab) of the frame joint j's vectors are expressed in."""
    if frame == "lab":
        return None
    if frame == "distal":
        return chain[j].R
    return chain[j + 1].R if j + 1 < len(chain) else root_R


def _to_frame(v_lab: np.ndarray, R: np.ndarray | None) -> np.ndarray:
    return v_lab if R is None else np.einsum("nji,nj->ni", R, v_lab)


_AXIS = {"x": 0, "y": 1, "z": 2}


def output_layout(model, joint: str, quantity: str, frame: str, side: str) -> tuple[list[int], np.ndarray] | None:
    """Which frame components become the reported X, Y, Z and their signs (external description).

    Read from the model's ``[joints.<joint>]`` ``moment_axes`` / ``force_axes`` (distal frame)
    or ``moment_axes_proximal`` / ``force_axes_proximal``: per side, three signed axes
    (``["-y", "z", "-x"]``: X = -y component, Y = +z, Z = -x). None for ``frame='lab'``
    (lab X, Y, Z unmapped) or when the model gives no layout (segment axes as they are).
    See docs/conventions.md.
    """
    if frame == "lab":
        return None
    spec = model.joints.get(joint.lower(), {})
    key = f"{quantity}_axes" + ("_proximal" if frame == "proximal" else "")
    axes = spec.get(key, {}).get(side.lower()) if isinstance(spec.get(key), dict) else None
    if axes is None:
        return None
    if not (isinstance(axes, list) and len(axes) == 3 and sorted(a.lstrip("-") for a in axes) == ["x", "y", "z"]):
        raise SettingsError(f"model '{model.name}' joints.{joint.lower()}.{key}.{side.lower()}: {axes!r} must list "
                            "the three axes with optional '-', e.g. ['-y', 'z', '-x']")
    return [_AXIS[a.lstrip("-")] for a in axes], np.array([-1.0 if a.startswith("-") else 1.0 for a in axes])


def _reported(v: np.ndarray, layout, convention: str) -> np.ndarray:
    """Frame components -> reported X, Y, Z in the chosen convention (``v`` is the external
    description's vector in the output frame; internal = plain negation)."""
    sign = 1.0 if convention == "external" else -1.0
    if layout is None:
        return sign * v
    order, signs = layout
    return sign * v[:, order] * signs


def process(
    source: str | os.PathLike | Trial,
    model: str | None = None,
    subject: Subject | dict | float | None = None,
    static: str | os.PathLike | Trial | None = None,
    settings: Settings | None = None,
    segment_parameters: dict | None = None,
    **changes,
) -> Result:
    """Process one trial end to end and return a :class:`Result`.

    ``source``: a C3D (or OpenSim ``.trc``) path, or a Trial. ``model``: model name or
    file (default ``Settings.model``, 'plugin-gait'). ``subject``: body mass in kg,
    ``'plates'`` (estimated from quiet standing or a step on the plates, with a warning), a
    :class:`Subject`, or a dict with ``mass``/``height`` and model parameter overrides;
    default: the file's PROCESSING values. ``static``: the static calibration trial.
    ``settings`` and keyword ``changes``: see :class:`gaitid.settings.Settings`.
    ``segment_parameters``: per-subject inertial parameters replacing the table's, e.g.
    ``{'thigh': {'mass': 7.2, 'com_from_proximal': 0.433, 'inertia': [0.139, 0.139, 0.030]}}``
    (kg, fraction of the segment length, kg.m^2 about the segment axes; keys 'left.thigh'
    for one side only).
    """
    settings = settings or Settings()
    if model is not None:
        changes["model"] = model
    if changes:
        settings = settings.replace(**changes)
    trial = load_trial(source, cop_threshold=settings.cop_threshold_n)
    trial, overrides = _subject(trial, subject, settings.plates)
    if trial.subject.mass is None or not trial.subject.mass > 0:
        raise DataError("body mass unknown: the file stores none; give it (--mass KG, or subject=KG), "
                        "or estimate it from the force plates (--mass plates, subject='plates')", trial.path)
    static_trial = load_trial(static, cop_threshold=settings.cop_threshold_n) if static is not None else None
    warnings = list(trial.warnings)

    kinematics = build_segments(trial, static=static_trial, subject=overrides or trial.subject, settings=settings,
                                segment_overrides=segment_parameters)
    warnings += kinematics.warnings
    markers = GaitMarkers.for_trial(trial)
    choice = _events(trial, settings, markers)
    warnings += choice.notes
    if choice.disagreements:
        warnings.append(f"{choice.disagreements} detected event(s) disagree with the file's (more than 1 frame for "
                        f"plate events, 3 for kinematic ones; see Result.event_comparison); using the "
                        f"{'file' if settings.events == 'file' else settings.events} events")
    contacts = assign_contacts(trial, markers, overrides=settings.plates, threshold=settings.contact_threshold_n,
                               min_duration=settings.min_contact_s)
    loads = foot_loads(trial, contacts, choice.events)
    norm = _norm(settings, trial.subject)
    rate = trial.point_rate
    gravity = (0.0, 0.0, -settings.gravity_m_s2)
    root_R = kinematics.root.R if kinematics.root is not None else None
    model_def = load_model(settings.model)

    curves: dict[str, dict[str, np.ndarray]] = {s: {} for s in SIDES}
    units: dict[str, str] = {}
    joint_loads: dict[str, JointLoads] = {}
    for side in SIDES:
        chain = kinematics.chains[side.lower()]
        load = filtered_load(loads[side], rate, settings.force_cutoff, settings.filter_order)
        common = dict(gravity_lab=gravity, proximal_R=root_R)
        jl = inverse_dynamics(chain, [load], frame="lab", convention="internal", **common)
        joint_loads[side] = jl
        for j, joint in enumerate(JOINTS[: len(chain)]):
            R = _frame_R(chain, j, settings.frame, root_R)
            f_div, f_unit = norm["force"]
            m_div, m_unit = norm["moment"]
            p_div, p_unit = norm["power"]
            f_lay = output_layout(model_def, joint, "force", settings.frame, side)
            m_lay = output_layout(model_def, joint, "moment", settings.frame, side)
            conv = settings.convention

            def out(v_internal_lab, layout):  # solver gives internal, lab; -v is the external description
                return _reported(-_to_frame(v_internal_lab, R), layout, conv)

            curves[side][f"{joint}Force"] = out(jl.force_lab[j], f_lay) / f_div
            curves[side][f"{joint}Moment"] = out(jl.moment[j], m_lay) / m_div
            for part in CONTRIBUTIONS:
                curves[side][f"{joint}Moment{PART_NAMES[part]}"] = out(jl.moment_parts[part][j], m_lay) / m_div
                units[f"{joint}Moment{PART_NAMES[part]}"] = m_unit
            w = kinematics.joint_omega_lab.get(f"{side.lower()}.{joint.lower()}")
            if w is not None:  # internal moment . (omega_distal - omega_proximal): + generation
                curves[side][f"{joint}Power"] = np.einsum("ni,ni->n", jl.moment[j], w) / p_div
                units[f"{joint}Power"] = p_unit
            units[f"{joint}Force"], units[f"{joint}Moment"] = f_unit, m_unit
        curves[side]["GroundReactionForce"] = loads[side].force_lab / norm["force"][0]
        units["GroundReactionForce"] = norm["force"][1]
    prefix = {"L": "Left", "R": "Right"}
    for label, values in kinematics.angles_deg.items():
        side = prefix.get(label[:1])
        if side is not None:
            curves[side][label[1:]] = values
            units[label[1:]] = "deg"

    frames = frames_table(trial, curves, units)
    cycles = gait_cycles(choice.events, contacts)
    if not cycles:
        warnings.append("no complete gait cycle (foot strike, foot off, foot strike of one foot) in the events")
    time = trial.time
    curve_table = cycle_curves(curves, time, cycles, units)
    params = pd.concat([spatiotemporal_parameters(trial, cycles, markers),
                        kinetic_parameters(curves, time, cycles, units)], ignore_index=True)
    return Result(
        trial=trial, settings=settings, frames=frames, events=choice.events, event_comparison=choice.comparison,
        contacts=contacts_table(contacts), cycles=cycles, curves=curve_table,
        curves_summary=summarise(curve_table) if not curve_table.empty else None, parameters=params,
        parameters_summary=summarise(params) if not params.empty else None, kinematics=kinematics,
        joint_loads=joint_loads, loads=loads, units=units, warnings=warnings,
    )


def frames_table(trial: Trial, curves: dict[str, dict[str, np.ndarray]], units: dict[str, str]) -> pd.DataFrame:
    """Per-frame curves {side: {variable: (n,) or (n, 3)}} as the tidy long table of :class:`Result`.

    Built in one piece (one column block per curve component) rather than one DataFrame per curve."""
    n = trial.n_frames
    blocks, keys = [], []
    for side, by_name in curves.items():
        for name, arr in by_name.items():
            a = np.asarray(arr, float).reshape(n, -1)
            comps = ("X", "Y", "Z")[: a.shape[1]] if a.shape[1] > 1 else ("",)
            blocks.append(a)
            keys += [(side, name, comp, units.get(name, "")) for comp in comps]
    if not blocks:
        table = pd.DataFrame(columns=FRAME_COLUMNS)
    else:
        values = np.hstack(blocks)  # (n, k): one column per (side, variable, component)
        k = values.shape[1]
        side, variable, component, unit = (np.array(col, dtype=object) for col in zip(*keys))
        table = pd.DataFrame({
            "frame": np.tile(trial.frames, k), "time_s": np.tile(trial.time, k),
            "side": np.repeat(side, n), "variable": np.repeat(variable, n),
            "component": np.repeat(component, n), "value": values.T.reshape(-1), "unit": np.repeat(unit, n),
        })
    table.attrs["units"] = dict(units)
    return table[FRAME_COLUMNS]


def process_safely(source, **kwargs) -> Result | GaitIDError:
    """:func:`process`, returning the GaitIDError instead of raising it (for batch runs)."""
    try:
        return process(source, **kwargs)
    except GaitIDError as exc:
        return exc
