"""Plug-in Gait model and file-segments model on real Plug-in Gait files.

References are Vicon's own outputs stored in each file: joint centres (LFEP = hip,
LFEO = knee, LTIO = ankle), segment axis points (LFEO/LFEA/LFEL/LFEP...) and joint
angles (LHipAngles...). Markers are used unfiltered here, as Plug-in Gait's stored
outputs are; see docs/plugin-gait.md for the per-file figures.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.core.errors import DataError, ModelError
from gaitid.model.assembly import build_segments, calibrate_static
from gaitid.model.frames import frame_from_axis_points
from tests.conftest import realdata_path

pytestmark = pytest.mark.realdata

# file, static trial, subject overrides (the FlatFoot session used 16 mm markers: its segment
# points put the KNE marker at knee width / 2 + 8 mm; the diameter is not in its PROCESSING group)
CASES = [
    ("btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d", None),
    ("btkdata/PiG_Motion-FlatFoot-Full.c3d", "btkdata/PiG_Calibration-FlatFoot-Full.c3d", {"marker_radius": 0.008}),
    ("biomechzoo/HC030A05.c3d", None, None),
    ("python-gaitalytics/test_small.c3d", None, None),
    ("btkdata/FunctionalWalk.c3d", None, None),
    ("c3d-parser/MH0222_BP06.c3d", None, None),
]
# MH0222 sets AnkleAbAdd (0.22 / 0.15 rad), ThighRotation, ShankRotation and TibialTorsion: gaitid
# reproduces its ankle centres to 0.1 mm (not to rounding), so its tolerances are a little wider.
ANKLE_EXCEPTIONS = {"c3d-parser/MH0222_BP06.c3d"}

_cache: dict = {}


def _trial(rel):
    from gaitid import read_c3d

    if rel not in _cache:
        _cache[rel] = read_c3d(realdata_path(rel))
    return _cache[rel]


def _rms(x):
    return float(np.sqrt(np.nanmean(np.asarray(x) ** 2)))


def _angle_between(Ra, Rb):
    c = (np.trace(np.swapaxes(Ra, -1, -2) @ Rb, axis1=1, axis2=2) - 1) / 2
    return np.degrees(np.arccos(np.clip(c, -1, 1)))


def _angles_ref(trial, label):
    out = trial.model_outputs.get(label) or trial.model_outputs.get(label + "V")
    return None if out is None else out.values


@pytest.mark.parametrize("model", ["plugin-gait", "plugin-gait-segments"])
@pytest.mark.parametrize("rel, static_rel, overrides", CASES, ids=[c[0].split("/")[1] for c in CASES])
def test_joint_centres_frames_and_angles_match_plug_in_gait(rel, static_rel, overrides, model):
    trial = _trial(rel)
    static = _trial(static_rel) if (static_rel and model == "plugin-gait") else None
    overrides = overrides if model == "plugin-gait" else None  # the file-segments model has no parameters
    mk = build_segments(trial, model, static=static, subject=overrides, marker_cutoff_hz=None)
    loose = model == "plugin-gait" and rel in ANKLE_EXCEPTIONS
    mm, deg = (0.2, 0.1) if loose else (0.01, 0.01)
    for side, S in (("left", "L"), ("right", "R")):
        for jc, label in (("hip", "FEP"), ("knee", "FEO"), ("ankle", "TIO")):
            err_mm = 1000 * np.linalg.norm(mk.joint_centres[f"{side}.{jc}"] - trial.point(S + label), axis=1)
            assert _rms(err_mm) < mm, f"{S} {jc} centre RMS {_rms(err_mm):.3f} mm"
        for seg, code in (("thigh", "FE"), ("shank", "TI"), ("foot", "FO")):
            R_file = frame_from_axis_points(*(trial.point(S + code + c) for c in "OALP"))
            err = _rms(_angle_between(mk.frames[f"{side}.{seg}"], R_file))
            assert err < deg, f"{S} {seg} frame RMS {err:.3f} deg"
        for joint in ("Pelvis", "Hip", "Knee", "Ankle", "FootProgress"):
            d = mk.angles_deg[f"{S}{joint}Angles"] - _angles_ref(trial, f"{S}{joint}Angles")
            rms = np.sqrt(np.nanmean(d**2, axis=0))
            assert (rms < deg).all(), f"{S}{joint}Angles RMS {rms}"


ON = {"Left": True, "Right": True}


def test_static_calibration_reproduces_plug_in_gait_foot_offsets():
    # both sessions were calibrated with the flat-foot option (as their names say): only it
    # reproduces the offsets Nexus stored; without it the right plantar flexion is 0.03-0.06 rad off
    cal = calibrate_static(_trial("btkdata/PiG_Calibration3_FF.c3d"), flat_foot=ON)
    off = calibrate_static(_trial("btkdata/PiG_Calibration3_FF.c3d"))  # a bare static: off, Nexus's default
    stored = _trial("btkdata/PiG_Calibration3_FF.c3d").subject.extra
    for side, S in (("Left", "L"), ("Right", "R")):
        assert cal[side]["static_plantar_flexion"] == pytest.approx(stored[f"{S}StaticPlantFlex"], abs=1e-5)
        assert cal[side]["static_rotation_offset"] == pytest.approx(stored[f"{S}StaticRotOff"], abs=1e-5)
    assert abs(off["Right"]["static_plantar_flexion"] - stored["RStaticPlantFlex"]) > 0.05
    # the FlatFoot static stores zeros; its motion trial stores the offsets computed from it (16 mm markers)
    static = _trial("btkdata/PiG_Calibration-FlatFoot-Full.c3d")
    cal = calibrate_static(static, subject={"marker_radius": 0.008}, flat_foot=ON)
    off = calibrate_static(static, subject={"marker_radius": 0.008})
    stored = _trial("btkdata/PiG_Motion-FlatFoot-Full.c3d").subject.extra
    for side, S in (("Left", "L"), ("Right", "R")):
        assert cal[side]["static_plantar_flexion"] == pytest.approx(stored[f"{S}StaticPlantFlex"], abs=1e-5)
        assert cal[side]["static_rotation_offset"] == pytest.approx(stored[f"{S}StaticRotOff"], abs=1e-5)
    assert abs(off["Right"]["static_plantar_flexion"] - stored["RStaticPlantFlex"]) > 0.04


def _without_stored_offsets(trial):
    from dataclasses import replace

    extra = {k: v for k, v in trial.subject.extra.items() if "Static" not in k}
    return replace(trial, subject=replace(trial.subject, extra=extra))


@pytest.mark.parametrize("case", [0, 1], ids=["PiG_Motion3_FF", "PiG_Motion-FlatFoot-Full"])
def test_flat_foot_follows_the_files_then_nexus_default_off(case):
    """The flat-foot option of the static calibration: read from what the files store (a flag, or
    the plantar flexion offset Nexus stored, which only one option reproduces), else off (Nexus, pyCGM2);
    Settings.flat_foot forces it. Nexus's ankle angles are reproduced to 1e-4 deg with the option
    the files imply, and differ by 3.3-3.4 deg (right) without it."""
    from gaitid.core.settings import Settings

    rel, static_rel, overrides = CASES[case]
    trial, static = _trial(rel), _trial(static_rel)

    def ankle_error(trial, static, flat_foot=None):
        mk = build_segments(trial, static=static, subject=overrides,
                            settings=Settings(marker_cutoff_hz=None, flat_foot=flat_foot))
        err = [np.nanmax(np.abs(mk.angles_deg[f"{S}AnkleAngles"] - _angles_ref(trial, f"{S}AnkleAngles")))
               for S in "LR"]
        return max(err), mk.parameters["Right"]["flat_foot"]

    assert ankle_error(trial, static) == (pytest.approx(0, abs=2e-4), 1.0)  # the files' choice: on
    assert ankle_error(trial, static, True)[0] < 2e-4
    forced_off = ankle_error(trial, static, False)
    assert forced_off[1] == 0.0 and 3.0 < forced_off[0] < 3.6
    # nothing stored (no flag, no offsets): off, Nexus's default
    bare_trial, bare_static = _without_stored_offsets(trial), _without_stored_offsets(static)
    assert ankle_error(bare_trial, bare_static) == (pytest.approx(forced_off[0], abs=1e-9), 0.0)
    # a stored flag (PROCESSING LFlatFoot/RFlatFoot = 1 in the static) turns it on
    from dataclasses import replace

    flagged = replace(bare_static, subject=replace(bare_static.subject,
                                                   extra={**bare_static.subject.extra, "LFlatFoot": 1.0, "RFlatFoot": 1.0}))
    assert ankle_error(bare_trial, flagged) == (pytest.approx(0, abs=2e-4), 1.0)
    # the pipeline passes the setting on (process(), gaitid run --no-flat-foot)
    from gaitid.pipeline import process

    res = process(trial, static=static, subject=overrides, settings=Settings.plugin_gait(flat_foot=False))
    assert res.kinematics.parameters["Right"]["flat_foot"] == 0.0
    # without the 16 mm markers of the FlatFoot session (the file does not store them) the rotation
    # offset differs from the stored one, the plantar flexion does not: still the files' choice, on
    assert build_segments(trial, static=static).parameters["Right"]["flat_foot"] == 1.0
    # a script's parameter beats the setting
    mk = build_segments(trial, static=static, subject={**(overrides or {}), "flat_foot": 0.0},
                        settings=Settings(marker_cutoff_hz=None, flat_foot=True))
    assert mk.parameters["Left"]["flat_foot"] == 0.0


def test_filtered_default_keeps_sagittal_angles_within_2_degrees():
    trial = _trial("biomechzoo/HC030A05.c3d")
    mk = build_segments(trial)  # default: 6 Hz zero-lag Butterworth, gaps <= 10 frames filled
    for S in "LR":
        for joint in ("Hip", "Knee", "Ankle"):
            d = mk.angles_deg[f"{S}{joint}Angles"][:, 0] - _angles_ref(trial, f"{S}{joint}Angles")[:, 0]
            assert _rms(d) < 2.0


def test_solver_inputs_are_consistent():
    trial = _trial("python-gaitalytics/test_small.c3d")
    mk = build_segments(trial, "plugin-gait")
    n = trial.n_frames
    for side in ("Left", "Right"):
        foot, shank, thigh = mk.motion[side]
        assert mk.chains[side].names == ["foot", "shank", "thigh"]
        masses = mk.chains[side].masses
        assert masses[2] == pytest.approx(0.100 * 63.6) and masses[1] == pytest.approx(0.0465 * 63.6)
        for seg in mk.motion[side]:
            assert seg.R.shape == (n, 3, 3) and seg.com_acc_lab.shape == (n, 3)
            assert np.isfinite(seg.omega_seg).mean() > 0.9
        # chain continuity: the shank's proximal centre is the thigh's distal one
        np.testing.assert_array_equal(shank.proximal_lab, thigh.distal_lab)
        # the thigh's centre of mass is 0.433 of the way from the hip to the knee
        np.testing.assert_allclose(thigh.com_lab, thigh.proximal_lab + 0.433 * (thigh.distal_lab - thigh.proximal_lab))
        # a walking thigh: peak angular speed a few rad/s, vertical COM acceleration bounded
        assert 2 < np.nanmax(np.linalg.norm(thigh.omega_seg, axis=1)) < 12
        assert np.nanmax(np.abs(thigh.com_acc_lab[:, 2])) < 20
    assert mk.root is not None and mk.root.R.shape == (n, 3, 3)
    assert set(mk.joint_omega_lab) == {f"{s}.{j}" for s in ("left", "right") for j in ("hip", "knee", "ankle")}


def test_missing_frames_are_nan_downstream_and_short_gaps_are_filled():
    import copy

    trial = copy.deepcopy(_trial("python-gaitalytics/test_small.c3d"))
    i = trial.marker_labels.index("LKNE")
    trial.markers[100:105, i] = np.nan  # 5 frames: filled
    trial.markers[200:230, i] = np.nan  # 30 frames: stays missing
    mk = build_segments(trial)
    thigh = mk.motion["Left"][2]
    assert np.isfinite(thigh.R[100:105]).all()
    assert np.isnan(thigh.R[200:230]).all() and np.isnan(thigh.omega_seg[200:230]).all()
    assert np.isnan(mk.motion["Left"][1].com_acc_lab[200:230]).all()  # the shank hangs on the knee centre
    assert np.isfinite(mk.motion["Right"][2].R[200:230]).all()  # the other side is unaffected


def test_clear_errors_for_missing_markers_and_parameters():
    import copy

    trial = copy.deepcopy(_trial("python-gaitalytics/test_small.c3d"))
    trial.marker_labels[trial.marker_labels.index("RTIB")] = "RTIBX"
    with pytest.raises(ModelError, match="RTIB"):
        build_segments(trial)
    trial = copy.deepcopy(_trial("python-gaitalytics/test_small.c3d"))
    trial.subject.knee_width_left = None
    with pytest.raises(ModelError, match="knee_width"):
        build_segments(trial)
    trial.subject.mass = None
    with pytest.raises(ModelError, match="mass"):
        build_segments(trial, subject={"knee_width": 0.1})
    with pytest.raises(ModelError, match="unknown subject parameter"):
        build_segments(_trial("python-gaitalytics/test_small.c3d"), subject={"knee_wdth": 0.1})
    trial = copy.deepcopy(_trial("python-gaitalytics/test_small.c3d"))
    trial.markers[:, trial.marker_labels.index("LKNE")] = np.nan
    with pytest.raises(DataError, match="left .*never both visible"):
        build_segments(trial)


ISB_STYLE = """
[model]
name = "lab-epicondyles"
bsip = "de_leva_1996_male"
chain = ["foot", "shank", "thigh"]
root = "pelvis"

