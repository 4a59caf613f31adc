"""The output variables: joint loads, powers, ground reactions and angles per side, Plug-in Gait named.

Output variables are named as Plug-in Gait names them, without the side prefix (``AnkleMoment``,
``KneeAngles``, ``HipPower``...), plus gaitid's own ``AnkleMomentInertial`` / ``Velocity`` /
``Gravity`` / ``External`` and ``GroundReactionForce``. Joint forces and moments are expressed
in the frame ``Settings.frame`` (distal segment by default) under ``Settings.convention``, by
the solver for moments and by :func:`gaitid.dynamics.express.in_frame` for forces, and
reported as Plug-in Gait reports them: X sagittal, Y frontal, Z transverse, with the per-joint,
per-side axes and signs the model file gives (``moment_axes``/``force_axes``, table in
docs/conventions.md); ``convention='external'`` with the distal frame equals Plug-in Gait's
outputs sign by sign, 'internal' is their plain negation. ``frame='lab'`` is not mapped (lab X,
Y, Z). Ground reaction forces are in the lab frame. Joint power is the internal moment times
the joint angular velocity (distal minus proximal segment): positive when generated. Units
follow ``Settings.normalise`` (:func:`kinetics_scale`).

:class:`Outputs` keeps the curves as arrays; :func:`frames_table` gives their tidy long table.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.errors import SettingsError
from gaitid.core.settings import Settings
from gaitid.core.trial import Subject, Trial
from gaitid.core.vocabulary import JOINTS, SIDES, side_key, side_path
from gaitid.dynamics.express import convention_sign, in_frame, joint_rotations
from gaitid.dynamics.types import CONTRIBUTIONS, JointLoads
from gaitid.model.assembly import ModelKinematics
from gaitid.model.markerset import Model

PART_NAMES = {c: c.capitalize() for c in CONTRIBUTIONS}  # 'inertial' -> 'AnkleMomentInertial'
FRAME_COLUMNS = ["frame", "time_s", "side", "variable", "component", "value", "unit", "flag"]
FLAGS = ("", "decomposed", "filled", "decomposed; filled")  # the frames table's ``flag`` (code = decomposed + 2 filled)


def load_flags(loads: dict | None, n: int, fills=None, outputs: Outputs | None = None) -> dict:
    """(n,) codes into :data:`FLAGS`: per side, 1 where the foot's load is its decomposed share of a
    plate both feet load (:attr:`FootLoad.source`); per (side, variable), 2 on the frames where a
    marker the curve is computed from (:attr:`Outputs.reads`) was filled (``fills``:
    :class:`~gaitid.model.gap_fill.MarkerFills`); under '' the frames where any marker was filled,
    for a curve whose markers are not known."""
    out: dict = {"": np.zeros(n, np.int8)}
    if fills is not None and fills.filled:
        out[""] = 2 * fills.any_filled(n).astype(np.int8)
        masks: dict[frozenset, np.ndarray] = {}  # curves read the same markers: one mask per set
        for side, by_name in (outputs.reads if outputs is not None else {}).items():
            for name, labels in by_name.items():
                if labels not in masks:
                    masks[labels] = 2 * fills.frames_of(labels, n).astype(np.int8)
                out[side, name] = masks[labels]
    for side, load in (loads or {}).items():
        src = getattr(load, "source", None)
        out[side] = (np.asarray(src) == "decomposed").astype(np.int8) if src is not None else np.zeros(n, np.int8)
    return out


def flag_codes(flags: dict, side: str, variable: str, n: int) -> np.ndarray:
    """The ``flag`` codes (n,) of one curve's rows: 'filled' on the frames where a marker it is
    computed from was filled, and for a kinetic variable (one that uses the foot's load) the side's
    'decomposed' frames."""
    filled = flags.get((side, variable), flags.get("", np.zeros(n, np.int8)))
    if variable.endswith("Angles") or side not in flags:
        return filled
    return flags[side] + filled


_AXIS = {"x": 0, "y": 1, "z": 2}


@dataclass
class Outputs:
    """Per-frame output curves ``{side: {variable: (n,) or (n, 3)}}`` and ``{variable: unit}``;
    ``reads`` ``{side: {variable: labels}}``: the trial's markers each curve is computed from (a
    joint's angles: its two segments; its kinetics: the bodies below it and its proximal segment;
    the ground reaction: none), empty when not known (:func:`curve_reads`)."""

    curves: dict[str, dict[str, np.ndarray]]
    units: dict[str, str]
    reads: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)


def kinetics_scale(settings: Settings, subject: Subject) -> dict[str, tuple[float, str]]:
    """Divisor and unit per quantity ('force', 'moment', 'power') for ``Settings.normalise``:
    'mass' N/kg, N.m/kg, W/kg; 'bw-height' BW, BW.H, BW.sqrt(g.H) (Hof 1996); 'none' N, N.m, W."""
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


def output_layout(model: Model, joint: str, quantity: str, frame: str, side: str) -> tuple[list[int], np.ndarray] | None:
    """Which frame components become the reported X, Y, Z and their signs.

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
    axes = spec.get(key, {}).get(side_key(side)) if isinstance(spec.get(key), dict) else None
    if axes is None:
        return None
    if not (isinstance(axes, list) and len(axes) == 3 and sorted(a.lstrip("-") for a in axes) == ["x", "y", "z"]):
        raise SettingsError(f"model '{model.name}' joints.{joint.lower()}.{key}.{side_key(side)}: {axes!r} must "
                            "list the three axes with optional '-', e.g. ['-y', 'z', '-x']")
    return [_AXIS[a.lstrip("-")] for a in axes], np.array([-1.0 if a.startswith("-") else 1.0 for a in axes])


