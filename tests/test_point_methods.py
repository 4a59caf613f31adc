"""Point methods as one registry (gaitid.model.point_methods): every method a model file may name
is registered once, with its keys, its evaluator, its palpated landmarks and its error-model
section; an unknown method is a ModelError at load time and never gets a silent zero error."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from gaitid.core.errors import ModelError
from gaitid.core.resources import models_dir
from gaitid.model.evaluator import PointEvaluator
from gaitid.model.markerset import list_models, load_model, read_toml
from gaitid.model.point_methods import POINT_METHODS, method_of, point_method
from gaitid.uncertainty.errormodel import load_error_model
from gaitid.uncertainty.points import landmark_labels

KNOWN = ["along_segment", "chord", "davis", "functional", "harrington", "in_segment", "marker", "midpoint"]

GOOD = (
    '[model]\nname = "lab"\nbsip = "dempster"\nchain = ["thigh"]\n'
    '[segments.thigh]\nmethod = "axis_points"\norigin = "{S}FEO"\nx = "{S}FEA"\ny = "{S}FEL"\nz = "{S}FEP"\n'
    'proximal = "{S}FEP"\ndistal = "{S}FEO"\n'
)


def test_the_registry_holds_each_method_once_with_its_keys():
    assert sorted(POINT_METHODS) == KNOWN
    assert all(name == entry.name for name, entry in POINT_METHODS.items())
    assert POINT_METHODS["chord"].required == {"wand", "proximal", "marker", "width"}
    assert POINT_METHODS["chord"].optional == {"wand_rotation", "angle_offset", "axis_offset"}
    assert POINT_METHODS["harrington"].required == {"segment", "lasi", "rasi", "sacrum"}
    assert [n for n, e in POINT_METHODS.items() if e.landmarks is not None] == ["midpoint", "chord"]


def test_an_unknown_method_names_the_file_the_point_and_the_known_methods(tmp_path):
    p = tmp_path / "lab.toml"
    p.write_text(GOOD + '[points.hip]\nmethod = "davies"\nsegment = "pelvis"\n')
    with pytest.raises(ModelError) as exc:
        load_model(p)
    text = str(exc.value)
    assert str(p) in text and "points.hip.method" in text and "'davies'" in text
    assert f"known: {', '.join(KNOWN)}" in text
    # a variant of a shipped model: the same
    q = tmp_path / "pig-variant.toml"
    q.write_text('[model]\nextends = "plugin-gait"\nname = "v"\n[points.knee]\nmethod = "kneeling"\n')
    with pytest.raises(ModelError, match=r"pig-variant.toml: model key 'points.knee.method': 'kneeling' is not a "
                                         r"point method \(known: along_segment, chord"):
        load_model(q)
    with pytest.raises(ModelError, match="points.hip.method': None is not a point method"):  # no method at all
        p.write_text(GOOD + '[points.hip]\nsegment = "pelvis"\n')
        load_model(p)


def test_a_methods_own_checks_still_apply(tmp_path):
    p = tmp_path / "lab.toml"
    p.write_text(GOOD + '[points.knee]\nmethod = "chord"\nwand = "a"\nproximal = "b"\nmarker = "c"\nwidth = "w"\n')
    with pytest.raises(ModelError, match="points.knee.width': parameter 'w' is not defined"):
        load_model(p)
    p.write_text(GOOD + '[points.tip]\nmethod = "along_segment"\nsegment = "thigh"\nfrom = "a"\naxis = "w"\n'
                 'length = ["a", "b"]\n')
    with pytest.raises(ModelError, match="along_segment needs axis"):
        load_model(p)
    p.write_text(GOOD + '[points.knee]\nmethod = "midpoint"\n')
    with pytest.raises(ModelError, match="method 'midpoint' needs key\\(s\\) of"):
        load_model(p)


def test_every_method_the_shipped_models_use_is_registered():
    used = set()
    for path in sorted(models_dir().glob("*.toml")):  # the raw files: a model need not load to be checked
        used |= {spec["method"] for spec in read_toml(path).get("points", {}).values()}
    assert used == {"marker", "midpoint", "davis", "chord", "harrington", "along_segment"}
    assert used <= set(POINT_METHODS)
    for name in list_models():
        m = load_model(name)
        assert all(point_method(method_of(m, p)) is POINT_METHODS[spec["method"]] for p, spec in m.points.items())
    assert method_of(load_model("plugin-gait"), "{S}KNE") == "marker"  # a trial label: read as it is


def test_the_error_model_has_one_section_per_registered_method():
    sections = {e.error for e in POINT_METHODS.values()}
    assert sections == set(POINT_METHODS)
    shipped = read_toml(models_dir() / "uncertainty" / "default.toml")["joint_centres"]
    assert set(shipped) == sections
    em = load_error_model()
    assert set(em.joint_centres) == sections
    for method in POINT_METHODS:  # every method has its figures (zero ones are written out, with a source)
        assert em.joint_centre(method, "knee").source
    np.testing.assert_allclose(em.joint_centre("harrington", "hip").centre_sd, [0.008] * 3)
    np.testing.assert_allclose(em.joint_centre("midpoint", "ankle").landmark_sd, [0.005, 0.003, 0.005])


def test_an_error_model_never_gives_a_silent_zero(tmp_path):
    em = load_error_model()
    with pytest.raises(ModelError, match="'davies': not a point method \\(known: along_segment, chord"):
        em.joint_centre("davies", "hip")
    partial = dataclasses.replace(em, joint_centres={k: v for k, v in em.joint_centres.items() if k != "marker"})
    with pytest.raises(ModelError, match=r"no \[joint_centres.marker\] section"):
        partial.joint_centre("marker", "hip")
    lab = tmp_path / "lab.toml"
    lab.write_text("[joint_centres.davies]\ncentre_sd_mm = [20, 10, 10]\n")  # a misspelt method
    with pytest.raises(ModelError, match="lab.toml: error model key 'joint_centres.davies': not a point method"):
        load_error_model(lab)


def test_landmarks_come_from_the_method():
    pig, isb = load_model("plugin-gait"), load_model("isb")
    assert landmark_labels(pig, "knee", "Left", set()) == ["LKNE"]  # the chord's lateral marker
    assert landmark_labels(pig, "ankle", "Right", set()) == ["RANK"]
    assert landmark_labels(pig, "hip", "Left", {"LASI", "RASI"}) == []  # a regression: no landmark
    assert landmark_labels(pig, "{S}KNE", "Left", {"LKNE"}) == []  # not a model point
    assert landmark_labels(isb, "knee", "Left", {"LLFC", "LMFC"}) == ["LLFC", "LMFC"]
    assert landmark_labels(isb, "knee", "Left", {"LLFC"}) == []  # the group is incomplete
    assert landmark_labels(isb, "toe", "Right", {"RMT1", "RMT2"}) == ["RMT1", "RMT2"]  # the first complete group


def _pelvis_points(n=4):
    lab = {"LASI": [0.0, 0.12, 1.0], "RASI": [0.0, -0.12, 1.0], "LPSI": [-0.15, 0.05, 1.0], "RPSI": [-0.15, -0.05, 1.0]}
    return {k: np.tile(v, (n, 1)) for k, v in lab.items()}


def test_the_evaluator_dispatches_through_the_registry():
    isb = load_model("isb")
    points = {**isb.points, "probe": {"method": "in_segment", "segment": "pelvis", "offset": [0.1, 0.02, -0.03]}}
    ev = PointEvaluator(dataclasses.replace(isb, points=points), _pelvis_points(), {}, "Left", {}, None)
    # pelvis: origin mid-ASIS (0, 0, 1), x anterior (lab x), y to the left ASIS (lab y), z up
    np.testing.assert_allclose(ev.point("probe"), np.tile([0.1, 0.02, 0.97], (4, 1)), atol=1e-15)
    np.testing.assert_allclose(ev.point("sacrum"), np.tile([-0.15, 0.0, 1.0], (4, 1)))  # midpoint of the PSIS
    bad = dataclasses.replace(isb, points={**isb.points, "hip": {"method": "magic"}})  # built, not loaded
    with pytest.raises(ModelError, match="points.hip.method': 'magic' is not a point method"):
        PointEvaluator(bad, _pelvis_points(), {}, "Left", {}, None).point("hip")


def test_every_registered_method_is_documented_for_users():
    readme = (models_dir() / "README.md").read_text()
    table = readme[readme.index("## Points"):readme.index("## Segments")]
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")}
    assert rows == set(POINT_METHODS)
