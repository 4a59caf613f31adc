"""Normative data (gaitid.norms) and the scores against them (gaitid.cycles.scores): GVS/GPS/MAP and the
GDI against hand computations on constructed examples, norms built from perturbed copies of the
synthetic sample, the TOML / CSV / GCD readers, the CLI, and a smoke test on the real trials."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gaitid.core.errors import DataError, FileFormatError, SettingsError
from gaitid.cycles.scores import (
    GPS_VARIABLES,
    GDIBasis,
    gait_profile_score,
    gait_scores,
    gait_variable_scores,
    overall_gait_profile_score,
)
from gaitid.norms import (
    ControlTables,
    Norms,
    build_norms,
    control_from_result,
    read_gcd,
    read_norms,
    write_norms,
)

REPO = Path(__file__).resolve().parent.parent
SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"
P101 = np.linspace(0.0, 100.0, 101)
P51 = np.linspace(0.0, 100.0, 51)
SIN_FACTOR = math.sqrt(25 / 51)  # RMS of sin(2 pi p / 100) over the 51 points 0, 2, ..., 100 %


# --------------------------------------------------------------------------- GVS, GPS, MAP by hand


def _reference(j: int, p: np.ndarray) -> np.ndarray:
    return 10 * np.cos(2 * np.pi * p / 100) + 3 * j


def _subject_curves(amplitudes: dict[str, list[float]], spread: float = 4.0) -> pd.DataFrame:
    """Two cycles per side: reference + a_j sin(2 pi p/100) +- spread (the two cycles' mean has no
    spread), on the 101-point grid gaitid uses."""
    rows = []
    for side, amps in amplitudes.items():
        for cycle, d in ((0, spread), (1, -spread)):
            for j, (var, comp, _) in enumerate(GPS_VARIABLES):
                v = _reference(j, P101) + amps[j] * np.sin(2 * np.pi * P101 / 100) + d
                rows.append(pd.DataFrame({"side": side, "cycle": cycle, "kinetic": False, "variable": var,
                                          "component": comp, "percent": P101, "value": v, "unit": "deg"}))
    return pd.concat(rows, ignore_index=True)


def _reference_norms() -> Norms:
    table = pd.concat([pd.DataFrame({"variable": var, "component": comp, "percent": P51,
                                     "mean": _reference(j, P51), "sd": 1.0, "unit": "deg"})
                       for j, (var, comp, _) in enumerate(GPS_VARIABLES)], ignore_index=True)
    return read_norms(table)


LEFT = [1, 2, 3, 4, 5, 6, 7, 8, 9]
RIGHT = [3] * 9


def test_gvs_gps_and_overall_gps_by_hand():
    """GVS = |a| sqrt(25/51) (the RMS of a sine over Baker's 51 points, not 101); GPS left =
    sqrt(25/51 * 285 / 9), right = 3 sqrt(25/51); overall = RMS of the 9 left and the 6 non-pelvic
    right GVS = sqrt(25/51 * (285 + 6 * 9) / 15)."""
    scores = gait_scores(_subject_curves({"Left": LEFT, "Right": RIGHT}), _reference_norms())
    gvs = scores[scores["score"] == "GVS"]
    np.testing.assert_allclose(gvs[gvs["side"] == "Left"]["value"], np.array(LEFT) * SIN_FACTOR, rtol=1e-12)
    np.testing.assert_allclose(gvs[gvs["side"] == "Right"]["value"], np.array(RIGHT) * SIN_FACTOR, rtol=1e-12)
    assert list(gvs[gvs["side"] == "Left"]["name"]) == [n for _, _, n in GPS_VARIABLES]

    def gps(side):
        return float(scores[(scores["score"] == "GPS") & (scores["side"] == side)]["value"].iloc[0])

    assert gps("Left") == pytest.approx(math.sqrt(25 / 51 * 285 / 9), rel=1e-12)
    assert gps("Right") == pytest.approx(3 * SIN_FACTOR, rel=1e-12)
    assert gps("Overall") == pytest.approx(math.sqrt(25 / 51 * (285 + 6 * 9) / 15), rel=1e-12)
    assert scores["n_cycles"].dropna().tolist() == [2] * 22
    gdi = scores[scores["score"] == "GDI"]
    assert gdi["value"].isna().all() and gdi["note"].str.contains("no GDI basis").all()


def test_score_arithmetic_functions():
    ref = np.zeros((9, 51))
    subj = np.ones((2, 9, 51)) * np.arange(1, 10)[:, None]
    np.testing.assert_allclose(gait_variable_scores(subj, ref), np.tile(np.arange(1, 10), (2, 1)))
    assert gait_profile_score(np.array([3.0, 4.0])) == pytest.approx(math.sqrt(12.5))
    assert overall_gait_profile_score(np.ones(9), np.full(9, 2.0)) == pytest.approx(math.sqrt((9 + 6 * 4) / 15))
    gvs = gait_variable_scores(np.where(np.arange(51) == 7, np.nan, 1.0), np.zeros(51))
    assert np.isnan(gvs)  # a missing point: no GVS


def test_missing_side_and_missing_reference_variable_are_nan_with_reasons():
    norms = _reference_norms()
    norms = Norms(curves=norms.curves[norms.curves["variable"] != "FootProgressAngles"], source="partial")
    scores = gait_scores(_subject_curves({"Left": LEFT}), norms)
    foot = scores[(scores["name"] == "foot progression") & (scores["side"] == "Left")].iloc[0]
    assert np.isnan(foot["value"]) and "no FootProgressAngles Z" in foot["note"]
    right = scores[(scores["side"] == "Right") & (scores["score"] == "GVS")]
    assert right["value"].isna().all() and right["n_cycles"].eq(0).all()
    assert np.isnan(scores[scores["side"] == "Overall"]["value"].iloc[0])


def test_map_figure_bars_are_the_scores():
    from gaitid.report.mapchart import map_figure

    scores = gait_scores(_subject_curves({"Left": LEFT, "Right": RIGHT}), _reference_norms())
    fig = map_figure(scores)
    ax = fig.axes[0]
    bars = {gid: [p.get_height() for p in ax.patches if p.get_gid() == gid]
            for gid in ("gvs:Left", "gvs:Right", "gps:Left", "gps:Right", "gps:Overall")}
    np.testing.assert_allclose(bars["gvs:Left"], np.array(LEFT) * SIN_FACTOR)
    np.testing.assert_allclose(bars["gvs:Right"], np.array(RIGHT) * SIN_FACTOR)
    assert bars["gps:Overall"] == pytest.approx([math.sqrt(25 / 51 * 339 / 15)])
    assert [t.get_text() for t in ax.get_xticklabels()][-1] == "GPS"


# --------------------------------------------------------------------------- GDI by hand

N_VALUES = 9 * 51


def _unit(k: int) -> np.ndarray:
    e = np.zeros(N_VALUES)
    e[k] = 1.0
    return e


def test_gdi_from_a_given_basis_by_hand():
    """Basis: the first 15 unit vectors; controls' mean features 0, ln distances {1, 1, 3, 3}
    (mean 2, sample SD sqrt(4/3)). A subject at distance e^2 scores 100; at e^(2 + sqrt(4/3)) 90;
    at e^(2 - 2 sqrt(4/3)) 120; values outside the 15 features do not count."""
    basis = GDIBasis(features=np.eye(N_VALUES)[:, :15], control_mean=np.zeros(15), ln_mean=2.0,
                     ln_sd=math.sqrt(4 / 3), n_strides=4)
    sd = math.sqrt(4 / 3)
    g = np.stack([math.exp(2) * _unit(3), math.exp(2 + sd) * (_unit(0) + _unit(14)) / math.sqrt(2),
                  math.exp(2 - 2 * sd) * _unit(7) + 50 * _unit(300)])
    np.testing.assert_allclose(basis.gdi(g), [100.0, 90.0, 120.0], rtol=1e-12)


def _controls_in_15_dims() -> tuple[np.ndarray, np.ndarray]:
    """30 strides m +- r_k e_k (k = 1..15, r_k = e^(k/5)), m = 5 e_1: rank 15, mean m, distances r_k."""
    m = 5 * _unit(1)
    strides = [m + s * math.exp(k / 5) * _unit(k) for k in range(1, 16) for s in (1, -1)]
    return np.array(strides), m


def test_gdi_basis_from_controls_by_hand():
    """From the controls above: ln distances k/5 twice (k = 1..15): mean 1.6, sample SD
    sqrt(2/25 * 280 / 29). A subject at distance e^1.6 from the controls' mean scores 100, at
    e^(1.6 + SD) 90; the controls themselves average 100 with SD 10 (by construction of the z-score)."""
    g, m = _controls_in_15_dims()
    basis = GDIBasis.from_controls(g, 15)
    sd = math.sqrt(2 / 25 * 280 / 29)
    assert basis.ln_mean == pytest.approx(1.6, rel=1e-12) and basis.ln_sd == pytest.approx(sd, rel=1e-12)
    np.testing.assert_allclose(basis.features.T @ basis.features, np.eye(15), atol=1e-12)
    subject = np.stack([m + math.exp(1.6) * _unit(3), m + math.exp(1.6 + sd) * (_unit(2) + _unit(5)) / math.sqrt(2)])
    np.testing.assert_allclose(basis.gdi(subject), [100.0, 90.0], rtol=1e-10)
    own = basis.gdi(g)
    assert own.mean() == pytest.approx(100.0, abs=1e-9) and own.std(ddof=1) == pytest.approx(10.0, rel=1e-10)


def test_gdi_refuses_too_few_or_incomplete_control_strides():
    g, _ = _controls_in_15_dims()
    with pytest.raises(DataError, match="at least 15 control strides"):
        GDIBasis.from_controls(g[:14], 15)
    bad = g.copy()
    bad[3, 10] = np.nan
    with pytest.raises(DataError, match="missing values"):
        GDIBasis.from_controls(bad, 15)
    with pytest.raises(DataError, match="independent directions"):
        GDIBasis.from_controls(np.tile(g[:1], (20, 1)), 15)


# --------------------------------------------------------------------------- built from the sample


@pytest.fixture(scope="module")
def sample():
    from gaitid.pipeline import process

    return process(SAMPLE)


OFFSETS = [0.0, 1.0, 2.0, 3.0]
SPEEDS = [0.7, 0.9, 1.3, 1.5]


def _perturbed(sample, offsets=OFFSETS, speeds=SPEEDS) -> list[ControlTables]:
    """Copies of the synthetic sample: control i's every curve value + offsets[i] (angles in deg,
    moments in N.m/kg...), its walking speed set to speeds[i]; named subjects s0, s1..."""
    base = control_from_result(sample)
    out = []
    for i, (o, v) in enumerate(zip(offsets, speeds)):
        curves = base.curves.assign(value=base.curves["value"] + o)
        params = base.parameters.copy()
        params.loc[params["parameter"] == "walking_speed", "value"] = v
        out.append(ControlTables(f"ctrl{i}", curves, params, base.cycles, base.settings, subject=f"s{i}"))
    return out


def _by_hand(sample, variable, component, offsets, kinetic_only=False):
    """Pooled mean and sample SD at 0, 2, ..., 100 % of (each cycle's curve + each offset), straight from
    the tidy table."""
    c = sample.curves
    c = c[(c["variable"] == variable) & (c["component"] == component)]
    if kinetic_only:
        c = c[c["kinetic"]]
    c = c[np.isin(c["percent"], P51)]
    base = np.stack([g.sort_values("percent")["value"].to_numpy() for _, g in c.groupby(["side", "cycle"])])
    allc = np.concatenate([base + o for o in offsets])
    n = np.isfinite(allc).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):  # the kinetic cycles' last point is missing
        mean = np.where(n > 0, np.nansum(allc, axis=0) / n, np.nan)
        sd = np.sqrt(np.nansum((allc - mean) ** 2, axis=0) / (n - 1))
    return mean, np.where(n > 1, sd, np.nan), n


def test_norms_built_from_perturbed_copies_of_the_sample(sample):
    norms = build_norms(_perturbed(sample), speed_bands=[1.0], meta={"source": "synthetic copies",
                                                                      "age_range": [20, 40]})
    for var, comp, kinetic in (("KneeAngles", "X", False), ("HipMoment", "Y", True), ("AnklePower", "", True)):
        mean, sd, n = _by_hand(sample, var, comp, OFFSETS, kinetic)
        got = norms.curves[(norms.curves["variable"] == var) & (norms.curves["component"] == comp)
                           & (norms.curves["side"] == "") & (norms.curves["band"] == "")]
        np.testing.assert_allclose(got["mean"], mean, rtol=1e-12, atol=1e-12, equal_nan=True)
        np.testing.assert_allclose(got["sd"], sd, rtol=1e-9, atol=1e-12, equal_nan=True)
        np.testing.assert_array_equal(got["n"], n)
    # the synthetic cycles are alike: 6 cycles x offsets 0, 1, 2, 3 give the SD of 24 values,
    # sqrt(6 * (1.5^2 + 0.5^2 + 0.5^2 + 1.5^2) / 23) = sqrt(30 / 23)
    knee = norms.band("KneeAngles", "X", "deg")
    assert np.median(knee[2]) == pytest.approx(math.sqrt(30 / 23), rel=1e-3)
    # speed bands: controls 0, 1 below 1 m/s (offsets 0, 1), 2, 3 above
    slow, fast = norms.bands["band"].tolist()
    assert (slow, fast) == ("0.00-1.00 m/s", ">=1.00 m/s")
    for band, offs in ((slow, OFFSETS[:2]), (fast, OFFSETS[2:])):
        mean, sd, _ = _by_hand(sample, "KneeAngles", "X", offs)
        got = norms.select(band).band("KneeAngles", "X")
        np.testing.assert_allclose(got[1], mean, rtol=1e-12)
        np.testing.assert_allclose(got[2], sd, rtol=1e-9, atol=1e-12)
    assert norms.band_for_speed(0.8) == slow and norms.band_for_speed(1.0) == fast
    assert norms.band_for_speed(float("nan")) == ""
    # parameter norms: the clinical parameters of the copies, each shifted by its offset
    clin = __import__("gaitid.cycles.clinical", fromlist=["x"]).result_clinical_parameters(sample)
    base = clin.loc[clin["parameter"] == "knee flexion, swing, peak", "value"].to_numpy()
    allv = np.concatenate([base + o for o in OFFSETS])
    p = norms.parameters
    row = p[(p["parameter"] == "knee flexion, swing, peak") & (p["side"] == "") & (p["band"] == "")].iloc[0]
    assert row["mean"] == pytest.approx(allv.mean()) and row["sd"] == pytest.approx(allv.std(ddof=1))
    assert row["n"] == len(allv)
    assert norms.meta["n_subjects"] == 4 and norms.meta["n_trials"] == 4 and norms.meta["age_range"] == [20, 40]
    assert norms.meta["convention"] == "internal" and norms.meta["normalise"] == "mass"
    # 24 strides of identical-but-for-offset curves span < 15 directions: no GDI basis, and why
    assert norms.gdi is None and "independent directions" in norms.meta["gdi"]
    # the subject against norms built from its own copies: small GVS, reference scores present
    scores = gait_scores(sample, norms)
    assert set(scores["band"]) == {fast}  # its speed, 1.22 m/s
    gvs = scores[scores["score"] == "GVS"]
    np.testing.assert_allclose(gvs["value"], 2.5, atol=0.05)  # offsets 2, 3 -> the mean is 2.5 above
    assert gvs["reference_mean"].notna().all()


def test_toml_round_trip(sample, tmp_path):
    rng = np.random.default_rng(7)
    controls = _perturbed(sample, offsets=[0, 0.5, 1.0, 1.5, 2.0], speeds=[1.2] * 5)
    for k, c in enumerate(controls):  # independent noise per control: a 15-feature GDI basis exists
        c.curves = c.curves.assign(value=c.curves["value"] + rng.normal(0, 0.3, len(c.curves)))
    norms = build_norms(controls, speed_bands=[0.9], meta={"source": "round trip \u00e9 \"quoted\""})
    assert norms.gdi is not None and norms.gdi.n_strides == 30
    path = write_norms(norms, tmp_path / "norms.toml")
    back = read_norms(path)
    for a, b in ((norms.curves, back.curves), (norms.parameters, back.parameters), (norms.scores, back.scores),
                 (norms.bands, back.bands)):
        assert len(a) == len(b) > 0
        keys = [c for c in a.columns if a[c].dtype.kind != "f"] + (["percent"] if "percent" in a else [])
        a = a.sort_values(keys).reset_index(drop=True)
        b = b.sort_values(keys).reset_index(drop=True)
        for col in a.columns:
            if a[col].dtype.kind == "f":
                np.testing.assert_allclose(b[col].to_numpy(float), a[col].to_numpy(float), rtol=1e-8, equal_nan=True)
            else:
                assert b[col].astype(str).tolist() == a[col].astype(str).tolist(), col
    np.testing.assert_allclose(back.gdi.features, norms.gdi.features, rtol=1e-8, atol=1e-12)
    assert back.meta["source"] == norms.meta["source"] and back.meta["format"] == "gaitid-norms"
    s1, s2 = gait_scores(sample, norms), gait_scores(sample, back)
    np.testing.assert_allclose(s1["value"].to_numpy(float), s2["value"].to_numpy(float), rtol=1e-6)
    gdi = s1[s1["score"] == "GDI"]["value"]
    assert np.isfinite(gdi).all()
    assert any("GDI basis: 15 features from 30 strides" in line for line in back.describe())


def test_norms_from_a_result_folder_equal_norms_from_the_result(sample, tmp_path):
    folder = tmp_path / "walk"
    sample.to_csv(folder)
    with pytest.raises(SettingsError, match="--convention"):
        build_norms([folder])
    from_folder = build_norms([folder], convention="internal")
    from_result = build_norms([sample])
    pd.testing.assert_frame_equal(from_folder.curves, from_result.curves, check_exact=False, rtol=1e-12, atol=1e-12)
    a, b = (n.parameters.sort_values(["side", "parameter", "variable", "component"]).reset_index(drop=True)
            for n in (from_folder, from_result))
    pd.testing.assert_frame_equal(a, b, check_exact=False, rtol=1e-9, atol=1e-12)
    # a gaitid batch folder records the settings: no --convention needed
    (folder / "gaitid-run.json").write_text(json.dumps({"fingerprint": {"settings": sample.settings.as_dict()}}))
    assert build_norms([folder]).meta["convention"] == "internal"


def test_controls_processed_differently_are_refused(sample):
    a, b = _perturbed(sample)[:2]
    b.settings = {**b.settings, "convention": "external"}
    with pytest.raises(DataError, match="convention"):
        build_norms([a, b])


def test_convention_conversion_and_report_band(sample):
    from gaitid.report.content import gather
    from gaitid.report.plots import kinetics_page

    norms = build_norms(_perturbed(sample))
    ext = norms.in_convention("external")
    m_int = norms.band("KneeMoment", "X")[1]
    np.testing.assert_allclose(ext.band("KneeMoment", "X")[1], -m_int, equal_nan=True)
    np.testing.assert_allclose(ext.band("KneeAngles", "X")[1], norms.band("KneeAngles", "X")[1])
    p_int = norms.parameters.set_index(["band", "side", "parameter", "variable", "component"])["mean"]
    p_ext = ext.parameters.set_index(["band", "side", "parameter", "variable", "component"])["mean"]
    # clinical moment parameters are positive in their named direction under either convention
    key = ("", "", "knee extensor moment, early stance, peak", "KneeMoment", "X")
    assert p_ext[key] == pytest.approx(p_int[key])
    np.testing.assert_allclose(ext.in_convention("internal").band("KneeMoment", "X")[1], m_int, equal_nan=True)
    page = kinetics_page(gather(sample), norms.in_convention(sample.settings.convention))
    (knee,) = [p for p in page.panels if p.title == "Knee sagittal moment"]
    assert knee.get("normative")


def test_a_report_leaves_the_norms_it_is_given_unchanged(sample, tmp_path):
    """A batch worker reuses one Norms for every trial: the notes one report makes (a curve in
    another unit than the report's) stay in that report, never on the Norms, so the next trial's
    report does not list them."""
    norms = build_norms(_perturbed(sample))
    knee = norms.curves["variable"] == "KneeMoment"
    norms.curves.loc[knee, "unit"] = "N.m"  # the report draws N.m/kg: this band is refused with a note
    del norms.meta["convention"]  # and a convention-less Norms holding moments gets a note too
    before = list(norms.warnings)
    own = norms.in_convention("internal")
    assert own is not norms and own.warnings is not norms.warnings
    assert own.band("KneeMoment", "X", "N.m/kg") is None
    assert any("KneeMoment X is in N.m" in w for w in own.warnings)
    assert any("states no moment convention" in w for w in own.warnings)
    for folder in ("a", "b"):
        sample.report(tmp_path / folder, formats=("html",), normative=norms)
    assert norms.warnings == before
    html = (tmp_path / "b" / f"{sample.name}_report.html").read_text()
    assert html.count("KneeMoment X is in N.m") == 1


# --------------------------------------------------------------------------- CSV and GCD


def test_csv_with_sides():
    table = pd.DataFrame({"variable": "KneeAngles", "component": "X", "side": ["left", "left", "Right", "Right"],
                          "percent": [0, 100, 0, 100], "mean": [1.0, 2.0, 3.0, 4.0], "sd": 1.0})
    norms = read_norms(table)
    assert norms.band("KneeAngles", "X") is None  # no pooled curve
    assert norms.band("KneeAngles", "X", side="Right")[1].tolist() == [3.0, 4.0]
    np.testing.assert_allclose(norms.mean_curve("KneeAngles", "X", side="Left", percent=np.array([50.0])), [1.5])
    with pytest.raises(DataError, match="side"):
        read_norms(table.assign(side="middle"))


GCD_TEXT = """#!DST-0.1 GCD Oxford Metrics
$PREFIXES
Left
Right
$COMMENTS 1
Test lab adults, n = 12
!StrideLength 3
1388.074 4.112
!FootOff 3
61.5 1.2
!Cadence 3
0.851 0.006
!PelvicTilt 3
{tilt}
!LeftKneeFlexExt 3
{knee}
!DorsiPlanFlexMoment 3
{ankle}
!HipFlexExtMoment 3
{hip_nmm}
!PelvicOrigin-3 3
1 2 3
!FootInclination 3
{tilt}
"""


def _rows(mean, sd):
    return "\n".join(f"{m:.3f} {s:.3f}" for m, s in zip(mean, sd))


def test_read_vicon_gcd(tmp_path):
    tilt = 10 + np.sin(P51 / 10)
    knee = 30 + 30 * np.sin(np.pi * P51 / 100)
    ankle = 1.2 * np.sin(np.pi * P51 / 100)
    text = GCD_TEXT.format(tilt=_rows(tilt, np.full(51, 0.5)), knee=_rows(knee, np.full(51, 2.0)),
                           ankle=_rows(ankle, np.full(51, 0.1)), hip_nmm=_rows(800 * ankle, np.full(51, 50.0)))
    path = tmp_path / "lab.gcd"
    path.write_text(text)
    norms = read_norms(path)
    assert norms.convention == "external" and "Test lab adults" in norms.meta["source"]
    pct, mean, sd = norms.band("PelvisAngles", "X", "deg")
    np.testing.assert_array_equal(pct, P51)
    np.testing.assert_allclose(mean, np.round(tilt, 3))
    assert norms.band("KneeAngles", "X") is None
    np.testing.assert_allclose(norms.band("KneeAngles", "X", side="Left")[1], np.round(knee, 3))
    np.testing.assert_allclose(norms.band("HipMoment", "X", "N.m/kg")[1], np.round(800 * ankle, 3) / 1000)
    internal = norms.in_convention("internal")
    np.testing.assert_allclose(internal.band("AnkleMoment", "X", "N.m/kg")[1], -np.round(ankle, 3))
    p = norms.parameters.set_index("parameter")
    assert p.loc["stride_length", "mean"] == pytest.approx(1.388074) and p.loc["stride_length", "unit"] == "m"
    assert p.loc["stance", "mean"] == pytest.approx(61.5) and "cadence" not in p.index
    skipped = " ".join(norms.warnings)
    for name in ("Cadence", "PelvicOrigin-3", "FootInclination"):
        assert name in skipped


@pytest.mark.parametrize("text, words", [
    ("just text\n", ["no '!Variable' block"]),
    ("!PelvicTilt 3\n1.0 0.5\nten 1\n", ["line 3", "'ten 1'", "PelvicTilt"]),
    ("!Unknown 3\n1 2\n", ["no variable gaitid knows"]),
])
def test_gcd_errors_name_file_and_line(tmp_path, text, words):
    path = tmp_path / "bad.gcd"
    path.write_text(text)
    with pytest.raises(FileFormatError) as info:
        read_gcd(path)
    for w in ["bad.gcd", *words]:
        assert w in str(info.value)


def test_toml_and_format_errors(tmp_path):
    bad = tmp_path / "x.toml"
    bad.write_text('[meta]\nformat = "something else"\n')
    with pytest.raises(FileFormatError, match="not a gaitid norms file"):
        read_norms(bad)
    bad.write_text('[meta]\nformat = "gaitid-norms"\n[[curves]]\nvariable = "KneeAngles"\npercent = [0, 100]\n'
                   'mean = [1]\nsd = [1, 1]\n')
    with pytest.raises(FileFormatError, match="one length"):
        read_norms(bad)
    with pytest.raises(FileFormatError, match="unknown normative data format"):
        (tmp_path / "n.xlsx").write_text("x")
        read_norms(tmp_path / "n.xlsx")
    with pytest.raises(FileFormatError, match="not found"):
        read_norms(tmp_path / "absent.toml")


# --------------------------------------------------------------------------- command line


def test_cli_norms_build_show_score(sample, tmp_path, capsys):
    from gaitid.cli import main

    folder = tmp_path / "controls" / "walk"
    sample.to_csv(folder)
    out = tmp_path / "lab_norms.toml"
    assert main(["norms", "build", str(tmp_path / "controls"), "-o", str(out), "--convention", "internal",
                 "--source", "test lab", "--age-range", "20-40", "--subjects", "1"]) == 0
    text = capsys.readouterr().out
    assert "norms written to" in text and out.exists()
    norms = read_norms(out)
    assert norms.meta["source"] == "test lab" and norms.meta["n_subjects"] == 1 and norms.meta["age_range"] == [20, 40]
    assert main(["norms", "show", str(out)]) == 0
    assert "test lab" in capsys.readouterr().out
    png = tmp_path / "map.png"
    assert main(["norms", "score", str(SAMPLE), "--norms", str(out), "--map", str(png)]) == 0
    text = capsys.readouterr().out
    assert "GPS overall" in text and png.stat().st_size > 1000
    assert main(["norms", "build", str(folder), "-o", str(out), "--speed-bands", "fast"]) == 1
    assert "--speed-bands" in capsys.readouterr().err
    assert main(["norms", "build", str(folder), "-o", str(out), "--age-range", "40-20",
                 "--convention", "internal"]) == 1
    assert main(["norms"]) == 2


def test_cli_norms_build_reads_a_gaitid_run_folder_and_skips_its_results_c3d(tmp_path, capsys):
    """`gaitid norms build OUT` on what `gaitid run -o OUT` wrote takes the run's moment convention
    from the record beside the tables (here external, no --convention given); a shell glob over the
    trial's folder, where the run also wrote its results C3D, takes the trial and says the results
    C3D is gaitid's own output, not a control."""
    import shutil

    from gaitid.cli import main

    folder = tmp_path / "session"
    folder.mkdir()
    shutil.copy(SAMPLE, folder / "walk.c3d")
    assert main(["run", str(folder / "walk.c3d"), "-o", str(folder), "--no-report", "--convention", "external"]) == 0
    record = json.loads((folder / "walk_run.json").read_text())
    assert record["settings"]["convention"] == "external" and record["trial"].endswith("walk.c3d")
    capsys.readouterr()
    out = tmp_path / "norms.toml"
    assert main(["norms", "build", str(folder), "-o", str(out)]) == 0, capsys.readouterr().err
    norms = read_norms(out)
    assert norms.meta["convention"] == "external" and norms.meta["trials"] == ["walk"]
    files = sorted(str(p) for p in folder.glob("*.c3d"))  # what the shell gives for session/*.c3d
    assert [Path(f).name for f in files] == ["walk.c3d", "walk_results.c3d"]
    out2 = tmp_path / "norms2.toml"
    assert main(["norms", "build", *files, "-o", str(out2)]) == 0
    err = capsys.readouterr().err
    assert f"skipped: {folder / 'walk_results.c3d'}: gaitid's own output" in err
    assert "[1/1]" in err and read_norms(out2).meta["n_trials"] == 1


# --------------------------------------------------------------------------- real trials (smoke)


@pytest.mark.realdata
@pytest.mark.slow
def test_real_trials_build_norms_and_score():
    """The shared real trials with a body mass (6 trials, children and adults): norms build, with a
    GDI basis (>= 15 strides); each trial scored against them gets finite GPS and GDI."""
    from conftest import realdata_path

    from gaitid.batch.pairing import walking_trials
    from gaitid.pipeline import process_safely

    walks, pairing = walking_trials([realdata_path("")])
    results = [process_safely(p, static=pairing[p].static) for p in walks]
    results = [r for r in results if not isinstance(r, Exception) and r.cycles]
    assert len(results) >= 5
    norms = build_norms(results, meta={"source": "real trials smoke test"})
    assert norms.gdi is not None and norms.gdi.n_strides >= 15
    knee = norms.band("KneeAngles", "X", "deg")
    assert 50 < knee[1].max() < 75 and np.all(knee[2] > 0)  # peak swing knee flexion of walking
    for r in results:
        s = gait_scores(r, norms)
        gps = s[(s["score"] == "GPS") & (s["side"] == "Overall")]["value"].iloc[0]
        gdi = s[s["score"] == "GDI"]["value"]
        assert 1 < gps < 20 and gdi.between(40, 160).all(), (r.name, gps, gdi.tolist())


def test_compare_parameters_with_norms(sample):
    from gaitid.cycles.clinical import result_clinical_parameters
    from gaitid.norms import compare_parameters

    norms = build_norms(_perturbed(sample))
    clin = result_clinical_parameters(sample)
    cmp = compare_parameters(clin, norms)
    row = cmp[(cmp["parameter"] == "knee flexion, swing, peak") & (cmp["side"] == "Left")].iloc[0]
    p = norms.parameters
    ref = p[(p["parameter"] == "knee flexion, swing, peak") & (p["side"] == "Left") & (p["band"] == "")].iloc[0]
    assert row["norm_mean"] == ref["mean"] and row["norm_sd"] == ref["sd"]
    assert row["z"] == pytest.approx((row["value"] - ref["mean"]) / ref["sd"])
    # a parameter in another unit finds no norm
    other = compare_parameters(clin.assign(unit="rad"), norms)
    assert other["norm_mean"].isna().all() and other["z"].isna().all()
    # pooled norms serve when the norms have no per-side ones
    pooled = Norms(curves=norms.curves, parameters=p[p["side"] == ""], source="pooled")
    row2 = compare_parameters(clin, pooled)
    row2 = row2[(row2["parameter"] == "knee flexion, swing, peak") & (row2["side"] == "Left")].iloc[0]
    ref2 = p[(p["parameter"] == "knee flexion, swing, peak") & (p["side"] == "") & (p["band"] == "")].iloc[0]
    assert row2["norm_mean"] == ref2["mean"]


def test_per_side_norms_serve_when_there_is_no_pooled_reference():
    pooled = _reference_norms().curves
    sided = pd.concat([pooled.assign(side="Left"), pooled.assign(side="Right", mean=pooled["mean"] + 1.0)])
    norms = Norms(curves=sided.reset_index(drop=True), source="sided")
    scores = gait_scores(_subject_curves({"Left": [0.0] * 9, "Right": [0.0] * 9}), norms)
    gvs = scores[scores["score"] == "GVS"]
    np.testing.assert_allclose(gvs[gvs["side"] == "Left"]["value"], 0.0, atol=1e-12)
    np.testing.assert_allclose(gvs[gvs["side"] == "Right"]["value"], 1.0, atol=1e-12)  # its own reference


def test_speed_band_without_controls_falls_back_to_all_speeds(sample):
    norms = build_norms(_perturbed(sample, speeds=[1.3] * 4), speed_bands=[1.0])
    assert norms.band_for_speed(0.5) == "" and norms.band_for_speed(1.3) == ">=1.00 m/s"
    assert any("no control cycles" in line for line in norms.describe())


def test_run_with_norms_gives_bands_indices_map_and_scores(sample, tmp_path, capsys):
    """`gaitid run --norms`: the scores CSV is gait_scores of the trial against the norms (GPS 1.5 deg:
    the controls are the sample shifted by 0..3 deg, mean shift 1.5, so every GVS is 1.5 by hand), the
    report's MAP page draws each bar at its score, the first page lists the indices and the parameter
    norms, and the kinetics page draws the band."""
    from gaitid.cli import main
    from gaitid.cycles.scores import gait_scores
    from gaitid.norms import write_norms
    from gaitid.report.content import gather
    from gaitid.report.display import clinical_table
    from gaitid.report.pages import summary_pages
    from gaitid.report.plots import kinetics_page
    from gaitid.report.profile import map_page

    norms = build_norms(_perturbed(sample))
    path = write_norms(norms, tmp_path / "lab.toml")
    out = tmp_path / "out"
    assert main(["run", str(SAMPLE), "-o", str(out), "--norms", str(path)]) == 0
    assert "GPS overall 1.5 deg" in capsys.readouterr().out
    scores = pd.read_csv(out / "walk_synthetic_scores.csv")
    gvs = scores[scores["score"] == "GVS"]["value"].to_numpy(float)
    # every curve is the controls' mean - 1.5 deg by construction; the reference pools both sides, each GVS
    # uses one side's mean, and the synthetic sides differ by < 0.1 mdeg
    np.testing.assert_allclose(gvs, 1.5, atol=2e-4)
    assert (out / "walk_synthetic_report.pdf").stat().st_size > 10_000
    html = (out / "walk_synthetic_report.html").read_text(encoding="utf-8")
    assert 'id="map"' in html and "Gait indices" in html

    data = gather(sample)
    expected = gait_scores(sample, read_norms(path))
    page = map_page(data, expected)
    (panel,) = page.panels
    for side in ("Left", "Right"):
        bars = [s.y2[0] for s in panel.get(f"gvs:{side}")]
        want = expected[(expected["score"] == "GVS") & (expected["side"] == side)]["value"].to_numpy(float)
        np.testing.assert_allclose(bars, want, rtol=1e-12)
    assert panel.get("gps:Overall")[0].y2[0] == pytest.approx(1.5, abs=2e-4)
    table = clinical_table(data, expected)
    assert table.rows[0][:5] == ["GPS", "deg", "1.5", "1.5", "1.5"] and table.rows[1][0] == "GDI"
    summary = " ".join(t for page in summary_pages(data, None, expected) for t in page.texts())
    assert "Gait indices (Movement Analysis Profile: next page)" in summary  # the MAP page does follow
    first = " ".join(t for p in summary_pages(data, read_norms(path), expected) for t in p.texts())
    assert "1.100 \u00b1 0.323" in first  # walking speed norm: mean of 0.7, 0.9, 1.3, 1.5 m/s over 24 cycles
    knee = [p for p in kinetics_page(data, read_norms(path)).panels if p.title == "Knee sagittal moment"][0]
    assert knee.get("normative")
    assert map_page(data, None) is None


def test_batch_with_norms_scores_every_trial_and_draws_the_map(sample, tmp_path, monkeypatch, capsys):
    """`gaitid batch --norms`: each trial's folder gets <trial>_scores.csv (the GPS of the sample
    against norms shifted 0..3 deg: 1.5 deg, as in the run test) and a report with the MAP; a
    missing norms file stops the batch before any trial, naming the file."""
    import os
    import shutil

    from gaitid.cli import main
    from gaitid.core.vocabulary import NORMS_ENV
    from gaitid.norms import write_norms

    monkeypatch.delenv(NORMS_ENV, raising=False)
    path = write_norms(build_norms(_perturbed(sample)), tmp_path / "lab.toml")
    src = tmp_path / "session"
    src.mkdir()
    shutil.copy(SAMPLE, src / SAMPLE.name)
    out = tmp_path / "out"
    assert main(["batch", str(src), "-o", str(out), "--norms", str(path)]) == 0
    assert NORMS_ENV not in os.environ  # set for the batch's workers only, then restored
    (scores_csv,) = out.rglob("walk_synthetic_scores.csv")
    scores = pd.read_csv(scores_csv)
    gps = scores[(scores["score"] == "GPS") & (scores["side"] == "Overall")]["value"].iloc[0]
    assert gps == pytest.approx(1.5, abs=2e-4)
    (html,) = out.rglob("walk_synthetic_report.html")
    assert 'id="map"' in html.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["batch", str(src), "-o", str(out), "--norms", str(tmp_path / "missing.toml")]) != 0
    assert "missing.toml" in capsys.readouterr().err


def test_a_norms_setting_is_parsed_once_per_file_version_and_always_registered(sample, tmp_path):
    """A batch worker scores many trials against one norms file: it is parsed once while unchanged,
    parsed again when rewritten, registered as an input (never overwritten) on every call."""
    import os

    from gaitid.io.atomic import forget_inputs, inputs_read
    from gaitid.norms import read_norms_setting

    norms = build_norms(_perturbed(sample))
    path = write_norms(norms, tmp_path / "lab.toml")
    assert read_norms_setting(None, "internal") is None and read_norms_setting("None", "internal") is None
    first = read_norms_setting(path, "internal")
    forget_inputs()
    assert read_norms_setting(str(path), "internal") is first
    assert path.resolve() in [p.resolve() for p in inputs_read()]
    shifted = build_norms(_perturbed(sample, offsets=[o + 1.0 for o in OFFSETS]))
    forget_inputs()  # (this process read it: gaitid itself refuses to overwrite it)
    write_norms(shifted, path)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # a rewrite within the clock's resolution
    again = read_norms_setting(path, "internal")
    assert again is not first
    knee = (again.curves["variable"] == "KneeAngles") & (again.curves["component"] == "X")
    old = (first.curves["variable"] == "KneeAngles") & (first.curves["component"] == "X")
    np.testing.assert_allclose(again.curves.loc[knee, "mean"].to_numpy(),
                               first.curves.loc[old, "mean"].to_numpy() + 1.0, atol=1e-9)
    with pytest.raises(FileFormatError, match="not found"):
        read_norms_setting(tmp_path / "missing.toml", "internal")


def test_score_resampling_is_scipy_interp1d_bit_for_bit():
    """The scores' 101 -> 51 point resampling (numpy, so a report does not import
    scipy.interpolate) gives interp1d's values exactly: NaN next to a NaN sample and outside."""
    from scipy.interpolate import interp1d

    from gaitid.cycles.scores import SCORE_PERCENT, resample

    rng = np.random.default_rng(7)
    values = rng.normal(size=(4, 9, 101)) * 30.0
    values[0, 2, 40] = np.nan
    values[3, :, 0] = np.nan
    percent = np.linspace(0.0, 100.0, 101)
    for pct, to in [(percent, SCORE_PERCENT), (percent * 0.98 + 1.0, SCORE_PERCENT),
                    (np.sort(rng.uniform(0, 100, 101)), np.linspace(-5.0, 105.0, 37))]:
        expected = interp1d(pct, values, axis=-1, bounds_error=False, fill_value=np.nan)(to)
        got = resample(values, pct, to)
        assert got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        assert np.isnan(got).any()


def test_scores_use_the_complete_cycles_and_say_how_many():
    """A cycle with a gap left NaN in one curve: the scores of that side come from the complete cycle
    alone (reference + a sin + 4: GVS^2 = 25/51 a^2 + 16, the sine summing to zero over the 51 points),
    n_cycles 1, the note 'from 1 of 2 cycles'; the other side keeps both cycles."""
    curves = _subject_curves({"Left": LEFT, "Right": RIGHT})
    hole = (curves["side"] == "Left") & (curves["cycle"] == 1) & (curves["variable"] == "KneeAngles") \
        & curves["percent"].between(30, 40)
    curves.loc[hole, "value"] = np.nan
    scores = gait_scores(curves, _reference_norms())
    left = scores[(scores["side"] == "Left") & (scores["score"] == "GVS")]
    np.testing.assert_allclose(left["value"], np.sqrt(25 / 51 * np.array(LEFT) ** 2 + 16), rtol=1e-12)
    assert left["n_cycles"].eq(1).all() and left["note"].eq("from 1 of 2 cycles (the others' kinematics incomplete)").all()
    right = scores[(scores["side"] == "Right") & (scores["score"] == "GVS")]
    np.testing.assert_allclose(right["value"], np.array(RIGHT) * SIN_FACTOR, rtol=1e-12)
    assert right["n_cycles"].eq(2).all() and right["note"].eq("").all()
