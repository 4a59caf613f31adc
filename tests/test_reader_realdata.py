"""read_c3d on every real C3D file: facts from ../shared/realdata/README.md (read with ezc3d by its author).

Skipped when the real-data folder is absent.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.io.c3d import read_c3d
from tests.conftest import REAL_C3D, realdata_path

G = 9.81

# file: point rate, analog rate, frames, first frame, plate types, mass (kg), POINT:USED, model outputs,
#       README max|Fz| per plate (N, ezc3d at the analog rate), events, first event (time s, context, label)
FACTS = {
    "biomechzoo/HC030A05.c3d": (100, 1000, 197, 286, [2, 2], 45.8, 291, 111, [501, 483], 8, (3.020, "Right", "Foot Strike")),
    "btkdata/Eb015pi.c3d": (50, 200, 450, 1, [2, 2], None, 26, 0, [839, 836], 0, None),
    "btkdata/FunctionalWalk.c3d": (120, 1080, 438, 480, [2, 2, 2], 60, 146, 36, [695, 695, 692], 11, (4.525, "Right", "Foot Strike")),
    "btkdata/Gait.c3d": (100, 1000, 487, 1, [4, 4], None, 33, 0, [799, 855], 0, None),
    "btkdata/PiG_Calibration-FlatFoot-Full.c3d": (100, 1000, 94, 30, [2, 2], 47.5, 137, 26, [244, 262], 0, None),
    "btkdata/PiG_Calibration3_FF.c3d": (100, 100, 95, 604, [], 74, 66, 12, [], 0, None),
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": (100, 1000, 315, 148, [2, 2], 47.5, 193, 80, [483, 501], 12, (1.530, "Right", "Foot Strike")),
    "btkdata/PiG_Motion3_FF.c3d": (100, 1000, 293, 725, [2, 2, 2], 74, 97, 36, [793, 823, 827], 12, (7.310, "Right", "Foot Strike")),
    "btkdata/PlugInC3D.c3d": (60, 1200, 281, 1, [2, 2], None, 86, 32, [758, 674], 8, (1.117, "Right", "Foot Strike")),
    "c3d-parser/MH0222_BP06.c3d": (100, 1000, 279, 398, [2, 2, 2, 2], 81, 90, 36, [0, 877, 899, 0], 12, (4.170, "Left", "Foot Strike")),
    "python-gaitalytics/test_small.c3d": (100, 1000, 337, 249, [2, 2, 2, 2], 63.6, 191, 80, [669, 658, 33, 638], 13, (2.500, "Right", "Foot Off")),
    "ezc3d-testfiles/Qualisys.c3d": (200, 2000, 340, 705, [2, 2], None, 55, 0, [808, 840], 7, (3.590, "Left", "Foot Strike")),
    "opensim-core/walking2.c3d": (250, 2000, 1249, 1, [2, 2], None, 44, 0, [951, 747], 0, None),
}

_cache: dict[str, object] = {}


def trial(rel: str):
    if rel not in _cache:
        _cache[rel] = read_c3d(realdata_path(rel))
    return _cache[rel]


def test_every_real_file_is_listed():
    listed = {f"{p.parent.name}/{p.name}" for p in REAL_C3D}
    if not listed:
        pytest.skip("real data not available")
    assert listed == set(FACTS)


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_facts_match_readme(rel):
    rate, arate, n, first, types, mass, used, n_out, _, n_ev, first_ev = FACTS[rel]
    t = trial(rel)
    assert t.point_rate == rate
    assert t.n_frames == n and t.markers.shape == (n, len(t.marker_labels), 3)
    assert t.first_frame == first
    assert [p.type for p in t.force_plates] == types
    assert [p.index for p in t.force_plates] == list(range(1, len(types) + 1))
    if types:
        assert t.analogs.rate == arate
        for p in t.force_plates:
            assert p.analog.force.shape == (n * arate // rate, 3)
            assert p.point.force.shape == (n, 3)
            assert p.point.rate == rate
    assert (t.subject.mass is None) if mass is None else t.subject.mass == pytest.approx(mass, rel=1e-6)
    assert len(t.marker_labels) + len(t.virtual_labels) + len(t.model_outputs) == used
    assert len(t.model_outputs) == n_out
    assert len(t.events) == n_ev
    if first_ev:
        e = t.events[0]
        assert (e.time, e.context, e.label) == (pytest.approx(first_ev[0], abs=1e-3), first_ev[1], first_ev[2])
        assert e.frame == round(e.time * rate) + 1
    assert np.allclose(t.lab_rotation, np.eye(3))  # all real files are Z-up


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_plate_peaks_match_readme(rel):
    peaks = FACTS[rel][8]  # the README's figures: ezc3d's extraction, no offsets removed
    t = read_c3d(realdata_path(rel), plate_offsets=False)
    got = [float(np.max(np.abs(p.analog.force[:, 2]))) for p in t.force_plates]
    assert got == pytest.approx(peaks, abs=1.0)


# what the reader subtracts from each real file's plates (issue 13): (plate, note start, vertical offset N)
OFFSETS = {
    "btkdata/Eb015pi.c3d": [(1, "FORCE_PLATFORM:ZERO frames 1-10", 21.2), (2, "FORCE_PLATFORM:ZERO frames 1-10", 30.6)],
    "btkdata/Gait.c3d": [(1, "FORCE_PLATFORM:ZERO frames 1-10", 0.1), (2, "FORCE_PLATFORM:ZERO frames 1-10", -16.0)],
    "btkdata/PlugInC3D.c3d": [(1, "FORCE_PLATFORM:ZERO frames 1-10", 0.7), (2, "FORCE_PLATFORM:ZERO frames 1-10", 0.5)],
    # negative baselines: reported, left as stored (Plug-in Gait's kinetics in test_small used them)
    "opensim-core/walking2.c3d": [(1, "reads", -13.9), (2, "reads", -19.8)],
    "python-gaitalytics/test_small.c3d": [(3, "reads", -31.7), (4, "reads", -15.9)],
}


@pytest.mark.parametrize("rel", sorted(FACTS))
def test_plate_offsets_on_real_files(rel):
    """ZERO where the file gives it over an unloaded range, a baseline only where the unloaded plate reads
    a load of 10 N or more (none of the real files: Eb015pi's is removed by its ZERO); negative baselines
    of 10 N or more are reported; every other plate is exactly as stored."""
    t, raw = trial(rel), read_c3d(realdata_path(rel), plate_offsets=False)
    expected = {plate: (note, value) for plate, note, value in OFFSETS.get(rel, [])}
    for p, q in zip(t.force_plates, raw.force_plates):
        shift = np.nanmedian(p.analog.force[:, 2] - q.analog.force[:, 2])  # lab Z, N
        if p.index in expected:
            note, value = expected[p.index]
            assert p.offset_note.startswith(note) and f"{value:+.1f} N" in p.offset_note
            assert -shift == pytest.approx(value if note != "reads" else 0.0, abs=0.15)
            assert any(w.startswith(f"force plate {p.index}: {note}") for w in t.warnings)
        else:
            assert p.offset_note == "" and np.array_equal(p.analog.force, q.analog.force, equal_nan=True)


@pytest.mark.parametrize(
    "rel, loaded",
    [
        ("biomechzoo/HC030A05.c3d", [1, 2]),
        ("btkdata/FunctionalWalk.c3d", [1, 2, 3]),
        ("btkdata/PiG_Motion-FlatFoot-Full.c3d", [1, 2]),
        ("btkdata/PiG_Motion3_FF.c3d", [1, 2, 3]),
        ("c3d-parser/MH0222_BP06.c3d", [2, 3]),
        ("python-gaitalytics/test_small.c3d", [1, 2, 4]),
    ],
)
def test_peak_vertical_force_in_body_weights(rel, loaded):
    t = trial(rel)
    bw = t.subject.mass * G
    for p in t.force_plates:
        peak = np.nanmax(p.point.force[:, 2]) / bw
        if p.index in loaded:
            assert 0.9 < peak < 1.4, (p.index, peak)
        else:
            assert peak < 0.1, (p.index, peak)


def test_static_trial_carries_body_weight():
    t = trial("btkdata/PiG_Calibration-FlatFoot-Full.c3d")
    total = sum(p.point.force[:, 2] for p in t.force_plates)
    assert np.median(total) / (t.subject.mass * G) == pytest.approx(1.0, abs=0.1)


@pytest.mark.parametrize("rel", ["c3d-parser/MH0222_BP06.c3d", "btkdata/PiG_Motion3_FF.c3d", "python-gaitalytics/test_small.c3d"])
def test_plate_onsets_line_up_with_foot_strikes(rel):
    """Trial docstring clock: a plate's loading onset falls on the index of a Foot Strike event (±2 frames)."""
    t = trial(rel)
    strikes = np.array([t.index_of_time(e.time) for e in t.events if e.label == "Foot Strike"])
    n_checked = 0
    for p in t.force_plates:
        fz = p.point.force[:, 2]
        onsets = np.flatnonzero((fz[1:] >= 20) & (fz[:-1] < 20)) + 1
        if onsets.size:
            assert np.min(np.abs(strikes - onsets[0])) <= 2, (p.index, onsets[0], strikes)
            n_checked += 1
    assert n_checked >= 2


def test_pig_grf_output_matches_plate_force_per_kg():
    """LGroundReactionForce (N/kg) x mass equals the vertical plate force under the left foot (MH0222, plate 2)."""
    t = trial("c3d-parser/MH0222_BP06.c3d")
    grf = t.model_outputs["LGroundReactionForce"]
    assert (grf.kind, grf.unit) == ("force", "N/kg")
    fz = t.force_plates[1].point.force[:, 2]  # plate 2: the left foot strike at index 120
    both = np.isfinite(grf.values[:, 2]) & (fz > 100)
    assert both.sum() > 30
    assert np.median(grf.values[both, 2] * t.subject.mass / fz[both]) == pytest.approx(1.0, abs=0.03)


@pytest.mark.parametrize(
    "rel, label, lo, hi",
    [
        ("c3d-parser/MH0222_BP06.c3d", "LAnkleMoment", -0.185, 1.325),
        ("biomechzoo/HC030A05.c3d", "RHipMoment", -0.393, 0.982),
        ("btkdata/PlugInC3D.c3d", "RKneeMoment", -0.590, 2.099),
    ],
)
def test_pig_moment_ranges_in_si_per_kg(rel, label, lo, hi):
    out = trial(rel).model_outputs[label]
    assert (out.kind, out.unit) == ("moment", "N.m/kg")
    x = out.values[:, 0]
    assert np.nanmin(x) == pytest.approx(lo, abs=0.001) and np.nanmax(x) == pytest.approx(hi, abs=0.001)


def test_pig_outputs_with_suffix_and_units():
    t = trial("btkdata/PiG_Motion3_FF.c3d")
    assert t.model_outputs["LHipAnglesV"].kind == "angle" and t.model_outputs["LHipAnglesV"].unit == "deg"
    assert t.model_outputs["RAnklePower"].unit == "W/kg"
    assert "LHipAnglesV" not in t.marker_labels


def test_virtual_points_split_from_markers():
    t = trial("c3d-parser/MH0222_BP06.c3d")
    pig_segment_points = [f"{s}{p}{a}" for s in "LR" for p in ("FE", "TI", "FO", "TO") for a in "OALP"]
    assert set(pig_segment_points) <= set(t.virtual_labels)
    assert {"PELO", "PELA", "PELL", "PELP"} <= set(t.virtual_labels)
    assert {"LASI", "RASI", "LHEE", "RTOE"} <= set(t.marker_labels)
    assert not set(t.virtual_labels) & set(t.marker_labels)
    w = trial("opensim-core/walking2.c3d")
    assert sorted(w.virtual_labels) == ["LAJC", "LHJC", "LKJC", "RAJC", "RHJC", "RKJC"]
    z = trial("biomechzoo/HC030A05.c3d")
    assert "JUG" in z.virtual_labels  # POINT:MODELED_MARKERS
    assert "CentreOfMass" in z.virtual_labels


def test_markers_in_metres_nan_where_invalid():
    import ezc3d

    path = realdata_path("opensim-core/walking2.c3d")
    c = ezc3d.c3d(str(path))
    labels = c["parameters"]["POINT"]["LABELS"]["value"]
    t = trial("opensim-core/walking2.c3d")
    residuals = c["data"]["meta_points"]["residuals"][0]
    # the marker with the most invalid samples that is still sometimes valid
    counts = [(np.sum(residuals[labels.index(m)] < 0), m) for m in t.marker_labels if not m.startswith("*")]
    n_bad, label = max(c for c in counts if c[0] < t.n_frames)
    i = labels.index(label)
    raw = c["data"]["points"][:3, i, :].T
    invalid = residuals[i] < 0
    got = t.point(label)
    assert n_bad > 0
    assert np.all(np.isnan(got[invalid]))
    assert np.allclose(got[~invalid], raw[~invalid] / 1000.0, rtol=0, atol=1e-12)


def test_subject_from_processing():
    s = trial("c3d-parser/MH0222_BP06.c3d").subject
    assert s.name == "MH0222_BP"
    assert (s.mass, s.height, s.leg_length_left, s.knee_width_right, s.ankle_width_left) == pytest.approx((81, 1.79, 0.91, 0.110, 0.068))
    assert s.inter_asis_distance == pytest.approx(0.25)
    assert s.extra["LAsisTrocanterDistance"] == pytest.approx(0.080)
    # Plug-in Gait stores 0 for "compute it": not a distance
    assert trial("btkdata/PiG_Calibration-FlatFoot-Full.c3d").subject.inter_asis_distance is None
    assert trial("btkdata/Eb015pi.c3d").subject.mass is None


def test_manufacturer_and_software():
    t = trial("c3d-parser/MH0222_BP06.c3d")
    assert t.manufacturer == "Vicon" and t.software == "Vicon Nexus 2.8.1.111866h"


def test_qualisys_event_codes_become_foot_strike_off():
    t = trial("ezc3d-testfiles/Qualisys.c3d")
    assert [(e.context, e.label) for e in t.events[:4]] == [
        ("Left", "Foot Strike"),
        ("Right", "Foot Off"),
        ("Right", "Foot Strike"),
        ("Left", "Foot Off"),
    ]


def test_duplicate_labels_renamed_with_warning():
    t = trial("btkdata/Gait.c3d")
    assert "RKNE" in t.marker_labels and "RKNE_2" in t.marker_labels
    assert any("duplicate" in w for w in t.warnings)


def test_cop_nan_below_threshold_and_inside_plate():
    t = trial("c3d-parser/MH0222_BP06.c3d")
    for p in t.force_plates:
        low = np.abs(p.analog.force[:, 2]) < 10.0
        assert np.all(np.isnan(p.analog.cop[low]))
        ok = ~low
        if ok.any():
            lo, hi = p.corners.min(axis=0) - 0.02, p.corners.max(axis=0) + 0.02
            cop = p.point.cop[np.abs(p.point.force[:, 2]) > 200]
            assert np.all((cop[:, :2] >= lo[:2]) & (cop[:, :2] <= hi[:2]))
            assert np.allclose(cop[:, 2], 0.0, atol=1e-6)  # plate surface at z = 0 in this lab
