"""Cross-check against OpenSim inverse dynamics (Gait2392, ``InverseDynamicsOutput.sto``).

OpenSim reports a generalised force per coordinate: the net internal joint moment projected
on the joint's axis. For ``hip_flexion``, ``knee_angle`` and ``ankle_angle`` of Gait2392 the
axis is (close to) the joint's medio-lateral axis pointing to the subject's RIGHT on both
sides, so a positive value is a hip flexor, knee extensor and ankle dorsiflexor moment
(``ankle_angle_r_moment`` < 0: plantarflexor). gaitid's segments have y pointing LEFT, so the
comparable number is

    M_sag = -M_internal_lab . y_axis_lab

with y the proximal segment's medio-lateral axis (pelvis for the hip, thigh for the knee,
shank for the ankle), M the internal net moment of the proximal on the distal segment.
This does not depend on how :class:`~gaitid.pipeline.Result` labels its components.

:func:`opensim_crosscheck` runs the OpenSim example (subject01_walk1.trc and its GRF,
subject01_static.trc for the clusters, 72.6 kg) through ``models/isb-cast.toml`` and the
solver and returns both curves and the figures (Pearson r, peaks per sign, RMS) per joint
over each foot's stance inside the reference's time range. See docs/opensim-crosscheck.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaitid.dynamics import inverse_dynamics
from gaitid.io.mot import read_sto
from gaitid.io.opensim import plate_sides, read_opensim_trial
from gaitid.model.build import ModelKinematics, build_segments
from gaitid.pipeline import filtered_load
from gaitid.plates import FootLoad

JOINT_COLUMNS = {"ankle": "ankle_angle_{s}_moment", "knee": "knee_angle_{s}_moment", "hip": "hip_flexion_{s}_moment"}
CONTACT_N = 20.0  # N: a foot is in stance while its vertical GRF exceeds this


def sagittal_moment(moment_lab: np.ndarray, R_axis: np.ndarray) -> np.ndarray:
    """Moment (n,) N.m about the medio-lateral axis pointing right (OpenSim's sign) from an
    internal net moment (n, 3) N.m in the lab and the rotation (n, 3, 3) whose y axis (left)
    is the joint's flexion axis."""
    return -np.einsum("ni,ni->n", moment_lab, R_axis[:, :, 1])


@dataclass
class JointComparison:
    """One joint on one side over stance: Pearson r, RMS difference (N.m), peaks (N.m) of each
    sign (ours, OpenSim) and their relative differences ((ours - ref) / |ref|)."""

    r: float
    rms: float
    peak_neg: tuple[float, float]
    peak_pos: tuple[float, float]

    @property
    def peak_neg_diff(self) -> float:
        return (self.peak_neg[0] - self.peak_neg[1]) / abs(self.peak_neg[1])

    @property
    def peak_pos_diff(self) -> float:
        return (self.peak_pos[0] - self.peak_pos[1]) / abs(self.peak_pos[1])


@dataclass
class CrossCheck:
    """Curves on the reference's clock (s): ``ours[side][joint]``, ``reference[side][joint]``
    (N.m, OpenSim signs), ``stance[side]`` (bool), and ``figures[side][joint]``."""

    time: np.ndarray
    ours: dict[str, dict[str, np.ndarray]]
    reference: dict[str, dict[str, np.ndarray]]
    stance: dict[str, np.ndarray]
    figures: dict[str, dict[str, JointComparison]]
    kinematics: ModelKinematics
    warnings: list[str] = field(default_factory=list)


def compare(ours: np.ndarray, ref: np.ndarray) -> JointComparison:
    """Figures for two curves (same samples, N.m)."""
    ok = np.isfinite(ours) & np.isfinite(ref)
    a, b = ours[ok], ref[ok]
    return JointComparison(float(np.corrcoef(a, b)[0, 1]), float(np.sqrt(np.mean((a - b) ** 2))),
                           (float(a.min()), float(b.min())), (float(a.max()), float(b.max())))


def opensim_crosscheck(folder: str | Path, model: str = "isb-cast", mass: float = 72.6,
                       marker_cutoff_hz: float | None = 6.0, force_cutoff_hz: float | None = None) -> CrossCheck:
    """Process OpenSim's subject01 example in ``folder`` and compare with its ID output.

    Markers low-pass at ``marker_cutoff_hz`` (OpenSim filtered the coordinates at 6 Hz);
    the GRF unfiltered by default, as OpenSim's ID applied it."""
    folder = Path(folder)
    xml = folder / "subject01_walk1_grf.xml"
    trial = read_opensim_trial(folder / "subject01_walk1.trc", external_loads_xml=xml, mass=mass)
    static = read_opensim_trial(folder / "subject01_static.trc", mass=mass)
    ref = read_sto(folder / "InverseDynamicsOutput.sto")
    mk = build_segments(trial, model, static=static, marker_cutoff_hz=marker_cutoff_hz)
    sides = plate_sides(xml)
    t = trial.time
    out = CrossCheck(ref.time, {}, {}, {}, {}, mk, list(mk.warnings))
    for plate in trial.force_plates:
        side = sides[plate.index]
        w = plate.point
        on = np.isfinite(w.cop).all(axis=1) & (w.force[:, 2] > CONTACT_N)
        zero = np.zeros_like(w.force)
        load = FootLoad(side, np.where(on[:, None], w.force, zero), np.where(on[:, None], w.cop, zero),
                        np.where(on[:, None], w.free_moment, zero), np.where(on, "plate", "swing"))
        chain = mk[side]
        jl = inverse_dynamics(chain, [filtered_load(load, trial.point_rate, force_cutoff_hz, 4)], frame="lab",
                              convention="internal", proximal_R=mk.root.R)
        axes = {"ankle": chain[1].R, "knee": chain[2].R, "hip": mk.root.R}
        s = side[0]
        out.stance[side] = np.interp(ref.time, t, on.astype(float)) > 0.5
        out.ours[side], out.reference[side], out.figures[side] = {}, {}, {}
        for j, joint in enumerate(("ankle", "knee", "hip")):
            ours = np.interp(ref.time, t, sagittal_moment(jl.moment[j], axes[joint]))
            reference = ref.column(JOINT_COLUMNS[joint].format(s=s))
            out.ours[side][joint], out.reference[side][joint] = ours, reference
            st = out.stance[side]
            out.figures[side][joint] = compare(ours[st], reference[st])
    return out
