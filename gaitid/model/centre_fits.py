"""The least-squares fits of functional calibration, each over every frame at once.

- :func:`score` (SCoRE, Ehrig et al. 2006, J Biomech 39:2798): the point fixed in two segments,
  from their poses (R, t) per frame: ``[R_a, -R_b] [c_a; c_b] = t_b - t_a`` stacked.
- :func:`sara` (SARA, Ehrig et al. 2007, J Biomech 40:2150): the line fixed in two segments: the
  same matrix's right singular vector of its smallest singular value, and a point on it.
- :func:`sphere_centre` (Gamage & Lasenby 2002, J Biomech 35:87) and :func:`circle_axis` (Kasa
  1976 circle fits): the same with two markers on the moving segment, expressed in the other.
- :func:`pose`: a cluster's pose by :func:`gaitid.model.clusters.rigid_fit` (Soderkvist & Wedin
  1993) to its mean shape (Taylor et al. 2005's optimal common shape, one refit).
- :func:`relative_ranges`, :func:`direction_ranges`: the range of motion a fit used.
- :func:`centre_spread`, :func:`axis_spread`: how far the centres (axes) the markers give one by
  one disagree: the part of a soft-tissue artefact that deforms the segment's markers.

Positions in m (any frame the caller says), rotations segment -> that frame, (n, 3, 3).
scipy (the rotation vectors, the geometric refinement) is imported when a fit runs: a plain
``process()`` imports no scipy (tests/test_imports.py).
"""

from __future__ import annotations

import math

import numpy as np

from gaitid.core.errors import DataError
from gaitid.model.clusters import rigid_fit


def pose(points: np.ndarray, reference: np.ndarray | None = None):
    """A segment's pose from its markers (n, k, 3) m, k >= 3: (R (n, 3, 3), t (n, 3), reference
    (k, 3) m), the rigid fit to ``reference``, by default the markers' mean shape in the frame of
    their first complete frame (refitted once to it: Taylor et al. 2005's common shape). Frames
    missing a marker are NaN."""
    ok = np.isfinite(points).all(axis=(1, 2))
    if reference is None:
        if not ok.any():
            raise DataError(f"no frame shows all {points.shape[1]} markers of a segment")
        reference = points[np.flatnonzero(ok)[0]]
        R, t, _ = rigid_fit(reference, points)
        reference = np.einsum("nji,nkj->nki", R[ok], points[ok] - t[ok][:, None, :]).mean(axis=0)  # R^T (b - t)
    R, t, _ = rigid_fit(reference, points)
    return R, t, reference


def relative_ranges(Ra: np.ndarray, Rb: np.ndarray) -> tuple[float, ...]:
    """Principal ranges (deg, largest first) of segment b's rotation in segment a: the rotation
    vectors of R_a^T R_b about their mean rotation, their 2.5-97.5 percentile spans along the
    principal directions."""
    from scipy.spatial.transform import Rotation

    Q = np.einsum("nji,njk->nik", Ra, Rb)
    Q = Q[np.isfinite(Q).all(axis=(1, 2))]
    if len(Q) < 3:
        return (0.0, 0.0, 0.0)
    U, _, Vt = np.linalg.svd(Q.mean(axis=0))
    M = U @ np.diag([1.0, 1.0, np.linalg.det(U @ Vt)]) @ Vt
    v = Rotation.from_matrix(np.einsum("ji,njk->nik", M, Q)).as_rotvec()
    return _spans(v)


def direction_ranges(u: np.ndarray) -> tuple[float, ...]:
    """Principal ranges (deg) of a direction (n, 3) (two markers' line) in a segment frame: the
    angles off its mean direction in the tangent plane, spans as :func:`relative_ranges`."""
    u = u[np.isfinite(u).all(axis=1)]
    if len(u) < 3:
        return (0.0, 0.0)
    u = u / np.linalg.norm(u, axis=1, keepdims=True)
    m = u.mean(axis=0)
    m /= np.linalg.norm(m)
    basis = np.linalg.svd(np.eye(3) - np.outer(m, m))[0][:, :2]
    return _spans(np.arcsin(np.clip(u @ basis, -1, 1)))


def _spans(v: np.ndarray) -> tuple[float, ...]:
    c = v - v.mean(axis=0)
    proj = c @ np.linalg.svd(c, full_matrices=False)[2].T
    lo, hi = np.percentile(proj, [2.5, 97.5], axis=0)
    return tuple(float(np.degrees(x)) for x in np.sort(hi - lo)[::-1])


def _stack(Ra, ta, Rb, tb) -> tuple[np.ndarray, np.ndarray]:
    ok = _rows_ok(Ra, ta, Rb, tb)
    A = np.concatenate([Ra[ok], -Rb[ok]], axis=2).reshape(-1, 6)
    return A, (tb[ok] - ta[ok]).reshape(-1)


def score(Ra, ta, Rb, tb) -> tuple[np.ndarray, np.ndarray, float, int]:
    """SCoRE: the point fixed in segments a and b (poses R (n, 3, 3), t (n, 3) m, segment ->
    lab). Returns (centre in a (3,) m, centre in b (3,) m, RMS residual m, frames used)."""
    A, b = _stack(Ra, ta, Rb, tb)
    if len(b) < 18:
        return np.full(3, np.nan), np.full(3, np.nan), math.nan, len(b) // 3
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    d = (A @ x - b).reshape(-1, 3)
    return x[:3], x[3:], float(np.sqrt(np.mean(np.sum(d**2, axis=1)))), len(d)


