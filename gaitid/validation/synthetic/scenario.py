"""Generic assembly of a synthetic trial with exact truth, shared by the treadmill, stair and long
walkway trials: a :class:`Scenario` (the analytic motion, the ground-reaction model, the plates)
is evaluated in blocks of frames (bounded memory, cost linear in trial length, no per-frame
Python loops) into markers, plate channels, events and the truth table.

Per side, per frame: the ground reaction of the foot (:class:`FootLoad`), split over the plates
by the pressure-patch rule of :mod:`gaitid.validation.synthetic.plate_split`; the joint loads from the twist-wrench
RNEA (:func:`gaitid.validation.synthetic.truth.rnea_leg`); the contact code:

- 0 swing;
- 1 stance, its whole load measured: every part of it is on a plate and no plate under it
  carries the other foot (the condition for gaitid to report that foot's kinetics);
- 2 stance with some of its load on no plate (not measured);
- 3 stance wholly on plates, but one of them also carries the other foot (mixed: not measurable).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from gaitid.validation.synthetic.body import Frame, PelvisPath, body_kinematics, marker_trajectories
from gaitid.validation.synthetic.ground import FREE_MOMENT, GRF_AIM_OFFSET, GRF_C3, GroundReaction
from gaitid.validation.synthetic.params import COP_END, COP_START, SIDE_SIGN, SIDES, G, GaitParams
from gaitid.validation.synthetic.plate_split import (
    PATCH_HALF_LENGTH,
    PATCH_HALF_WIDTH,
    SOLE_FRONT,
    SOLE_REAR,
    PlateOutline,
    PlateShare,
    plate_wrench_channels,
    pressure_patch,
    split_load,
    wrench_about_origin,
)
from gaitid.validation.synthetic.truth import LegLoads, leg_truth_columns, rnea_leg

MAX_C3D_EVENTS = 255  # a C3D parameter dimension is one byte: EVENT:LABELS holds at most 255 entries


def linear_cop(start: float = COP_START, end: float = COP_END) -> Callable[[np.ndarray, str], np.ndarray]:
    """COP travel along the sole (foot-frame x, m) linear in stance progress, as in the walk."""
    return lambda s, side: start + (end - start) * s


@dataclass(frozen=True)
class GroundModel:
    """Shape of each stance's ground reaction (s = stance progress 0..1, BW = body weight):

    Fz = BW (c1 sin(pi s) + c2 sin(2 pi s) + c3 sin(3 pi s)), c1 set so that over a stride the two
    feet's vertical impulse is BW x stride time (c2 moves load between the halves of stance and
    has no impulse); the force points from the COP at ``aim_offset`` (m, lab) from the mid-point
    of the hip joint centres; free moment Tz = -s_side free_moment BW sin(2 pi s) (N.m, s_side
    +1 left); COP at foot-frame x = ``cop_x(s, side)`` (m) along the sole, on the support surface."""

    c2: float = 0.0
    c3: float = GRF_C3
    aim_offset: tuple = tuple(GRF_AIM_OFFSET)
    free_moment: float = FREE_MOMENT
    cop_x: Callable[[np.ndarray, str], np.ndarray] = field(default_factory=linear_cop)

    def c1(self, stance_fraction: float) -> float:
        return float(np.pi / 2.0 * (1.0 / (2.0 * stance_fraction) - 2.0 * self.c3 / (3.0 * np.pi)))


@dataclass
class Support:
    """What a stance foot stands on, per sample: ``height`` (n,) m of the surface (NaN in swing),
    ``tread`` (n, 4) m (xmin, xmax, ymin, ymax) of the step under it, or None on an open floor."""

    height: np.ndarray
    tread: np.ndarray | None = None


@dataclass
class FootLoad:
    """One foot's ground reaction (lab) and its pressure patch (n, 4, 2) m (lab xy, zeros in swing)."""

    grf: GroundReaction
    support_height: np.ndarray
    patch: np.ndarray


