"""Reports: what the panels draw (read back from each panel's data), the words on the axes
(checked against real walks and marker geometry), the files written (atomic, pages, HTML
sections), tables that fit the page, and the normative CSV checks."""

from __future__ import annotations

import dataclasses
import html
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import REPO, realdata_path

from gaitid.core.errors import DataError, FileFormatError, GaitIDError, SettingsError
from gaitid.report import write_report
from gaitid.report.canvas import Page, Text, text_width
from gaitid.report.content import gather
from gaitid.report.display import Table
from gaitid.report.labels import INTERNAL_MOMENT_POSITIVE, OPPOSITE, sign_label
from gaitid.report.layout import Flow
from gaitid.report.normative import read_normative
from gaitid.report.pages import report_pages, summary_pages
from gaitid.report.plots import contributions_page, kinematics_page, kinetics_page

SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"


@pytest.fixture(scope="module")
def result():
    from gaitid.pipeline import process

    return process(SAMPLE)


def panel(page: Page, title: str):
    found = [p for p in page.panels if p.title == title]
    assert len(found) == 1, [p.title for p in page.panels]
    return found[0]


def _independent_mean(curves: pd.DataFrame, side: str, variable: str, component: str, kinetic_only: bool):
    """Mean over the cycles that have a value (NaN-skipping), straight from Result.curves (the
    pipeline's long table, not the report's arrays), and the cycle count."""
    c = curves[(curves.side == side) & (curves.variable == variable) & (curves.component == component)]
    if kinetic_only:
        c = c[c.kinetic.astype(bool)]
    keys = ["trial", "cycle"] if "trial" in c.columns else ["cycle"]
    wide = np.stack([g.sort_values("percent").value.to_numpy() for _, g in c.groupby(keys)])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(wide, axis=0), wide.shape[0]


def pdf_pages(path: Path) -> int:
    return len(re.findall(rb"/Type /Page\b(?!s)", path.read_bytes()))


def text_extents(page: Page):
    """(text, left, right) of every horizontal text, from the font metrics."""
    out = []
    for t in page.items:
        if isinstance(t, Text) and t.text and not t.rotate:
            w = text_width(t.text, t.size, t.bold)
            left = {"start": t.x, "middle": t.x - w / 2, "end": t.x - w}[t.anchor]
            out.append((t.text, left, left + w))
    return out


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
    assert sign_label("PelvisAngles", "X") == "Anterior tilt (+)"
    assert sign_label("FootProgressAngles", "Z") == "Internal (+)"
    assert sign_label("HipPower", "") == sign_label("HipPower", "", "external") == "Generation (+)"
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

    r = process(realdata_path("biomechzoo/HC030A05.c3d"), convention=convention)
    c = r.curves[r.curves.kinetic.astype(bool)]
    for var, comp, (lo, hi), muscle in STANCE_FACTS:
        w = c[(c.variable == var) & (c.component == comp) & c.percent.between(lo, hi)]
        for side in ("Left", "Right"):
            value = w[w.side == side].value.mean()
            positive = sign_label(var, comp, convention).removesuffix(" (+)")
            meaning = positive if value > 0 else OPPOSITE[positive]
            assert meaning == muscle, (convention, var, comp, side, value)


WALKS = ["biomechzoo/HC030A05.c3d", "c3d-parser/MH0222_BP06.c3d", "btkdata/FunctionalWalk.c3d",
         "python-gaitalytics/test_small.c3d"]


