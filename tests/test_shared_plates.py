"""Both feet on one plate: two plates of a real walk merged into one (tests/plate_merge.py), the
truth known from the originals, where each foot stands on its own plate in double support."""

from __future__ import annotations

import numpy as np
import pytest

from gaitid.contacts import plate_ownership
from gaitid.contacts.ownership import BOTH
from gaitid.io.c3d import read_c3d
from gaitid.model.gait_markers import gait_markers
from gaitid.model.markerset import load_model
from tests.conftest import realdata_path
from tests.plate_merge import MERGES, merge_plates

MODEL = {"ezc3d-testfiles/Qualisys.c3d": "isb", "opensim-core/walking2.c3d": "isb"}


def test_merged_plate_is_the_sum_of_the_two(realdata):
    """The merged wrench is the two plates' (force, and moment about any point) on every sample
    with a COP, and its outline holds both plates' corners."""
    trial = read_c3d(realdata_path("biomechzoo/HC030A05.c3d"))
    merged = merge_plates(trial, 1, 2)
    assert [fp.index for fp in merged.force_plates] == [1] and len(trial.force_plates) == 2  # input untouched
    a, b = (fp.analog for fp in trial.force_plates)
    w = merged.force_plates[0].analog
    np.testing.assert_allclose(w.force, a.force + b.force)
    ok = np.isfinite(a.cop).all(1) & np.isfinite(b.cop).all(1) & np.isfinite(w.cop).all(1)
    assert ok.sum() > 50  # the double supports, at the analog rate
    q = np.array([0.3, -0.2, 0.0])  # moments about an arbitrary point: the same system of forces

    def moment(x):
        return np.cross(x.cop[ok] - q, x.force[ok]) + x.free_moment[ok]

    np.testing.assert_allclose(moment(w), moment(a) + moment(b), atol=1e-6)
    corners = np.concatenate([fp.corners for fp in trial.force_plates])
    outline = merged.force_plates[0].corners
    assert outline[:, 0].min() <= corners[:, 0].min() and outline[:, 0].max() >= corners[:, 0].max()
    assert outline[:, 1].min() <= corners[:, 1].min() and outline[:, 1].max() >= corners[:, 1].max()


@pytest.mark.parametrize("name", sorted(MERGES))
def test_a_shared_plate_is_never_given_to_one_foot(name):
    """On frames where both original plates carry more than 70 N (each foot pushing on its own plate),
    the merged plate is owned by both feet: never by one foot alone (the trailing foot rolling off its
    toe, fast and with the COP mixed with the leading foot's, was counted off the plate and its
    22-484 N given to the leading foot, 35 frames over these trials)."""
    trial = read_c3d(realdata_path(name))
    a, b = MERGES[name]
    markers = gait_markers(load_model(MODEL.get(name, "plugin-gait")), trial)
    fz = np.column_stack([np.nan_to_num(fp.point.force[:, 2]) for fp in trial.force_plates if fp.index in (a, b)])
    shared = np.all(fz > 70.0, axis=1)
    assert shared.sum() >= 4
    merged = merge_plates(trial, a, b)
    own = plate_ownership(merged, markers)
    owner = own.owner[:, own.plates.index(a)]
    assert np.all(owner[shared] == BOTH), (np.flatnonzero(shared), owner[shared])
    # neither foot's load is measured there: it is not wholly on a plate of its own
    for side in ("Left", "Right"):
        assert not own.measured[side][shared].any()


OPTIONS = {  # what each trial needs (as benchmarks/compare_results.py)
    "btkdata/PiG_Motion-FlatFoot-Full.c3d": {"static": "btkdata/PiG_Calibration-FlatFoot-Full.c3d"},
    "btkdata/PiG_Motion3_FF.c3d": {"static": "btkdata/PiG_Calibration3_FF.c3d"},
    "btkdata/PlugInC3D.c3d": {"subject": {"mass": 66.7, "leg_length": 0.9, "knee_width": 0.1, "ankle_width": 0.07}},
    "ezc3d-testfiles/Qualisys.c3d": {"model": "isb", "subject": 66.0},
}
#: the trials with a measured truth for every shared frame (Gait.c3d lacks the model's markers;
#: walking2.c3d has no events, so no stance is measured there in the original)
DECOMPOSED = [n for n in sorted(MERGES) if n not in ("btkdata/Gait.c3d", "opensim-core/walking2.c3d")]


