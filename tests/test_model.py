"""Joint-centre methods, segment frames, BSIP tables and model-file validation.

Reference values: hand geometry (right angles, distances, planes), Plug-in Gait's own hip
centre in its pelvis frame (read once from PiG_Motion3_FF.c3d: LFEP at x = -48.64 mm,
y = +79.23 mm, z = -99.30 mm from mid-ASIS), and the published table sums.
"""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.core.errors import ModelError
from gaitid.model import frames as fr
from gaitid.model.bsip import list_tables, load_table, segment_parameters
from gaitid.model.joint_centres import asis_trochanter_distance, chord_joint_centre, davis_hip_centre, midpoint
from gaitid.model.markerset import list_models, load_model, per_model

# ------------------------------------------------------------------ joint centres

def test_davis_hip_centre_matches_plug_in_gait_numbers():
    # PiG_Motion3_FF.c3d subject: leg 920 mm, inter-ASIS 245.236 mm, ASIS-trochanter 69.936 mm, 14 mm markers
    left = davis_hip_centre(0.920, 0.245236, 0.007, "left", asis_trochanter=0.069936)
    right = davis_hip_centre(0.920, 0.245236, 0.007, "right", asis_trochanter=0.069936)
    np.testing.assert_allclose(left * 1000, [-48.64, 79.23, -99.30], atol=0.02)
    np.testing.assert_allclose(right, left * [1, -1, 1])


def test_davis_default_asis_trochanter_is_the_cgm1_regression():
    assert asis_trochanter_distance(0.920) == pytest.approx(0.069936, abs=1e-9)
    np.testing.assert_allclose(davis_hip_centre(0.92, 0.245236, 0.007, "left"),
                               davis_hip_centre(0.92, 0.245236, 0.007, "left", asis_trochanter=0.069936))


def test_davis_hand_computed():
    # C = 0.115*0.80 - 0.0153 = 0.0767; X_t = 0.05 + 0.008; theta 28.4 deg, beta 18 deg (Vicon's rounded radians)
    th, be = 0.500000178813934, 0.314000427722931
    c, xt, a = 0.0767, 0.058, 0.1
    expected = [-xt * np.cos(be) + c * np.cos(th) * np.sin(be), a - c * np.sin(th), -xt * np.sin(be) - c * np.cos(th) * np.cos(be)]
    np.testing.assert_allclose(davis_hip_centre(0.80, 0.2, 0.008, "left", asis_trochanter=0.05), expected, atol=1e-12)
    with pytest.raises(ValueError):
        davis_hip_centre(0.8, 0.2, 0.008, "middle")


def test_chord_joint_centre_hand_geometry():
    marker = np.array([[0.0, 0.0, 0.0]])
    proximal = np.array([[0.0, 0.0, 0.4]])
    wand = np.array([[0.05, 0.02, 0.2]])  # in front-ish, +x side of the marker->proximal line
    offset = 0.06
    j = chord_joint_centre(wand, proximal, marker, offset)[0]
    cos_t = offset / 0.4
    # away from the wand: in the plane spanned by z and the wand, on the -x/-y side
    w = -np.array([0.05, 0.02, 0.0]) / np.hypot(0.05, 0.02)
    np.testing.assert_allclose(j, offset * (cos_t * np.array([0, 0, 1.0]) + np.sqrt(1 - cos_t**2) * w), atol=1e-12)
    assert np.linalg.norm(j - marker[0]) == pytest.approx(offset)
    assert np.dot(proximal[0] - j, marker[0] - j) == pytest.approx(0.0, abs=1e-12)
    assert np.dot(np.cross(wand[0] - marker[0], proximal[0] - marker[0]), j - marker[0]) == pytest.approx(0.0, abs=1e-12)


def test_chord_wand_rotation_turns_the_plane_about_the_long_axis():
    marker = np.array([[0.0, 0.0, 0.0]])
    proximal = np.array([[0.0, 0.0, 0.4]])
    wand = np.array([[0.0, 0.08, 0.2]])
    j0 = chord_joint_centre(wand, proximal, marker, 0.05)[0]
    j1 = chord_joint_centre(wand, proximal, marker, 0.05, wand_rotation=0.3)[0]
    assert np.linalg.norm(j1 - marker[0]) == pytest.approx(0.05)
    assert np.dot(proximal[0] - j1, marker[0] - j1) == pytest.approx(0.0, abs=1e-9)
    # fixed point: J lies in the plane of proximal, marker and the wand turned by 0.3 rad
    # about the long axis (the line through proximal along J -> proximal)
    u = (proximal[0] - j1) / np.linalg.norm(proximal[0] - j1)
    a = wand[0] - proximal[0]
    turned = proximal[0] + a * np.cos(0.3) + np.cross(u, a) * np.sin(0.3) + u * (u @ a) * (1 - np.cos(0.3))
    normal = np.cross(turned - marker[0], proximal[0] - marker[0])
    assert np.dot(normal, j1 - marker[0]) == pytest.approx(0.0, abs=1e-9)
    # seen from above, the joint centre turned in the same (right-handed about +z) sense as the wand
    assert np.arctan2(j1[1], j1[0]) - np.arctan2(j0[1], j0[0]) > 0


