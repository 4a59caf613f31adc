"""The report's EMG page: what each muscle's panel draws (read back from the panel's data) against
the Result's own EMG tables and the synthetic bursts' exact timing, the channels not drawn named,
the page shown only with EMG, in the PDF and the HTML alike, a session pooling its trials."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import REPO, realdata_path

from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
from gaitid.report import write_report
from gaitid.report.content import gather
from gaitid.report.emg_pages import display_unit, emg_pages
from gaitid.report.pages import report_pages
from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

SAMPLE = REPO / "sample_data" / "walk_synthetic.c3d"
BURSTS = [Burst("Left", "Tib Ant", ((0.0, 12.0), (60.0, 100.0))), Burst("Right", "Gast", ((20.0, 50.0),))]


@pytest.fixture(scope="module")
def synthetic():
    return process(with_emg(read_c3d(SAMPLE), BURSTS))


def panel(pages, title):
    (p,) = [p for page in pages for p in page.panels if p.title == title]
    return p


def test_panels_draw_the_results_envelopes_and_the_bursts(synthetic):
    """The synthetic walk: the tibialis anterior (left) on at 0-12 % and 60-100 % of every cycle, the
    gastrocnemius (right) at 20-50 %. The mean line is the mean of ``Result.emg_curves`` (in uV: the
    envelopes are 0.8 mV at most), the bars are 1 (every cycle on) inside the bursts and 0 well
    outside (the edges are within 1 % of the truth), the foot-off line is the mean of the cycles'."""
    (page,) = emg_pages(gather(synthetic))
    table = synthetic.emg_curves
    for title, side, on, off in (("Tibialis anterior", "Left", (5, 70, 95), (20, 40, 55)),
                                 ("Gastrocnemius", "Right", (25, 35, 45), (5, 15, 55, 80))):
        p = panel([page], title)
        rows = table[(table.side == side) & (table.muscle == title)]
        expected = rows.groupby("percent").value.mean().to_numpy()
        (mean,) = p.get(f"mean:{side}")
        np.testing.assert_allclose(mean.y, 1e6 * np.maximum(expected, 0.0), rtol=1e-12, atol=1e-9)
        assert p.ylabel == "envelope [\u00b5V]"
        assert not p.get(f"cycle:{side}") and rows.cycle.nunique() == 3
        cycles = panel(emg_pages(gather(synthetic), show_cycles=True), title).get(f"cycle:{side}")
        assert len(cycles) == 3
        drawn = np.array([c.y for c in cycles])
        above = (drawn > 0).all(axis=0)  # where no cycle rings below zero (drawn at zero)
        np.testing.assert_allclose(drawn.mean(axis=0)[above], mean.y[above], rtol=1e-9)
        assert (p.onoff[side][list(on)] == 1.0).all() and (p.onoff[side][list(off)] == 0.0).all()
        other = "Right" if side == "Left" else "Left"
        assert (f"{other}: no channel", "#d62728" if other == "Left" else "#2ca02c") in p.notes
        (fo,) = p.get(f"foot_off:{side}")
        assert fo.x[0] == pytest.approx(np.mean([c.foot_off_pct for c in synthetic.cycles if c.side == side]))
    texts = " ".join(page.texts())
    assert "edges on the 50 Hz low-passed rectified signal" in texts and "Not drawn" not in texts


def test_display_unit_reads_volts_as_emg_software_shows_them():
    assert display_unit("V", 8e-4) == ("\u00b5V", 1e6)
    assert display_unit("V", 0.25) == ("mV", 1e3)
    assert display_unit("V", 2.0) == ("V", 1.0)
    assert display_unit("mV", 0.5) == ("\u00b5V", 1e3)
    assert display_unit("% peak", 80.0) == ("% peak", 1.0)


def test_bad_channels_are_listed_not_drawn(tmp_path):
    """One flat and one clipped channel: no panel, and the page names both with the reason."""
    trial = with_emg(read_c3d(SAMPLE), BURSTS)
    values = trial.analogs.values.copy()
    values[:, -2] = 0.001
    values[:, -1] = np.clip(values[:, -1], -1e-4, 1e-4)
    r = process(dataclasses.replace(trial, analogs=dataclasses.replace(trial.analogs, values=values)))
    (page,) = emg_pages(gather(r))
    texts = " ".join(page.texts())
    assert not page.panels and "no EMG channel to draw" in texts
    assert "Voltage.L Tib Ant: flat (every sample 0.001 V)" in texts and "Voltage.R Gast: saturated" in texts
    pdf, html = write_report(r, tmp_path)
    assert "Voltage.L Tib Ant: flat" in html.read_text()


def test_no_cycle_says_so(synthetic):
    trial = with_emg(read_c3d(SAMPLE), BURSTS)
    r = process(dataclasses.replace(trial, events=trial.events[:1]))
    (page,) = emg_pages(gather(r))
    p = panel([page], "Tibialis anterior")
    assert p.missing == "no complete gait cycle" and not p.series


def test_shown_only_with_emg(synthetic, tmp_path):
    plain = process(SAMPLE)
    assert gather(plain).emg is None
    assert "EMG" not in [p.heading for p in report_pages(gather(plain))]
    headings = [p.heading for p in report_pages(gather(synthetic))]
    assert headings.index("EMG") == headings.index("Moment contributions") + 1
    pdf, html = write_report(synthetic, tmp_path)
    assert '<section id="emg"><h2>EMG</h2>' in html.read_text()


