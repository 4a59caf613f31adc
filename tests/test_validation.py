"""Validation against Plug-in Gait (issue 7): the targets on the real trials, and the metrics.

The real-data tests read ../shared/realdata in place (skipped when absent). One module-scoped
run of :func:`gaitid.validation.plugin_gait.validate` over the whole folder (both modes, ~10 s) feeds them.
Figures and their explanation: docs/validation.md.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import REALDATA

from gaitid.cycles.outputs import output_layout
from gaitid.model.markerset import load_model
from gaitid.validation.plugin_gait import compare, find_output, format_table, lowpass_runs, validate

# files whose Plug-in Gait kinetics come from clean (already filtered) trajectories
CLEAN = ["HC030A05.c3d", "PiG_Motion-FlatFoot-Full.c3d", "PiG_Motion3_FF.c3d", "MH0222_BP06.c3d", "test_small.c3d"]
# Plug-in Gait's own curves carry 2-2.5x the high-frequency content of gaitid's from the same
# unfiltered markers (docs/validation.md): compared band-limited (both low-passed at 6 Hz)
NOISY_REFERENCE = ["FunctionalWalk.c3d"]
PIG_FILES = CLEAN + NOISY_REFERENCE + ["PlugInC3D.c3d"]


# ----------------------------------------------------------------------------- metrics


def test_find_output_allows_a_suffix_and_prefers_the_exact_name():
    labels = ["LAnkleMoment_M", "RAnkleMoment", "RAnkleMoment_M", "LKneeAnglesV", "LKneeMomentary_long_suffix"]
    assert find_output(labels, "LAnkleMoment") == "LAnkleMoment_M"
    assert find_output(labels, "RAnkleMoment") == "RAnkleMoment"
    assert find_output(labels, "LKneeAngles") == "LKneeAnglesV"
    assert find_output(labels, "LKneeMoment") is None  # a different name, not a suffix
    assert find_output(labels, "LHipMoment") is None


def test_compare_closed_forms():
    rate = 100.0
    t = np.arange(200) / rate
    ref = np.sin(2 * np.pi * t)  # peak +1 at t = 0.25 s (frame 25)
    mask = np.zeros(200, bool)
    mask[5:95] = True  # one "stance"
    offset = compare(ref + 0.03, ref, mask, rate)
    assert offset["rms"] == pytest.approx(0.03, abs=1e-12)
    assert offset["r"] == pytest.approx(1.0, abs=1e-12)
    assert offset["peak_diff"] == pytest.approx(0.03, abs=1e-12)
    assert offset["peak_shift_ms"] == 0.0
    assert (offset["n_frames"], offset["n_cycles"]) == (90, 1)
    late = compare(np.sin(2 * np.pi * (t - 0.03)), ref, mask, rate)  # 3 frames later
    assert late["peak_shift_ms"] == pytest.approx(30.0)
    # RMS of sin(x - d) - sin(x) over whole periods: sqrt(2) |sin(d/2)| (d = 2 pi 0.03); 0.9 period here
    assert late["rms"] == pytest.approx(math.sqrt(2) * abs(math.sin(np.pi * 0.03)), rel=0.06)
    neg = compare(-ref, ref, mask, rate)
    assert neg["r"] == pytest.approx(-1.0)
    # the reference's peak (+1 at frame 25) is matched with our extreme of the same sign (+1 at 75)
    assert neg["peak_diff"] == pytest.approx(0.0, abs=1e-12) and neg["peak_shift_ms"] == pytest.approx(500.0)
    # NaN in ours drops frames; short runs (< 5 frames) are ignored
    ours = ref.copy()
    ours[50] = np.nan
    short = np.zeros(200, bool)
    short[100:103] = True
    res = compare(ours, ref, mask | short, rate)
    assert (res["n_frames"], res["n_cycles"]) == (89, 2)


def test_lowpass_runs_keeps_zero_frames_and_removes_high_frequency():
    rate = 100.0
    t = np.arange(300) / rate
    x = np.sin(2 * np.pi * 1.0 * t) + 0.2 * np.sin(2 * np.pi * 30.0 * t)
    x[:50] = 0.0
    y = lowpass_runs(x, rate)
    assert np.all(y[:50] == 0.0)
    core = slice(100, 250)
    np.testing.assert_allclose(y[core], np.sin(2 * np.pi * t[core]), atol=0.01)


def test_output_layout_is_plug_in_gaits_and_internal_is_its_negation():
    pig = load_model("plugin-gait")
    # ankle in the foot frame (x up, y left, z back): X = -y, Y = +z (left) / -z (right), Z = -x / +x
    assert output_layout(pig, "Ankle", "moment", "distal", "Left")[0] == [1, 2, 0]
    np.testing.assert_array_equal(output_layout(pig, "Ankle", "moment", "distal", "Left")[1], [-1, 1, -1])
    np.testing.assert_array_equal(output_layout(pig, "Ankle", "moment", "distal", "Right")[1], [-1, -1, 1])
    assert output_layout(pig, "Knee", "moment", "lab", "Left") is None  # lab frame: unmapped
    # both Plug-in Gait models carry the same layout
    seg = load_model("plugin-gait-segments")
    for joint in ("Ankle", "Knee", "Hip"):
        for q in ("moment", "force"):
            for frame in ("distal", "proximal"):
                for side in ("Left", "Right"):
                    a, b = output_layout(pig, joint, q, frame, side), output_layout(seg, joint, q, frame, side)
                    assert a[0] == b[0] and np.array_equal(a[1], b[1])


# ----------------------------------------------------------------------------- real trials


@pytest.fixture(scope="module")
def records():
    if not REALDATA.is_dir():
        pytest.skip(f"real data not available: {REALDATA} is absent (tests read ../shared/realdata in place)")
    return validate(REALDATA)


def _get(records, file, mode, plane="sagittal", quantity="moment"):
    out = [r for r in records if r.get("file") == file and r.get("mode") == mode and r.get("plane") == plane
           and r.get("quantity") == quantity]
    return out


@pytest.mark.slow
def test_every_plug_in_gait_file_is_compared_on_both_sides(records):
    for file in PIG_FILES:
        recs = _get(records, file, "pig-segments")
        assert len(recs) == 6, file  # 2 sides x 3 joints
        assert all(r["n_cycles"] >= 1 and r["n_frames"] >= 20 for r in recs), file
    # the json records carry the documented keys
    keys = {"file", "side", "joint", "plane", "mode", "rms", "r", "n_cycles", "peak_diff", "peak_shift_ms", "n_frames"}
    assert all(keys <= set(r) for r in records if "reason" not in r)
    json.dumps(records)


@pytest.mark.slow
def test_files_that_cannot_be_compared_are_listed_with_the_reason(records):
    reasons = {r["file"]: r["reason"] for r in records if "reason" in r and "mode" not in r}
    for file in ("Eb015pi.c3d", "Gait.c3d", "Qualisys.c3d", "walking2.c3d"):
        assert "no Plug-in Gait joint moments" in reasons[file]
    per_mode = [r for r in records if "reason" in r and r.get("mode") == "markers" and r["file"] == "PlugInC3D.c3d"]
    assert per_mode and "leg_length" in per_mode[0]["reason"]


@pytest.mark.slow
def test_mass_is_estimated_where_the_file_stores_none(records):
    rec = _get(records, "PlugInC3D.c3d", "pig-segments")[0]
    mass = float(rec["note"].split("mass ")[1].split(" kg")[0])
    assert mass == pytest.approx(66.7, abs=0.5)  # data README: about 66.7 kg from FP Fz / PiG GRF


@pytest.mark.slow
def test_a_strike_gaitid_rejects_but_plug_in_gait_used_is_compared(records):
    rec = [r for r in _get(records, "PiG_Motion-FlatFoot-Full.c3d", "pig-segments") if r["side"] == "right"]
    assert rec and all(r["n_cycles"] == 1 for r in rec)
    assert "plate 1 assigned right" in rec[0]["note"]


@pytest.mark.slow
@pytest.mark.parametrize("file", CLEAN)
def test_mode1_sagittal_targets(records, file):
    """Plug-in Gait's own segments: every joint within the 0.02 N.m/kg RMS target and r >= 0.99.
    Measured (docs/validation.md): ankle <= 0.002, knee <= 0.0091, hip <= 0.008; the hip was
    0.022-0.028 on the Nexus 1.4 trials (ankle up to 0.013) while the foot's BSIP end was the TOE
    marker instead of Plug-in Gait's (points.foot_tip): the limits below would catch that back."""
    limits = {"ankle": 0.004, "knee": 0.012, "hip": 0.011}
    for r in _get(records, file, "pig-segments"):
        assert r["rms"] <= limits[r["joint"]], (file, r["side"], r["joint"], r["rms"])
        assert r["r"] >= 0.999, (file, r["side"], r["joint"], r["r"])
        assert abs(r["peak_diff"]) <= 0.05 and abs(r["peak_shift_ms"]) <= 20.0 + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("file", CLEAN + NOISY_REFERENCE)
