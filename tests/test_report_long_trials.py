"""A long trial's report lists the first rows of its cycles, contacts and rejections and counts the rest.

A one-hour treadmill trial has 7,198 cycles and thousands of rejected contacts (both feet on a
belt): listed in full, its PDF report had 340 pages. The limits are lowered here so that an 8 s
treadmill trial exceeds them; the rows listed must be the first ones, in order, and the notes
must count the others exactly.
"""

from __future__ import annotations

import html

import pytest

import gaitid.contacts.contact as contact
import gaitid.report.display as tables
from gaitid.pipeline import process
from gaitid.report.content import gather
from gaitid.report.html import html_table
from gaitid.validation import synthetic as S


@pytest.fixture(scope="module")
def treadmill(tmp_path_factory):
    path = tmp_path_factory.mktemp("long") / "treadmill.c3d"
    S.write_treadmill(path, duration_s=8.0)
    return process(path, decompose_shared_plates=False)  # its crossings' contacts rejected (both feet on a belt)


def test_cycles_and_contacts_tables_list_the_first_rows_of_each_trial(treadmill, monkeypatch):
    full_cycles = tables.cycles_table(gather([treadmill]))
    full_contacts = tables.contacts_table(gather([treadmill]))
    n_cycles, n_contacts = len(full_cycles.rows), len(full_contacts.rows)
    assert n_cycles > 3 and n_contacts > 3 and not full_cycles.notes
    monkeypatch.setattr(tables, "ROWS_PER_TRIAL", 3)
    cycles = tables.cycles_table(gather([treadmill]))
    assert cycles.rows == full_cycles.rows[:3]
    assert cycles.notes == [f"The first 3 of {n_cycles} gait cycles are listed; their events are in the trial's "
                            "_events.csv, their parameters in _parameters.csv."]
    contacts = tables.contacts_table(gather([treadmill]))
    assert contacts.rows == full_contacts.rows[:3]
    assert contacts.notes == [f"The first 3 of {n_contacts} plate contacts are listed; every one is in the "
                              "trial's _contacts.csv with its reason."]
    assert html.escape(contacts.notes[0]) in html_table(contacts, "plate-table")  # the HTML page says it too

    session = gather([treadmill, treadmill])  # a session: 3 rows of each trial, a note naming each
    rows = tables.cycles_table(session).rows
    assert [r[0] for r in rows] == ["treadmill"] * 3 + ["treadmill (2)"] * 3
    assert [r[1:] for r in rows] == [r for r in full_cycles.rows[:3]] * 2
    assert [n.split(":")[0] for n in tables.cycles_table(session).notes] == ["treadmill", "treadmill (2)"]


def test_rejected_contacts_on_the_first_page_are_counted_past_the_first(treadmill, monkeypatch):
    rejected = [c for c in treadmill.foot_contacts if not c.valid]
    assert len(rejected) > 2
    monkeypatch.setattr(contact, "LISTED_REJECTED", 2)
    lines = gather([treadmill]).notices["treadmill"]["plates"]
    assert len(lines) == 3
    assert [line.split(": rejected: ", 1)[1] for line in lines[:2]] == [c.reason for c in rejected[:2]]
    assert lines[2] == (f"{len(rejected) - 2} more rejected contacts ({len(rejected)} in all), each with its "
                        "reason in the trial's _contacts.csv")