def _stance_rms(r0, r1, variable: str, plane: int = 0) -> float:
    """RMS of the merged trial's ``variable`` (component ``plane``) less the original's over the
    original's stances (runs of measured load) that hold a decomposed frame of the merged trial."""
    d = []
    for side in ("Left", "Right"):
        plate = r0.loads[side].state == "plate"
        dec = r1.loads[side].source == "decomposed"
        edges = np.flatnonzero(np.diff(np.r_[0, plate.astype(int), 0]))
        stance = np.zeros_like(plate)
        for i, j in zip(edges[::2], edges[1::2]):
            stance[i:j] = dec[i:j].any()
        x = r1.outputs.curves[side][variable][stance, plane] - r0.outputs.curves[side][variable][stance, plane]
        d.append(x[np.isfinite(x)])
    d = np.concatenate(d)
    assert d.size >= 20
    return float(np.sqrt(np.mean(d ** 2)))


@pytest.mark.parametrize("name", DECOMPOSED)
def test_a_merged_plate_is_decomposed_close_to_the_originals(name):
    """Two real plates merged into one: every frame the plate carries both feet is decomposed, the
    two feet add up to the plate exactly, each foot's force is within the measured one's by RMS
    5 % of body weight per axis (at most 3.6 % measured; docs/contacts.md), its COP within 20 mm RMS
    where it carries 100 N or more (8-14 mm; PlugInC3D's 29 mm before a trailing foot's last frame
    alone could be outvoted), the sagittal ankle, knee and hip moments over the stances holding
    decomposed frames within 0.05 N.m/kg RMS of the original's (0.010-0.032, 0.012-0.029,
    0.016-0.049), and every kinetic cycle of the original stays kinetic. (The decomposition before
    the rolling heel COP and the carried lines of force: ankle up to 0.089, hip up to 0.112; before
    the trailing foot's line kept turning at its measured rate and its COP could outvote its last
    frame alone: PlugInC3D's ankle 0.057 and hip 0.074.)"""
    from gaitid import process
    from gaitid.contacts.foot_loads import load_imbalance

    opts = dict(OPTIONS.get(name, {}))
    if "static" in opts:
        opts["static"] = realdata_path(opts["static"])
    trial = read_c3d(realdata_path(name))
    a, b = MERGES[name]
    r0 = process(trial, **opts)
    merged = merge_plates(trial, a, b)
    r1 = process(merged, **opts)
    col = [fp.index for fp in merged.force_plates].index(a)
    bw = r0.subject.subject.mass * 9.81
    shared = dec = wrong = 0
    errors, cop_errors = [], []
    owner = plate_ownership(merged, r1.markers).owner[:, col]
    for side in ("Left", "Right"):
        ld = r1.loads[side]
        both = owner == BOTH
        shared += int(both.sum())
        dec += int((both & (ld.source == "decomposed")).sum())
        truth = r0.loads[side]
        ok = (ld.source == "decomposed") & (truth.state == "plate")
        errors.append((ld.force_lab[ok] - truth.force_lab[ok]) / bw)
        heavy = ok & (truth.force_lab[:, 2] >= 100.0)
        cop_errors.append(ld.cop_lab[heavy, :2] - truth.cop_lab[heavy, :2])
        # a measured frame of the merged trial is the original's (plus the other plate's light load,
        # below the contact threshold, that the merged plate holds); but for one frame of PlugInC3D (60 Hz):
        # the leading foot's first 63 N, on a frame its markers cannot tell from the one before landing
        # (docs/contacts.md). (MH0222_BP06's trailing foot's last 30 N, given to the leading foot before
        # the frame after a foot's hold on a plate counted as shared, no longer.)
        meas = (ld.source == "measured") & (ld.state == "plate") & (truth.state == "plate")
        off = np.abs(ld.force_lab[meas] - truth.force_lab[meas]).max(axis=1) > 20.0
        wrong += int(off.sum())
        assert np.all(np.abs(ld.force_lab[meas] - truth.force_lab[meas])[off] < 65.0)
    assert wrong == (2 if name == "btkdata/PlugInC3D.c3d" else 0)  # the same frame for both feet
    assert dec >= 0.95 * shared and shared > 0
    assert not np.any(load_imbalance(merged, r1.loads) > 1e-6)
    err = np.concatenate(errors)
    assert len(err) >= 10
    assert np.sqrt(np.mean(err ** 2, axis=0)).max() < 0.05
    cop = np.concatenate(cop_errors)
    assert np.sqrt(np.mean(np.sum(cop ** 2, axis=1))) < 0.02
    for variable in ("AnkleMoment", "KneeMoment", "HipMoment"):
        assert _stance_rms(r0, r1, variable) <= 0.05, variable
    assert sum(c.kinetic for c in r1.cycles) >= sum(c.kinetic for c in r0.cycles)