@pytest.mark.realdata
@pytest.mark.parametrize("walk", WALKS)
def test_pelvis_and_foot_progression_words_match_the_markers(walk):
    """'Anterior tilt (+)', 'Up (+)', 'Internal rotation (+)' (left pelvis) and 'Internal (+)' (foot
    progression) against the marker geometry along the direction of progression d (the lab axis the
    pelvis travels along, as the model's progression frame): tilt = PSIS above ASIS, obliquity = left
    ASIS above the right, rotation = left ASIS ahead, foot progression = heel-to-toe turned towards the
    midline in mid-stance."""
    from gaitid.pipeline import process

    r = process(realdata_path(walk))
    t = r.trial
    travel = np.nanmean(np.diff((t.point("LASI") + t.point("RASI"))[:, :2], axis=0), axis=0)
    axis = int(np.argmax(np.abs(travel)))
    d = np.zeros((t.n_frames, 3))
    d[:, axis] = np.sign(travel[axis])
    L, R = t.point("LASI"), t.point("RASI")
    psis = (t.point("LPSI") + t.point("RPSI")) / 2 if t.has_points("LPSI") else t.point("SACR")
    asis = (L + R) / 2
    w = L - R
    wn = np.linalg.norm(w, axis=1)
    geometry = {
        "X": np.degrees(np.arctan2(psis[:, 2] - asis[:, 2], np.einsum("ni,ni->n", asis - psis, d))),
        "Y": np.degrees(np.arcsin((L[:, 2] - R[:, 2]) / wn)),
        "Z": np.degrees(np.arcsin(np.einsum("ni,ni->n", w, d) / wn)),
    }
    pelvis = r.outputs.curves["Left"]["PelvisAngles"]
    for k, comp in enumerate("XYZ"):
        ok = np.isfinite(pelvis[:, k]) & np.isfinite(geometry[comp])
        diff = pelvis[ok, k] - geometry[comp][ok]
        assert abs(diff.mean()) < 3.0, (comp, diff.mean())
        assert np.corrcoef(pelvis[ok, k], geometry[comp][ok])[0, 1] > 0.5, comp
    for c in r.cycles:
        s = (t.time >= c.start_time + 0.2 * (c.foot_off_time - c.start_time)) & (
            t.time <= c.start_time + 0.8 * (c.foot_off_time - c.start_time))
        foot = t.point(c.side[0] + "TOE") - t.point(c.side[0] + "HEE")
        medial = np.cross([0.0, 0.0, 1.0], d) * (1.0 if c.side == "Right" else -1.0)
        towards_midline = np.degrees(np.arctan2(np.einsum("ni,ni->n", foot, medial), np.einsum("ni,ni->n", foot, d)))
        fp = r.outputs.curves[c.side]["FootProgressAngles"][:, 2]
        assert abs(np.nanmean(fp[s]) - np.nanmean(towards_midline[s])) < 5.0, (c.side, c.index)


# --------------------------------------------------------------------------- panels


def test_angle_panel_draws_every_cycle_and_their_mean(result):
    data = gather(result)
    page = kinematics_page(data)
    p = panel(page, "Knee flexion/extension")
    assert "Flexion (+)" in p.ylabel and "deg" in p.ylabel
    for side in ("Left", "Right"):
        mean, n = _independent_mean(result.curves, side, "KneeAngles", "X", kinetic_only=False)
        (line,) = p.get(f"mean:{side}")
        np.testing.assert_allclose(line.x, np.linspace(0, 100, 101))
        np.testing.assert_allclose(line.y, mean, rtol=1e-12, atol=1e-12)
        assert len(p.get(f"cycle:{side}")) == n == sum(c.side == side for c in result.cycles)
        (fo,) = p.get(f"foot_off:{side}")
        assert fo.x[0] == pytest.approx(np.mean([c.foot_off_pct for c in result.cycles if c.side == side]))


def test_kinematics_page_has_pelvis_and_foot_progression(result):
    page = kinematics_page(gather(result))
    titles = [p.title for p in page.panels]
    assert titles[:3] == ["Pelvic tilt", "Pelvic obliquity", "Pelvic rotation"]
    assert titles[-1] == "Foot progression" and len(titles) == 13
    for title, var, comp in (("Pelvic tilt", "PelvisAngles", "X"), ("Foot progression", "FootProgressAngles", "Z")):
        p = panel(page, title)
        mean, _ = _independent_mean(result.curves, "Right", var, comp, kinetic_only=False)
        np.testing.assert_allclose(p.get("mean:Right")[0].y, mean, atol=1e-12)
    assert "Internal (+)" in panel(page, "Foot progression").ylabel


def test_moment_panel_uses_kinetic_cycles_only(result):
    page = kinetics_page(gather(result))
    p = panel(page, "Ankle sagittal moment")
    assert "Dorsiflexor (+)" in p.ylabel and "N.m/kg" in p.ylabel  # internal (default)
    for side in ("Left", "Right"):
        kinetic = [c for c in result.cycles if c.side == side and c.kinetic]
        assert kinetic, "the sample has one kinetic cycle per side"
        mean, n = _independent_mean(result.curves, side, "AnkleMoment", "X", kinetic_only=True)
        np.testing.assert_allclose(p.get(f"mean:{side}")[0].y, mean, rtol=1e-12, atol=1e-12)
        assert len(p.get(f"cycle:{side}")) == n == len(kinetic)
        assert p.get(f"foot_off:{side}")[0].x[0] == pytest.approx(np.mean([c.foot_off_pct for c in kinetic]))
    assert any("internal (net muscle) moments" in t for t in page.texts())  # the convention, once on the page


