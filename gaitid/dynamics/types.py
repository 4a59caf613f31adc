"""What the inverse-dynamics solver takes and gives.

A chain is described once (:class:`Chain` of :class:`Body`: names, masses, inertias) apart
from its per-frame motion (one :class:`SegmentMotion` per body), as pinocchio splits *model*
and *data*. Conventions (all SI):
- ``R`` (n, 3, 3) maps segment coordinates to lab coordinates: its columns are
  the segment axes expressed in the lab. (The seed texts write the transpose.)
- Vectors named ``*_lab`` are in the lab frame; ``*_seg`` in the segment's own frame.
- A chain is ordered distal to proximal: foot, shank, thigh. Joint ``j`` is the
  proximal joint of segment ``j`` (ankle, knee, hip).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Body:
    """One segment's inertial parameters: name, mass (kg), and inertia_seg (3, 3) kg.m^2 about
    its centre of mass, in the segment frame.

    Constant for a subject; for batches of perturbed chains stacked along the frame axis (the
    Monte Carlo of :mod:`gaitid.uncertainty`) they may vary per frame: mass (n,) and
    inertia_seg (n, 3, 3), n the frames of the motion.
    """

    name: str
    mass: float | np.ndarray
    inertia_seg: np.ndarray

    @property
    def per_frame(self) -> bool:
        """True when mass and inertia are given per frame ((n,) and (n, 3, 3))."""
        return np.ndim(self.mass) == 1

    def frames(self, sl: slice) -> "Body":
        """The body restricted to the frames ``sl`` (itself when its parameters are constant)."""
        if not self.per_frame:
            return self
        return Body(self.name, self.mass[sl], self.inertia_seg[sl])


@dataclass(frozen=True)
class Chain:
    """A chain's constant description, distal to proximal (foot, shank, thigh): its bodies.

    Constant for a subject (pinocchio's *model*); the per-frame motion of each segment is a
    :class:`SegmentMotion` (pinocchio's *data*). Joint j is the proximal joint of body j.
    """

    bodies: tuple[Body, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "bodies", tuple(self.bodies))

    def __len__(self) -> int:
        return len(self.bodies)

    def __iter__(self):
        return iter(self.bodies)

    def __getitem__(self, i: int) -> Body:
        return self.bodies[i]

    @property
    def names(self) -> list[str]:
        return [b.name for b in self.bodies]

    @property
    def masses(self) -> np.ndarray:
        """(k,) kg; (k, n) when the masses are per frame."""
        return np.array([b.mass for b in self.bodies], float)

    def frames(self, sl: slice) -> "Chain":
        """The chain restricted to the frames ``sl`` (itself when its parameters are constant)."""
        if not any(b.per_frame for b in self.bodies):
            return self
        return Chain(tuple(b.frames(sl) for b in self.bodies))


@dataclass
class SegmentMotion:
    """One segment's motion, every frame at once (all SI).

    R: (n, 3, 3) segment -> lab. com_lab: (n, 3) m, centre of mass. com_acc_lab: (n, 3) m/s^2.
    omega_seg, alpha_seg: (n, 3) angular velocity (rad/s) and acceleration (rad/s^2), segment
    frame. proximal_lab, distal_lab: (n, 3) m, joint centres (the foot's proximal joint is the
    ankle; a segment's distal_lab may be None: the distal segment's proximal joint is used).
    """

    R: np.ndarray
    com_lab: np.ndarray
    com_acc_lab: np.ndarray
    omega_seg: np.ndarray
    alpha_seg: np.ndarray
    proximal_lab: np.ndarray
    distal_lab: np.ndarray | None = None

    @property
    def n_frames(self) -> int:
        return self.R.shape[0]

    def frames(self, sl: slice) -> "SegmentMotion":
        """The motion restricted to the frames ``sl``."""
        return SegmentMotion(self.R[sl], self.com_lab[sl], self.com_acc_lab[sl], self.omega_seg[sl],
                             self.alpha_seg[sl], self.proximal_lab[sl],
                             None if self.distal_lab is None else self.distal_lab[sl])


@dataclass
class ExternalLoad:
    """An external load on one segment of the chain, in the lab frame.

    segment: index in the chain (0 = most distal). force_lab: (n, 3) N acting on the
    segment; point_lab: (n, 3) m, point of application (e.g. centre of pressure);
    free_moment_lab: (n, 3) N.m, a pure moment on the segment (a plate's Tz), or None.
    Frames without load carry zeros (swing); NaN marks frames whose load is unknown.
    """

    segment: int
    force_lab: np.ndarray
    point_lab: np.ndarray
    free_moment_lab: np.ndarray | None = None


CONTRIBUTIONS = ("inertial", "velocity", "gravity", "external")


@dataclass
class JointLoads:
    """Solver output for the joints of a chain (distal to proximal).

    force_lab[j]: (n, 3) N, force exerted by the proximal segment on the distal one
    at joint j (reaction force, lab frame; negated under the external convention).
    moment[j]: (n, 3) N.m net joint moment in ``frame`` ('lab', 'distal', 'proximal')
    under ``convention`` ('internal': moment of the proximal on the distal segment,
    i.e. muscles' moment; 'external': its negative, as Plug-in Gait reports).
    moment_lab[j]: the same moment in the lab frame (same convention), e.g. for joint power.
    force_parts / moment_parts: for each of CONTRIBUTIONS, arrays with the same shape
    as force_lab / moment; the four add up to the total.
    """

    joints: list[str]
    force_lab: list[np.ndarray]
    moment: list[np.ndarray]
    moment_lab: list[np.ndarray] = field(default_factory=list)
    frame: str = "distal"
    convention: str = "internal"
    force_parts: dict[str, list[np.ndarray]] = field(default_factory=dict)
    moment_parts: dict[str, list[np.ndarray]] = field(default_factory=dict)