[markers]
required = ["LASI", "RASI", "LPSI", "RPSI", "{S}HJC", "{S}LFC", "{S}MFC", "{S}LMAL", "{S}MMAL", "{S}CAL"]
# {S}MT1 and {S}MT2 are only named in points.toe: they are read all the same

[points.sacrum]
side = "none"
method = "midpoint"
of = ["LPSI", "RPSI"]

[points.hip]
method = "marker"
marker = "{S}HJC"

[points.knee]
method = "midpoint"
of = ["{S}LFC", "{S}MFC"]

[points.ankle]
method = "midpoint"
of = ["{S}LMAL", "{S}MMAL"]

[points.toe]
method = "midpoint"
of = ["{S}MT1", "{S}MT2"]

[segments.pelvis]
side = "none"
method = "pelvis"
lasi = "LASI"
rasi = "RASI"
sacrum = "sacrum"

[segments.thigh]
method = "axes"
origin = "knee"
proximal = "hip"
distal = "knee"
primary = { axis = "z", from = "knee", to = "hip" }
secondary = { axis = "y", from = "{S}MFC", to = "{S}LFC", right = -1.0 }

[segments.shank]
method = "axes"
origin = "ankle"
proximal = "knee"
distal = "ankle"
primary = { axis = "z", from = "ankle", to = "knee" }
secondary = { axis = "y", from = "{S}MMAL", to = "{S}LMAL", right = -1.0 }

