"""Functional joint centres and axes from a lab's calibration trials (hip star arc, knee flexion).

The fits, each a linear least-squares problem over every frame at once (no per-frame loop):

- **SCoRE** (symmetrical centre of rotation estimation; Ehrig et al. 2006, J Biomech 39:2798):
  the hip centre is the point fixed in both the pelvis and the thigh. With the segments' poses
  (R_p, t_p), (R_t, t_t) (segment -> lab) on every frame i, it solves
  ``min sum_i |R_p,i c_p + t_p,i - R_t,i c_t - t_t,i|^2`` for c_p (pelvis frame) and c_t (thigh
  frame): the stacked system [R_p,i, -R_t,i] [c_p; c_t] = t_t,i - t_p,i. The residual is the RMS
  over frames of the distance between the two estimates of the centre (m).
- **SARA** (symmetrical axis of rotation approach; Ehrig et al. 2007, J Biomech 40:2150): the
  knee flexion axis, the line fixed in both thigh and shank: the same stacked matrix; the right
  singular vector of its smallest singular value gives the axis direction in each segment, the
  minimum-norm solution without it a point on the axis. The residual is the RMS distance between
  the two estimates of that point perpendicular to the axis.
- When a segment carries only two markers (Plug-in Gait's thigh THI, KNE; its shank TIB, ANK)
  its pose is undetermined about the line through them. The hip centre is then the common
  centre of the spheres the thigh markers describe in the pelvis frame (Gamage & Lasenby 2002,
  J Biomech 35:87: linear in the centre and r_k^2 - |c|^2, then refined geometrically, as the
  algebraic fit is biased by marker noise on short arcs, Halvorsen 2003); the knee axis the
  common normal of the circles the shank markers describe in the thigh frame (the smallest
  eigenvector of their summed scatter), through the circles' mean centre (each a linear circle
  fit, Kasa 1976). The fits themselves: :mod:`gaitid.model.centre_fits`.
  Residual: RMS of the markers' distances to their sphere or circle minus its radius.

A segment with three or more markers is posed by the rigid least-squares fit of
:func:`gaitid.model.clusters.rigid_fit` (Soderkvist & Wedin 1993) to its mean shape in its own
frame, refitted once to that mean (the optimal common shape of Taylor et al. 2005, J Orthop
Res 23:726, as Vicon Nexus implements it citing Taylor et al. 2010, Gait Posture 32:231: it
reduces the markers' deformation to an average shape). The Plug-in Gait thigh frame for the
knee trial is posed from THI, KNE and the hip centre already found.

Every fit says the range of motion it used: the relative rotation's spread along its principal
directions (deg, the 2.5-97.5 percentile span, largest first), and is refused when that range is
smaller than ``min_range_deg`` (the hip needs it in two directions: a one-plane swing leaves the
centre free along the axis; the knee in one), and warned when the residual exceeds
``max_residual_mm``. Hip centres are in the Plug-in Gait pelvis frame (origin mid-ASIS, x
forward, y from RASI to LASI, z up), m; knee axes are unit vectors in the lab at the static
pose (``lab_static``), pointing left: the static calibration turns Plug-in Gait's thigh onto
them (:func:`gaitid.model.calibration.functional_thigh_rotation`).

Each fit's quality: its residual, its range, and how far its markers' own fits disagree (the part
of a soft-tissue artefact that deforms the segment, which the residual of Plug-in Gait's two
markers barely shows; :func:`judged`). Length: the fits, their judgement and the session's choice
among them share :class:`JointFit` and the segments' poses; the fits themselves are in
:mod:`gaitid.model.centre_fits`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.trial import Trial
from gaitid.core.vocabulary import SIDES
from gaitid.model.centre_fits import (
    axis_spread,
    centre_spread,
    circle_axis,
    direction_ranges,
    pose,
    relative_ranges,
    sara,
    score,
    sphere_centre,
)
from gaitid.model.frames import pelvis_frame
from gaitid.model.joint_centres import harrington_hip_centre

MIN_RANGE_DEG = 20.0  # Ehrig et al. 2006: SCoRE's error grows fast below ~20 deg of motion
MAX_RESIDUAL_MM = 10.0  # docs/functional.md: SCoRE on clusters with 5 mm of soft-tissue artefact stays under 8 mm
MAX_SPREAD_MM = 10.0  # docs/functional.md: the thigh markers' own centres, noise alone <= 5.2 mm, 10 mm artefact >= 11.6
MAX_SPREAD_DEG = 1.0  # docs/functional.md: two shank markers' own axes, noise alone <= 0.4 deg, 10 mm artefact >= 1.2
MAX_KNEE_TURN_DEG = 45.0  # a knee axis this far off the pelvis's left-right axis at the static is not a knee's
MAX_REGRESSION_GAP_MM = 30.0  # Harrington's centre errs by 12.3 +- 5.9 mm (Mantovani et al. 2016, CT): mean + 3 SD
MAX_KNEE_GAP_MM = 30.0  # docs/functional.md: a knee axis this far from KNE (on the lateral epicondyle) at the static

THIGH = ("{S}THI", "{S}KNE", "{S}THAP", "{S}THAD")  # Plug-in Gait, and CGM2's extra thigh markers
SHANK = ("{S}TIB", "{S}ANK", "{S}TIAP", "{S}TIAD")  # Plug-in Gait, and CGM2's extra shank markers


@dataclass(frozen=True)
class JointFit:
    """One functional fit. ``joint``: 'hip' or 'knee'; ``method``: 'SCoRE', 'sphere fit', 'SARA',
    'circle fit'; ``centre`` (3,) m: the hip centre in the pelvis frame, or a point on the knee
    axis in the thigh's technical frame; ``axis`` (3,) the knee axis (unit) in the thigh's
    technical frame (None for a hip); ``residual_mm``; ``range_deg``: the principal ranges of
    motion used, largest first; ``frames``: frames used; ``status``: 'ok', 'warned' or 'refused'
    with ``reason``; ``trial``: the file's name. ``spread``: how far the markers' own fits
    disagree (:func:`~gaitid.model.centre_fits.centre_spread`, mm between the thigh markers'
    centres for a hip; :func:`~gaitid.model.centre_fits.axis_spread`, deg between the two shank
    markers' axes for a circle fit; NaN when not measured), between ``spread_markers``;
    ``turn_deg``: a knee axis's angle off the pelvis's left-right axis at the static pose;
    ``gap_mm``: a hip centre's distance from Harrington's regression centre of the same pelvis;
    a knee axis's distance from the knee marker (KNE) at the static pose."""

    joint: str
    side: str
    method: str
    centre: np.ndarray
    axis: np.ndarray | None
    residual_mm: float
    range_deg: tuple[float, ...]
    frames: int
    trial: str
    status: str = "ok"
    reason: str = ""
    axis_lab: np.ndarray | None = None  # knee: unit axis in the lab at the static pose, pointing left
    point_lab: np.ndarray | None = None  # knee: a point on the axis (m) in the lab at the static pose
    reference: np.ndarray | None = None  # knee: the thigh's technical markers (k, 3) m in its frame
    spread: float = math.nan
    spread_markers: tuple[str, ...] = ()
    turn_deg: float = math.nan
    gap_mm: float = math.nan

    @property
    def used_range(self) -> float:
        """The range the joint's fit needs: the second principal range for a hip, the first for a knee."""
        return self.range_deg[1 if self.joint == "hip" else 0] if self.range_deg else 0.0

    def describe(self) -> str:
        """``SCoRE on the hip trial HIP.c3d (residual 3.1 mm, range 62/41 deg, 2000 frames)``."""
        ranges = "/".join(f"{r:.0f}" for r in self.range_deg[:2])
        spread = "" if not math.isfinite(self.spread) else (
            f", markers' centres within {self.spread:.1f} mm" if self.joint == "hip"
            else f", markers' axes within {self.spread:.1f} deg")
        return (f"{self.method} on the {self.joint} trial {self.trial} (residual {self.residual_mm:.1f} mm{spread}, "
                f"range {ranges} deg, {self.frames} frames{'; ' + self.reason if self.reason else ''})")


@dataclass(frozen=True)
class FunctionalCalibration:
    """A session's functional calibration: the fits used per (joint, side), every fit tried
    (``tried``), which trial was found to be which (``kinds``: file name -> 'hip' / 'knee'),
    and what the user should know (``warnings``). Reusable for every walk of the session:
    ``process(walk, functional=calibration)``."""

    fits: dict[tuple[str, str], JointFit] = field(default_factory=dict)
    tried: tuple[JointFit, ...] = ()
    kinds: dict[str, str] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def notes(self) -> list[str]:
        """What the user should know: fits refused or warned, functional trials none of whose fits
        was used (which joint each was taken for, by its motion, is in each fit's source)."""
        used = {f.trial for f in self.fits.values()}
        unused = [f"functional trial {name}: taken for a {kind} trial by its motion, but none of its fits is used"
                  for name, kind in self.kinds.items() if name not in used]
        return unused + list(self.warnings)

    def subject_values(self) -> tuple[dict[str, float], dict[str, str]]:
        """({name: value}, {name: source}) for the subject record (``Subject.extra``): the hip
        centres ``hip_centre_left_x``... (m, Plug-in Gait pelvis frame), knee axes
        ``knee_axis_left_x``... (unit, lab at the static pose) and a point on each
        ``knee_axis_point_left_x``... (m, lab at the static pose), each fit's residual
        ``hip_centre_left_residual``... (m)."""
        values, sources = {}, {}
        for (joint, side), fit in self.fits.items():
            vec = fit.centre if joint == "hip" else fit.axis_lab
            if vec is None:
                continue
            stem = f"{'hip_centre' if joint == 'hip' else 'knee_axis'}_{side.lower()}"
            for a, v in zip("xyz", vec):
                values[f"{stem}_{a}"], sources[f"{stem}_{a}"] = float(v), fit.describe()
            values[f"{stem}_residual"], sources[f"{stem}_residual"] = fit.residual_mm / 1e3, fit.describe()
            if joint == "knee" and fit.point_lab is not None:
                for a, v in zip("xyz", fit.point_lab):
                    values[f"knee_axis_point_{side.lower()}_{a}"] = float(v)
                    sources[f"knee_axis_point_{side.lower()}_{a}"] = fit.describe()
        return values, sources


def _labels(trial: Trial, names, prefix: str) -> list[str]:
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    return [x.replace("{S}", prefix) for x in names if x.replace("{S}", prefix) in present]


def pelvis_pose(trial: Trial) -> tuple[np.ndarray, np.ndarray]:
    """(R, origin) of the Plug-in Gait pelvis on every frame (origin mid-ASIS, x forward, y left,
    z up): LASI, RASI and SACR or the mean of LPSI and RPSI."""
    present = set(trial.marker_labels) | set(trial.virtual_labels)
    if not {"LASI", "RASI"} <= present or not ({"SACR"} <= present or {"LPSI", "RPSI"} <= present):
        raise DataError("a functional calibration needs the pelvis markers LASI, RASI and SACR or LPSI and RPSI",
                        trial.path)
    sacrum = trial.point("SACR") if "SACR" in present else (trial.point("LPSI") + trial.point("RPSI")) / 2
    origin, R = pelvis_frame(trial.point("LASI"), trial.point("RASI"), sacrum)
    return R, origin


def _cluster(trial: Trial, labels: list[str], cache: dict | None):
    """:func:`pose` of ``labels`` in ``trial``, memoised in ``cache`` (one calibration's)."""
    key = (id(trial), tuple(labels))
    if cache is None or key not in cache:
        value = pose(np.stack([trial.point(x) for x in labels], axis=1))
        if cache is None:
            return value
        cache[key] = value
    return cache[key]


def hip_fit(trial: Trial, side: str, prefix: str, cache: dict | None = None) -> JointFit:
    """The hip centre of ``side`` from ``trial`` (no threshold applied): SCoRE with a thigh of
    three or more markers, else the sphere fit of its two in the pelvis frame."""
    Rp, tp = pelvis_pose(trial)
    thigh = _labels(trial, THIGH, prefix)
    name = Path(trial.path).name if trial.path else "trial"
    if len(thigh) < 2:
        raise DataError(f"{side.lower()} hip: a functional centre needs two or more thigh markers of "
                        f"{', '.join(x.replace('{S}', prefix) for x in THIGH)}", trial.path)
    local = [np.einsum("nji,nj->ni", Rp, trial.point(x) - tp) for x in thigh]  # pelvis frame, m
    spread, pair = centre_spread(local)
    agree = {"spread": spread * 1e3, "spread_markers": tuple(thigh[i] for i in pair if i >= 0)}
    if len(thigh) >= 3:
        Rt, tt, _ = _cluster(trial, thigh, cache)
        c_p, _, res, n = score(Rp, tp, Rt, tt)
        return JointFit("hip", side, "SCoRE", c_p, None, res * 1e3, relative_ranges(Rp, Rt), n, name, **agree)
    c, res, n = sphere_centre(local)
    return JointFit("hip", side, "sphere fit", c, None, res * 1e3, direction_ranges(local[1] - local[0]),
                    n // len(local), name, **agree)


def knee_fit(trial: Trial, side: str, prefix: str, hip_centre: np.ndarray | None, cache: dict | None = None
             ) -> JointFit:
    """The knee axis of ``side`` from ``trial``, in the thigh's technical frame: SARA with a
    shank of three or more markers, else the circle fit of its two. The thigh is posed from its
    markers and, with fewer than three, the hip centre ``hip_centre`` (pelvis frame, m)."""
    name = Path(trial.path).name if trial.path else "trial"
    Rt, tt, ref = thigh_pose(trial, prefix, hip_centre, side, cache=cache)
    shank = _labels(trial, SHANK, prefix)
    if len(shank) >= 3:
        Rs, ts, _ = _cluster(trial, shank, cache)
        point, axis, _, res, n = sara(Rt, tt, Rs, ts)
        return JointFit("knee", side, "SARA", point, axis, res * 1e3, relative_ranges(Rt, Rs), n, name,
                        reference=ref)
    if len(shank) < 2:
        raise DataError(f"{side.lower()} knee: a functional axis needs two or more shank markers of "
                        f"{', '.join(x.replace('{S}', prefix) for x in SHANK)}", trial.path)
    local = [np.einsum("nji,nj->ni", Rt, trial.point(x) - tt) for x in shank]
    point, axis, res, n = circle_axis(local)
    spread, pair = axis_spread(local)
    return JointFit("knee", side, "circle fit", point, axis, res * 1e3, direction_ranges(local[1] - local[0]),
                    n // len(local), name, reference=ref, spread=spread,
                    spread_markers=tuple(shank[i] for i in pair if i >= 0))


def thigh_pose(trial: Trial, prefix: str, hip_centre: np.ndarray | None, side: str,
               reference: np.ndarray | None = None, cache: dict | None = None):
    """(R, t, reference) of the thigh's technical frame (:func:`pose`): its markers, plus the hip
    centre (from the pelvis) when it has fewer than three."""
    thigh = _labels(trial, THIGH, prefix)
    if len(thigh) >= 3 and reference is None:
        return _cluster(trial, thigh, cache)
    pts = [trial.point(x) for x in thigh]
    if len(thigh) < 3:
        if hip_centre is None:
            raise DataError(f"{side.lower()} knee: the thigh has only {', '.join(thigh) or 'no markers'}; its frame "
                            "needs the hip centre: give a hip trial too (--functional HIP.c3d)", trial.path)
        Rp, tp = pelvis_pose(trial)
        pts.append(tp + np.einsum("nij,j->ni", Rp, hip_centre))
    try:
        return pose(np.stack(pts, axis=1), reference)
    except DataError:
        raise DataError(f"{side.lower()} thigh: no frame shows {', '.join(thigh)} and the pelvis", trial.path) from None


def judged(fit: JointFit, min_range_deg: float, max_residual_mm: float, max_spread_mm: float = MAX_SPREAD_MM,
           max_spread_deg: float = MAX_SPREAD_DEG) -> JointFit:
    """``fit`` with its status: refused when its range (two directions for a hip, one for a
    knee) is under ``min_range_deg`` or it has no finite result; warned when its residual is over
    ``max_residual_mm`` or its markers' own fits disagree (:attr:`JointFit.spread`) by more than
    ``max_spread_mm`` (hip) or ``max_spread_deg`` (knee)."""
    from dataclasses import replace

    need = "in two directions " if fit.joint == "hip" else ""
    if not (np.isfinite(fit.centre).all() and math.isfinite(fit.residual_mm)):
        return replace(fit, status="refused", reason="no frame shows every marker the fit needs")
    if not fit.used_range >= min_range_deg:
        return replace(fit, status="refused", reason=f"range of motion {fit.used_range:.1f} deg {need}under "
                       f"{min_range_deg:g} deg (Settings.functional_min_range_deg): too little motion for a centre")
    why = []
    if not fit.residual_mm <= max_residual_mm:
        why.append(f"residual {fit.residual_mm:.1f} mm over {max_residual_mm:g} mm (Settings.functional_max_residual_mm)"
                   ": markers moving on the skin or a loose cluster")
    limit, unit, what = ((max_spread_mm, "mm", "centres") if fit.joint == "hip" else (max_spread_deg, "deg", "axes"))
    if math.isfinite(fit.spread) and not fit.spread <= limit:
        setting = "functional_max_spread_mm" if fit.joint == "hip" else "functional_max_spread_deg"
        why.append(f"the {what} {' and '.join(fit.spread_markers)} give one by one disagree by {fit.spread:.1f} {unit}, "
                   f"over {limit:g} {unit} (Settings.{setting}): the markers move on the skin (soft-tissue artefact) "
                   f"and the {'centre' if fit.joint == 'hip' else 'axis'} may be off by as much; a larger range of "
                   "motion or a rigid cluster reduces it")
    return replace(fit, status="warned", reason="; ".join(why)) if why else fit


def functional_calibration(trials, static: Trial | None = None, min_range_deg: float = MIN_RANGE_DEG,
                           max_residual_mm: float = MAX_RESIDUAL_MM, sides=None, max_spread_mm: float = MAX_SPREAD_MM,
                           max_spread_deg: float = MAX_SPREAD_DEG, max_knee_turn_deg: float = MAX_KNEE_TURN_DEG,
                           max_regression_gap_mm: float = MAX_REGRESSION_GAP_MM,
                           max_knee_gap_mm: float = MAX_KNEE_GAP_MM) -> FunctionalCalibration:
    """The hip centres and knee axes from functional trials (Trials or C3D paths, any order).

    Each trial is told by its motion: a hip trial moves the thigh in the pelvis in two
    directions more than the shank in the thigh in one, a knee trial the other way. Per joint and
    side, the fit of the trial with the largest range is used when not refused. Knee axes are
    turned into the lab at the ``static`` pose (else the knee trial's first complete frame),
    pointing left, and refused when over ``max_knee_turn_deg`` off the pelvis's left-right axis
    there (two markers' arcs too flat for their noise lay the fitted axis along the shank). A hip
    centre further than ``max_regression_gap_mm`` from Harrington's regression centre of the
    static's pelvis (else the hip trial's) is used with a warning (:func:`regression_gap`), as is a
    knee axis passing further than ``max_knee_gap_mm`` from the knee marker (:func:`knee_marker_gap`).
    ``sides``: {'Left': 'L', 'Right': 'R'} prefixes (Plug-in Gait's by default); the thresholds:
    :func:`judged`."""
    from dataclasses import replace

    from gaitid.io.c3d import read_c3d

    sides = sides or {"Left": "L", "Right": "R"}
    loaded = [t if isinstance(t, Trial) else read_c3d(t) for t in trials]
    if not loaded:
        raise DataError("no functional trial given")
    cache: dict = {}
    limits = (min_range_deg, max_residual_mm, max_spread_mm, max_spread_deg)
    hips = {id(t): {s: judged(hip_fit(t, s, sides[s], cache), *limits) for s in SIDES} for t in loaded}
    kinds, warnings = {}, []
    by_name = {(Path(t.path).name if t.path else "trial"): t for t in loaded}
    best_hip = {s: regression_gap(f, static if static is not None else by_name[f.trial], max_regression_gap_mm)
                for s, f in _best(hips, loaded).items()}
    centres = {s: f.centre for s, f in best_hip.items() if f.status != "refused"}
    tried = [f for t in loaded for f in hips[id(t)].values()]
    fits = {("hip", s): f for s, f in best_hip.items() if f.status != "refused"}
    knees = {}
    for t in loaded:
        hip_score = max(f.used_range for f in hips[id(t)].values())
        knee = {}
        for s in SIDES:
            try:
                knee[s] = judged(knee_fit(t, s, sides[s], centres.get(s), cache), *limits)
            except DataError as exc:
                if hip_score >= min_range_deg:
                    continue  # a hip trial: its knee is not asked for
                name = Path(t.path).name if t.path else "trial"
                knee[s] = JointFit("knee", s, "SARA", np.full(3, np.nan), None, math.nan, (), 0, name,
                                   status="refused", reason=exc.reason)
        knees[id(t)] = knee
        tried += knee.values()
        knee_score = max((f.used_range for f in knee.values()), default=0.0)
        kinds[Path(t.path).name if t.path else "trial"] = "hip" if hip_score >= knee_score else "knee"
    best_knee = _best(knees, [t for t in loaded if kinds[Path(t.path).name if t.path else "trial"] == "knee"])
    for s, f in best_knee.items():
        if f.status != "refused":
            axis, turn, point = _axis_in_static(f, static, loaded, sides[s], centres.get(s))
            if not turn <= max_knee_turn_deg:  # refused: the most-ranged fit's reason is the one reported
                tried = [x for x in tried if x is not f] + [replace(
                    f, status="refused", turn_deg=turn, reason=f"the axis lies {turn:.0f} deg off the pelvis's left-right "
                    f"axis at the static, over {max_knee_turn_deg:g} deg (Settings.functional_max_knee_turn_deg): not a "
                    "knee flexion axis; the shank markers' arcs are too flat for their noise: bend the knee further")]
                continue
            source = static if static is not None else next(t for t in loaded if (Path(t.path).name if t.path
                                                                                 else "trial") == f.trial)
            fits[("knee", s)] = knee_marker_gap(replace(f, axis_lab=axis, turn_deg=turn, point_lab=point), source,
                                                sides[s], max_knee_gap_mm, first_frame=static is None)
    for joint in ("hip", "knee"):
        if not any(k == joint for k in kinds.values()):
            continue
        for s in SIDES:
            if (joint, s) in fits:
                if fits[(joint, s)].status == "warned":
                    warnings.append(f"functional {s.lower()} {joint}: {fits[(joint, s)].reason}")
                continue
            seen = [f for f in tried if f.joint == joint and f.side == s]
            why = max(seen, key=lambda f: f.used_range).reason if seen else "no trial"
            warnings.append(f"functional {s.lower()} {joint} refused: {why}; the model's other method is needed")
    return FunctionalCalibration(fits, tuple(tried), kinds, tuple(warnings))


def regression_gap(fit: JointFit, pelvis: Trial, max_gap_mm: float = MAX_REGRESSION_GAP_MM) -> JointFit:
    """A hip ``fit`` with ``gap_mm``, its distance from Harrington et al.'s (2007) regression
    centre of ``pelvis``'s mean pose (its ASIS width and depth to the sacrum or mid-PSIS), and
    warned past ``max_gap_mm``: further than regression errs in adults (12.3 +- 5.9 mm, Mantovani
    et al. 2016, CT), a gap is either the fit's error (a soft-tissue artefact moving rigidly with
    the joint, which neither the residual nor the markers' spread shows) or an atypical hip."""
    from dataclasses import replace

    if fit.status == "refused":
        return fit
    names = set(pelvis.marker_labels) | set(pelvis.virtual_labels)
    sacrum = pelvis.point("SACR") if "SACR" in names else (pelvis.point("LPSI") + pelvis.point("RPSI")) / 2
    lasi, rasi = pelvis.point("LASI"), pelvis.point("RASI")
    width = np.nanmean(np.linalg.norm(lasi - rasi, axis=1))
    depth = np.nanmean(np.linalg.norm((lasi + rasi) / 2 - sacrum, axis=1))
    gap = float(np.linalg.norm(fit.centre - harrington_hip_centre(width, depth, fit.side)) * 1e3)
    if not gap > max_gap_mm:
        return replace(fit, gap_mm=gap)
    why = (f"the centre lies {gap:.0f} mm from Harrington's regression centre, over {max_gap_mm:g} mm "
           "(Settings.functional_max_regression_gap_mm; the regression errs by 12 +- 6 mm in adults): the markers "
           "moving with the joint on the skin, or an atypical hip (a child, dysplasia): check the trial")
    return replace(fit, gap_mm=gap, status="warned", reason="; ".join(x for x in (fit.reason, why) if x))


def knee_marker_gap(fit: JointFit, source: Trial, prefix: str, max_gap_mm: float = MAX_KNEE_GAP_MM,
                    first_frame: bool = False) -> JointFit:
    """A knee ``fit`` (its ``axis_lab``, ``point_lab`` at ``source``'s pose) with ``gap_mm``, the
    distance (mm) from ``source``'s knee marker (``prefix`` + KNE, mean of its frames, or its
    first complete frame with ``first_frame``) to the axis, and warned past ``max_gap_mm``. KNE
    sits on the lateral epicondyle, which the flexion axis passes through; an axis far from it
    moves a knee centre placed on it (plugin-gait-sara) by as much. NaN without the marker."""
    from dataclasses import replace

    label = prefix + "KNE"
    if label not in set(source.marker_labels) | set(source.virtual_labels):
        return fit
    kne = source.point(label)
    kne = kne[np.isfinite(kne).all(axis=1)]
    if not len(kne):
        return fit
    d = (kne[0] if first_frame else kne.mean(axis=0)) - fit.point_lab
    gap = float(np.linalg.norm(d - (d @ fit.axis_lab) * fit.axis_lab) * 1e3)
    if not gap > max_gap_mm:
        return replace(fit, gap_mm=gap)
    why = (f"the axis passes {gap:.0f} mm from {label} at the static, over {max_gap_mm:g} mm "
           "(Settings.functional_max_knee_gap_mm; the flexion axis runs through the epicondyle the marker sits on): "
           "the shank markers moving on the skin, too little knee flexion, or a misplaced knee marker; a knee centre "
           "put on this axis (plugin-gait-sara) moves by as much: check the trial")
    return replace(fit, gap_mm=gap, status="warned", reason="; ".join(x for x in (fit.reason, why) if x))


def _best(by_trial: dict, trials) -> dict[str, JointFit]:
    out = {}
    for t in trials:
        for s, f in by_trial.get(id(t), {}).items():
            if s not in out or (f.status != "refused", f.used_range) > (out[s].status != "refused", out[s].used_range):
                out[s] = f
    return out


def _axis_in_static(fit: JointFit, static: Trial | None, trials, prefix: str, hip_centre
                    ) -> tuple[np.ndarray, float, np.ndarray]:
    """The knee axis (thigh technical frame) in the lab at the static pose (mean of its frames),
    else at the knee trial's first complete frame; pointing left (from RASI towards LASI); its
    angle (deg) off the pelvis's left-right axis there; and the fit's point on it there (m)."""
    knee_trial = next(t for t in trials if (Path(t.path).name if t.path else "trial") == fit.trial)
    source = static if static is not None else knee_trial
    used, have = _labels(knee_trial, THIGH, prefix), _labels(source, THIGH, prefix)
    if used != have:
        raise DataError(f"{fit.side.lower()} knee axis: the static has thigh markers {', '.join(have) or 'none'}, the "
                        f"knee trial {fit.trial} {', '.join(used)}: the axis is carried to the static pose by the "
                        "same markers", source.path)
    R, t, _ = thigh_pose(source, prefix, hip_centre, fit.side, fit.reference)
    Rp, _ = pelvis_pose(source)
    ok = np.isfinite(R).all(axis=(1, 2)) & np.isfinite(Rp).all(axis=(1, 2))
    if not ok.any():
        raise DataError(f"{fit.side.lower()} knee axis: no frame of the static shows the thigh and pelvis", source.path)
    frame = ok if static is not None else np.flatnonzero(ok)[:1]
    axis = np.einsum("nij,j->ni", R[frame], fit.axis).mean(axis=0)
    left = Rp[frame][:, :, 1].mean(axis=0)
    axis /= np.linalg.norm(axis)
    axis = axis if axis @ left >= 0 else -axis
    point = (np.einsum("nij,j->ni", R[frame], fit.centre) + t[frame]).mean(axis=0)
    return axis, float(np.degrees(np.arccos(np.clip(axis @ left / np.linalg.norm(left), -1.0, 1.0)))), point


def session_calibration(functional, static: Trial | None = None, settings=None) -> FunctionalCalibration | None:
    """``functional`` as a :class:`FunctionalCalibration`: as given, computed from functional
    trials (paths or Trials) with ``settings``' thresholds
    (:attr:`~gaitid.core.settings.Settings.functional_min_range_deg`, ``functional_max_residual_mm``),
    or None for None or an empty list."""
    if functional is None or isinstance(functional, FunctionalCalibration):
        return functional
    trials = [functional] if isinstance(functional, (str, Path, Trial)) else list(functional)
    if not trials:
        return None
    limits = {} if settings is None else {"min_range_deg": settings.functional_min_range_deg,
                                          "max_residual_mm": settings.functional_max_residual_mm,
                                          "max_spread_mm": settings.functional_max_spread_mm,
                                          "max_spread_deg": settings.functional_max_spread_deg,
                                          "max_knee_turn_deg": settings.functional_max_knee_turn_deg,
                                          "max_regression_gap_mm": settings.functional_max_regression_gap_mm,
                                          "max_knee_gap_mm": settings.functional_max_knee_gap_mm}
    return functional_calibration(trials, static, **limits)


def functional_motion(trial: Trial, min_range_deg: float = MIN_RANGE_DEG, sides=None) -> tuple[str | None, str]:
    """('hip' | 'knee' | None, why) from Plug-in Gait markers, cheaply (for sorting a session's
    trials): a hip trial swings a thigh line (THI to KNE) in the pelvis frame over
    ``min_range_deg`` in two directions; a knee trial bends a knee (the angle between THI-KNE and
    TIB-ANK) over it; walking in place (both thighs swinging in opposite phase, correlation under
    -0.5) is neither. None without the markers."""
    sides = sides or {"Left": "L", "Right": "R"}
    try:
        Rp, tp = pelvis_pose(trial)
    except DataError:
        return None, "no pelvis markers"
    present = set(trial.marker_labels)
    hip, knee, swing = {}, {}, {}
    for side, pre in sides.items():
        if not {f"{pre}THI", f"{pre}KNE"} <= present:
            continue
        thigh = np.einsum("nji,nj->ni", Rp, trial.point(f"{pre}KNE") - trial.point(f"{pre}THI"))
        hip[side] = direction_ranges(thigh)
        swing[side] = np.arctan2(thigh[:, 0], -thigh[:, 2])  # flexion of the thigh line, rad
        if {f"{pre}TIB", f"{pre}ANK"} <= present:
            shank = trial.point(f"{pre}ANK") - trial.point(f"{pre}TIB")
            thigh_lab = np.einsum("nij,nj->ni", Rp, thigh)
            cos = np.sum(thigh_lab * shank, 1) / (np.linalg.norm(thigh_lab, axis=1) * np.linalg.norm(shank, axis=1))
            bend = np.degrees(np.arccos(np.clip(cos[np.isfinite(cos)], -1, 1)))
            knee[side] = float(np.ptp(np.percentile(bend, [2.5, 97.5]))) if bend.size > 2 else 0.0
    if not hip:
        return None, "no thigh markers"
    if len(swing) == 2:
        a, b = swing["Left"], swing["Right"]
        ok = np.isfinite(a) & np.isfinite(b)
        if ok.sum() > 10 and min(np.ptp(a[ok]), np.ptp(b[ok])) > np.radians(15):
            if np.corrcoef(a[ok], b[ok])[0, 1] < -0.5:
                return None, "the thighs swing in opposite phase: walking"
    best_hip = max(hip, key=lambda s: hip[s][1])
    best_knee = max(knee, key=knee.get) if knee else None
    hip_range, knee_range = hip[best_hip][1], knee.get(best_knee, 0.0) if best_knee else 0.0
    if hip_range >= min_range_deg and hip_range >= knee_range / 2:
        return "hip", f"{best_hip.lower()} thigh swings {hip[best_hip][0]:.0f}/{hip_range:.0f} deg in the pelvis"
    if knee_range >= min_range_deg:
        return "knee", f"{best_knee.lower()} knee bends over {knee_range:.0f} deg"
    return None, "too little hip or knee motion for a functional trial"
