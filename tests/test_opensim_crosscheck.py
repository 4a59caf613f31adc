"""The OpenSim cross-check and the plausibility of anatomical-marker trials (issue 8).

Reference: OpenSim's own inverse dynamics of subject01_walk1 (Gait2392,
``InverseDynamicsOutput.sto``), read in place from ../shared/realdata. The models differ
(OpenSim's scaled Gait2392 vs gaitid's ISB markers + Harrington hip + de Leva inertia), so
the targets are shape (Pearson r) and peak size; docs/opensim-crosscheck.md explains the
gaps. The figures asserted here are the ones measured (benchmarks/bench_opensim_crosscheck.py).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gaitid.core.errors import DataError, ModelError
from tests.conftest import realdata_path

pytestmark = pytest.mark.realdata

_cache: dict = {}


def _mass(trial, method="auto", plates=None, **kw):
    """The mass estimate with the trial's plate contacts (the pipeline's contacts stage) given."""
    from conftest import markers_for

    from gaitid.contacts import assign_contacts
    from gaitid.subject.bodymass import estimate_mass

    markers = markers_for(trial)
    return estimate_mass(trial, method, contacts=assign_contacts(trial, markers, plates), markers=markers, **kw)


def _cc():
    if "cc" not in _cache:
        from gaitid.validation.crosscheck import opensim_crosscheck

        folder = realdata_path("opensim-models/InverseDynamicsOutput.sto").parent
        _cache["cc"] = opensim_crosscheck(folder)
    return _cache["cc"]


def test_right_stance_shape_agrees_with_opensim():
    cc = _cc()
    fig = cc.figures["right"]
    assert cc.stance["right"].sum() >= 45  # the whole right stance, 0.63-1.40 s at 60 Hz
    assert fig["ankle"].r >= 0.99 and fig["knee"].r >= 0.95 and fig["hip"].r >= 0.9
    assert cc.figures["left"]["ankle"].r >= 0.99 and cc.figures["left"]["knee"].r >= 0.95


def test_right_stance_peaks():
    fig = _cc().figures["right"]
    # met the 15 % target: peak plantarflexor (-122 vs -128 N.m) and peak hip flexor (41 vs 40 N.m)
    assert abs(fig["ankle"].peak_neg_diff) <= 0.10
    assert fig["ankle"].peak_neg[1] == pytest.approx(-128.3, abs=0.1)  # ankle_angle_r_moment min
    assert abs(fig["hip"].peak_pos_diff) <= 0.10
    # known gaps (docs/opensim-crosscheck.md): Harrington's hip centre lies 3.5-3.8 cm anterior of
    # Gait2392's (smaller hip extensor peak, -41 vs -59 N.m); Gait2392's knee translates with
    # flexion and its knee moment includes that coupling (both knee peaks ~25 % smaller here);
    # test_gait2392_joint_geometry_closes_the_hip_and_knee_flexor_gaps shows both
    assert 0.0 <= fig["hip"].peak_neg_diff <= 0.35  # (ours - ref) / |ref|: smaller magnitude
    assert 0.1 <= fig["knee"].peak_neg_diff <= 0.35 and -0.35 <= fig["knee"].peak_pos_diff <= -0.1
    # RMS differences in N.m over the stance
    assert fig["ankle"].rms < 8.0 and fig["knee"].rms < 10.0 and fig["hip"].rms < 18.0


def _cc_gait2392():
    if "g2392" not in _cache:
        from gaitid.validation.crosscheck import opensim_crosscheck

        folder = realdata_path("opensim-models/InverseDynamicsOutput.sto").parent
        _cache["g2392"] = opensim_crosscheck(folder, geometry="gait2392")
    return _cache["g2392"]


def test_gait2392_joint_geometry_closes_the_hip_and_knee_flexor_gaps():
    """Same markers, solver and inertia with Gait2392's hip centres and knee definition: the right
    hip's offset disappears (r 0.944 -> 0.992, RMS 15.5 -> 5.7 N.m, extensor peak -58.1 vs -58.5)
    and the knee flexor peak comes within 7 % (-51.6 vs -55.3); measured figures."""
    base, g = _cc().figures["right"], _cc_gait2392().figures["right"]
    assert g["hip"].r >= 0.99 and g["hip"].rms < 7.0 < base["hip"].rms
    assert abs(g["hip"].peak_neg_diff) <= 0.05 and base["hip"].peak_neg_diff > 0.25
    assert abs(g["knee"].peak_neg_diff) <= 0.10 and g["knee"].rms < 7.0 and g["knee"].r >= 0.985
    # not explained by the geometry (docs/opensim-crosscheck.md): the late-stance hip flexor and
    # the loading-response knee extensor peaks stay 24-27 % smaller than OpenSim's
    assert -0.30 <= g["hip"].peak_pos_diff <= -0.15 and -0.32 <= g["knee"].peak_pos_diff <= -0.2
    # the ankle does not depend on the hip or knee geometry
    assert g["ankle"].r == pytest.approx(base["ankle"].r, abs=1e-9)
    assert _cc_gait2392().figures["left"]["hip"].r > _cc().figures["left"]["hip"].r


def test_moments_about_the_ik_placed_knee_match_opensim_within_2_percent():
    """geometry='gait2392-ik': the same loads, with the hip and knee moments taken about the hip
    centre and tibia origin where OpenSim's IK put them (forward kinematics of the IK file). The
    right knee then matches: r 0.999, RMS 1.5 N.m, peaks -54.8/-55.3 and 38.1/38.6 (measured)."""
    from gaitid.validation.crosscheck import opensim_crosscheck

    folder = realdata_path("opensim-models/subject01_walk1_ik.mot").parent
    cc = opensim_crosscheck(folder, geometry="gait2392-ik")
    knee, hip = cc.figures["right"]["knee"], cc.figures["right"]["hip"]
    assert knee.r >= 0.998 and knee.rms < 2.5
    assert abs(knee.peak_neg_diff) <= 0.02 and abs(knee.peak_pos_diff) <= 0.02
    assert cc.figures["left"]["knee"].r >= 0.995
    # the hip extensor peak stays within 5 %; the late-stance flexor peak stays ~20 % small
    assert hip.r >= 0.98 and abs(hip.peak_neg_diff) <= 0.05 and -0.25 <= hip.peak_pos_diff <= -0.15


def test_gait2392_bodies_close_the_late_stance_hip_flexor_peak():
    """geometry='gait2392-ik-bodies': Gait2392's scaled femur and tibia (mass, centre of mass,
    inertia) moved by the IK coordinates, Gait2392's foot mass, gaitid's foot motion and GRF. The
    late-stance hip flexor peak becomes 40.0 vs 39.5 N.m (from 31.4 with the IK joint points
    only) and the right hip, knee and ankle curves match to r 0.999 (measured)."""
    from gaitid.validation.crosscheck import opensim_crosscheck

    folder = realdata_path("opensim-models/subject01_walk1_ik.mot").parent
    fig = opensim_crosscheck(folder, geometry="gait2392-ik-bodies").figures
    hip, knee, ankle = fig["right"]["hip"], fig["right"]["knee"], fig["right"]["ankle"]
    assert hip.r >= 0.998 and hip.rms < 2.0  # 0.9991, 1.3 N.m
    assert abs(hip.peak_pos_diff) <= 0.05 and abs(hip.peak_neg_diff) <= 0.05  # +1 %, -1 %
    assert knee.r >= 0.999 and knee.rms < 1.0  # 0.9999, 0.7 N.m
    assert ankle.r >= 0.999 and ankle.rms < 3.0 and abs(ankle.peak_neg_diff) <= 0.05  # 0.9999, 1.9 N.m, 3 %
    assert fig["left"]["knee"].r >= 0.999 and fig["left"]["hip"].r >= 0.98


def test_marker_frames_and_ik_give_the_same_angular_motion_but_not_the_same_centres_of_mass():
    """Over the late stance (1.2-1.45 s) the thigh's sagittal angular velocity and acceleration from
    gaitid's marker frames match those of Gait2392's femur moved by the IK coordinates (RMS 0.08
    rad/s and 1.6 rad/s^2, peak ~31 rad/s^2); the centres of mass do not: the IK model's thigh and
    shank centres of mass accelerate 15-20 % more forward at the hip flexor peak (1.333 s), the
    main part of the 8 N.m gap (docs/opensim-crosscheck.md)."""
    from gaitid.core import rotation, signal
    from gaitid.io.mot import read_sto
    from gaitid.validation.crosscheck import gait2392_leg

    mk = _cc_gait2392().kinematics
    t = np.arange(mk.root.R.shape[0]) / mk.rate
    leg = gait2392_leg(read_sto(realdata_path("opensim-models/subject01_walk1_ik.mot")), "right", t)
    win = (t >= 1.2) & (t <= 1.45)
    axis = leg["R_pelvis"][:, :, 2]  # OpenSim's hip flexion axis (right)
    thigh, shank = mk.motion["Right"][2], mk.motion["Right"][1]
    R = np.where(np.isfinite(leg["R_femur"]), leg["R_femur"], np.eye(3))
    w_seg, w_lab = rotation.angular_velocity(R, mk.rate)
    _, a_lab = rotation.angular_acceleration(R, w_seg, mk.rate)
    ours_w = np.einsum("nij,nj,ni->n", thigh.R, thigh.omega_seg, axis)[win]
    ours_a = np.einsum("nij,nj,ni->n", thigh.R, thigh.alpha_seg, axis)[win]
    ik_w, ik_a = np.einsum("ni,ni->n", w_lab, axis)[win], np.einsum("ni,ni->n", a_lab, axis)[win]
    assert np.sqrt(np.mean((ours_w - ik_w) ** 2)) < 0.15 and np.max(np.abs(ik_w)) > 2.5
    assert np.sqrt(np.mean((ours_a - ik_a) ** 2)) < 2.5 and np.max(ik_a) > 25.0
    i = int(np.argmin(np.abs(t - 1.3333)))
    for seg, com in ((thigh, leg["com_femur"]), (shank, leg["com_tibia"])):
        ik_acc = signal.derivative(signal.derivative(com, mk.rate), mk.rate)[i, 0]  # forward (+x), m/s^2
        assert 1.1 < ik_acc / seg.com_acc_lab[i, 0] < 1.3, seg.name  # 6.8/5.7 and 14.8/12.9


def test_reference_and_trial_clocks_are_aligned():
    """OpenSim's ID output (t = 0.4-1.6 s) is on the TRC's clock: shifting gaitid's curves by up to
    +-50 ms (1 ms steps, cubic interpolation) minimises the RMS difference at 0 +- 1 ms for each
    right joint. (The IK file starts at 0.5 s, but that is its first row, not a clock offset.)"""
    from scipy.interpolate import CubicSpline

    from gaitid.validation.crosscheck import opensim_crosscheck

    folder = realdata_path("opensim-models/subject01_walk1_ik.mot").parent
    cc = opensim_crosscheck(folder, geometry="gait2392-ik")
    st = cc.stance["right"]
    lags = np.arange(-50, 51) / 1000.0
    for joint in ("ankle", "knee", "hip"):
        ours, ref = cc.ours["right"][joint], cc.reference["right"][joint]
        ok = np.isfinite(ours)
        spline = CubicSpline(cc.time[ok], ours[ok])
        rms = [np.sqrt(np.mean((spline(cc.time[st] - lag) - ref[st]) ** 2)) for lag in lags]
        assert abs(lags[int(np.argmin(rms))]) <= 0.002, joint


def test_gait2392_forward_kinematics_agrees_with_the_marker_placed_joints():
    """Independent derivations of the same points: the IK-placed hip centre (forward kinematics
    of the IK angles) and the one placed from the pelvis markers (gait2392_hip_offsets) agree
    within 1.5 cm (median 8 mm) over the right stance; the tibia origin lies 1-3.5 cm from the
    mid-epicondyles (2 cm distal in the model; IK fits all markers)."""
    from gaitid.io.mot import read_sto
    from gaitid.validation.crosscheck import gait2392_joint_positions

    cc = _cc_gait2392()
    mk = cc.kinematics  # the right side's build
    ik = read_sto(realdata_path("opensim-models/subject01_walk1_ik.mot"))
    t = np.arange(mk.joint_centres["right.hip"].shape[0]) / mk.rate
    hip_ik, tibia_ik = gait2392_joint_positions(ik, "right", t)
    st = (t >= 0.63) & (t <= 1.40)
    assert np.isfinite(hip_ik[st]).all() and np.isnan(hip_ik[t < 0.49]).all()  # IK rows start at 0.5 s
    d_hip = np.linalg.norm(hip_ik[st] - mk.joint_centres["right.hip"][st], axis=1)
    assert np.max(d_hip) < 0.015 and np.median(d_hip) < 0.010  # 12 and 8 mm measured
    d_knee = np.linalg.norm(tibia_ik[st] - mk.joint_centres["right.knee"][st], axis=1)
    assert 0.01 < np.median(d_knee) < 0.035  # ~2 cm distal of the mid-epicondyles, as the model has it


def test_gait2392_hip_centres_lie_behind_below_and_medial_of_harrington():
    from gaitid.validation.crosscheck import GAIT2392_PELVIS, gait2392_hip_offsets

    off = gait2392_hip_offsets()
    # right/left mirror images within the marker placement asymmetry (a few mm)
    assert off["right"][1] < 0 < off["left"][1]
    assert np.allclose(off["right"] * [1, -1, 1], off["left"], atol=0.007)
    # a rotation of the OpenSim pelvis frame: distances from mid-ASIS are kept
    mid = (np.array(GAIT2392_PELVIS["R.ASIS"]) + GAIT2392_PELVIS["L.ASIS"]) / 2
    assert np.linalg.norm(off["right"]) == pytest.approx(np.linalg.norm(np.array(GAIT2392_PELVIS["hip_r"]) - mid))
    # Harrington (pelvis width 262 mm, depth 199 mm): 57.6 mm behind, 89.6 below, 93.9 lateral
    assert -0.097 < off["right"][0] < -0.090 and -0.107 < off["right"][2] < -0.100
    assert 0.083 < abs(off["right"][1]) < 0.088


def test_gait2392_knee_moment_equals_the_virtual_work_of_a_load_on_the_tibia():
    """Independent check: a force F_Q at a point Q fixed in the tibia, balanced statically; the
    generalised force Gait2392 reports is -F_Q . dQ/dtheta (virtual work, Q moved by the knee
    angle's rotation about the femur's z and the tibia's translation p(theta))."""
    from scipy.interpolate import CubicSpline

    from gaitid.validation.crosscheck import (
        GAIT2392_FEMUR_SCALE,
        GAIT2392_KNEE_X,
        GAIT2392_KNEE_Y,
        GAIT2392_MID_EPICONDYLES,
        gait2392_knee_moment,
    )

    s = GAIT2392_FEMUR_SCALE
    kx, ky = CubicSpline(*GAIT2392_KNEE_X, bc_type="natural"), CubicSpline(*GAIT2392_KNEE_Y, bc_type="natural")
    q = np.array([0.03, 0.0, -0.40])  # a point of the tibia (ankle-like), thigh axes at theta = 0
    F_Q = np.array([120.0, -15.0, 650.0])  # N, e.g. a ground reaction, on the tibia

    def Q(th):  # gaitid thigh frame = lab (x anterior, y left, z up); femur z (right) = -y
        c, sn = np.cos(-th), np.sin(-th)
        Ry = np.array([[c, 0, sn], [0, 1, 0], [-sn, 0, c]])  # rotation by theta about -y
        return np.array([s * kx(th), 0.0, s * ky(th)]) + Ry @ q

    theta = np.array([0.05, -0.1, -0.35, -0.7, -1.1])
    h = 1e-6
    expected = np.array([-F_Q @ (Q(t + h) - Q(t - h)) / (2 * h) for t in theta])
    ex, ey = GAIT2392_MID_EPICONDYLES
    K = np.tile([ex, 0.0, ey], (theta.size, 1))  # gaitid's knee centre (mid-epicondyles)
    Qs = np.array([Q(t) for t in theta])
    F_k = np.tile(-F_Q, (theta.size, 1))  # thigh on shank: balances F_Q
    M_k = -np.cross(Qs - K, F_Q)
    R = np.tile(np.eye(3), (theta.size, 1, 1))
    got = gait2392_knee_moment(F_k, M_k, K, R, -theta)
    assert np.allclose(got, expected, atol=1e-6)
    # the translation matters: without it (moment about the mid-epicondyles) it differs by N.m
    from gaitid.validation.crosscheck import sagittal_moment

    assert np.max(np.abs(sagittal_moment(M_k, R) - expected)) > 1.0


def test_unknown_crosscheck_geometry_is_a_settings_error(tmp_path):
    from gaitid.core.errors import SettingsError
    from gaitid.validation.crosscheck import opensim_crosscheck

    with pytest.raises(SettingsError, match="geometry must be one of gaitid, gait2392, gait2392-ik, gait2392-ik-b"):
        opensim_crosscheck(tmp_path, geometry="opensim")


def test_sign_mapping_plantarflexor_is_negative_like_opensim():
    cc = _cc()
    st = cc.stance["right"]
    ours, ref = cc.ours["right"]["ankle"][st], cc.reference["right"]["ankle"][st]
    # push-off: both strongly negative (plantarflexor) at the same sample, within 2 frames
    assert abs(int(np.argmin(ours)) - int(np.argmin(ref))) <= 2
    assert np.min(ours) < -100 and np.max(ours) < 20


def test_clusters_rebuild_the_medial_landmarks_with_small_residuals():
    cc = _cc()
    assert set(cc.kinematics.cluster_residuals) == {"left.thigh", "right.thigh", "left.shank", "right.shank"}
    for key, rms in cc.kinematics.cluster_residuals.items():
        assert np.isfinite(rms).all()
        assert np.median(rms) < 0.0015 and np.max(rms) < 0.003, key
        assert not cc.kinematics.cluster_flags[key].any()
    assert not cc.warnings


def testcluster_landmarks_reproduce_the_static_landmarks():
    """Calibrated on the static trial and rebuilt on the same trial: each frame's landmark
    within the marker wobble (medians 0.45 and 0.75 mm, maxima 1.3 and 2.2 mm measured) of the measured one."""
    from gaitid.io.opensim import read_opensim_trial
    from gaitid.model.assembly import apply_aliases, cluster_landmarks
    from gaitid.model.markerset import load_model

    m = load_model("isb-cast")
    static = apply_aliases(read_opensim_trial(realdata_path("opensim-models/subject01_static.trc")), m)
    keep = [i for i, lab in enumerate(static.marker_labels) if lab not in ("RMFC", "RMMAL")]
    stripped = replace(static, marker_labels=[static.marker_labels[i] for i in keep], markers=static.markers[:, keep])
    rebuilt, res, flags, warns = cluster_landmarks(stripped, static, m)
    for lab in ("RMFC", "RMMAL"):
        err = np.linalg.norm(rebuilt.point(lab) - static.point(lab), axis=1)
        assert np.median(err) < 0.001 and np.max(err) < 0.003, lab


def test_without_static_the_error_names_markers_model_and_remedy():
    from gaitid.io.opensim import read_opensim_trial
    from gaitid.model.assembly import build_segments

    trial = read_opensim_trial(realdata_path("opensim-models/subject01_walk1.trc"), mass=72.6)
    with pytest.raises(ModelError, match=r"LMFC.*needed by model 'isb-cast'.*static") as info:
        build_segments(trial, "isb-cast")
    assert "subject01_walk1.trc" in str(info.value)
    with pytest.raises(ModelError, match=r"needed by model 'isb'"):
        build_segments(trial, "isb")


# --------------------------------------------------------------------------- plausibility


def _plausibility(rel):
    if rel not in _cache:
        import importlib.util
        from pathlib import Path

        path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_opensim_crosscheck.py"
        spec = importlib.util.spec_from_file_location("bench_opensim_crosscheck", path)
        bench = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(bench)
        realdata_path(rel)
        _cache[rel] = bench.plausibility(rel, **bench.PLAUSIBILITY[rel])
    return _cache[rel]


def test_qualisys_is_plausible():
    p = _plausibility("ezc3d-testfiles/Qualisys.c3d")
    assert p["method"] == "dynamic" and 65 < p["mass"] < 70  # 67.6 kg over single support (no mass stored)
    for side in ("Left", "Right"):
        assert 1.0 <= p[side]["grf_bw"] <= 1.3
        assert 1.0 <= p[side]["plantarflexor_nm_kg"] <= 2.0


def test_walking2_is_plausible_except_one_high_loading_peak():
    p = _plausibility("opensim-core/walking2.c3d")
    assert p["method"] == "dynamic" and 64 < p["mass"] < 68  # 65.9 kg
    for side in ("Left", "Right"):
        assert 1.0 <= p[side]["plantarflexor_nm_kg"] <= 2.0  # 1.33 and 1.72 N.m/kg
    assert 1.0 <= p["Left"]["grf_bw"] <= 1.3  # 1.15
    # plate 1's loading peak is 949 N against 779 N at push-off (plate 2: 536 / 737 N): 1.47 BW,
    # a real high loading peak of this fast trial (docs/opensim-crosscheck.md), not hidden
    assert 1.4 < p["Right"]["grf_bw"] < 1.55


def _walking2_right_single_support_mass(tr):
    """Independent estimate: over the right single support (2.76-3.10 s) plate 1 carries the whole
    body, Fz = m (g + a_trunk), a_trunk the vertical acceleration of the mean of the markers above
    0.8 m (6 Hz), window chosen by hand from the plate and marker traces: 65.6 kg, RMS 36 N."""
    from scipy.signal import butter, filtfilt

    win = (tr.time >= 1.9) & (tr.time <= 3.6)
    z = tr.markers[win][..., 2]
    high = np.isfinite(z).all(axis=0) & (np.nanmedian(z, axis=0) > 0.8)
    assert high.sum() >= 10  # trunk, pelvis and head markers seen throughout (12)
    b, a = butter(4, 6.0 / (tr.point_rate / 2))
    zc = filtfilt(b, a, z[:, high].mean(axis=1))
    g_plus_a = 9.81 + np.gradient(np.gradient(zc)) * tr.point_rate**2
    fz = tr.force_plates[0].point.force[win, 2]
    fz = fz - np.nanmedian(fz[np.abs(fz) < 50])  # plate 1's unloaded offset (-13.8 N)
    ss = (tr.time[win] > 2.76) & (tr.time[win] < 3.10)
    m = float(np.sum(fz[ss] * g_plus_a[ss]) / np.sum(g_plus_a[ss] ** 2))
    rms = float(np.sqrt(np.mean((fz[ss] - m * g_plus_a[ss]) ** 2)))
    return m, rms, float(np.nanmax(fz))


def test_walking2_dynamic_mass_agrees_with_the_hand_picked_single_support_and_steps_is_low():
    """The step-period estimate (61.0 kg) uses a window in which the left heel stands on the floor
    16.5 cm behind plate 2 (docs/opensim-crosscheck.md). The dynamic method rejects those frames
    (left heel on the ground outside the plate) and the right foot's landing, and fits both single
    supports: 65.9 kg, against 65.6 kg from the right single support picked by hand."""
    from gaitid import read_c3d

    tr = read_c3d(realdata_path("opensim-core/walking2.c3d"))
    m, rms, peak = _walking2_right_single_support_mass(tr)
    assert 64.0 < m < 68.0 and rms < 40.0, (m, rms)  # 65.6 kg, 36 N
    assert 1.4 < peak / (m * 9.81) < 1.5  # the right loading peak with this mass
    est = _mass(tr)  # no plate overrides: both contacts "partly off", checked frame by frame
    assert est.method == "dynamic" and est.mass == pytest.approx(m, abs=1.0)  # 65.9 kg
    assert est.window_s[0] > 2.45  # no frame with the left heel on the floor (until 2.45 s)
    assert _mass(tr, plates={1: "right", 2: "left"}).mass == pytest.approx(est.mass, abs=0.05)
    steps = _mass(tr, "steps")
    assert steps.mass < 0.95 * m  # 61.0 kg: low by 7 %


def test_dynamic_mass_rejects_frames_off_the_plate():
    """walking2 with the stance foot's markers allowed 20 cm off the plate: the left heel's frames
    on the floor behind plate 2 (2.26-2.46 s) enter the fit and the mass drops (plate 2 misses the
    heel's load)."""
    from gaitid import read_c3d

    tr = read_c3d(realdata_path("opensim-core/walking2.c3d"))
    strict, loose = _mass(tr, "dynamic"), _mass(tr, "dynamic", foot_tolerance=0.20)
    assert loose.window_s[0] < 2.4 < strict.window_s[0]
    assert loose.mass < strict.mass - 3.0


# --------------------------------------------------------------------------- body mass


@pytest.mark.parametrize("rel", [
    "btkdata/FunctionalWalk.c3d", "btkdata/PiG_Motion3_FF.c3d", "biomechzoo/HC030A05.c3d",
    "c3d-parser/MH0222_BP06.c3d", "python-gaitalytics/test_small.c3d", "btkdata/PiG_Motion-FlatFoot-Full.c3d",
    "btkdata/PiG_Calibration-FlatFoot-Full.c3d",
])
def test_estimated_mass_within_5_percent_of_the_stored_mass(rel):
    from gaitid import read_c3d

    trial = read_c3d(realdata_path(rel))
    est = _mass(trial)
    assert est.method == ("standing" if "Calibration" in rel else "dynamic")
    assert est.mass == pytest.approx(trial.subject.mass, rel=0.04)  # +2.9 / -3.8 % measured
    if est.method == "dynamic":  # the step-period method agrees (+0.7 / -4.0 % measured)
        assert _mass(trial, "steps").mass == pytest.approx(trial.subject.mass, rel=0.05)


def test_opensim_subject01_mass_from_single_support():
    """OpenSim's subject01 (72.6 kg in subject01_Setup_Scale.xml; TRC and GRF .mot store none):
    73.2 kg from 1.1 s of single support (+0.8 %); the step-period method gives 72.4 kg. Its
    plates have no corners in the .mot, so only the swing foot's check applies."""
    from gaitid.io.opensim import read_opensim_trial

    folder = realdata_path("opensim-models/subject01_walk1.trc").parent
    trial = read_opensim_trial(folder / "subject01_walk1.trc", external_loads_xml=folder / "subject01_walk1_grf.xml")
    est = _mass(trial)
    assert est.method == "dynamic" and est.mass == pytest.approx(72.6, rel=0.02)
    assert _mass(trial, "steps").mass == pytest.approx(72.6, rel=0.02)


def test_mass_cannot_be_estimated_without_plates_or_windows():
    from gaitid import read_c3d
    from gaitid.io.opensim import read_opensim_trial

    static = read_opensim_trial(realdata_path("opensim-models/subject01_static.trc"))
    with pytest.raises(DataError, match="no force plates.*give the mass"):
        _mass(static)
    walk = read_c3d(realdata_path("ezc3d-testfiles/Qualisys.c3d"))
    with pytest.raises(DataError, match="no quiet standing.*Qualisys.c3d|Qualisys.c3d.*no quiet standing"):
        _mass(walk, "standing")
    calib = read_c3d(realdata_path("btkdata/PiG_Calibration-FlatFoot-Full.c3d"))  # standing: no single support
    with pytest.raises(DataError, match="PiG_Calibration.*no 0.1 s of single support"):
        _mass(calib, "dynamic")
    with pytest.raises(DataError, match="method must be one of.*'dynamic'.*not 'impulse'"):
        _mass(walk, "impulse")