def test_chord_nan_and_degenerate_frames_give_nan():
    marker = np.array([[0.0, 0, 0], [np.nan, 0, 0], [0, 0, 0]])
    proximal = np.array([[0.0, 0, 0.4], [0, 0, 0.4], [0, 0, 0.03]])  # last: closer than the offset
    wand = np.array([[0.1, 0, 0.2]] * 3)
    j = chord_joint_centre(wand, proximal, marker, 0.05)
    assert np.isfinite(j[0]).all() and np.isnan(j[1]).all() and np.isnan(j[2]).all()


def test_midpoint():
    np.testing.assert_allclose(midpoint(np.array([[0, 0, 0.0]]), np.array([[2, 4, 6.0]])), [[1, 2, 3]])


# ------------------------------------------------------------------ frames

def test_frame_from_vectors_orthonormal_and_axes_as_asked():
    rng = np.random.default_rng(0)
    p, s = rng.normal(size=(50, 3)), rng.normal(size=(50, 3))
    for axes in ("zy", "yx", "zx", "xz", "yz", "xy"):
        R = fr.frame_from_vectors(p, s, axes)
        np.testing.assert_allclose(R.swapaxes(1, 2) @ R, np.broadcast_to(np.eye(3), R.shape), atol=1e-12)
        np.testing.assert_allclose(np.linalg.det(R), 1.0)
        i, j = "xyz".index(axes[0]), "xyz".index(axes[1])
        np.testing.assert_allclose(R[:, :, i], p / np.linalg.norm(p, axis=1, keepdims=True))
        assert (np.einsum("ni,ni->n", R[:, :, j], s) > 0).all()
    with pytest.raises(ValueError):
        fr.frame_from_vectors(p, s, "zz")


def test_parallel_or_nan_vectors_give_nan_frames():
    R = fr.frame_from_vectors(np.array([[0, 0, 1.0], [0, 0, 1.0]]), np.array([[0, 0, 2.0], [np.nan, 0, 0]]))
    assert np.isnan(R).all()


def test_pelvis_frame_axes():
    lasi, rasi, sacr = np.array([[0.1, 0.12, 1.0]]), np.array([[0.1, -0.12, 1.0]]), np.array([[-0.08, 0.0, 1.03]])
    origin, R = fr.pelvis_frame(lasi, rasi, sacr)
    np.testing.assert_allclose(origin, [[0.1, 0.0, 1.0]])
    np.testing.assert_allclose(R[0, :, 1], [0, 1, 0], atol=1e-12)  # y left
    assert R[0, 0, 0] > 0.98 and R[0, 2, 2] > 0.98  # x anterior, z up (sacrum slightly higher)


def test_foot_offsets_round_trip_through_static_calibration():
    # a foot whose heel sits so that the corrected frame is the uncorrected one turned by known offsets
    ankle = np.array([[0.0, 0.0, 0.08]])
    toe = np.array([[0.15, 0.0, 0.03]])
    shank = np.eye(3)[None]
    R_unc = fr.foot_frame_uncorrected(ankle, toe, shank)
    R_cor = fr.apply_foot_offsets(R_unc, 0.2, 0.05, "left")
    heel = toe + 0.2 * R_cor[:, :, 2]  # the corrected foot's z runs from the toe to the heel
    pf, rot = fr.static_foot_offsets(ankle, toe, heel, shank, "left", flat_foot=False)
    assert pf == pytest.approx(0.2, abs=1e-9) and rot == pytest.approx(0.05, abs=1e-9)


# ------------------------------------------------------------------ BSIP

