"""Every row of ``gaitid validate`` says what it compared, why it is NaN, and why it is poor:
on the real Plug-in Gait trials (no flag on a clean one) and on modified copies of one."""

import dataclasses
import json
import math

import numpy as np
import pytest

from tests.conftest import realdata_path

CLEAN = ["HC030A05.c3d", "PiG_Motion-FlatFoot-Full.c3d", "PiG_Motion3_FF.c3d", "MH0222_BP06.c3d", "test_small.c3d"]


@pytest.fixture(scope="module")
def records():
    from gaitid.validation.plugin_gait import validate

    return validate(realdata_path(""))


@pytest.fixture(scope="module")
def motion3():
    from gaitid.io.c3d import read_c3d

    return read_c3d(realdata_path("btkdata/PiG_Motion3_FF.c3d"))


def _with(trial, change):
    """A copy of ``trial`` whose model outputs are ``change(dict)`` (the trial is not modified)."""
    outputs = dict(trial.model_outputs)
    change(outputs)
    return dataclasses.replace(trial, model_outputs=outputs)


def _rows(trial, side="right", quantity="moment"):
    from gaitid.validation.plugin_gait import validate_file

    recs = validate_file(trial, modes=("pig-segments",))
    return [r for r in recs if r.get("side") == side and r.get("quantity") == quantity]


def test_clean_trials_rows_are_ok_and_say_what_they_compared(records):
    rows = [r for r in records if "reason" not in r and r["file"] in CLEAN]
    assert len(rows) > 100
    for r in rows:
        assert r["status"] == "ok" and r["why"] == "", r  # no false alarm on a clean trial
        assert r["compared"].startswith(f"{r['side']} {r['joint']} {r['quantity']}, {r['plane']} (")
        assert f"{r['n_frames']} frames in {r['n_cycles']} " in r["compared"] and r["n_frames"] >= 20


def test_noisy_references_are_flagged_with_the_cause(records):
    poor = [r for r in records if r.get("status") == "poor"]
    assert {r["file"] for r in poor} == {"FunctionalWalk.c3d", "PlugInC3D.c3d"}
    hip = [r for r in poor if r["file"] == "FunctionalWalk.c3d" and r["joint"] == "hip" and r["plane"] == "sagittal"]
    assert hip and all(r["rms"] > 0.1 and "low-passed at 6 Hz" in r["why"] for r in hip)
    assert all(r["rms_6hz"] < 0.05 for r in hip)


def test_a_side_without_reference_kinetics_says_so(motion3):
    def zero_right(out):
        for lab, o in list(out.items()):
            if lab.startswith("R") and o.kind in ("moment", "power", "force"):
                out[lab] = dataclasses.replace(o, values=np.zeros_like(o.values))

    rows = _rows(_with(motion3, zero_right))
    assert len(rows) == 9 and all(math.isnan(r["rms"]) and r["n_frames"] == 0 for r in rows)
    assert all(r["status"] == "not computed" and "zero or missing on every frame" in r["why"] for r in rows)
    assert all(r["label"] in r["why"] for r in rows)
    left = _rows(_with(motion3, zero_right), side="left")
    assert all(r["status"] == "ok" for r in left)


def test_a_side_whose_outputs_are_absent_has_rows_saying_so(motion3):
    def drop(out):
        for lab in [lab for lab in out if lab.startswith("RKnee")]:
            del out[lab]
        out["Subject_RKneeMoment_model2"] = motion3.model_outputs["RKneeMoment"]

    rows = [r for r in _rows(_with(motion3, drop)) if r["joint"] == "knee"]
    assert len(rows) == 3 and all(r["status"] == "not computed" for r in rows)
    assert all("no RKneeMoment" in r["why"] and "Subject_RKneeMoment_model2" in r["why"] for r in rows)


def test_stances_on_other_frames_say_the_plate_assignment_differs(motion3):
    def shift(out):
        for lab, o in list(out.items()):
            if lab.startswith("R") and o.kind in ("moment", "power", "force"):
                out[lab] = dataclasses.replace(o, values=np.roll(o.values, 120, axis=0))

    rows = _rows(_with(motion3, shift))
    assert rows and all("plate assignment differs" in r["why"] and "frames" in r["why"] for r in rows)


def test_too_few_frames_and_a_poor_agreement(motion3):
    ref = motion3.model_outputs["RKneeMoment"]
    computed = np.flatnonzero(np.isfinite(ref.values).all(axis=1) & (np.abs(ref.values).sum(axis=1) > 0))

    def few(out):
        v = np.zeros_like(ref.values)
        grf = out["RGroundReactionForce"].values
        stance = np.flatnonzero(np.isfinite(grf[:, 2]) & (np.abs(grf[:, 2]) * 74.0 > 20.0))
        keep = np.intersect1d(stance, computed)[10:14]  # 4 frames
        v[keep] = ref.values[keep]
        out["RKneeMoment"] = dataclasses.replace(ref, values=v)

    rows = [r for r in _rows(_with(motion3, few)) if r["joint"] == "knee"]
    assert rows and all(r["status"] == "not computed" and r["why"].startswith("too few frames: 4 frames") for r in rows)

    def flipped(out):  # a reference with the wrong sign: r = -1
        out["RKneeMoment"] = dataclasses.replace(ref, values=-ref.values)

    rows = [r for r in _rows(_with(motion3, flipped)) if r["joint"] == "knee"]
    sag = [r for r in rows if r["plane"] == "sagittal"][0]
    assert sag["status"] == "poor" and sag["r"] < -0.99 and "no cause gaitid can tell" in sag["why"]


def test_text_and_json_carry_the_legend_and_the_reasons(motion3, capsys):
    from gaitid.cli import main
    from gaitid.validation.plugin_gait import format_table, validate_file

    def zero_right(out):
        for lab, o in list(out.items()):
            if lab.startswith("R") and o.kind == "moment":
                out[lab] = dataclasses.replace(o, values=np.zeros_like(o.values))

    text = format_table(validate_file(_with(motion3, zero_right), modes=("pig-segments",)))
    assert "frames: frames compared" in text and "frames stances" in text
    assert "    sagittal, frontal, transverse nan: the reference's RAnkleMoment is zero or missing" in text
    assert main(["validate", str(realdata_path("btkdata/PiG_Motion3_FF.c3d")), "--json"]) == 0
    recs = json.loads(capsys.readouterr().out)
    assert all({"compared", "status", "why"} <= set(r) for r in recs if "reason" not in r)
