"""Clinical parameters in their phase (gaitid.cycles.clinical): windows from the events, each parameter
against a value computed by hand from a constructed curve, the convention independence of the
moment parameters, and the signs on a real Plug-in Gait trial."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gaitid.core.errors import SettingsError
from gaitid.cycles.clinical import (
    PARAMETERS,
    PHASES,
    CycleEvents,
    clinical_parameters,
    clinical_table,
    curve_arrays,
    phase_windows,
    result_clinical_parameters,
)

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"
PCT = np.linspace(0.0, 100.0, 101)

# foot off 62 %, opposite foot off 10 %, opposite foot strike 48 %: mid single support 29 %
EVENTS = CycleEvents(foot_off=62.0, opposite_off=10.0, opposite_strike=48.0, start_time=2.0, end_time=3.1)
# the windows worked out by hand from those events (Perry's phases; the burst windows of parameters.BURSTS)
WINDOWS = {
    "loading_response": (0, 10), "mid_stance": (10, 29), "terminal_stance": (29, 48), "pre_swing": (48, 62),
    "early_stance": (0, 29), "late_stance": (29, 62), "first_half_stance": (0, 31), "second_half_stance": (31, 62),
    "stance": (0, 62), "initial_swing": (62, 62 + 38 / 3), "mid_swing": (62 + 38 / 3, 62 + 76 / 3),
    "terminal_swing": (62 + 76 / 3, 100), "swing": (62, 100), "cycle": (0, 100), "initial_contact": (0, 0),
    "foot_off": (62, 62), "A2_window": (31, 67), "K1_window": (0, 18.6), "K2_window": (9.3, 37.2),
    "K3_window": (43.4, 71.5), "K4_window": (81, 100), "H1_window": (0, 31), "H2_window": (18.6, 62),
    "H3_window": (46.5, 81),
}


def bump(centre: float, height: float, width: float = 1.5) -> np.ndarray:
    return height * np.exp(-(((PCT - centre) / width) ** 2))


def test_phase_windows_from_the_events():
    got = phase_windows(EVENTS)
    assert set(got) == set(WINDOWS) == set(PHASES)
    for name, (lo, hi) in WINDOWS.items():
        assert got[name][0][0] == pytest.approx(lo) and got[name][1][0] == pytest.approx(hi), name


def _one(curves, convention="internal", events=EVENTS, **kw) -> pd.DataFrame:
    return clinical_parameters(curves, events, convention=convention, point_rate=100.0, **kw).set_index("parameter")


def _as_curve(defn, named: np.ndarray, convention: str) -> np.ndarray:
    """The curve a Result would hold so that the named quantity is ``named`` (sign of the convention)."""
    s = defn.sign[0] if convention == "internal" else defn.sign[1]
    y = named / s
    if defn.component == "":
        return y
    out = np.zeros((PCT.size, 3))
    out[:, "XYZ".index(defn.component)] = y
    return out


PEAKS = [d for d in PARAMETERS if d.kind == "peak"]


@pytest.mark.parametrize("convention", ["internal", "external"])
@pytest.mark.parametrize("defn", PEAKS, ids=[d.name for d in PEAKS])
def test_each_peak_parameter_against_a_constructed_curve(defn, convention):
    """A bump of 0.7 in the middle of the window (on the 1 % grid), and a larger decoy (1.9) of the
    same direction outside it, where a whole-cycle search would find it: the parameter is 0.7 at
    the bump's centre, in either convention."""
    lo, hi = WINDOWS[defn.phase]
    centre = float(round((lo + hi) / 2))
    decoy = 90.0 if hi < 75 else 5.0
    named = bump(centre, 0.7) + bump(decoy, 1.9) - 0.05  # slightly negative elsewhere
    row = _one({defn.variable: _as_curve(defn, named, convention)}, convention).loc[defn.name]
    assert row["value"] == pytest.approx(0.7 - 0.05, abs=1e-9)
    assert row["percent"] == centre
    assert (row["window_start_pct"], row["window_end_pct"]) == pytest.approx((lo, hi))
    assert row["time_s"] == pytest.approx(2.0 + centre / 100 * 1.1)
    assert row["frame"] == round(row["time_s"] * 100) + 1
    assert row["note"] == ""
    assert row["phase"] == defn.phase


