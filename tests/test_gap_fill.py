"""Marker gap filling (gaitid/model/gap_fill.py): spline, rigid body, principal components, the
limits (max_fill_s, a segment with no marker, the trial's ends), the record and the warnings, and the
kinetics of real trials with a gap cut in mid-stance against the uncut trial."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from conftest import realdata_path
from gaitid import process
from gaitid.core.errors import SettingsError
from gaitid.core.settings import Settings
from gaitid.core.trial import Trial
from gaitid.model.gap_fill import fill_marker_gaps, rigid_fill
from gaitid.model.markerset import load_model
from gaitid.pipeline import load_trial


def cut(trial: Trial, label: str, a: int, b: int) -> Trial:
    m = trial.markers.copy()
    m[a:b, trial.marker_labels.index(label)] = np.nan
    return replace(trial, markers=m)


def rigid_pelvis(n: int = 300, rate: float = 100.0) -> Trial:
    """Four pelvis markers on one rigid body turning about three axes and walking along x."""
    local = np.array([[0.12, 0.1, 0.0], [0.12, -0.1, 0.0], [-0.05, 0.04, 0.02], [-0.05, -0.04, 0.02]])
    t = np.arange(n) / rate
    rot = Rotation.from_euler("zxy", np.stack([0.3 * np.sin(2 * np.pi * t), 0.1 * np.sin(4 * np.pi * t),
                                               0.2 * np.cos(2 * np.pi * t)], 1))
    origin = np.stack([1.2 * t, 0.02 * np.sin(2 * np.pi * t), 0.9 + 0.03 * np.sin(4 * np.pi * t)], 1)
    markers = np.stack([rot.apply(p) + origin for p in local], axis=1)
    return Trial(path=None, point_rate=rate, first_frame=1, marker_labels=["LASI", "RASI", "LPSI", "RPSI"],
                 markers=markers)


def test_rigid_fill_is_exact_for_a_rigid_body():
    trial = rigid_pelvis()
    gapped = cut(trial, "LASI", 100, 150)  # 0.5 s, longer than the spline's 10 frames
    filled, rec = fill_marker_gaps(gapped, load_model("plugin-gait"))
    assert [(f.label, f.start, f.stop, f.method) for f in rec.filled] == [("LASI", 100, 150, "rigid")]
    np.testing.assert_allclose(filled.point("LASI"), trial.point("LASI"), atol=1e-12)
    assert np.isnan(gapped.point("LASI")[100:150]).all()  # the caller's trial is untouched
    # the function itself: from each end the same, so any blend is exact
    np.testing.assert_allclose(rigid_fill(trial.markers[:, 1:], trial.markers[:, 0], 100, 150),
                               trial.markers[100:150, 0], atol=1e-12)


def test_limits_and_switches():
    trial = rigid_pelvis()
    model = load_model("plugin-gait")
    # longer than max_fill_s: NaN, named with its Vicon frames and the setting
    _, rec = fill_marker_gaps(cut(trial, "LASI", 100, 160), model, max_fill_s=0.5)
    assert not rec.filled and rec.unfilled[0].reason == "longer than max_fill_s 0.5 s"
    assert rec.warnings() == ["marker gaps left unfilled (NaN): LASI frames 101-160 (0.60 s): longer than "
                              "max_fill_s 0.5 s"]
    # a gap at the trial's end is not bounded: left as is, not listed
    end = cut(trial, "LASI", 250, 300)
    out, rec = fill_marker_gaps(end, model)
    assert out is end and not rec.filled and not rec.unfilled
    # rigid off, PCA on: the pelvis still filled from the others by principal components
    out, rec = fill_marker_gaps(cut(trial, "LASI", 100, 150), model, rigid=False)
    assert rec.filled[0].method == "pca"
    assert np.abs(out.point("LASI")[100:150] - trial.point("LASI")[100:150]).max() < 0.02
    # both off: NaN with the reason
    out, rec = fill_marker_gaps(cut(trial, "LASI", 100, 150), model, rigid=False, pca=False)
    assert np.isnan(out.point("LASI")[100:150]).all() and "fill_pca" in rec.unfilled[0].reason
    # short gap: the spline, listed too
    out, rec = fill_marker_gaps(cut(trial, "LASI", 100, 105), model)
    assert rec.filled[0].method == "spline" and np.abs(out.point("LASI") - trial.point("LASI")).max() < 1e-4


def test_rigid_fill_from_the_static_shape():
    """With a static trial the rigid fill carries the marker's static position by the rigid motion of
    the segment's static shape onto its other markers, frame by frame (checked against scipy's Kabsch
    fit), and blends out the difference at the gap's ends; method 'rigid_static', named in the
    warnings. Without the marker in the static: 'rigid' from the trial's frames, as before."""
    trial = rigid_pelvis()
    local = trial.markers[0]  # a rest pose: the static stands still in it
    static = replace(trial, markers=np.repeat(local[None], 50, axis=0))
    model = load_model("plugin-gait")
    out, rec = fill_marker_gaps(cut(trial, "LASI", 100, 150), model, static=static)  # rigid: exact
    assert [(f.label, f.method) for f in rec.filled] == [("LASI", "rigid_static")]
    np.testing.assert_allclose(out.point("LASI"), trial.point("LASI"), atol=1e-12)
    assert rec.warnings() == ["marker gaps filled by rigid body (the segment's other markers, their shape in the "
                              "static trial): LASI frames 101-150 (0.50 s) (the fills table)"]
    # skin motion: LASI slides 8 mm along lab z relative to the pelvis; the fill follows the static shape
    t = np.arange(trial.n_frames)
    moved = trial.markers.copy()
    moved[:, 0, 2] += 0.008 * np.sin(2 * np.pi * t / 90)
    out, rec = fill_marker_gaps(cut(replace(trial, markers=moved), "LASI", 100, 150), model, static=static)
    expect = []
    for k in range(99, 151):
        rot, _ = Rotation.align_vectors(moved[k, 1:] - moved[k, 1:].mean(0), local[1:] - local[1:].mean(0))
        expect.append(rot.apply(local[0] - local[1:].mean(0)) + moved[k, 1:].mean(0))
    expect = np.array(expect)
    w = (np.arange(100, 150) - 99)[:, None] / 51
    expect = expect[1:-1] + (1 - w) * (moved[99, 0] - expect[0]) + w * (moved[150, 0] - expect[-1])
    np.testing.assert_allclose(out.point("LASI")[100:150], expect, atol=1e-9)
    old, rec = fill_marker_gaps(cut(replace(trial, markers=moved), "LASI", 100, 150), model)  # no static
    assert rec.filled[0].method == "rigid" and np.abs(old.point("LASI")[100:150] - expect).max() > 1e-4
    lacking = replace(static, marker_labels=["XASI", "RASI", "LPSI", "RPSI"])
    _, rec = fill_marker_gaps(cut(trial, "LASI", 100, 150), model, static=lacking)
    assert rec.filled[0].method == "rigid"
    _, rec = fill_marker_gaps(cut(trial, "LASI", 100, 150), model, static=static, rigid=False)
    assert rec.filled[0].method == "pca"  # fill_rigid=False turns both rigid fills off