[segments.foot]
method = "axes"
origin = "ankle"
proximal = "{S}CAL"
distal = "toe"
primary = { axis = "x", from = "{S}CAL", to = "toe" }
secondary = { axis = "y", segment = "shank", segment_axis = "y" }
long_axis = "x"

[joints.knee]
proximal = "thigh"
distal = "shank"
sequence = "YXZ"
label = "{S}KneeAngles"
"""


def test_an_anatomical_marker_set_is_just_another_model_file(tmp_path):
    """Medial/lateral epicondyle and malleolus markers (opensim-core walking2.c3d), no Python."""
    from gaitid.core.trial import Subject

    path = tmp_path / "lab-epicondyles.toml"
    path.write_text(ISB_STYLE)
    trial = _trial("opensim-core/walking2.c3d")
    mk = build_segments(trial, path, subject=Subject(mass=70.0), marker_cutoff_hz=None, max_gap_frames=0)
    for side, S in (("left", "L"), ("right", "R")):
        foot, shank, thigh = mk.motion[side.capitalize()]
        foot_body, _, thigh_body = mk.chains[side.capitalize()]
        np.testing.assert_allclose(shank.proximal_lab, (trial.point(S + "LFC") + trial.point(S + "MFC")) / 2, atol=1e-9)
        assert thigh_body.mass == pytest.approx(0.1416 * 70.0)
        ok = np.isfinite(thigh.R).all(axis=(1, 2))
        inputs = np.isfinite(np.stack([trial.point(S + m) for m in ("HJC", "LFC", "MFC")])).all(axis=(0, 2))
        np.testing.assert_array_equal(ok, inputs)  # a frame is built exactly when its markers are seen
        assert ok.mean() > 0.3  # the markers are labelled in a third of this trial
        RtR = np.swapaxes(thigh.R[ok], 1, 2) @ thigh.R[ok]
        np.testing.assert_allclose(RtR, np.broadcast_to(np.eye(3), RtR.shape), atol=1e-9)
        flex = mk.angles_deg[f"{S}KneeAngles"][:, 0]
        assert 40 < np.nanmax(flex) < 85 and -15 < np.nanmin(flex) < 15  # walking knee flexion
        # the foot's inertia about its long (x) axis is de Leva's longitudinal radius
        assert foot_body.inertia_seg[0, 0] < foot_body.inertia_seg[1, 1]


def test_settings_bsip_choice_and_segment_overrides():
    from gaitid.core.settings import Settings

    trial = _trial("python-gaitalytics/test_small.c3d")
    mk = build_segments(trial, settings=Settings(bsip="de_leva_1996_female", marker_cutoff_hz=8.0))
    assert mk.chains["Left"][2].mass == pytest.approx(0.1478 * 63.6)
    mk = build_segments(trial, segment_overrides={"thigh": {"mass": 7.0}, "right.shank": {"mass": 3.0}})
    assert mk.chains["Left"][2].mass == 7.0 and mk.chains["Right"][2].mass == 7.0
    assert mk.chains["Right"][1].mass == 3.0 and mk.chains["Left"][1].mass == pytest.approx(0.0465 * 63.6)


def test_file_segments_on_a_60_hz_file_without_processing_values():
    """c3d.org sample 09 (PlugInC3D.c3d, 60 Hz, SACR): no PROCESSING group, mass given by the caller."""
    trial = _trial("btkdata/PlugInC3D.c3d")
    with pytest.raises(ModelError, match="body mass"):
        build_segments(trial, "plugin-gait-segments")
    mk = build_segments(trial, "plugin-gait-segments", subject={"mass": 66.7}, marker_cutoff_hz=None)
    assert mk.chains["Left"][2].mass == pytest.approx(6.67)
    for S in "LR":
        for joint in ("Pelvis", "Hip", "Knee"):
            d = mk.angles_deg[f"{S}{joint}Angles"] - _angles_ref(trial, f"{S}{joint}Angles")
            assert (np.sqrt(np.nanmean(d**2, axis=0)) < 0.2).all()  # this older file stores coarser points
    with pytest.raises(ModelError, match="leg_length"):
        build_segments(trial, "plugin-gait", subject={"mass": 66.7})
