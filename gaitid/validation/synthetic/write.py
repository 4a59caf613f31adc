"""Writing the sample files: the C3D trials (ezc3d), the truth table and the parameters, bit-for-bit
reproducible; ``python -m gaitid.validation.synthetic OUTDIR``."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np

from gaitid.validation.synthetic.params import (
    MARKERS,
    SIDES,
    G,
    GaitParams,
    davis_hjc,
    segment_parameters,
)
from gaitid.validation.synthetic.sample_trial import SyntheticTrial, make_gait_trial, make_static_trial
from gaitid.validation.synthetic.truth import leg_truth_columns


def _set(c, group: str, name: str, value) -> None:
    """Set a C3D parameter through ezc3d's dict: int arrays stay INT, float arrays FLOAT, str lists CHAR."""
    from ezc3d import ezc3d as _ez

    if isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.integer):
        c.add_parameter(group, name, value.astype(float))
        c["parameters"][group][name]["type"] = _ez.INT
        c["parameters"][group][name]["value"] = value.astype(int)
    elif isinstance(value, np.ndarray):
        c.add_parameter(group, name, value.astype(float))
    else:
        c.add_parameter(group, name, value)


def _c3d(markers: dict[str, np.ndarray] | list[str], p: GaitParams, subject: dict, plates: list = (),
         events: list = (), *, points: np.ndarray | None = None, analogs: np.ndarray | None = None):
    """An ezc3d.c3d object: points in mm, type-2 plates in N / N.mm, EVENT, PROCESSING, SUBJECTS, TRIAL.

    ``markers``: label -> (n, 3) m; or the labels, with ``points`` the (4, n_markers, n) array in mm
    as ezc3d takes it. ``plates``: objects with ``corners`` and ``origin`` (and ``analog`` (n, 6),
    unless ``analogs`` gives all channels as ezc3d takes them, (1, 6 x n_plates, n_analog))."""
    import ezc3d

    labels = list(markers)
    c = ezc3d.c3d()
    c["parameters"]["POINT"]["RATE"]["value"] = np.array([p.point_rate])
    c["parameters"]["POINT"]["LABELS"]["value"] = labels
    c["parameters"]["POINT"]["UNITS"]["value"] = ["mm"]
    if points is None:
        n = next(iter(markers.values())).shape[0]
        pts = np.ones((4, len(labels), n))
        pts[:3] = np.stack([markers[m].T * 1000.0 for m in labels], axis=1)
    else:
        n, pts = points.shape[2], points
    c["data"]["points"] = pts
    ratio = int(round(p.analog_rate / p.point_rate))
    if plates:
        c["parameters"]["ANALOG"]["RATE"]["value"] = np.array([p.analog_rate])
        ch_labels, units = [], []
        for i, _ in enumerate(plates, start=1):
            ch_labels += [f"Force.Fx{i}", f"Force.Fy{i}", f"Force.Fz{i}", f"Moment.Mx{i}", f"Moment.My{i}", f"Moment.Mz{i}"]
            units += ["N"] * 3 + ["Nmm"] * 3
        c["parameters"]["ANALOG"]["LABELS"]["value"] = ch_labels
        c["parameters"]["ANALOG"]["UNITS"]["value"] = units
        if analogs is None:
            an = np.concatenate([pl.analog for pl in plates], axis=1)
            analogs = an.T[None, :, : n * ratio]
        c["data"]["analogs"] = analogs
        _set(c, "FORCE_PLATFORM", "USED", np.array([len(plates)]))
        _set(c, "FORCE_PLATFORM", "TYPE", np.array([2] * len(plates)))
        _set(c, "FORCE_PLATFORM", "ZERO", np.array([1, 0]))
        _set(c, "FORCE_PLATFORM", "CORNERS", np.stack([pl.corners.T * 1000.0 for pl in plates], axis=2))
        _set(c, "FORCE_PLATFORM", "ORIGIN", np.stack([pl.origin for pl in plates], axis=1))
        _set(c, "FORCE_PLATFORM", "CHANNEL", np.arange(1, 6 * len(plates) + 1).reshape(len(plates), 6).T)
    if events:
        _set(c, "EVENT", "USED", np.array([len(events)]))
        _set(c, "EVENT", "CONTEXTS", [e[1] for e in events])
        _set(c, "EVENT", "LABELS", [e[0] for e in events])
        _set(c, "EVENT", "DESCRIPTIONS", ["heel strike" if e[0] == "Foot Strike" else "toe off" for e in events])
        _set(c, "EVENT", "SUBJECTS", ["synthetic"] * len(events))
        _set(c, "EVENT", "TIMES", np.array([[0.0] * len(events), [e[2] for e in events]]))
        _set(c, "EVENT", "ICON_IDS", np.array([1 if e[0] == "Foot Strike" else 2 for e in events]))
        _set(c, "EVENT", "GENERIC_FLAGS", np.array([0] * len(events)))
    _set(c, "TRIAL", "ACTUAL_START_FIELD", np.array([1, 0]))
    _set(c, "TRIAL", "ACTUAL_END_FIELD", np.array([n & 0xFFFF, n >> 16]))  # low, high 16-bit words
    if n > 0xFFFF:  # the header's 16-bit frame count saturates; C3D readers take these instead
        _set(c, "POINT", "LONG_FRAMES", np.array([float(n)]))
    _set(c, "TRIAL", "CAMERA_RATE", np.array([p.point_rate]))
    _set(c, "SUBJECTS", "NAMES", ["synthetic"])
    _set(c, "SUBJECTS", "MARKER_SETS", ["PlugInGait"])
    _set(c, "SUBJECTS", "USES_PREFIXES", np.array([0]))
    for key, value in subject.items():
        _set(c, "PROCESSING", key, np.array([float(value)]))
    _set(c, "MANUFACTURER", "COMPANY", ["gaitid"])
    _set(c, "MANUFACTURER", "SOFTWARE", ["gaitid.synthetic"])  # the generator's name as the sample files carry it
    return c


