"""Seed 000's stacked Newton-Euler system, generalised to a chain of k segments.

Seed 000 ("Inverse dynamics") writes the foot-shank pair as ``M a = C + G + Q + E``
(eq. (3), split term by term in eq. (13)) with ``Q = B x`` (eq. (18)) and solves
``x = B^-1 (M a - C - G - E)`` (eq. (19)); its display equations are numbered (1)-(20) in
order of appearance (docs/solver.md).
For a chain of k segments ordered distal to proximal (segment 0 = foot), joint i
is the proximal joint P_i of segment i and the unknowns are stacked as::

    x = [F_0, M_0, F_1, M_1, ..., F_{k-1}, M_{k-1}]

F_i: force of segment i+1 on segment i at P_i, lab frame. M_i: moment of
segment i+1 on segment i, in segment i's own frame (the seed's M_A^F, M_K^S).
Our R_i maps segment i to the lab; the seed's R_F is R_i.T, its R_S R_F^-1 is
R_i.T R_{i-1}. For segment i, with c_i its centre of mass, D_i its distal joint
centre (where F_{i-1} acts), S the skew operator:

- block row 2i, Newton (lab; eq. (12), 1st/3rd rows)::

      F_i - F_{i-1} = m_i a_i - m_i g - F_ext,i

- block row 2i+1, Euler about c_i (segment i frame; eq. (12), 2nd/4th rows)::

      R_i.T S(P_i - c_i) F_i + M_i - R_i.T S(D_i - c_i) F_{i-1} - R_i.T R_{i-1} M_{i-1}
          = I_i alpha_i + omega_i x I_i omega_i - R_i.T (sum S(p - c_i) F_ext + T_free)

(the terms in F_{i-1}, M_{i-1} vanish for i = 0). So B is (6k, 6k), lower
block-triangular with identity diagonal blocks (det B = 1: never singular), and
the right-hand side splits into the four contributions::

    inertial = [m a; I alpha], velocity = -C = [0; omega x I omega],
    gravity = -G = [-m g; 0], external = -E = [-F_ext; -R.T(sum S(p - c) F_ext + T_free)]

All frames are solved at once by one batched ``numpy.linalg.solve`` with the
total and the four parts as right-hand-side columns (never an explicit inverse).
The free moment T_free (a plate's Tz) is part of E; seed 000 omits it.
"""

from __future__ import annotations

import numpy as np

from gaitid.core.rotation import cross
from gaitid.dynamics.recursive import distal_point
from gaitid.dynamics.skew import skew
from gaitid.dynamics.types import CONTRIBUTIONS, Chain, ExternalLoad, SegmentMotion