def test_mode1_band_limited_agreement(records, file):
    """Below 6 Hz the curves agree on every file, the noisy-reference one included."""
    for r in _get(records, file, "pig-segments"):
        assert r["rms_6hz"] <= 0.035, (file, r["side"], r["joint"], r["rms_6hz"])
        assert r["r_6hz"] >= 0.985, (file, r["side"], r["joint"], r["r_6hz"])


@pytest.mark.slow
def test_noisy_reference_misses_only_above_6_hz(records):
    for r in _get(records, "FunctionalWalk.c3d", "pig-segments"):
        if r["joint"] != "ankle":
            assert r["rms"] > 0.04 and r["rms_6hz"] <= 0.015, r  # raw miss, band-limited agreement


@pytest.mark.slow
@pytest.mark.parametrize("file", CLEAN)
def test_mode1_frontal_and_transverse(records, file):
    for plane, limit in (("frontal", 0.025), ("transverse", 0.01)):
        for r in _get(records, file, "pig-segments", plane):
            assert r["rms"] <= limit and r["r"] >= 0.98, (file, plane, r["side"], r["joint"], r["rms"], r["r"])


@pytest.mark.slow
@pytest.mark.parametrize("file", CLEAN)
def test_mode2_markers_sagittal_targets(records, file):
    """gaitid's own Plug-in Gait model from the markers (static trial where there is one)."""
    recs = _get(records, file, "markers")
    assert len(recs) == 6
    for r in recs:
        assert r["rms"] <= 0.05 and r["r"] >= 0.97, (file, r["side"], r["joint"], r["rms"], r["r"])
        # measured: knee <= 0.0083, hip <= 0.013 (0.018-0.028 with the foot ending at the TOE marker)
        if r["joint"] != "ankle":
            assert r["rms"] <= 0.016, (file, r["side"], r["joint"], r["rms"])
    if file.startswith("PiG_Motion"):
        assert recs[0]["static"].startswith("PiG_Calibration")


