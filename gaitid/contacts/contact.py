"""A foot contact: one foot placement on one or more plates, valid for kinetics or not, with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gaitid.contacts.intervals import ContactInterval


@dataclass
class FootContact:
    """One foot placement on one or more plates (or an invalid contact).

    ``plates``: 1-based plate indices. ``side``: 'Left', 'Right' or None (unknown foot).
    ``strike_time``/``off_time``: s, file clock (NaN when the contact was on at the
    record's start / end). ``valid``: usable for kinetics; ``reason`` says why not
    ('' when valid and wholly measured). ``feet``: the feet found on the plate(s) (both for two feet).
    ``cop_under``: fraction of the evaluated frames with the COP under each foot.
    ``source``: 'auto', 'override' or 'treadmill' (built from the per-frame ownership of the
    belts, :mod:`gaitid.contacts.treadmill`). ``frames_only``: invalid only because of some of its
    frames (the reason says which and for how long); the foot's load is measured, and given, on
    the others, but the contact gives no kinetic cycle. ``decomposed_s``: how long (s) the foot's
    load is its share of a plate both feet load (:mod:`gaitid.contacts.decompose`); a valid contact
    with such frames says so in ``reason`` ('plate 1: 0.16 s decomposed').
    """

    plates: tuple[int, ...]
    side: str | None
    strike_time: float
    off_time: float
    valid: bool
    reason: str
    feet: tuple[str, ...] = ()
    cop_under: dict = field(default_factory=dict)
    source: str = "auto"
    frames_only: bool = False
    intervals: list[ContactInterval] = field(default_factory=list)
    decomposed_s: float = 0.0

    @property
    def complete(self) -> bool:
        return bool(np.isfinite(self.strike_time) and np.isfinite(self.off_time))


LISTED_REJECTED = 10  # rejected contacts a person is shown one by one; the others are counted


def listed_rejections(contacts: list[FootContact]) -> tuple[list[FootContact], int]:
    """The rejected (invalid) contacts to list one by one (the first :data:`LISTED_REJECTED`), and
    how many more there are: a long treadmill trial rejects hundreds (both feet on a belt), every
    one of them with its reason in the contacts table."""
    rejected = [c for c in contacts if not c.valid]
    return rejected[:LISTED_REJECTED], max(0, len(rejected) - LISTED_REJECTED)