def test_contributions_add_up_to_the_moment(result):
    page = contributions_page(gather(result))
    p = panel(page, "Left knee sagittal moment")
    parts = {s.gid.split(":")[2]: s.y for s in p.series if s.gid.startswith("part:")}
    assert set(parts) == {"Total", "Inertial", "Velocity", "Gravity", "External"}
    total = parts.pop("Total")
    assert np.nanmax(np.abs(total)) > 0.1  # a real stance moment, N.m/kg
    np.testing.assert_allclose(sum(parts.values()), total, atol=1e-9)
    mean, _ = _independent_mean(result.curves, "Left", "KneeMoment", "X", kinetic_only=True)
    np.testing.assert_allclose(total, mean, atol=1e-12)


def test_grf_is_drawn_in_percent_of_each_valid_stance(result):
    """The vertical GRF panel: each valid contact's plate force from strike to foot off, resampled at
    0..100 % of that stance (checked by linear interpolation of the per-frame table)."""
    page = kinetics_page(gather(result))
    p = panel(page, "GRF vertical")
    assert p.xlabel == "% stance"
    f = result.frames
    for side in ("Left", "Right"):
        (contact,) = [c for c in result.foot_contacts if c.side == side and c.valid]
        z = f[(f.side == side) & (f.variable == "GroundReactionForce") & (f.component == "Z")]
        t = contact.strike_time + np.linspace(0, 1, 101) * (contact.off_time - contact.strike_time)
        expected = np.interp(t, z.time_s.to_numpy(), z.value.to_numpy())
        (line,) = p.get(f"grf:{side}")
        np.testing.assert_allclose(line.y, expected, atol=1e-9)
        assert 9.0 < line.y.max() < 13.0  # a walking stance peak, N/kg
        assert line.y[0] < 2.0 and line.y[-1] < 2.0  # from the threshold crossing to the threshold crossing


def test_normative_band_is_drawn_where_units_match(tmp_path, result):
    csv = tmp_path / "norm.csv"
    csv.write_text("# knee flexion, made up for the test\nvariable,component,percent,mean,sd,unit\n"
                   "KneeAngles,X,0,5,2,deg\nKneeAngles,X,100,25,4,deg\n"
                   "KneeMoment,X,0,0,0.1,BW.H\nKneeMoment,X,100,0,0.1,BW.H\n"
                   "AnklePower,,0,0,1,W/kg\nAnklePower,,50,2,1,W/kg\nAnklePower,,100,0,1,W/kg\n")
    bands = read_normative(csv)
    pd.testing.assert_frame_equal(read_normative(pd.read_csv(csv, comment="#")).table, bands.table)
    data = gather(result)
    (band,) = panel(kinematics_page(data, bands), "Knee flexion/extension").get("normative")
    assert (band.y[-1], band.y2[-1]) == (21.0, 29.0)  # mean 25 +- sd 4 at 100 %
    kin = kinetics_page(data, bands)
    assert not panel(kin, "Knee sagittal moment").get("normative")
    assert any("BW.H" in w and "N.m/kg" in w for w in bands.warnings)
    (band,) = panel(kin, "Ankle power").get("normative")  # a scalar curve: empty component
    np.testing.assert_allclose(band.y2, [1.0, 3.0, 1.0])


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
    csv = tmp_path / "bad_norm.csv"
    csv.write_text(text)
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


@pytest.fixture(scope="module")
def written(result, tmp_path_factory):
    outdir = tmp_path_factory.mktemp("report")
    return outdir, result.report(outdir)