def test_a_share_that_cannot_be_trusted_stays_nan_with_the_reason(realdata):
    """Where the plate's COP lies off the line between the feet (here: any distance allowed to be 0),
    or the feet's COPs are too close, no foot gets a share: both NaN, the reason says why."""
    from dataclasses import replace

    from gaitid.contacts.decompose import decompose_shared, with_split
    from gaitid.contacts.foot_loads import foot_loads

    trial = merge_plates(read_c3d(realdata_path("biomechzoo/HC030A05.c3d")), 1, 2)
    markers = gait_markers(load_model("plugin-gait"), trial)
    own = with_split(trial, markers, plate_ownership(trial, markers))
    assert own.split is not None and own.split.decomposed["Left"].any()
    feet = {s: (trial.point(markers.foot(s).heel), trial.point(markers.foot(s).toe)) for s in ("Left", "Right")}
    alone = {}
    for s in ("Left", "Right"):  # each foot's measured load, as with_split takes it
        F = np.where(own.measured[s][:, None], trial.force_plates[0].point.force, np.nan)
        alone[s] = (F, trial.force_plates[0].point.cop)
    for kwargs, why in (({"max_residual": 0.0}, "off the line between the feet"),
                        ({"min_separation": 5.0}, "closer than")):
        split = decompose_shared(trial, own, feet, alone, **kwargs)
        shared = own.owner[:, 0] == BOTH
        assert not split.decomposed["Left"].any() and not split.decomposed["Right"].any()
        bad = replace(own, split=split)
        loads = foot_loads(trial, [], None, bad)
        for s in ("Left", "Right"):
            assert np.all(np.isnan(loads[s].force_lab[shared & bad.touches[s][:, 0]]))
            assert not np.any(loads[s].source == "decomposed")
        frames = np.flatnonzero(shared)
        assert any(why in r for r in bad.reasons("Left", frames)), bad.reasons("Left", frames)


def test_the_frames_table_flags_the_kinetics_of_decomposed_frames(tmp_path):
    """A decomposed foot load travels to the per-frame table: its kinetic rows say 'decomposed' in
    ``flag`` (the angles never), in the built table and in the CSV streamed from the arrays."""
    import pandas as pd

    from gaitid import process
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    path = tmp_path / "treadmill.c3d"
    write_treadmill(path, duration_s=6.0, truth=False)
    result = process(path)
    frames = result.frames
    index = {f: i for i, f in enumerate(result.trial.frames)}
    decomposed = {side: result.loads[side].source == "decomposed" for side in result.loads}
    assert sum(d.sum() for d in decomposed.values()) > 20
    expected = [bool(decomposed[s][index[f]]) and not v.endswith("Angles")
                for s, v, f in zip(frames["side"], frames["variable"], frames["frame"])]
    assert (frames["flag"] == "decomposed").tolist() == expected
    (csv,) = [p for p in result.to_csv(tmp_path / "out") if p.name.endswith("_frames.csv")]
    written = pd.read_csv(csv, keep_default_na=False, dtype={"value": str})
    assert written["flag"].tolist() == frames["flag"].astype(str).tolist()
    off = process(path, decompose_shared_plates=False).frames
    assert set(off["flag"]) == {""}


