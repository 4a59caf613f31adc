"""Plate-to-foot assignment, wrench summation, overrides and per-foot external loads."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import markers_for
from test_events import _read, make_walk, truth_events

from gaitid import contacts as P
from gaitid.contacts import foot_loads as LD
from gaitid.core.errors import SettingsError
from gaitid.core.trial import PlateWrench
from gaitid.core.vocabulary import parse_plate_overrides
from gaitid.dynamics.types import ExternalLoad

# --------------------------------------------------------------------------- geometry


def test_distance_to_triangle_closed_forms():
    a, b, c = np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    pts = np.array([[0.2, 0.2], [2.0, 0.0], [-1.0, -1.0], [1.0, 1.0], [0.5, -0.3], [np.nan, 0.0]])
    n = len(pts)
    got = P.distance_to_triangle(pts, *(np.repeat(v, n, axis=0) for v in (a, b, c)))
    np.testing.assert_allclose(got[:5], [0.0, 1.0, np.sqrt(2), 1 / np.sqrt(2), 0.3], atol=1e-12)
    assert np.isnan(got[5])
    # clockwise vertex order gives the same distances
    got2 = P.distance_to_triangle(pts[:5], *(np.repeat(v, 5, axis=0) for v in (a, c, b)))
    np.testing.assert_allclose(got2, got[:5], atol=1e-12)


def _point_triangle_reference(p, a, b, c):
    """Distance from one point p (2,) to the triangle abc: 0 inside (same side of every edge), else the
    least distance to an edge segment (its nearest point clipped to the segment); a degenerate edge is
    its start point."""
    def seg(u, v):
        e = v - u
        t = 0.0 if e @ e == 0 else min(max((p - u) @ e / (e @ e), 0.0), 1.0)
        return float(np.hypot(*(p - u - t * e)))

    s = [(v - u)[0] * (p - u)[1] - (v - u)[1] * (p - u)[0] for u, v in ((a, b), (b, c), (c, a))]
    return 0.0 if all(x >= 0 for x in s) or all(x <= 0 for x in s) else min(seg(a, b), seg(b, c), seg(c, a))


def test_distance_to_triangle_against_a_point_by_point_reference():
    """Random points and triangles (some degenerate: two or three corners equal, a point on a corner),
    stacked (feet, frames, 2) as the COP check gives them, a corner broadcast (2,), and NaN anywhere."""
    rng = np.random.default_rng(11)
    p, a, b, c = (rng.normal(size=(2, 300, 2)) for _ in range(4))
    b[:, :20], c[:, 10:30] = a[:, :20], a[:, 10:30]  # zero-length edges and a point-like triangle
    p[:, 40:50] = a[:, 40:50]
    got = P.distance_to_triangle(p, a, b, c)
    want = np.array([[_point_triangle_reference(*(v[f, i] for v in (p, a, b, c))) for i in range(300)]
                     for f in range(2)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    one = P.distance_to_triangle(p[0], a[0, 0], b[0, 5], c[0, 7])  # a fixed triangle for every point
    np.testing.assert_allclose(one, [_point_triangle_reference(q, a[0, 0], b[0, 5], c[0, 7]) for q in p[0]],
                               rtol=1e-12, atol=1e-15)
    for v in (p, a, b, c):
        v[0, 60] = np.nan
    got = P.distance_to_triangle(p, a, b, c)
    assert np.isnan(got[0, 60]) and np.isfinite(np.delete(got[0], 60)).all()


@pytest.mark.parametrize("order", [[0, 1, 2, 3], [3, 2, 1, 0]])
def test_inside_distance_of_a_rectangle(order):
    rect = np.array([[0.0, 0.0, 0.0], [0.6, 0.0, 0.0], [0.6, 0.4, 0.0], [0.0, 0.4, 0.0]])[order]
    p = np.array([[0.3, 0.2], [0.55, 0.2], [0.7, 0.2], [0.3, -0.05]])
    np.testing.assert_allclose(P.inside_distance(p, rect), [0.2, 0.05, -0.1, -0.05], atol=1e-12)


def test_sum_wrenches_is_equivalent_about_any_point():
    rng = np.random.default_rng(3)
    n, z0 = 50, 0.012
    ws = []
    for _ in range(3):
        F = rng.normal(0, 50, (n, 3))
        F[:, 2] = rng.uniform(30, 600, n)
        cop = np.column_stack([rng.uniform(-1, 1, (n, 2)), np.full(n, z0)])
        T = np.column_stack([np.zeros((n, 2)), rng.normal(0, 3, n)])
        ws.append(PlateWrench(1000.0, F, cop, T))
    ws[2].cop[:10] = np.nan  # an unloaded plate (COP undefined) contributes nothing there
    s = LD.sum_wrenches(ws)
    q = np.array([0.3, -2.0, 0.8])  # an arbitrary point
    F_ref = sum(np.where(np.isnan(w.cop), 0.0, w.force) for w in ws)
    M_ref = sum(np.where(np.isnan(w.cop), 0.0, np.cross(w.cop - q, w.force) + w.free_moment) for w in ws)
    np.testing.assert_allclose(s.force, F_ref, atol=1e-9)
    np.testing.assert_allclose(np.cross(s.cop - q, s.force) + s.free_moment, M_ref, atol=1e-8)
    np.testing.assert_allclose(s.cop[:, 2], z0)
    np.testing.assert_allclose(s.free_moment[:, :2], 0.0)
    assert LD.sum_wrenches(ws[:1]) is ws[0]


# --------------------------------------------------------------------------- assignment (synthetic)


def _two_plates():
    return [{"centre": ("Right", 1), "stances": [("Right", 1, "all")]},
            {"centre": ("Left", 1), "stances": [("Left", 1, "all")]}]


@pytest.mark.parametrize("direction", [0.0, 200.0])
def test_each_plate_goes_to_the_foot_on_it(direction):
    trial, truth = make_walk(direction_deg=direction, plates=_two_plates(), shear=0.2)
    cs = P.assign_contacts(trial, markers_for(trial))
    assert [(c.plates, c.side, c.valid, c.reason) for c in cs] == [((1,), "Right", True, ""), ((2,), "Left", True, "")]
    assert cs[0].cop_under == {"Left": 0.0, "Right": 1.0}
    table = P.contacts_table(cs)
    assert table["valid"].tolist() == [True, True] and table["plates"].tolist() == ["1", "2"]


def test_foot_partly_off_the_plate_is_invalid_with_the_reason():
    plates = _two_plates()
    plates[0]["shift"] = 0.16  # plate moved forward: its back edge is 2 cm ahead of the heel marker
    trial, _ = make_walk(plates=plates)
    c = P.assign_contacts(trial, markers_for(trial))[0]
    assert c.side == "Right" and not c.valid
    assert "right foot partly off the plate" in c.reason and "plate 1" in c.reason
    assert "2.0 cm outside" in c.reason and "RHEE up to 2.0 cm" in c.reason  # names the marker


def test_two_feet_on_one_plate_is_invalid():
    plates = [{"centre": ("Right", 1), "shift": 0.3, "length": 1.3,
               "stances": [("Right", 1, "all"), ("Left", 1, "all")]}]
    trial, truth = make_walk(plates=plates)
    (c,) = P.assign_contacts(trial, markers_for(trial))
    assert not c.valid and c.side is None
    assert "two feet on the plate" in c.reason
    assert set(c.feet) == {"Left", "Right"}
    # both feet's loads are unknown while they stand on it, zero in their swings
    loads = LD.foot_loads(trial, [c], truth_events(truth, trial.point_rate))
    t = trial.time
    for side in ("Left", "Right"):
        S, O = truth["footprints"][(side, 1)]
        on = (t >= S + 0.005) & (t <= O - 0.005)
        assert np.all(loads[side].state[on] == "invalid") and np.isnan(loads[side].force_lab[on]).all()
    S, O = truth["footprints"][("Right", 1)]
    next_strike = truth["footprints"][("Right", 2)][0]
    after = (t > O + 0.005) & (t < next_strike - 0.005)  # right swing while the left foot is still on the plate
    assert np.all(t[after] < truth["footprints"][("Left", 1)][1])
    assert after.sum() > 20 and np.all(loads["Right"].force_lab[after] == 0.0)


def test_foot_across_two_plates_sums_their_wrenches():
    plates = [{"centre": ("Right", 1), "shift": -0.14, "length": 0.28, "stances": [("Right", 1, "heel")]},
              {"centre": ("Right", 1), "shift": 0.14, "length": 0.28, "stances": [("Right", 1, "toe")]}]
    trial, truth = make_walk(plates=plates, shear=0.25)
    (c,) = P.assign_contacts(trial, markers_for(trial))
    assert c.plates == (1, 2) and c.side == "Right" and c.valid, c.reason
    S, O = truth["footprints"][("Right", 1)]
    assert S < c.strike_time < S + 0.02 and O - 0.02 < c.off_time < O
    # the summed wrench is the foot's true load (force, COP and free moment)
    loads = LD.foot_loads(trial, [c], truth_events(truth, trial.point_rate))["Right"]
    ld = truth["loads"]["Right"]
    k = np.flatnonzero(loads.state == "plate")
    ka = k * 10  # analog sample simultaneous with point frame k
    strong = ld["F"][ka, 2] > 50.0
    # a plate under 10 N has no COP and adds nothing (documented): exact where both plates carry 10 N
    both = np.all([np.isfinite(fp.point.cop[k, 0]) for fp in trial.force_plates], axis=0)
    assert both.sum() > 50
    np.testing.assert_allclose(loads.force_lab[k][both], ld["F"][ka][both], atol=1e-9)
    assert np.abs(loads.force_lab[k] - ld["F"][ka]).max() < 10.0
    np.testing.assert_allclose(loads.cop_lab[k][both], ld["P"][ka][both], atol=1e-9)
    np.testing.assert_allclose(loads.free_moment_lab[k][both, 2], ld["Tz"][ka][both], atol=1e-9)
    # with one plate below 10 N the COP is that of the other plate: at most the 1-tau share off
    assert np.abs(loads.cop_lab[k][strong] - ld["P"][ka][strong]).max() < 0.02


def test_manual_overrides():
    trial, _ = make_walk(plates=_two_plates())
    cs = P.assign_contacts(trial, markers_for(trial), overrides={1: "left", "2": "Invalid"})
    assert [(c.side, c.valid, c.source) for c in cs] == [("Left", True, "override"), (None, False, "override")]
    assert cs[1].reason == "plate 2 set invalid by override"
    assert [c.side for c in P.assign_contacts(trial, markers_for(trial), overrides={1: "Auto"})] == ["Right", "Left"]
    with pytest.raises(SettingsError, match="plate 5"):
        P.assign_contacts(trial, markers_for(trial), overrides={5: "Left"})
    with pytest.raises(SettingsError, match="'Middle'"):
        P.assign_contacts(trial, markers_for(trial), overrides={1: "Middle"})
    assert parse_plate_overrides("1=left, 2=Invalid,3=AUTO") == {1: "Left", 2: "Invalid", 3: "Auto"}
    for bad in ("1:Left", "x=Left", "1=Up"):
        with pytest.raises(SettingsError):
            parse_plate_overrides(bad)


def test_settings_and_the_assignment_read_plate_overrides_alike():
    """One reading (vocabulary.plate_overrides): Settings.plates, the assignment and the command
    line accept and refuse the same plates and words, with the same reason."""
    from gaitid.core.settings import Settings

    trial, _ = make_walk(plates=_two_plates())
    given = {1: " left", "2": "INVALID"}
    assert Settings(plates=given).plates == {1: "Left", 2: "Invalid"}
    assert P.resolve_plate_overrides(given, trial) == {1: "Left", 2: "Invalid"}
    assert parse_plate_overrides("1= left,2=INVALID") == {1: "Left", 2: "Invalid"}
    assert P.resolve_plate_overrides({"1": "auto"}, trial) == {1: "Auto", 2: "Auto"}
    for bad, why in (({0: "Left"}, "key 0 is not a plate number"), ({"x": "Left"}, "key 'x' is not a plate"),
                     ({None: "Left"}, "key None"), ({-1: "Auto"}, "key -1"), ({1: "L"}, "'L' is not one of"),
                     ({2: "Middle"}, "'Middle' is not one of"), ("1=Left", "not a mapping")):
        with pytest.raises(SettingsError, match=why) as in_settings:
            Settings(plates=bad)
        with pytest.raises(SettingsError, match=why) as in_assignment:
            P.resolve_plate_overrides(bad, trial)
        assert in_settings.value.reason.endswith(in_assignment.value.reason)
    assert Settings(plates={5: "Left"}).plates == {5: "Left"}  # a plate number; the trial decides if it has it
    with pytest.raises(SettingsError, match=r"plate 5, but the trial has plates \[1, 2\]"):
        P.resolve_plate_overrides({5: "Left"}, trial)


# --------------------------------------------------------------------------- loads


def test_foot_loads_zero_in_swing_nan_when_unknown():
    plates = _two_plates()
    plates[1]["shift"] = 0.16  # the left contact is invalid (partly off)
    trial, truth = make_walk(plates=plates)
    evs = truth_events(truth, trial.point_rate)
    cs = P.assign_contacts(trial, markers_for(trial))
    loads = LD.foot_loads(trial, cs, evs)
    t = trial.time
    for side in ("Left", "Right"):
        ld = loads[side]
        stance = np.zeros(trial.n_frames, bool)
        for (sd, _), (S, O) in truth["footprints"].items():
            if sd == side:
                stance |= (t >= S - 1e-9) & (t <= O + 1e-9)
        assert np.all(ld.force_lab[~stance] == 0.0) and np.all(ld.state[~stance] == "swing")
    R, L = loads["Right"], loads["Left"]
    S, O = truth["footprints"][("Right", 1)]
    on = (t >= S - 1e-9) & (t <= O + 1e-9)
    assert np.all(R.state[on] == "plate")
    np.testing.assert_allclose(R.force_lab[on], trial.force_plates[0].point.force[on], atol=1e-12)
    assert np.isnan(R.force_lab[(R.state == "off plate")]).all() and (R.state == "off plate").sum() > 50
    S, O = truth["footprints"][("Left", 1)]
    on = (t >= S + 0.01) & (t <= O - 0.01)
    assert np.all(L.state[on] == "invalid") and np.isnan(L.force_lab[on]).all()
    ext = R.external_load()
    assert isinstance(ext, ExternalLoad) and ext.segment == 0 and ext.force_lab.shape == (trial.n_frames, 3)
    # no events: outside the valid contact the state is unknown (NaN)
    R0 = LD.foot_loads(trial, cs, None)["Right"]
    assert set(R0.state) == {"plate", "unknown"} and np.isnan(R0.force_lab[R0.state == "unknown"]).all()


def test_stance_intervals_from_events():
    from gaitid.core.trial import Event

    ev = [Event("Foot Off", "Left", 0.2, 21), Event("Foot Strike", "Left", 0.6, 61),
          Event("Foot Off", "Left", 1.2, 121)]
    assert LD.stance_intervals(ev, "Left", 0.0, 2.0) == [(0.0, 0.2), (0.6, 1.2)]
    assert LD.stance_intervals(ev[1:2], "Left", 0.0, 2.0) == [(0.6, 2.0)]
    assert LD.stance_intervals(ev, "Right", 0.0, 2.0) == []


# --------------------------------------------------------------------------- real data


@pytest.mark.realdata
@pytest.mark.parametrize("rel, expected", [
    ("biomechzoo/HC030A05.c3d", [((2,), "Right", True), ((1,), "Left", True)]),
    ("c3d-parser/MH0222_BP06.c3d", [((3,), "Right", True), ((2,), "Left", True)]),
    ("python-gaitalytics/test_small.c3d", [((1,), "Right", True), ((2,), "Left", True), ((4,), "Right", True)]),
    ("btkdata/PiG_Motion3_FF.c3d", [((1,), "Left", True), ((2,), "Right", True), ((3,), "Left", True)]),
    ("ezc3d-testfiles/Qualisys.c3d", [((1,), "Left", True), ((2,), "Right", True)]),
    ("btkdata/PiG_Motion-FlatFoot-Full.c3d", [((1,), "Right", False), ((2,), "Left", True)]),
    ("btkdata/FunctionalWalk.c3d", [((3,), "Left", True), ((1,), "Right", True), ((2,), "Left", True)]),
    ("btkdata/PlugInC3D.c3d", [((1,), "Right", True), ((2,), "Left", True)]),
])
def test_real_assignment(rel, expected):
    tr = _read(rel)
    cs = P.assign_contacts(tr, markers_for(tr))
    assert [(c.plates, c.side, c.valid) for c in cs] == expected, P.contacts_table(cs)
    if "FlatFoot" in rel:  # the heel marker lands 5 cm behind plate 1's edge
        assert "partly off" in cs[0].reason


@pytest.mark.realdata
@pytest.mark.parametrize("rel", ["biomechzoo/HC030A05.c3d", "c3d-parser/MH0222_BP06.c3d",
                                 "python-gaitalytics/test_small.c3d", "btkdata/PiG_Motion3_FF.c3d"])
def test_real_foot_loads_match_plug_in_gait_grf(rel):
    """Our per-foot load is defined on every frame Plug-in Gait has a GRF above 20 N, and equals
    it (PiG stores GRF / body mass) to within 4 % of the peak (the resampling differs)."""
    from test_events import _read as read

    from gaitid.events import file_events

    tr = read(rel)
    loads = LD.foot_loads(tr, P.assign_contacts(tr, markers_for(tr)), file_events(tr))
    for side in ("Left", "Right"):
        g = tr.model_outputs[side[0] + "GroundReactionForce"].values
        ok = np.isfinite(g[:, 2]) & (g[:, 2] * tr.subject.mass > 20.0)  # PiG frames above the contact threshold
        ours = loads[side].force_lab[ok] / tr.subject.mass
        assert np.isfinite(ours).all()
        assert np.all(loads[side].state[ok] == "plate")
        assert np.abs(ours - g[ok]).max() <= 0.04 * np.abs(g[ok, 2]).max()


@pytest.mark.realdata
def test_walking2_left_heel_lands_off_plate_2_right_heel_marker_behind_plate_1():
    """walking2.c3d (opensim-core): the left heel lands 16-17 cm behind plate 2's edge (on the
    floor, 70 ms before plate 2 sees any force, when the forefoot lands): genuinely partly off.
    The right heel marker sits 2-3.5 cm behind plate 1's edge (2 cm at foot flat), beyond the
    1 cm tolerance, though plate 1 loads at the heel's landing: rejected by the marker rule
    (docs/events.md, docs/opensim-crosscheck.md)."""
    tr = _read("opensim-core/walking2.c3d")
    left, right = P.assign_contacts(tr, markers_for(tr))
    assert (left.plates, left.side, left.valid, right.plates, right.side, right.valid) == ((2,), "Left", False,
                                                                                         (1,), "Right", False)
    assert "LCAL up to 16.5 cm" in left.reason and "LMT2" not in left.reason
    assert "RCAL up to 3.5 cm" in right.reason and "RMT2" not in right.reason
    assert left.cop_under["Left"] > 0.9 and right.cop_under["Right"] > 0.95
    # the left heel is on the ground (low, still) before plate 2 carries 20 N: it stands on the floor
    heel = tr.point("LCAL")
    speed = np.linalg.norm(np.gradient(heel[:, :2], axis=0), axis=1) * tr.point_rate
    k_land = int(np.flatnonzero((tr.time > 2.0) & (heel[:, 2] < 0.06) & (speed < 0.5))[0])  # 2.18 s
    assert 0.05 <= left.strike_time - tr.time[k_land] <= 0.1
    assert heel[k_land, 0] < tr.force_plates[1].corners[:, 0].min() - 0.15
