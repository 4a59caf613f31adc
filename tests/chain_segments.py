"""Test helper: build a chain segment by segment (body and motion together), then split it
into the solver's constant :class:`Chain` and per-frame :class:`SegmentMotion` list."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.dynamics import Body, Chain, SegmentMotion


@dataclass
class Seg:
    """One segment's constant parameters and motion in one record (tests only)."""

    name: str
    mass: float
    inertia_seg: np.ndarray
    R: np.ndarray
    com_lab: np.ndarray
    com_acc_lab: np.ndarray
    omega_seg: np.ndarray
    alpha_seg: np.ndarray
    proximal_lab: np.ndarray
    distal_lab: np.ndarray | None = None


def split(segs: list[Seg]) -> tuple[Chain, list[SegmentMotion]]:
    """(Chain, motions) for :func:`gaitid.dynamics.inverse_dynamics`."""
    chain = Chain(tuple(Body(s.name, s.mass, s.inertia_seg) for s in segs))
    motion = [SegmentMotion(s.R, s.com_lab, s.com_acc_lab, s.omega_seg, s.alpha_seg, s.proximal_lab, s.distal_lab)
              for s in segs]
    return chain, motion
