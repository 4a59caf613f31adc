"""The events stage: the file's gait events checked against those detected, and the choice.

Detected events come from the assigned plate contacts (:func:`plate_events`, strike and off at
the threshold crossings, overrides applied) and, for the steps off the plates, from kinematics
(:mod:`gaitid.events.zeni`, moved by the lead the trial's own plate events show over Zeni's,
:func:`kinematic_from_plate_lead`; without a plate event to pair, strikes at the heel impact and
offs at Zeni's toe minimum). :func:`compare_events` pairs events of the same label and side
(nearest within ``window``, one-to-one); :func:`resolve_events` keeps the file's events by
default (``prefer='file'``) and returns the comparison table so the caller can see and choose
(``'detected'`` or ``'merge'``). A pair disagrees beyond 1 frame for plate events and 3 frames
for kinematic ones (their accuracy on the real trials).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from gaitid.contacts import FootContact
from gaitid.core.errors import DataError, SettingsError
from gaitid.core.trial import Event, Trial
from gaitid.core.vocabulary import EVENT_SOURCES, FOOT_OFF, FOOT_STRIKE, GAIT_EVENTS, SIDES
from gaitid.events.file_events import event_at, file_events
from gaitid.events.fill_trust import trusted_events
from gaitid.events.zeni import impact_strikes, zeni_events
from gaitid.model.gait_markers import GaitMarkers
from gaitid.model.gap_fill import MarkerFills


def plate_events(trial: Trial, contacts: list[FootContact]) -> list[Event]:
    """Foot strike / foot off events at the threshold crossings of the assigned plate contacts.

    Only contacts whose foot is known give events (valid or not for kinetics, overrides
    applied); each foot contact gives its earliest strike and latest off over its plates.
    """
    out = []
    for c in contacts:
        if c.side not in SIDES:
            continue
        if np.isfinite(c.strike_time):
            out.append(event_at(trial, FOOT_STRIKE, c.side, c.strike_time, "plate"))
        if np.isfinite(c.off_time):
            out.append(event_at(trial, FOOT_OFF, c.side, c.off_time, "plate"))
    return sorted(out, key=lambda e: e.time)


def compare_events(reference: list[Event], detected: list[Event], point_rate: float,
                   window: float = 0.15) -> pd.DataFrame:
    """Pair events of the same label and side, nearest first, one-to-one, within ``window`` s.

    Columns: label, context, reference_time_s, detected_time_s, difference_s
    (detected - reference), difference_frames (the same in frames at ``point_rate``),
    frame_difference (difference of the events' frame numbers, an integer as float),
    status ('paired', 'reference only', 'detected only'), source (the detected event's).
    """
    rows = []
    for label in GAIT_EVENTS:
        for side in SIDES:
            ref = [e.time for e in reference if e.label == label and e.context == side]
            dev = [e for e in detected if e.label == label and e.context == side]
            det = [e.time for e in dev]
            pairs = sorted(
                (abs(b - a), i, j) for i, a in enumerate(ref) for j, b in enumerate(det) if abs(b - a) <= window
            )
            used_r, used_d = set(), set()
            for _, i, j in pairs:
                if i in used_r or j in used_d:
                    continue
                used_r.add(i)
                used_d.add(j)
                rows.append((label, side, ref[i], det[j], "paired", dev[j].source))
            rows += [(label, side, a, np.nan, "reference only", "") for i, a in enumerate(ref) if i not in used_r]
            rows += [(label, side, np.nan, b, "detected only", dev[j].source)
                     for j, b in enumerate(det) if j not in used_d]
    columns = ["label", "context", "reference_time_s", "detected_time_s", "difference_s", "difference_frames",
               "frame_difference", "status", "source"]
    if not rows:
        return pd.DataFrame(columns=columns, dtype=object)
    ref = np.array([r[2] for r in rows], float)
    det = np.array([r[3] for r in rows], float)
    order = np.argsort(np.where(np.isnan(ref), det, ref), kind="quicksort")  # by time (as pandas' sort_values)
    diff = (det - ref)[order]
    # columns built from arrays at once (a table of a few dozen rows: pandas' per-column work was most of the cost)
    return pd.DataFrame({
        "label": [rows[i][0] for i in order], "context": [rows[i][1] for i in order],
        "reference_time_s": ref[order], "detected_time_s": det[order], "difference_s": diff,
        "difference_frames": diff * point_rate,
        "frame_difference": (np.rint(det * point_rate) - np.rint(ref * point_rate))[order],
        "status": [rows[i][4] for i in order], "source": [rows[i][5] for i in order],
    }, columns=columns)


@dataclass
class EventChoice:
    """Events chosen by :func:`resolve_events` and the comparison behind the choice.

    ``comparison``: :func:`compare_events` table (file = reference) with a boolean
    ``disagree`` column (frame numbers more than ``tolerance`` apart, or found by one
    side only inside the span the file's events cover). ``notes``: what could not be
    detected and why. ``disagreements``: number of such rows.
    """

    events: list[Event]
    comparison: pd.DataFrame
    prefer: str
    disagreements: int
    notes: list[str] = field(default_factory=list)

    def describe(self) -> list[str]:
        """One line per disagreement (and per note), for logs and reports."""
        out = []
        for r in self.comparison[self.comparison["disagree"]].itertuples():
            what = f"{r.context} {r.label}"
            if r.status == "paired":
                out.append(f"{what}: file {r.reference_time_s:.3f} s, {r.source} {r.detected_time_s:.3f} s "
                           f"({r.frame_difference:+.0f} frames)")
            elif r.status == "reference only":
                out.append(f"{what}: file {r.reference_time_s:.3f} s, not detected")
            else:
                out.append(f"{what}: {r.source} {r.detected_time_s:.3f} s, not in the file")
        return out + list(self.notes)

    def summary(self, most: int = 3) -> list[str]:
        """The events that disagree, one line each, or one line per side and event kind when there
        are more than ``most`` of a kind (the range of the differences; every one is in
        :attr:`comparison`), then the notes."""
        c = self.comparison
        if c is None or c.empty or "disagree" not in c.columns:
            return list(self.notes)
        bad = c[c["disagree"].astype(bool)]
        out = []
        for (context, label), g in bad.groupby(["context", "label"], sort=False):
            if len(g) <= most:
                out += [line for line in self.describe() if line.startswith(f"{context} {label}:")]
                continue
            paired = g[g["status"] == "paired"]
            what = f"{context} {label}: {len(g)} events"
            if len(paired):
                lo, hi = paired["frame_difference"].min(), paired["frame_difference"].max()
                source = ", ".join(sorted(set(paired["source"])))
                span = f"{lo:+.0f}" if lo == hi else f"{lo:+.0f} to {hi:+.0f}"
                what += (f", {source} {span} frames from the file's "
                         f"({paired['reference_time_s'].min():.2f}\u2013{paired['reference_time_s'].max():.2f} s)")
            unpaired = len(g) - len(paired)
            if unpaired:
                what += f"; {unpaired} found by one side only"
            out.append(what)
        return out + list(self.notes)


def kinematic_from_plate_lead(trial: Trial, raw: list[Event], plate: list[Event], label: str,
                              window: float = 0.15) -> list[Event] | None:
    """Zeni's ``label`` events (unrefined heel maxima or toe minima in ``raw``) moved by the lead
    this trial shows on its own plate events of that label: per side, the median of (plate event -
    nearest Zeni event within ``window`` s) over that side's plate events, or over both sides'
    when one side has none. None when no plate event pairs with a Zeni event (the caller keeps
    Zeni's own). The lead depends on the subject, the speed and the task (2-10 frames for strikes
    on the real trials, 3-14 frames for offs on the synthetic walk and stairs); measured on the
    trial itself it places the events off the plates as the plates would, as Vicon Nexus does by
    autocorrelating plate events with the markers (docs/events.md)."""
    own = [e for e in raw if e.label == label]
    lead: dict[str, list[float]] = {side: [] for side in SIDES}
    for p in plate:
        if p.label != label or p.context not in lead:
            continue
        near = [e.time for e in own if e.context == p.context and abs(e.time - p.time) <= window]
        if near:
            lead[p.context].append(p.time - min(near, key=lambda t: abs(t - p.time)))
    both = lead["Left"] + lead["Right"]
    if not both:
        return None
    return [event_at(trial, label, e.context, e.time + float(np.median(lead[e.context] or both)), e.source)
            for e in own]


def combine_detected(plate: list[Event], kinematic: list[Event], window: float = 0.15) -> list[Event]:
    """Plate events where the plates saw the foot, kinematic (Zeni) events for the steps off the plates."""
    out = list(plate)
    for e in kinematic:
        if not any(p.label == e.label and p.context == e.context and abs(p.time - e.time) <= window for p in plate):
            out.append(e)
    return sorted(out, key=lambda e: e.time)


DEFAULT_TOLERANCE = {"plate": 1.0, "kinematics": 3.0}  # frames


def resolve_events(file: list[Event], detected: list[Event], point_rate: float, prefer: str = "file",
                   tolerance: float | dict | None = None, window: float = 0.15) -> EventChoice:
    """Choose between the file's and the detected events and report where they disagree.

    ``prefer``: 'file' (default; the detected events are used only when the file has
    none), 'detected' (the detected events), or 'merge' (the file's events, plus the
    detected ones outside the time span the file's events cover). ``tolerance``:
    frames beyond which a pair counts as a disagreement, one number or one per detected
    source (default 1 frame for plate events, 3 for kinematic ones: the accuracy each
    reaches on the real trials, see ``docs/events.md``).
    """
    if prefer not in EVENT_SOURCES:
        raise SettingsError(f"prefer must be 'file', 'detected' or 'merge', not {prefer!r}")
    cmp = compare_events(file, detected, point_rate, window)
    tol = dict(DEFAULT_TOLERANCE) if tolerance is None else tolerance
    source, status = cmp["source"].to_numpy(object), cmp["status"].to_numpy(object)
    limit = (np.array([tol.get(src, 1.0) for src in source], float) if isinstance(tol, dict)
             else np.full(len(cmp), float(tol)))
    det, ref = cmp["detected_time_s"].to_numpy(float), cmp["reference_time_s"].to_numpy(float)
    if file:
        lo, hi = min(e.time for e in file), max(e.time for e in file)
        inside = ((det >= lo) & (det <= hi)) | ~np.isnan(ref)
    else:
        lo = hi = np.nan
        inside = np.zeros(len(cmp), bool)
    paired = status == "paired"
    disagree = (paired & (np.abs(cmp["frame_difference"].to_numpy(float)) > limit)) | (
        ~paired & inside & bool(file) & bool(detected)
    )
    cmp["disagree"] = disagree
    if prefer == "detected" or not file:
        events = list(detected)
    elif prefer == "file":
        events = list(file)
    else:
        events = list(file) + [e for e in detected if not (lo - window <= e.time <= hi + window)]
    events = sorted(events, key=lambda e: e.time)
    return EventChoice(events, cmp, prefer, int(disagree.sum()))


def inside_the_data(trial: Trial, events: list[Event]) -> tuple[list[Event], list[str]]:
    """The ``events`` inside the trial's frames (first to last frame, half a frame of rounding either
    side) and a note naming those outside: an event before the first frame or after the last has no
    markers or plate data around it, so it makes no cycle (and is not compared with the detected ones)."""
    if not events or not trial.n_frames:
        return list(events), []
    half = 0.5 / trial.point_rate
    lo, hi = float(trial.time[0]), float(trial.time[-1])
    inside = [e for e in events if lo - half <= e.time <= hi + half]
    if len(inside) == len(events):
        return list(events), []
    out = [e for e in events if not lo - half <= e.time <= hi + half]
    named = ", ".join(f"{e.context} {e.label} {e.time:.3f} s" for e in out[:4]) + (", ..." if len(out) > 4 else "")
    return inside, [f"{len(out)} file event(s) outside the data ({lo:.3f}-{hi:.3f} s, frames "
                    f"{trial.first_frame}-{trial.first_frame + trial.n_frames - 1}) ignored: they make no cycle "
                    f"({named})"]


def gait_events(trial: Trial, contacts: list[FootContact], markers: GaitMarkers, prefer: str = "file",
                tolerance: float | dict | None = None, fills: MarkerFills | None = None,
                trusted_s: float = 0.15) -> EventChoice:
    """The trial's gait events (the events stage): the file's, checked against detection from
    the assigned plate contacts and from kinematics (Zeni).

    When the kinematic detection is impossible (no pelvis or foot markers) but the file
    or the plates give events, it is skipped and the reason is in ``notes``. ``fills``: the
    markers' filled gaps; a kinematic event on a fill it cannot trust is not placed
    (:mod:`gaitid.events.fill_trust`; ``trusted_s``: the longest trusted spline fill, s).
    """
    file, notes = inside_the_data(trial, file_events(trial))
    plate = plate_events(trial, contacts)
    try:
        raw, left_out = trusted_events(trial, zeni_events(trial, markers, refine_strike=False), markers, fills,
                                       trusted_s)
        notes += left_out
        strikes = kinematic_from_plate_lead(trial, raw, plate, FOOT_STRIKE)
        if strikes is None:  # no plate strike to learn the lead from: the heel impact
            strikes = impact_strikes(trial, markers, [e for e in raw if e.label == FOOT_STRIKE])
            strikes, left_out = trusted_events(trial, strikes, markers, fills, trusted_s, impact=True)
            notes += left_out
        offs = kinematic_from_plate_lead(trial, raw, plate, FOOT_OFF)
        offs = [e for e in raw if e.label == FOOT_OFF] if offs is None else offs
        kin = sorted(strikes + offs, key=lambda e: e.time)
    except DataError as err:
        if not (file or plate):
            raise
        kin = []
        notes.append(f"no kinematic events: {err.reason}")
    if any(c.source == "treadmill" for c in contacts):
        notes.append("treadmill trial (pelvis hardly advancing, belts loaded most of the time, moving belt "
                     "surfaces): foot contacts and plate events from the per-frame loads of each foot on the belts")
        file_near = [e for e in file if e.label in (FOOT_STRIKE, FOOT_OFF)]
        if prefer == "file" and not file_near:
            prefer = "detected"
    choice = resolve_events(file, combine_detected(plate, kin), trial.point_rate, prefer, tolerance)
    choice.notes = notes
    return choice
