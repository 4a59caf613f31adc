"""ISB anatomical models, technical clusters (CAST) and the Harrington hip centre.

Closed forms: a rigid motion applied to a cluster is recovered exactly by the SVD fit;
Harrington's regression by hand; the landmark midpoints of the real Qualisys file.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.transform import Rotation

from gaitid.core.errors import DataError, ModelError
from gaitid.core.trial import Subject
from gaitid.model import clusters as cl
from gaitid.model.assembly import apply_aliases, build_segments
from gaitid.model.joint_centres import harrington_hip_centre
from gaitid.model.markerset import list_models, load_model, required_markers
from tests.conftest import realdata_path

RNG = np.random.default_rng(8)
CLUSTER = np.array([[0.0, 0.0, 0.0], [0.08, 0.01, 0.02], [0.02, 0.09, -0.01], [0.05, 0.04, 0.07]])


def _motion(n=50):
    R = Rotation.random(n, random_state=3).as_matrix()
    d = RNG.normal(0, 1.0, (n, 3))
    return R, d


def test_rigid_fit_recovers_a_rigid_motion_exactly():
    R, d = _motion()
    measured = np.einsum("nij,kj->nki", R, CLUSTER) + d[:, None]
    R_fit, d_fit, rms = cl.rigid_fit(CLUSTER, measured)
    np.testing.assert_allclose(R_fit, R, atol=1e-12)
    np.testing.assert_allclose(d_fit, d, atol=1e-12)
    assert np.nanmax(rms) < 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(3, 8), st.floats(0.02, 0.3))
def test_rigid_fit_recovers_any_cluster_and_motion(seed, k, size):
    rng = np.random.default_rng(seed)
    ref = rng.normal(0, size, (k, 3))
    if np.linalg.svd(ref - ref.mean(0), compute_uv=False)[1] < 0.05 * size:
        return  # nearly collinear: orientation about the line is ill-conditioned
    R = Rotation.random(4, random_state=seed).as_matrix()
    d = rng.normal(0, 2.0, (4, 3))
    R_fit, d_fit, rms = cl.rigid_fit(ref, np.einsum("nij,kj->nki", R, ref) + d[:, None])
    np.testing.assert_allclose(R_fit, R, atol=1e-9)
    np.testing.assert_allclose(d_fit, d, atol=1e-9)
    assert np.all(rms < 1e-9)


def test_rigid_fit_residual_is_the_rms_of_the_noise_it_cannot_explain():
    R, d = _motion(1)
    measured = np.einsum("nij,kj->nki", R, CLUSTER) + d[:, None]
    # the 4th marker moves 3 mm: a deformation no rigid motion explains fully
    measured[0, 3] += np.array([0.003, 0.0, 0.0])
    R_fit, d_fit, rms = cl.rigid_fit(CLUSTER, measured)
    fitted = CLUSTER @ R_fit[0].T + d_fit[0]
    assert rms[0] == pytest.approx(np.sqrt(np.mean(np.sum((fitted - measured[0]) ** 2, axis=1))))
    assert 0 < rms[0] < 0.003
    # least squares: small perturbations of the fit never do better
    for _ in range(200):
        dR = Rotation.from_rotvec(RNG.normal(0, 1e-3, 3)).as_matrix()
        other = CLUSTER @ (dR @ R_fit[0]).T + d_fit[0] + RNG.normal(0, 1e-4, 3)
        assert np.sqrt(np.mean(np.sum((other - measured[0]) ** 2, axis=1))) >= rms[0] - 1e-15


def test_rigid_fit_is_a_rotation_never_a_reflection():
    # a mirrored cluster: the unconstrained SVD solution would be a reflection (det -1)
    mirrored = CLUSTER * np.array([1.0, 1.0, -1.0])
    R_fit, _, rms = cl.rigid_fit(CLUSTER, mirrored[None])
    assert np.linalg.det(R_fit[0]) == pytest.approx(1.0)
    assert rms[0] > 0.005


def test_missing_markers_three_left_still_fit_fewer_or_collinear_are_nan():
    R, d = _motion(3)
    measured = np.einsum("nij,kj->nki", R, CLUSTER) + d[:, None]
    measured[0, 1] = np.nan  # three markers left: exact
    measured[1, :2] = np.nan  # two left: NaN
    R_fit, d_fit, rms = cl.rigid_fit(CLUSTER, measured)
    np.testing.assert_allclose(R_fit[0], R[0], atol=1e-12)
    assert np.isnan(R_fit[1]).all() and np.isnan(d_fit[1]).all() and np.isnan(rms[1])
    np.testing.assert_allclose(R_fit[2], R[2], atol=1e-12)
    line = np.array([[0.0, 0, 0], [0.1, 0, 0], [0.2, 0, 0]])
    R_line, _, _ = cl.rigid_fit(line, line[None] + 1.0)
    assert np.isnan(R_line).all()


def test_landmarks_follow_the_cluster_and_bad_frames_are_flagged():
    static = {f"m{i}": np.tile(p, (20, 1)) + RNG.normal(0, 1e-4, (20, 3)) for i, p in enumerate(CLUSTER)}
    landmark = np.array([0.04, -0.05, -0.1])
    cal = cl.calibrate_cluster("thigh", static, {"MFC": np.tile(landmark, (20, 1))})
    assert cal.static_rms < 5e-4
    R, d = _motion(30)
    walk = {f"m{i}": R @ p + d for i, p in enumerate(cal.reference)}
    walk["m2"] = walk["m2"].copy()
    walk["m2"][7] += [0.0, 0.0, 0.02]  # one frame: a marker 2 cm off (skin artefact)
    rebuilt, rms = cl.reconstruct_landmarks(cal, walk)
    ok = np.arange(30) != 7
    np.testing.assert_allclose(rebuilt["MFC"][ok], (R @ landmark + d)[ok], atol=1e-12)
    flags = cl.flag_frames(rms, 0.005)
    assert flags.tolist() == (~ok).tolist()


def test_calibration_errors_name_the_cluster():
    line = {f"m{i}": np.tile([0.1 * i, 0.0, 0.0], (5, 1)) for i in range(3)}
    with pytest.raises(DataError, match="cluster 'shank'.*collinear"):
        cl.calibrate_cluster("shank", line, {"L": np.zeros((5, 3))})
    with pytest.raises(DataError, match="cluster 'shank'.*three or more"):
        cl.calibrate_cluster("shank", {"a": np.zeros((5, 3)), "b": np.ones((5, 3))}, {})
    gone = {f"m{i}": np.full((5, 3), np.nan) for i in range(3)}
    with pytest.raises(DataError, match="no static frame"):
        cl.calibrate_cluster("shank", gone, {"L": np.zeros((5, 3))})


def test_harrington_by_hand():
    # PW 250 mm, PD 150 mm: x = -0.24*150 - 9.9 = -45.9; up = -0.30*250 - 10.9 = -85.9;
    # lateral = 0.33*250 + 7.3 = 89.8 (mm), gaitid axes x anterior, y left, z up
    np.testing.assert_allclose(harrington_hip_centre(0.25, 0.15, "left"), [-0.0459, 0.0898, -0.0859], atol=1e-12)
    np.testing.assert_allclose(harrington_hip_centre(0.25, 0.15, "right"), [-0.0459, -0.0898, -0.0859], atol=1e-12)
    with pytest.raises(ValueError):
        harrington_hip_centre(0.25, 0.15, "middle")


def test_shipped_isb_models_and_extends():
    assert {"isb", "isb-cast", "isb-davis"} <= set(list_models())
    isb, cast, davis = (load_model(n) for n in ("isb", "isb-cast", "isb-davis"))
    assert isb.points["hip"]["method"] == "harrington" and davis.points["hip"]["method"] == "davis"
    assert cast.segments == isb.segments and cast.aliases == isb.aliases and set(cast.clusters) == {"thigh", "shank"}
    assert "leg_length" in davis.parameters and "pelvis_width" in davis.parameters  # merged tables
    req = required_markers("isb-cast")
    assert {"LMFC", "RMFC", "LMMAL", "RMMAL"} <= set(req["from_static"])
    assert {"LASI", "RASI", "LLFC", "RMT1"} <= set(req["required"])
    assert req["aliases"]["LMFC"][0] == "L_FME" and "R.Knee.Med" in req["aliases"]["RMFC"]


def test_bad_cluster_or_extends_names_file_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[model]\nextends = "isb"\nname = "bad"\n'
                   '[clusters.thigh]\nmarkers = ["A", "B"]\nlandmarks = ["C"]\n')
    with pytest.raises(ModelError, match=r"bad.toml.*clusters.thigh.markers"):
        load_model(bad)
    loop = tmp_path / "loop.toml"
    loop.write_text('[model]\nextends = "loop"\nname = "loop"\n')
    with pytest.raises(ModelError, match="circular"):
        load_model(loop)


@pytest.mark.realdata
def test_qualisys_labels_through_aliases():
    from gaitid import read_c3d

    trial = read_c3d(realdata_path("ezc3d-testfiles/Qualisys.c3d"))
    renamed = apply_aliases(trial, load_model("isb"))
    assert "LMFC" in renamed.marker_labels and "L_FME" not in renamed.marker_labels
    assert "L_FME" in trial.marker_labels  # the caller's trial is untouched
    mk = build_segments(trial, "isb", subject=Subject(mass=66.0), marker_cutoff_hz=None, max_gap_frames=0)
    for side, S in (("left", "L"), ("right", "R")):
        foot, shank, thigh = mk.motion[side.capitalize()]
        knee = (trial.point(f"{S}_FLE") + trial.point(f"{S}_FME")) / 2
        ankle = (trial.point(f"{S}_FAL") + trial.point(f"{S}_TAM")) / 2
        np.testing.assert_allclose(shank.proximal_lab, knee, atol=1e-12)
        np.testing.assert_allclose(foot.proximal_lab, ankle, atol=1e-12)
        # ISB shank: y along the malleoli (left), x normal to the malleoli-knee plane
        ok = np.isfinite(shank.R).all(axis=(1, 2))
        mal = trial.point(f"{S}_FAL") - trial.point(f"{S}_TAM")
        mal = mal / np.linalg.norm(mal, axis=1, keepdims=True) * (1 if side == "left" else -1)
        np.testing.assert_allclose(shank.R[ok, :, 1], mal[ok], atol=1e-12)
        assert np.einsum("ni,ni->n", shank.R[ok, :, 0], knee[ok] - ankle[ok]) == pytest.approx(0, abs=1e-12)
        # Harrington hip: 0.33 PW + 7.3 mm lateral of the pelvis midline
        asis = trial.point("L_IAS") - trial.point("R_IAS")
        pw = np.nanmedian(np.linalg.norm(asis, axis=1))
        lateral = np.einsum("ni,ni->n", thigh.proximal_lab - (trial.point("L_IAS") + trial.point("R_IAS")) / 2,
                            mk.root.R[:, :, 1])
        assert np.nanmedian(lateral) == pytest.approx((0.33 * pw + 0.0073) * (1 if side == "left" else -1), abs=1e-9)
        flex = mk.angles_deg[f"{S}KneeAngles"][:, 0]
        assert 45 < np.nanmax(flex) < 80 and -10 < np.nanmin(flex) < 15


@pytest.mark.realdata
def test_davis_variant_needs_leg_length_and_moves_the_hip():
    from gaitid import read_c3d

    trial = read_c3d(realdata_path("ezc3d-testfiles/Qualisys.c3d"))
    with pytest.raises(ModelError, match="leg_length"):
        build_segments(trial, "isb-davis", subject={"mass": 66.0})
    h = build_segments(trial, "isb", subject={"mass": 66.0}).joint_centres["left.hip"]
    d = build_segments(trial, "isb-davis", subject={"mass": 66.0, "leg_length": 0.9}).joint_centres["left.hip"]
    gap = np.nanmedian(np.linalg.norm(h - d, axis=1))
    assert 0.005 < gap < 0.05  # two regressions, a centimetre or two apart


def test_isb_kinetics_use_the_plug_in_gait_component_layout():
    """X sagittal, Y frontal, Z transverse with Plug-in Gait's signs under the external
    convention, as for the plugin-gait model (docs/conventions.md): on a real anatomical-marker
    trial, push-off ankle X > 0, loading-response knee X > 0, hip Y > 0 through stance (external
    adduction), hip X > 0 early and < 0 late, ankle force X ~ body weight (foot axis up)."""
    import numpy as np
    from conftest import realdata_path

    from gaitid.pipeline import process

    r = process(realdata_path("ezc3d-testfiles/Qualisys.c3d"), model="isb", subject="plates", convention="external")
    kinetic = [c for c in r.cycles if c.kinetic]
    assert {c.side for c in kinetic} == {"Left", "Right"}
    t = r.trial.time
    for c in kinetic:
        sl = (t >= c.start_time) & (t <= c.foot_off_time)
        n = sl.sum()
        early, late = slice(0, n // 4), slice(int(0.6 * n), n)
        ankle, knee, hip = (r.curve(c.side, f"{j}Moment")[sl] for j in ("Ankle", "Knee", "Hip"))
        assert 1.0 < np.nanmax(ankle[:, 0]) < 1.6 and np.nanargmax(ankle[:, 0]) > 0.6 * n
        assert 0.5 < np.nanmax(knee[early, 0]) < 1.4
        assert np.nanmean(hip[:, 1]) > 0.3
        assert 0.4 < np.nanmax(hip[early, 0]) < 1.0 and np.nanmin(hip[late, 0]) < -0.8
        assert 6.0 < np.nanmean(r.curve(c.side, "AnkleForce")[sl][:, 0]) < 9.5
