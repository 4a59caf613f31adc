"""The synthetic gait trial (gaitid.validation.synthetic): exact kinematics, file encoding, ground truth.

Reference values come from independent derivations: finite differences of the analytic
positions, a plain Newton-Euler recursion and the block solver against the twist-wrench
RNEA, ezc3d's own force-plate equations, and Plug-in Gait's joint-centre rules.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import ezc3d
import numpy as np
import pandas as pd
import pytest

from gaitid.validation import synthetic as S

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data"


@pytest.fixture(scope="module")
def trial() -> S.SyntheticTrial:
    return S.make_gait_trial()


@pytest.fixture(scope="module")
def walk_c3d():
    return ezc3d.c3d(str(SAMPLE / "walk_synthetic.c3d"), extract_forceplat_data=True)


def _unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


# ------------------------------------------------------------------ kinematics


def test_fourier_derivatives_match_central_differences():
    f = S.Fourier(1.0, 0.3, np.array([0.2, -0.1, 0.05]), np.array([0.1, 0.3, -0.02]), slope=1.2, shift=0.1)
    t = np.linspace(0.0, 2.0, 41)
    h = 1e-5
    np.testing.assert_allclose(f(t, 1), (f(t + h) - f(t - h)) / (2 * h), atol=1e-8)
    np.testing.assert_allclose(f(t, 2), (f(t + h, 1) - f(t - h, 1)) / (2 * h), atol=1e-7)
    # closed form at t = shift: a0 + slope*shift + sum a_k
    assert f(np.array([0.1]))[0] == pytest.approx(0.3 + 1.2 * 0.0 + 0.15, abs=1e-14)


def test_segment_velocities_and_accelerations_are_exact(trial):
    """v, a, omega, alpha of every segment against 4th-order central differences of o and R."""
    p = trial.params
    t = np.linspace(0.3, 3.3, 37)
    h = 1e-4

    def kin(tt):
        return S.body_kinematics(p, tt, trial.curves, trial.path)

    k0 = kin(t)
    ks = {d: kin(t + d * h) for d in (-2, -1, 1, 2)}

    def d1(get):
        return (-get(ks[2]) + 8 * get(ks[1]) - 8 * get(ks[-1]) + get(ks[-2])) / (12 * h)

    for name, fr in k0.items():
        np.testing.assert_allclose(fr.v, d1(lambda k: k[name].o), atol=1e-8, err_msg=name)
        np.testing.assert_allclose(fr.a, d1(lambda k: k[name].v), atol=1e-7, err_msg=name)
        dR = d1(lambda k: k[name].R)
        W = dR @ np.swapaxes(fr.R, 1, 2)  # [omega_lab]
        omega = np.stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]], axis=1)
        np.testing.assert_allclose(fr.omega, omega, atol=1e-8, err_msg=name)
        np.testing.assert_allclose(fr.alpha, d1(lambda k: k[name].omega), atol=1e-7, err_msg=name)
        # R stays a rotation
        np.testing.assert_allclose(fr.R @ np.swapaxes(fr.R, 1, 2), np.broadcast_to(np.eye(3), fr.R.shape), atol=1e-13)


def test_gait_is_plausible(trial):
    """Speed ~1.2 m/s, textbook angle ranges, stance foot on the floor, swing foot above it."""
    p = trial.params
    speed = trial.path.x.slope
    assert 1.1 < speed < 1.3
    deg = {k: np.rad2deg(v(trial.time)) for k, v in trial.curves.items()}
    assert 25 < deg["R_hip_flex"].max() < 35 and -15 < deg["R_hip_flex"].min() < -5
    assert 55 < deg["R_knee_flex"].max() < 65 and 0 < deg["R_knee_flex"].min() < 8
    assert 8 < deg["R_ankle_dorsi"].max() < 16 and -12 > deg["R_ankle_dorsi"].min() > -25
    sole = np.column_stack([S.SOLE_X, np.zeros_like(S.SOLE_X), np.full_like(S.SOLE_X, -p.ankle_height)])
    for side in S.SIDES:
        foot = trial.kinematics[f"{side}_foot"]
        lowest = np.min(np.stack([foot.point(r)[0][:, 2] for r in sole], axis=1), axis=1)
        stance = trial.contact[side] > 0
        assert np.abs(lowest[stance]).max() < 0.008  # stance foot within 8 mm of the floor
        assert lowest[~stance].min() > 0.0  # no swing-foot penetration
        assert lowest[~stance].max() > 0.03  # the foot is lifted in swing


def test_bad_parameters_and_usage_are_reported(capsys):
    from gaitid.core.errors import GaitIDError

    with pytest.raises(GaitIDError, match="mass, height and stride_time must be positive"):
        S.GaitParams(mass=-70.0)
    with pytest.raises(GaitIDError, match="after the trial's last frame"):
        S.GaitParams(n_frames=200)
    with pytest.raises(GaitIDError, match="stance_fraction"):
        S.GaitParams(stance_fraction=0.5)
    assert S.main([]) == 2
    assert "usage: python -m gaitid.validation.synthetic OUTDIR" in capsys.readouterr().err


def test_davis_hip_centre_matches_model_module():
    from gaitid.model.joint_centres import davis_hip_centre

    p = S.GaitParams()
    for side, name in (("L", "left"), ("R", "right")):
        ref = davis_hip_centre(p.leg_length, p.inter_asis, p.marker_diameter / 2, name)
        np.testing.assert_allclose(S.davis_hjc(p, side), ref, atol=1e-12)


# ------------------------------------------------------------------ ground truth


def test_truth_equals_plain_newton_euler(trial):
    for side in S.SIDES:
        ne = S.newton_euler_leg(trial.params, trial.kinematics, trial.grf[side], side)
        for j in S.JOINTS:
            np.testing.assert_allclose(trial.truth[side].force_lab[j], ne.force_lab[j], rtol=0, atol=1e-9)
            np.testing.assert_allclose(trial.truth[side].moment_lab[j], ne.moment_lab[j], rtol=0, atol=1e-9)


def test_truth_equals_block_solver(trial):
    """gaitid.dynamics.inverse_dynamics (seed 000) fed the exact kinematics gives the truth."""
    from gaitid.dynamics import ExternalLoad, inverse_dynamics

    for side in S.SIDES:
        chain, motion = S.segment_motions(trial.params, trial.kinematics, side)
        g = trial.grf[side]
        load = ExternalLoad(0, g.force, np.where(np.isnan(g.cop), 0.0, g.cop), g.free_moment)
        for method in ("recursive", "block"):
            out = inverse_dynamics(chain, motion, [load], gravity_lab=S.GRAVITY_LAB, frame="lab", method=method,
                                   contributions=False)
            for k, j in enumerate(S.JOINTS):
                np.testing.assert_allclose(out.force_lab[k], trial.truth[side].force_lab[j], atol=1e-9)
                np.testing.assert_allclose(out.moment[k], trial.truth[side].moment_lab[j], atol=1e-9)


def test_truth_magnitudes_are_gait_like(trial):
    """Sagittal peaks (N.m/kg) in the textbook range; internal plantarflexor moment in push-off."""
    m = trial.params.mass
    for side in S.SIDES:
        ankle = trial.moment_distal(side, "ankle")[:, 1] / m  # +Y foot = plantarflexor
        knee = trial.moment_distal(side, "knee")[:, 1] / m
        hip = trial.moment_distal(side, "hip")[:, 1] / m
        assert 1.0 < ankle.max() < 1.8
        assert 0.5 < np.abs(knee).max() < 2.0
        assert 0.5 < np.abs(hip).max() < 2.0
        ph = trial.grf[side].phase
        loading, push_off = (ph > 0.1) & (ph < 0.25), (ph > 0.7) & (ph < 0.85)
        assert knee[loading].max() < 0 and knee[loading].min() < -0.5  # knee extensor at loading response
        assert ankle[(ph > 0.05) & (ph < 0.2)].max() < 0  # dorsiflexors lower the foot
        assert ankle[push_off].min() > 0.9  # plantarflexors push off
        assert hip[(ph > 0.05) & (ph < 0.15)].min() > 0.3  # hip extensor early in stance
        assert hip[push_off].max() < -0.5  # hip flexor in late stance
        stance = trial.contact[side] > 0
        # in swing the ankle only carries the foot: a few N.m
        assert np.abs(trial.truth[side].moment_lab["ankle"][~stance]).max() < 5.0


# ------------------------------------------------------------------ the files


def test_sample_files_regenerate_bit_for_bit(tmp_path):
    written = S.write_sample(tmp_path)
    assert [p.name for p in written] == list(S.SAMPLE_FILES)
    for p in written:
        assert filecmp.cmp(p, SAMPLE / p.name, shallow=False), f"{p.name} differs from the committed sample"
    assert (SAMPLE / "walk_synthetic.c3d").stat().st_size < 2_000_000


def test_c3d_markers_parameters_and_events(trial, walk_c3d):
    c = walk_c3d
    P = c["parameters"]
    labels = list(P["POINT"]["LABELS"]["value"])
    assert labels == list(S.MARKERS) and P["POINT"]["UNITS"]["value"][0] == "mm"
    assert P["POINT"]["RATE"]["value"][0] == 100 and P["ANALOG"]["RATE"]["value"][0] == 1000
    pts = c["data"]["points"][:3] / 1000.0
    for i, m in enumerate(labels):
        np.testing.assert_allclose(pts[:, i, :].T, trial.markers[m], atol=1e-6, rtol=0)
    proc = {k: float(v["value"][0]) for k, v in P["PROCESSING"].items() if k != "__METADATA__"}
    assert proc == {"Bodymass": 72.0, "Height": 1750.0, "LLegLength": 940.0, "RLegLength": 940.0,
                    "LKneeWidth": 105.0, "RKneeWidth": 105.0, "LAnkleWidth": 70.0, "RAnkleWidth": 70.0,
                    "InterAsisDistance": 250.0, "MarkerDiameter": 14.0}
    assert list(P["TRIAL"]["ACTUAL_START_FIELD"]["value"]) == [1, 0]
    times = P["EVENT"]["TIMES"]["value"][1]
    ev = sorted(zip(P["EVENT"]["CONTEXTS"]["value"], P["EVENT"]["LABELS"]["value"], np.round(times, 4)))
    # every contact: right strikes 0.1 + k, offs 0.7 + k; left half a stride later (stride 1 s, stance 60 %)
    expected = []
    for ctx, t0 in (("Right", 0.1), ("Left", 0.6)):
        for k in range(-1, 4):
            for lab, dt in (("Foot Strike", 0.0), ("Foot Off", 0.6)):
                t = round(t0 + k + dt, 4)
                if 0 <= t <= 3.79:
                    expected.append((ctx, lab, t))
    assert ev == sorted(expected)
    assert len(ev) == 16


def test_force_plates_decode_to_the_exact_ground_reaction(trial, walk_c3d):
    """ezc3d's plate equations recover force, COP and free moment; the right plate first."""
    bw = trial.params.mass * S.G
    plates = walk_c3d["data"]["platform"]
    assert len(plates) == 2
    for pl, ref in zip(plates, trial.plates):
        assert pl["unit_force"] == "N" and pl["unit_moment"] == "Nmm"
        F = pl["force"].T
        np.testing.assert_allclose(F, ref.grf.force, rtol=0, atol=1e-6 * np.abs(ref.grf.force).max())
        on = ref.grf.force[:, 2] > 20.0
        np.testing.assert_allclose(pl["center_of_pressure"].T[on] / 1000, ref.grf.cop[on], atol=1e-6)
        np.testing.assert_allclose(pl["Tz"].T[on] / 1000, ref.grf.free_moment[on], atol=1e-5)
        assert 1.0 < F[:, 2].max() / bw < 1.3
        # the COP stays on the plate surface
        lo, hi = ref.corners.min(axis=0), ref.corners.max(axis=0)
        cop = ref.grf.cop[on]
        assert np.all((cop[:, :2] > lo[:2]) & (cop[:, :2] < hi[:2]))
    assert [pl.side for pl in trial.plates] == ["R", "L"]


