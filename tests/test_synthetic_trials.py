"""The synthetic trial kinds beyond the sample walk (issue 13, 17): split-belt and tandem
treadmills, stair ascent and descent, long walkways; and the pressure-patch split of a foot's
load over plates.

Reference values come from independent derivations: a plain Newton-Euler recursion against the
twist-wrench RNEA truth, Galilean invariance (a treadmill walk has the overground walk's joint
loads), ezc3d's own force-plate decoding of the written C3D, the sample walk's dedicated plate
encoder against the generic one, and grid integration of the pressure patch.
"""

from __future__ import annotations

import filecmp

import ezc3d
import numpy as np
import pandas as pd
import pytest

from gaitid.validation import synthetic as S
from gaitid.validation.synthetic import plate_split as L

BW = 72.0 * S.G


def _decode(c3d_path):
    c = ezc3d.c3d(str(c3d_path), extract_forceplat_data=True)
    return c, c["data"]["platform"]


def _plate_sums(block, side):
    return sum(sh.force for sh in block.shares[side])


def _check_newton_euler(trial, atol=1e-9):
    b = trial.block
    for side in S.SIDES:
        ne = S.newton_euler_leg(trial.params, b.kinematics, b.grf[side], side)
        for j in S.JOINTS:
            np.testing.assert_allclose(b.truth[side].force_lab[j], ne.force_lab[j], rtol=0, atol=atol, err_msg=(side, j))
            np.testing.assert_allclose(b.truth[side].moment_lab[j], ne.moment_lab[j], rtol=0, atol=atol, err_msg=(side, j))


def _check_shares(trial):
    """Per foot the plate shares add up to its ground reaction (force and moment about the lab
    origin); each share pushes (Fz >= 0) at a COP inside its plate."""
    b, plates = trial.block, trial.scenario.plates
    for side in S.SIDES:
        g = b.grf[side]
        measured = b.off_plate[side] == 0
        np.testing.assert_allclose(_plate_sums(b, side)[measured], g.force[measured], rtol=0, atol=1e-9)
        cop = np.nan_to_num(g.cop)
        m_foot = np.cross(cop, g.force) + g.free_moment
        m_sum = sum(L.wrench_about_origin(sh) for sh in b.shares[side])
        np.testing.assert_allclose(m_sum[measured], m_foot[measured], rtol=0, atol=1e-8)
        for sh, pl in zip(b.shares[side], plates):
            on = sh.share > 0
            assert np.all(sh.force[on, 2] >= -1e-12)
            xmin, xmax, ymin, ymax = pl.bounds
            c = sh.cop[on]
            assert np.all((c[:, 0] >= xmin - 1e-9) & (c[:, 0] <= xmax + 1e-9) & (c[:, 1] >= ymin - 1e-9)
                          & (c[:, 1] <= ymax + 1e-9))
            np.testing.assert_allclose(c[:, 2], pl.height, atol=1e-12)


def _check_c3d_plates(trial, c3d_path):
    """ezc3d's type-2 decoding of the written plates = the sum of both feet's shares on each plate,
    at the point rate (the analog samples on the frames), and the COP on the plate's surface."""
    _, platforms = _decode(c3d_path)
    b = trial.block
    ratio = int(round(trial.params.analog_rate / trial.params.point_rate))
    assert len(platforms) == len(trial.scenario.plates)
    for i, (pl, outline) in enumerate(zip(platforms, trial.scenario.plates)):
        F = pl["force"].T[::ratio]
        ref = b.shares["R"][i].force + b.shares["L"][i].force
        np.testing.assert_allclose(F, ref, rtol=0, atol=2e-4 * max(1.0, np.abs(ref).max()))
        loaded = ref[:, 2] > 50.0
        cop = pl["center_of_pressure"].T[::ratio][loaded] / 1000.0
        w = np.stack([b.shares[s][i].share for s in S.SIDES], 1)
        fz = np.stack([b.shares[s][i].force[:, 2] for s in S.SIDES], 1)
        cops = np.stack([np.nan_to_num(b.shares[s][i].cop) for s in S.SIDES], 1)
        if loaded.any():
            ref_cop = np.einsum("ns,nsk->nk", fz[loaded], cops[loaded]) / fz[loaded].sum(1, keepdims=True)
            # a load shared by two feet with different force directions has its COP where the
            # horizontal moment vanishes, not at the Fz-weighted mean: compare single-foot frames
            single = (np.count_nonzero(w[loaded] > 0, axis=1) == 1)
            np.testing.assert_allclose(cop[single, :2], ref_cop[single, :2], atol=2e-5)
            np.testing.assert_allclose(cop[:, 2], outline.height, atol=1e-6)