def test_knee_flexor_moment_whose_whole_cycle_maximum_is_in_swing():
    """The issue's case: the knee's internal flexor moment peaks at 0.42 N.m/kg at 93 % (terminal
    swing, hamstrings) and at 0.29 at 41 % in terminal stance; the stance parameter is 0.29 at 41 %,
    the whole-cycle maximum would have been the swing value."""
    knee = np.zeros((101, 3))
    knee[:, 0] = bump(41, 0.29, 4) + bump(93, 0.42, 3) + bump(15, -0.5, 5)  # internal: + flexor, - extensor
    assert PCT[np.argmax(knee[:, 0])] == 93  # what 'KneeMoment max' reports today
    for conv, curve in (("internal", knee), ("external", -knee)):
        t = _one({"KneeMoment": curve}, conv)
        assert t.loc["knee flexor moment, terminal stance, peak", "value"] == pytest.approx(0.29, abs=1e-9)
        assert t.loc["knee flexor moment, terminal stance, peak", "percent"] == 41
        assert t.loc["knee extensor moment, early stance, peak", "value"] == pytest.approx(0.5, abs=1e-9)
        assert t.loc["knee extensor moment, early stance, peak", "percent"] == 15


@pytest.mark.parametrize("name, variable, comp, curve, expected, at", [
    # linear knee angle 2 + 0.5 p: at initial contact 2; its range over the cycle 50
    ("knee flexion, initial contact", "KneeAngles", "X", 2 + 0.5 * PCT, 2.0, 0.0),
    ("knee flexion, range of motion", "KneeAngles", "X", 10 * np.sin(2 * np.pi * PCT / 100) + 3, 20.0, np.nan),
    # ankle angle -0.2 p (plantarflexing): at foot off (62 %) -12.4 deg = 12.4 deg plantarflexion
    ("ankle plantarflexion, foot off", "AnkleAngles", "X", -0.2 * PCT, 12.4, 62.0),
    # foot progression p - 40 over stance: mean of the 1 % samples 0..62 = 31 - 40 = -9 (out-toeing)
    ("foot progression, stance, mean", "FootProgressAngles", "Z", PCT - 40, -9.0, np.nan),
    ("pelvic tilt, range of motion", "PelvisAngles", "X", 12 + 2 * np.cos(4 * np.pi * PCT / 100), 4.0, np.nan),
    ("pelvic obliquity, range of motion", "PelvisAngles", "Y", 5 * np.sin(2 * np.pi * PCT / 100), 10.0, np.nan),
    ("pelvic rotation, range of motion", "PelvisAngles", "Z", -3 * np.sin(2 * np.pi * PCT / 100), 6.0, np.nan),
])
def test_instant_range_and_mean_parameters_by_hand(name, variable, comp, curve, expected, at):
    a = np.zeros((101, 3))
    a[:, "XYZ".index(comp)] = curve
    row = _one({variable: a}).loc[name]
    assert row["value"] == pytest.approx(expected, abs=1e-9)
    assert (np.isnan(row["percent"]) and np.isnan(at)) or row["percent"] == pytest.approx(at)


def test_value_at_an_event_between_grid_points_is_interpolated():
    ev = CycleEvents(foot_off=60.3, opposite_off=10.0, opposite_strike=50.0)
    a = np.zeros((101, 3))
    a[:, 0] = -0.2 * PCT
    row = _one({"AnkleAngles": a}, events=ev).loc["ankle plantarflexion, foot off"]
    assert row["value"] == pytest.approx(0.2 * 60.3) and row["percent"] == pytest.approx(60.3)


@pytest.mark.parametrize("burst", ["A2", "K1", "K2", "K3", "K4", "H1", "H2", "H3"])
def test_power_bursts_keep_their_definitions(burst):
    """A burst of the expected sign (±0.8 W/kg) in its window, one of the other sign beside it:
    the burst is the expected one; with only the other sign in the window it is NaN, with a note."""
    defn = next(d for d in PARAMETERS if d.name == burst)
    lo, hi = WINDOWS[defn.phase]
    centre = float(round((lo + hi) / 2))
    sign = 1.0 if defn.kind == "generation" else -1.0
    other = centre + 6 if centre + 6 <= hi else centre - 6
    power = bump(centre, sign * 0.8, 1.0) + bump(other, -sign * 2.0, 1.0)
    row = _one({defn.variable: power}).loc[burst]
    assert row["value"] == pytest.approx(sign * 0.8, abs=1e-9) and row["percent"] == centre
    row = _one({defn.variable: bump(centre, -sign * 0.8)}).loc[burst]
    assert np.isnan(row["value"]) and row["note"] == f"no {defn.kind} in the window"
    # a Plug-in Gait power stored as (n, 3) with the total in Z gives the same burst
    pig = np.zeros((101, 3))
    pig[:, 2] = power
    assert _one({defn.variable: pig}).loc[burst, "value"] == pytest.approx(sign * 0.8, abs=1e-9)


