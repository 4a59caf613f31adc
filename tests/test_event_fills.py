"""Kinematic events on filled marker data (gaitid/events/fill_trust.py): placed where the fill is
trusted (rigid or PCA; a spline up to Settings.trusted_spline_s), not inside an untrusted fill, never
on a filled heel impact; the plates' and the file's events untouched."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import realdata_path
from gaitid import process
from gaitid.core.errors import SettingsError
from gaitid.core.settings import Settings
from gaitid.events import gait_events
from gaitid.model.gap_fill import fill_marker_gaps
from gaitid.model.markerset import load_model
from gaitid.pipeline import load_trial


def cut(trial, label, a, b):
    m = trial.markers.copy()
    m[a:b, trial.marker_labels.index(label)] = np.nan
    return replace(trial, markers=m)


@pytest.fixture(scope="module")
def walk():
    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    res = process(trial)
    return trial, res.markers, res.foot_contacts


def first(events, label, side):
    return next(e for e in events if e.label == label and e.context == side)


def near(events, e):
    """The event of ``e``'s label and side nearest to it, or None (none within 15 frames)."""
    same = [x for x in events if x.label == e.label and x.context == e.context and abs(x.frame - e.frame) <= 15]
    return min(same, key=lambda x: abs(x.frame - e.frame), default=None)


def gapped_fill(trial, label, centre, seconds, **kw):
    g = int(round(seconds * trial.point_rate))
    k = trial.index_of_time(centre.time)
    return fill_marker_gaps(cut(trial, label, k - g // 2, k - g // 2 + g), load_model("plugin-gait"), **kw)


def test_foot_off_inside_an_untrusted_spline_is_not_placed(walk):
    trial, markers, _ = walk
    ref = gait_events(trial, [], markers, prefer="detected").events  # no plates: every event kinematic
    off = first(ref, "Foot Off", "Left")
    filled, fills = gapped_fill(trial, "LTOE", off, 0.3, max_gap_frames=30)  # a 0.3 s spline
    assert [f.method for f in fills.filled] == ["spline"]
    choice = gait_events(filled, [], markers, prefer="detected", fills=fills)
    assert near(choice.events, off) is None
    a, b = fills.filled[0].start + trial.first_frame, fills.filled[0].stop - 1 + trial.first_frame
    assert [n for n in choice.notes if "not placed" in n] == [n for n in choice.notes if n.startswith(
        "kinematic Left Foot Off at ") and f"LTOE was filled there by spline (frames {a}-{b}, 0.30 s), which events "
        "do not trust: a spline over more than trusted_spline_s 0.15 s rounds the extremum off" in n]
    assert any("not placed" in n for n in choice.notes)
    others = [e for e in ref if e is not off]
    assert all(near(choice.events, e) is not None for e in others)  # nothing else lost
    # trusting longer splines places it again, where the spline put it (off by frames: why it is not trusted)
    loose = gait_events(filled, [], markers, prefer="detected", fills=fills, trusted_s=0.5)
    assert near(loose.events, off) is not None and not any("not placed" in n for n in loose.notes)
    # the same gap filled by PCA: trusted, within 2 frames of the uncut trial's
    filled, fills = gapped_fill(trial, "LTOE", off, 0.3)
    assert [f.method for f in fills.filled] == ["pca"]
    choice = gait_events(filled, [], markers, prefer="detected", fills=fills)
    assert abs(near(choice.events, off).frame - off.frame) <= 2 and not any("not placed" in n for n in choice.notes)


def test_a_filled_heel_impact_places_no_strike(walk):
    trial, markers, contacts = walk
    ref = gait_events(trial, [], markers, prefer="detected").events  # strikes at the heel impact
    strike = first(ref, "Foot Strike", "Right")
    filled, fills = gapped_fill(trial, "RHEE", strike, 0.15)  # PCA, trusted for extrema, not for an impact
    assert [f.method for f in fills.filled] == ["pca"]
    choice = gait_events(filled, [], markers, prefer="detected", fills=fills)
    assert near(choice.events, strike) is None or not (
        fills.filled[0].start <= trial.index_of_time(near(choice.events, strike).time) < fills.filled[0].stop)
    assert any("never reproduces the heel's impact" in n for n in choice.notes)
    # with the plates' lead the strike is Zeni's heel maximum moved: a PCA fill there is trusted
    with_plates = gait_events(filled, contacts, markers, prefer="detected", fills=fills)
    assert not any("not placed" in n for n in with_plates.notes)
    assert len(with_plates.events) == len(gait_events(trial, contacts, markers, prefer="detected").events)


def test_clean_trial_and_setting():
    trial = load_trial(realdata_path("python-gaitalytics/test_small.c3d"))
    res = process(trial)
    assert not any("not placed" in n for n in res.event_choice.notes)
    with pytest.raises(SettingsError, match="trusted_spline_s"):
        Settings(trusted_spline_s=-1)
    off = first(gait_events(trial, [], res.markers, prefer="detected").events, "Foot Off", "Left")
    k = trial.index_of_time(off.time)  # through process(): the setting and the note in the warnings
    gapped = process(cut(trial, "LTOE", k - 15, k + 15), max_gap_frames=30, events="detected")
    strict = [w for w in gapped.warnings if "not placed: LTOE" in w]
    loose = process(cut(trial, "LTOE", k - 15, k + 15), max_gap_frames=30, events="detected", trusted_spline_s=0.5)
    assert not [w for w in loose.warnings if "not placed" in w]
    assert strict and near(gapped.events, off) is None and near(loose.events, off) is not None
