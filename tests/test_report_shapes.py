"""The report renders for every shape of Result the pipeline produces (tests/report_shapes.py):
both files written, every page's text inside the page, and each panel saying what it shows or
why it is empty -- derived from the Result itself, so a new shape is one entry in SHAPES."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import REALDATA
from report_shapes import SHAPES, Sources

from gaitid.core.vocabulary import SIDES
from gaitid.report import write_report
from gaitid.report.canvas import Text, text_width
from gaitid.report.content import gather
from gaitid.report.pages import report_pages

_built: dict = {}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    return Sources(tmp_path_factory.mktemp("shapes"))


def build(shape, sources):
    if shape.realdata and not REALDATA.is_dir():
        pytest.skip(f"real data not available: {REALDATA} is absent")
    if shape.name not in _built:
        _built[shape.name] = shape.build(sources)
    return _built[shape.name]


def panel(pages, title):
    (p,) = [p for page in pages for p in page.panels if p.title == title]
    return p


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_report_renders(shape, sources, tmp_path):
    r = build(shape, sources)
    pdf, html = write_report(r, tmp_path)
    assert pdf.read_bytes().startswith(b"%PDF-") and html.read_text().rstrip().endswith("</html>")
    data = gather(r)
    pages = report_pages(data)
    page_texts = " ".join(t for page in pages for t in page.texts())
    text = html.read_text()

    # what each panel says follows from the Result: a side draws moments only with a kinetic cycle,
    # the GRF only with a valid, complete plate contact, angles with any complete cycle
    for side in SIDES:
        kinetic = any(c.side == side and c.kinetic for c in r.cycles)
        moment = panel(pages, "Knee sagittal moment")
        assert bool(moment.get(f"mean:{side}")) == kinetic, side
        if not kinetic:
            assert (f"{side}: no kinetic cycle", "#d62728" if side == "Left" else "#2ca02c") in moment.notes \
                or moment.missing == "no kinetic cycle"
        stance = any(c.side == side and c.valid and c.complete for c in r.foot_contacts)
        grf = panel(pages, "GRF vertical")
        assert bool(grf.get(f"grf:{side}")) == stance, side
        cycles = any(c.side == side for c in r.cycles)
        assert bool(panel(pages, "Knee flexion/extension").get(f"mean:{side}")) == cycles
    if not r.cycles:
        assert "no complete gait cycle" in page_texts

    # the first page names every rejected contact with its reason, and a contact without a foot
    for c in r.foot_contacts:
        if not c.valid:
            assert (c.reason or "no reason recorded") in page_texts  # wrapped at spaces, joined by spaces
            assert c.reason in text
        if c.side is None:
            assert "no foot assigned" in page_texts and "no foot assigned" in text
    if not r.trial.force_plates:
        assert "no force plates in the trial: kinematics only" in text

    # nothing runs off a page
    for page in pages:
        for t in page.items:
            if isinstance(t, Text) and t.text and not t.rotate:
                w = text_width(t.text, t.size, t.bold)
                left = {"start": t.x, "middle": t.x - w / 2, "end": t.x - w}[t.anchor]
                assert left >= 0.0 and left + w <= page.width - 10.0, (page.heading, t.text)
                assert 0.0 < t.y < page.height, (page.heading, t.text)
    for page in pages:
        for p in page.panels:
            for s in p.series:
                assert s.y is None or len(s.y) == len(s.x)
            assert np.all(np.isfinite(p.box))

    # the EMG pages: exactly when the Result has EMG channels with a side and muscle; a panel per
    # muscle used, each channel not drawn named with its reason
    emg = getattr(r, "emg", None)
    drawn = [page for page in pages if page.kind == "emg"]
    placed = emg is not None and any(c.side and c.muscle != c.channel for c in emg.channels)
    assert bool(drawn) == placed == ('<section id="emg">' in text)
    if drawn:
        assert {p.title for page in drawn for p in page.panels} == {c.muscle for c in emg.used}
        assert all(f"{c.channel}: {c.problem}"[:40] in page_texts for c in emg.channels if c.problem)


@pytest.fixture(scope="module")
def norms(sources):
    """Norms from four copies of the sample walk, every curve shifted 0, 1, 2 and 3 (as in test_norms)."""
    from report_shapes import SAMPLE, _process

    from gaitid.norms import ControlTables, build_norms, control_from_result

    base = control_from_result(_process(SAMPLE))
    return build_norms([ControlTables(f"c{i}", base.curves.assign(value=base.curves["value"] + i), base.parameters,
                                      base.cycles, base.settings, subject=f"s{i}") for i in range(4)])


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_report_with_norms_renders(shape, sources, norms, tmp_path):
    """With norms (run/batch --norms): the scores are computed for every shape, the report draws the
    bands and the MAP page when there is a cycle to score, and says why not when there is none."""
    from gaitid.cycles.scores import gait_scores

    r = build(shape, sources)
    scores = gait_scores(r, norms.in_convention(r.settings.convention))
    pdf, html = write_report(r, tmp_path, normative=norms.in_convention(r.settings.convention), clinical=scores)
    assert pdf.read_bytes().startswith(b"%PDF-") and html.read_text().rstrip().endswith("</html>")
    gps = scores[(scores["score"] == "GPS") & (scores["side"] == "Overall")]["value"]
    gvs = scores[scores["score"] == "GVS"]
    assert (gvs["value"].notna() | (gvs["note"] != "")).all()  # a number, or NaN with the reason
    if r.cycles and gvs["value"].notna().all():
        assert len(gps) == 1 and np.isfinite(gps.iloc[0]) and gps.iloc[0] > 0
        assert 'id="map"' in html.read_text()
    elif not r.cycles:
        assert gps.isna().all() and set(gvs["note"]) == {"no cycle on this side"}
    if r.settings.model == "isb":  # no foot progression angle in the ISB model's outputs
        fp = gvs[gvs["name"] == "foot progression"]
        assert fp["value"].isna().all() and fp["note"].str.startswith("no FootProgressAngles").all()


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_tables_export_for_every_shape(shape, sources, tmp_path):
    """Every table of every shape is written as CSV and Parquet; the per-cycle CSV, written from
    the arrays without building the table, is the built table's CSV byte for byte."""
    import dataclasses

    from gaitid.export import TABLES, write_csv, write_tables

    r = build(shape, sources)
    fresh = dataclasses.replace(r, curves=None)  # as process() returns it: the curves table not built
    assert not fresh.curves_built
    for fmt in ("csv", "parquet"):
        written = write_tables(fresh, tmp_path / fmt, fmt)
        skip = ({"emg", "emg_timing"} if r.emg is None else set()) | {"fills"}  # EMG: with EMG; fills: with gaps
        assert sorted(p.name for p in written) == sorted(f"{r.name}_{t}.{fmt}" for t in TABLES if t not in skip)
        assert all(p.is_file() for p in written)
    write_csv(r.curves, tmp_path / "built.csv")
    assert (tmp_path / "csv" / f"{r.name}_curves.csv").read_bytes() == (tmp_path / "built.csv").read_bytes()


def test_batch_reports_a_trial_with_a_contact_without_a_foot(tmp_path):
    """The issue's batch symptom: the trial is 'ok' (not failed after its tables were written) and is
    in the folder's session report."""
    import shutil

    from report_shapes import SAMPLE

    from gaitid.batch import run_batch
    from gaitid.core.settings import Settings

    folder = tmp_path / "visit"
    folder.mkdir()
    for name in ("walk01.c3d", "walk02.c3d"):
        shutil.copy(SAMPLE, folder / name)
    summary = run_batch([folder], tmp_path / "out", Settings(plates={1: "Invalid"}), progress=lambda row: None)
    assert list(summary.status) == ["ok", "ok"], summary.error.tolist()
    (page,) = (tmp_path / "out").glob("session_*visit*_report.html")  # one subject in one folder: one session
    html = page.read_text()
    assert "walk01" in html and "walk02" in html and "no foot assigned" in html
    assert (tmp_path / "out" / "walk01" / "walk01_report.pdf").exists()
