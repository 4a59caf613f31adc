"""Errors injected into the INPUTS of the synthetic trial, drawn from an error model, to check
the joint-load uncertainty against the exact truth.

:func:`inject_errors` returns the trial as a lab with those errors would have recorded it: every
marker with white noise; the palpated landmark markers (Plug-in Gait's KNE, ANK) misplaced by a
constant offset in the true frame of the segment above the joint, in the walking AND the static
trial (the marker stays where it was stuck); the knee and ankle widths mis-measured; the hip
centre mislocated (given to the model as a virtual point ``{S}HJC``, as exported by other
software, since the synthetic model's Davis centre is exact: process with :func:`write_hjc_model`'s
model and :func:`hjc_errors`' error model); the body-segment parameters off
the truth (masses renormalised to body mass); each plate's centre of pressure offset and its
force scaled. :func:`interval_coverage` counts the frames where a result's 95 % interval covers
the true joint moment. The draws follow the same error model as :mod:`gaitid.uncertainty`, by
their own code path (marker arrays, subject parameters, plate channels), so a mismatch between
what the Monte Carlo perturbs and what real input errors do shows up as lost coverage.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.trial import PlateWrench, Trial
from gaitid.core.vocabulary import JOINTS, SIDES, side_key, side_path
from gaitid.model.assembly import build_segments
from gaitid.model.markerset import Model, load_model
from gaitid.model.point_methods import method_of
from gaitid.uncertainty.errormodel import ErrorModel, JointCentreError, load_error_model
from gaitid.uncertainty.points import axes_order, joint_geometry, landmark_labels
from gaitid.uncertainty.segments import bsip_groups

# The Plug-in Gait model with the truth's foot and the hip centre read from the trial's virtual
# points LHJC / RHJC (written beside the trial by write_hjc_model).
HJC_MODEL = """[model]
extends = "{base}"
name = "plugin-gait-truth-foot-hjc"

[points.hip]
method = "marker"
marker = "{{S}}HJC"
"""


@dataclass
class InjectedInputs:
    """A perturbed synthetic trial: ``walk`` and ``static`` trials, ``subject`` (per-side
    parameter overrides: the mis-measured widths), ``segment_parameters`` (the BSIP the lab would
    use), and ``draws`` (what was drawn, for reports)."""

    walk: Trial
    static: Trial
    subject: dict
    segment_parameters: dict
    draws: dict


def write_hjc_model(folder: Path, base: Path) -> Path:
    """A model file extending ``base`` whose hip centres are the trial's {S}HJC points."""
    path = Path(folder) / "truth-foot-hjc.toml"
    path.write_text(HJC_MODEL.format(base=str(base)))
    return path


def hjc_errors(errors: str | Path | ErrorModel = "default") -> ErrorModel:
    """The error model with the Davis regression's error given to hip centres read from the trial
    ('marker' method): the synthetic trial's regression is exact, the injected error plays its
    part."""
    em = load_error_model(errors)
    davis = em.joint_centre("davis", "hip")
    marker = dict(em.joint_centres.get("marker", {}))
    marker.setdefault("", JointCentreError(np.zeros(3), np.zeros(3), "unknown"))
    marker["hip"] = JointCentreError(davis.centre_sd, davis.landmark_sd,
                                     "the Davis regression's, injected into the synthetic trial's virtual hip centres")
    return dataclasses.replace(em, joint_centres={**em.joint_centres, "marker": marker})


def with_hjc(trial: Trial, centres: dict[str, np.ndarray]) -> Trial:
    """The trial with virtual points LHJC / RHJC ({side: (n, 3) m})."""
    labels = list(trial.virtual_labels) + [f"{'L' if s == 'Left' else 'R'}HJC" for s in centres]
    pts = np.stack(list(centres.values()), axis=1)
    if trial.virtual_points is not None and trial.virtual_labels:
        pts = np.concatenate([trial.virtual_points, pts], axis=1)
    return replace(trial, virtual_labels=labels, virtual_points=pts)


def _offset(model: Model, segment: str, R: np.ndarray, v: np.ndarray) -> np.ndarray:
    seg = np.zeros(3)
    seg[axes_order(model, segment)] = v
    return R @ seg


def _plate(w: PlateWrench, d: np.ndarray, g: float) -> PlateWrench:
    return PlateWrench(w.rate, w.force * (1 + g), w.cop + np.array([d[0], d[1], 0.0]), w.free_moment * (1 + g))