def test_trial_report_files(written, result):
    outdir, (pdf, page) = written
    assert (pdf.name, page.name) == ("walk_synthetic_report.pdf", "walk_synthetic_report.html")
    assert sorted(p.name for p in outdir.iterdir()) == sorted([pdf.name, page.name])  # no temporary debris
    assert pdf.read_bytes().startswith(b"%PDF-") and pdf.read_bytes().rstrip().endswith(b"%%EOF")
    assert pdf_pages(pdf) == len(report_pages(gather(result))) == 5
    text = page.read_text(encoding="utf-8")
    sections = ["summary", "kinematics", "kinetics", "contributions", "kinematic-parameters", "parameters", "cycles",
                "plates", "settings"]
    assert [m for m in re.findall(r'<section id="([a-z-]+)"', text)] == sections
    assert text.index('id="warnings"') < text.index('id="kinematics"')  # the warnings come first
    for table in ("spatiotemporal", "kinematic-parameters", "kinetic-parameters", "cycle-table", "plate-table", "settings-table",
                  "subject-table"):
        assert f'id="{table}"' in text
    assert text.count("<svg ") == 3 and "<img" not in text and "<script" not in text
    assert "http" not in text  # self-contained: nothing fetched
    assert "72.0 kg" in text and "1.75 m" in text  # subject from the file
    assert "ankle plantarflexor moment, late stance, peak" in text  # clinical parameters name their direction
    # the discrete-parameter table shows the cadence mean of the cycles (120 steps/min in the sample)
    cad = result.parameters[result.parameters.parameter == "cadence"]
    left = cad[cad.side == "Left"].value
    assert f"{left.mean():.1f} \u00b1 {left.std(ddof=1):.1f} (n={len(left)})" in text
    for w in result.warnings:
        assert html.escape(w) in text


def test_report_is_written_atomically(tmp_path, result, monkeypatch):
    from reportlab.pdfgen.canvas import Canvas

    old = tmp_path / "walk_synthetic_report.pdf"
    old.write_bytes(b"previous report")

    def broken(self):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Canvas, "save", broken)
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


def test_trial_without_cycles_still_reports(tmp_path, result):
    none = dataclasses.replace(result, cycles=[], curves=result.curves.iloc[:0], parameters=result.parameters.iloc[:0],
                               parameters_summary=None, curves_summary=None)
    data = gather(none)
    p = panel(kinematics_page(data), "Knee flexion/extension")
    assert p.missing == "no complete gait cycle" and not p.get("mean:Left")
    from gaitid.report.display import header_lines, parameter_table

    assert parameter_table(data).empty
    assert "Cycles: no complete cycle" in header_lines(data)
    pdf, html = write_report(none, tmp_path)
    assert "no complete gait cycle" in html.read_text()


def test_session_pools_cycles_of_every_trial(tmp_path, result):
    data = gather([result, result])
    assert data.trials == ["walk_synthetic", "walk_synthetic (2)"]
    p = panel(kinematics_page(data), "Hip flexion/extension")
    both = pd.concat([result.curves.assign(trial="a"), result.curves.assign(trial="b")])
    mean, n = _independent_mean(both, "Right", "HipAngles", "X", kinetic_only=False)
    assert n == 2 * sum(c.side == "Right" for c in result.cycles)
    np.testing.assert_allclose(p.get("mean:Right")[0].y, mean, atol=1e-12)
    assert len(p.get("cycle:Right")) == n
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
    p = panel(kinetics_page(data), "Ankle sagittal moment")
    for side in ("Left", "Right"):
        both = pd.concat([r.curves.assign(trial=r.name) for r in results])
        mean, n = _independent_mean(both, side, "AnkleMoment", "X", kinetic_only=True)
        assert n == sum(c.side == side and c.kinetic for r in results for c in r.cycles) == 2
        np.testing.assert_allclose(p.get(f"mean:{side}")[0].y, mean, atol=1e-12)
    pdf, page = write_report(results, tmp_path)
    assert pdf_pages(pdf) == len(report_pages(data))
    assert "MH0222_BP06" in page.read_text() and "HC030A05" in page.read_text()


# --------------------------------------------------------------------------- text that fits


def test_a_long_table_continues_on_the_next_page_with_its_header():
    rows = [[f"plate {k}", "Right", "rejected: " + "the centre of pressure left the foot outline " * 3]
            for k in range(80)]
    flow = Flow("tables", "title", "Tables", ["footer"])
    flow.table(Table(["Plate", "Foot", "Reason"], rows, wide=("Reason",)))
    assert len(flow.pages) >= 2
    for page in flow.pages:
        texts = page.texts()
        assert texts.count("Reason") == 1  # the header row, repeated on every page
        for text, left, right in text_extents(page):
            assert 0.0 <= left and right <= page.width - 10.0, text
    shown = [t for page in flow.pages for t in page.texts() if t.startswith("plate ")]
    assert shown == [f"plate {k}" for k in range(80)]  # every row, once, in order


