"""Data-quality checks: what each check found on a trial, and the thresholds they use.

Every trial is checked by physics before its kinetics are trusted (docs/checks.md): the body
mass against the plates, the plates' geometry and units, the markers (segment lengths,
stuck markers, left/right swaps) and the dynamic consistency of the whole (the centre of
mass's acceleration against the ground reaction force). Each check gives one :class:`Check`
whatever happens: it passed (with the figure it measured), it warned (with the warning that
names the problem, also in ``Result.warnings``), or it could not run (with why). A check that
finds the trial unusable raises a DataError instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

PASSED, WARNED, NOT_RUN = "passed", "warned", "not run"
STATUSES = (PASSED, WARNED, NOT_RUN)


@dataclass(frozen=True)
class Check:
    """One check's outcome on one trial: ``name`` (e.g. 'body mass'), ``status`` (``PASSED``,
    ``WARNED``, ``NOT_RUN``), ``detail`` (one line: the figure measured against its threshold,
    or why the check could not run) and ``warnings`` (each naming the problem, where it is and
    the likely causes; empty unless WARNED)."""

    name: str
    status: str
    detail: str
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"check status {self.status!r} not in {STATUSES}")
        if (self.status == WARNED) != bool(self.warnings):
            raise ValueError("a check warns exactly when it has warnings")

    @classmethod
    def outcome(cls, name: str, detail: str, warnings: Iterable[str] = ()) -> "Check":
        """PASSED, or WARNED when there is any warning."""
        found = tuple(warnings)
        return cls(name, WARNED if found else PASSED, detail, found)

    @classmethod
    def not_run(cls, name: str, why: str) -> "Check":
        return cls(name, NOT_RUN, why)


def verdict(checks: Iterable[Check]) -> str:
    """One line for a person: 'data checks: 1 warned (plate geometry), 3 passed (body mass, ...), 1 not
    run (...)', led by 'CHECK FIRST - ' when any warned."""
    checks = list(checks)
    if not checks:
        return "data checks: none run"
    parts = []
    for status in (WARNED, PASSED, NOT_RUN):
        names = [c.name for c in checks if c.status == status]
        if names:
            parts.append(f"{len(names)} {status} ({', '.join(names)})")
    head = "CHECK FIRST - data checks" if any(c.status == WARNED for c in checks) else "data checks"
    return f"{head}: " + ", ".join(parts)
