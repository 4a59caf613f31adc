"""Synthetic functional calibration trials with exact truth: a hip star arc and a knee flexion.

Built from a static trial's mean marker positions (the synthetic static or a real one): every
marker of one leg is turned about a known hip centre (the star arc: flexion-extension,
ab-adduction at another frequency, a little axial rotation) or the shank and foot markers about
a known knee axis (flexion from 0 to the range while the thigh swings 10 deg), while the whole
body sways with the pelvis (2 deg, 1 cm). Then each leg marker gets a soft-tissue artefact: a
displacement in its segment's frame proportional to the joint angles, ``sta_mm`` at the extremes
of the motion (thigh markers in a hip trial, shank markers in a knee trial; half of it on the
other segment), within the 10-30 mm reported for the thigh and under 15 mm for the shank
(Leardini et al. 2005, Gait Posture 21:212; Camomilla et al. 2017, J Biomech 62:77 review), and
white noise ``noise_mm`` on every coordinate (Merriaux et al. 2017: under 1 mm).

Truth: the hip centre in the Plug-in Gait pelvis frame (default: Harrington et al. 2007 from the
static's pelvis width and depth), the knee axis as a unit vector in the lab at the static pose
(the pelvis's y axis, pointing left) through a point 57 mm medial to KNE. :func:`with_clusters`
adds CGM2-style technical markers (THAP, THAD, TIAP, TIAD) to a static so SCoRE and SARA run on
rigid clusters of four (else the sphere and circle fits of Plug-in Gait's two markers run).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from gaitid.core.trial import Trial
from gaitid.model.frames import pelvis_frame
from gaitid.model.joint_centres import harrington_hip_centre

THIGH = ("THI", "KNE", "THAP", "THAD")
SHANK = ("TIB", "ANK", "TIAP", "TIAD", "HEE", "TOE")  # the foot moves with the shank in a knee trial
KNEE_OFFSET_M = 0.057  # KNE to the axis: half a 100 mm knee width plus a 7 mm marker radius


@dataclass(frozen=True)
class FunctionalTruth:
    """What a synthetic functional trial was built from: hip centres (pelvis frame, m) and knee
    axes (unit, lab at the static pose) with a point on each (lab at the static pose, m)."""

    hip_centres: dict[str, np.ndarray]
    knee_axes: dict[str, np.ndarray]
    knee_points: dict[str, np.ndarray]


def _mean(static: Trial) -> dict[str, np.ndarray]:
    return {label: np.nanmean(static.markers[:, i], axis=0) for i, label in enumerate(static.marker_labels)}


def _pelvis(pos: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    sacrum = pos["SACR"] if "SACR" in pos else (pos["LPSI"] + pos["RPSI"]) / 2
    origin, R = pelvis_frame(pos["LASI"][None], pos["RASI"][None], sacrum[None])
    return origin[0], R[0]


def truth_of(static: Trial, hip_centres: dict[str, np.ndarray] | None = None) -> FunctionalTruth:
    """The truth the trials of :func:`functional_trial` use for ``static``."""
    pos = _mean(static)
    _, R = _pelvis(pos)
    if hip_centres is None:
        width = np.linalg.norm(pos["LASI"] - pos["RASI"])
        sacrum = pos["SACR"] if "SACR" in pos else (pos["LPSI"] + pos["RPSI"]) / 2
        depth = np.linalg.norm((pos["LASI"] + pos["RASI"]) / 2 - sacrum)
        hip_centres = {s: harrington_hip_centre(width, depth, s) for s in ("Left", "Right")}
    axes, points = {}, {}
    for side, pre, sign in (("Left", "L", 1.0), ("Right", "R", -1.0)):
        axes[side] = R[:, 1].copy()
        points[side] = pos[pre + "KNE"] - sign * KNEE_OFFSET_M * R[:, 1]
    return FunctionalTruth({s: np.asarray(c, float) for s, c in hip_centres.items()}, axes, points)


def with_clusters(static: Trial) -> Trial:
    """The static with CGM2-style technical markers added on each thigh (THAP, THAD) and shank
    (TIAP, TIAD): 60-80 mm in front of THI/KNE and TIB/ANK, off their lines."""
    pos = _mean(static)
    _, R = _pelvis(pos)
    fwd, up = R[:, 0], R[:, 2]
    new = {}
    for pre in ("L", "R"):
        new[pre + "THAP"] = pos[pre + "THI"] + 0.07 * fwd + 0.03 * up
        new[pre + "THAD"] = pos[pre + "KNE"] + 0.06 * fwd + 0.10 * up
        new[pre + "TIAP"] = pos[pre + "TIB"] + 0.06 * fwd + 0.04 * up
        new[pre + "TIAD"] = pos[pre + "ANK"] + 0.05 * fwd + 0.12 * up
    labels = list(static.marker_labels) + list(new)
    extra = np.broadcast_to(np.stack(list(new.values()))[None], (static.n_frames, len(new), 3))
    return replace(static, marker_labels=labels, markers=np.concatenate([static.markers, extra], axis=1))


def _rot(rotvec: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """Rotations (n, 3, 3) in the lab from rotation vectors (n, 3) given in ``basis``'s axes."""
    return Rotation.from_rotvec(rotvec @ basis.T).as_matrix()


