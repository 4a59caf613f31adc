"""Reports: what the figures draw (read back from the Line2D data), the files written
(atomic, page count, HTML sections), the sign labels and the normative CSV checks."""

from __future__ import annotations

import dataclasses
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_pdf import PdfPages

from gaitid.errors import DataError, FileFormatError, GaitIDError, SettingsError
from gaitid.report import write_report
from gaitid.report.data import gather
from gaitid.report.labels import INTERNAL_MOMENT_POSITIVE, sign_label
from gaitid.report.normative import read_normative
from gaitid.report.pdf import N_PAGES
from gaitid.report.plots import contributions_figure, joint_grid, power_grf_figure

from conftest import REPO, realdata_path

SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"


@pytest.fixture(scope="module")
def result():
    from gaitid.pipeline import process

    return process(SAMPLE)


def _axis(fig, title: str):
    found = [ax for ax in fig.axes if ax.get_title() == title]
    assert len(found) == 1, [ax.get_title() for ax in fig.axes]
    return found[0]


def _lines(ax, gid: str):
    return [ln for ln in ax.get_lines() if ln.get_gid() == gid]


def _independent_mean(curves: pd.DataFrame, side: str, variable: str, component: str, kinetic_only: bool):
    """Mean over the cycles that have a value (NaN-skipping), straight from Result.curves (not via
    gaitid.cycles.summarise), and the cycle count."""
    c = curves[(curves.side == side) & (curves.variable == variable) & (curves.component == component)]
    if kinetic_only:
        c = c[c.kinetic.astype(bool)]
    keys = ["trial", "cycle"] if "trial" in c.columns else ["cycle"]
    wide = np.stack([g.sort_values("percent").value.to_numpy() for _, g in c.groupby(keys)])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(wide, axis=0), wide.shape[0]


# --------------------------------------------------------------------------- labels


def test_sign_labels_follow_the_convention():
    assert sign_label("AnkleMoment", "X", "external") == "Plantarflexor (+)"  # Plug-in Gait's outputs
    assert sign_label("KneeMoment", "X", "external") == "Extensor (+)"
    assert sign_label("HipMoment", "X", "external") == "Extensor (+)"
    assert sign_label("HipMoment", "Y", "external") == "Abductor (+)"
    assert sign_label("AnkleMoment", "X") == sign_label("AnkleMoment", "X", "internal") == "Dorsiflexor (+)"
    assert sign_label("KneeMoment", "X", "internal") == "Flexor (+)"
    assert sign_label("KneeAngles", "X") == sign_label("KneeAngles", "X", "external") == "Flexion (+)"
    assert sign_label("AnkleAngles", "X") == "Dorsiflexion (+)"
    assert sign_label("HipPower", "") == sign_label("HipPower", "", "external") == "Generation (+)"
    # contribution parts carry their moment's sign; every moment label flips with the convention
    assert sign_label("AnkleMomentGravity", "X") == sign_label("AnkleMoment", "X")
    for (var, comp), group in INTERNAL_MOMENT_POSITIVE.items():
        ext = sign_label(var, comp, "external")
        assert ext.endswith(" (+)") and ext != f"{group} (+)"
        assert sign_label(var, comp, "internal") == f"{group} (+)"
    with pytest.raises(ValueError):
        sign_label("AnkleMoment", "X", "inside")


# (variable, component, % cycle window, the muscle moment every healthy stance has there)
STANCE_FACTS = [
    ("AnkleMoment", "X", (40, 50), "Plantarflexor"),  # push-off
    ("KneeMoment", "X", (10, 18), "Extensor"),  # loading response
    ("HipMoment", "X", (0, 8), "Extensor"),  # early stance
    ("HipMoment", "Y", (20, 50), "Abductor"),  # single support
]


