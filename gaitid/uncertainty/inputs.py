"""The scalar input errors of one trial under an error model: the :class:`~gaitid.uncertainty.design.Parameter` list.

- joint centres: per side and chain joint (ankle, knee, hip), the centre's offset along the
  [ap, ml, long] axes of the segment above it, and each palpated landmark's misplacement
  (error model ``joint_centres.<method>``, the method of the model's point);
- body-segment parameters: one mass factor per segment of the table (shared by the two sides:
  one subject), and per chain segment its centre of mass and radius of gyration;
- plates: per foot contact, the centre-of-pressure offset along lab x and y and the force scale;
- markers: noise, handled as columns of noise, not as parameters (see design.py);
- decomposition: on a trial where a foot's load is decomposed from a plate both feet load, the
  force moved from one foot to the other along lab x, y, z (SD a fraction of body weight) and
  each foot's centre-of-pressure offset along lab x and y (none on a trial without decomposed
  frames).
"""

from __future__ import annotations

from gaitid.contacts.foot_loads import FootLoad
from gaitid.core.vocabulary import SIDES
from gaitid.model.bsip import load_table
from gaitid.model.markerset import Model
from gaitid.model.point_methods import method_of
from gaitid.uncertainty.design import Parameter
from gaitid.uncertainty.errormodel import ErrorModel
from gaitid.uncertainty.foot_load_errors import contacts_of
from gaitid.uncertainty.points import joint_geometry, landmark_labels
from gaitid.uncertainty.segments import bsip_groups


def error_parameters(model: Model, labels: set[str], loads: dict[str, FootLoad], errors: ErrorModel,
                     plate_kind: str, bsip: str | None, sources: tuple[str, ...],
                     parameters: dict | None = None, weight: float = 0.0) -> list[Parameter]:
    """Every scalar input error of the trial (see the module docstring); ``labels``: the points
    the trial has (a midpoint's complete group), ``sources``: the error sources to include;
    ``parameters``: the run's per-side model parameters, whose functional centres make a point's
    error the ``functional`` section's, grown by the fit's residual (:func:`centre_sd`); ``weight``:
    the body weight (N) the decomposition's force errors are fractions of."""
    out: list[Parameter] = []
    if "joint_centres" in sources:
        for side in SIDES:
            for joint, point, _ in joint_geometry(model):
                method, residual = used_method(model, point, (parameters or {}).get(side, {}))
                err = errors.joint_centre(method, joint)
                sd = centre_sd(err.centre_sd, residual)
                out += [Parameter("joint_centres", ("centre", side, joint, a), float(sd[a])) for a in range(3)]
                for label in landmark_labels(model, point, side, labels):
                    out += [Parameter("joint_centres", ("landmark", side, joint, label, a), float(err.landmark_sd[a]))
                            for a in range(3)]
    if "bsip" in sources:
        table_name = bsip or model.bsip
        table = load_table(table_name)
        paired, single = bsip_groups(table_name)
        for seg in paired + single or list(table.segments):
            out.append(Parameter("bsip", ("mass", seg), errors.bsip_error(table_name, seg).mass_cv))
        for name in model.chain:
            row = model.segments[name].get("bsip", name)
            e = errors.bsip_error(table_name, row)
            out += [Parameter("bsip", ("com", row), e.com_sd), Parameter("bsip", ("gyration", row), e.gyration_cv)]
    if "plates" in sources:
        plate = errors.plate(plate_kind)
        for side in SIDES:
            for c, _ in enumerate(contacts_of(loads[side])):
                out += [Parameter("plates", ("cop", side, c, a), plate.cop_sd) for a in range(2)]
                out.append(Parameter("plates", ("gain", side, c), plate.force_cv))
    if "decomposition" in sources and any(loads[side].decomposed.any() for side in SIDES):
        d = errors.decomposition
        out += [Parameter("decomposition", ("shared_force", a), float(d.force_sd[a] * weight)) for a in range(3)]
        out += [Parameter("decomposition", ("shared_cop", side, a), d.cop_sd)
                for side in SIDES if loads[side].decomposed.any() for a in range(2)]
    return out


# per-axis SD per mm of a functional fit's residual (docs/functional.md: SCoRE's 3D error 2-3.5 x
# its residual with soft-tissue artefact, i.e. 1.3-2.2 per axis)
RESIDUAL_FACTOR = 1.5


def used_method(model: Model, point: str, side_params: dict) -> tuple[str, float]:
    """(the point method that gave ``point`` in the run, the functional fit's residual in m or 0):
    ``functional`` when the point names a functional centre the run's parameters hold."""
    spec = model.points.get(point, {})
    name = spec.get("centre") if spec.get("method") == "functional" else spec.get("functional")
    if name and name in side_params and not isinstance(side_params[name], (str, type(None))):
        residual = side_params.get(f"{name}_residual")
        return "functional", float(residual) if isinstance(residual, float) else 0.0
    return method_of(model, point), 0.0


def centre_sd(section_sd, residual_m: float):
    """The centre's SD per axis (m): the error model's figure and ``RESIDUAL_FACTOR`` times the
    fit's residual, added in quadrature (the figure alone without a fit)."""
    import numpy as np

    return np.sqrt(np.asarray(section_sd, float) ** 2 + (RESIDUAL_FACTOR * residual_m) ** 2)