@pytest.mark.parametrize("name", ["dempster", "de_leva_1996_male", "de_leva_1996_female"])
def test_tables_sum_to_whole_body(name):
    import tomllib

    table = load_table(name)
    with open(table.path, "rb") as f:
        check = tomllib.load(f)["check"]
    total = sum(2 * table.row(s).mass_fraction for s in check["paired"]) + sum(table.row(s).mass_fraction for s in check["single"])
    assert total == pytest.approx(1.0, abs=2e-4)  # de Leva's female column sums to 99.99 %
    assert all(table.row(s).source for s in table.segments)


def test_lower_limb_fractions_as_published():
    d, m, f = (load_table(n) for n in ("dempster", "de_leva_1996_male", "de_leva_1996_female"))
    assert (d.row("thigh").mass_fraction, d.row("shank").mass_fraction, d.row("foot").mass_fraction) == (0.100, 0.0465, 0.0145)
    assert (m.row("thigh").mass_fraction, m.row("shank").mass_fraction, m.row("foot").mass_fraction) == (0.1416, 0.0433, 0.0137)
    assert (f.row("thigh").mass_fraction, f.row("shank").mass_fraction, f.row("foot").mass_fraction) == (0.1478, 0.0481, 0.0129)
    assert set(list_tables()) >= {"dempster", "de_leva_1996_male", "de_leva_1996_female"}


def test_segment_parameters_closed_form_and_overrides():
    row = load_table("de_leva_1996_male").row("thigh")
    sp = segment_parameters(row, 80.0, 0.42)
    assert sp.mass == pytest.approx(0.1416 * 80)
    np.testing.assert_allclose(np.diag(sp.inertia_seg), sp.mass * (0.42 * np.array([0.329, 0.329, 0.149])) ** 2)
    # shank (x anterior, y left, z long): r_sag 0.255 about x (AP), r_trans 0.249 about y (ML)
    shank = segment_parameters(load_table("de_leva_1996_male").row("shank"), 80.0, 0.4)
    np.testing.assert_allclose(np.diag(shank.inertia_seg), shank.mass * (0.4 * np.array([0.255, 0.249, 0.103])) ** 2)
    # a foot with its long axis along x and mediolateral y: the remaining z is "anteroposterior"
    foot = segment_parameters(load_table("de_leva_1996_male").row("foot"), 80.0, 0.25, long_axis="x", ml_axis="y")
    np.testing.assert_allclose(np.diag(foot.inertia_seg), foot.mass * (0.25 * np.array([0.124, 0.245, 0.257])) ** 2)
    over = segment_parameters(row, 80.0, 0.42, overrides={"mass": 10.0, "inertia": [0.1, 0.2, 0.03]})
    assert over.mass == 10.0 and np.allclose(np.diag(over.inertia_seg), [0.1, 0.2, 0.03])
    with pytest.raises(ModelError, match="unknown"):
        segment_parameters(row, 80.0, 0.42, overrides={"masss": 1})