# ============================================================================ pressure patch


def test_patch_split_areas_match_grid_integration():
    """Area shares and centroids of rotated patches cut by plate edges, against a 600 x 600 grid
    integration over the patch (an independent quadrature)."""
    rng = np.random.default_rng(7)
    n = 12
    cop = rng.uniform(-0.08, 0.08, (n, 2))
    ang = rng.uniform(-np.pi, np.pi, n)
    heading = np.column_stack([np.cos(ang), np.sin(ang)])
    half = rng.uniform(0.02, 0.11, n)
    patch = L.pressure_patch(cop, heading, half)
    bounds = (-1.0, 0.02, -0.5, 0.01)  # a plate corner near the patches
    area, _ = L.polygon_area_centroid(patch)
    a, c = L.polygon_area_centroid(L.clip_rectangle(patch, bounds))
    np.testing.assert_allclose(area, 4 * half * L.PATCH_HALF_WIDTH, rtol=1e-12)
    u = (np.arange(600) + 0.5) / 600 * 2 - 1
    gu, gv = np.meshgrid(u, u, indexing="ij")
    for k in range(n):
        v = np.array([-heading[k, 1], heading[k, 0]])
        pts = cop[k] + (gu.ravel() * half[k])[:, None] * heading[k] + (gv.ravel() * L.PATCH_HALF_WIDTH)[:, None] * v
        inside = (pts[:, 0] <= bounds[1]) & (pts[:, 1] <= bounds[3])
        assert a[k] / area[k] == pytest.approx(inside.mean(), abs=3e-3)
        if inside.mean() > 0.05:
            np.testing.assert_allclose(c[k], pts[inside].mean(axis=0), atol=3e-4)


def test_patch_split_over_a_belt_line_is_exact():
    """A patch straddling the line y = 0 between two plates: the shares are the area fractions
    (closed form for a lab-aligned patch), the wrenches add up exactly to the foot's."""
    plates = [L.PlateOutline(L.rectangle_corners(-0.9, 0.9, -0.5, 0.0, 0.0), np.zeros(3)),
              L.PlateOutline(L.rectangle_corners(-0.9, 0.9, 0.0, 0.5, 0.0), np.zeros(3))]
    cop = np.array([[0.1, 0.01, 0.0], [0.1, -0.03, 0.0], [0.2, 0.07, 0.0]])
    heading = np.tile([1.0, 0.0], (3, 1))
    patch = L.pressure_patch(cop, heading, np.full(3, 0.1))
    force = np.array([[30.0, -10.0, 700.0], [-50.0, 20.0, 500.0], [0.0, 0.0, 300.0]])
    free = np.array([[0, 0, 2.0], [0, 0, -1.0], [0, 0, 0.5]])
    shares, off = L.split_load(force, cop, free, patch, plates, np.zeros(3))
    w_left = np.array([(0.04 + 0.01) / 0.08, (0.04 - 0.03) / 0.08, 1.0])
    np.testing.assert_allclose(shares[1].share, w_left, atol=1e-12)
    np.testing.assert_allclose(shares[0].share, 1 - w_left, atol=1e-12)
    np.testing.assert_allclose(shares[0].force + shares[1].force, force, atol=1e-12)
    m = sum(L.wrench_about_origin(s) for s in shares)
    np.testing.assert_allclose(m, np.cross(cop, force) + free, atol=1e-12)
    np.testing.assert_allclose(shares[1].cop[0, 1], 0.05 / 2, atol=1e-12)  # the left part's centroid
    assert np.all(off == 0)


