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
from gaitid.report.plots import DECOMPOSED_LABEL, draws_cycles, has_decomposed

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
    assert (DECOMPOSED_LABEL in text) == (DECOMPOSED_LABEL in page_texts) == has_decomposed(data)

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


def touches_decomposed(result, side: str, start: float, end: float) -> np.ndarray:
    """(101,) bool: the points from ``start`` to ``end`` (s) whose value is drawn from a frame where
    ``side``'s foot load is decomposed (the frame itself, or either end of the interval it lies in)."""
    t = result.trial.time
    dec = result.loads[side].source == "decomposed"
    at = np.linspace(start, end, 101)
    hi = np.clip(np.searchsorted(t, at, side="left"), 1, len(t) - 1)
    lo = hi - 1
    return (dec[lo] & (at < t[hi])) | (dec[hi] & (at > t[lo]))


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_kinetics_mark_the_decomposed_foot_loads(shape, sources):
    """Each kinetic cycle's moments and powers and each valid contact's GRF are highlighted (gid
    'decomposed:<side>') at exactly the percent points drawn from a frame whose foot load is
    decomposed, over the curve drawn there (each cycle's, or the mean's in a session too large to
    draw cycles); the angles never; a shape without a decomposed frame has no mark."""
    r = build(shape, sources)
    data = gather(r)
    pages = report_pages(data)
    cycles = draws_cycles(data)
    assert not any(s.gid.startswith("decomposed") for page in pages if page.kind != "kinetics"
                   for p in page.panels for s in p.series)
    for side in SIDES:
        loads = getattr(r, "loads", {}).get(side)
        expect_rows = [touches_decomposed(r, side, c.start_time, c.end_time) for c in r.cycles
                       if c.side == side and c.kinetic] if loads is not None and loads.source is not None else []
        contacts = [touches_decomposed(r, side, c.strike_time, c.off_time) for c in r.foot_contacts
                    if c.valid and c.side == side and c.complete and c.off_time > c.strike_time] \
            if loads is not None and loads.source is not None else []
        for title, expected, values in (
                ("Knee sagittal moment", expect_rows, data.cycle_matrix(side, "KneeMoment", "X")),
                ("Ankle power", expect_rows, data.cycle_matrix(side, "AnklePower", "")),
                ("GRF vertical", contacts, data.stances[side].values[:, :, 2] if side in data.stances else [])):
            marks = panel(pages, title).get(f"decomposed:{side}")
            expected = np.array(expected, bool).reshape(-1, 101)
            if not cycles:  # the mean, where any row is decomposed
                expected = expected.any(axis=0, keepdims=True)
                values = [m.y for m in panel(pages, title).get(f"mean:{side}") + panel(pages, title).get(f"grf:{side}")]
            drawn = [(row, mask) for row, mask in zip(values, expected) if mask.any()]
            assert len(marks) == len(drawn), (title, side)
            for m, (row, mask) in zip(marks, drawn):
                np.testing.assert_array_equal(np.isfinite(m.y), mask & np.isfinite(row))
                np.testing.assert_allclose(m.y[mask], row[mask])
    if "treadmill" in shape.name and "tandem" not in shape.name:
        assert has_decomposed(data)


def test_a_session_too_large_for_cycles_marks_the_mean(sources):
    """A session of more than 40 cycles draws the means only: the mean is highlighted wherever any
    pooled kinetic cycle's point is drawn from a decomposed foot load."""
    (shape,) = [s for s in SHAPES if s.name == "single-belt treadmill"]
    r = build(shape, sources)
    data = gather([r] * 5)
    assert not draws_cycles(data)
    page = next(p for p in report_pages(data) if p.kind == "kinetics")
    for side in SIDES:
        rows = [touches_decomposed(r, side, c.start_time, c.end_time) for c in r.cycles if c.side == side and c.kinetic]
        (mark,) = panel([page], "Hip sagittal moment").get(f"decomposed:{side}")
        (mean,) = panel([page], "Hip sagittal moment").get(f"mean:{side}")
        np.testing.assert_array_equal(np.isfinite(mark.y), np.any(rows, axis=0))
        np.testing.assert_allclose(mark.y[np.isfinite(mark.y)], mean.y[np.isfinite(mark.y)])


def test_a_session_report_from_the_batch_keeps_the_marks(sources):
    """The slim Result a batch stores for its session report marks the same decomposed points as the
    full Result (it keeps each foot's per-frame source, not its samples)."""
    from gaitid.batch import pack_result, unpack_result

    (shape,) = [s for s in SHAPES if s.name == "single-belt treadmill"]
    r = build(shape, sources)
    back = unpack_result(pack_result(r))
    assert back.loads["Left"].force_lab.size == 0
    full, slim = gather([r]), gather([back])
    for side in SIDES:
        assert full.sides[side].decomposed.any()
        np.testing.assert_array_equal(slim.sides[side].decomposed, full.sides[side].decomposed)
        np.testing.assert_array_equal(slim.stances[side].decomposed, full.stances[side].decomposed)


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