@pytest.mark.realdata
@pytest.mark.parametrize("convention", ["internal", "external"])
def test_sign_labels_match_real_stance_moments(convention):
    """The label's words must describe the sign the pipeline actually produces: on a real walk,
    the mean curve over the window has the sign the label gives the known muscle moment."""
    from gaitid.pipeline import process
    from gaitid.report.labels import OPPOSITE

    r = process(realdata_path("biomechzoo/HC030A05.c3d"), convention=convention)
    c = r.curves[r.curves.kinetic.astype(bool)]
    for var, comp, (lo, hi), muscle in STANCE_FACTS:
        w = c[(c.variable == var) & (c.component == comp) & c.percent.between(lo, hi)]
        for side in ("Left", "Right"):
            value = w[w.side == side].value.mean()
            positive = sign_label(var, comp, convention).removesuffix(" (+)")
            meaning = positive if value > 0 else OPPOSITE[positive]
            assert meaning == muscle, (convention, var, comp, side, value)


# --------------------------------------------------------------------------- figures


def test_angle_panel_draws_every_cycle_and_their_mean(result):
    data = gather(result)
    fig = joint_grid(data, "Angles")
    ax = _axis(fig, "Knee sagittal")
    assert "Flexion (+)" in ax.get_ylabel() and "deg" in ax.get_ylabel()
    for side in ("Left", "Right"):
        mean, n = _independent_mean(result.curves, side, "KneeAngles", "X", kinetic_only=False)
        (line,) = _lines(ax, f"mean:{side}")
        np.testing.assert_allclose(line.get_xdata(), np.linspace(0, 100, 101))
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12, atol=1e-12)
        assert len(_lines(ax, f"cycle:{side}")) == n == sum(c.side == side for c in result.cycles)
        (fo,) = _lines(ax, f"foot_off:{side}")
        expected = np.mean([c.foot_off_pct for c in result.cycles if c.side == side])
        assert fo.get_xdata()[0] == pytest.approx(expected)


def test_moment_panel_uses_kinetic_cycles_only(result):
    data = gather(result)
    fig = joint_grid(data, "Moment")
    ax = _axis(fig, "Ankle sagittal moment")
    assert "Dorsiflexor (+)" in ax.get_ylabel() and "N.m/kg" in ax.get_ylabel()  # internal (default)
    for side in ("Left", "Right"):
        kinetic = [c for c in result.cycles if c.side == side and c.kinetic]
        assert kinetic, "the sample has one kinetic cycle per side"
        mean, n = _independent_mean(result.curves, side, "AnkleMoment", "X", kinetic_only=True)
        (line,) = _lines(ax, f"mean:{side}")
        np.testing.assert_allclose(line.get_ydata(), mean, rtol=1e-12, atol=1e-12)
        assert len(_lines(ax, f"cycle:{side}")) == n == len(kinetic)
        (fo,) = _lines(ax, f"foot_off:{side}")
        assert fo.get_xdata()[0] == pytest.approx(np.mean([c.foot_off_pct for c in kinetic]))


def test_contributions_add_up_to_the_moment(result):
    data = gather(result)
    fig = contributions_figure(data)
    ax = _axis(fig, "Left knee sagittal moment")
    parts = {ln.get_gid().split(":")[2]: ln.get_ydata() for ln in ax.get_lines()
             if (ln.get_gid() or "").startswith("part:")}
    assert set(parts) == {"Total", "Inertial", "Velocity", "Gravity", "External"}
    total = parts.pop("Total")
    assert np.nanmax(np.abs(total)) > 0.1  # a real stance moment, N.m/kg
    np.testing.assert_allclose(sum(parts.values()), total, atol=1e-9)
    mean, _ = _independent_mean(result.curves, "Left", "KneeMoment", "X", kinetic_only=True)
    np.testing.assert_allclose(total, mean, atol=1e-12)


