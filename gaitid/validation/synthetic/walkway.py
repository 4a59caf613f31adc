"""A long overground walk: the sample walk continued for any number of strides along
a walkway with force plates every few metres, for scaling benchmarks (1x, 10x, 100x, 1000x the
sample's 380 frames) and archive-size tests.

The motion is the sample walk's (same curves and pelvis path, so the same exact truth per
stride); only its length and the plates change. Plates come in pairs like the sample's (0.6 x
0.4 m type-2 plates; the first under a right stance, the second, turned by 180 degrees, under the
next left stance), a pair every ``plate_every`` strides (about 4.9 m at 4 strides), at most
``max_plate_pairs`` pairs (the analog data grow with plates x samples, so an hour-long walk keeps
a bounded number of plates by default); every other stance lands on the floor between plates
(truth ``*_contact`` = 2). Each plate carries whatever the pressure-patch rule puts on it
(gaitid.validation.synthetic.plate_split), so a foot near a plate's edge is split physically.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gaitid.core.errors import GaitIDError
from gaitid.validation.synthetic.body import fit_pelvis_path
from gaitid.validation.synthetic.fourier import joint_curves
from gaitid.validation.synthetic.ground import PLATE_ORIGINS, PLATE_SIZE
from gaitid.validation.synthetic.params import GaitParams
from gaitid.validation.synthetic.plate_split import PlateOutline, rectangle_corners
from gaitid.validation.synthetic.scenario import GeneratedTrial, GroundModel, Scenario, Support, generate

SAMPLE_FRAMES = 380  # the sample walk's length: "1x" of the scaling benchmark


@dataclass(frozen=True)
class WalkwayParams:
    """Long-walk settings: ``n_frames`` at the gait's point rate; plate pairs under the right strike
    of strides ``first_plated``, ``first_plated + plate_every``, ... (at most ``max_plate_pairs``;
    None: as many as the walk has)."""

    n_frames: int = SAMPLE_FRAMES * 10
    plate_every: int = 4
    first_plated: int = 1
    max_plate_pairs: int | None = 4

    def __post_init__(self):
        if self.n_frames < 2 or self.plate_every < 1 or self.first_plated < 0:
            raise GaitIDError("walkway: n_frames >= 2, plate_every >= 1 and first_plated >= 0 are required")
        if self.max_plate_pairs is not None and self.max_plate_pairs < 0:
            raise GaitIDError("walkway: max_plate_pairs must be >= 0 or None")


def walkway_scenario(wp: WalkwayParams | None = None, gait: GaitParams | None = None) -> Scenario:
    """The long walk's :class:`Scenario` (module doc)."""
    wp = wp or WalkwayParams()
    base = gait or GaitParams()
    g = replace(base, n_frames=wp.n_frames, plated_strike=0)
    curves = joint_curves(g)
    path = fit_pelvis_path(g, curves)
    scn = Scenario("walkway", g, curves, path, [], GroundModel(), _floor)
    T, beta = g.stride_time, g.stance_fraction
    end = (g.n_frames - 1) / g.point_rate
    ks = []
    k = wp.first_plated
    while (wp.max_plate_pairs is None or len(ks) < wp.max_plate_pairs) and g.first_strike + (k + 0.5 + beta) * T <= end:
        ks.append(k)  # the pair's left stance ends inside the trial
        k += wp.plate_every
    # as the sample walk: each plate centred (to the mm) on its stance's COP range at the analog rate
    fa = g.analog_rate
    m = int(np.round(beta * T * fa)) + 1
    centres = {}
    for side, t0 in (("R", g.first_strike), ("L", g.first_strike + T / 2)):
        if not ks:
            break
        t = np.concatenate([(np.round((t0 + k * T) * fa) + np.arange(m)) / fa for k in ks])
        cop = scn.foot_load(t, scn.kinematics(t), side).grf.cop[:, 0].reshape(len(ks), m)
        centres[side] = np.round((np.nanmin(cop, axis=1) + np.nanmax(cop, axis=1)) / 2.0, 3)
    a, b = PLATE_SIZE[0] / 2.0, PLATE_SIZE[1] / 2.0
    plates = []
    for j in range(len(ks)):
        for i, side in enumerate(("R", "L")):
            cx = float(centres[side][j])
            plates.append(PlateOutline(rectangle_corners(cx - a, cx + a, -b, b, 0.0, x_forward=(i == 0)),
                                       PLATE_ORIGINS[i].copy()))
    scn.plates = plates
    scn.notes = {"walking_speed_m_s": path.x.slope, "plated_strides": ks}
    return scn


def _floor(t: np.ndarray, kin: dict, side: str) -> Support:
    return Support(np.zeros(len(t)))


def make_walkway_trial(n_frames: int = SAMPLE_FRAMES * 10, gait: GaitParams | None = None, **kwargs) -> GeneratedTrial:
    """Generate a long walk in memory; ``kwargs``: the other :class:`WalkwayParams` fields."""
    return generate(walkway_scenario(WalkwayParams(n_frames=n_frames, **kwargs), gait))


def write_walkway(path, n_frames: int = SAMPLE_FRAMES * 10, gait: GaitParams | None = None, truth: bool = True,
                  **kwargs):
    """Write a long walk (C3D, truth CSV if ``truth``, events CSV, segments JSON) block by block.
    ``n_frames = 380 * m`` gives the "m x" trial of the scaling benchmark."""
    from gaitid.validation.synthetic.write import write_scenario

    return write_scenario(walkway_scenario(WalkwayParams(n_frames=n_frames, **kwargs), gait), path, truth=truth)