def reported(v: np.ndarray, layout) -> np.ndarray:
    """Frame components (n, 3) -> reported X, Y, Z (the model's order and signs)."""
    if layout is None:
        return v
    order, signs = layout
    return v[:, order] * signs


def output_curves(kinematics: ModelKinematics, joint_loads: dict[str, JointLoads], loads: dict[str, FootLoad],
                  model: Model, settings: Settings, subject: Subject) -> Outputs:
    """The output variables of every side (the output stage; see the module docstring)."""
    scale = kinetics_scale(settings, subject)
    root_R = kinematics.root.R if kinematics.root is not None else None
    curves: dict[str, dict[str, np.ndarray]] = {s: {} for s in SIDES}
    units: dict[str, str] = {}
    for side in SIDES:
        jl, out = joint_loads[side], curves[side]
        rotations = joint_rotations(kinematics.motion[side], settings.frame, root_R)
        for j, joint in enumerate(JOINTS[: len(jl.joints)]):
            (f_div, f_unit), (m_div, m_unit), (p_div, p_unit) = scale["force"], scale["moment"], scale["power"]
            f_lay = output_layout(model, joint, "force", settings.frame, side)
            m_lay = output_layout(model, joint, "moment", settings.frame, side)
            out[f"{joint}Force"] = reported(in_frame(jl.force_lab[j], rotations[j]), f_lay) / f_div
            out[f"{joint}Moment"] = reported(jl.moment[j], m_lay) / m_div
            for part in CONTRIBUTIONS if jl.moment_parts else ():  # solved without contributions: none
                out[f"{joint}Moment{PART_NAMES[part]}"] = reported(jl.moment_parts[part][j], m_lay) / m_div
                units[f"{joint}Moment{PART_NAMES[part]}"] = m_unit
            w = kinematics.joint_omega_lab.get(side_path(side, joint.lower()))
            if w is not None:  # internal moment . (omega_distal - omega_proximal): + generation
                internal = convention_sign(jl.convention) * jl.moment_lab[j]
                out[f"{joint}Power"] = np.einsum("ni,ni->n", internal, w) / p_div
                units[f"{joint}Power"] = p_unit
            units[f"{joint}Force"], units[f"{joint}Moment"] = f_unit, m_unit
        out["GroundReactionForce"] = loads[side].force_lab / scale["force"][0]
        units["GroundReactionForce"] = scale["force"][1]
    prefix = {model.sides[s]: s for s in SIDES}
    for label, values in kinematics.angles_deg.items():
        side = prefix.get(label[:1])
        if side is not None:
            curves[side][label[1:]] = values
            units[label[1:]] = "deg"
    return Outputs(curves, units, curve_reads(curves, kinematics, model))