def test_process_fills_from_the_static():
    """process(static=...) hands the static to the gap filling: a 0.3 s ASIS gap of a trial with its
    static is filled by the static's pelvis shape."""
    trial = load_trial(realdata_path("btkdata/PiG_Motion3_FF.c3d"))
    static = realdata_path("btkdata/PiG_Calibration3_FF.c3d")
    i = trial.marker_labels.index("LASI")
    a = int(np.flatnonzero(np.isfinite(trial.markers[:, i, 0]))[0]) + 40
    res = process(cut(trial, "LASI", a, a + 30), static=static)
    assert [(f.label, f.method) for f in res.fills.filled] == [("LASI", "rigid_static")]
    alone, _ = fill_marker_gaps(cut(trial, "LASI", a, a + 30), load_model("plugin-gait"), static=load_trial(static))
    np.testing.assert_array_equal(res.trial.point("LASI"), alone.point("LASI"))
    err = np.linalg.norm(res.trial.point("LASI")[a:a + 30] - trial.point("LASI")[a:a + 30], axis=1)
    assert err.max() < 0.015  # 10.5 mm: the pelvis turning at the start of the walk, skin motion


@pytest.mark.parametrize("value", [-0.1, "0.5", True])
def test_max_fill_s_validated(value):
    with pytest.raises(SettingsError, match="max_fill_s"):
        Settings(max_fill_s=value)
    with pytest.raises(SettingsError, match="fill_pca"):
        Settings(fill_pca=1)


def test_a_segment_with_no_marker_is_never_filled():
    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    both = cut(cut(trial, "LTHI", 150, 180), "LKNE", 150, 180)  # the thigh has no marker left
    out, rec = fill_marker_gaps(both, load_model("plugin-gait"))
    assert {f.label for f in rec.unfilled} == {"LTHI", "LKNE"}
    assert all(f.reason == "no other marker of its segment seen throughout the gap" for f in rec.unfilled)
    assert np.isnan(out.point("LKNE")[150:180]).all()