def test_generic_plate_encoding_reproduces_the_sample_walk():
    """The walkway at 1x is the sample walk: same plates, and its plate channels (pressure patch,
    summed wrench) equal the walk's dedicated encoder (COP, free moment) to 1e-9 N.mm."""
    w = S.make_walkway_trial(380)
    tr = S.make_gait_trial()
    for a, b in zip(w.scenario.plates, tr.plates):
        np.testing.assert_allclose(a.corners, b.corners, atol=1e-12)
        np.testing.assert_allclose(a.origin, b.origin, atol=0)
    an = np.concatenate([pl.analog for pl in tr.plates], axis=1)
    np.testing.assert_allclose(w.analog, an, rtol=0, atol=1e-8)
    for side in S.SIDES:
        np.testing.assert_array_equal(w.block.contact[side], tr.contact[side])
        for j in S.JOINTS:
            np.testing.assert_allclose(w.block.truth[side].moment_lab[j], tr.truth[side].moment_lab[j], atol=1e-9)


# ============================================================================ treadmill


@pytest.fixture(scope="module")
def split_trial():
    return S.make_treadmill_trial()


@pytest.fixture(scope="module")
def split_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("treadmill")
    return S.write_treadmill(d / "treadmill_split.c3d")


def test_treadmill_truth_equals_newton_euler(split_trial):
    _check_newton_euler(split_trial)


def test_treadmill_joint_loads_are_the_overground_walks():
    """Galilean invariance: the tandem treadmill walk (the walk's motion minus v t) has the
    overground walk's joint loads on every frame, computed independently for each."""
    tm = S.make_treadmill_trial(duration_s=3.8, layout="tandem")
    walk = S.make_gait_trial()
    assert tm.params.n_frames == walk.params.n_frames
    for side in S.SIDES:
        np.testing.assert_allclose(tm.block.grf[side].force, walk.grf[side].force, atol=1e-9)
        for j in S.JOINTS:
            np.testing.assert_allclose(tm.block.truth[side].moment_lab[j], walk.truth[side].moment_lab[j], atol=1e-8)
            np.testing.assert_allclose(tm.block.truth[side].force_lab[j], walk.truth[side].force_lab[j], atol=1e-8)


def test_treadmill_walks_in_place_on_moving_belts(split_trial):
    """The pelvis stays in place (mean lab velocity 0, within 7 cm); each stance foot travels
    backwards at the belt speed (the walking speed of the overground walk)."""
    b = split_trial.block
    v = split_trial.scenario.notes["belt_speed_m_s"]
    assert v == pytest.approx(S.make_gait_trial().path.x.slope, abs=1e-12)
    pel = b.kinematics["pelvis"]
    assert abs(pel.v[:, 0].mean()) < 1e-3 and np.ptp(pel.o[:, 0]) < 0.14
    for side in S.SIDES:
        ph = b.grf[side].phase
        mid = (ph > 0.2) & (ph < 0.8)
        ajc_v = b.kinematics[f"{side}_foot"].v[mid]
        # as in the overground walk, where the stance ankle drifts by +0.045 m/s forward, 0.04 m/s sideways
        assert ajc_v[:, 0].mean() == pytest.approx(-v, abs=0.06)
        assert abs(ajc_v[:, 1].mean()) < 0.05


def test_treadmill_belts_carry_the_sum_of_the_feet(split_trial, split_files):
    _check_shares(split_trial)
    _check_c3d_plates(split_trial, split_files[0])