def test_unmapped_channels_alone_make_no_page(synthetic):
    """Channels without a side or muscle (Vicon's 'EMG1'...; a note says how to map them) make no
    page; mapped, the same channels are drawn."""
    trial = with_emg(read_c3d(SAMPLE), BURSTS)
    labels = [*trial.analogs.labels[:-2], "EMG1", "EMG2"]
    unmapped = dataclasses.replace(trial, analogs=dataclasses.replace(trial.analogs, labels=labels))
    assert gather(process(unmapped)).emg is None
    mapped = gather(process(unmapped, emg_channels={"EMG1": "L Tibialis anterior"}))
    assert [m.muscle for m in mapped.emg.muscles] == ["Tibialis anterior"]
    assert mapped.emg.unused == ["EMG2: no side or muscle in its label or description"]


def test_session_pools_the_cycles_of_every_trial(synthetic):
    """Two trials: twice the cycles; the bars (a fraction) stay those of one trial, the same bursts."""
    one = panel(emg_pages(gather(synthetic), show_cycles=True), "Gastrocnemius")
    two = panel(emg_pages(gather([synthetic, synthetic]), show_cycles=True), "Gastrocnemius")
    assert len(two.get("cycle:Right")) == 2 * len(one.get("cycle:Right")) == 6
    np.testing.assert_array_equal(two.onoff["Right"], one.onoff["Right"])
    np.testing.assert_allclose(two.get("mean:Right")[0].y, one.get("mean:Right")[0].y, rtol=1e-12)


def test_real_trial_panels_and_bars():
    """test_small.c3d: 7 muscles on both sides, each a panel; the gastrocnemius' bars on in stance
    (every cycle at 20-45 %), off in swing (80 %); the channels without a muscle listed by name."""
    r = process(realdata_path("python-gaitalytics/test_small.c3d"))
    (page,) = emg_pages(gather(r))
    assert len(page.panels) == 7
    gas = panel([page], "Gastrocnemius")
    for side in ("Left", "Right"):
        assert (gas.onoff[side][[20, 45]] == 1.0).all() and gas.onoff[side][80] == 0.0
    texts = " ".join(page.texts())
    assert "Voltage.15: no side or muscle" in texts and "Voltage.16" in texts


@pytest.fixture(scope="module")
def emg_norms():
    """Norms from two synthetic controls (the same bursts, other noise seeds)."""
    from gaitid.norms import build_norms, control_from_result

    return build_norms([control_from_result(process(with_emg(read_c3d(SAMPLE), BURSTS, seed=s))) for s in (1, 2)])


def test_norms_hold_each_muscles_on_off(emg_norms, tmp_path):
    """`gaitid norms build` keeps each muscle's on-off as the fraction of the controls' cycles on at
    every 2 % ('EMG on <muscle>', unit 'fraction'): 1 inside the synthetic bursts, 0 well outside;
    per side and pooled; through the TOML file and from a result folder's _emg_timing.csv alike."""
    from gaitid.norms import build_norms, control_from_folder, read_norms, write_norms

    def fraction(norms, muscle, side=""):
        pct, mean, sd = norms.band(f"EMG on {muscle}", "", "fraction", side=side)
        return dict(zip(pct, mean))

    ta, gast = fraction(emg_norms, "Tibialis anterior"), fraction(emg_norms, "Gastrocnemius", "Right")
    assert all(ta[p] == 1.0 for p in (0, 4, 10, 62, 80, 98)) and all(ta[p] == 0.0 for p in (16, 30, 56))
    assert all(gast[p] == 1.0 for p in (22, 30, 48)) and all(gast[p] == 0.0 for p in (0, 16, 54, 90))
    assert emg_norms.band("EMG on Gastrocnemius", "", "fraction", side="Left") is None  # no left channel
    back = read_norms(write_norms(emg_norms, tmp_path / "n.toml"))
    assert fraction(back, "Tibialis anterior") == pytest.approx(ta, abs=1e-8)  # the file keeps 9 decimals
    folder = tmp_path / "controls"
    for s in (1, 2):
        process(with_emg(read_c3d(SAMPLE), BURSTS, seed=s)).to_csv(folder / f"c{s}")
    from_folder = build_norms(control_from_folder(folder, convention="internal"))
    assert fraction(from_folder, "Tibialis anterior") == pytest.approx(ta, abs=1e-12)


def test_normal_bars_from_norms(synthetic, emg_norms):
    """With norms holding the muscle, a third bar (N) under each panel: the norms' fraction at the
    101 points (interpolated from their 2 %); without norms, two bars."""
    from gaitid.report.sections import ReportInputs, report_sections

    page = emg_pages(gather(synthetic), emg_norms)[0]
    p = panel([page], "Tibialis anterior")
    pct, mean, _ = emg_norms.band("EMG on Tibialis anterior", "", "fraction")
    assert p.normal_row and np.array_equal(p.normal, np.interp(np.arange(101.0), pct, mean))
    assert p.normal[5] == 1.0 and p.normal[30] == 0.0
    assert "on in the norms' controls (N)" in page.texts()
    assert not panel(emg_pages(gather(synthetic)), "Tibialis anterior").normal_row
    (part,) = [s for s in report_sections(ReportInputs(gather(synthetic), emg_norms)) if s.section.key == "emg"]
    assert panel(part.blocks[0].pages, "Gastrocnemius").normal[30] == 1.0
