"""A plate that reads 18-42 N unloaded on the synthetic stairs (the issue's stair trial read 14-38 N
on its plate 2): its baseline subtracted with the figures in the warnings, and, whatever the force
says, a contact cut where no foot is on the plate, so one foot's two steps are two contacts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import gaitid.contacts.assign as assign_module
from gaitid import process
from gaitid.contacts.intervals import unloaded_baselines
from gaitid.model.gait_markers import gait_markers
from gaitid.model.markerset import load_model
from gaitid.pipeline import load_trial
from gaitid.validation.synthetic.stairs import write_stairs


@pytest.fixture(scope="module")
def stairs(tmp_path_factory):
    path = tmp_path_factory.mktemp("stairs") / "stairs.c3d"
    write_stairs(path, truth=False)
    return load_trial(path)


def drifting(trial, plate: int = 2, mean: float = 30.0, swing: float = 8.0, hz: float = 0.7, noise: float = 2.0,
             seed: int = 0):
    """Plate ``plate`` reading ``mean`` +- ``swing`` N (a ``hz`` drift) + ``noise`` N on top of its load
    (by default always above the 20 N contact threshold)."""
    rng = np.random.default_rng(seed)

    def drift(fp):
        ws = []
        for w in (fp.analog, fp.point):
            t = np.arange(w.force.shape[0]) / w.rate
            f = w.force.copy()
            f[:, 2] += mean + swing * np.sin(2 * np.pi * hz * t) + rng.normal(0, noise, t.size)
            ws.append(replace(w, force=f))
        return replace(fp, analog=ws[0], point=ws[1])

    return replace(trial, force_plates=[drift(fp) if fp.index == plate else fp for fp in trial.force_plates])


def steps(result):
    return [(c.plates, c.side, c.valid) for c in result.foot_contacts]


CLEAN = [((1,), "Right", True), ((2,), "Left", True), ((3,), "Right", True), ((4,), "Left", True)]


def test_the_clean_stairs_give_one_contact_per_step(stairs):
    r = process(stairs)
    assert steps(r) == CLEAN
    assert not [w for w in r.warnings if "no foot" in w]


def test_a_drifting_plate_has_its_baseline_subtracted(stairs, tmp_path):
    ref = process(stairs)
    r = process(drifting(stairs))
    assert steps(r) == CLEAN  # before: plates (2, 4) joined into one left contact of about 2 s
    left = [c for c in r.foot_contacts if c.plates == (2,)][0]
    true = [c for c in ref.foot_contacts if c.plates == (2,)][0]
    assert abs(left.strike_time - true.strike_time) < 0.005 and abs(left.off_time - true.off_time) < 0.005
    note = [w for w in r.warnings if w.startswith("force plate 2 reads")]
    assert len(note) == 1 and "with no foot near it, above the 20 N contact threshold" in note[0]
    assert "(+0.0, +0.0, +3" in note[0] and "subtracted" in note[0]
    # the stance's vertical force is the clean one to the drift's residual (+-8 N sine, 2 N noise)
    a, b = r.trial.indices_between(true.strike_time + 0.05, true.off_time - 0.05)[[0, -1]]
    fz, fz0 = r.trial.force_plates[1].point.force[a:b, 2], stairs.force_plates[1].point.force[a:b, 2]
    assert np.abs(fz - fz0).max() < 20
    # the report's "Check first" says it (HTML; the PDF renders the same block)
    from html import escape

    r.report(tmp_path, formats=("html",))
    assert escape(note[0]) in (tmp_path / "stairs_report.html").read_text()


def test_without_the_baseline_the_swing_still_splits_the_steps(stairs, monkeypatch):
    """The baseline left in place (as before): the plate's contact is cut where no foot is on it,
    so the left foot's steps on plates 2 and 4 stay two contacts, and the warning says so."""
    import gaitid.pipeline as P

    monkeypatch.setattr(P, "unloaded_baselines", lambda trial, markers, threshold: (trial, []))
    r = process(drifting(stairs))
    assert sorted((c.plates, c.side) for c in r.foot_contacts if c.valid) == [(p, s) for p, s, _ in CLEAN]
    assert any(w.startswith("force plate 2: loaded while no foot was on it") for w in r.warnings)
    monkeypatch.setattr(assign_module, "split_at_swings", lambda trial, intervals, markers: intervals)
    joined = process(drifting(stairs))  # neither guard: the single contact on plates 2 and 4
    assert ((2, 4), "Left", True) in steps(joined)


def test_a_plate_loaded_where_the_markers_place_no_foot_is_left_alone(stairs):
    """Body weight on a plate the markers keep away from: the outline does not place the feet;
    nothing is subtracted."""
    model = load_model("plugin-gait")
    heavy = replace(stairs, force_plates=[replace(fp, point=replace(fp.point, force=fp.point.force + [0, 0, 700]),
                                                  analog=replace(fp.analog, force=fp.analog.force + [0, 0, 700]))
                                          if fp.index == 2 else fp for fp in stairs.force_plates])
    out, notes = unloaded_baselines(heavy, gait_markers(model, heavy))
    assert out is heavy and notes == []


@pytest.mark.parametrize("plate", [2, 3, 4])
def test_a_real_plate_with_a_drifting_baseline(plate, monkeypatch):
    """MH0222_BP06 with 26 +- 12 N (0.5 Hz) + 1 N noise added to one plate (two loaded, one not):
    the contacts are the clean trial's, strikes and offs within 10 ms, and the warning names the
    plate; before (no guard), the drifting plate's contact ran from the record's start."""
    from conftest import realdata_path

    trial = load_trial(realdata_path("c3d-parser/MH0222_BP06.c3d"))
    mutated = drifting(trial, plate, mean=26.0, swing=12.0, hz=0.5, noise=1.0, seed=1)
    clean, r = process(trial), process(mutated)
    assert [(c.plates, c.side, c.valid) for c in r.foot_contacts] == \
        [(c.plates, c.side, c.valid) for c in clean.foot_contacts]
    for c, c0 in zip(r.foot_contacts, clean.foot_contacts):
        assert abs(c.strike_time - c0.strike_time) < 0.01 and abs(c.off_time - c0.off_time) < 0.01
    assert any(w.startswith(f"force plate {plate} reads") and "subtracted" in w for w in r.warnings)
    import gaitid.pipeline as P

    monkeypatch.setattr(P, "unloaded_baselines", lambda trial, markers, threshold: (trial, []))
    monkeypatch.setattr(assign_module, "split_at_swings", lambda trial, intervals, markers: intervals)
    before = process(mutated)
    assert any(plate in c.plates and not np.isfinite(c.strike_time) for c in before.foot_contacts)