def test_treadmill_crossing_steps_and_shared_belts(split_trial):
    """Normal steps stay on their own belt; the listed crossing steps straddle the belt line (the
    foot's load on both belts) and in the double supports around them both feet load one belt."""
    b, p = split_trial.block, split_trial.params
    tt = split_trial.truth_table()
    t = b.time
    for side, k in S.TreadmillParams().crossings:
        t0 = p.first_strike + k * p.stride_time + (p.stride_time / 2 if side == "L" else 0.0)
        stance = (t > t0) & (t < t0 + p.stance_fraction * p.stride_time)
        assert (tt.loc[stance, f"{side}_plates"] == "1+2").sum() > 20, (side, k)
        assert (b.contact[side][stance] == 3).sum() >= 5  # double support on a shared belt
        other = "R" if side == "L" else "L"
        assert (b.contact[other][stance] == 3).sum() >= 5
    # a normal step: the left stance of stride 1 is on the left belt alone, measurable
    t0 = p.first_strike + 1.5 * p.stride_time
    stance = (t > t0 + 0.02) & (t < t0 + 0.58)
    assert set(tt.loc[stance, "L_plates"]) == {"2"} and set(b.contact["L"][stance]) == {1}
    # the gaitid invariant, frame by frame: a measurable foot's plates carry exactly its load
    for side in S.SIDES:
        other = "L" if side == "R" else "R"
        for i in range(2):
            mine, theirs = b.shares[side][i].share > 0, b.shares[other][i].share > 0
            assert not np.any(mine & theirs & (b.contact[side] == 1))
            assert np.all(b.contact[side][mine & theirs] == 3)


def test_tandem_treadmill_every_stance_crosses_the_line():
    tm = S.make_treadmill_trial(duration_s=4.0, layout="tandem")
    b, p = tm.block, tm.params
    tt = tm.truth_table()
    front, rear = tm.scenario.plates[0].bounds, tm.scenario.plates[1].bounds
    assert front[0] == pytest.approx(rear[1]) and front[0] > rear[0]  # plate 1 in front of plate 2
    for side in S.SIDES:
        ph = b.grf[side].phase
        early, late = (ph > 0.02) & (ph < 0.1), (ph > 0.9) & (ph < 0.98)
        assert set(tt.loc[early, f"{side}_plates"]) == {"1"}  # heel strike on the front belt
        assert set(tt.loc[late, f"{side}_plates"]) == {"2"}  # push-off from the rear belt
        assert (tt[f"{side}_plates"] == "1+2").sum() > 50
        heel = b.kinematics[f"{side}_foot"].point(np.array([L.SOLE_REAR, 0, -p.ankle_height]))[0]
        toe = b.kinematics[f"{side}_foot"].point(np.array([L.SOLE_FRONT, 0, -p.ankle_height]))[0]
        across = (tt[f"{side}_plates"] == "1+2").to_numpy()
        straddle = across & (heel[:, 0] < front[0]) & (toe[:, 0] > front[0])  # heel on one belt, forefoot on the other
        assert straddle.sum() > 0.5 * across.sum()
    _check_shares(tm)


def test_single_belt_treadmill_both_feet_on_its_one_plate(tmp_path):
    """One belt under both feet: every stance on plate 1 alone, every double support mixed (both
    feet on the plate), single support measurable; the plate's channels as ezc3d decodes them are
    the sum of both feet's loads."""
    tm = S.make_treadmill_trial(duration_s=4.0, layout="single")
    b, p = tm.block, tm.params
    tt = tm.truth_table()
    assert len(tm.scenario.plates) == 1
    both = (b.contact["R"] > 0) & (b.contact["L"] > 0)
    assert both.sum() > 60
    for side in S.SIDES:
        stance = b.contact[side] > 0
        assert set(tt.loc[stance, f"{side}_plates"]) == {"1"}
        np.testing.assert_array_equal(b.contact[side][stance], np.where(both[stance], 3, 1))
    _check_shares(tm)
    path = tmp_path / "single.c3d"
    S.write_treadmill(path, duration_s=4.0, layout="single", truth=False)
    _check_c3d_plates(tm, path)


