"""Ground-truth joint loads: the twist-wrench RNEA of gaitid.dynamics.multibody.screw (seed 003) on a
screw chain per leg, and a plain Newton-Euler recursion as its cross-check."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.validation.synthetic.body import Frame, PelvisPath
from gaitid.validation.synthetic.fourier import Fourier
from gaitid.validation.synthetic.ground import GroundReaction
from gaitid.validation.synthetic.params import (
    DISTAL,
    GRAVITY_LAB,
    JOINTS,
    SEGMENTS,
    SIDE_SIGN,
    GaitParams,
    davis_hjc,
    segment_parameters,
)


@dataclass
class LegLoads:
    """Joint loads of one leg (ankle, knee, hip), each (n, 3): reaction force of the proximal on
    the distal segment (lab, N) and net internal moment about the joint centre (lab, N.m)."""

    force_lab: dict[str, np.ndarray]
    moment_lab: dict[str, np.ndarray]


def segment_com_motion(p: GaitParams, kin: dict[str, Frame], side: str) -> dict[str, tuple]:
    """(com, com_acc) lab of thigh, shank, foot of ``side``."""
    sp = segment_parameters(p)
    out = {}
    for seg in SEGMENTS:
        pos, _, acc = kin[f"{side}_{seg}"].point(sp[seg]["com_seg"])
        out[seg] = (pos, acc)
    return out


def newton_euler_leg(p: GaitParams, kin: dict[str, Frame], grf: GroundReaction, side: str) -> LegLoads:
    """Plain distal-to-proximal Newton-Euler (Winter 2009 ch. 5) from exact kinematics.

    Per segment: F_prox = m a_com - m g - F_dist_ext; M_prox = dH/dt - sum r x F - M_ext, with
    dH/dt = R (I alpha_seg + omega_seg x I omega_seg) about the COM; loads of the distal joint
    enter with opposite sign.
    """
    sp = segment_parameters(p)
    com = segment_com_motion(p, kin, side)
    F_ext, M_ext, P_ext = grf.force, grf.free_moment, np.where(np.isnan(grf.cop), 0.0, grf.cop)
    forces, moments = {}, {}
    joint_of = {"foot": "ankle", "shank": "knee", "thigh": "hip"}
    for seg in ("foot", "shank", "thigh"):
        f = kin[f"{side}_{seg}"]
        m, inertia = sp[seg]["mass"], sp[seg]["inertia_seg"]
        c, a = com[seg]
        w = np.einsum("nji,nj->ni", f.R, f.omega)
        al = np.einsum("nji,nj->ni", f.R, f.alpha)
        hdot = np.einsum("nij,nj->ni", f.R, al @ inertia.T + np.cross(w, w @ inertia.T))
        F = m * a - m * GRAVITY_LAB - F_ext
        M = hdot - np.cross(f.o - c, F) - np.cross(P_ext - c, F_ext) - M_ext
        j = joint_of[seg]
        forces[j], moments[j] = F, M
        F_ext, M_ext, P_ext = -F, -M, f.o  # the joint load on the next segment, at this joint centre
    return LegLoads(forces, moments)


def screw_chain_leg(p: GaitParams, side: str):
    """The leg as an open chain in twist-wrench form (seed 003), for gaitid.dynamics.multibody.screw.

    Joints: 3 prismatic (pelvis translation, lab x y z), pelvis Rz Rx Ry, hip Ry Rx Rz,
    knee Ry Rx Rz, ankle Ry Rx Rz (15 joints). At theta = 0 every frame is aligned with the lab
    and the pelvis origin is at the lab origin. Massless links except the thigh (after the
    hip's 3rd joint), shank (knee 3rd) and foot (ankle 3rd); link frames at the COMs; tip frame
    at the foot COM. Returns (chain, index of thigh/shank/foot links).
    """
    from gaitid.dynamics.multibody.screw import ScrewChain, spatial_inertia

    sp = segment_parameters(p)
    hjc = davis_hjc(p, side)
    kjc = hjc + np.array([0.0, 0.0, -p.thigh_length])
    ajc = kjc + np.array([0.0, 0.0, -p.shank_length])
    centres = {"thigh": hjc + sp["thigh"]["com_seg"], "shank": kjc + sp["shank"]["com_seg"], "foot": ajc + sp["foot"]["com_seg"]}
    eye = np.eye(3)
    S, frames, G_list = [], [], []  # frames: position of link frame i at theta = 0
    for k in range(3):
        S.append(np.concatenate([np.zeros(3), eye[k]]))
        frames.append(np.zeros(3))
    for axis in (2, 0, 1):
        S.append(np.concatenate([eye[axis], np.zeros(3)]))
        frames.append(np.zeros(3))
    links = {}
    for seg, q in (("thigh", hjc), ("shank", kjc), ("foot", ajc)):
        for axis in (1, 0, 2):
            S.append(np.concatenate([eye[axis], -np.cross(eye[axis], q)]))
            frames.append(q)
        frames[-1] = centres[seg]
        links[seg] = len(S) - 1
    n = len(S)
    for i in range(n):
        seg = next((k for k, v in links.items() if v == i), None)
        G_list.append(spatial_inertia(sp[seg]["mass"], sp[seg]["inertia_seg"]) if seg else np.zeros((6, 6)))
    M_list = np.zeros((n + 1, 4, 4))
    prev = np.zeros(3)
    for i, pos in enumerate(frames + [frames[-1]]):
        M_list[i] = np.eye(4)
        M_list[i, :3, 3] = pos - prev
        prev = pos
    return ScrewChain(M_list, np.stack(G_list), np.stack(S)), links


def _joint_coordinates(p: GaitParams, t: np.ndarray, curves: dict[str, Fourier], path: PelvisPath, side: str):
    """theta, theta', theta'' (n, 15) of :func:`screw_chain_leg` from the exact curves."""
    s = SIDE_SIGN[side]
    spec = [("pelvis_rot", 1.0), ("pelvis_obl", 1.0), ("pelvis_tilt", 1.0),
            (f"{side}_hip_flex", -1.0), (f"{side}_hip_add", -s), (f"{side}_hip_rot", -s),
            (f"{side}_knee_flex", 1.0), (f"{side}_knee_var", -s), (f"{side}_knee_rot", -s),
            (f"{side}_ankle_dorsi", -1.0), (f"{side}_ankle_inv", -s), (f"{side}_ankle_add", -s)]
    cache: dict = {}
    pos = path.derivs(t, cache)
    vals = [curves[name].derivs(t, cache) for name, _ in spec]
    out = []
    for d in (0, 1, 2):
        cols = [pos[d]] + [sign * v[d][:, None] for (_, sign), v in zip(spec, vals)]
        out.append(np.concatenate(cols, axis=1))
    return out


def rnea_leg(p: GaitParams, t: np.ndarray, curves, path, kin, grf: GroundReaction, side: str) -> LegLoads:
    """Ground truth: joint loads from the twist-wrench RNEA of gaitid.dynamics.multibody.screw (seed 003 9.53-9.57).

    The ground reaction enters as the tip wrench (what the foot exerts on the floor, foot-COM
    frame, moment about the foot COM: minus the floor's load)."""
    from gaitid.dynamics.multibody.screw import rnea, wrench_in_base

    chain, links = screw_chain_leg(p, side)
    th, dth, ddth = _joint_coordinates(p, t, curves, path, side)
    foot = kin[f"{side}_foot"]
    com_f = foot.point(segment_parameters(p)["foot"]["com_seg"])[0]
    cop = np.where(np.isnan(grf.cop), 0.0, grf.cop)
    m_lab = np.cross(cop - com_f, grf.force) + grf.free_moment
    Rt = np.swapaxes(foot.R, 1, 2)
    F_tip = -np.concatenate([np.einsum("nij,nj->ni", Rt, m_lab), np.einsum("nij,nj->ni", Rt, grf.force)], axis=1)
    res = rnea(chain, th, dth, ddth, g=GRAVITY_LAB, F_tip=F_tip)
    forces, moments = {}, {}
    for joint, seg in (("ankle", "foot"), ("knee", "shank"), ("hip", "thigh")):
        centre = kin[f"{side}_{seg}"].o
        f, m = wrench_in_base(res.wrench[:, links[seg]], res.T_0i[:, links[seg]], centre)
        forces[joint], moments[joint] = f, m
    return LegLoads(forces, moments)


ANGLE_NAMES = ("hip_flex", "hip_add", "hip_rot", "knee_flex", "knee_var", "knee_rot",
               "ankle_dorsi", "ankle_inv", "ankle_add")


def leg_truth_columns(cols: dict, side: str, time: np.ndarray, kin: dict[str, Frame], loads: LegLoads,
                      grf: GroundReaction, curves: dict) -> None:
    """Add one leg's truth-table columns to ``cols`` (units in the names): per joint J the reaction
    force and net internal moment (lab), the moment in the distal segment's frame and the joint
    centre; the ground reaction on the foot; the generating joint angles (deg)."""
    xyz = "xyz"
    centres = {"hip": kin[f"{side}_thigh"].o, "knee": kin[f"{side}_shank"].o, "ankle": kin[f"{side}_foot"].o}
    for joint in JOINTS:
        R = kin[f"{side}_{DISTAL[joint]}"].R
        m_lab = loads.moment_lab[joint]
        blocks = [("force_lab", loads.force_lab[joint], "N"), ("moment_lab", m_lab, "Nm"),
                  (f"moment_{DISTAL[joint]}", np.einsum("nji,nj->ni", R, m_lab), "Nm"),
                  ("centre_lab", centres[joint], "m")]
        for name, arr, unit in blocks:
            for k in range(3):
                cols[f"{side}_{joint}_{name}_{xyz[k]}_{unit}"] = arr[:, k]
    for k in range(3):
        cols[f"{side}_grf_lab_{xyz[k]}_N"] = grf.force[:, k]
    for k in range(3):
        cols[f"{side}_cop_lab_{xyz[k]}_m"] = grf.cop[:, k]
    cols[f"{side}_free_moment_lab_z_Nm"] = grf.free_moment[:, 2]
    for name in ANGLE_NAMES:
        cols[f"{side}_{name}_deg"] = np.rad2deg(curves[f"{side}_{name}"](time))


def segment_motions(p: GaitParams, kin: dict[str, Frame], side: str):
    """The exact kinematics of one leg as gaitid.dynamics inputs: (Chain, [SegmentMotion]) of the
    foot, shank and thigh (for checking the truth against gaitid's own solvers)."""
    from gaitid.dynamics import Body, Chain, SegmentMotion

    sp = segment_parameters(p)
    bodies, out = [], []
    for seg in ("foot", "shank", "thigh"):
        fr = kin[f"{side}_{seg}"]
        com, _, acc = fr.point(sp[seg]["com_seg"])
        Rt = np.swapaxes(fr.R, 1, 2)
        distal = {"foot": np.full_like(com, np.nan), "shank": kin[f"{side}_foot"].o, "thigh": kin[f"{side}_shank"].o}[seg]
        bodies.append(Body(seg, sp[seg]["mass"], sp[seg]["inertia_seg"]))
        out.append(SegmentMotion(fr.R, com, acc, np.einsum("nij,nj->ni", Rt, fr.omega),
                                 np.einsum("nij,nj->ni", Rt, fr.alpha), fr.o, distal))
    return Chain(tuple(bodies)), out