def inject_errors(walk: Trial, static: Trial, model: str | Path, segments: dict, rng: np.random.Generator,
                  errors: ErrorModel | str | Path = "default", plate_kind: str = "floor",
                  table: str = "plugin-gait") -> InjectedInputs:
    """The synthetic ``walk`` / ``static`` trials with input errors drawn from ``errors`` (see the
    module docstring). ``model``: the truth model (its geometry exact; a regression hip centre
    is given back, with its error, as the virtual points {S}HJC: process with the model of
    :func:`write_hjc_model` and the error model of :func:`hjc_errors`);
    ``segments``: the true segment parameters ({'thigh': {'mass', 'com_from_proximal', 'inertia'}});
    ``table``: the BSIP table whose spread applies."""
    m = load_model(model)
    em = load_error_model(errors)
    kw, ks = build_segments(walk, m, static=static), build_segments(static, m, static=static)
    draws: dict = {}
    walk_pts, static_pts = walk.markers.copy(), static.markers.copy()
    hjc = {"walk": {}, "static": {}}
    subject: dict = {}
    for side in SIDES:
        for joint, point, parent in joint_geometry(m):
            spec = m.points.get(point, {})
            err = em.joint_centre(method_of(m, point), joint)
            for trial, k, pts in ((walk, kw, walk_pts), (static, ks, static_pts)):
                R = k.root.R if parent == m.root else k.frames[side_path(side, parent)]
                for label in landmark_labels(m, point, side, set(trial.marker_labels)):
                    d = draws.setdefault(("landmark", side, joint, label), rng.standard_normal(3) * err.landmark_sd)
                    pts[:, trial.marker_labels.index(label)] += _offset(m, parent, R, d)
            if spec.get("method") == "chord":  # the width measured with the centre's mediolateral error x 2
                dw = draws.setdefault(("width", side, joint), rng.standard_normal() * 2 * err.centre_sd[1])
                subject.setdefault(side_key(side), {})[spec["width"]] = float(kw.parameters[side][spec["width"]]) + dw
            elif spec.get("method") in ("davis", "harrington"):  # a regression's error: the point moved in the pelvis
                d = draws.setdefault(("centre", side, joint), rng.standard_normal(3) * err.centre_sd)
                for name, k in (("walk", kw), ("static", ks)):
                    R = k.root.R if parent == m.root else k.frames[side_path(side, parent)]
                    hjc[name][side] = k.joint_centres[side_path(side, joint)] + _offset(m, parent, R, d)
    noise = em.marker_noise
    walk_pts = walk_pts + rng.standard_normal(walk_pts.shape) * noise
    static_pts = static_pts + rng.standard_normal(static_pts.shape) * noise
    walk2, static2 = replace(walk, markers=walk_pts), replace(static, markers=static_pts)
    if hjc["walk"]:
        walk2 = with_hjc(walk2, {s: v + rng.standard_normal(v.shape) * noise for s, v in hjc["walk"].items()})
        static2 = with_hjc(static2, {s: v + rng.standard_normal(v.shape) * noise for s, v in hjc["static"].items()})
    plate = em.plate(plate_kind)
    plates = []
    for fp in walk2.force_plates:
        d, g = rng.standard_normal(2) * plate.cop_sd, rng.standard_normal() * plate.force_cv
        draws[("plate", fp.index)] = (d, g)
        plates.append(replace(fp, analog=_plate(fp.analog, d, g), point=_plate(fp.point, d, g)))
    walk2 = replace(walk2, force_plates=plates)
    return InjectedInputs(walk2, static2, subject, _bsip(segments, em, table, rng, draws), draws)


def _bsip(segments: dict, em: ErrorModel, table: str, rng: np.random.Generator, draws: dict) -> dict:
    """The true segment parameters perturbed as the error model says (see errormodel.py)."""
    from gaitid.model.bsip import load_table

    tab = load_table(table)
    paired, single = bsip_groups(table)
    e = {s: rng.standard_normal() * em.bsip_error(table, s).mass_cv for s in paired + single}
    total = sum((2 if s in paired else 1) * tab.row(s).mass_fraction for s in e)
    new = sum((2 if s in paired else 1) * tab.row(s).mass_fraction * (1 + e[s]) for s in e)
    out = {}
    for name, v in segments.items():
        be = em.bsip_error(table, name)
        k = (1 + e[name]) * total / new
        gyr = 1 + rng.standard_normal() * be.gyration_cv
        com = v["com_from_proximal"] + rng.standard_normal() * be.com_sd
        out[name] = {"mass": v["mass"] * k, "com_from_proximal": com,
                     "inertia": list(np.asarray(v["inertia"], float) * k * gyr ** 2)}
        draws[("bsip", name)] = (k, com - v["com_from_proximal"], gyr)
    return out


