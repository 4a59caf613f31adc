"""Kinematic events on filled marker data: placed only where the fill is trusted.

Zeni's detection (:mod:`gaitid.events.zeni`) reads one marker per event: a foot strike the heel (its
maximum along the direction of progression, or the heel's impact, its peak vertical acceleration,
when no plate strike gives the lead), a foot off the toe (its minimum). A kinematic event on a frame
where that marker was filled (:class:`gaitid.model.gap_fill.MarkerFills`) is kept only when the fill
is **trusted** for events:

- a ``rigid_static``, ``rigid`` or ``pca`` fill (any length up to ``Settings.max_fill_s``): on the
  clean real trials with a gap centred on each event, the heel maximum stayed within 1 frame and
  the toe minimum within 2 (0.03-0.5 s gaps, docs/gaps.md);
- a ``spline`` fill up to ``Settings.trusted_spline_s`` (0.15 s): within 2 frames up to 0.15 s,
  beyond it the spline rounds the extremum off (0.3 s: 31 of 31 heel maxima moved 2-5 frames);
- for the heel's impact, no fill: a fill never reproduces the impact's spike (a 0.03 s PCA fill
  moved 9 of 34 strikes by 2 frames, a 0.05 s spline 18 of 33).

An event on an untrusted fill is not placed (the plates' events and the file's are not affected);
the note names it, the marker, the fill and why. Fills of the pelvis markers are not considered: the
pelvis centre is the mean of four or five markers.
"""

from __future__ import annotations

from gaitid.core.trial import Event, Trial
from gaitid.core.vocabulary import FOOT_STRIKE
from gaitid.model.gait_markers import GaitMarkers
from gaitid.model.gap_fill import MarkerFills

TRUSTED_METHODS = ("rigid_static", "rigid", "pca")  # trusted for the heel maximum and the toe minimum


def trusted_events(trial: Trial, events: list[Event], markers: GaitMarkers, fills: MarkerFills | None,
                   spline_s: float, impact: bool = False) -> tuple[list[Event], list[str]]:
    """The kinematic ``events`` (others pass) not on an untrusted fill of the marker they read (module
    docstring), and one note per event left out. ``spline_s``: the longest trusted spline fill (s);
    ``impact``: the strikes are heel impacts (no fill trusted)."""
    if fills is None or not fills.filled:
        return list(events), []
    kept, notes = [], []
    for e in events:
        foot = markers.foot(e.context) if e.source == "kinematics" else None
        label = None if foot is None else foot.heel if e.label == FOOT_STRIKE else foot.toe
        k = trial.index_of_time(e.time)
        fill = next((f for f in fills.filled if f.label == label and f.start <= k < f.stop), None)
        seconds = fill and (fill.stop - fill.start) / trial.point_rate
        if fill is None or (not (impact and e.label == FOOT_STRIKE) and (
                fill.method in TRUSTED_METHODS or (fill.method == "spline" and seconds <= spline_s))):
            kept.append(e)
            continue
        why = ("a fill never reproduces the heel's impact" if impact and e.label == FOOT_STRIKE else
               f"a spline over more than trusted_spline_s {spline_s:g} s rounds the extremum off")
        notes.append(f"kinematic {e.context} {e.label} at {e.time:.3f} s (frame {e.frame}) not placed: {label} "
                     f"was filled there by {fill.method} (frames {trial.first_frame + fill.start}-"
                     f"{trial.first_frame + fill.stop - 1}, {seconds:.2f} s), which events do not trust: {why}")
    return kept, notes