@pytest.mark.slow
@pytest.mark.parametrize("file", CLEAN)
def test_powers_agree(records, file):
    for r in _get(records, file, "pig-segments", "total", "power"):
        assert r["rms"] <= 0.12 and r["r"] >= 0.98, (file, r["side"], r["joint"], r["rms"], r["r"])


@pytest.mark.slow
def test_format_table_lists_figures_and_reasons(records):
    text = format_table(records)
    assert "MH0222_BP06.c3d" in text and "pig-segments" in text and "sagittal" in text
    assert "Eb015pi.c3d: not compared" in text
    assert "W/kg" in format_table(records, "power")


# ----------------------------------------------------------------------------- the foot's far end


def _second_difference(x: np.ndarray, rate: float) -> np.ndarray:
    """(x[i+1] - 2 x[i] + x[i-1]) rate^2: the stencil Plug-in Gait differentiates positions with."""
    out = np.full_like(x, np.nan)
    out[1:-1] = (x[2:] - 2 * x[1:-1] + x[:-2]) * rate**2
    return out


@pytest.mark.slow
@pytest.mark.parametrize("file, static", [("btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d"),
                                          ("biomechzoo/HC030A05.c3d", None), ("c3d-parser/MH0222_BP06.c3d", None),
                                          ("python-gaitalytics/test_small.c3d", None)])
