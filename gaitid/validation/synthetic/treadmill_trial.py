"""A walk on an instrumented treadmill: the synthetic walker of :mod:`.sample_trial` on two
belts, each over its own force plate, moving backwards at the walking speed.

The motion is the overground walk seen from a frame moving with the belts (a Galilean change of
frame: pelvis x minus v t), so every acceleration, hence every joint load, is the walk's: the
pelvis stays in place (mean lab velocity 0) and each stance foot moves backwards at the belt
speed v. Two layouts:

- ``"split"`` (default): belts side by side along X, each ``plate_size`` = (1.8 m long along X,
  0.5 m wide along Y), the belt line at y = ``line`` (0: under the body's midline); plate 1 the
  right belt, plate 2 the left. The step is widened by ``step_widening`` (each foot 2 cm further
  out than overground) so normal steps stay on their own belt; the steps listed in ``crossings``
  land ``crossing_shift`` (m) closer to the midline: the foot straddles the belt line (its load on
  both belts) and, in the double supports around it, both feet load the same belt.
- ``"single"``: one belt, ``plate_size`` = (1.8 m along X, 0.6 m along Y) centred on y = ``line``,
  under both feet: every double support loads the one plate with both feet (no crossings, no
  widening: the overground walk's steps).
- ``"tandem"``: one belt behind the other (plate 1 front, x > line; plate 2 rear), each 0.9 m
  along X and 0.6 m wide; every stance crosses the line (heel on the rear belt, forefoot on
  the front one in mid-stance).

Foot placement changes happen in swing only (C2 ramps of hip adduction, with the opposite ankle
inversion keeping the foot flat), so the stance feet never slide sideways on the belts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from gaitid.core.errors import GaitIDError
from gaitid.validation.synthetic.body import PelvisPath, fit_pelvis_path
from gaitid.validation.synthetic.fourier import CurveSum, Fourier, Ramps, joint_curves
from gaitid.validation.synthetic.params import GaitParams
from gaitid.validation.synthetic.plate_split import PlateOutline, rectangle_corners
from gaitid.validation.synthetic.scenario import GeneratedTrial, GroundModel, Scenario, Support, generate

LEVER = 0.93  # m, hip joint centre to sole: a hip adduction of a rad moves the foot about LEVER * a medially
DEFAULT_CROSSINGS = (("L", 3), ("R", 6), ("L", 9))
LAYOUTS = ("split", "tandem", "single")
PLATE_ORIGINS_MM = (np.array([1.5, -2.0, -38.0]), np.array([-1.0, 1.5, -41.0]))


@dataclass(frozen=True)
class TreadmillParams:
    """Treadmill trial settings (SI). ``crossings``: (side, stride index k) of the steps that land
    ``crossing_shift`` m closer to the midline (side R strike k at first_strike + k stride_time, L
    half a stride later), repeated every ``crossing_period`` strides (None: once). ``line``: the
    belt line's y (split) or x (tandem, relative to the middle of the feet's travel) in m."""

    duration_s: float = 12.0
    layout: str = "split"
    plate_size: tuple[float, float] | None = None  # (along X, along Y) m; default per layout
    line: float = 0.0
    step_widening: float = 0.02
    crossings: tuple[tuple[str, int], ...] = DEFAULT_CROSSINGS
    crossing_shift: float = 0.075
    crossing_period: int | None = 10

    def __post_init__(self):
        if self.layout not in LAYOUTS:
            raise GaitIDError(f"treadmill layout must be one of {', '.join(map(repr, LAYOUTS))}, not {self.layout!r}")
        if not self.duration_s > 0.0:
            raise GaitIDError(f"treadmill duration must be positive, not {self.duration_s}")
        if any(s not in ("L", "R") or k < 0 for s, k in self.crossings):
            raise GaitIDError("treadmill crossings must be (side 'L' or 'R', stride index >= 0)")


def _crossing_ramps(gait: GaitParams, tp: TreadmillParams, side: str) -> Ramps:
    """Extra hip adduction (rad) of ``side``: +a during the crossing steps, ramped in the swings around them."""
    T, beta = gait.stride_time, gait.stance_fraction
    end = (gait.n_frames - 1) / gait.point_rate
    n_strides = int(end / T) + 2
    ks = sorted({k for s, k in tp.crossings if s == side})
    if tp.crossing_period:
        ks = sorted({k + j * tp.crossing_period for k in ks for j in range(n_strides // tp.crossing_period + 1)})
    ks = [k for k in ks if k <= n_strides]
    a = tp.crossing_shift / LEVER
    t0 = gait.first_strike + (0.0 if side == "R" else T / 2.0)
    starts, ends, deltas = [], [], []
    for k in ks:
        strike = t0 + k * T
        prev_off = strike - T + beta * T
        if starts and prev_off < ends[-1] + 1e-12:  # consecutive crossing steps: stay in
            ends.pop(), starts.pop(), deltas.pop()
        else:
            starts.append(prev_off), ends.append(strike), deltas.append(a)
        starts.append(strike + beta * T), ends.append(strike + T), deltas.append(-a)
    return Ramps(np.array(starts, float), np.array(ends, float), np.array(deltas, float))


def treadmill_scenario(tp: TreadmillParams | None = None, gait: GaitParams | None = None) -> Scenario:
    """The treadmill trial's :class:`Scenario` (see the module doc)."""
    tp = tp or TreadmillParams()
    base = gait or GaitParams()
    n_frames = int(round(tp.duration_s * base.point_rate))  # frames at t = 0 .. duration - 1/rate
    gait = replace(base, n_frames=n_frames, plated_strike=0)
    curves = joint_curves(gait)
    path = fit_pelvis_path(gait, curves)
    speed = path.x.slope
    path = PelvisPath(Fourier(path.x.period, path.x.a0, path.x.a, path.x.b, 0.0, path.x.shift), path.y, path.z)
    widen = -tp.step_widening / LEVER if tp.layout == "split" else 0.0
    for side in ("R", "L"):
        ramps = _crossing_ramps(gait, tp, side) if tp.layout == "split" else Ramps(np.zeros(0), np.zeros(0), np.zeros(0))
        const = Fourier(gait.stride_time, widen, np.zeros(1), np.zeros(1))
        neg = Ramps(ramps.start, ramps.end, -ramps.delta)
        curves[f"{side}_hip_add"] = CurveSum((curves[f"{side}_hip_add"], const, ramps))
        curves[f"{side}_ankle_inv"] = CurveSum((curves[f"{side}_ankle_inv"],
                                                Fourier(gait.stride_time, -widen, np.zeros(1), np.zeros(1)), neg))
    # the feet's travel on the belts (foot-frame sole from -0.05 to 0.17 m), over one stride
    scn = Scenario(f"treadmill-{tp.layout}", gait, curves, path, [], GroundModel(), _floor,
                   notes={"belt_speed_m_s": speed, "layout": tp.layout})
    t = gait.first_strike + np.arange(200) * gait.stride_time / 200.0
    kin = scn.kinematics(t)
    xs = []
    for side in ("R", "L"):
        on = ~np.isnan(scn.stance_phase(t, side))
        for x in (-0.05, 0.17):
            xs.append(kin[f"{side}_foot"].point(np.array([x, 0.0, -gait.ankle_height]))[0][on, 0])
    xs = np.concatenate(xs)
    xc = float(np.round((xs.min() + xs.max()) / 2.0, 3))
    if tp.layout == "split":
        L, W = tp.plate_size or (1.8, 0.5)
        y = tp.line
        outlines = [rectangle_corners(xc - L / 2, xc + L / 2, y - W, y, 0.0),
                    rectangle_corners(xc - L / 2, xc + L / 2, y, y + W, 0.0)]
    elif tp.layout == "single":
        L, W = tp.plate_size or (1.8, 0.6)
        outlines = [rectangle_corners(xc - L / 2, xc + L / 2, tp.line - W / 2, tp.line + W / 2, 0.0)]
    else:
        L, W = tp.plate_size or (0.9, 0.6)
        x = xc + tp.line
        outlines = [rectangle_corners(x, x + L, -W / 2, W / 2, 0.0), rectangle_corners(x - L, x, -W / 2, W / 2, 0.0)]
    scn.plates = [PlateOutline(c, o) for c, o in zip(outlines, PLATE_ORIGINS_MM)]
    scn.notes["feet_travel_x_m"] = (float(xs.min()), float(xs.max()))
    return scn


