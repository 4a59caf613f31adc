"""The in-memory trial: what every reader produces and every later stage consumes.

Everything here is in SI units (m, kg, s, N, N.m) and in one right-handed lab
frame with Z up (the reader rotates Y-up files and records the rotation).
Arrays are batch-first: ``(n_frames, 3)`` for a vector over time. Missing data
is NaN, never 0.

Frame numbers follow Vicon/Mokka: array index ``i`` is frame number
``first_frame + i`` and its time is ``(first_frame + i - 1) / point_rate``
seconds, the clock EVENT:TIMES are stored on (so an event time maps to index
``round(time * point_rate) - first_frame + 1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gaitid.core.errors import DataError
from gaitid.core.subject_record import Subject


@dataclass
class PlateWrench:
    """One force plate's load on the subject, at one sampling rate, in the lab frame.

    ``force``: ground reaction force acting ON the subject (N), +Z up while standing.
    ``cop``: centre of pressure on the plate surface (m); NaN while |Fz| is below the threshold.
    ``free_moment``: moment about the centre of pressure acting on the subject (N.m);
    for a flat plate only its Z component is non-zero (the free moment Tz).
    """

    rate: float
    force: np.ndarray  # (n, 3) N, lab
    cop: np.ndarray  # (n, 3) m, lab
    free_moment: np.ndarray  # (n, 3) N.m, lab

    @property
    def n_samples(self) -> int:
        return self.force.shape[0]


@dataclass
class ForcePlate:
    """A used force plate (FORCE_PLATFORM group entry), wrenches in the lab frame.

    ``index`` is 1-based as in the file. ``corners`` (4, 3) and ``origin`` (3,)
    are in m; ``corners`` in the lab, ``origin`` as stored: the plate-frame vector
    from the sensor origin to the centre of the plate surface (C3D spec).
    ``analog`` is the wrench at the analog rate, ``point`` the same resampled to
    the point rate (one value per point frame). ``offset``: what the reader subtracted
    from each of the plate's channels (file units, ``channels`` order; FORCE_PLATFORM:ZERO
    and/or an unloaded baseline), ``offset_note`` says which (empty: nothing).
    ``units_read``: the unit the reader took each channel in (``channels`` order, e.g. 'N',
    'N.mm': FORCE_PLATFORM:UNITS and POINT:UNITS, as ezc3d; '' where a channel has no unit of
    its own, e.g. raw channels through a calibration matrix); ``units_stored``: the file's
    ANALOG:UNITS of the same channels. Both empty when the source has no such record.
    """

    index: int
    type: int
    corners: np.ndarray
    origin: np.ndarray
    channels: list[str]
    analog: PlateWrench
    point: PlateWrench
    offset: np.ndarray | None = None
    offset_note: str = ""
    units_read: tuple[str, ...] = ()
    units_stored: tuple[str, ...] = ()

    @property
    def centre(self) -> np.ndarray:
        """Centre of the plate surface in the lab (m)."""
        return np.nanmean(self.corners, axis=0)


@dataclass
class Event:
    """A gait event. ``label`` as stored ('Foot Strike', 'Foot Off', or other);
    ``context`` 'Left', 'Right' or 'General'; ``time`` in s on the file's clock;
    ``frame`` the Vicon frame number (``round(time * point_rate) + 1``)."""

    label: str
    context: str
    time: float
    frame: int
    source: str = "file"  # 'file', 'plate' or 'kinematics'


@dataclass
class Analogs:
    """Analog channels: ``values`` (n_samples, n_channels) in the file's units after scaling/offset;
    sample ``j`` at time ``(first_frame - 1) / point_rate + j / rate`` (the file clock).
    ``descriptions``: ANALOG:DESCRIPTIONS per channel ('' where absent)."""

    rate: float
    labels: list[str]
    units: list[str]
    values: np.ndarray
    descriptions: list[str] = field(default_factory=list)


@dataclass
class ModelOutput:
    """A model output stored in the file (e.g. Plug-in Gait's ``LAnkleMoment``).

    ``kind``: 'angle', 'force', 'moment', 'power' or 'other'. ``values`` (n_frames, 3)
    converted to SI: degrees for angles (kept as clinical convention), and for
    Plug-in Gait kinetics mass-normalised SI (N/kg, N.m/kg, W/kg) as ``unit`` says.
    NaN where the model did not compute the frame.
    """

    label: str
    kind: str
    unit: str
    values: np.ndarray


@dataclass(frozen=True)
class Trial:
    """One motion-capture trial in SI units, in a Z-up right-handed lab frame.

    Frozen: nobody sets its fields after reading (a changed trial is a new one,
    ``dataclasses.replace(trial, ...)``). ``subject`` is what the file stores (its
    PROCESSING values, :class:`~gaitid.core.subject_record.Subject`); the subject a trial is
    processed with comes from the subject stage (:mod:`gaitid.subject`)."""

    path: Path | None
    point_rate: float
    first_frame: int
    marker_labels: list[str]
    markers: np.ndarray  # (n_frames, n_markers, 3) m, lab; NaN where missing
    virtual_labels: list[str] = field(default_factory=list)  # PiG segment points, joint centres, CentreOfMass...
    virtual_points: np.ndarray | None = None  # (n_frames, n_virtual, 3) m, lab
    model_outputs: dict[str, ModelOutput] = field(default_factory=dict)
    analogs: Analogs | None = None
    force_plates: list[ForcePlate] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    subject: Subject = field(default_factory=Subject)
    manufacturer: str = ""
    software: str = ""
    lab_rotation: np.ndarray = field(default_factory=lambda: np.eye(3))  # file lab -> this Z-up lab
    warnings: list[str] = field(default_factory=list)
    _lookup: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # label -> (kind, index)

    @property
    def n_frames(self) -> int:
        return self.markers.shape[0]

    @property
    def frames(self) -> np.ndarray:
        """Vicon frame number of every array index."""
        return self.first_frame + np.arange(self.n_frames)

    @property
    def time(self) -> np.ndarray:
        """Time of every array index (s), on the clock event times use."""
        return (self.frames - 1) / self.point_rate

    @property
    def duration(self) -> float:
        return self.n_frames / self.point_rate

    def index_of_time(self, t: float | np.ndarray) -> np.ndarray | int:
        """Nearest array index of a time on the file's clock (may fall outside the trial)."""
        idx = np.rint(np.asarray(t) * self.point_rate).astype(int) - self.first_frame + 1
        return int(idx) if idx.ndim == 0 else idx

    def indices_between(self, a: float, b: float) -> np.ndarray:
        """Array indices of the frames nearest to times a..b (s, file clock), inclusive, inside the trial."""
        lo = max(int(self.index_of_time(a)), 0)
        hi = min(int(self.index_of_time(b)), self.n_frames - 1)
        return np.arange(lo, hi + 1)

    def _where(self, label: str) -> tuple[str, int] | None:
        """('marker' | 'virtual', index) of a label: a dict lookup, rebuilt when a label list is replaced,
        changes length or was edited in place (first occurrence wins, as ``list.index``)."""
        key = (id(self.marker_labels), len(self.marker_labels), id(self.virtual_labels), len(self.virtual_labels))
        stale = self._lookup.get("key") != key
        if not stale and label not in self._lookup["table"]:  # a miss: were labels renamed in place?
            stale = self._lookup["snapshot"] != (self.marker_labels, self.virtual_labels)
        if stale:
            table: dict[str, tuple[str, int]] = {}
            for i, lab in enumerate(self.virtual_labels):
                table.setdefault(lab, ("virtual", i))
            for i, lab in enumerate(self.marker_labels):  # markers win over virtual points of the same name
                if table.get(lab, ("virtual",))[0] != "marker":
                    table[lab] = ("marker", i)
            self._lookup.clear()
            self._lookup.update(key=key, table=table, snapshot=(list(self.marker_labels), list(self.virtual_labels)))
        hit = self._lookup["table"].get(label)
        if hit is not None:  # guard against an element replaced in place
            labels = self.marker_labels if hit[0] == "marker" else self.virtual_labels
            if hit[1] >= len(labels) or labels[hit[1]] != label:
                self._lookup.clear()
                return self._where(label)
        return hit

    def point(self, label: str) -> np.ndarray:
        """Trajectory (n_frames, 3) in m of a marker or virtual point by label."""
        hit = self._where(label)
        if hit is not None and hit[0] == "marker":
            return self.markers[:, hit[1], :]
        if hit is not None and self.virtual_points is not None:
            return self.virtual_points[:, hit[1], :]
        where = f" in {self.path}" if self.path else ""
        raise DataError(f"no point labelled '{label}'{where}", self.path)

    def has_points(self, *labels: str) -> bool:
        return all(self._where(lab) is not None for lab in labels)
