"""Joint angles and joint angular velocities from the model's ``[joints]`` definitions.

Each joint's angles are a Cardan sequence of the distal segment in the proximal one
(:func:`gaitid.core.rotation.cardan_angles`), reordered and signed per side so they read as Plug-in
Gait's (flexion +, adduction +, internal rotation +); :func:`apply_angle_axes` presents a segment
frame with the axes the angles use.
"""

from __future__ import annotations

import numpy as np

from gaitid.core import rotation
from gaitid.core.vocabulary import SIDES, side_key, side_path
from gaitid.model import frames as fr
from gaitid.model.markerset import Model


def joint_outputs(m: Model, evaluators: dict, frames_out: dict, omegas_lab: dict) -> tuple[dict, dict]:
    """Joint angles (deg, by label such as 'LKneeAngles') and joint angular velocities (rad/s,
    lab, distal minus proximal, by 'left.knee'...) of the model's ``[joints]``.

    ``evaluators``: side -> :class:`~gaitid.model.evaluator.PointEvaluator`; ``frames_out`` /
    ``omegas_lab``: R and lab angular velocity of the segments already built, by path."""
    angles: dict[str, np.ndarray] = {}
    joint_omega: dict[str, np.ndarray] = {}
    for side in SIDES:
        ev = evaluators[side]

        def key(name: str) -> str:
            return name if name == m.root else side_path(side, name)

        def seg_R(name: str) -> np.ndarray:
            R = frames_out.get(key(name))
            if R is None:
                R = ev.segment(name)[0]
            return apply_angle_axes(R, m.segments[name].get("angle_axes"))

        for jname, spec in m.joints.items():
            R_prox = seg_R(spec["proximal"])
            for rot in spec.get("proximal_rotate", []):
                angle = ev.param(rot, f"joints.{jname}.proximal_rotate")
                if angle:
                    R_prox = R_prox @ fr.rotation_about(rot["axis"], angle)
            q = rotation.cardan_angles(R_prox, seg_R(spec["distal"]), spec.get("sequence", "YXZ"))
            order = [i - 1 for i in spec.get("outputs", [1, 2, 3])]
            signs = np.asarray(spec.get(side_key(side), [1, 1, 1]), float)
            label = spec.get("label", f"{{S}}{jname}").replace("{S}", m.sides[side])
            angles[label] = np.degrees(q[:, order] * signs) + np.asarray(spec.get("offsets", [0, 0, 0]), float)
            wp, wd = omegas_lab.get(key(spec["proximal"])), omegas_lab.get(key(spec["distal"]))
            if wp is not None and wd is not None:
                joint_omega[side_path(side, jname)] = rotation.joint_angular_velocity(wp, wd)
    return angles, joint_omega


def apply_angle_axes(R: np.ndarray, axes: list[str] | None) -> np.ndarray:
    """R with its columns re-ordered/negated for joint angles: ``['-z', 'y', 'x']`` makes the
    Plug-in Gait foot (z back, x up) an anterior/left/up frame."""
    if not axes:
        return R
    cols = []
    for a in axes:
        sign = -1.0 if a.startswith("-") else 1.0
        cols.append(sign * R[..., :, "xyz".index(a.lstrip("-+"))])
    return np.stack(cols, axis=-1)
