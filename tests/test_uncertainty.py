"""Joint-load uncertainty (issue 16): the error model, the batched propagation, the result tables.

The physics is checked against independent derivations: a hip centre moved by d changes the
hip moment by -d x F (statics: the same load about another point), the nominal column of the
batch reproduces the nominal processing, the first-order propagation agrees with the Monte Carlo
on small errors. Coverage against the synthetic truth is in test_uncertainty_coverage.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from gaitid.core.errors import GaitIDError, ModelError, SettingsError
from gaitid.core.resources import sample_data_dir
from gaitid.io.c3d import read_c3d
from gaitid.model.markerset import load_model
from gaitid.pipeline import process
from gaitid.uncertainty import (
    SOURCES,
    UncertaintySettings,
    band_curves,
    load_error_model,
    uncertainty_settings,
)
from gaitid.uncertainty.design import Design, Parameter, make_design
from gaitid.uncertainty.inputs import error_parameters
from gaitid.uncertainty.nominal import NominalRun
from gaitid.uncertainty.points import model_points
from gaitid.uncertainty.propagate import column_curves

SAMPLE = sample_data_dir()
WALK, STATIC = SAMPLE / "walk_synthetic.c3d", SAMPLE / "static_synthetic.c3d"


@pytest.fixture(scope="module")
def trials():
    return read_c3d(WALK), read_c3d(STATIC)


@pytest.fixture(scope="module")
def nominal(trials):
    return process(trials[0], static=trials[1])


@pytest.fixture(scope="module")
def with_unc(trials):
    return process(trials[0], static=trials[1], uncertainty=UncertaintySettings(samples=40))


# ----------------------------------------------------------------------------- error model

def test_default_error_model_figures_and_sources():
    em = load_error_model()
    np.testing.assert_allclose(em.joint_centre("davis", "hip").centre_sd, [0.016] * 3)
    np.testing.assert_allclose(em.joint_centre("chord", "ankle").landmark_sd, [0.005, 0.003, 0.005])
    np.testing.assert_allclose(em.joint_centre("chord", "knee").landmark_sd, [0.008, 0.004, 0.008])
    with pytest.raises(ModelError, match="'unheard-of': not a point method"):  # never a silent zero
        em.joint_centre("unheard-of", "hip")
    assert em.bsip_error("plugin-gait", "thigh").mass_cv == 0.10  # any table: bsip.default
    assert em.bsip_error("plugin-gait", "foot").mass_cv == 0.15
    assert em.plate("floor").cop_sd == pytest.approx(0.005)
    assert em.marker_noise == pytest.approx(0.0005)
    table = pd.DataFrame(em.table())
    assert (table["reference"].str.len() > 10).all(), "every figure states its source"
    assert "Mantovani" in em.joint_centre("davis", "hip").source


def test_a_labs_error_model_overrides_and_is_credited(tmp_path):
    lab = tmp_path / "lab.toml"
    lab.write_text("[plates.floor]\ncop_sd_mm = 2.0\n\n[joint_centres.davis]\ncentre_sd_mm = [20, 10, 10]\n")
    em = load_error_model(lab)
    assert em.plate("floor").cop_sd == pytest.approx(0.002)
    assert em.plate("floor").force_cv == 0.01  # kept from the default
    assert str(lab) in em.plate("floor").source and "Schmiedmayer" not in em.plate("floor").source
    np.testing.assert_allclose(em.joint_centre("davis", "hip").centre_sd, [0.02, 0.01, 0.01])
    assert em.joint_centre("harrington", "hip").centre_sd[0] == pytest.approx(0.008)  # untouched section


def test_bad_error_models_name_file_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[joint_centres.davis]\ncentre_sd_mm = [1, -2, 3]\n")
    with pytest.raises(ModelError, match="joint_centres.davis.centre_sd_mm") as err:
        load_error_model(bad)
    assert "bad.toml" in str(err.value)
    with pytest.raises(ModelError, match="no plate kind 'moon'"):
        load_error_model().plate("moon")
    with pytest.raises(ModelError, match="no error model named"):
        load_error_model("nonexistent-model")


def test_settings_validation():
    assert uncertainty_settings(None) is None and uncertainty_settings(False) is None
    assert uncertainty_settings(True).samples == 200
    assert uncertainty_settings(50).samples == 50
    assert uncertainty_settings({"samples": 0}).samples == 0
    for bad in (dict(samples=1), dict(samples=-3), dict(sources=("markers", "luck")), dict(samples=0, linear=False)):
        with pytest.raises(SettingsError):
            UncertaintySettings(**bad)
    with pytest.raises(SettingsError):
        uncertainty_settings("many")


# ----------------------------------------------------------------------------- design

def test_design_columns_and_streams():
    ps = [Parameter("joint_centres", ("centre", "Left", "hip", 0), 0.016),
          Parameter("bsip", ("mass", "thigh"), 0.1), Parameter("plates", ("gain", "Left", 0), 0.0)]
    d = make_design(ps, samples=5, noise_samples=3, seed=7)
    assert len(d.parameters) == 2  # zero SD dropped
    assert d.n_columns == 5 + 1 + 2 + 3
    assert not d.values[d.nominal].any() and d.noise[d.noise_only].all() and not d.noise[d.mc].any()
    np.testing.assert_allclose(d.values[d.linear], np.diag([0.016, 0.1]) * d.step)
    # the BSIP draws do not depend on how many other parameters there are (one stream per source)
    more = ps + [Parameter("plates", ("cop", "Left", 0, 0), 0.005)]
    d2 = make_design(more, samples=5, noise_samples=3, seed=7)
    np.testing.assert_array_equal(d.value(("mass", "thigh"))[d.mc], d2.value(("mass", "thigh"))[d2.mc])


def test_error_parameters_of_plugin_gait(nominal):
    m = load_model("plugin-gait")
    params = error_parameters(m, set(nominal.trial.marker_labels), nominal.loads, load_error_model(), "floor", None,
                              SOURCES)
    keys = {p.key[:3] for p in params}
    assert ("centre", "Left", "hip") in keys and ("landmark", "Right", "knee") in keys
    assert ("mass", "thorax") in keys  # every segment of the table: masses renormalised to body mass
    cops = [p for p in params if p.key[0] == "cop"]
    assert len(cops) == 4  # one plate contact per foot, two axes


# ----------------------------------------------------------------------------- batch

def test_the_nominal_column_is_the_nominal_processing(trials, nominal):
    m = load_model(nominal.settings.model)
    em = load_error_model()
    pts, _ = model_points(nominal.trial, m, trials[1], nominal.settings)
    params = error_parameters(m, set(pts), nominal.loads, em, "floor", None, SOURCES)
    d = make_design(params, 6, 3, 0)
    run = NominalRun(nominal.trial, m, trials[1], nominal.settings, nominal.trial.subject, None, nominal.kinematics,
                     nominal.loads, nominal.outputs, nominal.cycles)
    curves = column_curves(run, d, em.marker_noise)
    for side in ("Left", "Right"):
        for var, Y in curves[side].items():
            ref = nominal.curve(side, var)
            np.testing.assert_array_equal(np.isnan(Y[:, d.nominal]), np.isnan(ref))
            # the trial-wide median of HEE-TOE (the foot's length) is taken over all columns: 1e-6 at most
            np.testing.assert_allclose(Y[:, d.nominal], ref, atol=2e-5, err_msg=f"{side} {var}")


def _plates_moved(trial, side_plate: int, d=(0.0, 0.0), gain: float = 0.0):
    from dataclasses import replace

    from gaitid.core.trial import PlateWrench

    def moved(w):
        return PlateWrench(w.rate, w.force * (1 + gain), w.cop + np.array([d[0], d[1], 0.0]), w.free_moment * (1 + gain))

    plates = [replace(fp, point=moved(fp.point), analog=moved(fp.analog)) if fp.index == side_plate else fp
              for fp in trial.force_plates]
    return replace(trial, force_plates=plates)


def _markers_moved(trial, label: str, offset: np.ndarray):
    from dataclasses import replace

    pts = trial.markers.copy()
    pts[:, trial.marker_labels.index(label)] += offset
    return replace(trial, markers=pts)


@pytest.fixture(scope="module")
def hjc_inputs(trials, tmp_path_factory):
    """The synthetic trials with their (exact) hip centres as virtual points LHJC / RHJC, the model
    reading them, and the nominal processing."""
    from gaitid.model.assembly import build_segments
    from gaitid.validation.synthetic.injected import write_hjc_model

    walk, static = trials
    model = write_hjc_model(tmp_path_factory.mktemp("hjc"), SAMPLE / "plugin-gait-truth-foot.toml")
    kw = build_segments(walk, "plugin-gait", static=static, marker_cutoff_hz=None)
    ks = build_segments(static, "plugin-gait", static=static)
    centres = {t: {s: k.joint_centres[f"{s.lower()}.hip"] for s in ("Left", "Right")} for t, k in (("w", kw), ("s", ks))}
    pelvis = {"w": kw.root.R, "s": ks.root.R}
    return walk, static, model, centres, pelvis


def _direct_vs_batch(case, hjc_inputs):
    """(direct processing of the perturbed inputs, the batch's column for the same error)."""
    from gaitid.validation.synthetic.injected import with_hjc

    walk, static, model, centres, pelvis = hjc_inputs
    kw = dict(model=str(model), frame="lab", marker_cutoff_hz=None)  # unfiltered: moved markers are not smoothed
    base = process(with_hjc(walk, centres["w"]), static=with_hjc(static, centres["s"]), **kw)
    m = load_model(str(model))
    key, value = case
    w2, s2 = with_hjc(walk, centres["w"]), with_hjc(static, centres["s"])
    seg = None
    if key[0] == "centre":  # the Left hip 30 mm anterior, in the pelvis, in both trials
        moved = {t: {s: c + (pelvis[t] @ np.array([value, 0, 0]) if s == "Left" else 0) for s, c in centres[t].items()}
                 for t in ("w", "s")}
        w2, s2 = with_hjc(walk, moved["w"]), with_hjc(static, moved["s"])
    elif key[0] == "landmark":  # LKNE misplaced 8 mm anteriorly in the thigh, in both trials
        from gaitid.model.assembly import build_segments

        R_static = build_segments(s2, model, static=s2, marker_cutoff_hz=None).frames["left.thigh"]
        w2 = _markers_moved(w2, "LKNE", base.kinematics.frames["left.thigh"] @ np.array([value, 0, 0]))
        s2 = _markers_moved(s2, "LKNE", R_static @ np.array([value, 0, 0]))
    elif key[0] == "cop":  # the right foot's plate (plate 1): centre of pressure 5 mm along lab y
        w2 = _plates_moved(w2, 1, d=(0.0, value))
    elif key[0] == "gain":
        w2 = _plates_moved(w2, 1, gain=value)
    elif key[0] == "mass":  # the thigh 10 % heavier, every segment renormalised to body mass
        from gaitid.model.bsip import load_table
        from gaitid.uncertainty.segments import bsip_groups

        tab = load_table("plugin-gait")
        paired, single = bsip_groups("plugin-gait")
        total = sum((2 if s in paired else 1) * tab.row(s).mass_fraction for s in paired + single)
        new = total + 2 * tab.row("thigh").mass_fraction * value
        seg = {}
        for side in ("Left", "Right"):
            for body in base.kinematics.chains[side]:
                k = (1 + (value if body.name == "thigh" else 0)) * total / new
                seg[f"{side.lower()}.{body.name}"] = {"mass": body.mass * k, "inertia": body.inertia_seg * k,
                                                      "com_from_proximal": tab.row(body.name).com_from_proximal}
    direct = process(w2, static=s2, segment_parameters=seg, **kw)
    params = [Parameter("x", key, 1.0)]
    d = Design(params, np.array([[0.0], [value]]), np.zeros(2, bool), slice(0, 0), 0, slice(1, 1), slice(2, 2), 1.0, 0)
    run = NominalRun(base.trial, m, with_hjc(static, centres["s"]), base.settings, base.trial.subject, None,
                     base.kinematics, base.loads, base.outputs, base.cycles)
    curves = column_curves(run, d, 0.0)
    return base, direct, curves


@pytest.mark.parametrize("case", [(("centre", "Left", "hip", 0), 0.03), (("landmark", "Left", "knee", "LKNE", 0), 0.008),
                                  (("cop", "Right", 0, 1), 0.005), (("gain", "Right", 0), 0.02),
                                  (("mass", "thigh"), 0.10)], ids=["hip", "knee-landmark", "cop", "force", "bsip"])
def test_a_batch_column_is_the_processing_of_the_perturbed_inputs(case, hjc_inputs):
    """Every kind of input error, perturbed in the batch (one column), gives what processing the
    perturbed inputs (moved markers or virtual hip centres in both trials, moved plate channels,
    other segment masses) gives: the joint loads of both legs, every frame. Unfiltered markers,
    so that both routes apply the same offsets (a filter would smooth a moved marker's offset,
    R(t) d, once more than the batch does: 1e-4 N.m/kg at most)."""
    base, direct, curves = _direct_vs_batch(case, hjc_inputs)
    changed = 0.0
    for side in ("Left", "Right"):
        for var in ("AnkleMoment", "KneeMoment", "HipMoment", "HipForce", "KneePower", "GroundReactionForce"):
            want, got = direct.curve(side, var), curves[side][var][:, 1]
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            ok = np.isfinite(want).all(axis=1) if want.ndim == 2 else np.isfinite(want)
            np.testing.assert_allclose(got[ok], want[ok], rtol=1e-6, atol=1e-6, err_msg=f"{case} {side} {var}")
            changed = max(changed, np.nanmax(np.abs(want - base.curve(side, var))))
    assert changed > 0.01  # the error did change the outputs (N.m/kg, N/kg)


# ----------------------------------------------------------------------------- pipeline and tables

def test_result_tables_carry_the_uncertainty(with_unc, nominal):
    r = with_unc
    cols = ["uncertainty_sd", "uncertainty_low95", "uncertainty_high95", "uncertainty_sd_linear"]
    for table in (r.frames, r.curves, r.curves_summary, r.parameters, r.parameters_summary):
        assert all(c in table.columns for c in cols)
        assert "unit" in table.columns
    f = r.frames
    kinetic = f["variable"].isin(["AnkleMoment", "HipPower", "KneeForce", "GroundReactionForce"])
    angles = f["variable"].str.endswith("Angles") | f["variable"].str.endswith("Inertial")
    assert f.loc[angles, "uncertainty_sd"].isna().all()
    known = kinetic & f["value"].notna()
    assert (f.loc[known, "uncertainty_sd"] >= 0).all()
    moments = known & (f["variable"] != "GroundReactionForce")  # a ground reaction known to be zero (swing) is exact
    assert f.loc[moments, "uncertainty_sd"].gt(0).all()
    assert (f.loc[known, "uncertainty_low95"] <= f.loc[known, "uncertainty_high95"]).all()
    # unknown load (stance off the plates): no value, no uncertainty
    assert f.loc[kinetic & f["value"].isna(), "uncertainty_sd"].isna().all()
    # the nominal values are untouched by the uncertainty stage
    pd.testing.assert_series_equal(r.frames["value"], nominal.frames["value"])
    pd.testing.assert_frame_equal(r.parameters_summary[nominal.parameters_summary.columns], nominal.parameters_summary)


def test_contributions_split_the_first_order_variance(with_unc):
    c = with_unc.uncertainty.contributions
    assert set(c["source"]) == set(SOURCES) - {"decomposition"}  # listed where it acts: no decomposed frame here
    sums = c.groupby(["side", "parameter", "variable", "component"])["variance_fraction"].sum()
    np.testing.assert_allclose(sums.dropna(), 1.0, atol=1e-9)
    # at the push-off peak the centre of pressure and the ankle centre dominate, not the segments' inertia
    a2 = c[(c["parameter"] == "A2")].set_index(["side", "source"])["variance_fraction"]
    for side in ("Left", "Right"):
        assert a2[(side, "bsip")] < 0.1
    assert c["unit"].isin(["N.m/kg", "W/kg"]).all()


def test_parameters_follow_the_clinical_definitions(with_unc):
    """The uncertainty's parameters are the parameters table's clinical ones (gaitid.cycles.clinical: each
    in its phase of the cycle), not whole-cycle extremes: the batch's evaluation of the nominal
    curves reproduces every kinetic clinical value of Result.parameters, and every kinetic
    clinical row with a value gets an SD."""
    import gaitid.uncertainty.tables as tb
    from gaitid.cycles.clinical import PARAMETERS

    r = with_unc
    kinetic_names = {d.name for d in PARAMETERS if d.kinetic}
    curves = {side: {v: np.asarray(a, float).reshape(len(a), 1, -1) for v, a in by.items()
                     if v.endswith(("Moment", "Power"))} for side, by in r.outputs.curves.items()}
    values = tb.parameter_values(tb.normalised(curves, r.trial.time, r.cycles), r.cycles, r.settings.convention,
                                 r.settings.frame)
    p = r.parameters[r.parameters["parameter"].isin(kinetic_names)]
    assert len(p) >= 2 * len(kinetic_names) and set(p["parameter"]) == kinetic_names
    got = np.array([values[(row.side, row.cycle, row.parameter, row.variable, row.component)][0]
                    for row in p.itertuples()])
    np.testing.assert_allclose(got, p["value"].to_numpy(float), rtol=1e-9, atol=1e-9, equal_nan=True)
    # a peak that vanishes from its window in some perturbed copies counts as 0 there (the named moment's
    # magnitude): the sample's knee flexor moment in terminal stance, 0.09 N.m/kg, whose 95 % interval
    # reaches 0, the sign that under the input errors it may be absent
    vanishes = (p["parameter"] == "knee flexor moment, terminal stance, peak").to_numpy()
    assert p.loc[vanishes, "value"].between(0, 0.15).all()
    assert p.loc[vanishes, "uncertainty_sd"].gt(0).all()
    assert p.loc[vanishes, "uncertainty_low95"].lt(0.01).all()  # 0, give or take the marker noise added after
    known = p["value"].notna()
    assert p.loc[known, "uncertainty_sd"].gt(0).all()
    assert ((p.loc[known, "uncertainty_low95"] < p.loc[known, "value"] + 3 * p.loc[known, "uncertainty_sd"])
            & (p.loc[known, "uncertainty_high95"] > p.loc[known, "value"] - 3 * p.loc[known, "uncertainty_sd"])).all()
    s = r.parameters_summary
    s = s[s["parameter"].isin(kinetic_names)]
    assert s["uncertainty_sd"].notna().sum() == s["mean"].notna().sum()
    assert not r.parameters["parameter"].str.endswith((" max", " min")).any()  # no retired whole-cycle extremes
    # spatio-temporal parameters carry no kinetic uncertainty
    assert r.parameters.loc[r.parameters["parameter"] == "walking_speed", "uncertainty_sd"].isna().all()


def test_bands_for_the_report(with_unc):
    b = band_curves(with_unc)
    assert list(b.columns) == ["side", "variable", "component", "percent", "unit", "mean", "sd", "low95", "high95"]
    sel = b[(b["variable"] == "AnkleMoment") & (b["component"] == "X")]
    assert len(sel) == 2 * 101 and (sel["unit"] == "N.m/kg").all()
    ok = sel["mean"].notna()
    assert (sel.loc[ok, "low95"] <= sel.loc[ok, "high95"]).all()
    # the band's mean is the mean over kinetic cycles of the nominal curves
    curves = with_unc.curves
    k = curves[curves["kinetic"] & (curves["variable"] == "AnkleMoment") & (curves["component"] == "X")]
    mean = k.groupby(["side", "percent"])["value"].mean()
    np.testing.assert_allclose(sel.set_index(["side", "percent"])["mean"].loc[mean.index], mean, atol=1e-5)
    keys = ["side", "variable", "component", "percent"]
    pooled = band_curves([with_unc, with_unc]).set_index(keys)  # two identical trials: the same band
    single = b.set_index(keys).loc[pooled.index]
    for col in ("mean", "low95", "high95"):
        np.testing.assert_allclose(pooled[col], single[col], rtol=1e-5, atol=1e-6, equal_nan=True)


def test_bands_need_uncertainty(nominal):
    from gaitid.core.errors import DataError

    with pytest.raises(DataError, match="without uncertainty"):
        band_curves(nominal)


def test_first_order_alone_is_the_fast_check(trials, with_unc):
    lin = process(trials[0], static=trials[1], uncertainty=UncertaintySettings(samples=0))
    f = lin.frames
    ok = f["uncertainty_sd"].notna()
    np.testing.assert_allclose(f.loc[ok, "uncertainty_sd"], f.loc[ok, "uncertainty_sd_linear"])
    np.testing.assert_allclose(f.loc[ok, "uncertainty_high95"] - f.loc[ok, "value"],
                               1.959964 * f.loc[ok, "uncertainty_sd"], rtol=1e-6, atol=2e-5)
    # the first-order SD does not depend on the Monte Carlo
    np.testing.assert_allclose(f["uncertainty_sd_linear"], with_unc.frames["uncertainty_sd_linear"], rtol=1e-3, atol=1e-6,
                               equal_nan=True)


def test_command_line_writes_the_uncertainty(tmp_path, capsys):
    from gaitid.cli import main

    lab = tmp_path / "lab.toml"
    lab.write_text("[plates.floor]\ncop_sd_mm = 2.0\n")
    out = tmp_path / "out"
    code = main(["run", str(WALK), "--static", str(STATIC), "-o", str(out), "--no-report", "--uncertainty", "30",
                 "--error-model", str(lab)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "uncertainty: 30 samples" in printed and "uncertainty_*" in printed
    frames = pd.read_csv(out / "walk_synthetic_frames.csv")
    sel = frames[(frames["variable"] == "HipMoment") & frames["value"].notna()]
    assert sel["uncertainty_sd"].gt(0).all() and (sel["unit"] == "N.m/kg").all()
    summary = pd.read_csv(out / "walk_synthetic_parameters_summary.csv")
    assert summary["uncertainty_sd"].notna().any()
    model = pd.read_csv(out / "walk_synthetic_uncertainty_error_model.csv")
    floor = model[(model["item"] == "floor") & model["quantity"].str.startswith("COP")]
    assert floor["value"].iloc[0] == 2.0 and str(lab) in floor["reference"].iloc[0]
    for name in ("contributions", "bands"):
        assert (out / f"walk_synthetic_uncertainty_{name}.csv").exists()
    assert main(["run", str(WALK), "-o", str(out), "--plate-kind", "treadmill"]) == 1  # needs --uncertainty
    assert "--uncertainty" in capsys.readouterr().err
    # an unknown plate kind is refused before any trial is read, naming the option
    assert main(["run", str(WALK), "-o", str(out), "--uncertainty", "--plate-kind", "boat"]) == 1
    err = capsys.readouterr().err
    assert "--plate-kind boat" in err and "treadmill" in err


# ----------------------------------------------------------------------------- report

def test_kinetics_legend_fits_the_page_and_its_swatches_are_the_bands_colours(with_unc, nominal):
    """With norms and uncertainty together: every legend text lies within the page's margins
    (wrapped onto a second row), and each swatch has the colour (and fill opacity, or dashes) of
    the bands it names, drawn on the panels: normative grey filled, the cycles' SD light in the
    side's colour, the 95 % band as dashed edges in the side's colour."""
    from gaitid.norms import ControlTables, build_norms, control_from_result
    from gaitid.report.canvas import Path, Text, text_width
    from gaitid.report.content import gather
    from gaitid.report.layout import MARGIN
    from gaitid.report.sections import curve_pages

    base = control_from_result(nominal)
    controls = [ControlTables(f"c{i}", base.curves.assign(value=base.curves["value"] + o), base.parameters,
                              base.cycles, base.settings, subject=f"s{i}") for i, o in enumerate([0.0, 0.2, 0.4])]
    pages = {p.kind: p for p in curve_pages(gather(with_unc), normative=build_norms(controls))}
    page = pages["kinetics"]
    texts = [it for it in page.items if isinstance(it, Text) and it.gid == "legend"]
    assert any(t.text.startswith("95 % band of the mean") for t in texts)
    assert len({t.y for t in texts}) >= 2  # the legend wrapped onto a second row
    for t in texts:
        assert MARGIN[0] <= t.x and t.x + text_width(t.text, t.size) <= page.width - MARGIN[2], t.text
    checked = set()
    for page in pages.values():  # the sample's one kinetic cycle per side has no SD: the kinematics page has
        items = [it for it in page.items if isinstance(it, Path) and it.gid]
        legend = {it.gid[len("legend:"):]: it for it in items if it.gid.startswith("legend:")}
        for band in (it for it in items if not it.gid.startswith("legend") and it.gid in legend):
            swatch = legend[band.gid]
            assert (swatch.fill, swatch.stroke, swatch.alpha, swatch.dash) == (band.fill, band.stroke, band.alpha,
                                                                                band.dash), band.gid
            checked.add(band.gid)
    assert {"normative", "sd:Left", "sd:Right", "uncertainty:Left", "uncertainty:Right", "mean:Left",
            "foot_off:Right"} <= checked
    drawn = {it.gid: it for page in pages.values() for it in page.items if isinstance(it, Path)}
    assert drawn["uncertainty:Left"].fill is None and drawn["uncertainty:Left"].stroke == "#d62728"
    assert drawn["sd:Right"].fill == "#2ca02c" and drawn["normative"].fill == "#cccccc"


def test_report_draws_the_bands_and_the_parameter_table(with_unc, nominal, tmp_path):
    """Each kinetic panel of the vector report gets the 95 % band of each side's mean (the
    numbers of band_curves, in data units), the toggle leaves them out, a Result without
    uncertainty gets none; the tables page lists the clinical parameters as value +- SD [95 %]."""
    from gaitid.report.content import gather
    from gaitid.report.sections import curve_pages
    from gaitid.report.uncertainty_pages import parameter_uncertainty_table

    data = gather(with_unc)
    pages = {p.kind: p for p in curve_pages(data)}
    panels = {p.title: p for p in pages["kinetics"].panels}
    b = band_curves(with_unc)
    for title, var, comp in (("Ankle sagittal moment", "AnkleMoment", "X"), ("Hip frontal moment", "HipMoment", "Y"),
                             ("Knee power", "KneePower", "")):
        for side in ("Left", "Right"):
            (s,) = panels[title].get(f"uncertainty:{side}")
            want = b[(b["side"] == side) & (b["variable"] == var) & (b["component"] == comp)]
            np.testing.assert_allclose(s.y, want["low95"], equal_nan=True)
            np.testing.assert_allclose(s.y2, want["high95"], equal_nan=True)
            (mean,) = panels[title].get(f"mean:{side}")  # the band is around the drawn mean
            ok = np.isfinite(s.y) & np.isfinite(mean.y)
            assert ok.sum() > 80 and (s.y[ok] <= mean.y[ok] + 1e-9).mean() > 0.95
    assert not any(s.gid.startswith("uncertainty") for p in pages["kinematics"].panels for s in p.series)
    off = curve_pages(gather(with_unc), uncertainty=False)
    assert not any(s.gid.startswith("uncertainty") for p in off[1].panels for s in p.series)
    none = curve_pages(gather(nominal))
    assert not any(s.gid.startswith("uncertainty") for p in none[1].panels for s in p.series)
    from gaitid.core.errors import DataError

    with pytest.raises(DataError, match="without uncertainty"):
        curve_pages(gather(nominal), uncertainty=True)

    t = parameter_uncertainty_table(data).to_frame()
    row = t[t["Parameter"] == "ankle plantarflexor moment, late stance, peak"].iloc[0]
    s = with_unc.parameters_summary.set_index(["side", "parameter"]).loc[("Left",
                                                                          "ankle plantarflexor moment, late stance, peak")]
    assert row["Unit"] == "N.m/kg"
    assert row["Left: value \u00b1 SD [95 %]"] == (f"{s['mean']:.2f} \u00b1 {s['uncertainty_sd']:.2f} "
                                                   f"[{s['uncertainty_low95']:.2f}, {s['uncertainty_high95']:.2f}]")
    assert row["Left: largest source"].split()[0] in ("joint", "force", "segment", "marker")
    assert parameter_uncertainty_table(gather(nominal)) is None

    paths = with_unc.report(tmp_path, formats=("html",))
    html = paths[0].read_text()
    assert 'id="show-uncertainty" checked' in html and 'class="uncertainty"' in html
    assert 'id="parameter-uncertainty"' in html
    html_off = with_unc.report(tmp_path / "off", formats=("html",), uncertainty=False)[0].read_text()
    assert 'id="show-uncertainty"' not in html_off and 'class="uncertainty"' not in html_off
    assert 'id="parameter-uncertainty"' not in html_off


def test_a_copy_of_the_result_keeps_its_tables_and_the_session_input_too(with_unc):
    """``dataclasses.replace`` runs the Result's __post_init__ again: the uncertainty columns are
    joined once, not twice (they came back suffixed _x and _y, in the session report's input too)."""
    import dataclasses

    from gaitid.batch import pack_result, unpack_result

    for copy in (dataclasses.replace(with_unc), unpack_result(pack_result(with_unc))):
        pd.testing.assert_frame_equal(copy.curves, with_unc.curves)
        pd.testing.assert_frame_equal(copy.parameters, with_unc.parameters)
    copy = dataclasses.replace(with_unc)
    pd.testing.assert_frame_equal(copy.curves_summary, with_unc.curves_summary)
    pd.testing.assert_frame_equal(copy.parameters_summary, with_unc.parameters_summary)


def test_the_uncertainty_columns_are_joined_when_a_table_is_first_read(trials, with_unc, tmp_path):
    """process() builds no table for the uncertainty: each gets its columns when first read, a table
    set later too, once; the curves CSV is written from the table with them, not from the arrays."""
    import dataclasses

    cols = ["uncertainty_sd", "uncertainty_low95", "uncertainty_high95", "uncertainty_sd_linear"]
    fast = process(trials[0], static=trials[1], uncertainty=0)
    assert not fast.curves_built
    assert [c for c in fast.curves.columns if c.startswith("uncertainty")] == cols and fast.curves_built
    fresh = dataclasses.replace(with_unc, curves=None)
    assert not fresh.curves_built
    fresh.to_csv(tmp_path)
    written = pd.read_csv(tmp_path / f"{fresh.name}_curves.csv")
    assert list(written.columns) == list(with_unc.curves.columns) and len(written) == len(with_unc.curves)
    for c in cols:
        np.testing.assert_allclose(written[c], with_unc.curves[c], rtol=1e-12)
    assert written["uncertainty_sd"].notna().sum() > 1000
    fresh.parameters = with_unc.parameters.drop(columns=cols)
    pd.testing.assert_frame_equal(fresh.parameters, with_unc.parameters)
    fresh.parameters = with_unc.parameters  # given with the columns: replaced, not added again
    pd.testing.assert_frame_equal(fresh.parameters, with_unc.parameters)


# ----------------------------------------------------------------------------- memory budget

def test_uncertainty_over_the_memory_budget_is_refused_before_the_batch(trials, monkeypatch):
    """200 samples on the 380-frame walk: 200 Monte Carlo + nominal + 16 noise columns (the first order
    fitted), 3,600 bytes each per frame = 283 MiB, over a 100 MiB budget; the error names the samples,
    the estimate, the budget and the way out, and the samples it suggests do fit."""
    from gaitid.core.errors import BudgetError
    from gaitid.uncertainty.propagate import BYTES_PER_COLUMN_FRAME

    monkeypatch.setenv("GAITID_MEMORY_BUDGET", "100M")
    with pytest.raises(BudgetError) as info:
        process(trials[0], static=trials[1], uncertainty=200)
    need = BYTES_PER_COLUMN_FRAME * (200 + 1 + 16) * 380
    text = str(info.value)
    assert f"200 Monte Carlo samples (217 columns x 380 frames) would need about {need / 2**20:.0f} MiB" in text
    assert "over the memory budget of 100 MiB" in text and "GAITID_MEMORY_BUDGET" in text
    fit = int(text.split("at most ")[1].split()[0])
    assert "--uncertainty N" in info.value.for_cli()
    assert 2 <= fit < 200
    run = process(trials[0], static=trials[1], uncertainty=fit)  # the suggestion fits the same budget
    assert BYTES_PER_COLUMN_FRAME * run.uncertainty.columns * 380 <= 100 * 2**20
    monkeypatch.setenv("GAITID_MEMORY_BUDGET", "1M")  # not even 2 samples fit: only the budget is suggested
    with pytest.raises(BudgetError, match="MiB; raise the environment variable GAITID_MEMORY_BUDGET"):
        process(trials[0], static=trials[1], uncertainty=2)


def test_default_memory_budget_fits_200_samples_on_every_clean_trial(realdata):
    """No false alarm: every C3D trial of the real data at 200 samples (at most 217 + one first-order
    column per input error: under 300 columns) is far under the default 8 GiB budget."""
    from gaitid.io.c3d_check import DEFAULT_MEMORY_BUDGET, check_c3d
    from gaitid.uncertainty.propagate import BYTES_PER_COLUMN_FRAME

    frames = []
    for path in sorted(realdata.rglob("*.c3d")):
        try:
            frames.append(check_c3d(path).n_frames)
        except GaitIDError:  # the deliberately broken files of the test collections
            continue
    assert frames and BYTES_PER_COLUMN_FRAME * 300 * max(frames) < DEFAULT_MEMORY_BUDGET


# ----------------------------------------------------------------------------- decomposed foot loads


@pytest.fixture(scope="module")
def single_belt(tmp_path_factory):
    """A 6 s single-belt treadmill (both feet on the one plate in every double support), processed
    with the first-order uncertainty, with and without the decomposition's errors."""
    from gaitid.validation.synthetic.treadmill_trial import write_treadmill

    path = tmp_path_factory.mktemp("belt") / "single.c3d"
    write_treadmill(path, duration_s=6.0, layout="single", truth=False)
    others = tuple(s for s in SOURCES if s != "decomposition")
    return (process(path, uncertainty=UncertaintySettings(samples=0)),
            process(path, uncertainty=UncertaintySettings(samples=0, sources=others)))


def test_the_decomposition_error_figures_and_streams():
    """The default figures (pooled RMS of the merged real walks) with their source; every source's
    random stream and the marker noise's keep their numbers (a new source takes a new one: the
    marker noise's stream was the number of sources, which appending a source would have moved)."""
    from gaitid.uncertainty.errormodel import NOISE_STREAM, STREAMS

    d = load_error_model().decomposition
    np.testing.assert_allclose(d.force_sd, [0.024, 0.024, 0.014])
    assert d.cop_sd == pytest.approx(0.009) and "bench_shared_plates" in d.source
    assert SOURCES[:4] == ("joint_centres", "bsip", "plates", "markers") and SOURCES[-1] == "decomposition"
    assert [STREAMS[s] for s in SOURCES[:4]] == [0, 1, 2, 3] and NOISE_STREAM == 4
    assert len({*STREAMS.values(), NOISE_STREAM}) == len(STREAMS) + 1


def test_a_batch_column_of_the_decomposition_is_the_processing_of_the_moved_loads(single_belt):
    """One column moving 30 N (lab x, y, z) from the right foot to the left and the left foot's COP
    by 20 mm (lab y) on the decomposed frames gives what the pipeline's own solver and outputs give
    for foot loads moved so, frame by frame; the frames measured alone keep their ground reaction."""
    from dataclasses import replace

    from gaitid.cycles.outputs import output_curves
    from gaitid.pipeline import joint_loads

    r = single_belt[0]
    m = load_model(r.settings.model)
    e, q = np.array([30.0, -30.0, 30.0]), 0.02
    moved = {}
    for side, s in (("Left", 1.0), ("Right", -1.0)):
        ld = r.loads[side]
        dec = (ld.source == "decomposed")[:, None]
        cop = ld.cop_lab + (np.array([0.0, q, 0.0]) if side == "Left" else 0.0)
        moved[side] = replace(ld, force_lab=np.where(dec, ld.force_lab + s * e, ld.force_lab),
                              cop_lab=np.where(dec, cop, ld.cop_lab))
    direct = output_curves(r.kinematics, joint_loads(r.kinematics, moved, r.settings), moved, m, r.settings,
                           r.subject.subject)
    keys = [("shared_force", 0), ("shared_force", 1), ("shared_force", 2), ("shared_cop", "Left", 1)]
    params = [Parameter("decomposition", k, 1.0) for k in keys]
    values = np.array([[0.0] * 4, [*e, q]])
    d = Design(params, values, np.zeros(2, bool), slice(0, 0), 0, slice(1, 1), slice(2, 2), 1.0, 0)
    run = NominalRun(r.trial, m, None, r.settings, r.subject.subject, None, r.kinematics, r.loads, r.outputs, r.cycles)
    curves = column_curves(run, d, 0.0)
    for side in ("Left", "Right"):
        for var in ("AnkleMoment", "KneeMoment", "HipMoment", "HipForce", "GroundReactionForce"):
            want, got = direct.curves[side][var], curves[side][var][:, 1]
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-7, err_msg=f"{side} {var}")
            assert np.nanmax(np.abs(got - r.outputs.curves[side][var])) > 0.01
        measured = r.loads[side].source != "decomposed"
        np.testing.assert_array_equal(curves[side]["GroundReactionForce"][measured, 1],
                                      r.outputs.curves[side]["GroundReactionForce"][measured])


def test_the_band_widens_on_decomposed_frames_only(single_belt):
    """With the decomposition's errors the SD of the vertical ground reaction grows on every
    decomposed frame and is the same on every other; the sagittal moments' grows on the decomposed
    frames (median x 1.3 at least) and is the same, to 0.5 %, beyond the force filter's reach
    (15 frames, 0.15 s at 6 Hz) of any decomposed frame; it is a source of the contributions table."""
    from scipy.ndimage import distance_transform_edt

    with_dec, without = single_belt
    frames = np.asarray(with_dec.trial.frames)
    assert set(with_dec.uncertainty.contributions["source"]) == set(SOURCES)
    for side in ("Left", "Right"):
        dec = with_dec.loads[side].source == "decomposed"
        assert dec.sum() > 100
        far = distance_transform_edt(~dec) > 15
        assert far.sum() > 30
        for var, comp in (("GroundReactionForce", "Z"), ("KneeMoment", "X"), ("HipMoment", "X"), ("AnkleMoment", "X")):
            rows = [f.loc[(f["side"] == side) & (f["variable"] == var) & (f["component"] == comp)].set_index("frame")
                    ["uncertainty_sd"] for f in (with_dec.frames, without.frames)]
            a, b = (x.to_numpy() for x in rows)
            idx = np.searchsorted(frames, rows[0].index.to_numpy())
            on, off = dec[idx], far[idx] if var != "GroundReactionForce" else ~dec[idx]
            ok = np.isfinite(a) & np.isfinite(b)
            if var == "GroundReactionForce":
                assert np.all(a[on & ok] > b[on & ok])
                np.testing.assert_array_equal(a[off & ok], b[off & ok])
            else:
                assert np.median(a[on & ok] / b[on & ok]) > 1.3
                np.testing.assert_allclose(a[off & ok], b[off & ok], rtol=5e-3)