def sara(Ra, ta, Rb, tb) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int]:
    """SARA: the line fixed in segments a and b. Returns (point on it in a (3,) m, its unit
    direction in a, in b, RMS residual m perpendicular to the axis, frames used)."""
    A, b = _stack(Ra, ta, Rb, tb)
    if len(b) < 18:
        nan = np.full(3, np.nan)
        return nan, nan, nan, math.nan, len(b) // 3
    U, S, Vt = np.linalg.svd(A, full_matrices=False)
    x = Vt[:5].T @ ((U[:, :5].T @ b) / S[:5])
    axis_a, axis_b = Vt[5, :3] / np.linalg.norm(Vt[5, :3]), Vt[5, 3:] / np.linalg.norm(Vt[5, 3:])
    d = (A @ x - b).reshape(-1, 3)
    lab_axis = np.einsum("nij,j->ni", Ra[_rows_ok(Ra, ta, Rb, tb)], axis_a)
    d -= lab_axis * np.sum(d * lab_axis, axis=1, keepdims=True)
    return x[:3], axis_a, axis_b, float(np.sqrt(np.mean(np.sum(d**2, axis=1)))), len(d)


def _rows_ok(Ra, ta, Rb, tb) -> np.ndarray:
    """Frames where both poses are known."""
    poses = (np.isfinite(Ra).all(axis=(1, 2)) & np.isfinite(Rb).all(axis=(1, 2)))
    return poses & np.isfinite(ta).all(1) & np.isfinite(tb).all(1)


def sphere_centre(points: list[np.ndarray]) -> tuple[np.ndarray, float, int]:
    """The common centre (3,) of the spheres markers (each (n, 3), in one frame) move on:
    ``2 p.c + (r_k^2 - |c|^2) = |p|^2`` in least squares (Gamage & Lasenby 2002), refined by
    minimising sum (|p - c| - r_k)^2 (Levenberg-Marquardt). Returns (centre, RMS of |p - c| - r_k
    in m, samples used)."""
    from scipy.optimize import least_squares

    rows, rhs, pts, which = [], [], [], []
    for k, p in enumerate(points):
        p = p[np.isfinite(p).all(axis=1)]
        e = np.zeros((len(p), len(points)))
        e[:, k] = 1.0
        rows.append(np.hstack([2 * p, e]))
        rhs.append(np.sum(p**2, axis=1))
        pts.append(p)
        which.append(np.full(len(p), k))
    A, b = np.vstack(rows), np.concatenate(rhs)
    if len(b) < 4 + len(points):
        return np.full(3, np.nan), math.nan, len(b)
    x = np.linalg.lstsq(A, b, rcond=None)[0]
    P, k = np.vstack(pts), np.concatenate(which)
    c = x[:3]
    radius = np.array([np.linalg.norm(P[k == j] - c, axis=1).mean() for j in range(len(points))])
    # the algebraic fit is biased by noise on short arcs: refine geometrically, sum (|p - c| - r_k)^2
    fit = least_squares(lambda v: np.linalg.norm(P - v[:3], axis=1) - v[3:][k], np.concatenate([c, radius]),
                        method="lm")
    c = fit.x[:3]
    return c, float(np.sqrt(np.mean(fit.fun**2))), len(b)


def circle_axis(points: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, float, int]:
    """The common axis of the circles markers (each (n, 3), in one frame) move on: the normal
    of least summed scatter, through the mean of the circles' centres (each a linear circle fit
    in the plane). Returns (point (3,), unit axis (3,), RMS residual m, samples used)."""
    pts = [p[np.isfinite(p).all(axis=1)] for p in points]
    pts = [p for p in pts if len(p) >= 3]
    if not pts:
        nan = np.full(3, np.nan)
        return nan, nan, math.nan, 0
    scatter = sum(np.cov(p.T, bias=True) for p in pts)
    _, v = np.linalg.eigh(scatter)
    axis, basis = v[:, 0], v[:, 1:]
    centres, errs = [], []
    for p in pts:
        q = p @ basis
        A = np.hstack([2 * q, np.ones((len(q), 1))])
        c2 = np.linalg.lstsq(A, np.sum(q**2, axis=1), rcond=None)[0][:2]
        r = np.linalg.norm(q - c2, axis=1)
        errs.append(np.concatenate([r - r.mean(), (p - p.mean(axis=0)) @ axis]))
        centres.append(basis @ c2 + axis * float(np.mean(p @ axis)))
    e = np.concatenate(errs)
    return np.mean(centres, axis=0), axis, float(np.sqrt(np.mean(e**2))), sum(len(p) for p in pts)


def centre_spread(points: list[np.ndarray]) -> tuple[float, tuple[int, int]]:
    """The largest distance (m) between the centres of the spheres each marker (each (n, 3), in
    one frame) moves on, fitted one by one (:func:`sphere_centre`), and which two markers (their
    indices) give it. A rigid segment's markers share one centre: the spread is the part of the
    markers' motion on the skin that deforms the segment (NaN with fewer than two fits)."""
    return _largest([sphere_centre([p])[0] for p in points], lambda a, b: float(np.linalg.norm(a - b)))


def axis_spread(points: list[np.ndarray]) -> tuple[float, tuple[int, int]]:
    """The largest angle (deg) between the axes of the circles each marker (each (n, 3), in one
    frame) moves on, fitted one by one (:func:`circle_axis`), and which two markers give it
    (NaN with fewer than two fits)."""
    return _largest([circle_axis([p])[1] for p in points],
                    lambda a, b: float(np.degrees(np.arccos(min(1.0, abs(float(a @ b)))))))


def _largest(values: list[np.ndarray], distance) -> tuple[float, tuple[int, int]]:
    pairs = [(distance(values[i], values[j]), (i, j)) for i in range(len(values)) for j in range(i + 1, len(values))
             if np.isfinite(values[i]).all() and np.isfinite(values[j]).all()]
    return max(pairs) if pairs else (math.nan, (-1, -1))
