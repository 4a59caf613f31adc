"""Distal-to-proximal recursive Newton-Euler solver (block forward substitution), vectorised.

The block matrix B of seed 000's system ``B x = M a - C - G - E`` (see
:mod:`gaitid.dynamics.block`) is lower block-triangular with identity blocks on
its diagonal, so block forward substitution solves it segment by segment,
distal to proximal, in O(k). Written out for segment i (lab frame; our ``R_i``
maps segment to lab, the seed's ``R_F`` is ``R_i.T``; seed 000's display equations are
numbered (1)-(20) in order of appearance, see docs/solver.md):

- Newton (block row 2i; seed 000 eq. (12), 1st and 3rd rows)::

      F_i = m_i (a_i - g) - F_ext,i + F_{i-1}

- Euler (block row 2i+1, seed 000 eq. (12), 2nd and 4th rows, multiplied on the left by
  R_i to bring it to the lab,
  moments about the centre of mass moved to the proximal joint P_i by
  substituting the Newton row)::

      M_i = R_i (I_i alpha_i + omega_i x I_i omega_i) + (c_i - P_i) x m_i (a_i - g)
            + M_{i-1} + (D_i - P_i) x F_{i-1} - sum (p - P_i) x F_ext - T_free

with F_{-1} = M_{-1} = 0. F_i, M_i: force and moment of segment i+1 on
segment i at its proximal joint P_i (lab frame, internal convention); D_i: the
distal joint centre of segment i (where F_{i-1} acts); p: a load's point of
application; T_free: its free moment. The system is linear in its right-hand
side, so the same recursion applied to each term alone gives the contributions
(inertial ``m a, I alpha``; velocity ``omega x I omega``; gravity ``-m g``;
external ``-F_ext`` and ``-(p - P) x F_ext - T_free``), which add up to the total.

Speed: the arithmetic runs on component-first (3, c) arrays, frames in chunks of
CHUNK so the working set stays in cache (a loop over chunks, never over frames),
with the four contributions stacked on a leading axis.
"""

from __future__ import annotations

import numpy as np

from gaitid.dynamics.express import in_frame
from gaitid.dynamics.types import CONTRIBUTIONS, Chain, ExternalLoad, SegmentMotion

