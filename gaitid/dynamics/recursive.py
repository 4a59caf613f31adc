"""Distal-to-proximal recursive Newton-Euler solver (block forward substitution), vectorised.

The block matrix B of seed 000's system ``B x = M a - C - G - E`` (see
:mod:`gaitid.dynamics.block`) is lower block-triangular with identity blocks on
its diagonal, so block forward substitution solves it segment by segment,
distal to proximal, in O(k). Written out for segment i (lab frame; our ``R_i``
maps segment to lab, the seed's ``R_F`` is ``R_i.T``):

- Newton (block row 2i)::

      F_i = m_i (a_i - g) - F_ext,i + F_{i-1}

- Euler (block row 2i+1, multiplied on the left by R_i to bring it to the lab,
  then the moments about the centre of mass moved to the proximal joint P_i by
  substituting the Newton row)::

      M_i = R_i (I_i alpha_i + omega_i x I_i omega_i) + (c_i - P_i) x m_i (a_i - g)
            + M_{i-1} + (D_i - P_i) x F_{i-1} - sum (p - P_i) x F_ext - T_free

with F_{-1} = M_{-1} = 0. F_i, M_i: force and moment of segment i+1 on
segment i at its proximal joint P_i (lab frame, internal convention); D_i:
the distal joint centre of segment i; p: a load's point of application;
T_free: its free moment. Because the system is linear in the right-hand side,
the same recursion applied to each term of the right-hand side alone gives the
contributions (inertial ``m a, I alpha``; velocity ``omega x I omega``; gravity
``-m g``; external ``-F_ext, -(p - P) x F_ext - T_free``), which add up to the total.

Arithmetic is done on component-first (3, n) arrays: explicit component
products beat generic (n, 3, 3) matmul several-fold in numpy.
"""

from __future__ import annotations

import numpy as np

from gaitid.dynamics.types import CONTRIBUTIONS, ExternalLoad, SegmentMotion


def _cols(a: np.ndarray) -> np.ndarray:
    """(n, 3) -> contiguous (3, n)."""
    return np.ascontiguousarray(np.asarray(a, dtype=float).T)


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b for component-first (3, n) arrays (either may be (3, 1))."""
    return np.stack(
        (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])
    )


def _rotate(Rc: np.ndarray, v: np.ndarray) -> np.ndarray:
    """R v with R component-first (3, 3, n) and v (3, n)."""
    return np.einsum("ijn,jn->in", Rc, v)


def _distal_point(segments: list[SegmentMotion], i: int) -> np.ndarray:
    """Where segment i's distal joint force acts: its distal_lab, else the distal segment's proximal_lab."""
    d = segments[i].distal_lab
    return segments[i - 1].proximal_lab if d is None else d


def _loads_on(loads: list[ExternalLoad], i: int) -> list[ExternalLoad]:
    return [ld for ld in loads if ld.segment == i]


def recursive_newton_euler(
    segments: list[SegmentMotion],
    loads: list[ExternalLoad],
    gravity_lab: np.ndarray,
    contributions: bool = True,
) -> tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]]:
    """Joint forces and moments of a distal-to-proximal chain by block forward substitution.

    Returns ``(forces, moments)``: dicts mapping "total" (and, if
    ``contributions``, each of CONTRIBUTIONS) to a list over joints of (n, 3)
    arrays, all in the lab frame: force (N) and moment (N.m) of segment i+1 on
    segment i at joint i (internal convention). Inputs are assumed validated
    (see :func:`gaitid.dynamics.inverse_dynamics`). NaN in a frame's inputs
    gives NaN in that frame's outputs only.
    """
    g = np.asarray(gravity_lab, dtype=float).reshape(3, 1)
    parts = ("total",) + (CONTRIBUTIONS if contributions else ())
    F = {p: [] for p in parts}
    M = {p: [] for p in parts}
    prev_F = prev_M = None  # dicts part -> (3, n) of the previous joint
    prev_Fg = np.zeros((3, 1))  # gravity part of the force: a constant
    for i, seg in enumerate(segments):
        Rc = np.ascontiguousarray(np.asarray(seg.R, dtype=float).transpose(1, 2, 0))
        I = np.asarray(seg.inertia_seg, dtype=float)
        m = float(seg.mass)
        P = _cols(seg.proximal_lab)
        cP = _cols(seg.com_lab) - P
        a = _cols(seg.com_acc_lab)
        w = _cols(seg.omega_seg)
        alpha = _cols(seg.alpha_seg)
        # External loads on this segment: resultant force and moment about P (lab).
        fe = me = None
        for ld in _loads_on(loads, i):
            f = _cols(ld.force_lab)
            mo = _cross(_cols(ld.point_lab) - P, f)
            if ld.free_moment_lab is not None:
                mo += _cols(ld.free_moment_lab)
            fe = f if fe is None else fe + f
            me = mo if me is None else me + mo
        if i > 0:
            DP = _cols(_distal_point(segments, i)) - P

        if not contributions:
            f_net = m * (a - g)
            tau = _rotate(Rc, I @ alpha + _cross(w, I @ w))
            Fi = f_net.copy()
            Mi = tau + _cross(cP, f_net)
            if fe is not None:
                Fi -= fe
                Mi -= me
            if i > 0:
                Fi += prev_F["total"]
                Mi += prev_M["total"] + _cross(DP, prev_F["total"])
            cur_F, cur_M = {"total": Fi}, {"total": Mi}
        else:
            # inertial: m a, I alpha
            f_in = m * a
            F_in = f_in if i == 0 else f_in + prev_F["inertial"]
            M_in = _rotate(Rc, I @ alpha) + _cross(cP, f_in)
            # velocity: omega x I omega (no force)
            M_vel = _rotate(Rc, _cross(w, I @ w))
            # gravity: -m g (force part constant over frames)
            Fg = -m * g + prev_Fg
            M_g = _cross(cP, -m * g)
            # external loads
            F_ex = -fe if fe is not None else np.zeros_like(a)
            M_ex = -me if me is not None else np.zeros_like(a)
            if i > 0:
                M_in += prev_M["inertial"] + _cross(DP, prev_F["inertial"])
                M_vel += prev_M["velocity"]
                M_g += prev_M["gravity"] + _cross(DP, prev_Fg)
                F_ex = F_ex + prev_F["external"]
                M_ex += prev_M["external"] + _cross(DP, prev_F["external"])
            prev_Fg = Fg
            F_g = np.broadcast_to(Fg, a.shape)
            F_vel = np.zeros_like(a)
            cur_F = {"inertial": F_in, "velocity": F_vel, "gravity": F_g, "external": F_ex}
            cur_M = {"inertial": M_in, "velocity": M_vel, "gravity": M_g, "external": M_ex}
            cur_F["total"] = F_in + F_g + F_ex  # F_vel is 0
            cur_M["total"] = M_in + M_vel + M_g + M_ex
        for p in parts:
            F[p].append(np.ascontiguousarray(cur_F[p].T))
            M[p].append(np.ascontiguousarray(cur_M[p].T))
        prev_F, prev_M = cur_F, cur_M
    return F, M