def interval_coverage(result, truth: pd.DataFrame, edge: int = 3) -> pd.DataFrame:
    """Per side, joint and plane, the stance frames on a plate (truth ``*_contact`` == 1, ``edge``
    frames off each end of the trial) where the result's 95 % interval of the joint moment covers
    the truth: columns side, joint, plane, frames, covered. ``result``: processed with
    ``frame='lab'``, internal moments per kg (the truth's lab moments / body mass)."""
    mass = result.trial.subject.mass
    f = result.uncertainty.frames
    rows = []
    for side in SIDES:
        S = side[0]
        on = truth[f"{S}_contact"].to_numpy() == 1
        on[:edge] = on[-edge:] = False
        for j, joint in enumerate(JOINTS):
            var = f"{joint}Moment"
            ref = truth[[f"{S}_{joint.lower()}_moment_lab_{a}_Nm" for a in "xyz"]].to_numpy() / mass
            for k, (plane, comp) in enumerate((("frontal", "X"), ("sagittal", "Y"), ("transverse", "Z"))):
                sel = f[(f["side"] == side) & (f["variable"] == var) & (f["component"] == comp)].sort_values("frame")
                lo, hi = sel["uncertainty_low95"].to_numpy(), sel["uncertainty_high95"].to_numpy()
                ok = on & np.isfinite(lo)
                hit = (lo <= ref[:, k]) & (ref[:, k] <= hi)
                rows.append(dict(side=side, joint=joint.lower(), plane=plane, frames=int(ok.sum()),
                                 covered=int((hit & ok).sum())))
    return pd.DataFrame(rows)


def truth_segments(folder: Path | None = None) -> dict:
    """The synthetic truth's segment parameters (walk_synthetic_segments.json) as the pipeline's
    ``segment_parameters`` (the Plug-in Gait foot frame has its z axis along the foot, the
    synthetic one x; its centre of mass midway from the ankle centre to TOE)."""
    import json

    from gaitid.core.resources import sample_data_dir

    seg = json.loads(((folder or sample_data_dir()) / "walk_synthetic_segments.json").read_text())["segments"]
    out = {}
    for name, d in seg.items():
        inertia = np.diag(d["inertia_seg_kgm2"])
        if name == "foot":
            inertia, com = [inertia[1], inertia[2], inertia[0]], 0.5
        else:
            inertia, com = list(inertia), abs(d["com_seg_m"][2]) / d["length_m"]
        out[name] = {"mass": d["mass_kg"], "com_from_proximal": com, "inertia": list(inertia)}
    return out


def coverage_run(replications: int, samples: int, cutoff: float | None, folder: Path, seed: int = 12345,
                 errors: str | Path = "default") -> pd.DataFrame:
    """Inject errors drawn from ``errors`` into the synthetic sample trial ``replications`` times,
    process each with ``samples`` Monte Carlo draws (markers and plates filtered at ``cutoff``
    Hz, None: unfiltered) and count, per side, joint and plane, the stance frames on a plate and
    those whose 95 % interval covers the true moment (columns side, joint, plane, frames,
    covered, coverage). ``folder``: where the model and error-model files are written."""
    from gaitid.core.resources import sample_data_dir
    from gaitid.io.c3d import read_c3d
    from gaitid.pipeline import process
    from gaitid.uncertainty import UncertaintySettings

    sample = sample_data_dir()
    base_model = sample / "plugin-gait-truth-foot.toml"
    walk, static = read_c3d(sample / "walk_synthetic.c3d"), read_c3d(sample / "static_synthetic.c3d")
    truth = pd.read_csv(sample / "walk_synthetic_truth.csv")
    model = write_hjc_model(folder, base_model)
    em = hjc_errors(errors)
    rng = np.random.default_rng(seed)
    parts = []
    for r in range(replications):
        inj = inject_errors(walk, static, base_model, truth_segments(), rng, errors=em)
        res = process(inj.walk, static=inj.static, model=str(model), subject=inj.subject,
                      segment_parameters=inj.segment_parameters, frame="lab", marker_cutoff_hz=cutoff,
                      uncertainty=UncertaintySettings(samples=samples, seed=1000 + r, error_model=em))
        parts.append(interval_coverage(res, truth))
    tab = pd.concat(parts).groupby(["side", "joint", "plane"], sort=False)[["frames", "covered"]].sum()
    tab["coverage"] = tab["covered"] / tab["frames"]
    return tab.reset_index()