def test_missing_event_and_gap_give_nan_with_the_reason():
    knee = np.zeros((101, 3))
    knee[:, 0] = bump(40, 0.3, 3)
    no_opp = CycleEvents(foot_off=62.0)  # no opposite foot events in this cycle
    t = _one({"KneeMoment": knee, "KneeAngles": knee}, events=no_opp)
    row = t.loc["knee flexor moment, terminal stance, peak"]
    assert np.isnan(row["value"]) and "opposite foot off" in row["note"]
    assert np.isfinite(t.loc["knee flexion, swing, peak", "value"])  # needs foot off only
    gap = knee.copy()
    gap[35, 0] = np.nan
    row = _one({"KneeMoment": gap}).loc["knee flexor moment, terminal stance, peak"]
    assert np.isnan(row["value"]) and row["note"] == "curve has missing samples in the window"
    edge = np.zeros((101, 3))
    edge[:, 0] = 0.01 * PCT  # still rising at the end of terminal stance
    row = _one({"KneeMoment": edge}).loc["knee flexor moment, terminal stance, peak"]
    assert row["value"] == pytest.approx(0.48) and "edge" in row["note"]


def test_lab_frame_moments_are_not_anatomical_and_bad_convention_is_refused():
    knee = np.zeros((101, 3))
    t = clinical_parameters({"KneeMoment": knee}, EVENTS, frame="lab").set_index("parameter")
    assert t["value"].isna().all() and t["note"].str.contains("lab frame").all()
    with pytest.raises(SettingsError, match="convention"):
        clinical_parameters({"KneeMoment": knee}, EVENTS, convention="inside")


def test_batched_cycles_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    curves = rng.normal(size=(4, 101, 3)).cumsum(axis=1)
    ev = CycleEvents(foot_off=np.array([60.0, 61.5, 59.0, 63.0]), opposite_off=np.array([10.0, 11.0, 12.0, 9.5]),
                     opposite_strike=np.array([50.0, 49.0, 51.0, 48.5]))
    batch = clinical_parameters({"HipAngles": curves, "KneeMoment": curves}, ev, cycle=np.arange(4))
    for k in range(4):
        one = clinical_parameters({"HipAngles": curves[k], "KneeMoment": curves[k]},
                                  CycleEvents(ev.foot_off[k], ev.opposite_off[k], ev.opposite_strike[k]), cycle=k)
        pd.testing.assert_frame_equal(batch[batch["cycle"] == k].reset_index(drop=True), one)


# --------------------------------------------------------------------------- on processed trials


@pytest.fixture(scope="module")
def sample():
    from gaitid.pipeline import process

    return process(SAMPLE)


def test_sample_table_kinetic_rows_only_for_kinetic_cycles_and_the_swing_extreme_avoided(sample):
    t = result_clinical_parameters(sample)
    kinetic = {(c.side, c.index) for c in sample.cycles if c.kinetic}
    kin_rows = t[t["variable"].str.endswith(("Moment", "Power"))]
    assert set(zip(kin_rows["side"], kin_rows["cycle"])) == kinetic
    assert len(t[t["variable"].str.endswith("Angles")]) == 10 * len(sample.cycles)
    # the result's parameters table carries the same clinical parameters, bursts included
    bursts = sample.parameters[sample.parameters["parameter"].str.fullmatch(r"[AKH][1-4]")]
    merged = bursts.merge(t, on=["side", "cycle", "parameter"], suffixes=("_result", ""))
    assert len(merged) == 8 * len(kinetic)
    np.testing.assert_allclose(merged["value"], merged["value_result"], rtol=0, atol=1e-12, equal_nan=True)
    # the synthetic knee: its whole-cycle largest flexor (+X internal) moment lies in swing; the
    # terminal-stance peak does not, and is smaller
    c = sample.curves
    knee = c[(c["variable"] == "KneeMoment") & (c["component"] == "X") & c["kinetic"]]
    whole = knee.loc[knee.groupby(["side", "cycle"])["value"].idxmax()]
    assert (whole["percent"] > 90).all()
    stance = t[t["parameter"] == "knee flexor moment, terminal stance, peak"]
    assert ((stance["percent"] >= stance["window_start_pct"]) & (stance["percent"] <= stance["window_end_pct"])).all()
    assert (stance["value"].to_numpy() < whole["value"].to_numpy()).all()
    # the frame of each extremum is the sample's frame at that time
    row = t[(t["parameter"] == "knee flexion, initial contact")].iloc[0]
    cyc = next(c for c in sample.cycles if (c.side, c.index) == (row["side"], row["cycle"]))
    assert row["time_s"] == pytest.approx(cyc.start_time) and row["frame"] == round(cyc.start_time * 100) + 1