def test_grf_vertical_is_the_plate_force(result):
    fig = power_grf_figure(gather(result))
    ax = _axis(fig, "GRF vertical")
    f = result.frames
    for side in ("Left", "Right"):
        (line,) = _lines(ax, f"grf:{side}")
        z = f[(f.side == side) & (f.variable == "GroundReactionForce") & (f.component == "Z")].value.to_numpy()
        y = line.get_ydata()
        on = np.isfinite(y)
        np.testing.assert_allclose(y[on], z[on])
        assert np.nanmax(y) > 9.0  # stance peak above body weight / mass (N/kg)
        assert np.all(np.isnan(y[np.abs(np.nan_to_num(z)) == 0]))  # swing is not drawn as a zero line


def test_side_without_kinetic_cycle_says_so(result):
    cycles = [dataclasses.replace(c, kinetic=False, reason="test") if c.side == "Right" else c for c in result.cycles]
    curves = result.curves.copy()
    curves.loc[curves.side == "Right", "kinetic"] = False
    left_only = dataclasses.replace(result, cycles=cycles, curves=curves)
    fig = joint_grid(gather(left_only), "Moment")
    ax = _axis(fig, "Knee sagittal moment")
    assert _lines(ax, "mean:Left") and not _lines(ax, "mean:Right")
    assert any("Right: no kinetic cycle" in t.get_text() for t in ax.texts)
    none = dataclasses.replace(result, cycles=[dataclasses.replace(c, kinetic=False) for c in result.cycles],
                               curves=result.curves.assign(kinetic=False))
    data = gather(none)
    ax = _axis(joint_grid(data, "Moment"), "Hip frontal moment")
    assert not ax.get_lines()[1:] or not any((ln.get_gid() or "").startswith("mean:") for ln in ax.get_lines())
    assert [t.get_text() for t in ax.texts] == ["no kinetic cycle"]
    ax = _axis(contributions_figure(data), "Right ankle sagittal moment")
    assert [t.get_text() for t in ax.texts] == ["no kinetic cycle"]
    # angles need no plate: still drawn
    assert _lines(_axis(joint_grid(data, "Angles"), "Hip sagittal"), "mean:Right")


# --------------------------------------------------------------------------- normative


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_normative_band_is_drawn_where_units_match(tmp_path, result):
    csv = _write(tmp_path / "norm.csv",
                 "# knee flexion, made up for the test\nvariable,component,percent,mean,sd,unit\n"
                 "KneeAngles,X,0,5,2,deg\nKneeAngles,X,100,25,4,deg\n"
                 "KneeMoment,X,0,0,0.1,BW.H\nKneeMoment,X,100,0,0.1,BW.H\n"
                 "AnklePower,,0,0,1,W/kg\nAnklePower,,50,2,1,W/kg\nAnklePower,,100,0,1,W/kg\n")
    bands = read_normative(csv)
    from_frame = read_normative(pd.read_csv(csv, comment="#"))
    pd.testing.assert_frame_equal(from_frame.table, bands.table)
    fig = joint_grid(gather(result), "Angles", bands)
    (band,) = [c for c in _axis(fig, "Knee sagittal").collections if c.get_gid() == "normative"]
    verts = band.get_paths()[0].vertices
    upper = verts[(verts[:, 0] == 100)]
    assert sorted(set(upper[:, 1])) == [21.0, 29.0]  # mean 25 +- sd 4 at 100 %
    fig = joint_grid(gather(result), "Moment", bands)
    assert not [c for c in _axis(fig, "Knee sagittal moment").collections if c.get_gid() == "normative"]
    assert any("BW.H" in w and "N.m/kg" in w for w in bands.warnings)
    fig = power_grf_figure(gather(result), bands)  # a scalar curve: empty component
    (band,) = [c for c in _axis(fig, "Ankle power").collections if c.get_gid() == "normative"]
    assert set(band.get_paths()[0].vertices[:, 1]) >= {-1.0, 1.0, 3.0}


