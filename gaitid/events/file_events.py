"""Gait events stored in the file: Vicon's labels and the short forms other software writes.

Vicon labels are kept; the short forms written by other software (``LHS``/``RHS``/``LTO``/``RTO``,
``LFS``/``RFS``/``LFO``/``RFO``, ``Left Foot Strike``...) are mapped to ``Foot Strike``/``Foot Off``
+ ``Left``/``Right`` (:func:`canonical_event`). Any other event is kept apart
(:func:`other_events`), never dropped.
"""

from __future__ import annotations

import re

from gaitid.core.trial import Event, Trial
from gaitid.core.vocabulary import FOOT_OFF, FOOT_STRIKE, SIDES

_SHORT = {
    "HS": FOOT_STRIKE,
    "FS": FOOT_STRIKE,
    "IC": FOOT_STRIKE,
    "TO": FOOT_OFF,
    "FO": FOOT_OFF,
}


def canonical_event(event: Event) -> Event | None:
    """The event with label 'Foot Strike'/'Foot Off' and context 'Left'/'Right', or None.

    Accepts Vicon's form (label 'Foot Strike', context 'Left') and the short
    forms ``LHS``, ``RTO``, ``LFS``, ``R_FO``, ``Left Foot Strike``, ``Right_HS`` ...
    """
    label = event.label.strip()
    context = (event.context or "").strip().capitalize()
    low = label.lower()
    kind = None
    if "strike" in low or "contact" in low:
        kind = FOOT_STRIKE
    elif "off" in low:
        kind = FOOT_OFF
    side = context if context in SIDES else None
    if side is None:
        m = re.match(r"^(left|right)\b", low)
        if m:
            side = m.group(1).capitalize()
    if kind is None or side is None:
        m = re.fullmatch(r"([LR])[ _-]?(HS|FS|IC|TO|FO)", label.upper())
        if m:
            side = side or ("Left" if m.group(1) == "L" else "Right")
            kind = kind or _SHORT[m.group(2)]
    if kind is None or side is None:
        return None
    return Event(kind, side, float(event.time), int(event.frame), event.source)


def file_events(trial: Trial) -> list[Event]:
    """Foot strikes and foot offs stored in the file, normalised and sorted by time."""
    out = [e for e in (canonical_event(ev) for ev in trial.events) if e is not None]
    return sorted(out, key=lambda e: e.time)


def other_events(trial: Trial) -> list[Event]:
    """The file's events that are not foot strikes or foot offs (kept as stored)."""
    return [ev for ev in trial.events if canonical_event(ev) is None]


def event_at(trial: Trial, label: str, side: str, time: float, source: str) -> Event:
    """An event at ``time`` (s, file clock) with its Vicon frame number."""
    return Event(label, side, float(time), int(round(time * trial.point_rate)) + 1, source)