def curve_reads(curves: dict, kinematics: ModelKinematics, model: Model) -> dict[str, dict[str, frozenset[str]]]:
    """:attr:`Outputs.reads` from :attr:`ModelKinematics.reads`: a joint's angles read its two
    segments' markers; its forces, moments (and their parts) and power the markers of every body of
    the chain up to it (the recursive solution starts at the foot) and of its proximal segment
    (power, proximal frame); the ground reaction none. A curve the kinematics do not say is left out
    (any marker then marks it)."""
    reads = kinematics.reads
    if not reads:
        return {}
    prefix = {s: model.sides[s] for s in SIDES}
    out: dict[str, dict[str, frozenset[str]]] = {}
    for side, by_name in curves.items():
        below: frozenset[str] = frozenset()
        mine: dict[str, frozenset[str]] = {"GroundReactionForce": frozenset()}
        bodies = [side_path(side, b) for b in model.chain] + ([model.root] if model.root else [])
        for j, joint in enumerate(JOINTS[: len(model.chain)]):
            below = below | reads.get(bodies[j], frozenset())
            used = below | (reads.get(bodies[j + 1], frozenset()) if j + 1 < len(bodies) else frozenset())
            mine.update({name: used for name in by_name if name.startswith(joint) and not name.endswith("Angles")})
        for name in by_name:
            label = prefix[side] + name
            if label in reads:
                mine[name] = reads[label]
        out[side] = {name: labels for name, labels in mine.items() if name in by_name}
    return out


def frames_table(trial: Trial, outputs: Outputs, loads: dict[str, FootLoad] | None = None, fills=None) -> pd.DataFrame:
    """Per-frame curves as the tidy long table ``frame, time_s, side, variable, component, value,
    unit, flag`` (``component`` 'X', 'Y', 'Z', or '' for a scalar; ``flag`` 'decomposed' on a kinetic
    row whose foot load is decomposed, 'filled' on a frame with a filled marker gap, :func:`load_flags`,
    else ''; text columns categorical). Built
    in one piece (one column block per curve component) rather than one DataFrame per curve."""
    n = trial.n_frames
    flags = load_flags(loads, n, fills, outputs)
    blocks, keys, codes = [], [], []
    for side, by_name in outputs.curves.items():
        for name, arr in by_name.items():
            a = np.asarray(arr, float).reshape(n, -1)
            comps = ("X", "Y", "Z")[: a.shape[1]] if a.shape[1] > 1 else ("",)
            blocks.append(a)
            keys += [(side, name, comp, outputs.units.get(name, "")) for comp in comps]
            codes += [flag_codes(flags, side, name, n)] * len(comps)
    if not blocks:
        table = pd.DataFrame(columns=FRAME_COLUMNS)
    else:
        values = np.hstack(blocks)  # (n, k): one column per (side, variable, component)
        k = values.shape[1]

        def category(labels):  # one byte a row (categorical), not one string per row
            names = list(dict.fromkeys(labels))
            return pd.Categorical.from_codes(np.repeat([names.index(x) for x in labels], n), categories=names)

        side, variable, component, unit = zip(*keys)
        table = pd.DataFrame({
            "frame": np.tile(trial.frames, k), "time_s": np.tile(trial.time, k),
            "side": category(side), "variable": category(variable),
            "component": category(component), "value": values.T.reshape(-1), "unit": category(unit),
            "flag": pd.Categorical.from_codes(np.concatenate(codes), categories=list(FLAGS)),
        })
    table.attrs["units"] = dict(outputs.units)
    return table[FRAME_COLUMNS]


