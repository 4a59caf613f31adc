"""Gait events: from the file, from the assigned plate contacts, from kinematics (Zeni 2008).

Every event is a :class:`gaitid.core.trial.Event` on the file's clock (s): label ``'Foot Strike'``
or ``'Foot Off'``, context ``'Left'`` or ``'Right'``, and ``source`` ``'file'``, ``'plate'``
or ``'kinematics'``.

- :mod:`gaitid.events.file_events` -- the file's events, Vicon's labels and the short forms;
- :mod:`gaitid.events.zeni` -- foot strike and foot off from heel and toe markers;
- :mod:`gaitid.events.choice` -- plate events from the contacts, comparison, and the choice
  (:func:`gait_events`, the events stage). Events never compute contacts: they take them.
"""

from gaitid.events.choice import (
    DEFAULT_TOLERANCE,
    EventChoice,
    combine_detected,
    compare_events,
    gait_events,
    inside_the_data,
    kinematic_from_plate_lead,
    plate_events,
    resolve_events,
)
from gaitid.events.file_events import canonical_event, event_at, file_events, other_events
from gaitid.events.zeni import refine_strikes, zeni_events, zeni_signals

__all__ = [
    "DEFAULT_TOLERANCE", "EventChoice", "canonical_event", "combine_detected", "compare_events", "event_at",
    "file_events", "gait_events", "inside_the_data", "kinematic_from_plate_lead", "other_events", "plate_events", "refine_strikes",
    "resolve_events", "zeni_events", "zeni_signals",
]
