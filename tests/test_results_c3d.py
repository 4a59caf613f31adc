"""The results C3D: Plug-in Gait's names hold Plug-in Gait's convention, frame and unit whatever
the tables' settings, and the trial's own (Vicon's) outputs are kept unless replacing is asked."""

from __future__ import annotations

import dataclasses
import os

import numpy as np
import pytest

from gaitid.cli import main
from gaitid.core.errors import OutputError
from gaitid.core.resources import sample_data_dir
from gaitid.core.settings import Settings
from gaitid.export import result_points
from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
from tests.conftest import realdata_path

WALK = sample_data_dir() / "walk_synthetic.c3d"
STATIC = sample_data_dir() / "static_synthetic.c3d"
VICON = [("biomechzoo/HC030A05.c3d", None), ("c3d-parser/MH0222_BP06.c3d", None),
         ("btkdata/PiG_Motion3_FF.c3d", "btkdata/PiG_Calibration3_FF.c3d")]
# the settings gaitid validate uses to mirror Plug-in Gait, with the tables in the internal convention
PIG_INTERNAL = ["--plugin-gait", "--cutoff", "0", "--convention", "internal"]


@pytest.fixture(scope="module")
def walk():
    return process(WALK, static=STATIC)


@pytest.mark.parametrize("name,static", VICON)
def test_real_trial_moments_are_written_as_plug_in_gait_stores_them(name, static, tmp_path, capsys):
    src = realdata_path(name)
    extra = ["--static", str(realdata_path(static))] if static else []
    assert main(["run", str(src), *extra, "-o", str(tmp_path), "--no-report", *PIG_INTERNAL]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "results C3D:" in x)
    assert "LAnkleMoment_gaitid" in line and "Plug-in Gait's convention (external moments, distal frame, N.mm/kg)" in line
    trial, back = read_c3d(src), read_c3d(tmp_path / f"{src.stem}_results.c3d")
    for label, own in trial.model_outputs.items():  # Vicon's own outputs kept as they were
        np.testing.assert_allclose(back.model_outputs[label].values, own.values, rtol=1e-6, atol=1e-6, equal_nan=True)
    compared = 0
    for s in "LR":
        for joint in ("Ankle", "Knee", "Hip"):
            vicon = trial.model_outputs[f"{s}{joint}Moment"].values
            ours = back.model_outputs[f"{s}{joint}Moment_gaitid"].values
            both = np.isfinite(vicon).all(1) & np.isfinite(ours).all(1) & (np.abs(vicon).sum(1) > 0)
            if both.sum() < 20:
                continue
            compared += 1
            for k in range(3):
                r = np.corrcoef(vicon[both, k], ours[both, k])[0, 1]
                assert r >= 0.95, (name, s, joint, "XYZ"[k], r)
            x, mine = vicon[both, 0], ours[both, 0]
            for i in (np.argmax(x), np.argmin(x)):  # X at Plug-in Gait's peaks: the same sign
                if abs(x[i]) > 0.1:
                    assert np.sign(mine[i]) == np.sign(x[i]), (name, s, joint, x[i], mine[i])
            if joint == "Ankle":  # the realdata README: X positive = internal plantarflexor, +1.0 to +1.7 N.m/kg
                assert 1.0 < x.max() < 1.8 and abs(mine[np.argmax(x)] - x.max()) < 0.1
            if joint == "Hip":  # hip Y positive through stance
                assert ours[both, 1][np.argmax(vicon[both, 1])] > 0 < vicon[both, 1].max()
    assert compared >= 4


def test_replace_outputs_replaces_vicons_own(tmp_path, capsys):
    src = realdata_path("c3d-parser/MH0222_BP06.c3d")
    assert main(["run", str(src), "-o", str(tmp_path), "--no-report", "--replace-outputs", *PIG_INTERNAL]) == 0
    assert "replacing" in capsys.readouterr().out
    trial, back = read_c3d(src), read_c3d(tmp_path / f"{src.stem}_results.c3d")
    assert not [lab for lab in back.model_outputs if lab.endswith("_gaitid")]
    result = process(src, settings=Settings.plugin_gait(marker_cutoff_hz=None).replace(convention="internal"))
    ours = -result.curve("Left", "KneeMoment")  # external = the internal negated, in N.m/kg as read
    ok = np.isfinite(ours).all(1)
    got, vicon = back.model_outputs["LKneeMoment"].values, trial.model_outputs["LKneeMoment"].values
    np.testing.assert_allclose(got[ok], ours[ok], atol=1e-5)
    assert np.nanmax(np.abs(vicon[ok] - ours[ok])) > 1e-3  # (so that the check above tells them apart)
    with pytest.raises(OutputError, match="--replace-outputs"):  # a name of the trial, not asked to replace
        result_points(result, suffix="")


