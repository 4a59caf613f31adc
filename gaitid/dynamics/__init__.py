"""Inverse dynamics of segment chains: seed 000's block Newton-Euler system and its recursive form.

- :func:`inverse_dynamics` -- joint forces and moments (and their inertial, velocity,
  gravity and external contributions) of a distal-to-proximal chain, all frames at once.
- :func:`skew` -- the batch skew-symmetric operator S(v).
- :class:`SegmentMotion`, :class:`ExternalLoad`, :class:`JointLoads` -- inputs and output.
"""

from gaitid.dynamics.skew import skew
from gaitid.dynamics.solve import inverse_dynamics, joint_name
from gaitid.dynamics.types import CONTRIBUTIONS, ExternalLoad, JointLoads, SegmentMotion

__all__ = ["CONTRIBUTIONS", "ExternalLoad", "JointLoads", "SegmentMotion", "inverse_dynamics", "joint_name", "skew"]