def _turn(Q: np.ndarray, x: np.ndarray, pivot: np.ndarray) -> np.ndarray:
    return np.einsum("nij,nj->ni", Q, x - pivot) + pivot


def functional_trial(static: Trial, kind: str = "hip", sides=("Left", "Right"), range_deg: float = 45.0,
                     noise_mm: float = 0.5, sta_mm: float = 10.0, duration_s: float = 20.0, rate: float = 100.0,
                     seed: int = 0, truth: FunctionalTruth | None = None, path: str | Path | None = None
                     ) -> tuple[Trial, FunctionalTruth]:
    """A synthetic hip (``kind='hip'``) or knee (``'knee'``) calibration trial moving the legs of
    ``sides`` (one after the other, each for half the time when both), ``range_deg`` the
    flexion span (hip ab-adduction 0.75 of it). Returns (Trial, truth). Markers absent or NaN in
    the static are absent in the trial."""
    if kind not in ("hip", "knee"):
        raise ValueError(f"kind must be 'hip' or 'knee', not {kind!r}")
    truth = truth or truth_of(static)
    rng = np.random.default_rng(seed)
    pos = _mean(static)
    labels = [x for x in static.marker_labels if np.isfinite(pos[x]).all()]
    origin, R0 = _pelvis(pos)
    n = round(duration_s * rate)
    t = np.arange(n) / rate
    w = 2 * np.pi / 4.0  # a 4 s cycle
    X = {x: np.broadcast_to(pos[x], (n, 3)).copy() for x in labels}
    parts = np.array_split(np.arange(n), len(sides))
    for side, frames in zip(sides, parts):
        pre, sign = side[0], (1.0 if side == "Left" else -1.0)
        hip = origin + R0 @ truth.hip_centres[side]
        tt = t[frames] - t[frames][0]
        a = np.radians(range_deg)
        if kind == "hip":
            flex, abd = a / 2 * np.sin(w * tt), 0.75 * a / 2 * np.sin(1.6 * w * tt + 1.0)
            rotvec = np.stack([sign * abd, -flex, np.radians(5) * np.sin(0.7 * w * tt)], axis=1)
            knee_angle = np.zeros_like(tt)
        else:
            flex, abd = np.radians(10) * np.sin(0.5 * w * tt), np.zeros_like(tt)
            rotvec = np.stack([abd, -flex, np.zeros_like(tt)], axis=1)
            knee_angle = a * (1 - np.cos(w * tt)) / 2
        Q_hip = _rot(rotvec, R0)
        Q_knee = _rot(knee_angle[:, None] * truth.knee_axes[side][None] @ R0, R0)  # about the axis (lab)
        shape = np.stack([flex / max(np.abs(flex).max(), 1e-9), abd / max(np.abs(abd).max(), 1e-9),
                          knee_angle / max(np.abs(knee_angle).max(), 1e-9)], axis=1)
        for x in labels:
            if len(x) < 2 or x[0] != pre or (x[1:] not in THIGH and x[1:] not in SHANK):
                continue
            p = X[x][frames]
            on_shank = x[1:] in SHANK
            if on_shank:
                p = _turn(Q_knee, p, truth.knee_points[side])
            p = _turn(Q_hip, p, hip)
            main = (kind == "hip") != on_shank  # the segment the trial moves most carries the full artefact
            size = sta_mm * 1e-3 * (1.0 if main else 0.5)
            gains = rng.normal(size=(3, 3)) / np.sqrt(3) * size  # per angle, a displacement (segment axes)
            seg_R = np.einsum("nij,jk->nik", Q_hip if not on_shank else Q_hip @ Q_knee, R0)
            X[x][frames] = p + np.einsum("nij,nj->ni", seg_R, shape @ gains)
    sway = _rot(np.stack([np.radians(1.5) * np.sin(0.4 * t), np.radians(2) * np.sin(0.3 * t), np.zeros(n)], 1), R0)
    shift = 0.01 * np.stack([np.sin(0.25 * t), np.cos(0.2 * t), np.zeros(n)], axis=1)
    markers = np.stack([_turn(sway, X[x], origin) + shift for x in labels], axis=1)
    markers += rng.normal(scale=noise_mm * 1e-3, size=markers.shape)
    name = Path(path) if path else Path(f"synthetic_{kind}_functional.c3d")
    trial = Trial(name, rate, 1, labels, markers, subject=static.subject)
    return trial, truth



def write_functional(trial: Trial, path: str | Path) -> Path:
    """Write a synthetic functional trial as a C3D (markers only, mm; the subject's mass as
    PROCESSING Bodymass when known, so the static pairing sees one subject)."""
    from gaitid.validation.synthetic.write import write_markers

    markers = {x: trial.markers[:, i] for i, x in enumerate(trial.marker_labels)}
    return write_markers(markers, trial.point_rate, {"Bodymass": trial.subject.mass} if trial.subject.mass else {},
                         path)
