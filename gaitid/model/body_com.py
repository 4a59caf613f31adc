"""The whole body's centre of mass from a model's kinematics (lab frame, m), for the dynamic
consistency check (:mod:`gaitid.dynamics.residual`).

A lower-body model tracks the legs (foot, shank, thigh: their masses and centres of mass from
the model's inertial table) and the pelvis; the rest of the body (head, arms and trunk, with the
pelvis: about two thirds of the mass, whatever the table leaves after the legs) is represented by
one body riding on the pelvis: at the pelvis origin (Plug-in Gait: mid-ASIS; the model's root
segment), else at the mid-point of the hip joint centres. Why there: on the clean real trials it
gave the smallest residual of the choices tried (docs/checks.md): a point fixed 0.3 m up the
pelvis's Z axis doubles the horizontal residual (the pelvis tilts and rotates more than the trunk
moves), and the trunk markers of full-body trials (C7, T10, CLAV, STRN) lowered it on one trial
of three and raised it on another. The arms' swing and the trunk's lean are what it misses.
"""

from __future__ import annotations

import numpy as np

from gaitid.model.assembly import ModelKinematics


def body_centre_of_mass(kinematics: ModelKinematics, mass: float) -> tuple[np.ndarray, str]:
    """(n, 3) m, lab: the centre of mass of a body of ``mass`` kg whose legs are the kinematics'
    chains and whose rest rides on the pelvis (module docstring), NaN where a segment is; and a
    few words saying where the rest was put and its share of the mass."""
    legs = 0.0
    weighted = None
    for side, chain in kinematics.chains.items():
        for body, motion in zip(chain, kinematics.motion[side]):
            m = float(np.mean(body.mass))
            legs += m
            part = m * motion.com_lab
            weighted = part if weighted is None else weighted + part
    if kinematics.root is not None:
        rest, where = kinematics.root.origin_lab, f"the {kinematics.root.name} origin"
    else:
        hips = [kinematics.motion[side][-1].proximal_lab for side in kinematics.chains]
        rest, where = sum(hips) / len(hips), "the mid-point of the hip joint centres"
    rest_mass = mass - legs
    com = (weighted + rest_mass * rest) / mass if weighted is not None else np.array(rest, float)
    return com, f"the legs tracked, the other {100 * rest_mass / mass:.0f} % of the mass at {where}"
