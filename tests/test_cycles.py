"""Gait cycles, time normalisation, spatio-temporal and kinetic parameters, summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import markers_for
from test_events import _read, make_walk, truth_events

from gaitid import contacts as P
from gaitid.core.errors import DataError
from gaitid.core.trial import Event
from gaitid.cycles import curves as C
from gaitid.cycles import parameters as PM
from gaitid.events import file_events


def _walk_cycles(direction=0.0, plates=()):
    trial, truth = make_walk(direction_deg=direction, plates=plates)
    evs = truth_events(truth, trial.point_rate)
    contacts = P.assign_contacts(trial, markers_for(trial)) if plates else None
    return trial, truth, evs, C.gait_cycles(evs, contacts)


def test_cycles_from_synthetic_events():
    plates = [{"centre": ("Right", 1), "stances": [("Right", 1, "all")]},
              {"centre": ("Left", 1), "shift": 0.16, "stances": [("Left", 1, "all")]}]
    trial, truth, evs, cyc = _walk_cycles(plates=plates)
    # strikes R 0.13, 1.23, 2.33 and L 0.68, 1.78, 2.88 in a 3.3 s trial: 2 right and 2 left cycles
    assert [(c.side, round(c.start_time, 6), round(c.end_time, 6)) for c in cyc] == [
        ("Right", 0.13, 1.23), ("Left", 0.68, 1.78), ("Right", 1.23, 2.33), ("Left", 1.78, 2.88)]
    for c in cyc:
        assert c.foot_off_pct == pytest.approx(60.0)
        assert c.percent(c.opposite_off_time) == pytest.approx(10.0)
        assert c.percent(c.opposite_strike_time) == pytest.approx(50.0)
    kin = {(c.side, round(c.start_time, 2)): (c.kinetic, c.reason) for c in cyc}
    assert kin[("Right", 1.23)] == (True, "")
    assert kin[("Left", 1.78)][0] is False and "partly off" in kin[("Left", 1.78)][1]
    assert kin[("Right", 0.13)] == (False, "stance not on a force plate")
    table = C.cycles_table(cyc)
    assert table.kinetic.tolist() == [False, False, True, False] and table.plates.tolist() == ["", "", "1", "2"]
    np.testing.assert_allclose(table[["foot_off_pct", "opposite_off_pct", "opposite_strike_pct"]], [[60, 10, 50]] * 4)


def test_cycle_without_its_foot_off_is_skipped():
    ev = [Event("Foot Strike", "Left", 1.0, 101), Event("Foot Strike", "Left", 2.1, 211),
          Event("Foot Off", "Left", 2.7, 271), Event("Foot Strike", "Left", 3.2, 321)]
    cyc = C.gait_cycles(ev)
    assert [(c.start_time, c.end_time, c.index) for c in cyc] == [(2.1, 3.2, 1)]  # numbered from 1
    assert np.isnan(cyc[0].opposite_off_time) and cyc[0].reason == "no plate contacts given"


def test_normalise_is_exact_for_linear_curves():
    t = np.arange(0, 2.0, 0.01)
    x = np.column_stack([3.0 * t - 1.0, -2.0 * t, np.full_like(t, 7.0)])
    got = C.time_normalise(x, t, 0.333, 1.271)
    tt = np.linspace(0.333, 1.271, 101)
    np.testing.assert_allclose(got, np.column_stack([3 * tt - 1, -2 * tt, np.full_like(tt, 7.0)]), atol=1e-12)
    assert np.isnan(C.time_normalise(x[:, 0], t, 1.5, 2.5)[-1])  # beyond the data
    x[50, 0] = np.nan
    assert np.isnan(C.time_normalise(x[:, 0], t, 0.0, 1.0)).sum() == 1  # the grid point on the NaN sample
    assert np.isnan(C.time_normalise(x[:, 0], t, 0.005, 1.005)).sum() == 2  # the two grid points beside it
    with pytest.raises(DataError, match="not after"):
        C.time_normalise(x, t, 1.0, 1.0)


def test_cycle_curves_long_table():
    trial, truth, evs, cyc = _walk_cycles()
    t = trial.time
    curves = {"Left": {"Lin": np.column_stack([t, 2 * t, 3 * t])}, "Right": {"Lin": np.column_stack([t, 2 * t, 3 * t]),
                                                                             "Scalar": t ** 2}}
    df = C.cycle_curves(curves, t, cyc, units={"Lin": "m"})
    assert list(df.columns) == ["side", "cycle", "kinetic", "variable", "component", "percent", "value", "unit"]
    # 2 left cycles x 3 components + 2 right cycles x 4 curves, 101 points each
    assert len(df) == (2 * 3 + 2 * 4) * 101
    c = cyc[0]
    assert c.index == 1 and sorted(set(df.cycle)) == [1, 2]  # cycles numbered from 1
    row = df[(df.side == c.side) & (df.cycle == 1) & (df.variable == "Lin") & (df.component == "Y")]
    np.testing.assert_allclose(row.value, 2 * np.linspace(c.start_time, c.end_time, 101), atol=1e-12)
    assert set(df[df.variable == "Lin"].unit) == {"m"} and set(df[df.variable == "Scalar"].component) == {""}
    st = C.cycle_curves(curves, t, cyc, stance_only=True)
    row = st[(st.side == c.side) & (st.cycle == 1) & (st.variable == "Lin") & (st.component == "X")]
    np.testing.assert_allclose(row.value, np.linspace(c.start_time, c.foot_off_time, 101), atol=1e-12)


@pytest.mark.parametrize("direction", [0.0, 200.0])
def test_spatiotemporal_parameters_of_the_synthetic_walk(direction):
    trial, truth, evs, cyc = _walk_cycles(direction)
    df = PM.spatiotemporal_parameters(trial, cyc, markers_for(trial))
    v, T = 1.2, 1.1
    expected = {"stride_time": T, "cadence": 120 / T, "stride_length": v * T, "walking_speed": v,
                "step_time": T / 2, "step_length": v * T / 2, "stance": 60.0, "swing": 40.0,
                "opposite_foot_off": 10.0, "opposite_foot_strike": 50.0, "double_support": 20.0,
                "single_support": 40.0}
    for name, value in expected.items():
        got = df[df.parameter == name].value.to_numpy()
        assert got.size == 4
        np.testing.assert_allclose(got, value, atol=1e-9, err_msg=name)
    assert set(df.unit) == {"s", "steps/min", "m", "m/s", "%"}


def _bumps(p, spec):
    return sum(a * np.exp(-(((p - c) / w) ** 2)) for a, c, w in spec)


def test_power_bursts_on_constructed_curves():
    # one cycle 0..1 s sampled at 100 Hz: the normalised grid is the sample grid
    from gaitid.cycles.clinical import clinical_table

    t = np.linspace(0.0, 2.0, 201)
    p = 100 * t
    cyc = [C.Cycle("Left", 0, 0.0, 0.6, 1.0, kinetic=True)]
    ankle = _bumps(p, [(3.0, 52, 4), (-0.5, 25, 6)])
    knee = _bumps(p, [(-0.6, 8, 3), (0.4, 20, 3), (-0.9, 58, 3), (-1.2, 92, 3)])
    hip = _bumps(p, [(0.5, 12, 3), (-0.7, 40, 4), (1.1, 64, 4)])
    hip3 = np.column_stack([np.zeros_like(p), np.zeros_like(p), hip])  # PiG stores the power in Z
    curves = {"Left": {"AnklePower": ankle, "KneePower": knee, "HipPower": hip3}}
    units = {"AnklePower": "W/kg"}

    def bursts(curves, cyc):
        return clinical_table(C.cycle_curves(curves, t, cyc, units), C.cycles_table(cyc))

    got = bursts(curves, cyc).set_index("parameter")
    expected = {"A2": (3.0, 52), "K1": (-0.6, 8), "K2": (0.4, 20), "K3": (-0.9, 58), "K4": (-1.2, 92),
                "H1": (0.5, 12), "H2": (-0.7, 40), "H3": (1.1, 64)}
    for burst, (value, at) in expected.items():
        assert got.loc[burst, "value"] == pytest.approx(value, abs=2e-3), burst
        assert got.loc[burst, "percent"] == at, burst
    assert got.loc["A2", "unit"] == "W/kg"
    # no positive ankle power in the A2 window: no A2 burst (NaN), and non-kinetic cycles are skipped
    curves["Left"]["AnklePower"] = -np.abs(ankle)
    df2 = bursts(curves, cyc).set_index("parameter")
    assert np.isnan(df2.loc["A2", "value"]) and np.isnan(df2.loc["A2", "percent"])
    cyc[0].kinetic = False
    assert bursts(curves, cyc).empty


def test_summarise_mean_and_sd():
    rows = [dict(side=s, cycle=k, parameter="cadence", variable="", component="", value=v, unit="steps/min",
                 percent=np.nan) for s, k, v in (("Left", 0, 100.0), ("Left", 1, 104.0), ("Right", 0, 110.0))]
    df = pd.DataFrame(rows)
    per = PM.summarise(df).set_index("side")
    assert per.loc["Left", "mean"] == 102.0 and per.loc["Left", "sd"] == pytest.approx(np.std([100, 104], ddof=1))
    assert per.loc["Left", "n"] == 2 and per.loc["Right", "n"] == 1 and np.isnan(per.loc["Right", "sd"])
    pooled = PM.summarise(df, per_side=False).iloc[0]
    assert pooled["mean"] == pytest.approx(314 / 3) and pooled["sd"] == pytest.approx(np.std([100, 104, 110], ddof=1))
    trial, truth, evs, cyc = _walk_cycles()
    curves = C.cycle_curves({"Left": {"x": trial.time}, "Right": {"x": trial.time}}, trial.time, cyc)
    s = PM.summarise(curves)
    assert len(s) == 2 * 101 and (s.n == 2).all()
    with pytest.raises(DataError):
        PM.summarise(df.iloc[:0])


# --------------------------------------------------------------------------- real data


def _vicon_analysis(path):
    import ezc3d

    a = ezc3d.c3d(str(path))["parameters"]["ANALYSIS"]
    return {(c, n): (float(v), u) for c, n, v, u in zip(a["CONTEXTS"]["value"], a["NAMES"]["value"],
                                                        a["VALUES"]["value"], a["UNITS"]["value"])}


@pytest.mark.realdata
@pytest.mark.parametrize("rel", ["btkdata/PiG_Motion-FlatFoot-Full.c3d", "python-gaitalytics/test_small.c3d"])
def test_real_spatiotemporal_against_vicon_analysis(rel):
    """Vicon Nexus stores its gait-cycle parameters (ANALYSIS group) for the first cycle of each
    side with all four events inside; ours agree: times and % exactly, lengths within 1 cm."""
    from conftest import realdata_path

    ref = _vicon_analysis(realdata_path(rel))
    tr = _read(rel)
    cyc = [c for c in C.gait_cycles(file_events(tr))
           if np.isfinite(c.opposite_off_time) and np.isfinite(c.opposite_strike_time)]
    df = PM.spatiotemporal_parameters(tr, cyc, markers_for(tr))
    names = {"Cadence": "cadence", "Walking Speed": "walking_speed", "Stride Time": "stride_time",
             "Step Time": "step_time", "Opposite Foot Off": "opposite_foot_off",
             "Opposite Foot Contact": "opposite_foot_strike", "Foot Off": "stance", "Single Support": "single_support",
             "Double Support": "double_support", "Stride Length": "stride_length", "Step Length": "step_length"}
    for side in ("Left", "Right"):
        first = min(c.index for c in cyc if c.side == side)
        ours = df[(df.side == side) & (df.cycle == first)].set_index("parameter")
        stride = ours.loc["stride_time", "value"]
        for vicon, name in names.items():
            value, unit = ref[(side, vicon)]
            got = ours.loc[name, "value"]
            if unit == "s" and name.endswith("support"):
                got = got * stride / 100.0  # older Nexus stores the support phases in s
            tol = 0.01 if unit in ("m", "m/s") else 1e-3 * max(1.0, abs(value))
            assert got == pytest.approx(value, abs=tol), (side, vicon, got, value)


@pytest.mark.realdata
def test_real_kinetic_parameters_from_plug_in_gait_outputs():
    """HC030A05 (child, 1.05 m/s): both stances on valid plates; the PiG power bursts come out
    in the order and at the timings the gait literature gives (Winter 1991)."""
    tr = _read("biomechzoo/HC030A05.c3d")
    cyc = C.gait_cycles(file_events(tr), P.assign_contacts(tr, markers_for(tr)))
    assert [(c.side, c.kinetic) for c in cyc] == [("Right", True), ("Left", True)]
    from gaitid.cycles.clinical import clinical_table

    curves, units = C.model_output_curves(tr)
    curves_df = C.cycle_curves(curves, tr.time, cyc, units)
    df = clinical_table(curves_df, C.cycles_table(cyc), convention="external")  # Plug-in Gait's description
    for side in ("Left", "Right"):
        b = df[df.side == side].set_index("parameter")
        assert 2.0 < b.loc["A2", "value"] < 5.0 and 45 <= b.loc["A2", "percent"] <= 62
        assert b.loc["A2", "unit"] == "W/kg"
        assert b.loc["K1", "percent"] < b.loc["K2", "percent"] < b.loc["K3", "percent"] < b.loc["K4", "percent"]
        assert b.loc["H2", "percent"] < b.loc["H3", "percent"] and 55 <= b.loc["H3", "percent"] <= 75
        assert b.loc["K4", "percent"] >= 85
        # ankle plantarflexor moment peak (PiG X, N.m/kg) in late stance, as in the stored curve
        am = b.loc["ankle plantarflexor moment, late stance, peak"]
        assert 1.0 < am["value"] < 1.5 and 40 <= am["percent"] <= 55
    summary = PM.summarise(curves_df[curves_df.variable == "AnkleMoment"])
    assert len(summary) == 2 * 3 * 101 and summary.n.max() == 1 and (summary.n == 1).mean() > 0.9


def test_a_cycle_the_markers_do_not_cover_is_marked_and_not_kinetic():
    """The sample walk with the right-side markers (pelvis included) missing over frames 173-206
    (34 frames, beyond the 10-frame spline): the right thigh, shank and foot have no marker left, so
    the cycle from 1.1 to 2.1 s (Right) has no pose there, 34 of its 101 frames; the pelvis keeps
    LASI and LPSI, its RASI and RPSI are filled (docs/gaps.md) and the left cycle from 1.6 to 2.6 s
    stays kinetic. With long gaps left NaN (max_fill_s=0, as before) both lose their pose."""
    import dataclasses

    from gaitid.core.resources import sample_data_dir
    from gaitid.io.c3d import read_c3d
    from gaitid.pipeline import process

    trial = read_c3d(sample_data_dir() / "walk_synthetic.c3d")
    clean = {(c.side, c.index): (c.kinetic, c.reason) for c in process(trial).cycles}
    assert clean[("Right", 2)] == (True, "") and clean[("Left", 2)] == (True, "")
    assert not any("markers missing" in r for _, r in clean.values())  # no false alarm
    markers = trial.markers.copy()
    markers[172:206, [i for i, label in enumerate(trial.marker_labels) if label.startswith("R")]] = np.nan
    why = "markers missing over 34 % of the cycle (frames 173-206: no segment pose)"
    gapped = process(dataclasses.replace(trial, markers=markers))
    got = {(c.side, c.index): (c.kinetic, c.reason) for c in gapped.cycles}
    assert got[("Right", 2)] == (False, why) and got[("Left", 2)] == (True, "")
    assert {f.label for f in gapped.fills.filled} == {"RASI", "RPSI"}
    assert {k: v for k, v in got.items() if k[1] != 2} == {k: v for k, v in clean.items() if k[1] != 2}
    unfilled = process(dataclasses.replace(trial, markers=markers), max_fill_s=0.0)
    got = {(c.side, c.index): (c.kinetic, c.reason) for c in unfilled.cycles}
    assert got[("Right", 2)] == (False, why) and got[("Left", 2)] == (False, why)
    assert {k: v for k, v in got.items() if k[1] != 2} == {k: v for k, v in clean.items() if k[1] != 2}