def _write_c3d(c, path: Path) -> None:
    """Write atomically through gaitid.io.atomic (temporary ``.c3d`` beside ``path``, then rename)."""
    from gaitid.io.atomic import atomic_path

    with atomic_path(path) as tmp:
        c.write(str(tmp))


def write_markers(markers: dict[str, np.ndarray], rate: float, subject: dict, path: str | Path) -> Path:
    """A markers-only C3D (label -> (n, 3) m; ``subject``: PROCESSING values), written atomically."""
    from types import SimpleNamespace

    path = Path(path)
    _write_c3d(_c3d(markers, SimpleNamespace(point_rate=rate, analog_rate=rate), subject), path)
    return path


def truth_table(trial: SyntheticTrial):
    """Wide ground-truth table (pandas DataFrame), one row per point frame; columns carry units.

    frame, time_s, {S}_contact (0 swing, 1 stance on a plate, 2 stance off the plates);
    per side S and joint J (ankle, knee, hip): {S}_{J}_force_lab_{x,y,z}_N,
    {S}_{J}_moment_lab_{x,y,z}_Nm, {S}_{J}_moment_{foot|shank|thigh}_{x,y,z}_Nm (distal frame),
    {S}_{J}_centre_lab_{x,y,z}_m; {S}_grf_lab_{x,y,z}_N, {S}_cop_lab_{x,y,z}_m,
    {S}_free_moment_lab_z_Nm; joint angles {S}_{name}_deg (the generating Cardan angles).
    """
    import pandas as pd

    p = trial.params
    cols = {"frame": np.arange(1, p.n_frames + 1), "time_s": trial.time}
    for side in SIDES:
        cols[f"{side}_contact"] = trial.contact[side]
    for side in SIDES:
        leg_truth_columns(cols, side, trial.time, trial.kinematics, trial.truth[side], trial.grf[side], trial.curves)
    return pd.DataFrame(cols)


def _write_text(path: Path, text: str) -> None:
    from gaitid.io.atomic import atomic_path

    with atomic_path(path) as tmp:
        tmp.write_bytes(text.encode("utf-8"))


def segments_json(p: GaitParams) -> str:
    """The inertial and geometric parameters used by the truth, as JSON text (SI)."""
    sp = segment_parameters(p)
    doc = {
        "units": "SI: kg, m, kg.m^2; frames X anterior, Y left, Z up/proximal (both sides); "
                 "com_seg from the segment origin (thigh HJC, shank KJC, foot AJC), inertia about the COM",
        "subject": {"mass_kg": p.mass, "height_m": p.height, "leg_length_m": p.leg_length,
                    "knee_width_m": p.knee_width, "ankle_width_m": p.ankle_width,
                    "inter_asis_m": p.inter_asis, "marker_diameter_m": p.marker_diameter},
        "segments": {k: {"mass_kg": round(v["mass"], 12), "length_m": round(v["length"], 12),
                         "com_seg_m": [round(float(x), 12) for x in v["com_seg"]],
                         "inertia_seg_kgm2": [[round(float(x), 12) for x in row] for row in v["inertia_seg"]]}
                     for k, v in sp.items()},
        "hip_joint_centre_pelvis_m": {s: [round(float(x), 12) for x in davis_hjc(p, s)] for s in SIDES},
        "gravity_lab_m_s2": [0.0, 0.0, -G],
        "joints": {"knee_from_hip_thigh_m": [0.0, 0.0, -p.thigh_length],
                   "ankle_from_knee_shank_m": [0.0, 0.0, -p.shank_length]},
    }
    return json.dumps(doc, indent=2) + "\n"