def test_events_are_where_the_plates_say(trial, walk_c3d):
    P = walk_c3d["parameters"]["EVENT"]
    events = list(zip(P["CONTEXTS"]["value"], P["LABELS"]["value"], P["TIMES"]["value"][1]))
    rate = 1000.0
    for pl, side in zip(walk_c3d["data"]["platform"], ("Right", "Left")):
        loaded = np.flatnonzero(pl["force"][2] > 20.0)
        on, off = loaded[0] / rate, loaded[-1] / rate
        strikes = [t for c, lab, t in events if c == side and lab == "Foot Strike"]
        offs = [t for c, lab, t in events if c == side and lab == "Foot Off"]
        assert min(abs(np.array(strikes) - on)) <= 0.01
        assert min(abs(np.array(offs) - off)) <= 0.01


def test_ground_reaction_balances_body_weight_over_strides(trial):
    """Steady walking: over whole strides the feet's vertical impulse is body weight x time, the
    horizontal impulses (nearly) vanish; the upper body (not modelled) would oscillate by a few cm only."""
    p, sp = trial.params, trial.segments
    F = trial.grf["R"].force + trial.grf["L"].force
    w = slice(10, 310)  # three strides, 100 Hz
    bw = p.mass * S.G
    mean = F[w].mean(axis=0) / bw
    assert mean[2] == pytest.approx(1.0, abs=1e-3)
    assert abs(mean[0]) < 0.002  # braking and propulsion balance
    assert abs(mean[1]) < 1e-9  # the feet's medial forces cancel
    legs = 2 * sum(sp[s]["mass"] for s in S.SEGMENTS)
    ma = sum(sp[seg]["mass"] * trial.kinematics[f"{side}_{seg}"].point(sp[seg]["com_seg"])[2]
             for side in S.SIDES for seg in S.SEGMENTS)
    a_upper = (F + p.mass * S.GRAVITY_LAB - ma) / (p.mass - legs)
    v = np.cumsum(a_upper[w], axis=0) / p.point_rate
    x = np.cumsum(v - v.mean(axis=0), axis=0) / p.point_rate
    assert np.all(np.ptp(x, axis=0) < 0.06)


