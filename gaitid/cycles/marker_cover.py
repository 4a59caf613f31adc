"""Which cycles the markers cover: a cycle needs the segment poses (pelvis, and the thigh, shank
and foot of its side) over all its frames. Where the markers leave a gap the cycle's curves are
NaN there; :func:`mark_uncovered` says so in the cycle's ``reason`` and the cycle is not kinetic
(its joint moments and powers are not computed over the gap).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from gaitid.core.trial import Trial
from gaitid.cycles.curves import Cycle


def covered_frames(frames: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """{side: (n,) bool}: the frames where the pelvis and that side's segments all have a pose
    (``frames``: the model's segment rotations, 'pelvis', 'left.thigh'... (n, 3, 3))."""
    out = {}
    for side in ("Left", "Right"):
        names = [n for n in frames if n == "pelvis" or n.startswith(side.lower() + ".")]
        if names:
            out[side] = np.all([np.isfinite(frames[n]).all(axis=(1, 2)) for n in names], axis=0)
    return out


def mark_uncovered(cycles: list[Cycle], trial: Trial, covered: Mapping[str, np.ndarray]) -> list[Cycle]:
    """The ``cycles`` (the same objects, fresh from :func:`~gaitid.cycles.curves.gait_cycles`), each
    with a frame of its side uncovered (:func:`covered_frames`) marked: the reason names the share of
    its frames without markers and the first and last of them, and the cycle is not kinetic. Each
    cycle's frames are counted from a running sum, so the cost is linear in the trial's length
    whatever the number of cycles."""
    t = trial.time
    for side, ok in covered.items():
        mine = [c for c in cycles if c.side == side]
        if not mine:
            continue
        missing = np.concatenate([[0], np.cumsum(~ok)])
        lo = np.searchsorted(t, np.array([c.start_time for c in mine]) - 1e-9, side="left")
        hi = np.searchsorted(t, np.array([c.end_time for c in mine]) + 1e-9, side="right")
        count = missing[hi] - missing[lo]
        for k in np.flatnonzero(count):  # only the cycles with a gap
            c, a, b = mine[k], lo[k], hi[k]
            gaps = a + np.flatnonzero(~ok[a:b])
            what = (f"markers missing over {100 * gaps.size / (b - a):.0f} % of the cycle (frames "
                    f"{trial.first_frame + gaps[0]}-{trial.first_frame + gaps[-1]}: no segment pose)")
            c.reason = f"{c.reason}; {what}" if c.reason else what  # why it is not kinetic, or why else
            c.kinetic = False
    return cycles