def test_the_parameters_of_a_decomposed_cycle_say_so(tmp_path):
    """A cycle whose stance load is partly decomposed: its kinetic parameters' note says so (with the
    cycle's reason), its angles' parameters and every other cycle's do not."""
    from gaitid import process
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    path = tmp_path / "treadmill.c3d"
    write_treadmill(path, duration_s=6.0, truth=False)
    result = process(path)
    decomposed = {(c.side, c.index): c.reason for c in result.cycles if "decomposed" in c.reason}
    assert decomposed
    p = result.parameters
    said = p["note"].astype(str).str.startswith("from a decomposed foot load (")
    assert said.any()
    for side, cycle, variable, note in zip(p["side"][said], p["cycle"][said], p["variable"][said], p["note"][said]):
        assert (side, cycle) in decomposed and not str(variable).endswith("Angles")
        assert note == f"from a decomposed foot load ({decomposed[side, cycle]})"
    others = p[[(s, c) not in decomposed for s, c in zip(p["side"], p["cycle"])]]
    assert not others["note"].astype(str).str.contains("decomposed").any()


def test_a_leading_foot_cop_rolls_from_its_heel_when_it_lands_heel_first(realdata):
    """The leading foot's COP on the shared frames starts at its heel's contact point
    (HEEL_CONTACT_M ahead of the heel marker, along the foot) on its first frame on the plate and
    moves forward to where it is measured after them; a foot landing with its heel higher than its
    toe (a forefoot landing) keeps its measured place throughout."""
    from gaitid.contacts.decompose import HEEL_CONTACT_M, decompose_shared
    from gaitid.contacts.foot_loads import plate_sum
    from gaitid.contacts.progression import pelvis_centre

    trial = merge_plates(read_c3d(realdata_path("biomechzoo/HC030A05.c3d")), 1, 2)
    markers = gait_markers(load_model("plugin-gait"), trial)
    own = plate_ownership(trial, markers)
    feet, alone = {}, {}
    for s in ("Left", "Right"):
        f = markers.foot(s)
        feet[s] = (trial.point(f.heel), trial.point(f.toe))
        F, P, _ = plate_sum(trial, own.owned(s) & own.measured[s][:, None])
        F[~own.measured[s]] = np.nan
        alone[s] = (F, P)
    centre = pelvis_centre(trial, markers)
    rows = np.flatnonzero(own.owner[:, 0] == BOTH)
    first = rows[0]
    assert own.touches["Left"][first, 0] and not own.touches["Left"][first - 1].any()  # the left foot lands
    heel, toe = feet["Left"]
    u = toe[:, :2] - heel[:, :2]
    u /= np.linalg.norm(u, axis=1, keepdims=True)

    def along(split):
        return np.sum((split.cop["Left"][rows, :2] - heel[rows, :2]) * u[rows], axis=1)

    rolled = along(decompose_shared(trial, own, feet, alone, centre=centre))
    after = rows[-1] + 1  # the left foot's first frame measured alone
    assert own.measured["Left"][after]
    measured = np.sum((alone["Left"][1][after, :2] - heel[after, :2]) * u[after])
    assert abs(rolled[0] - HEEL_CONTACT_M) < 0.002
    assert np.all(np.diff(rolled) > 0) and abs(rolled[-1] - measured) < 0.01
    raised = heel.copy()
    raised[first - 5:first + 5, 2] += 0.08  # the heel above the toe as the foot lands
    kept = along(decompose_shared(trial, own, {**feet, "Left": (raised, toe)}, alone, centre=centre))
    np.testing.assert_allclose(kept, measured, atol=0.003)


TREADMILLS = {  # the synthetic treadmills where both feet load one plate in every double support
    "single belt": {"layout": "single"},
    "split belt, right foot across the line": {"crossings": (("R", 0),), "crossing_period": 1},
    # feet 5-7 cm apart: the swinging foot passes low beside the stance foot, on the other belt
    "split belt, both feet across the line": {"crossings": (("R", 0), ("L", 0)), "crossing_period": 1},
}
#: RMS limits (% body weight, per lab axis X, Y, Z) over the decomposed frames; measured 2026-11-27:
#: single belt 1.1 / 0.1 / 1.0, crossing split belt 0.7 / 0.1 / 1.0, both feet crossing 1.0 / 0.1 / 1.0
#: (docs/contacts.md; the decomposition before its rolling COP and carried lines of force gave 2.2 / 0.2 /
#: 1.9 and 1.6 / 0.1 / 1.7; with both feet crossing, before a swinging foot was told from a stance foot by
#: its speed, no cycle was kinetic)
TREADMILL_RMS_BW = {"single belt": (0.015, 0.005, 0.015), "split belt, right foot across the line": (0.012, 0.005, 0.015),
                    "split belt, both feet across the line": (0.015, 0.005, 0.015)}