def test_split_belt_treadmill_crossing_in_every_double_support():
    """``crossings=(("R", 0),), crossing_period=1``: every right step straddles the belt line, so
    the left belt carries both feet in every double support (truth code 3 on both feet) and the
    right belt never does."""
    tm = S.make_treadmill_trial(duration_s=6.0, crossings=(("R", 0),), crossing_period=1)
    b, tt = tm.block, tm.truth_table()
    both = (b.contact["R"] > 0) & (b.contact["L"] > 0)
    runs = np.flatnonzero(np.diff(both.astype(int)) == 1)
    assert len(runs) >= 10  # double supports starting inside the trial
    for side in S.SIDES:
        np.testing.assert_array_equal(b.contact[side][both], 3)
    assert set(tt.loc[b.contact["R"] > 0, "R_plates"]) == {"1+2"}
    assert not np.any(b.shares["L"][0].share > 0)  # the left foot never on the right belt
    _check_shares(tm)


def test_treadmill_files(split_trial, split_files, tmp_path):
    c3d_path, truth_path, events_path, seg_path = split_files
    c = ezc3d.c3d(str(c3d_path))
    P = c["parameters"]
    assert P["POINT"]["RATE"]["value"][0] == 100 and P["ANALOG"]["RATE"]["value"][0] == 1000
    assert c["data"]["points"].shape[2] == split_trial.params.n_frames == 1200
    np.testing.assert_allclose(c["data"]["points"][:3, 0, :].T / 1000, split_trial.block.markers["LASI"], atol=1e-6)
    ev = sorted(zip(P["EVENT"]["CONTEXTS"]["value"], P["EVENT"]["LABELS"]["value"], np.round(P["EVENT"]["TIMES"]["value"][1], 4)))
    assert ev == sorted((e[1], e[0], round(e[2], 4)) for e in split_trial.events)
    events = pd.read_csv(events_path)
    assert len(events) == len(split_trial.events) == 48
    strikes = events[(events.label == "Foot Strike") & (events.context == "Right")].time_s.to_numpy()
    np.testing.assert_allclose(np.diff(strikes), 1.0, atol=1e-9)
    truth = pd.read_csv(truth_path, keep_default_na=False, na_values=[""], dtype={"R_plates": str, "L_plates": str})
    ref = split_trial.truth_table()
    assert list(truth.columns) == list(ref.columns)
    for col in ("R_knee_moment_lab_y_Nm", "L_hip_moment_thigh_y_Nm", "plate1_L_force_lab_z_N", "plate2_R_share"):
        np.testing.assert_allclose(truth[col], ref[col], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(truth["R_contact"], ref["R_contact"])
    # reproducible bit for bit from its parameters
    again = S.write_treadmill(tmp_path / "treadmill_split.c3d")
    for a, b in zip(split_files, again):
        assert filecmp.cmp(a, b, shallow=False), b.name


# ============================================================================ stairs


@pytest.fixture(scope="module", params=["ascent", "descent"])
def stair_trial(request):
    return S.make_stair_trial(request.param)


def test_stairs_truth_equals_newton_euler(stair_trial):
    _check_newton_euler(stair_trial)


def test_stairs_truth_equals_block_solver(stair_trial):
    """gaitid.dynamics' block solver fed the exact kinematics gives the stair truth too."""
    from gaitid.dynamics import ExternalLoad, inverse_dynamics

    b = stair_trial.block
    for side in S.SIDES:
        chain, motion = S.segment_motions(stair_trial.params, b.kinematics, side)
        g = b.grf[side]
        load = ExternalLoad(0, g.force, np.where(np.isnan(g.cop), 0.0, g.cop), g.free_moment)
        out = inverse_dynamics(chain, motion, [load], gravity_lab=S.GRAVITY_LAB, frame="lab", method="block", contributions=False)
        for k, j in enumerate(S.JOINTS):
            np.testing.assert_allclose(out.moment[k], b.truth[side].moment_lab[j], atol=1e-8)


def test_stairs_plates_at_the_step_heights(stair_trial, tmp_path):
    sp = S.StairParams(direction=stair_trial.scenario.notes["direction"])
    heights = [pl.height for pl in stair_trial.scenario.plates]
    expected = [0.0, sp.riser, 2 * sp.riser, 3 * sp.riser]
    np.testing.assert_allclose(heights, expected if sp.direction == "ascent" else expected[::-1], atol=1e-12)
    assert max(heights) == pytest.approx(0.58)
    paths = S.write_stairs(tmp_path / "stairs.c3d", direction=sp.direction)
    c, platforms = _decode(paths[0])
    corners = c["parameters"]["FORCE_PLATFORM"]["CORNERS"]["value"]
    np.testing.assert_allclose(corners[2].T / 1000.0, np.repeat(np.array(heights)[:, None], 4, 1), atol=1e-6)
    _check_shares(stair_trial)
    _check_c3d_plates(stair_trial, paths[0])
    # each plated step carries one stance of one foot, the right foot on plates 1 and 3
    b = stair_trial.block
    for i, pl in enumerate(stair_trial.scenario.plates):
        side = "R" if i % 2 == 0 else "L"
        other = "L" if side == "R" else "R"
        assert b.shares[side][i].share.max() == 1.0 and b.shares[other][i].share.max() == 0.0
    # the trial ends during the left stance on the last plate: a contact running to the end
    assert b.contact["L"][-1] == 1 and b.shares["L"][3].force[-1, 2] > 0.5 * BW
    last_strike = max(e[2] for e in stair_trial.events if e[:2] == ("Foot Strike", "Left"))
    assert not [e for e in stair_trial.events if e[:2] == ("Foot Off", "Left") and e[2] > last_strike]


def test_stairs_overhang_with_cop_on_the_tread(stair_trial):
    """The left foot overhangs the nosing (ascent: its heel marker behind the tread; descent:
    its toe marker beyond it) while its COP and pressure patch stay on the tread."""
    b, sp = stair_trial.block, S.StairParams(direction=stair_trial.scenario.notes["direction"])
    for i in (1, 3):
        pl = stair_trial.scenario.plates[i]
        xmin, xmax, _, _ = pl.bounds
        on = b.shares["L"][i].share == 1.0
        assert on.sum() > 30
        flat = on & (b.grf["L"].phase > 0.1) & (b.grf["L"].phase < 0.4)  # before the heel rises
        assert flat.sum() > 10
        if sp.direction == "ascent":
            assert np.all(b.markers["LHEE"][flat, 0] < xmin - 0.02)
        else:
            assert np.all(b.markers["LTOE"][flat, 0] > xmax + 0.005)
        cop = b.grf["L"].cop[on]
        assert np.all((cop[:, 0] > xmin) & (cop[:, 0] < xmax))
    for i in (0, 2):  # the right foot stands wholly on its treads
        on = (b.shares["R"][i].share == 1.0) & (b.grf["R"].phase > 0.1) & (b.grf["R"].phase < 0.4)
        xmin, xmax, _, _ = stair_trial.scenario.plates[i].bounds
        assert on.sum() > 10
        # (the heel marker sits 1.5 cm behind the sole's heel: within 1 cm of the nosing in ascent)
        assert np.all((b.markers["RHEE"][on, 0] > xmin - 0.01) & (b.markers["RTOE"][on, 0] < xmax))


def test_stairs_kinematics_are_plausible_and_exact(stair_trial):
    """Angle ranges of published stair gait (Riener 2002, Protopapadaki 2007), the pelvis rising or
    falling one riser per step, the stance foot on its tread and the swing foot above the stairs."""
    sc = stair_trial.scenario
    sp, p = S.StairParams(direction=sc.notes["direction"]), stair_trial.params
    t = p.first_strike + np.linspace(0, p.stride_time, 200, endpoint=False)
    deg = {n: np.rad2deg(sc.curves[f"R_{n}"](t)) for n in ("hip_flex", "knee_flex", "ankle_dorsi")}
    if sp.direction == "ascent":
        assert 55 < deg["hip_flex"].max() < 72 and deg["hip_flex"].min() < 20
        assert 55 < deg["knee_flex"][0] < 75 and 90 < deg["knee_flex"].max() < 105 and deg["knee_flex"].min() < 20
        assert -30 < deg["ankle_dorsi"].min() < -15
    else:
        assert 35 < deg["hip_flex"].max() < 50
        assert deg["knee_flex"][0] < 35 and 85 < deg["knee_flex"].max() < 105
        assert -30 < deg["ankle_dorsi"][0] < -5 and 20 < deg["ankle_dorsi"].max() < 35
    assert sc.path.z.slope == pytest.approx(sp.sign * 2 * sp.riser / p.stride_time)
    assert sc.path.x.slope == pytest.approx(2 * sp.tread / p.stride_time)
    # stance: the front contact point stays where it was put (the Fourier fit of the IK), within 1 mm
    from gaitid.validation.synthetic.stairs import _foot_pose, _Geometry

    tt = p.first_strike + np.arange(0.0, 2 * p.stride_time, 0.004)
    kin = sc.kinematics(tt)
    geo = _Geometry(sp, p)
    for side in S.SIDES:
        R, ajc, k = _foot_pose(geo, tt, side)
        st = ~np.isnan(sc.stance_phase(tt, side))
        assert np.linalg.norm(kin[f"{side}_foot"].o - ajc, axis=1)[st].max() < 1e-3
        # swing (10-80 %): every sole point above the stair profile
        w = (((tt - p.first_strike - (0 if side == "R" else p.stride_time / 2)) / p.stride_time) % 1 - p.stance_fraction) / (1 - p.stance_fraction)
        mid = (w > 0.1) & (w < 0.8)
        for x in np.linspace(L.SOLE_REAR, L.SOLE_FRONT, 12):
            pt = kin[f"{side}_foot"].point(np.array([x, 0.0, -p.ankle_height]))[0][mid]
            assert np.all(pt[:, 2] - sp.step_height(np.floor(pt[:, 0] / sp.tread)) > 0.0)


def test_stairs_ground_reaction_is_stair_like(stair_trial):
    b, sp = stair_trial.block, stair_trial.scenario.notes["direction"]
    for side in S.SIDES:
        fz = b.grf[side].force[:, 2] / BW
        assert np.nanmin(np.where(np.isnan(b.grf[side].phase), np.nan, fz)) >= 0.0
        assert 1.05 < fz.max() < 1.3
        ph = b.grf[side].phase
        first, second = fz[(ph > 0.1) & (ph < 0.4)].max(), fz[(ph > 0.6) & (ph < 0.9)].max()
        assert (first > second) if sp == "descent" else (second > first)


def test_bad_trial_parameters_are_gaitid_errors(capsys):
    from gaitid.core.errors import GaitIDError

    with pytest.raises(GaitIDError, match="layout"):
        S.TreadmillParams(layout="circular")
    with pytest.raises(GaitIDError, match="riser"):
        S.StairParams(riser=0.4)
    with pytest.raises(GaitIDError, match="direction"):
        S.StairParams(direction="sideways")
    with pytest.raises(GaitIDError, match="walkway"):
        S.WalkwayParams(n_frames=1)
    assert S.main(["treadmill", "x.c3d", "--duration", "-1"]) == 2
    assert "duration must be positive" in capsys.readouterr().err


# ============================================================================ long trials


def test_walkway_plates_every_few_metres():
    w = S.make_walkway_trial(1900, plate_every=3, max_plate_pairs=None)
    assert w.scenario.notes["plated_strides"] == [1, 4, 7, 10, 13, 16]  # the last pair's left stance ends at 17.2 s
    xs = [pl.centre[0] for pl in w.scenario.plates[::2]]
    np.testing.assert_allclose(np.diff(xs), 3 * w.scenario.notes["walking_speed_m_s"], atol=2e-3)
    for side in S.SIDES:
        c = w.block.contact[side]
        assert set(np.unique(c)) == {0, 1, 2}
    _check_newton_euler(w)
    _check_shares(w)


def test_blockwise_writer_matches_in_memory_generation(tmp_path):
    """Written in blocks of 500 frames, a 20 s treadmill trial has the in-memory trial's markers,
    plate channels and truth."""
    from gaitid.validation.synthetic.write import write_scenario

    scn = S.treadmill_scenario(S.TreadmillParams(duration_s=20.0))
    paths = write_scenario(scn, tmp_path / "t.c3d", block_frames=500)
    mem = S.generate(scn)
    c = ezc3d.c3d(str(paths[0]))
    np.testing.assert_allclose(c["data"]["points"][:3, 5, :].T / 1000, mem.block.markers["LKNE"], atol=1e-6)
    an = c["data"]["analogs"][0].T
    np.testing.assert_allclose(an, mem.analog, rtol=1e-6, atol=1e-3)
    truth = pd.read_csv(paths[1], usecols=["frame", "R_hip_moment_lab_y_Nm", "L_contact"])
    ref = mem.truth_table()
    np.testing.assert_array_equal(truth["frame"], np.arange(1, 2001))
    np.testing.assert_allclose(truth["R_hip_moment_lab_y_Nm"], ref["R_hip_moment_lab_y_Nm"], rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(truth["L_contact"], ref["L_contact"])


def test_long_c3d_frame_count_beyond_16_bits(tmp_path):
    """More than 65535 frames: the header's 16-bit count saturates, so the file carries the true
    count in TRIAL:ACTUAL_END_FIELD (low and high words) and POINT:LONG_FRAMES, and all the frames."""
    from gaitid.validation.synthetic.write import _c3d, _write_c3d

    n = 70_000
    pts = np.ones((4, 2, n))
    pts[0] = np.arange(n)[None, :]
    c = _c3d(["A", "B"], S.GaitParams(), {}, points=pts)
    _write_c3d(c, tmp_path / "long.c3d")
    d = ezc3d.c3d(str(tmp_path / "long.c3d"))
    P = d["parameters"]
    low, high = P["TRIAL"]["ACTUAL_END_FIELD"]["value"]
    assert int(low) + (int(high) << 16) == n
    assert P["POINT"]["LONG_FRAMES"]["value"][0] == n
    header = (tmp_path / "long.c3d").read_bytes()[:512]
    data_start = int.from_bytes(header[16:18], "little")
    assert (tmp_path / "long.c3d").stat().st_size >= (data_start - 1) * 512 + n * 2 * 16


# ============================================================================ gaitid smoke run


@pytest.mark.parametrize("kind", ["treadmill_split", "treadmill_tandem", "stairs_ascent", "stairs_descent"])
def test_gaitid_processes_the_new_trials(kind, tmp_path):
    """A smoke run only: gaitid.process reads each kind and cuts it into the gait cycles of its
    events (the contact and treadmill handling is being rewritten: its kinetics are not asserted)."""
    from gaitid import process
    from gaitid.core.resources import sample_data_dir

    write = {"treadmill_split": lambda p: S.write_treadmill(p, duration_s=6.0),
             "treadmill_tandem": lambda p: S.write_treadmill(p, duration_s=6.0, layout="tandem"),
             "stairs_ascent": lambda p: S.write_stairs(p), "stairs_descent": lambda p: S.write_stairs(p, direction="descent")}
    paths = write[kind](tmp_path / f"{kind}.c3d")
    r = process(paths[0], static=sample_data_dir() / "static_synthetic.c3d")
    events = pd.read_csv(paths[2])
    for side in ("Left", "Right"):
        strikes = events[(events.context == side) & (events.label == "Foot Strike")]
        assert len([c for c in r.cycles if c.side == side]) == len(strikes) - 1