@dataclass
class Scenario:
    """Everything a synthetic trial is computed from (SI, lab Z up).

    params: subject, stride timing, rates, number of frames. curves: joint and pelvis angle curves
    (rad; objects with ``derivs(t)`` and ``__call__(t, d)``). path: pelvis origin. plates: the
    force plates in C3D order. ground: the stance load model. support(t, kin, side): what the
    foot stands on. name: the trial kind (C3D TRIAL description, file names)."""

    name: str
    params: GaitParams
    curves: dict
    path: PelvisPath
    plates: list[PlateOutline]
    ground: GroundModel
    support: Callable[[np.ndarray, dict, str], Support]
    notes: dict = field(default_factory=dict)

    def stance_phase(self, t: np.ndarray, side: str) -> np.ndarray:
        p = self.params
        t0 = p.first_strike + (0.0 if side == "R" else p.stride_time / 2.0)
        ph = np.mod(t - t0, p.stride_time) / (p.stride_time * p.stance_fraction)
        return np.where(ph <= 1.0, ph, np.nan)

    def events(self) -> list[tuple[str, str, float]]:
        """Foot Strike / Foot Off of both sides inside the trial, sorted by time (s, frame-aligned)."""
        p = self.params
        end = (p.n_frames - 1) / p.point_rate
        out = []
        n_strides = int(end / p.stride_time) + 3
        k = np.arange(-2, n_strides)
        for side, ctx in (("R", "Right"), ("L", "Left")):
            t0 = p.first_strike + (0.0 if side == "R" else p.stride_time / 2.0)
            for label, dt in (("Foot Strike", 0.0), ("Foot Off", p.stance_fraction * p.stride_time)):
                t = np.round((t0 + k * p.stride_time + dt) * p.point_rate) / p.point_rate
                out += [(label, ctx, float(x)) for x in t[(t >= 0.0) & (t <= end)]]
        return sorted(out, key=lambda e: (e[2], e[1]))

    def kinematics(self, t: np.ndarray, derivatives: bool = True) -> dict[str, Frame]:
        return body_kinematics(self.params, t, self.curves, self.path, derivatives)

    def foot_load(self, t: np.ndarray, kin: dict[str, Frame], side: str) -> FootLoad:
        """The exact ground reaction on ``side``'s foot at times ``t`` and its pressure patch."""
        p, gm = self.params, self.ground
        foot = kin[f"{side}_foot"]
        s = self.stance_phase(t, side)
        on = ~np.isnan(s)
        sz = np.where(on, s, 0.0)
        bw = p.mass * G
        fz = bw * (gm.c1(p.stance_fraction) * np.sin(np.pi * sz) + gm.c2 * np.sin(2 * np.pi * sz)
                   + gm.c3 * np.sin(3 * np.pi * sz))
        sup = self.support(t, kin, side)
        height = np.where(on, sup.height, np.nan)
        x_sole = gm.cop_x(sz, side)
        local = np.column_stack([x_sole, np.zeros_like(sz), np.full_like(sz, -p.ankle_height)])
        cop = foot.o + np.einsum("nij,nj->ni", foot.R, local)
        cop[:, 2] = np.where(on, height, 0.0)
        aim = (kin["R_thigh"].o + kin["L_thigh"].o) / 2.0 + np.asarray(gm.aim_offset)
        d = aim - cop
        force = np.where(on[:, None], fz[:, None] * d / d[:, 2:3], 0.0)
        tz = -SIDE_SIGN[side] * gm.free_moment * bw * np.sin(2 * np.pi * sz)
        free = np.column_stack([np.zeros_like(tz), np.zeros_like(tz), np.where(on, tz, 0.0)])
        cop[~on] = np.nan
        grf = GroundReaction(force, cop, free, s)
        # pressure patch: along the foot's heading, within the supported part of the sole
        heading = foot.R[:, :2, 0]
        heading = heading / np.linalg.norm(heading, axis=1, keepdims=True)
        ends = []
        for x in (SOLE_REAR, SOLE_FRONT):
            pt = foot.o + np.einsum("nij,j->ni", foot.R, np.array([x, 0.0, -p.ankle_height]))
            ends.append(np.einsum("ni,ni->n", pt[:, :2] - np.nan_to_num(cop[:, :2]), heading))
        rear, front = ends
        if sup.tread is not None:  # both long edges of the patch must stay on the tread
            across = np.column_stack([-heading[:, 1], heading[:, 0]])
            for off in (-PATCH_HALF_WIDTH, PATCH_HALF_WIDTH):
                lo, hi = _tread_limits(np.nan_to_num(cop[:, :2]) + off * across, heading, sup.tread)
                rear, front = np.maximum(rear, lo), np.minimum(front, hi)
        half = np.clip(np.minimum(np.minimum(-rear, front), PATCH_HALF_LENGTH), 0.0, None)
        patch = pressure_patch(np.nan_to_num(cop), heading, np.where(on, half, 0.0))
        patch[~on] = 0.0
        return FootLoad(grf, height, patch)