def test_cop_is_under_the_foot(trial):
    """COP between the heel and toe markers' floor projections (2 cm margin) and near the foot's line."""
    for side in S.SIDES:
        g = trial.grf[side]
        on = g.force[:, 2] > 20.0
        heel, toe = trial.markers[f"{side}HEE"][on], trial.markers[f"{side}TOE"][on]
        axis = _unit((toe - heel)[:, :2])
        along = np.sum((g.cop[on, :2] - heel[:, :2]) * axis, axis=1)
        length = np.linalg.norm((toe - heel)[:, :2], axis=1)
        assert np.all(along > -0.02) and np.all(along < length + 0.04)
        d = g.cop[on, :2] - heel[:, :2]
        across = np.abs(axis[:, 0] * d[:, 1] - axis[:, 1] * d[:, 0])
        assert across.max() < 0.03


def test_truth_csv_matches_the_trial(trial):
    df = pd.read_csv(SAMPLE / "walk_synthetic_truth.csv")
    assert len(df) == trial.params.n_frames and df["frame"].iloc[0] == 1
    np.testing.assert_allclose(df["time_s"], trial.time, atol=1e-12)
    for side in S.SIDES:
        for j in S.JOINTS:
            for k, ax in enumerate("xyz"):
                np.testing.assert_allclose(df[f"{side}_{j}_moment_lab_{ax}_Nm"], trial.truth[side].moment_lab[j][:, k],
                                           rtol=1e-9, atol=1e-9)
                np.testing.assert_allclose(df[f"{side}_{j}_moment_{S.DISTAL[j]}_{ax}_Nm"],
                                           trial.moment_distal(side, j)[:, k], rtol=1e-9, atol=1e-9)
        assert set(df[f"{side}_contact"]) == {0, 1, 2}


