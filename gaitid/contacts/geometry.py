"""Horizontal geometry for plate assignment: points against foot triangles and plate outlines (m, lab XY)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.signal import finite_rows


def distance_to_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Horizontal distance (n,) from points p to triangles abc (all (n, 2), or (..., n, 2) alike), 0
    inside; NaN if any NaN. The three edges in one pass, each edge vector and each p - corner computed
    once (the side tests use them too)."""
    if not np.shape(p) == np.shape(a) == np.shape(b) == np.shape(c):
        p, a, b, c = np.broadcast_arrays(p, a, b, c)
    q = np.array([a, b, c, a, p], float)  # the corners round the triangle, then the point: (5, ..., n, 2)
    known = finite_rows(q).all(axis=0)
    edges = q[1:4] - q[:3]  # ab, bc, ca: (3, ..., n, 2)
    rel = q[4] - q[:3]  # p from each edge's start
    del q  # (the largest temporary: freed before the ones below are made)
    ex, ey, rx, ry = edges[..., 0], edges[..., 1], rel[..., 0], rel[..., 1]
    side = ex * ry - ey * rx  # ab x ap, bc x bp, ca x cp
    inside = (side >= 0).all(axis=0) | (side <= 0).all(axis=0)
    del side
    # distance to each edge segment: the nearest point's parameter t along it, clipped to [0, 1] (0 on
    # an edge of no length)
    denom = ex * ex + ey * ey
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip((rx * ex + ry * ey) / denom, 0.0, 1.0)
    t = np.where(denom > 0, t, 0.0)
    dx, dy = rx - t * ex, ry - t * ey
    edge = np.sqrt(dx * dx + dy * dy).min(axis=0)  # (core.rotation.norm's sum of squares)
    return np.where(known, np.where(inside, 0.0, edge), np.nan)


def inside_distance(p: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Signed distance (n,) of points p (n, 2) inside a convex polygon (m, 2 or 3): + inside, -
    outside, NaN where the point is NaN (:func:`inside_distances` of one outline).

    Outside, this is minus the largest distance beyond an edge line (exact except
    beyond a corner, where it is slightly smaller than the true distance).
    """
    return inside_distances(p, [polygon])[:, 0]


def inside_distances(xy: np.ndarray, outlines: list[np.ndarray]) -> np.ndarray:
    """(n, m) signed distance of points (n, 2) inside each convex plate outline (+ inside), NaN
    where the point is NaN: for each edge, sgn (ex (py - cy) - ey (px - cx)) / |e|, the left
    normal of a counter-clockwise outline pointing inside, and the smallest over the edges. All
    outlines at once when they have as many corners (every plate), in chunks of points; the points
    along the last axis of the temporaries (m, k, chunk), where numpy's loops run long."""
    xy = np.asarray(xy, float)
    if len({len(c) for c in outlines}) > 1:
        return np.concatenate([inside_distances(xy, [c]) for c in outlines], axis=1)
    out = np.full((xy.shape[0], len(outlines)), np.nan)
    if not outlines:
        return out
    ok = finite_rows(xy)
    every = ok.all()  # (the usual case: the points are not gathered, nor their distances scattered back)
    poly = np.array([np.asarray(c, float)[:, :2] for c in outlines])  # (m, k, 2)
    sgn, ex, ey, ln = _edges(poly.shape, poly.tobytes())
    cx, cy = poly[..., 0, None], poly[..., 1, None]  # (m, k, 1)
    px, py = (xy if every else xy[ok]).T
    dist = np.empty((len(outlines), px.size))
    for a in range(0, px.size, 65536):  # (m, k, chunk) temporaries: bounded for hour-long trials
        rx = np.subtract(px[a:a + 65536], cx)
        ry = np.subtract(py[a:a + 65536], cy)
        ry *= ex
        rx *= ey
        ry -= rx
        ry *= sgn
        ry /= ln
        dist[:, a:a + 65536] = ry.min(axis=1)
    if every:
        out[:] = dist.T
    else:
        out[ok] = dist.T
    return out


@lru_cache(maxsize=64)
def _edges(shape: tuple[int, ...], corners: bytes) -> tuple[np.ndarray, ...]:
    """Orientation sign (m, 1, 1), edge vectors' x and y (m, k, 1) and lengths (m, k, 1) of outlines
    (m, k, 2) given as bytes: a trial's plates are the same in every call (read-only arrays)."""
    poly = np.frombuffer(corners).reshape(shape)
    x, y = poly[..., 0], poly[..., 1]
    area = 0.5 * np.sum(x * np.roll(y, -1, axis=1) - np.roll(x, -1, axis=1) * y, axis=1)
    if np.any(np.abs(area) < 1e-12):
        raise DataError("degenerate force-plate outline (zero area corners)")
    e = np.roll(poly, -1, axis=1) - poly  # (m, k, 2) edges
    out = (np.where(area > 0, 1.0, -1.0)[:, None, None], e[..., 0, None], e[..., 1, None],
           np.linalg.norm(e, axis=2)[..., None])
    for a in out:
        a.setflags(write=False)
    return out