def test_bad_table_names_file_and_key(tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('[table]\nname = "bad"\n[segments.thigh]\nmass_fraction = 0.1\ncom_from_proximal = "x"\n')
    with pytest.raises(ModelError) as exc:
        load_table(p)
    assert "bad.toml" in str(exc.value) and "segments.thigh.com_from_proximal" in str(exc.value)
    with pytest.raises(ModelError, match="no BSIP table named 'nope'"):
        load_table("nope")


# ------------------------------------------------------------------ model files

def test_shipped_models_load():
    assert {"plugin-gait", "plugin-gait-segments"} <= set(list_models())
    for name in list_models():
        m = load_model(name)
        assert m.chain == ["foot", "shank", "thigh"] and m.root == "pelvis"


def _write(tmp_path, text):
    p = tmp_path / "lab.toml"
    p.write_text(text)
    return p


GOOD = (
    '[model]\nname = "lab"\nbsip = "dempster"\nchain = ["thigh"]\n'
    '[segments.thigh]\nmethod = "axis_points"\norigin = "{S}FEO"\nx = "{S}FEA"\ny = "{S}FEL"\nz = "{S}FEP"\n'
    'proximal = "{S}FEP"\ndistal = "{S}FEO"\n'
)


def test_a_lab_model_file_loads(tmp_path):
    m = load_model(_write(tmp_path, GOOD))
    assert m.name == "lab" and m.sides == {"Left": "L", "Right": "R"}


@pytest.mark.parametrize(
    "change, key",
    [
        (("method = \"axis_points\"", "method = \"magic\""), "segments.thigh.method"),
        (("chain = [\"thigh\"]", "chain = [\"shin\"]"), "model.chain"),
        (("bsip = \"dempster\"\n", ""), "model.bsip"),
        (("x = \"{S}FEA\"\n", ""), "segments.thigh"),
        (("distal = \"{S}FEO\"\n", "distal = \"{S}FEO\"\ncolour = \"red\"\n"), "segments.thigh"),
    ],
)
def test_bad_model_errors_name_file_and_key(tmp_path, change, key):
    p = _write(tmp_path, GOOD.replace(*change))
    with pytest.raises(ModelError) as exc:
        load_model(p)
    assert "lab.toml" in str(exc.value) and key in str(exc.value)


def test_invalid_toml_and_unknown_name(tmp_path):
    with pytest.raises(ModelError, match="not valid TOML"):
        load_model(_write(tmp_path, "[model\nname="))
    with pytest.raises(ModelError, match="no model named 'cgm9'"):
        load_model("cgm9")


# ------------------------------------------------------------------ properties

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st

_coord = st.floats(-1.0, 1.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(st.tuples(_coord, _coord, _coord), st.tuples(_coord, _coord, _coord), st.floats(0.02, 0.08))
def test_chord_properties_hold_for_any_geometry(wand_dir, prox_dir, offset):
    marker = np.zeros((1, 3))
    proximal = np.array([prox_dir], float)
    wand = np.array([wand_dir], float)
    d = np.linalg.norm(proximal)
    normal = np.cross(wand[0], proximal[0])
    if d < 0.2 or np.linalg.norm(wand) < 0.05 or np.linalg.norm(normal) < 0.05 * d * np.linalg.norm(wand):
        return  # degenerate: no plane (the function returns NaN there)
    j = chord_joint_centre(wand, proximal, marker, offset)[0]
    assert np.linalg.norm(j) == pytest.approx(offset, rel=1e-9)
    assert np.dot(proximal[0] - j, -j) == pytest.approx(0.0, abs=1e-12)  # right angle at J
    assert np.dot(normal / np.linalg.norm(normal), j) == pytest.approx(0.0, abs=1e-9)  # in the plane
    # J and the wand lie on opposite sides of the line marker->proximal
    side_j = np.dot(np.cross(proximal[0], j), normal)
    side_w = np.dot(np.cross(proximal[0], wand[0]), normal)
    assert side_j * side_w < 0


def test_chord_angle_offset_opens_the_right_angle():
    marker = np.array([[0.0, 0.0, 0.0]])
    proximal = np.array([[0.0, 0.0, 0.4]])
    wand = np.array([[0.05, 0.0, 0.2]])
    j = chord_joint_centre(wand, proximal, marker, 0.04, angle_offset=0.2)[0]
    a, b = proximal[0] - j, marker[0] - j
    angle = np.arccos(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert angle == pytest.approx(np.pi / 2 + 0.2, abs=1e-12)
    assert np.linalg.norm(j) == pytest.approx(0.04) and j[1] == pytest.approx(0.0, abs=1e-15) and j[0] < 0


def test_progression_frame_follows_travel_or_facing():
    n = 50
    walk = np.zeros((n, 3))
    walk[:, 1] = -np.linspace(0, 2.0, n)  # walking towards -Y
    R = np.broadcast_to(np.eye(3), (n, 3, 3))
    P = fr.progression_frame(walk, R)
    np.testing.assert_allclose(P[0], np.column_stack([[0, -1, 0], [1, 0, 0], [0, 0, 1]]), atol=1e-15)
    facing = fr.rotation_about("z", np.full(n, np.pi))  # standing still, facing -X
    P = fr.progression_frame(np.zeros((n, 3)), facing)
    np.testing.assert_allclose(P[0, :, 0], [-1, 0, 0], atol=1e-12)
    assert np.isnan(fr.progression_frame(np.full((n, 3), np.nan), facing)).all()


def test_per_model_builds_once_per_model_and_key_and_starts_over_at_its_limit():
    cache, built = {}, []
    model = load_model("plugin-gait")

    def build(tag):
        built.append(tag)
        return tag

    assert per_model(cache, model, ("a",), lambda: build("a")) == "a"
    assert per_model(cache, model, ("a",), lambda: build("again")) == "a"  # kept
    assert per_model(cache, model, ("b",), lambda: build("b")) == "b"
    assert per_model(cache, load_model("isb"), ("a",), lambda: build("isb")) == "isb"  # another model
    assert built == ["a", "b", "isb"]
    per_model(cache, model, ("c",), lambda: build("c"), limit=3)  # full: starts over
    assert len(cache) == 1 and per_model(cache, model, ("a",), lambda: build("a2")) == "a2"