def test_clean_real_trial_untouched():
    trial = load_trial(realdata_path("c3d-parser/MH0222_BP06.c3d"))
    out, rec = fill_marker_gaps(trial, load_model("plugin-gait"))
    assert out is trial and rec.filled == () and rec.unfilled == ()


def stance(result, side):
    t = result.trial
    c = next(c for c in result.cycles if c.side == side and c.kinetic)
    return t.index_of_time(c.start_time), t.index_of_time(c.foot_off_time)


@pytest.mark.parametrize("name, label", [("python-gaitalytics/test_small.c3d", "LKNE"),
                                         ("c3d-parser/MH0222_BP06.c3d", "RTIB"),
                                         ("c3d-parser/MH0222_BP06.c3d", "LASI"),
                                         ("biomechzoo/HC030A05.c3d", "RTHI")])
def test_gap_in_mid_stance_keeps_the_kinetics(name, label):
    """A 0.3 s gap in mid-stance: the issue's targets (sagittal moment RMS <= 0.03 N.m/kg over the
    stance, no kinetic cycle lost, events within 1 frame). Before filling, the gap stayed NaN and
    the cycle was not kinetic."""
    trial = load_trial(realdata_path(name))
    ref = process(trial)
    side = "Left" if label[0] == "L" else "Right"
    s0, s1 = stance(ref, side)
    g = int(round(0.3 * trial.point_rate))
    a = (s0 + s1) // 2 - g // 2
    res = process(cut(trial, label, a, a + g))
    assert [f.label for f in res.fills.filled] == [label]
    assert any(f"{label} frames {trial.first_frame + a}-{trial.first_frame + a + g - 1}" in w for w in res.warnings)
    assert [c.kinetic for c in res.cycles] == [c.kinetic for c in ref.cycles]
    assert [(e.label, e.context) for e in res.events] == [(e.label, e.context) for e in ref.events]
    assert max(abs(e.frame - f.frame) for e, f in zip(res.events, ref.events)) <= 1
    for joint in ("Hip", "Knee", "Ankle"):
        d = res.outputs.curves[side][f"{joint}Moment"][s0:s1, 0] - ref.outputs.curves[side][f"{joint}Moment"][s0:s1, 0]
        assert np.sqrt(np.mean(d ** 2)) <= 0.03, joint
    none = process(cut(trial, label, a, a + g), max_fill_s=0.0)  # as before: the gap stays NaN
    assert sum(c.kinetic for c in none.cycles) < sum(c.kinetic for c in ref.cycles)


def test_fills_table_written_with_every_gap(tmp_path):
    """``<trial>_fills.csv``: one row per gap, filled (method) or left NaN (reason), Vicon frames."""
    from gaitid.export import write_tables

    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    gapped = cut(cut(trial, "LKNE", 150, 180), "RTOE", 100, 170)  # 0.3 s (PCA) and 0.7 s (too long)
    res = process(gapped)
    written = {p.name: p for p in write_tables(res, tmp_path)}
    import pandas as pd

    table = pd.read_csv(written["test_small_fills.csv"], keep_default_na=False)
    f0 = trial.first_frame
    assert table.to_dict("records") == [
        {"label": "LKNE", "method": "pca", "first_frame": f0 + 150, "last_frame": f0 + 179, "duration_s": 0.3,
         "reason": ""},
        {"label": "RTOE", "method": "", "first_frame": f0 + 100, "last_frame": f0 + 169, "duration_s": 0.7,
         "reason": "longer than max_fill_s 0.5 s"}]
    clean = process(trial)
    assert clean.fills.table().empty and list(clean.fills.table().columns) == list(table.columns)
    # the per-frame table flags the rows of the filled frames of the curves LKNE moves (the left
    # thigh's frame and knee centre, so the left hip, knee and ankle; not the pelvis, not the right side)
    frames = pd.read_csv(written["test_small_frames.csv"], keep_default_na=False, dtype={"value": str})
    moved = frames["frame"].between(f0 + 150, f0 + 179) & (frames["side"] == "Left") & \
        ~frames["variable"].isin(["PelvisAngles", "GroundReactionForce"])
    assert set(frames["flag"][moved]) == {"filled"} and set(frames["flag"][~moved]) == {""}
    assert (res.frames["flag"].astype(str) == frames["flag"]).all()  # the built table says the same