def test_sample_clinical_table_is_the_same_under_the_external_convention(sample):
    from gaitid.cycles.curves import cycles_table

    internal = result_clinical_parameters(sample)
    flipped = sample.curves.copy()
    moments = flipped["variable"].str.endswith("Moment")
    flipped.loc[moments, "value"] = -flipped.loc[moments, "value"]
    external = clinical_table(flipped, cycles_table(sample.cycles), convention="external", point_rate=100.0)
    pd.testing.assert_frame_equal(internal, external)


def test_curve_arrays_from_the_tidy_table(sample):
    arrays, units = curve_arrays(sample.curves, "Left", [1, 0], {"KneeAngles", "HipPower"})
    c = sample.curves
    knee = c[(c["side"] == "Left") & (c["cycle"] == 1) & (c["variable"] == "KneeAngles") & (c["component"] == "Y")]
    np.testing.assert_array_equal(arrays["KneeAngles"][0, :, 1], knee["value"].to_numpy())
    assert arrays["KneeAngles"].shape == (2, 101, 3) and arrays["HipPower"].shape == (2, 101)
    assert units == {"KneeAngles": "deg", "HipPower": "W/kg"}


@pytest.mark.realdata
def test_real_trial_signs_agree_with_plug_in_gait():
    """HC030A05: processed as Plug-in Gait does (external convention, plates unfiltered), the
    parameters equal those computed from the Plug-in Gait moments stored in the file to 0.06 N.m/kg
    and 2 % of the cycle. With gaitid's defaults (internal convention, plates filtered like the
    markers) the principal stance peaks are positive (the named moment is there) and of the
    expected size; the early-stance hip extensor peak is lower (no impact artefact,
    docs/conventions.md)."""
    from conftest import realdata_path

    from gaitid.core.settings import Settings
    from gaitid.cycles.curves import cycles_table, model_output_curves
    from gaitid.cycles.curves import time_normalise as normalise
    from gaitid.pipeline import process

    path = realdata_path("biomechzoo/HC030A05.c3d")
    r = process(path, settings=Settings.plugin_gait())
    assert r.settings.convention == "external"
    ours = result_clinical_parameters(r)
    pig, units = model_output_curves(r.trial)
    cycles = cycles_table(r.cycles)
    for side in ("Left", "Right"):
        cs = cycles[(cycles["side"] == side) & cycles["kinetic"]]
        arrays = {v: np.stack([normalise(pig[side][v], r.trial.time, c.start_time_s, c.end_time_s)
                               for c in cs.itertuples()]) for v in ("AnkleMoment", "KneeMoment", "HipMoment")}
        theirs = clinical_parameters(arrays, CycleEvents.from_table(cs), convention="external", side=side,
                                     cycle=cs["cycle"].to_numpy(), units=units).set_index(["cycle", "parameter"])
        theirs = theirs[theirs["value"].notna()]  # PiG leaves the first frames of stance empty (NaN)
        assert len(theirs) >= 6
        mine = ours[ours["side"] == side].set_index(["cycle", "parameter"]).loc[theirs.index]
        np.testing.assert_allclose(mine["value"], theirs["value"], atol=0.06)
        np.testing.assert_allclose(mine["percent"], theirs["percent"], atol=2.0)
    default = result_clinical_parameters(process(path))
    got = default.set_index(["side", "cycle", "parameter"])["value"]
    assert 0.9 < got.xs("ankle plantarflexor moment, late stance, peak", level=2).min() < 1.5
    for name in ("knee extensor moment, early stance, peak", "hip extensor moment, early stance, peak",
                 "hip abductor moment, first half of stance, peak", "hip flexor moment, late stance, peak",
                 "knee adduction moment (external), first half of stance, peak",
                 "knee flexor moment, terminal stance, peak", "ankle dorsiflexor moment, loading response, peak"):
        assert (got.xs(name, level=2) > 0.05).all(), (name, got.xs(name, level=2))
    pig_hip = ours.set_index(["side", "cycle", "parameter"])["value"].xs("hip extensor moment, early stance, peak",
                                                                         level=2)
    assert (got.xs("hip extensor moment, early stance, peak", level=2) < pig_hip).all()