CHUNK = 8192  # frames per chunk: 192 kB per (3, CHUNK) array, so the working set stays in cache


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b with components on axis -2: (..., 3, c) arrays, broadcasting (e.g. (3, 1) or (P, 3, c)).

    Written with ``out=`` products: np.cross and np.stack cost several times more on
    cache-sized chunks.
    """
    shape = np.broadcast_shapes(a.shape, b.shape)
    out = np.empty(shape)
    tmp = np.empty(shape[:-2] + shape[-1:])
    a0, a1, a2 = a[..., 0, :], a[..., 1, :], a[..., 2, :]
    b0, b1, b2 = b[..., 0, :], b[..., 1, :], b[..., 2, :]
    o0, o1, o2 = out[..., 0, :], out[..., 1, :], out[..., 2, :]
    np.multiply(a1, b2, out=o0)
    o0 -= np.multiply(a2, b1, out=tmp)
    np.multiply(a2, b0, out=o1)
    o1 -= np.multiply(a0, b2, out=tmp)
    np.multiply(a0, b1, out=o2)
    o2 -= np.multiply(a1, b0, out=tmp)
    return out


def _cross_add(a: np.ndarray, b: np.ndarray, out: np.ndarray, tmp: np.ndarray) -> None:
    """out += a x b for (3, c) arrays (either of a, b may be (3, 1)); tmp: a (c,) scratch row."""
    a0, a1, a2 = a
    b0, b1, b2 = b
    out[0] += np.multiply(a1, b2, out=tmp)
    out[0] -= np.multiply(a2, b1, out=tmp)
    out[1] += np.multiply(a2, b0, out=tmp)
    out[1] -= np.multiply(a0, b2, out=tmp)
    out[2] += np.multiply(a0, b1, out=tmp)
    out[2] -= np.multiply(a1, b0, out=tmp)


def _inertia_times(I: np.ndarray, v: np.ndarray) -> np.ndarray:
    """I v for component-first v (3, c): I constant (3, 3) or per frame (c, 3, 3)."""
    return I @ v if I.ndim == 2 else np.einsum("cij,jc->ic", I, v)


def distal_point(motion: list[SegmentMotion], i: int) -> np.ndarray:
    """Where segment i's distal joint force acts: its distal_lab, else the distal segment's proximal_lab."""
    d = motion[i].distal_lab
    return motion[i - 1].proximal_lab if d is None else d


def recursive_newton_euler(
    chain: Chain,
    motion: list[SegmentMotion],
    loads: list[ExternalLoad],
    gravity_lab: np.ndarray,
    contributions: bool = True,
    rotations: list[np.ndarray | None] | None = None,
    chunk: int = CHUNK,
) -> tuple[dict[str, list[np.ndarray]], ...]:
    """Joint forces and moments of a distal-to-proximal chain by block forward substitution.

    Seed 000 eq. (19), ``x = B^-1 (M a - C - G - E)``, solved row by row (module docstring).
    Returns ``(forces, moments_lab)``, or ``(forces, moments_lab, moments)`` with
    ``rotations`` (per joint, the rotation of the frame to express its moments in, from
    :func:`gaitid.dynamics.express.joint_rotations`; applied chunk by chunk with
    :func:`~gaitid.dynamics.express.in_frame`): dicts mapping "total" (and, if
    ``contributions``, each of CONTRIBUTIONS) to a list over joints of (n, 3) arrays
    (Fortran-ordered views): force of segment j+1 on segment j at joint j (N, lab) and
    moment (N.m), internal convention. Inputs are assumed validated (see
    :func:`gaitid.dynamics.inverse_dynamics`). NaN in a frame's inputs gives NaN in that
    frame's outputs only.
    """
    k = len(chain)
    n = motion[0].R.shape[0]
    g = np.asarray(gravity_lab, dtype=float).reshape(3, 1)
    parts = ("total",) + (CONTRIBUTIONS if contributions else ())
    P_ = len(parts)
    # outputs, component-first: (parts, joints, 3, n)
    F_out = np.empty((P_, k, 3, n))
    M_out = np.empty((P_, k, 3, n))
    Mf_out = None if rotations is None else np.empty((P_, k, 3, n))
    per_frame = any(b.per_frame for b in chain)  # masses (n,), inertias (n, 3, 3): stacked samples
    if per_frame:
        masses = [np.broadcast_to(np.asarray(b.mass, float), (n,)) for b in chain]
        inertias = [np.broadcast_to(np.asarray(b.inertia_seg, float), (n, 3, 3)) for b in chain]
        weight = -np.cumsum(masses, axis=0)[:, None, :] * g[None]  # (k, 3, n)
    else:
        masses = [float(b.mass) for b in chain]
        inertias = [np.asarray(b.inertia_seg, dtype=float) for b in chain]
        weight = (-np.cumsum(masses)[:, None] * g[:, 0])[:, :, None]  # (k, 3, 1)
    seg_loads = [[ld for ld in loads if ld.segment == i] for i in range(k)]
    distal = [None] + [distal_point(motion, i) for i in range(1, k)]
    # gravity part of the forces: the weight of the segments below and at joint j

    if contributions:
        F_out[2] = 0.0  # velocity: omega x I omega exerts no force
        F_out[3] = weight  # gravity: -(sum of masses up to joint j) g

    for start in range(0, n, chunk):
        sl = slice(start, min(start + chunk, n))
        F_prev = M_prev = None
        for i, seg in enumerate(motion):
            Rc = np.ascontiguousarray(seg.R[sl].transpose(1, 2, 0))  # (3, 3, c)
            I, m = (inertias[i][sl], masses[i][sl]) if per_frame else (inertias[i], masses[i])
            P = seg.proximal_lab[sl].T
            cP = seg.com_lab[sl].T - P
            a = seg.com_acc_lab[sl].T
            w = seg.omega_seg[sl].T
            alpha = seg.alpha_seg[sl].T
            fe = me = None
            for ld in seg_loads[i]:
                f = ld.force_lab[sl].T
                mo = _cross(ld.point_lab[sl].T - P, f)
                if ld.free_moment_lab is not None:
                    mo += ld.free_moment_lab[sl].T
                fe = f if fe is None else fe + f
                me = mo if me is None else me + mo
            if contributions:
                # parts, written in place in the outputs: 1 inertial, 2 velocity, 3 gravity, 4 external
                c = a.shape[1]
                tmp = np.empty(c)
                F = F_out[1:, i, :, sl]
                M = M_out[1:, i, :, sl]
                np.multiply(a, m, out=F[0])  # inertial: m a
                # velocity (no force) and gravity (a constant) forces are filled before the loop
                np.einsum("ijn,jn->in", Rc, _inertia_times(I, alpha), out=M[0])
                np.einsum("ijn,jn->in", Rc, _cross(w, _inertia_times(I, w)), out=M[1])
                _cross_add(cP, F[0], M[0], tmp)
                M[2] = 0.0
                _cross_add(cP, -m * g, M[2], tmp)
                if fe is None:
                    F[3] = 0.0
                    M[3] = 0.0
                else:
                    np.negative(fe, out=F[3])
                    np.negative(me, out=M[3])
                if i > 0:
                    DP = distal[i][sl].T - P
                    F[0] += F_prev[0]
                    F[3] += F_prev[3]
                    M += M_prev
                    _cross_add(DP, F_prev[0], M[0], tmp)
                    _cross_add(DP, weight[i - 1][:, sl] if per_frame else weight[i - 1], M[2], tmp)
                    _cross_add(DP, F_prev[3], M[3], tmp)
                np.add(F[0], F[2], out=F_out[0, i, :, sl])
                F_out[0, i, :, sl] += F[3]
                np.sum(M, axis=0, out=M_out[0, i, :, sl])
            else:
                f_net = m * (a - g)
                tau = np.einsum("ijn,jn->in", Rc, _inertia_times(I, alpha) + _cross(w, _inertia_times(I, w)))
                Fi = f_net
                Mi = tau + _cross(cP, f_net)
                if fe is not None:
                    Fi = Fi - fe
                    Mi -= me
                if i > 0:
                    DP = distal[i][sl].T - P
                    Mi += M_prev[0]
                    Mi += _cross(DP, F_prev[0])
                    Fi = Fi + F_prev[0]
                F, M = Fi[None], Mi[None]
                F_out[0, i, :, sl] = Fi
                M_out[0, i, :, sl] = Mi
            F_prev, M_prev = F, M
        if rotations is not None:  # the chunk's moments in the frames asked for, while in cache
            for j, R in enumerate(rotations):
                v = np.swapaxes(M_out[:, j, :, sl], -1, -2)  # (parts, c, 3)
                Mf_out[:, j, :, sl] = np.swapaxes(in_frame(v, None if R is None else R[sl]), -1, -2)
    forces = {p: [F_out[q, j].T for j in range(k)] for q, p in enumerate(parts)}
    moments = {p: [M_out[q, j].T for j in range(k)] for q, p in enumerate(parts)}
    if rotations is None:
        return forces, moments
    return forces, moments, {p: [Mf_out[q, j].T for j in range(k)] for q, p in enumerate(parts)}