# ------------------------------------------------------------------ Plug-in Gait reconstruction


def _pig_frames(markers: dict, proc: dict, p: S.GaitParams):
    """Segment frames and joint centres from markers by Plug-in Gait's rules (independent of the generator)."""
    from gaitid.model.joint_centres import chord_joint_centre, davis_hip_centre

    lasi, rasi = markers["LASI"], markers["RASI"]
    sacr = (markers["LPSI"] + markers["RPSI"]) / 2
    origin = (lasi + rasi) / 2
    y = _unit(lasi - rasi)
    x = _unit((origin - sacr) - y * np.sum((origin - sacr) * y, axis=1, keepdims=True))
    R_pel = np.stack([x, y, np.cross(x, y)], axis=2)
    out = {"pelvis": (origin, R_pel)}
    md = proc["MarkerDiameter"] / 1000
    for side, name in (("L", "left"), ("R", "right")):
        s = S.SIDE_SIGN[side]
        hjc = origin + R_pel @ davis_hip_centre(proc[f"{side}LegLength"] / 1000, proc["InterAsisDistance"] / 1000,
                                                md / 2, name)
        kjc = chord_joint_centre(markers[f"{side}THI"], hjc, markers[f"{side}KNE"],
                                 (proc[f"{side}KneeWidth"] / 1000 + md) / 2)
        ajc = chord_joint_centre(markers[f"{side}TIB"], kjc, markers[f"{side}ANK"],
                                 (proc[f"{side}AnkleWidth"] / 1000 + md) / 2)
        for seg, prox, dist, lat in (("thigh", hjc, kjc, markers[f"{side}KNE"]), ("shank", kjc, ajc, markers[f"{side}ANK"])):
            z = _unit(prox - dist)
            yy = _unit(s * (lat - dist))
            yy = _unit(yy - z * np.sum(yy * z, axis=1, keepdims=True))
            out[f"{side}_{seg}"] = (prox, np.stack([np.cross(yy, z), yy, z], axis=2))
        # foot: triad from AJC, TOE, HEE with their known offsets in the foot frame (y = 0 plane)
        toe, hee = markers[f"{side}TOE"], markers[f"{side}HEE"]
        e1 = _unit(toe - hee)
        e2 = _unit(np.cross(toe - ajc, hee - ajc))
        L = np.stack([e1, e2, np.cross(e1, e2)], axis=2)
        l1 = _unit(S.FOOT_TOE - S.FOOT_HEE)
        l2 = _unit(np.cross(S.FOOT_TOE, S.FOOT_HEE))
        Lc = np.stack([l1, l2, np.cross(l1, l2)], axis=1)
        out[f"{side}_foot"] = (ajc, L @ Lc.T)
    return out