def block_system(
    chain: Chain, motion: list[SegmentMotion], loads: list[ExternalLoad], gravity_lab: np.ndarray
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """B (n, 6k, 6k) and the right-hand sides (n, 6k) of ``B x = M a - C - G - E``.

    Seed 000 eq. (18) (``Q = B x`` with S(v) from eq. (15)), generalised to k segments.
    Returns ``(B, rhs)`` with ``rhs`` mapping each of CONTRIBUTIONS to its
    (n, 6k) column (inertial = M a, velocity = -C, gravity = -G, external = -E);
    their sum is the full right-hand side. Rows/columns are ordered as in the
    module docstring.
    """
    k = len(chain)
    n = motion[0].R.shape[0]
    g = np.asarray(gravity_lab, dtype=float).reshape(3)
    eye = np.eye(3)
    B = np.zeros((n, 6 * k, 6 * k))
    rhs = {p: np.zeros((n, 6 * k)) for p in CONTRIBUTIONS}
    for i, (body, seg) in enumerate(zip(chain, motion)):
        R = np.asarray(seg.R, dtype=float)
        Rt = np.swapaxes(R, 1, 2)
        I = np.asarray(body.inertia_seg, dtype=float)  # (3, 3), or (n, 3, 3) per frame
        m = np.asarray(body.mass, dtype=float)
        m = m[:, None] if m.ndim else m  # per-frame masses (n,) broadcast over components
        c = np.asarray(seg.com_lab, dtype=float)
        w = np.asarray(seg.omega_seg, dtype=float)
        rF, rM = slice(6 * i, 6 * i + 3), slice(6 * i + 3, 6 * i + 6)
        B[:, rF, rF] = eye
        B[:, rM, rM] = eye
        B[:, rM, rF] = Rt @ skew(np.asarray(seg.proximal_lab, dtype=float) - c)
        if i > 0:
            pF, pM = slice(6 * i - 6, 6 * i - 3), slice(6 * i - 3, 6 * i)
            Rprev = np.asarray(motion[i - 1].R, dtype=float)
            B[:, rF, pF] = -eye
            B[:, rM, pF] = -Rt @ skew(np.asarray(distal_point(motion, i), dtype=float) - c)
            B[:, rM, pM] = -Rt @ Rprev
        rhs["inertial"][:, rF] = m * np.asarray(seg.com_acc_lab, dtype=float)
        rhs["inertial"][:, rM] = _inertia_times(I, np.asarray(seg.alpha_seg, dtype=float))
        rhs["velocity"][:, rM] = cross(w, _inertia_times(I, w))
        rhs["gravity"][:, rF] = -m * g
        for ld in loads:
            if ld.segment != i:
                continue
            f = np.asarray(ld.force_lab, dtype=float)
            mo = cross(np.asarray(ld.point_lab, dtype=float) - c, f)
            if ld.free_moment_lab is not None:
                mo = mo + np.asarray(ld.free_moment_lab, dtype=float)
            rhs["external"][:, rF] -= f
            rhs["external"][:, rM] -= (Rt @ mo[:, :, None])[:, :, 0]
    return B, rhs


def _inertia_times(I: np.ndarray, v: np.ndarray) -> np.ndarray:
    """I v for frame-first v (n, 3): I constant (3, 3) or per frame (n, 3, 3)."""
    return v @ I.T if I.ndim == 2 else np.einsum("nij,nj->ni", I, v)


BLOCK_CHUNK = 32768  # frames per batched solve: B is 6k x 6k doubles per frame (2.6 kB for k = 3)


def _loads_in(loads: list[ExternalLoad], sl: slice) -> list[ExternalLoad]:
    """The loads restricted to the frames ``sl``."""
    return [ExternalLoad(ld.segment, ld.force_lab[sl], ld.point_lab[sl],
                         None if ld.free_moment_lab is None else ld.free_moment_lab[sl]) for ld in loads]


def solve_block(
    chain: Chain,
    motion: list[SegmentMotion],
    loads: list[ExternalLoad],
    gravity_lab: np.ndarray,
    contributions: bool = True,
    chunk: int = BLOCK_CHUNK,
) -> tuple[dict[str, list[np.ndarray]], dict[str, list[np.ndarray]]]:
    """Solve seed 000's block system, eq. (19), with batched ``numpy.linalg.solve`` calls.

    Same return as :func:`gaitid.dynamics.recursive.recursive_newton_euler`: ``(forces, moments)`` dicts of lists over joints of (n, 3) lab-frame
    arrays (internal convention), keys "total" and, if ``contributions``, the four
    parts. The total is solved from its own right-hand side (the sum of the
    parts' columns), so the parts add up to it to rounding. Frames are solved
    ``chunk`` at a time to bound memory (B takes 8 (6k)^2 bytes per frame).

    Frames whose B is not finite (missing kinematics) are solved with B = I and
    then set to NaN for every joint (a batched LAPACK solve may fail on NaN);
    frames with only a missing load get NaN through the right-hand side.
    """
    k = len(chain)
    n = motion[0].R.shape[0]
    names = ["total"] + (list(CONTRIBUTIONS) if contributions else [])
    x = np.empty((n, 6 * k, len(names)))
    for start in range(0, n, chunk):
        sl = slice(start, min(start + chunk, n))
        B, rhs = block_system(chain.frames(sl), [m.frames(sl) for m in motion], _loads_in(loads, sl), gravity_lab)
        cols = [sum(rhs[p] for p in CONTRIBUTIONS)]
        if contributions:
            cols += [rhs[p] for p in CONTRIBUTIONS]
        b = np.stack(cols, axis=-1)  # (c, 6k, columns)
        bad = ~np.isfinite(B).all(axis=(1, 2))
        if bad.any():
            B[bad] = np.eye(6 * k)
            b[bad] = 0.0
        x[sl] = np.linalg.solve(B, b)
        if bad.any():
            x[sl][bad] = np.nan
    forces = {p: [] for p in names}
    moments = {p: [] for p in names}
    for j, seg in enumerate(motion):
        R = np.asarray(seg.R, dtype=float)
        for c, p in enumerate(names):
            forces[p].append(np.ascontiguousarray(x[:, 6 * j : 6 * j + 3, c]))
            m_seg = x[:, 6 * j + 3 : 6 * j + 6, c]  # seed 000's M_j, in segment j's frame
            moments[p].append(np.einsum("nij,nj->ni", R, m_seg))
    return forces, moments