@pytest.mark.parametrize("text, error, words", [
    ("variable,component,percent,mean\nKneeAngles,X,0,1\n", FileFormatError, ["sd"]),
    ("variable,component,percent,mean,sd\nKneeAngles,X,0,1,1\nKneeAngles,X,ten,1,1\n", FileFormatError,
     ["percent", "row 3", "ten"]),
    ("variable,component,percent,mean,sd\nKneeAngles,X,0,1,1\nKneeAngles,X,120,1,1\n", DataError,
     ["percent", "0-100"]),
    ("variable,component,percent,mean,sd\nKneeAngles,X,0,1,-1\nKneeAngles,X,100,1,1\n", DataError, ["sd", ">= 0"]),
    ("variable,component,percent,mean,sd\nKneeAngles,X,0,1,1\nKneeAngles,X,0,2,1\n", DataError, ["repeats"]),
    ("variable,component,percent,mean,sd\nKneeAngles,Q,0,1,1\nKneeAngles,Q,100,1,1\n", DataError, ["component"]),
    ("variable,component,percent,mean,sd\nKneeAngles,X,0,1,1\n", DataError, ["single point"]),
    ("variable,component,percent,mean,sd,unit\nKneeAngles,X,0,1,1,deg\nKneeAngles,X,100,1,1,rad\n", DataError,
     ["mixes units"]),
])
def test_normative_errors_name_file_and_column(tmp_path, text, error, words):
    csv = _write(tmp_path / "bad_norm.csv", text)
    with pytest.raises(error) as info:
        read_normative(csv)
    message = str(info.value)
    assert "bad_norm.csv" in message
    for w in words:
        assert w in message


def test_normative_missing_file(tmp_path):
    with pytest.raises(FileFormatError, match="not found"):
        read_normative(tmp_path / "absent.csv")


# --------------------------------------------------------------------------- files


def _pdf_pages(path: Path) -> int:
    return len(re.findall(rb"/Type /Page\b(?!s)", path.read_bytes()))


@pytest.fixture(scope="module")
def written(result, tmp_path_factory):
    outdir = tmp_path_factory.mktemp("report")
    return outdir, result.report(outdir)


def test_trial_report_files(written, result):
    outdir, (pdf, page) = written
    assert (pdf.name, page.name) == ("walk_synthetic_report.pdf", "walk_synthetic_report.html")
    assert sorted(p.name for p in outdir.iterdir()) == sorted([pdf.name, page.name])  # no temporary debris
    assert _pdf_pages(pdf) == N_PAGES == 6
    text = page.read_text(encoding="utf-8")
    for section in ("summary", "kinematics", "moments", "powers-grf", "contributions", "parameters", "cycles",
                    "plates", "warnings", "settings"):
        assert f'<section id="{section}"' in text
    for table in ("spatiotemporal", "kinetic-parameters", "cycle-table", "plate-table", "settings-table"):
        assert f'id="{table}"' in text
    assert text.count('src="data:image/png;base64,') == 4
    assert "http" not in text.replace("http-equiv", "")  # self-contained: nothing fetched
    assert "72.0 kg" in text and "1.75 m" in text  # subject from the file
    assert "ankle plantarflexor moment, late stance, peak" in text  # clinical parameters name their direction
    # the discrete-parameter table shows the cadence mean of the cycles (120 steps/min in the sample)
    cad = result.parameters[result.parameters.parameter == "cadence"]
    left = cad[cad.side == "Left"].value
    assert f"{left.mean():.1f} \u00b1 {left.std(ddof=1):.1f} (n={len(left)})" in text
    for w in result.warnings:
        assert w.replace("'", "&#x27;") in text


