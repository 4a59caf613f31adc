"""The data-quality checks speak whatever they find: every check of a trial is a Check (passed with
its figure, warned with the warning, or not run with why), and its verdict reaches the Result, the
command line, the run record, the report's first page and batch_summary.csv."""

from __future__ import annotations

import csv
import json
import pickle

import pytest

from gaitid import process
from gaitid.cli import main
from gaitid.core.checks import NOT_RUN, PASSED, WARNED, Check, verdict
from gaitid.core.resources import sample_data_dir
from gaitid.report.content import gather
from gaitid.report.display import check_summary
from tests.c3d_mutations import mutated
from tests.test_subject_plausibility import body_mass

WALK = sample_data_dir() / "walk_synthetic.c3d"
STATIC = sample_data_dir() / "static_synthetic.c3d"


def test_a_check_warns_exactly_when_it_has_warnings():
    assert Check.outcome("x", "1 %").status == PASSED
    assert Check.outcome("x", "40 %", ["x is 40 % off"]).status == WARNED
    assert Check.not_run("x", "no plates").status == NOT_RUN
    with pytest.raises(ValueError):
        Check("x", WARNED, "d")  # a warned check without its warning
    with pytest.raises(ValueError):
        Check("x", PASSED, "d", ("a warning",))
    with pytest.raises(ValueError):
        Check("x", "fine", "d")


def test_the_verdict_names_each_check_by_outcome_warned_first():
    checks = [Check.outcome("body mass", "-2 %"), Check.not_run("markers", "no markers"),
              Check.outcome("plates", "corners", ["plate 2 is mirrored"]), Check.outcome("units", "N, N.mm")]
    assert verdict(checks) == ("CHECK FIRST - data checks: 1 warned (plates), 2 passed (body mass, units), "
                               "1 not run (markers)")
    assert verdict(checks[:1]) == "data checks: 1 passed (body mass)"
    assert verdict([]) == "data checks: none run"


def test_the_mass_check_is_a_check_whatever_it_finds(tmp_path):
    clean = process(WALK)
    (mass,) = [c for c in clean.checks if c.name == "body mass"]
    mc = clean.subject.mass_check
    assert mass.status == PASSED and f"{mc.plates:.1f} kg on the plates" in mass.detail
    assert f"{100 * mc.difference:+.1f} %" in mass.detail
    heavy = process(WALK, subject=72.0 * 1.4)  # the plates carry 68.9 kg: -32 %
    (mass,) = [c for c in heavy.checks if c.name == "body mass"]
    assert mass.status == WARNED and mass.warnings[0] in heavy.warnings
    assert heavy.warnings.count(mass.warnings[0]) == 1  # said once, though both the subject and the check hold it
    assert heavy.verdict.startswith("CHECK FIRST")
    (mass,) = [c for c in process(WALK, subject="plates").checks if c.name == "body mass"]
    assert mass.status == NOT_RUN and "estimated from the plates" in mass.detail


def test_the_command_line_and_the_run_record_give_the_verdict(tmp_path, capsys):
    assert main(["run", str(WALK), "--static", str(STATIC), "--mass", "100.8", "-o", str(tmp_path / "out"),
                 "--no-report"]) == 0
    out = capsys.readouterr().out
    assert "  CHECK FIRST - data checks: 2 warned (body mass, dynamic consistency)" in out
    record = json.loads((tmp_path / "out" / "walk_synthetic_run.json").read_text())
    assert record["verdict"].startswith("CHECK FIRST - data checks: 2 warned (body mass, dynamic consistency)")
    (mass,) = [c for c in record["checks"] if c["name"] == "body mass"]
    assert mass["status"] == WARNED and "100.8 kg" in mass["detail"] and mass["warnings"][0] in record["warnings"]


def test_the_report_lists_every_check_and_a_session_one_verdict_per_trial(tmp_path):
    clean, heavy = process(WALK), process(WALK, subject=72.0 * 1.4)
    lines, warned = check_summary(gather([clean]))
    assert not warned and lines == tuple(f"{c.name}: {c.status} \u2013 {c.detail}" for c in clean.checks)
    lines, warned = check_summary(gather([clean, heavy]))
    assert warned and len(lines) == 2 and lines[1].endswith(heavy.verdict) and lines[0].endswith(clean.verdict)
    old = pickle.loads(pickle.dumps(heavy))
    del old.__dict__["checks"]  # a Result saved by an earlier version
    lines, _ = check_summary(gather([clean, old]))
    assert "saved by an earlier gaitid version" in lines[1]
    html = heavy.report(tmp_path, formats=("html",))[0].read_text()
    assert "Data checks" in html and "body mass: warned" in html


def test_batch_summary_has_the_verdict_of_each_trial(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    mutated(WALK, folder, "heavy.c3d", body_mass(72.0 * 1.4))
    (folder / "walk.c3d").write_bytes(WALK.read_bytes())
    assert main(["batch", str(folder), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    rows = {r["trial"]: r for r in csv.DictReader((tmp_path / "out" / "batch_summary.csv").open())}
    assert rows["walk"]["checks"] == process(WALK).verdict and "CHECK FIRST" not in rows["walk"]["checks"]
    assert rows["heavy"]["checks"].startswith("CHECK FIRST - data checks: 2 warned (body mass, dynamic consistency)")
    # a rerun skips the trial and keeps its verdict
    assert main(["batch", str(folder), "-o", str(tmp_path / "out"), "--no-report"]) == 0
    again = {r["trial"]: r for r in csv.DictReader((tmp_path / "out" / "batch_summary.csv").open())}
    assert again["heavy"]["status"] == "skipped" and again["heavy"]["checks"] == rows["heavy"]["checks"]
