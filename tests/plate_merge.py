"""Two force plates of a real trial merged into one virtual plate: what a single large plate (or one
treadmill belt) would have measured under the same steps, with the truth known from the originals.

The merged plate's wrench, at both rates, lab frame: force F = F_a + F_b (N); moment about the lab
origin M = sum(p_i x F_i + T_i) (a plate whose centre of pressure is undefined, below the reader's
COP threshold, applies its small force at its outline's centre); re-expressed as F at the centre of
pressure on the plane z0 (the plates' mean surface height), p_x = (z0 F_x - M_y) / F_z,
p_y = (M_x + z0 F_y) / F_z, with the free moment Tz = M_z - (p_x F_y - p_y F_x) (COP and free
moment NaN where |F_z| < ``cop_threshold``). Its outline spans both plates (the rectangle, along
the lab's X and Y, holding the eight corners, at z0). Used by ``tests/test_shared_plates.py`` and
``benchmarks/bench_shared_plates.py``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gaitid.core.trial import ForcePlate, PlateWrench, Trial
from gaitid.core.vocabulary import COP_THRESHOLD_N

#: real overground trials with two plates loaded in the same double supports (each foot on its own
#: plate), and the two plates to merge
MERGES = {
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": (1, 2),
    "btkdata/PiG_Motion3_FF.c3d": (1, 2),
    "btkdata/FunctionalWalk.c3d": (1, 2),
    "btkdata/PlugInC3D.c3d": (1, 2),
    "biomechzoo/HC030A05.c3d": (1, 2),
    "c3d-parser/MH0222_BP06.c3d": (2, 3),
    "python-gaitalytics/test_small.c3d": (1, 2),
    "ezc3d-testfiles/Qualisys.c3d": (1, 2),
    "btkdata/Gait.c3d": (1, 2),
    "opensim-core/walking2.c3d": (1, 2),
}


def merged_wrench(a: PlateWrench, b: PlateWrench, centre_a: np.ndarray, centre_b: np.ndarray, z0: float,
                  cop_threshold: float = COP_THRESHOLD_N) -> PlateWrench:
    """The sum of two plates' wrenches (same rate and length) as one plate's: see the module docstring."""
    F = a.force + b.force  # NaN where either sample is
    M = np.zeros_like(F)
    for w, c in ((a, centre_a), (b, centre_b)):
        p = np.where(np.all(np.isfinite(w.cop), axis=1, keepdims=True), w.cop, c)
        M += np.cross(p, w.force) + np.nan_to_num(w.free_moment)
    fz = F[:, 2]
    with np.errstate(invalid="ignore", divide="ignore"):
        good = np.abs(fz) >= cop_threshold
        px = np.where(good, (z0 * F[:, 0] - M[:, 1]) / fz, np.nan)
        py = np.where(good, (M[:, 0] + z0 * F[:, 1]) / fz, np.nan)
    cop = np.column_stack([px, py, np.where(good, z0, np.nan)])
    tz = M[:, 2] - (px * F[:, 1] - py * F[:, 0])
    free = np.column_stack([np.where(good, 0.0, np.nan), np.where(good, 0.0, np.nan), tz])
    return PlateWrench(a.rate, F, cop, free)


def merge_plates(trial: Trial, a: int, b: int) -> Trial:
    """A copy of ``trial`` whose plates ``a`` and ``b`` (1-based indices) are one plate, index ``a``, in
    ``a``'s place (the input is not touched)."""
    fps = {fp.index: fp for fp in trial.force_plates}
    pa, pb = fps[a], fps[b]
    corners = np.concatenate([pa.corners, pb.corners])
    z0 = float(np.mean(corners[:, 2]))
    lo, hi = corners[:, :2].min(axis=0), corners[:, :2].max(axis=0)
    outline = np.array([[hi[0], hi[1], z0], [lo[0], hi[1], z0], [lo[0], lo[1], z0], [hi[0], lo[1], z0]])
    ca, cb = pa.centre, pb.centre
    merged = ForcePlate(a, pa.type, outline, pa.origin, pa.channels + pb.channels,
                        merged_wrench(pa.analog, pb.analog, ca, cb, z0), merged_wrench(pa.point, pb.point, ca, cb, z0))
    plates = [merged if fp.index == a else fp for fp in trial.force_plates if fp.index != b]
    return replace(trial, force_plates=plates)