def test_report_curves_mark_the_filled_stretches():
    """The cycle panels draw the points within a filled gap again, dotted (gid 'filled:<side>'), at
    the percent of the cycle the gap's frames fall on; a clean trial has none."""
    from gaitid.report.content import gather
    from gaitid.report.plots import Panel, cycle_panel

    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    res = process(cut(trial, "LKNE", 150, 180))
    data = gather(res)
    t = res.trial.time
    cycles = [c for c in res.cycles if c.side == "Left"]
    for c, mask in zip(cycles, data.sides["Left"].filled["KneeAngles"]):
        pct = np.linspace(0, 100, 101)
        at = c.start_time + pct / 100 * (c.end_time - c.start_time)
        inside = (at > t[149]) & (at < t[180])  # between the last seen frame and the next
        assert (mask == inside).all()
    assert data.sides["Left"].filled["KneeAngles"].any()
    assert not data.sides["Left"].filled["PelvisAngles"].any()  # LKNE does not move the pelvis
    assert data.sides["Right"].filled is None  # nor any right-side curve
    panel = Panel("Knee angles", (0, 0, 100, 100))
    cycle_panel(panel, data, "KneeAngles", "X")
    assert panel.get("filled:Left") and not panel.get("filled:Right")
    assert ("dotted: from filled marker gaps", "#8a4b00") in panel.notes
    pelvis = Panel("Pelvis angles", (0, 0, 100, 100))
    cycle_panel(pelvis, data, "PelvisAngles", "X")
    assert not pelvis.get("filled:Left") and not pelvis.notes
    clean = gather(process(trial))
    assert clean.sides["Left"].filled is None and clean.sides["Right"].filled is None


def test_cli_max_fill(tmp_path):
    """``gaitid run --max-fill S``: 0 leaves a 0.3 s gap NaN (listed, with the reason); the default
    fills it; both list it in <trial>_fills.csv."""
    import ezc3d
    import pandas as pd

    from gaitid.cli import main

    c = ezc3d.c3d(str(realdata_path("python-gaitalytics/test_small.c3d")))
    points = c["data"]["points"]
    points[:3, c["parameters"]["POINT"]["LABELS"]["value"].index("LKNE"), 150:180] = np.nan
    c["data"]["points"] = points
    path = tmp_path / "gap.c3d"
    c.write(str(path))
    rows = {}
    for option in ([], ["--max-fill", "0"]):
        out = tmp_path / ("out" + "".join(option))
        assert main(["run", str(path), "-o", str(out), "--no-report", *option]) == 0
        rows[bool(option)] = pd.read_csv(out / "gap_fills.csv", keep_default_na=False).to_dict("records")
    assert [(r["label"], r["method"]) for r in rows[False]] == [("LKNE", "pca")]
    assert [(r["label"], r["method"], r["reason"]) for r in rows[True]] == [
        ("LKNE", "", "longer than max_fill_s 0 s")]


KINETIC = [f"{j}{q}" for j in ("Ankle", "Knee", "Hip")
           for q in ("Force", "Moment", "MomentInertial", "MomentVelocity", "MomentGravity", "MomentExternal", "Power")]


@pytest.mark.parametrize("label, moved", [
    # models/plugin-gait.toml read by hand: LTOE is the point 'toe', which only the left foot's frame
    # uses (its primary axis); the foot is the first body of the left chain, so every left joint's
    # kinetics, and the two angles with the foot as a segment (ankle, foot progression)
    ("LTOE", {"Left": {"AnkleAngles", "FootProgressAngles", *KINETIC}, "Right": set()}),
    # RTIB: the right ankle centre (chord's wand), so the right shank and foot: knee, ankle and foot
    # progression angles and every right joint's kinetics (the shank's frame, the foot's origin)
    ("RTIB", {"Left": set(), "Right": {"KneeAngles", "AnkleAngles", "FootProgressAngles", *KINETIC}}),
    # LASI: the pelvis frame, hence both hip centres and every segment of both legs: every curve
    # but the ground reaction, on both sides
    ("LASI", None),
])
def test_a_filled_marker_flags_only_the_curves_it_moves(label, moved):
    """A filled marker flags (frames table 'filled', the report's dotted stretches) only the curves
    computed from it: its segment's frames and joint centres and what depends on them."""
    from gaitid.report.content import gather

    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    res = process(cut(trial, label, 150, 180))
    assert [f.method for f in res.fills.filled] == ["pca"]
    if moved is None:
        moved = {s: set(res.outputs.curves[s]) - {"GroundReactionForce"} for s in ("Left", "Right")}
    flagged = res.frames[res.frames["flag"].astype(str) == "filled"]
    got = {s: set(flagged["variable"][flagged["side"] == s].astype(str)) for s in ("Left", "Right")}
    assert got == moved
    assert set(flagged["frame"]) == set(trial.first_frame + np.arange(150, 180))
    data = gather(res)
    for s in ("Left", "Right"):
        assert {v for v, m in (data.sides[s].filled or {}).items() if m.any()} == moved[s], s
