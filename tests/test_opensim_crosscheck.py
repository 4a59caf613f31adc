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

from gaitid.errors import DataError, ModelError

from tests.conftest import realdata_path

pytestmark = pytest.mark.realdata

_cache: dict = {}


def _cc():
    if "cc" not in _cache:
        from gaitid.crosscheck import opensim_crosscheck

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
    # known gaps (docs/opensim-crosscheck.md): Harrington's hip centre lies ~2-3 cm anterior of
    # Gait2392's (smaller hip extensor peak, -41 vs -59 N.m); Gait2392's knee translates with
    # flexion and its knee moment includes that coupling (both knee peaks ~25 % smaller here)
    assert 0.0 <= fig["hip"].peak_neg_diff <= 0.35  # (ours - ref) / |ref|: smaller magnitude
    assert 0.1 <= fig["knee"].peak_neg_diff <= 0.35 and -0.35 <= fig["knee"].peak_pos_diff <= -0.1
    # RMS differences in N.m over the stance
    assert fig["ankle"].rms < 8.0 and fig["knee"].rms < 10.0 and fig["hip"].rms < 18.0


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


def test_cluster_landmarks_reproduce_the_static_landmarks():
    """Calibrated on the static trial and rebuilt on the same trial: each frame's landmark
    within the marker wobble (medians 0.45 and 0.75 mm, maxima 1.3 and 2.2 mm measured) of the measured one."""
    from gaitid.io.opensim import read_opensim_trial
    from gaitid.model.build import _cluster_landmarks, apply_aliases
    from gaitid.model.markerset import load_model

    m = load_model("isb-cast")
    static = apply_aliases(read_opensim_trial(realdata_path("opensim-models/subject01_static.trc")), m)
    keep = [i for i, lab in enumerate(static.marker_labels) if lab not in ("RMFC", "RMMAL")]
    stripped = replace(static, marker_labels=[static.marker_labels[i] for i in keep], markers=static.markers[:, keep])
    rebuilt, res, flags, warns = _cluster_landmarks(stripped, static, m)
    for lab in ("RMFC", "RMMAL"):
        err = np.linalg.norm(rebuilt.point(lab) - static.point(lab), axis=1)
        assert np.median(err) < 0.001 and np.max(err) < 0.003, lab


def test_without_static_the_error_names_markers_model_and_remedy():
    from gaitid.io.opensim import read_opensim_trial
    from gaitid.model.build import build_segments

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
    assert 60 < p["mass"] < 72  # from one step period on the plates (no mass stored)
    for side in ("Left", "Right"):
        assert 1.0 <= p[side]["grf_bw"] <= 1.3
        assert 1.0 <= p[side]["plantarflexor_nm_kg"] <= 2.0


def test_walking2_is_plausible_except_one_high_loading_peak():
    p = _plausibility("opensim-core/walking2.c3d")
    assert 55 < p["mass"] < 70
    for side in ("Left", "Right"):
        assert 1.0 <= p[side]["plantarflexor_nm_kg"] <= 2.0
    assert 1.0 <= p["Left"]["grf_bw"] <= 1.3
    # plate 1's loading peak is 949 N against 779 N at push-off (plate 2: 536 / 737 N):
    # 1.59 BW with the plate-estimated 61 kg; documented, not hidden
    assert 1.3 < p["Right"]["grf_bw"] < 1.7


# --------------------------------------------------------------------------- body mass


@pytest.mark.parametrize("rel", [
    "btkdata/FunctionalWalk.c3d", "btkdata/PiG_Motion3_FF.c3d", "biomechzoo/HC030A05.c3d",
    "c3d-parser/MH0222_BP06.c3d", "python-gaitalytics/test_small.c3d", "btkdata/PiG_Motion-FlatFoot-Full.c3d",
    "btkdata/PiG_Calibration-FlatFoot-Full.c3d",
])
def test_estimated_mass_within_5_percent_of_the_stored_mass(rel):
    from gaitid import read_c3d
    from gaitid.bodymass import estimate_mass

    trial = read_c3d(realdata_path(rel))
    est = estimate_mass(trial)
    assert est.method == ("standing" if "Calibration" in rel else "steps")
    assert est.mass == pytest.approx(trial.subject.mass, rel=0.05)


def test_mass_cannot_be_estimated_without_plates_or_windows():
    from gaitid import read_c3d
    from gaitid.bodymass import estimate_mass
    from gaitid.io.opensim import read_opensim_trial

    static = read_opensim_trial(realdata_path("opensim-models/subject01_static.trc"))
    with pytest.raises(DataError, match="no force plates.*give the mass"):
        estimate_mass(static)
    walk = read_c3d(realdata_path("ezc3d-testfiles/Qualisys.c3d"))
    with pytest.raises(DataError, match="no quiet standing.*Qualisys.c3d|Qualisys.c3d.*no quiet standing"):
        estimate_mass(walk, "standing")