def _floor(t: np.ndarray, kin: dict, side: str) -> Support:
    return Support(np.zeros(len(t)))


def make_treadmill_trial(duration_s: float = 12.0, layout: str = "split", gait: GaitParams | None = None,
                         **kwargs) -> GeneratedTrial:
    """Generate a treadmill trial in memory (markers, plate channels, events, exact truth).
    ``kwargs``: the other :class:`TreadmillParams` fields. For long trials use :func:`write_treadmill`."""
    return generate(treadmill_scenario(TreadmillParams(duration_s=duration_s, layout=layout, **kwargs), gait))


def write_treadmill(path, duration_s: float = 12.0, layout: str = "split", gait: GaitParams | None = None,
                    truth: bool = True, **kwargs):
    """Write a treadmill trial: ``path`` (C3D, 100 Hz markers, 1000 Hz belts as type-2 plates),
    ``<stem>_truth.csv`` (if ``truth``), ``<stem>_events.csv``, ``<stem>_segments.json``; generated in
    blocks (bounded memory besides the C3D arrays), bit-for-bit reproducible. Returns the paths."""
    from gaitid.validation.synthetic.write import write_scenario

    scn = treadmill_scenario(TreadmillParams(duration_s=duration_s, layout=layout, **kwargs), gait)
    return write_scenario(scn, path, truth=truth)
