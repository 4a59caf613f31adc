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

For the whole body's angular momentum (:func:`body_parts`) the rest of the body is a rigid body
riding on the pelvis: at the same point, turning with the pelvis frame, with the inertia of
Dempster's head-arms-trunk (Winter 2009, Table 4.1: radius of gyration 0.496 of its greater
trochanter to glenohumeral length, which is 0.288 of the height while hip to ankle is 0.491 of it
(Winter's Figure 4.1): a radius of 0.291 x the legs' hip-to-ankle length, measured on the trial)
about the pelvis's two axes nearest the horizontal, and none about its long axis (as Plug-in Gait
gives the legs none about theirs). Without a pelvis segment it is a point mass at the mid-point of
the hips.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.rotation import norm
from gaitid.core.signal import column_nanmedian, second_derivative
from gaitid.dynamics.types import Body, SegmentMotion
from gaitid.model.assembly import ModelKinematics

HAT_GYRATION_PER_LEG = 0.496 * 0.288 / 0.491  # the rest's radius of gyration / hip-to-ankle length (docstring)


def body_centre_of_mass(kinematics: ModelKinematics, mass: float) -> tuple[np.ndarray, str]:
    """(n, 3) m, lab: the centre of mass of a body of ``mass`` kg whose legs are the kinematics'
    chains and whose rest rides on the pelvis (module docstring), NaN where a segment is; and a
    few words saying where the rest was put and its share of the mass."""
    legs = 0.0
    weighted = None
    for side, chain in kinematics.chains.items():
        for body, motion in zip(chain, kinematics.motion[side]):
            m = _mass(body)
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


def body_parts(kinematics: ModelKinematics, mass: float) -> tuple[list[tuple[Body, SegmentMotion]], str]:
    """The rigid parts of a body of ``mass`` kg (module docstring): each leg segment of the
    kinematics' chains with its motion, and the rest of the body riding on the pelvis (its
    :class:`SegmentMotion` with the pelvis's frame, angular velocity and acceleration; its centre
    of mass and acceleration those of :func:`body_centre_of_mass`'s rest); and a few words saying so."""
    parts = [(body, motion) for side, chain in kinematics.chains.items()
             for body, motion in zip(chain, kinematics.motion[side])]
    rest_mass = mass - sum(_mass(body) for body, _ in parts)
    leg = _hip_to_ankle(kinematics)
    root = kinematics.root
    if root is not None:
        origin = root.origin_lab
        long_axis = int(np.argmax(column_nanmedian(np.abs(root.R[::max(1, root.R.shape[0] // 20), 2, :]))))  # nearest Z
        radius2 = (HAT_GYRATION_PER_LEG * leg) ** 2 if np.isfinite(leg) else 0.0
        inertia = np.diag([0.0 if j == long_axis else rest_mass * radius2 for j in range(3)])
        R, omega, alpha = root.R, root.omega_seg, root.alpha_seg
        how = (f"the legs, and the other {100 * rest_mass / mass:.0f} % of the mass riding on the {root.name} "
               f"(radius of gyration {100 * np.sqrt(radius2):.0f} cm)")
    else:
        hips = [kinematics.motion[side][-1].proximal_lab for side in kinematics.chains]
        origin = sum(hips) / len(hips)
        n = origin.shape[0]
        inertia, R, omega, alpha = np.zeros((3, 3)), np.broadcast_to(np.eye(3), (n, 3, 3)), np.zeros((n, 3)), \
            np.zeros((n, 3))
        how = f"the legs, and the other {100 * rest_mass / mass:.0f} % of the mass at the mid-point of the hips"
    rest = SegmentMotion(R=R, com_lab=origin, com_acc_lab=second_derivative(origin, kinematics.rate),
                         omega_seg=omega, alpha_seg=alpha, proximal_lab=origin)
    return parts + [(Body("rest of the body", rest_mass, inertia), rest)], how


def _mass(body: Body) -> float:
    """The body's mass (kg); of a mass per frame (perturbed chains), their mean."""
    # np.isscalar, not Body.per_frame: its np.ndim costs more than the rest (np.mean of a 0-d array: itself)
    return float(body.mass) if np.isscalar(body.mass) else float(np.mean(body.mass))


def _hip_to_ankle(kinematics: ModelKinematics) -> float:
    """The legs' hip-to-ankle length (m): per side, the sum of the median distances between the chain's
    successive proximal joints (ankle, knee, hip) over 100 frames of the trial; the mean of the sides
    (NaN when never seen)."""
    sides = list(kinematics.chains)
    if not sides:
        return np.nan
    step = max(1, kinematics.motion[sides[0]][0].proximal_lab.shape[0] // 100)  # 100 frames tell a median
    joints = np.array([[m.proximal_lab[::step] for m in kinematics.motion[side]] for side in sides])
    lengths = norm(joints[:, 1:] - joints[:, :-1])  # (side, joint, frames): ankle to knee, knee to hip
    per_side = column_nanmedian(lengths.reshape(-1, lengths.shape[-1]).T).reshape(len(sides), -1).sum(axis=1)
    return float(np.mean(per_side))