def test_table_settings_do_not_change_the_c3d(walk):
    base = result_points(walk).points
    for changes in ({"convention": "external"}, {"frame": "proximal", "normalise": "none"},
                    {"frame": "lab", "convention": "external", "normalise": "bw-height"}):
        other = process(WALK, static=STATIC, settings=Settings(**changes))
        assert other.outputs.curves["Left"]["KneeMoment"].shape == walk.outputs.curves["Left"]["KneeMoment"].shape
        points = result_points(other).points
        assert list(points) == list(base)
        for label, (group, values) in points.items():
            assert group == base[label][0]
            np.testing.assert_allclose(values, base[label][1], rtol=1e-9, atol=1e-9, equal_nan=True, err_msg=label)


def test_sample_walk_gets_plain_names_in_plug_in_gait_units(walk, tmp_path):
    import ezc3d

    assert walk.settings.convention == "internal" and walk.outputs.units["AnkleMoment"] == "N.m/kg"
    path = walk.to_c3d(tmp_path / "walk_results.c3d")
    c = ezc3d.c3d(str(path))
    labels = c["parameters"]["POINT"]["LABELS"]["value"]
    assert not [lab for lab in labels if lab.endswith("_gaitid")]
    assert c["parameters"]["POINT"]["MOMENT_UNITS"]["value"] == ["Nmm"]
    raw = c["data"]["points"][:3]  # (3, points, frames) as stored
    for side in ("Left", "Right"):
        for joint in ("Ankle", "Knee", "Hip"):
            internal = walk.outputs.curves[side][f"{joint}Moment"]  # N.m/kg, internal, distal frame
            stored = raw[:, labels.index(f"{side[0]}{joint}Moment")].T
            ok = np.isfinite(internal).all(1)
            assert ok.sum() > 50
            np.testing.assert_allclose(stored[ok], -1000.0 * internal[ok], rtol=1e-6, atol=1e-3)
        power = raw[:, labels.index(f"{side[0]}KneePower")].T
        ok = np.isfinite(walk.outputs.curves[side]["KneePower"])
        np.testing.assert_allclose(power[ok, 2], walk.outputs.curves[side]["KneePower"][ok], rtol=1e-6, atol=1e-6)


def test_unknown_mass_writes_no_kinetics_and_says_so(walk):
    subject = dataclasses.replace(walk.trial.subject, mass=None)
    points = result_points(dataclasses.replace(walk, trial=dataclasses.replace(walk.trial, subject=subject)))
    assert "LKneeAngles" in points.points and "LKneeMoment" not in points.points
    assert "body mass is unknown" in points.skipped["LKneeMoment"]
    assert any("not written" in line and "body mass" in line for line in points.summary())


def test_batch_keeps_vicons_outputs_unless_asked(tmp_path):
    from gaitid.batch import run_batch
    from gaitid.io.atomic import forget_inputs

    src = realdata_path("c3d-parser/MH0222_BP06.c3d")
    (tmp_path / "in").mkdir()
    os.symlink(src, tmp_path / "in" / src.name)
    trial = read_c3d(src)
    out = tmp_path / "out" / src.stem / f"{src.stem}_results.c3d"
    run_batch([tmp_path / "in"], tmp_path / "out", report=False)
    kept = read_c3d(out)
    assert "LAnkleMoment_gaitid" in kept.model_outputs
    np.testing.assert_allclose(kept.model_outputs["LAnkleMoment"].values, trial.model_outputs["LAnkleMoment"].values,
                               rtol=1e-6, atol=1e-6, equal_nan=True)
    forget_inputs()  # (this process read the results C3D above; the batch runs here and may replace it)
    summary = run_batch([tmp_path / "in"], tmp_path / "out", report=False, replace_outputs=True)
    assert list(summary["status"]) == ["ok"], summary["error"].tolist()  # options changed: run again
    replaced = read_c3d(out)
    assert "LAnkleMoment_gaitid" not in replaced.model_outputs
    np.testing.assert_allclose(replaced.model_outputs["LAnkleMoment"].values,
                               kept.model_outputs["LAnkleMoment_gaitid"].values, atol=1e-6, equal_nan=True)
