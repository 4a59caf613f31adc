"""The markers check (gaitid.model.marker_faults): silent on every clean real and synthetic trial,
and naming the marker(s) and frames of the faults written into copies of real and synthetic
trials with ezc3d (docs/checks.md, markers section)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from gaitid import process
from gaitid.core.checks import NOT_RUN, PASSED, WARNED
from gaitid.core.errors import SettingsError
from gaitid.core.resources import sample_data_dir
from gaitid.core.settings import Settings
from gaitid.io.c3d import read_c3d
from gaitid.model.marker_faults import marker_fault_check, segment_lengths
from gaitid.model.markerset import load_model
from tests.conftest import realdata_path, synthetic_trial

ezc3d = pytest.importorskip("ezc3d")

WALK = sample_data_dir() / "walk_synthetic.c3d"
CLEAN = {  # every real trial gaitid processes, with the options it needs (benchmarks/compare_results.py)
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": "btkdata/PiG_Calibration-FlatFoot-Full.c3d"},
    "btkdata/PiG_Motion3_FF.c3d": {"static": "btkdata/PiG_Calibration3_FF.c3d"},
    "btkdata/FunctionalWalk.c3d": {},
    "btkdata/PlugInC3D.c3d": {"subject": {"mass": 66.7, "leg_length": 0.9, "knee_width": 0.1, "ankle_width": 0.07}},
    "biomechzoo/HC030A05.c3d": {}, "c3d-parser/MH0222_BP06.c3d": {}, "python-gaitalytics/test_small.c3d": {},
    "ezc3d-testfiles/Qualisys.c3d": {"model": "isb", "subject": "plates"},
    "opensim-core/walking2.c3d": {"model": "isb", "subject": "plates"},
    "opensim-models/subject01_walk1.trc": {"model": "isb-cast", "subject": 72.6,
                                           "static": "opensim-models/subject01_static.trc"},
}


def markers_check(result):
    return next(c for c in result.checks if c.name == "markers")


def mutant(source: Path, folder: Path, edit) -> Path:
    """``source`` written back by ezc3d with its points (4, m, n; the file's units, mm here) edited."""
    c = ezc3d.c3d(str(source))
    labels = list(c["parameters"]["POINT"]["LABELS"]["value"])
    xyz = np.array(c["data"]["points"])
    edit(labels, xyz)
    c["data"]["points"] = xyz
    path = folder / f"mutant_{source.stem}.c3d"
    c.write(str(path))
    return path


def swap(a, b, start=0):
    def edit(labels, xyz):
        i, j = labels.index(a), labels.index(b)
        xyz[:3, [i, j], start:] = xyz[:3, [j, i], start:]
    return edit


@pytest.mark.realdata
@pytest.mark.parametrize("relative", list(CLEAN))
def test_every_clean_real_trial_passes_with_margin(relative):
    options = dict(CLEAN[relative])
    if "static" in options:
        options["static"] = realdata_path(options["static"])
    result = process(realdata_path(relative), **options)
    check = markers_check(result)
    assert check.status == PASSED and not check.warnings, check.warnings
    s = Settings()
    model = load_model(result.settings.model)
    lengths = segment_lengths(result.kinematics)
    worst = max(float(np.nanmax(np.abs(v - np.nanmedian(v)))) for v in lengths.values())
    assert worst < 0.7 * s.segment_length_tolerance_m  # clean: at most 31 mm (docs/checks.md)
    medians = {k: float(np.nanmedian(v)) for k, v in lengths.items()}
    for seg in model.chain:
        left, right = medians["Left", seg], medians["Right", seg]
        assert abs(left - right) / (0.5 * (left + right)) < 0.7 * s.segment_asymmetry_tolerance


@pytest.mark.parametrize("kind", ["walk", "treadmill", "stairs"])
def test_the_synthetic_trials_pass(tmp_path, kind):
    path = synthetic_trial(kind, tmp_path)
    check = markers_check(process(path))
    # the stairs' toe is exactly still for 0.44 s of stance, its foot with it: not a stuck marker
    assert check.status == PASSED and "within 2 mm of their medians" in check.detail


def test_segment_lengths_are_the_joint_centres_distances():
    result = process(WALK)
    lengths = segment_lengths(result.kinematics)
    jc = result.kinematics.joint_centres
    for side, s in (("Left", "left"), ("Right", "right")):
        np.testing.assert_allclose(lengths[side, "thigh"], np.linalg.norm(jc[f"{s}.hip"] - jc[f"{s}.knee"], axis=1))
        np.testing.assert_allclose(lengths[side, "shank"], np.linalg.norm(jc[f"{s}.knee"] - jc[f"{s}.ankle"], axis=1))
        toe = result.trial.point(f"{side[0]}TOE")  # Plug-in Gait's toe point is the marker (filtered)
        foot = np.linalg.norm(jc[f"{s}.ankle"] - toe, axis=1)
        assert np.nanmax(np.abs(lengths[side, "foot"] - foot)) < 0.003  # the 6 Hz filter moves TOE < 3 mm
        # the synthetic truth: thigh 430 mm, shank 420 mm (sample_data/walk_synthetic_segments.json)
    assert abs(np.nanmedian(lengths["Left", "thigh"]) - 0.430) < 0.002
    assert abs(np.nanmedian(lengths["Left", "shank"]) - 0.420) < 0.002


def test_segment_lengths_are_numpys_norms_bit_for_bit():
    """The lengths of every segment, computed at once from the stacked joint centres, are each
    segment's own np.linalg.norm of proximal minus distal, bit for bit."""
    kin = process(WALK).kinematics
    lengths = segment_lengths(kin)
    assert len(lengths) == sum(len(kin.motion[side]) for side in kin.motion) == 6
    for side in kin.motion:
        for body, motion in zip(kin.chains[side].bodies, kin.motion[side]):
            np.testing.assert_array_equal(lengths[side, body.name],
                                          np.linalg.norm(motion.proximal_lab - motion.distal_lab, axis=1))


@pytest.mark.parametrize("relative", ["sample", "c3d-parser/MH0222_BP06.c3d"])
def test_knee_markers_swapped_from_mid_trial_are_named_with_the_first_frame(tmp_path, relative):
    source = WALK if relative == "sample" else realdata_path(relative)
    trial = read_c3d(source)
    half = trial.n_frames // 2
    result = process(mutant(source, tmp_path, swap("LKNE", "RKNE", half)))
    check = markers_check(result)
    assert check.status == WARNED
    side = [w for w in check.warnings if "LKNE is to the right of RKNE" in w]
    assert len(side) == 1 and f"from frame {trial.first_frame + half} " in side[0]
    assert "Settings.marker_side_margin_m" in side[0]
    shank = [w for w in check.warnings if "the right shank" in w]
    assert shank and "RKNE" in shank[0]
    assert all(w in result.warnings for w in check.warnings)  # Result.warnings carries them
    # a check turned off does not warn
    off = process(mutant(source, tmp_path, swap("LKNE", "RKNE", half)), segment_length_tolerance_m=math.inf,
                  marker_side_margin_m=math.inf, segment_asymmetry_tolerance=math.inf, marker_knock_m=math.inf,
                  marker_turn_deg=math.inf)
    assert markers_check(off).status == PASSED


def test_ankle_markers_swapped_all_trial_long_are_named_throughout(tmp_path):
    result = process(mutant(WALK, tmp_path, swap("LANK", "RANK")))
    warnings = markers_check(result).warnings
    assert any("LANK is to the right of RANK" in w and "throughout the trial" in w for w in warnings)
    assert any(w.startswith("markers: the left foot (ankle to toe)") for w in warnings)


def test_a_frozen_toe_is_a_stuck_marker_with_its_frames(tmp_path):
    trial = read_c3d(WALK)
    width = int(trial.point_rate)  # 1 s
    start = trial.n_frames // 2 - width // 2

    def freeze(labels, xyz):
        i = labels.index("RTOE")
        xyz[:3, i, start:start + width] = xyz[:3, i, start:start + 1]

    warnings = markers_check(process(mutant(WALK, tmp_path, freeze))).warnings
    stuck = [w for w in warnings if "RTOE stays within 0.1 mm" in w]
    first, last = trial.first_frame + start, trial.first_frame + start + width - 1
    assert len(stuck) == 1 and f"frames {first}-{last} " in stuck[0] and "Settings.stuck_marker_s" in stuck[0]
    assert any(w.startswith("markers: the right foot") for w in warnings)
    assert not [w for w in warnings if "stays within" in w and "RTOE" not in w]


def test_tibia_and_ankle_markers_swapped_make_the_legs_unequal(tmp_path):
    warnings = markers_check(process(mutant(WALK, tmp_path, swap("RTIB", "RANK")))).warnings
    unequal = [w for w in warnings if "Settings.segment_asymmetry_tolerance" in w]
    assert any("the left foot (ankle to toe) is 158 mm long (median) and the right" in w for w in unequal)
    assert any("the left shank" in w for w in unequal)


def test_a_knee_marker_knocked_forward_shows_in_the_shank(tmp_path):
    trial = read_c3d(WALK)
    half = trial.n_frames // 2

    def knock(labels, xyz):
        xyz[0, labels.index("LKNE"), half:] += 50.0  # mm, lab X (forward in the synthetic walk)

    warnings = markers_check(process(mutant(WALK, tmp_path, knock))).warnings
    assert len(warnings) == 2 and warnings[0].startswith("markers: the left shank (knee to ankle)")
    first = int(warnings[0].split("frame(s), frame(s) ")[1].split("-")[0])
    assert first >= trial.first_frame + half  # only after the knock
    assert warnings[1].startswith("markers: LKNE moves by ")  # the marker itself (tests/test_marker_knocks.py)


def test_the_check_never_changes_its_inputs_and_says_when_it_cannot_run():
    result = process(WALK)
    trial, kin = result.trial, result.kinematics
    before = trial.markers.copy(), list(trial.marker_labels)
    check = marker_fault_check(trial, load_model("plugin-gait"), kin)
    assert check.status == PASSED
    np.testing.assert_array_equal(trial.markers, before[0])
    assert trial.marker_labels == before[1]
    blind = dataclasses.replace(kin, motion={side: [dataclasses.replace(m, proximal_lab=np.full_like(m.proximal_lab,
                                                                                                      np.nan))
                                                    for m in motion] for side, motion in kin.motion.items()})
    check = marker_fault_check(trial, load_model("plugin-gait"), blind)
    assert check.status == NOT_RUN and "ever both known" in check.detail


@pytest.mark.parametrize("name", ["segment_length_tolerance_m", "segment_asymmetry_tolerance", "stuck_marker_s",
                                  "stuck_marker_m", "marker_side_margin_m", "marker_knock_m", "marker_turn_deg"])
def test_marker_thresholds_are_validated(name):
    for bad in (0, -1.0, float("nan"), True, "0.1"):
        with pytest.raises(SettingsError, match=name):
            Settings(**{name: bad})
    assert getattr(Settings(**{name: math.inf}), name) == math.inf


def test_the_model_plan_is_rebuilt_for_another_label_set_or_another_model():
    """The model's plan (labels, pairs, knock layout) is kept per model and label set: a trial with
    a marker missing, or another model, never reuses the plan of the trial checked before (the
    left thigh without LTHI is no three-point segment: its plane is not measured)."""
    result = process(WALK)
    trial, kin, model = result.trial, result.kinematics, load_model("plugin-gait")
    full = marker_fault_check(trial, model, kin)  # the plan of the full label set, kept
    assert "turn by at most 0 deg (left thigh;" in full.detail
    keep = [i for i, lab in enumerate(trial.marker_labels) if lab != "LTHI"]
    fewer = dataclasses.replace(trial, marker_labels=[trial.marker_labels[i] for i in keep],
                                markers=trial.markers[:, keep])
    assert "turn by at most 0 deg (right thigh;" in marker_fault_check(fewer, model, kin).detail
    again = marker_fault_check(trial, model, kin)
    assert (again.status, again.detail, again.warnings) == (full.status, full.detail, full.warnings)
    other = dataclasses.replace(model, segment_markers={seg: [lab for lab in labs if lab != "{S}THI"]
                                                        for seg, labs in model.segment_markers.items()})
    assert "turn by at most 0 deg (left shank;" in marker_fault_check(trial, other, kin).detail  # no thigh plane


def test_stuck_marker_needs_every_other_marker_to_move_relative_to_it():
    """A marker still for 0.3 s while the others move is named; frozen with a second marker over the
    same frames (a still segment) it is not; a second marker still by the threshold but drifting
    0.09 mm a frame along the first moves 2.7 mm relative to it over 30 frames: named under a 1 mm
    tolerance, not under 50 mm (the brute-force spread either way, whether or not it is measured)."""
    from types import SimpleNamespace

    from gaitid.model.marker_faults import _stuck_findings

    n = 100
    t = np.arange(n)[:, None]
    X = np.stack([np.hstack([0.01 * t + k, 0.02 * np.sin(t / 5.0 + k), 0.9 + 0.0 * t]) for k in range(4)], axis=1)
    trial = SimpleNamespace(point_rate=100.0, frames=np.arange(n) + 1, time=np.arange(n) / 100.0)
    labels = ["A", "B", "C", "D"]

    def stuck(X, tol):
        return _stuck_findings(trial, labels, X, 0.2, 1e-4, tol)

    alone = X.copy()
    alone[40:71, 0] = alone[40, 0]  # frames 40-70: 30 still steps
    found = stuck(alone, 0.05)
    assert len(found) == 1 and found[0].startswith("markers: A stays within 0.1 mm") and "frames 41-71" in found[0]
    pair = alone.copy()
    pair[40:71, 1] = pair[40, 1]
    assert stuck(pair, 0.05) == [] and stuck(pair, 0.0) == []  # B keeps its distance to A exactly
    drift = alone.copy()
    drift[40:71, 1] = drift[40, 1] + np.arange(31)[:, None] * np.array([9e-5, 0.0, 0.0])
    assert stuck(drift, 0.05) == []
    named = stuck(drift, 0.001)
    assert [w.split()[1] for w in named] == ["A", "B"] and "at least 3 mm relative" in named[0]
