"""Inverse dynamics of segment chains: seed 000's block Newton-Euler system and its recursive form.

- :func:`inverse_dynamics` -- joint forces and moments (and their inertial, velocity,
  gravity and external contributions) of a distal-to-proximal chain, all frames at once.
- :func:`skew` -- the batch skew-symmetric operator S(v).
- :class:`Chain` of :class:`Body` (constant: names, masses, inertias), :class:`SegmentMotion`
  (per frame), :class:`ExternalLoad`, :class:`JointLoads` -- inputs and output.
- :func:`express` -- a joint load in a frame under a convention (:mod:`gaitid.dynamics.express`).
"""

from gaitid.dynamics.express import express, in_frame, joint_rotations
from gaitid.dynamics.skew import skew
from gaitid.dynamics.solve import inverse_dynamics, joint_name
from gaitid.dynamics.types import CONTRIBUTIONS, Body, Chain, ExternalLoad, JointLoads, SegmentMotion

__all__ = ["CONTRIBUTIONS", "Body", "Chain", "ExternalLoad", "JointLoads", "SegmentMotion", "express", "in_frame",
           "inverse_dynamics", "joint_name", "joint_rotations", "skew"]