@pytest.mark.parametrize("convention", ["internal", "external"])
def test_a_moment_absent_from_its_window_is_nan_with_the_reason_never_a_value_of_the_wrong_sign(convention):
    """The ankle moment is plantarflexor from initial contact on (-0.015 N.m/kg at 0 %, growing), so
    the loading response holds no dorsiflexor moment: the peak is absent (NaN, note naming it), not
    -0.015 at 0 %. The same for a knee that is flexor throughout early stance, and for a moment that
    is zero in its window. An angle's negative peak is a position and keeps its value."""
    s = 1.0 if convention == "internal" else -1.0  # internal: + dorsiflexor / flexor
    ankle = np.zeros((101, 3))
    ankle[:, 0] = s * (-0.015 - 0.02 * PCT)
    knee = np.zeros((101, 3))
    knee[:, 0] = s * (0.2 + bump(15, 0.3, 5))  # flexor throughout
    angles = np.zeros((101, 3))
    angles[:, 0] = -5.0 + bump(30, 2.0, 5)  # the ankle stays plantarflexed: dorsiflexion peak -3 deg
    t = _one({"AnkleMoment": ankle, "KneeMoment": knee, "AnkleAngles": angles}, convention)
    for name, what in (("ankle dorsiflexor moment, loading response, peak", "dorsiflexor moment in the loading"),
                       ("knee extensor moment, early stance, peak", "extensor moment in the early stance"),
                       ("knee extensor moment, pre-swing, peak", "extensor moment in the pre swing")):
        row = t.loc[name]
        assert np.isnan(row["value"]) and np.isnan(row["percent"]) and np.isnan(row["time_s"]), name
        assert row["note"].startswith(f"absent: no {what}"), row["note"]
    assert t.loc["ankle plantarflexor moment, late stance, peak", "value"] == pytest.approx(0.015 + 0.02 * 62)
    assert t.loc["knee flexor moment, terminal stance, peak", "value"] > 0.2
    zero = _one({"HipMoment": np.zeros((101, 3))}, convention).loc["hip extensor moment, early stance, peak"]
    assert np.isnan(zero["value"]) and zero["note"].startswith("absent: no extensor moment")
    assert t.loc["ankle dorsiflexion, stance, peak", "value"] == pytest.approx(-3.0, abs=1e-9)


@pytest.mark.realdata
def test_real_ankle_moment_without_a_dorsiflexor_moment_in_the_window_is_absent():
    """HC030A05's left ankle moment read from its mid-stance on (shifted 30 % earlier): the 'loading
    response' then holds only the real plantarflexor moment, and the dorsiflexor peak is absent,
    not the plantarflexor value at the window's edge; unshifted it is the real positive peak."""
    from conftest import realdata_path

    from gaitid.pipeline import process

    r = process(realdata_path("biomechzoo/HC030A05.c3d"))
    ankle = r.normalised["Left"]["AnkleMoment"][0]
    name = "ankle dorsiflexor moment, loading response, peak"
    assert _one({"AnkleMoment": ankle}).loc[name, "value"] > 0.05
    shifted = np.concatenate([ankle[30:], np.zeros((30, 3))])
    assert (shifted[:11, 0] < 0).all()  # plantarflexor (internal -) throughout the window 0-10 %
    row = _one({"AnkleMoment": shifted}).loc[name]
    assert np.isnan(row["value"]) and row["note"].startswith("absent: no dorsiflexor moment")