SAMPLE_FILES = ("walk_synthetic.c3d", "walk_synthetic_truth.csv", "walk_synthetic_segments.json", "static_synthetic.c3d")


def write_sample(outdir: str | Path, p: GaitParams | None = None) -> list[Path]:
    """Write the sample files (SAMPLE_FILES) into ``outdir``; same bytes on every run."""
    outdir = Path(outdir)
    p = p or GaitParams()
    trial = make_gait_trial(p)
    paths = [outdir / name for name in SAMPLE_FILES]
    _write_c3d(_c3d(trial.markers, p, trial.subject, trial.plates, trial.events), paths[0])
    _write_text(paths[1], truth_table(trial).to_csv(index=False, float_format="%.10g", lineterminator="\n"))
    _write_text(paths[2], segments_json(p))
    # the static stands with its feet flat on the floor (heel marker 5 mm above the toe marker): it
    # says so, as a lab's static would, so Plug-in Gait's calibration uses the flat-foot option
    _write_c3d(_c3d(make_static_trial(p), p, {**trial.subject, "LFlatFoot": 1.0, "RFlatFoot": 1.0}), paths[3])
    return paths


def write_scenario(scn, path: str | Path, *, truth: bool = True, block_frames: int = 4000,
                   timings: dict | None = None) -> list[Path]:
    """Write a scenario's trial: ``path`` (C3D), ``<stem>_events.csv``, ``<stem>_segments.json`` and,
    with ``truth``, ``<stem>_truth.csv``; all atomically, the same bytes on every run.

    The frames are generated in blocks of ``block_frames`` (bounded memory apart from the marker and
    analog arrays the C3D writer takes whole). A C3D holds at most 255 events (one-byte parameter
    dimensions): a longer trial's C3D has no EVENT group and its events are in the events CSV only.
    ``timings`` (a dict) receives the seconds spent generating, writing the truth and writing the C3D."""
    import time

    import pandas as pd

    from gaitid.io.atomic import atomic_path
    from gaitid.validation.synthetic.scenario import (
        MAX_C3D_EVENTS,
        analog_block,
        blocks,
        evaluate_block,
        subject_processing,
        truth_columns,
    )

    path = Path(path)
    p = scn.params
    n = p.n_frames
    ratio = int(round(p.analog_rate / p.point_rate))
    stem = path.with_suffix("")
    events = scn.events()
    points = np.ones((4, len(MARKERS), n))
    analogs = np.zeros((1, 6 * len(scn.plates), n * ratio))
    labels = None
    written = [path]
    clock = {"generate_s": 0.0, "truth_csv_s": 0.0}
    with contextlib.ExitStack() as stack:
        truth_file = None
        if truth:
            truth_path = Path(f"{stem}_truth.csv")
            truth_file = stack.enter_context(open(stack.enter_context(atomic_path(truth_path)), "wb"))
            written.append(truth_path)
        for start, stop in blocks(n, block_frames):
            t0 = time.perf_counter()
            blk = evaluate_block(scn, np.arange(start, stop, dtype=float))
            labels = list(blk.markers)
            points[:3, :, start:stop] = np.stack([blk.markers[m].T * 1000.0 for m in labels], axis=1)
            if scn.plates:
                analogs[0, :, start * ratio: stop * ratio] = analog_block(
                    scn, np.arange(start * ratio, stop * ratio, dtype=float)).T
            t1 = time.perf_counter()
            clock["generate_s"] += t1 - t0
            if truth_file is not None:
                df = pd.DataFrame(truth_columns(scn, blk, start))
                truth_file.write(df.to_csv(index=False, header=start == 0, float_format="%.10g",
                                           lineterminator="\n").encode("utf-8"))
                clock["truth_csv_s"] += time.perf_counter() - t1
            del blk
    t0 = time.perf_counter()
    c = _c3d(labels, p, subject_processing(p), scn.plates, events if len(events) <= MAX_C3D_EVENTS else (),
             points=points, analogs=analogs)
    _set(c, "TRIAL", "DESCRIPTION", [scn.name])
    del points, analogs
    _write_c3d(c, path)
    del c
    clock["c3d_write_s"] = time.perf_counter() - t0
    if timings is not None:
        timings.update(clock)
    ev = pd.DataFrame({"label": [e[0] for e in events], "context": [e[1] for e in events],
                       "time_s": [e[2] for e in events],
                       "frame": [int(round(e[2] * p.point_rate)) + 1 for e in events]})
    ev_path, seg_path = Path(f"{stem}_events.csv"), Path(f"{stem}_segments.json")
    _write_text(ev_path, ev.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
    _write_text(seg_path, segments_json(p))
    return written + [ev_path, seg_path]