def _tread_limits(c: np.ndarray, u: np.ndarray, tread: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Signed distances (n,) from points c along unit directions u to where the line leaves the
    rectangle ``tread`` (n, 4) = (xmin, xmax, ymin, ymax) backwards (negative) and forwards."""
    lo = np.full(len(c), -np.inf)
    hi = np.full(len(c), np.inf)
    for k, (a, b) in enumerate(((0, 1), (2, 3))):
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = (tread[:, a] - c[:, k]) / u[:, k]
            t2 = (tread[:, b] - c[:, k]) / u[:, k]
        small = np.abs(u[:, k]) < 1e-12
        lo = np.where(small, lo, np.maximum(lo, np.minimum(t1, t2)))
        hi = np.where(small, hi, np.minimum(hi, np.maximum(t1, t2)))
    return lo, hi


# --------------------------------------------------------------------------------- evaluation


@dataclass
class Block:
    """A block of point frames of a scenario, evaluated (lab, SI).

    time (n,) s; markers label -> (n, 3) m; kinematics (segment frames); grf side ->
    GroundReaction; truth side -> LegLoads (RNEA); shares side -> [PlateShare per plate];
    off_plate side -> (n,) share of the load on no plate; contact side -> (n,) code (module doc)."""

    time: np.ndarray
    markers: dict[str, np.ndarray]
    kinematics: dict[str, Frame]
    grf: dict[str, GroundReaction]
    truth: dict[str, LegLoads]
    shares: dict[str, list[PlateShare]]
    off_plate: dict[str, np.ndarray]
    contact: dict[str, np.ndarray]


def contact_codes(grf: dict[str, GroundReaction], shares: dict[str, list[PlateShare]],
                  off: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Contact code per side (module doc)."""
    out = {}
    for side in SIDES:
        other = "L" if side == "R" else "R"
        stance = ~np.isnan(grf[side].phase)
        mixed = np.zeros(len(stance), bool)
        for mine, theirs in zip(shares[side], shares[other]):
            mixed |= (mine.share > 0) & (theirs.share > 0)
        code = np.where(stance, np.where(off[side] > 0, 2, np.where(mixed, 3, 1)), 0)
        out[side] = code.astype(np.int64)
    return out


def evaluate_block(scn: Scenario, frames: np.ndarray) -> Block:
    """Evaluate point frames ``frames`` (0-based indices) of the scenario."""
    p = scn.params
    t = frames / p.point_rate
    kin = scn.kinematics(t)
    markers = marker_trajectories(p, kin)
    grf, shares, off, truth = {}, {}, {}, {}
    for side in SIDES:
        fl = scn.foot_load(t, kin, side)
        grf[side] = fl.grf
        shares[side], off[side] = split_load(fl.grf.force, fl.grf.cop, fl.grf.free_moment, fl.patch, scn.plates,
                                             fl.support_height)
        truth[side] = rnea_leg(p, t, scn.curves, scn.path, kin, fl.grf, side)
    return Block(t, markers, kin, grf, truth, shares, off, contact_codes(grf, shares, off))


def analog_block(scn: Scenario, samples: np.ndarray) -> np.ndarray:
    """Plate channels (n, 6 x n_plates) at analog samples ``samples`` (0-based): per plate Fx Fy Fz
    (N), Mx My Mz (N.mm), plate frame, the exact sum of the loads of both feet on it."""
    p = scn.params
    t = samples / p.analog_rate
    kin = scn.kinematics(t, derivatives=False)  # the loads need poses only
    force = [np.zeros((len(t), 3)) for _ in scn.plates]
    moment = [np.zeros((len(t), 3)) for _ in scn.plates]
    for side in SIDES:
        fl = scn.foot_load(t, kin, side)
        parts, _ = split_load(fl.grf.force, fl.grf.cop, fl.grf.free_moment, fl.patch, scn.plates, fl.support_height)
        for i, sh in enumerate(parts):
            force[i] += sh.force
            moment[i] += wrench_about_origin(sh)
    return np.concatenate([plate_wrench_channels(f, m, pl) for f, m, pl in zip(force, moment, scn.plates)], axis=1)


def truth_columns(scn: Scenario, block: Block, first_frame: int) -> dict[str, np.ndarray]:
    """The truth table's columns for a block (units in the names; see docs/synthetic.md)."""
    xyz = "xyz"
    n = len(block.time)
    cols: dict[str, np.ndarray] = {"frame": np.arange(first_frame + 1, first_frame + n + 1), "time_s": block.time}
    for side in SIDES:
        cols[f"{side}_contact"] = block.contact[side]
        on = [str(i + 1) for i in range(len(scn.plates))]
        names = np.array([""] * n, dtype=object)
        for i, sh in enumerate(block.shares[side]):
            has = sh.share > 0
            names = np.where(has, np.where(names == "", on[i], names + "+" + on[i]), names)
        cols[f"{side}_plates"] = names
        cols[f"{side}_off_plate_share"] = block.off_plate[side]
    for side in SIDES:
        leg_truth_columns(cols, side, block.time, block.kinematics, block.truth[side], block.grf[side], scn.curves)
    for i, _ in enumerate(scn.plates, start=1):
        for side in SIDES:
            sh = block.shares[side][i - 1]
            for c in range(3):
                cols[f"plate{i}_{side}_force_lab_{xyz[c]}_N"] = sh.force[:, c]
            for c in range(3):
                cols[f"plate{i}_{side}_cop_lab_{xyz[c]}_m"] = sh.cop[:, c]
            cols[f"plate{i}_{side}_free_moment_lab_z_Nm"] = sh.free_moment[:, 2]
            cols[f"plate{i}_{side}_share"] = sh.share
    return cols


def blocks(n: int, size: int):
    """Index ranges [start, stop) covering 0..n in blocks of ``size``."""
    for start in range(0, n, size):
        yield start, min(n, start + size)


def subject_processing(p: GaitParams) -> dict[str, float]:
    """The Vicon PROCESSING subject parameters (kg, mm) of the generated subject."""
    return {
        "Bodymass": p.mass, "Height": p.height * 1000, "LLegLength": p.leg_length * 1000,
        "RLegLength": p.leg_length * 1000, "LKneeWidth": p.knee_width * 1000, "RKneeWidth": p.knee_width * 1000,
        "LAnkleWidth": p.ankle_width * 1000, "RAnkleWidth": p.ankle_width * 1000,
        "InterAsisDistance": p.inter_asis * 1000, "MarkerDiameter": p.marker_diameter * 1000,
    }


@dataclass
class GeneratedTrial:
    """A whole scenario evaluated in memory (for tests and short trials): the point-rate
    :class:`Block` of every frame, the plate channels ``analog`` (n_analog, 6 x n_plates) and
    the events. Long trials are written block by block instead (gaitid.validation.synthetic.write.write_scenario)."""

    scenario: Scenario
    block: Block
    analog: np.ndarray
    events: list[tuple[str, str, float]]

    @property
    def params(self) -> GaitParams:
        return self.scenario.params

    def truth_table(self):
        import pandas as pd

        return pd.DataFrame(truth_columns(self.scenario, self.block, 0))


def generate(scn: Scenario) -> GeneratedTrial:
    """Evaluate every frame and analog sample of ``scn`` (in memory)."""
    p = scn.params
    ratio = int(round(p.analog_rate / p.point_rate))
    return GeneratedTrial(scn, evaluate_block(scn, np.arange(p.n_frames, dtype=float)),
                          analog_block(scn, np.arange(p.n_frames * ratio, dtype=float)), scn.events())