@pytest.fixture(scope="module", params=sorted(TREADMILLS))
def treadmill_run(request, tmp_path_factory):
    import pandas as pd

    from gaitid import process
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    path = tmp_path_factory.mktemp("tm") / "treadmill.c3d"
    write_treadmill(path, duration_s=12.0, **TREADMILLS[request.param])
    truth = pd.read_csv(path.with_name("treadmill_truth.csv"), keep_default_na=False, na_values=[""],
                        dtype={"R_plates": str, "L_plates": str})
    return request.param, process(path), truth, path


def test_a_treadmill_with_both_feet_on_one_belt_is_decomposed_against_the_truth(treadmill_run):
    """Synthetic treadmills (exact truth) where one plate carries both feet in every double support:
    every frame the truth calls mixed is decomposed, the feet add up to the plates exactly, each
    foot's force is within the truth by the stated RMS (% body weight) and every cycle of at least
    10 per side is kinetic (the target: 8 of 10); without the decomposition none is."""
    from gaitid import process
    from gaitid.contacts.foot_loads import load_imbalance

    name, r, truth, path = treadmill_run
    bw = r.subject.subject.mass * 9.81
    assert not np.any(load_imbalance(r.trial, r.loads) > 1e-6)
    errors = []
    for side in ("Left", "Right"):
        ld = r.loads[side]
        dec = ld.source == "decomposed"
        mixed = truth[f"{side[0]}_contact"].to_numpy() == 3
        assert mixed.sum() > 200 and np.all(dec[mixed])
        exact = truth[[f"{side[0]}_grf_lab_{a}_N" for a in "xyz"]].to_numpy()
        errors.append((ld.force_lab[dec] - exact[dec]) / bw)
        cycles = [c for c in r.cycles if c.side == side]
        assert len(cycles) >= 10 and all(c.kinetic for c in cycles), [c.reason for c in cycles if not c.kinetic]
        assert all("decomposed" in c.reason for c in cycles)
    rms = np.sqrt(np.mean(np.concatenate(errors) ** 2, axis=0))
    assert np.all(rms < TREADMILL_RMS_BW[name]), rms
    off = process(path, decompose_shared_plates=False)
    assert not any(c.kinetic for c in off.cycles)


def test_every_treadmill_trial_says_so_in_its_event_notes(treadmill_run):
    """Single belt or split belt, the event notes say the trial is a treadmill walk and where its
    events come from; every contact on a belt keeps its source 'treadmill' (the single belt's, all on
    the shared plate, were given source 'auto' when rebuilt for the decomposition: no note there)."""
    name, r, _, _ = treadmill_run
    assert any(note.startswith("treadmill trial (") for note in r.event_choice.notes), (name, r.event_choice.notes)
    assert any(w.startswith("treadmill trial (") for w in r.warnings)
    assert {c.source for c in r.foot_contacts} == {"treadmill"}


def test_the_opensim_moments_name_the_decomposed_frames(treadmill_run, tmp_path):
    """The inverse-dynamics .sto (no flag column of its own) names, per side, the frames whose
    moments come from a decomposed foot load: exactly the frames table's 'decomposed' rows."""
    from gaitid.core.signal import runs
    from gaitid.export import write_opensim
    from gaitid.io.mot import read_mot

    _, r, _, _ = treadmill_run
    sto = read_mot(write_opensim(r, tmp_path)[1])
    f = r.frames
    for side in ("Left", "Right"):
        rows = f[(f["side"] == side) & (f["variable"] == "KneeMoment") & (f["component"] == "X")]
        dec = rows["flag"].astype(str).str.contains("decomposed").to_numpy()
        frames = rows["frame"].to_numpy()
        a, b = runs(dec)
        assert a.size > 5
        spans = ", ".join(f"{frames[i]}-{frames[j - 1]}" for i, j in zip(a, b))
        line = next(c for c in sto.comments if c.startswith(f"{side.lower()} moments decomposed"))
        assert line.split(" on frames ")[1].split(":")[0] == spans
