"""The skew-symmetric (cross-product) operator, batch-first.

``skew(v) @ w == np.cross(v, w)`` for every frame (seed 000, definition of S(v)).
"""

from __future__ import annotations

import numpy as np

from gaitid.core.errors import DataError


def skew(v: np.ndarray) -> np.ndarray:
    """S(v): the (..., 3, 3) skew-symmetric matrices of the (..., 3) vectors ``v``.

    S(v) = [[0, -vz, vy], [vz, 0, -vx], [-vy, vx, 0]], so that S(v) w = v x w
    (seed 000, eq. for S). Works on a single vector (3,) or a batch (n, 3); the
    result is in the same frame as ``v``. NaN components give NaN entries (the
    zero diagonal stays 0).
    """
    v = np.asarray(v, dtype=float)
    if v.shape[-1:] != (3,):
        raise DataError(f"skew: expected vectors of shape (..., 3), got {v.shape}")
    out = np.zeros(v.shape + (3,), dtype=float)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    out[..., 0, 1] = -z
    out[..., 0, 2] = y
    out[..., 1, 0] = z
    out[..., 1, 2] = -x
    out[..., 2, 0] = -y
    out[..., 2, 1] = x
    return out