def test_report_is_written_atomically(tmp_path, result, monkeypatch):
    old = tmp_path / "walk_synthetic_report.pdf"
    old.write_bytes(b"previous report")

    def broken(self, figure=None, **kw):
        raise RuntimeError("disk full")

    monkeypatch.setattr(PdfPages, "savefig", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        write_report(result, tmp_path, formats=("pdf",))
    assert old.read_bytes() == b"previous report"  # the previous report survives a failed run
    assert [p.name for p in tmp_path.iterdir()] == [old.name]  # and no temporary file is left


def test_bad_format_or_folder_is_a_gaitid_error(tmp_path, result):
    with pytest.raises(SettingsError, match="docx"):
        write_report(result, tmp_path, formats=("docx",))
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    with pytest.raises(GaitIDError, match="cannot write the HTML report") as info:
        write_report(result, not_a_folder, formats=("html",))
    assert info.value.path == not_a_folder / "walk_synthetic_report.html"


def test_trial_without_cycles_still_reports(result):
    none = dataclasses.replace(result, cycles=[], curves=result.curves.iloc[:0], parameters=result.parameters.iloc[:0],
                               parameters_summary=None, curves_summary=None)
    data = gather(none)
    ax = _axis(joint_grid(data, "Angles"), "Knee sagittal")
    assert [t.get_text() for t in ax.texts] == ["no complete gait cycle"] and not ax.get_lines()[1:]
    from gaitid.report.tables import header_lines, parameter_table

    assert parameter_table(data).empty
    assert "Cycles: no complete cycle" in header_lines(data)


def test_session_pools_cycles_of_every_trial(tmp_path, result):
    data = gather([result, result])
    assert data.trials == ["walk_synthetic", "walk_synthetic (2)"]
    ax = _axis(joint_grid(data, "Angles"), "Hip sagittal")
    mean, n = _independent_mean(data.curves, "Right", "HipAngles", "X", kinetic_only=False)
    assert n == 2 * sum(c.side == "Right" for c in result.cycles)
    np.testing.assert_allclose(_lines(ax, "mean:Right")[0].get_ydata(), mean, atol=1e-12)
    assert len(_lines(ax, "cycle:Right")) == n
    external = dataclasses.replace(result, settings=result.settings.replace(convention="external"))
    with pytest.raises(DataError, match="convention='external'"):
        gather([result, external])  # internal and external moments cannot be pooled
    paths = write_report([result, result], tmp_path, formats=("html",), name="lab session")
    assert [p.name for p in paths] == ["lab_session_report.html"]
    text = paths[0].read_text()
    assert "Session: 2 trials" in text and "walk_synthetic (2)" in text
    cells = [f"<td>{sum(c.side == s for c in result.cycles)} ({sum(c.side == s and c.kinetic for c in result.cycles)})"
             "</td>" for s in ("Left", "Right")]
    table = text[text.index('id="trial-table"'):]
    table = table[: table.index("</table>")]
    assert [table.count(c) for c in cells] == [2 * cells.count(c) for c in cells]  # both trials, per side


@pytest.mark.realdata
@pytest.mark.slow
def test_session_of_two_real_trials(tmp_path):
    from gaitid.pipeline import process

    results = [process(realdata_path("c3d-parser/MH0222_BP06.c3d")), process(realdata_path("biomechzoo/HC030A05.c3d"))]
    data = gather(results)
    fig = joint_grid(data, "Moment")
    ax = _axis(fig, "Ankle sagittal moment")
    for side in ("Left", "Right"):
        both = pd.concat([r.curves.assign(trial=r.name) for r in results])
        mean, n = _independent_mean(both, side, "AnkleMoment", "X", kinetic_only=True)
        assert n == sum(c.side == side and c.kinetic for r in results for c in r.cycles) == 2
        np.testing.assert_allclose(_lines(ax, f"mean:{side}")[0].get_ydata(), mean, atol=1e-12)
    pdf, page = write_report(results, tmp_path)
    assert _pdf_pages(pdf) == N_PAGES
    assert "MH0222_BP06" in page.read_text() and "HC030A05" in page.read_text()


def test_table_page_that_runs_out_of_room_says_where_the_rest_is():
    import pandas as pd

    from gaitid.report.plots import table_figure

    big = pd.DataFrame({"a": range(40), "b": range(40)})
    fig = table_figure("title", [("first", big), ("second", big), ("third", big)], max_rows=40, bottom=0.12)
    texts = [t.get_text() for t in fig.texts]
    assert any("see the HTML report" in t for t in texts)