def test_plugin_gait_rules_reconstruct_the_true_frames(trial, walk_c3d):
    P = walk_c3d["parameters"]
    proc = {k: float(v["value"][0]) for k, v in P["PROCESSING"].items() if k != "__METADATA__"}
    pts = walk_c3d["data"]["points"][:3] / 1000.0
    markers = {m: pts[:, i, :].T for i, m in enumerate(P["POINT"]["LABELS"]["value"])}
    frames = _pig_frames(markers, proc, trial.params)
    for name, (origin, R) in frames.items():
        fr = trial.kinematics[name]
        np.testing.assert_allclose(origin, fr.o, atol=2e-6, err_msg=name)  # float32 storage of mm
        np.testing.assert_allclose(R, fr.R, atol=2e-5, err_msg=name)


def test_static_trial_stands_still_with_the_same_markers():
    c = ezc3d.c3d(str(SAMPLE / "static_synthetic.c3d"))
    labels = list(c["parameters"]["POINT"]["LABELS"]["value"])
    assert labels == list(S.MARKERS)
    pts = c["data"]["points"][:3] / 1000.0
    assert np.ptp(pts, axis=2).max() < 1e-9  # nothing moves
    heel_z = pts[2, labels.index("RHEE"), 0]
    ank = pts[:, labels.index("RANK"), 0]
    assert heel_z == pytest.approx(0.08 - 0.045, abs=1e-6)  # foot flat: sole on the floor
    assert ank[2] == pytest.approx(0.08, abs=1e-6)
    proc = c["parameters"]["PROCESSING"]
    assert float(proc["Bodymass"]["value"][0]) == 72.0