def test_marker_model_foot_centre_of_mass_is_plug_in_gaits(file, static):
    """In swing Plug-in Gait's AnkleForce is its foot's m (a - g) alone: the acceleration of the
    marker model's foot centre of mass (the ankle centre + half the HEE-TOE length minus the
    marker radius along -z, points.foot_tip) reproduces it to 0.03-0.07 m/s^2 RMS; the ankle-TOE
    midpoint misses by 0.8-2.3. Without HEE the foot falls back to the TOE marker."""
    from dataclasses import replace

    from conftest import realdata_path

    from gaitid.core.settings import Settings
    from gaitid.io.c3d import read_c3d
    from gaitid.model.assembly import build_segments

    trial = read_c3d(realdata_path(file))
    stat = read_c3d(realdata_path(static)) if static else None
    settings = Settings.plugin_gait(marker_cutoff_hz=None).replace(model="plugin-gait")
    kin = build_segments(trial, static=stat, settings=settings)
    model, rate, mass = load_model("plugin-gait"), trial.point_rate, trial.subject.mass
    for side, s in (("Left", "L"), ("Right", "R")):
        body, foot = kin.chains[side][0], kin.motion[side][0]
        ref = trial.model_outputs[find_output(trial.model_outputs, f"{s}AnkleForce")].values * mass
        grf = trial.model_outputs[find_output(trial.model_outputs, f"{s}GroundReactionForce")].values
        order, signs = output_layout(model, "Ankle", "force", "distal", side)
        external_foot = np.empty_like(ref)
        external_foot[:, order] = ref * signs  # reported X, Y, Z -> foot-frame components
        a_pig = -np.einsum("nij,nj->ni", foot.R, external_foot) / body.mass + np.array([0.0, 0.0, -9.81])
        ours = _second_difference(foot.com_lab, rate)
        toe_mid = _second_difference(0.5 * (foot.proximal_lab + trial.point(f"{s}TOE")), rate)
        swing = (np.isfinite(a_pig).all(axis=1) & (np.abs(ref).sum(axis=1) > 0) & np.isfinite(ours).all(axis=1)
                 & ~(np.abs(np.nan_to_num(grf)).sum(axis=1) > 0))
        assert swing.sum() >= 50
        rms = np.sqrt(np.mean((a_pig - ours)[swing] ** 2))
        rms_toe = np.sqrt(np.mean((a_pig - toe_mid)[swing] ** 2))
        assert rms <= 0.1 and rms_toe >= 0.7, (file, side, rms, rms_toe)
    # without the heel markers: the TOE marker, as before
    labels = [lab + "_absent" if lab in ("LHEE", "RHEE") else lab for lab in trial.marker_labels]
    bare = build_segments(replace(trial, marker_labels=labels), static=stat, settings=settings)
    foot = bare.motion["Left"][0]
    np.testing.assert_allclose(foot.com_lab, 0.5 * (foot.proximal_lab + trial.point("LTOE")), equal_nan=True)


def test_band_limited_metric_filters_both_curves_over_the_same_span():
    """A one-frame restart (0 then back) in the reference curve: filtered over its own runs it would
    ring at the restart; over the common span both curves are filtered alike, and identical
    curves compare as identical."""
    rate = 100.0
    t = np.arange(300) / rate
    x = np.sin(2 * np.pi * 1.0 * t) + 0.5
    ref = x.copy()
    ref[150] = 0.0  # Plug-in Gait's one-frame restart
    mask = np.ones(300, bool)
    both = mask & (ref != 0)
    same = compare(lowpass_runs(x, rate, span=both), lowpass_runs(ref, rate, span=both), both, rate)
    assert same["rms"] == pytest.approx(0.0, abs=1e-12)
    own = compare(lowpass_runs(x, rate), lowpass_runs(ref, rate), both, rate)
    assert own["rms"] > 1e-4  # the old way: edge artefacts where only the reference restarts
    short = np.zeros(300, bool)
    short[10:20] = True  # runs shorter than 16 frames are not in the band-limited metric
    assert np.isnan(lowpass_runs(x, rate, span=short)).all()


def test_validate_takes_static_and_plates_like_run(realdata, capsys):
    """``--plates 1=Invalid`` removes the right stance on plate 1 from the comparison (gaitid's
    load is NaN there, so those frames are not like with like); ``--static`` names the static
    for every file; a missing static is a clear error naming the option."""
    import json

    from gaitid.cli import main

    path = str(realdata / "btkdata" / "PiG_Motion-FlatFoot-Full.c3d")
    static = str(realdata / "btkdata" / "PiG_Calibration-FlatFoot-Full.c3d")
    assert main(["validate", path, "--static", static, "--plates", "1=Invalid", "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    right = [r for r in recs if r.get("side") == "right" and r.get("quantity") == "moment"]
    left = [r for r in recs if r.get("side") == "left" and r.get("quantity") == "moment"]
    assert right and all(r["n_frames"] == 0 for r in right)
    assert left and all(r["n_frames"] > 40 for r in left)
    assert all(r["pairing"] == "--static PiG_Calibration-FlatFoot-Full.c3d" for r in left if r["mode"] == "markers")
    assert main(["validate", path, "--static", str(realdata / "absent.c3d")]) == 1
    assert "--static" in capsys.readouterr().err
