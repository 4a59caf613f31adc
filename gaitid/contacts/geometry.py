"""Horizontal geometry for plate assignment: points against foot triangles and plate outlines (m, lab XY)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.rotation import norm
from gaitid.core.signal import finite_rows


def distance_to_triangle(p: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Horizontal distance (n,) from points p to triangles abc (all (n, 2), or (..., n, 2) alike), 0
    inside; NaN if any NaN. The three edges in one pass, each edge vector and each p - corner computed
    once (the side tests use them too)."""
    p, a, b, c = np.broadcast_arrays(p, a, b, c)
    edges = np.stack([b - a, c - b, a - c])  # ab, bc, ca: (3, ..., n, 2)
    rel = np.stack([p - a, p - b, p - c])  # p from each edge's start
    side = edges[..., 0] * rel[..., 1] - edges[..., 1] * rel[..., 0]  # ab x ap, bc x bp, ca x cp
    inside = (side >= 0).all(axis=0) | (side <= 0).all(axis=0)
    # distance to each edge segment: the nearest point's parameter t along it, clipped to [0, 1]
    denom = np.einsum("...i,...i->...", edges, edges)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.clip(np.einsum("...i,...i->...", rel, edges) / np.where(denom > 0, denom, np.nan), 0.0, 1.0)
    t = np.where(denom > 0, t, 0.0)
    edge = norm(rel - t[..., None] * edges).min(axis=0)
    out = np.where(inside, 0.0, edge)
    bad = ~(finite_rows(p) & finite_rows(a) & finite_rows(b) & finite_rows(c))
    return np.where(bad, np.nan, out)


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
    poly = np.stack([np.asarray(c, float)[:, :2] for c in outlines])  # (m, k, 2)
    sgn, ex, ey, ln = _edges(poly.shape, poly.tobytes())
    cx, cy = poly[..., 0, None], poly[..., 1, None]  # (m, k, 1)
    px, py = xy[ok].T
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
