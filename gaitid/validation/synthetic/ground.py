"""The analytic ground reaction under each stance foot and its encoding as type-2 force-plate
channels (C3D plate equations, as ezc3d decodes them)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.validation.synthetic.body import Frame, stance_phase
from gaitid.validation.synthetic.params import COP_END, COP_START, SIDE_SIGN, G, GaitParams
from gaitid.validation.synthetic.plate_split import PlateOutline

# Vertical force over stance s in [0, 1]: BW (c1 sin(pi s) + c3 sin(3 pi s)), c3 = 0.438 and c1 set so
# that the two feet's vertical impulse over a stride equals body weight times the stride time
# (steady walking: c1 = 1.163 for 60 % stance); peaks 1.13 BW near s = 0.25 and 0.75, 0.72 BW at
# mid-stance. Horizontal force: the ground reaction points from the COP at an aim point near the
# body's centre of mass (inverted-pendulum walking), GRF_AIM_OFFSET (m, lab) from the mid-point
# of the hip joint centres; its 4 cm backward shift balances braking and propulsion impulses
# (net 0.001 BW over a stride), and the medial forces of the two feet cancel. Free moment
# 0.004 BW.m sin(2 pi s).
GRF_C3 = 0.438
GRF_AIM_OFFSET = np.array([-0.04, 0.0, 0.30])
FREE_MOMENT = 0.004


def vertical_c1(p: GaitParams) -> float:
    """c1 such that 2 * stance_fraction * integral_0^1 (c1 sin(pi s) + c3 sin(3 pi s)) ds = 1:
    c1 = pi/2 (1 / (2 f) - 2 c3 / (3 pi)), f the stance fraction."""
    return float(np.pi / 2.0 * (1.0 / (2.0 * p.stance_fraction) - 2.0 * GRF_C3 / (3.0 * np.pi)))


@dataclass
class GroundReaction:
    """Load of the floor on one foot (lab): force (n,3) N, cop (n,3) m on z = 0, free_moment (n,3) N.m
    (Z only); zeros in swing, cop NaN in swing. ``phase`` is the stance progress (NaN in swing)."""

    force: np.ndarray
    cop: np.ndarray
    free_moment: np.ndarray
    phase: np.ndarray


def ground_reaction(p: GaitParams, t: np.ndarray, foot: Frame, side: str, aim: np.ndarray) -> GroundReaction:
    """Ground reaction of ``side`` at times ``t`` from the foot's exact frame.

    ``aim`` (n, 3) m lab: the point the force points at from the COP (mid-hip + GRF_AIM_OFFSET):
    F = Fz (aim - cop) / (aim_z - cop_z), so Fx, Fy follow Fz and the geometry.
    """
    s = stance_phase(p, t, side)
    on = ~np.isnan(s)
    sz = np.where(on, s, 0.0)
    bw = p.mass * G
    fz = bw * (vertical_c1(p) * np.sin(np.pi * sz) + GRF_C3 * np.sin(3 * np.pi * sz))
    x_sole = COP_START + (COP_END - COP_START) * sz
    local = np.column_stack([x_sole, np.zeros_like(sz), np.full_like(sz, -p.ankle_height)])
    cop = foot.o + np.einsum("nij,nj->ni", foot.R, local)
    cop[:, 2] = 0.0
    d = aim - cop
    force = np.where(on[:, None], fz[:, None] * d / d[:, 2:3], 0.0)
    tz = -SIDE_SIGN[side] * FREE_MOMENT * bw * np.sin(2 * np.pi * sz)
    free = np.column_stack([np.zeros_like(tz), np.zeros_like(tz), np.where(on, tz, 0.0)])
    cop[~on] = np.nan
    return GroundReaction(force, cop, free, s)


def grf_aim(kin: dict[str, Frame]) -> np.ndarray:
    """(n, 3) m lab: mid-point of the two hip joint centres + GRF_AIM_OFFSET."""
    return (kin["R_thigh"].o + kin["L_thigh"].o) / 2.0 + GRF_AIM_OFFSET


PLATE_SIZE = (0.6, 0.4)  # m, along X and Y
PLATE_ORIGINS = (np.array([1.0, -0.5, -41.0]), np.array([-0.6, 0.4, -39.0]))  # mm, plate frame, sensor -> surface centre


@dataclass
class Plate(PlateOutline):
    """A type-2 force plate of the sample walk: corners (4, 3) m lab (C3D order: x = c0 - c1,
    y = c0 - c3, z down), origin (3,) mm as stored, analog (n_analog, 6) channels Fx Fy Fz (N) Mx
    My Mz (N.mm) in the plate frame, side whose contact it carries, and its exact ground reaction
    at the analog rate."""

    analog: np.ndarray = None
    side: str = ""
    grf: GroundReaction = None


def plate_channels(grf: GroundReaction, R_plate: np.ndarray, centre: np.ndarray, origin_mm: np.ndarray) -> np.ndarray:
    """Type-2 channels (n, 6): force on the subject and moment about the sensor origin, plate frame,
    N and N.mm, such that the C3D plate equations (ezc3d; origin with z <= 0 as stored) give back
    the force, COP and free moment: M_c = cop x F + T, M_o = M_c - F x origin."""
    F = grf.force @ R_plate
    cop = np.where(np.isnan(grf.cop), centre, grf.cop)
    cop_p = (cop - centre) @ R_plate
    cop_p[:, 2] = 0.0
    T = grf.free_moment @ R_plate
    M_c = np.cross(cop_p, F) + T  # N.m about the surface centre
    o = origin_mm / 1000.0
    M_o = M_c - np.cross(F, o)
    return np.concatenate([F, 1000.0 * M_o], axis=1)


def plate_corners(cx: float, cy: float, flipped: bool) -> np.ndarray:
    """Corners (m) with z down; plate X along lab +X (or -X when ``flipped``)."""
    a, b = PLATE_SIZE[0] / 2.0, PLATE_SIZE[1] / 2.0
    if not flipped:
        pts = [(cx + a, cy - b), (cx - a, cy - b), (cx - a, cy + b), (cx + a, cy + b)]
    else:
        pts = [(cx - a, cy + b), (cx + a, cy + b), (cx + a, cy - b), (cx - a, cy - b)]
    return np.array([[x, y, 0.0] for x, y in pts])