def test_long_warnings_are_shown_whole_first(tmp_path, result):
    long = "plate 3: " + " ".join(f"reason{k}" for k in range(150))  # ~1300 characters
    r = dataclasses.replace(result, warnings=[*result.warnings, long])
    pages = summary_pages(gather(r))
    words = " ".join(t for page in pages for t in page.texts())
    assert all(f"reason{k}" in words for k in range(150)) and "..." not in words
    for page in pages:
        for text, left, right in text_extents(page):
            assert 0.0 <= left and right <= page.width - 10.0, text
    (_, html) = write_report(r, tmp_path)
    assert long in html.read_text()


def test_dollar_signs_are_text_and_matplotlib_is_not_used(tmp_path):
    """A '$' in a label or a unit is drawn as it is: the report never goes through matplotlib (so no
    mathtext) -- checked in a fresh interpreter that writes a report without importing it."""
    code = ("import sys, dataclasses; from gaitid.pipeline import process; from gaitid.report import write_report;"
            f"r = process({str(SAMPLE)!r});"
            "o = dataclasses.replace(r.outputs, units={**r.outputs.units, 'KneeAngles': '$deg$'});"
            "r = dataclasses.replace(r, outputs=o, trial=dataclasses.replace(r.trial, subject=dataclasses.replace("
            "r.trial.subject, name='$\\\\alpha$ walker')));"
            f"write_report(r, {str(tmp_path)!r});"
            "print('matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"
    html = (tmp_path / "walk_synthetic_report.html").read_text()
    assert "[$deg$]" in html and "$\\alpha$ walker" in html
    assert b"$deg$" in _pdf_text(tmp_path / "walk_synthetic_report.pdf")


def _pdf_text(path: Path) -> bytes:
    """The PDF's page streams, decompressed (reportlab writes text as '(...) Tj')."""
    import zlib

    raw = path.read_bytes()
    out = b""
    for m in re.finditer(rb"stream\r?\n(.*?)endstream", raw, re.S):
        try:
            out += zlib.decompress(m.group(1))
        except zlib.error:
            out += m.group(1)
    return out


def test_norm_and_gait_index_slots(tmp_path, result):
    """The first page's slots: a 'Norm' column when the normative data give spatio-temporal norms
    (parameter_band), a gait-index table when GPS/MAP values are given; nothing otherwise."""
    from gaitid.report.display import clinical_table, parameter_table

    class Norms:  # the interface the norms module provides
        def band(self, variable, component, unit=None):
            return None

        def parameter_band(self, parameter, unit):
            return (1.35, 0.12) if (parameter, unit) == ("walking_speed", "m/s") else None

    data = gather(result)
    plain = parameter_table(data, "spatiotemporal")
    assert plain.columns == ["Parameter", "Unit", "Left", "Right"]
    with_norms = parameter_table(data, "spatiotemporal", Norms())
    assert with_norms.columns[-1] == "Norm (mean \u00b1 SD)"
    rows = {row[0]: row[-1] for row in with_norms.rows}
    assert rows["Walking speed"] == "1.350 \u00b1 0.120" and rows["Cadence"] == "\u2013"
    assert clinical_table(data) is None
    gps = pd.DataFrame({"measure": ["GPS", "GPS", "GPS", "MAP knee flexion"],
                        "side": ["Left", "Right", "Overall", "Left"], "value": [5.21, 6.02, 5.63, 7.9],
                        "unit": ["deg"] * 4})
    table = clinical_table(data, gps)
    assert table.columns == ["Index", "Unit", "Left", "Right", "Overall"]
    assert table.rows[0] == ["GPS", "deg", "5.2", "6.0", "5.6"] and table.rows[1][3:] == ["\u2013", "\u2013"]
    pdf, html = write_report(result, tmp_path, normative=Norms(), clinical=gps)
    text = html.read_text()
    assert 'id="gait-indices"' in text and "1.350 \u00b1 0.120" in text
    summary = " ".join(t for page in summary_pages(data, Norms(), gps) for t in page.texts())
    assert "Gait indices" in summary
    assert "next page" not in summary  # no GVS/GPS profile here, so no MAP page follows


def test_grf_without_a_direction_of_progression_is_in_lab_axes(result, monkeypatch):
    import gaitid.report.content as report_data

    monkeypatch.setattr(report_data, "progression_axes", lambda r: None)
    page = kinetics_page(gather(result))
    titles = [p.title for p in page.panels][-3:]
    assert titles == ["GRF lab X", "GRF lab Y", "GRF vertical"]
    (contact,) = [c for c in result.foot_contacts if c.side == "Right" and c.valid]
    f = result.frames
    x = f[(f.side == "Right") & (f.variable == "GroundReactionForce") & (f.component == "X")]
    t = contact.strike_time + np.linspace(0, 1, 101) * (contact.off_time - contact.strike_time)
    np.testing.assert_allclose(panel(page, "GRF lab X").get("grf:Right")[0].y,
                               np.interp(t, x.time_s.to_numpy(), x.value.to_numpy()), atol=1e-9)


def test_kinetic_and_kinematic_parameter_tables_hold_their_own_rows(result):
    """The 'Kinetic parameters' table holds moments, powers and forces only; the clinical angles
    (knee flexion in swing, ankle dorsiflexion in stance...) are in the 'Kinematic parameters' table."""
    from gaitid.report.display import parameter_table

    data = gather(result)
    kinetic, kinematic = parameter_table(data, "kinetic"), parameter_table(data, "kinematic")
    assert {row[1] for row in kinetic.rows} == {"N.m/kg", "W/kg"}
    assert {row[1] for row in kinematic.rows} == {"deg"}
    assert "knee flexion, swing, peak" in [row[0] for row in kinematic.rows]
    assert not any("flexion" in row[0] or "range" in row[0] for row in kinetic.rows)
    summary = result.parameters_summary
    n_kinetic = summary[summary["variable"].str.endswith(("Moment", "Power", "Force"))]["parameter"].nunique()
    n_angles = summary[summary["variable"].str.endswith("Angles")]["parameter"].nunique()
    assert (len(kinetic.rows), len(kinematic.rows)) == (n_kinetic, n_angles) == (19, 10)


def test_an_absent_moment_peak_reads_absent_in_the_report(result):
    """A moment peak absent from its window (NaN, note 'absent: ...') in every left cycle shows
    'absent'; absent in one of the right cycles, the mean of the others with 'absent in 1'; a note says
    what it means. Never a number of the wrong sign."""
    from gaitid.cycles.parameters import summarise
    from gaitid.report.display import ABSENT_NOTE, parameter_table

    name = "ankle dorsiflexor moment, loading response, peak"
    p = result.parameters.copy()
    right = p[(p["parameter"] == name) & (p["side"] == "Right")].index
    hit = ((p["parameter"] == name) & (p["side"] == "Left")) | p.index.isin(right[:1])
    p.loc[hit, ["value", "percent"]] = np.nan
    p.loc[hit, "note"] = "absent: no dorsiflexor moment in the loading response"
    p = pd.concat([p, p[p["parameter"] == name].iloc[:1].assign(side="Right", cycle=99, value=0.25, percent=8.0, note="")])
    changed = dataclasses.replace(result, parameters=p, parameters_summary=summarise(p))
    table = parameter_table(gather(changed), "kinetic")
    row = next(r for r in table.rows if r[0] == name)
    assert row[2] == "absent" and row[3] == "\u2013"
    assert row[4].endswith("; absent in 1)") and "(n=1" in row[4] and row[4].startswith("0.250")
    assert table.notes == [ABSENT_NOTE]
    assert parameter_table(gather(result), "kinetic").notes == []


def test_the_reports_cycle_numbers_are_the_tables(result):
    """Cycle N of the report's 'Gait cycles' table is cycle N of the cycles, curves and parameters
    tables and of Result.cycles: the same start time; numbered from 1."""
    from gaitid.cycles.curves import cycles_table as result_cycles
    from gaitid.report.display import cycles_table

    shown = cycles_table(gather(result))
    col = {c: i for i, c in enumerate(shown.columns)}
    table = result_cycles(result.cycles).set_index(["side", "cycle"])
    assert sorted(set(table.index.get_level_values("cycle"))) == [1, 2, 3]
    for row in shown.rows:
        key = (row[col["Side"]], int(row[col["Cycle"]]))
        assert row[col["Start [s]"]] == f"{table.loc[key, 'start_time_s']:.3f}"
    assert {(r[col["Side"]], int(r[col["Cycle"]])) for r in shown.rows} == set(table.index) \
        == set(zip(result.curves["side"], result.curves["cycle"])) \
        == set(zip(result.parameters["side"], result.parameters["cycle"])) \
        == {(c.side, c.index) for c in result.cycles}
