"""Marker positions in the unit their file says: a person's markers span decimetres to metres.

A C3D whose POINT:UNITS says 'm' while its numbers are millimetres (or a TRC whose ``Units`` is
wrong) makes every marker 1000 times too far apart: segment lengths of hundreds of metres and
kinetics off by orders of magnitude. Read in the stated unit, the markers of one frame of a
person span between about 0.1 m (one foot's markers) and 2.5 m (a whole body); a wall-mounted
reference marker can stretch a frame to a few metres. :func:`check_marker_extent` refuses a trial
whose typical frame spans less than :data:`MIN_EXTENT_M` or more than :data:`MAX_EXTENT_M`, far
outside both (a factor 1000 or 10 from the edge of what a person shows), naming the unit field.
"""

from __future__ import annotations

import os
import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.signal import median

MIN_EXTENT_M = 0.03  # 3 cm: one foot's markers read in m span 0.15 m; read mm as m: 0.00015 m
MAX_EXTENT_M = 50.0  # a whole body in mm read as m spans about 1,800 m; a large lab's frame 10-15 m


def marker_extent(markers: np.ndarray) -> float:
    """The median over frames (at most 200, evenly spread) of a frame's extent (m): the largest of its
    markers' x, y and z ranges. Frames with fewer than three markers are left out; NaN when no frame
    has three."""
    markers = markers[:: max(1, markers.shape[0] // 200)]  # 200 frames tell a median as well as all
    usable = np.isfinite(markers[..., 0]).sum(axis=1) >= 3  # (n_frames,)
    if not usable.any():
        return float("nan")
    if not usable.all():  # (a boolean selection copies even when it keeps every frame)
        markers = markers[usable]
    # (markers, frames, 3), as the reader stores them (a copy only for another layout): reduced across the
    # markers a row at a time, not along a short last axis element by element (3-4x faster; max/min exact)
    m = np.ascontiguousarray(markers.transpose(1, 0, 2))
    extent = np.fmax.reduce(m, axis=0) - np.fmin.reduce(m, axis=0)  # (frames, 3): NaN samples ignored
    return median(extent.max(axis=1))


def check_marker_extent(markers: np.ndarray, unit: str, field: str, path: str | os.PathLike | None) -> None:
    """DataError when the markers (n_frames, n_markers, 3), already in m from ``unit``, span a frame
    far less or far more than a person does: the unit (``field``, e.g. 'POINT:UNITS') is wrong."""
    extent = marker_extent(markers)
    if not np.isfinite(extent) or MIN_EXTENT_M <= extent <= MAX_EXTENT_M:
        return
    likely = "mm" if extent > MAX_EXTENT_M else "m"
    raise DataError(f"the markers of a frame span {extent:,.4g} m when read in {field} = '{unit}' (a person's "
                    f"markers span 0.1-2.5 m): the unit is wrong (the numbers look like {likely}); fix {field} in "
                    "the file", path)