def test_other_subjects_and_cadences_keep_the_truth_exact():
    """A lighter subject walking slower (stride 1.1 s): the truth still equals plain Newton-Euler,
    the plates still decode, the vertical impulse still balances body weight."""
    p = S.GaitParams(mass=60.0, stride_time=1.1, n_frames=420)
    tr = S.make_gait_trial(p)
    for side in S.SIDES:
        ne = S.newton_euler_leg(p, tr.kinematics, tr.grf[side], side)
        for j in S.JOINTS:
            np.testing.assert_allclose(tr.truth[side].moment_lab[j], ne.moment_lab[j], atol=1e-9)
    assert [e[2] for e in tr.events if e[:2] == ("Foot Strike", "Right")] == pytest.approx([0.1, 1.2, 2.3, 3.4])
    w = slice(10, 10 + 330)  # three strides
    F = tr.grf["R"].force + tr.grf["L"].force
    assert F[w, 2].mean() / (60.0 * S.G) == pytest.approx(1.0, abs=1e-3)
    for pl in tr.plates:  # decode the channels with the C3D type-2 equations
        on = pl.grf.force[:, 2] > 20.0
        F, M_o = pl.analog[:, :3], pl.analog[:, 3:] / 1000.0
        M_c = M_o + np.cross(F, pl.origin / 1000.0)  # moment about the surface centre, plate frame
        with np.errstate(invalid="ignore", divide="ignore"):  # unloaded samples: 0/0
            cop_plate = np.column_stack([-M_c[:, 1] / F[:, 2], M_c[:, 0] / F[:, 2], np.zeros(len(F))])
        np.testing.assert_allclose((F @ pl.R.T)[on], pl.grf.force[on], atol=1e-9)
        np.testing.assert_allclose((cop_plate @ pl.R.T + pl.centre)[on], pl.grf.cop[on], atol=1e-9)
        assert on.sum() == pytest.approx(p.stance_fraction * p.stride_time * p.analog_rate, abs=10)


def test_heel_strike_has_an_impact(trial, walk_c3d):
    """The heel lands: the heel marker comes down faster than 0.1 m/s and is decelerated in the
    last 30 ms before each foot strike (an exact C2 pulse of ankle flexion that is zero in stance),
    so gaitid's kinematic detector (Zeni + impact refinement) finds the strikes within its 3-frame
    tolerance and the demo reports no disagreement."""
    from conftest import markers_for

    from gaitid.contacts import assign_contacts
    from gaitid.events import gait_events
    from gaitid.io.c3d import read_c3d
    from gaitid.validation.synthetic.fourier import HeelImpact

    h = HeelImpact(0.1, 1.0)
    t = np.linspace(-0.3, 2.3, 2601)
    eps = 1e-6
    np.testing.assert_allclose(h(t, 1), (h(t + eps) - h(t - eps)) / (2 * eps), atol=1e-6)
    # C2, not C3: at the pulse's ends the difference quotient of f' is off by f''' eps / 2 (about 3e-3)
    np.testing.assert_allclose(h(t, 2), (h(t + eps, 1) - h(t - eps, 1)) / (2 * eps), atol=1e-2)
    after = np.mod(t - 0.1, 1.0) <= 1.0 - h.window  # from each strike to the next pulse: nothing
    assert np.all(h(t[after]) == 0) and np.all(h(t[after], 1) == 0) and np.all(h(t[after], 2) == 0)
    p = trial.params
    for side, t0 in (("R", p.first_strike), ("L", p.first_strike + p.stride_time / 2)):
        ts = t0 + p.stride_time * np.arange(3) + 1.0
        tt = (ts[:, None] + np.linspace(-0.06, 0.0, 61)[None, :]).ravel()
        kin = S.body_kinematics(p, tt, trial.curves, trial.path)
        _, v, a = kin[f"{side}_foot"].point(S.FOOT_HEE)
        v, a = v[:, 2].reshape(3, 61), a[:, 2].reshape(3, 61)
        assert np.all(v[:, 30] < -0.1)  # 30 ms before: coming down
        assert np.all(a[:, 31:].max(axis=1) > 4.0)  # the last 30 ms: stopped (m/s^2, upwards)
    walk = read_c3d(SAMPLE / "walk_synthetic.c3d")
    markers = markers_for(walk)
    choice = gait_events(walk, assign_contacts(walk, markers), markers)
    assert choice.disagreements == 0, choice.describe()
    diff = choice.comparison.loc[choice.comparison.label == "Foot Strike", "frame_difference"]
    assert diff.abs().max() <= 1