PLUGIN_GAIT_FORM = "external moments and forces, distal segment's frame, per kg of body mass"


def _unreported(v: np.ndarray, layout) -> np.ndarray:
    """Reported X, Y, Z (n, 3) -> the frame's own components (the inverse of :func:`reported`)."""
    if layout is None:
        return v
    order, signs = layout
    out = np.empty_like(v)
    out[:, order] = v * signs
    return out


def _distal_external(v: np.ndarray, joint: str, quantity: str, side: str, j: int, kinematics: ModelKinematics,
                     model: Model, settings: Settings) -> np.ndarray | None:
    """A reported joint force or moment (n, 3) of ``settings``' frame and convention, in the distal
    segment's frame under the external convention with the model's distal layout (None: the model
    gives no distal layout for it)."""
    to = output_layout(model, joint, quantity, "distal", side)
    if to is None:
        return None
    sign = -convention_sign(settings.convention)  # the settings' convention -> external
    if settings.frame == "distal":  # the same frame and layout: the sign only
        return sign * v
    root_R = kinematics.root.R if kinematics.root is not None else None
    R_from = joint_rotations(kinematics.motion[side], settings.frame, root_R)[j]
    R_to = joint_rotations(kinematics.motion[side], "distal")[j]
    v = _unreported(v, output_layout(model, joint, quantity, settings.frame, side))
    lab = v if R_from is None else np.einsum("nij,nj->ni", R_from, v)
    return sign * reported(in_frame(lab, R_to), to)


def plugin_gait_curves(outputs: Outputs, kinematics: ModelKinematics, model: Model, settings: Settings,
                       subject: Subject) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str], dict[str, str]]:
    """The output curves as Plug-in Gait stores them, from curves of any ``Settings.frame``,
    ``convention`` and ``normalise``: joint forces and moments (and their contributions) in the
    distal segment's frame under the external convention with the model's distal layout (for the
    Plug-in Gait models: Plug-in Gait's own, docs/conventions.md), kinetics per kg of body mass
    (N/kg, N.m/kg, W/kg: powers and ground reactions as they are, only rescaled), angles in
    degrees. Returns ``({side: {variable: values}}, {variable: unit}, {variable: reason})``: a
    variable that cannot be given so (no body mass, no distal layout) is left out with the reason."""
    scale = kinetics_scale(settings, subject)
    quantity = {unit: (q, div) for q, (div, unit) in scale.items()}  # the unit says the quantity
    mass = subject.mass
    known = mass is not None and math.isfinite(mass) and mass > 0
    per_kg = {"force": "N/kg", "moment": "N.m/kg", "power": "W/kg"}
    curves: dict[str, dict[str, np.ndarray]] = {s: {} for s in outputs.curves}
    units: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for side, by_name in outputs.curves.items():
        for name, values in by_name.items():
            unit = outputs.units.get(name, "")
            if unit == "deg":
                curves[side][name], units[name] = values, unit
                continue
            if unit not in quantity:
                continue
            q, div = quantity[unit]
            if not known:
                skipped[name] = "the body mass is unknown (Plug-in Gait stores kinetics per kg)"
                continue
            v = np.asarray(values, float) * (1.0 if settings.normalise == "mass" else div / mass)
            joint = next((jn for jn in JOINTS if name.startswith(jn)), None)
            if joint is not None and q in ("force", "moment"):
                v = _distal_external(v, joint, q, side, JOINTS.index(joint), kinematics, model, settings)
                if v is None:
                    skipped[name] = (f"model '{model.name}' gives no distal-frame layout for the "
                                     f"{joint.lower()} {q} ({q}_axes)")
                    continue
            curves[side][name], units[name] = v, per_kg[q]
    return curves, units, skipped
