"""Clinical gait parameters, each taken in the phase of the cycle where clinicians read it.

Whole-cycle extremes mislead: the knee's largest internal flexor moment falls in terminal
swing (the hamstrings decelerating the shank), not in terminal stance where clinicians
look for it. Here every parameter names its variable, component, the phase window it is
taken in and what a positive value means, in one data table (:data:`PARAMETERS`), so the
same definitions serve the internal and the external moment convention.

Phases (Perry & Burnfield 2010), in % of the cycle from the cycle's own events (``FO`` foot
off, ``OFO`` opposite foot off, ``OFS`` opposite foot strike; ``MSS`` = (OFO + OFS) / 2,
the middle of single support, standing in for heel rise):

===================  ==========================  =====================================
phase                window (% cycle)            notes
===================  ==========================  =====================================
loading_response     0 .. OFO                    first double support
mid_stance           OFO .. MSS
terminal_stance      MSS .. OFS
pre_swing            OFS .. FO                   second double support
early_stance         0 .. MSS                    loading response + mid-stance
late_stance          MSS .. FO                   terminal stance + pre-swing
first_half_stance    0 .. FO/2
second_half_stance   FO/2 .. FO
stance               0 .. FO
initial_swing        FO .. FO + (100-FO)/3       thirds of swing
mid_swing            .. FO + 2 (100-FO)/3
terminal_swing       .. 100
swing                FO .. 100
cycle                0 .. 100
initial_contact      0 (an instant)
foot_off             FO (an instant)
===================  ==========================  =====================================

plus the power-burst windows of :data:`gaitid.cycles.parameters.BURSTS` (Winter 1991, Eng & Winter
1995), kept as they are (``A2_window``... in the table).

Kinds of parameter: ``peak`` (the largest value in the named direction within the window;
the window's ends are included, interpolated at the exact event times); ``at`` (the value
at the window's start, an instant, interpolated); ``range`` (maximum minus minimum over
the window: range of motion); ``mean`` (mean of the 1 %-grid samples inside the window);
``generation`` / ``absorption`` (a power burst exactly as :func:`gaitid.cycles.parameters.power_burst`:
the extremum of that sign on the grid samples inside the window, NaN when the window has
none).

Values are reported **positive in the named direction** (``positive`` column): 'knee
extensor moment, early stance, peak' is +0.5 N.m/kg under either convention. A moment's peak
is never reported with the wrong sign: when the window holds none of the named moment (the
opposite one, or none, throughout) the peak is *absent*: NaN with ``note`` 'absent: no
extensor moment in the early stance ...'. (An angle's peak keeps its sign: -3 deg of 'ankle
dorsiflexion, stance, peak' is a foot that stays plantarflexed.) Power bursts keep the
power's sign (absorption negative), as the parameters table does.
A value is NaN, with the reason in ``note``, when the window is undefined (an event is
missing), the curve has a gap inside the window, the named moment is absent, or (bursts) there
is no burst. ``note`` also flags a peak found on the window's edge (the curve keeps rising
beyond it: no peak inside the phase).

Sources: docs/clinical.md gives the reference of every definition.

Length: the definitions are one data table (about 80 lines), kept beside the phases they name and
the one batched evaluator that reads them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError, SettingsError

N_POINTS = 101
CONVENTIONS = ("internal", "external")
COMPONENT_INDEX = {"X": 0, "Y": 1, "Z": 2}

COLUMNS = ["side", "cycle", "parameter", "variable", "component", "value", "unit", "percent", "phase",
           "window_start_pct", "window_end_pct", "time_s", "frame", "positive", "note"]


# --------------------------------------------------------------------------- events and phases


@dataclass(frozen=True)
class CycleEvents:
    """Event timing of one cycle, or of several (arrays of equal length), in % of the cycle.

    ``foot_off``: this foot's foot off; ``opposite_off`` / ``opposite_strike``: the other
    foot's foot off and foot strike inside the cycle (NaN when absent). ``start_time`` /
    ``end_time``: the cycle's strikes on the file clock (s), for the time of each extremum
    (NaN when unknown).
    """

    foot_off: float | np.ndarray
    opposite_off: float | np.ndarray = np.nan
    opposite_strike: float | np.ndarray = np.nan
    start_time: float | np.ndarray = np.nan
    end_time: float | np.ndarray = np.nan

    def arrays(self) -> dict[str, np.ndarray]:
        """The fields as 1-D float arrays of one common length."""
        values = {k: np.atleast_1d(np.asarray(getattr(self, k), float))
                  for k in ("foot_off", "opposite_off", "opposite_strike", "start_time", "end_time")}
        n = max(v.size for v in values.values())
        try:
            return {k: np.broadcast_to(v, (n,)).copy() for k, v in values.items()}
        except ValueError:
            raise DataError(f"CycleEvents fields have different lengths: "
                            f"{ {k: v.size for k, v in values.items()} }") from None

    @classmethod
    def from_table(cls, cycles: pd.DataFrame) -> "CycleEvents":
        """From a cycles table (:func:`gaitid.cycles.curves.cycles_table`): ``foot_off_pct``,
        ``opposite_off_pct``, ``opposite_strike_pct`` and, when present, ``start_time_s``, ``end_time_s``."""
        def col(name):
            return cycles[name].to_numpy(float) if name in cycles.columns else np.full(len(cycles), np.nan)

        return cls(col("foot_off_pct"), col("opposite_off_pct"), col("opposite_strike_pct"),
                   col("start_time_s"), col("end_time_s"))


@dataclass(frozen=True)
class Phase:
    """A window of the cycle: ``start`` and ``end`` map the event arrays (``ic``, ``ofo``, ``mss``,
    ``ofs``, ``fo``, ``end``; % cycle) to the window's limits; ``definition`` says it in words."""

    definition: str
    start: Callable[[Mapping[str, np.ndarray]], np.ndarray]
    end: Callable[[Mapping[str, np.ndarray]], np.ndarray]
    needs: tuple[str, ...] = ()  # events the window needs, named in the note when missing


def _swing(e, k):
    return e["fo"] + k * (100.0 - e["fo"]) / 3.0


PHASES: dict[str, Phase] = {
    "loading_response": Phase("initial contact to opposite foot off", lambda e: e["ic"], lambda e: e["ofo"],
                              ("opposite foot off",)),
    "mid_stance": Phase("opposite foot off to mid single support", lambda e: e["ofo"], lambda e: e["mss"],
                        ("opposite foot off", "opposite foot strike")),
    "terminal_stance": Phase("mid single support to opposite foot strike", lambda e: e["mss"], lambda e: e["ofs"],
                             ("opposite foot off", "opposite foot strike")),
    "pre_swing": Phase("opposite foot strike to foot off", lambda e: e["ofs"], lambda e: e["fo"],
                       ("opposite foot strike",)),
    "early_stance": Phase("initial contact to mid single support (loading response + mid-stance)",
                          lambda e: e["ic"], lambda e: e["mss"], ("opposite foot off", "opposite foot strike")),
    "late_stance": Phase("mid single support to foot off (terminal stance + pre-swing)",
                         lambda e: e["mss"], lambda e: e["fo"], ("opposite foot off", "opposite foot strike")),
    "first_half_stance": Phase("initial contact to half of stance", lambda e: e["ic"], lambda e: e["fo"] / 2),
    "second_half_stance": Phase("half of stance to foot off", lambda e: e["fo"] / 2, lambda e: e["fo"]),
    "stance": Phase("initial contact to foot off", lambda e: e["ic"], lambda e: e["fo"]),
    "initial_swing": Phase("first third of swing", lambda e: _swing(e, 0), lambda e: _swing(e, 1)),
    "mid_swing": Phase("second third of swing", lambda e: _swing(e, 1), lambda e: _swing(e, 2)),
    "terminal_swing": Phase("last third of swing", lambda e: _swing(e, 2), lambda e: e["end"]),
    "swing": Phase("foot off to the next initial contact", lambda e: e["fo"], lambda e: e["end"]),
    "cycle": Phase("the whole cycle", lambda e: e["ic"], lambda e: e["end"]),
    "initial_contact": Phase("the instant of initial contact (0 %)", lambda e: e["ic"], lambda e: e["ic"]),
    "foot_off": Phase("the instant of foot off", lambda e: e["fo"], lambda e: e["fo"]),
    # power-burst windows, as gaitid.cycles.parameters.BURSTS (Winter 1991; Eng & Winter 1995)
    "A2_window": Phase("FO/2 to FO + 5", lambda e: e["fo"] / 2, lambda e: e["fo"] + 5.0),
    "K1_window": Phase("0 to 0.3 FO", lambda e: e["ic"], lambda e: 0.3 * e["fo"]),
    "K2_window": Phase("0.15 FO to 0.6 FO", lambda e: 0.15 * e["fo"], lambda e: 0.6 * e["fo"]),
    "K3_window": Phase("0.7 FO to FO + 0.25 (100 - FO)", lambda e: 0.7 * e["fo"],
                       lambda e: e["fo"] + 0.25 * (100.0 - e["fo"])),
    "K4_window": Phase("FO + 0.5 (100 - FO) to 100", lambda e: e["fo"] + 0.5 * (100.0 - e["fo"]), lambda e: e["end"]),
    "H1_window": Phase("0 to 0.5 FO", lambda e: e["ic"], lambda e: 0.5 * e["fo"]),
    "H2_window": Phase("0.3 FO to FO", lambda e: 0.3 * e["fo"], lambda e: e["fo"]),
    "H3_window": Phase("0.75 FO to FO + 0.5 (100 - FO)", lambda e: 0.75 * e["fo"],
                       lambda e: e["fo"] + 0.5 * (100.0 - e["fo"])),
}


def phase_windows(events: CycleEvents) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{phase: (start %, end %)} arrays over the cycles of ``events`` (NaN where an event is missing)."""
    e = _event_points(events)
    return {name: (np.asarray(p.start(e), float), np.asarray(p.end(e), float)) for name, p in PHASES.items()}


def _event_points(events: CycleEvents) -> dict[str, np.ndarray]:
    a = events.arrays()
    n = a["foot_off"].size
    return {"ic": np.zeros(n), "ofo": a["opposite_off"], "ofs": a["opposite_strike"],
            "mss": 0.5 * (a["opposite_off"] + a["opposite_strike"]), "fo": a["foot_off"], "end": np.full(n, 100.0)}


# --------------------------------------------------------------------------- the definitions


@dataclass(frozen=True)
class ClinicalParameter:
    """One parameter. ``sign``: (internal, external) factor turning the curve into the value,
    positive in the ``positive`` direction (angles and powers: the same under both)."""

    name: str
    variable: str
    component: str  # 'X' sagittal, 'Y' frontal, 'Z' transverse; '' for a scalar (power)
    positive: str
    sign: tuple[int, int]
    phase: str
    kind: str  # peak | at | range | mean | generation | absorption
    kinetic: bool
    source: str


_INT_POS, _EXT_POS = (1, -1), (-1, 1)  # moment direction positive under the internal / the external convention
_SAME = (1, 1)
_NEG = (-1, -1)

# name, variable, component, positive, sign, phase, kind, source key (docs/clinical.md)
_TABLE = [
    # moments (internal convention: + = flexor / dorsiflexor / adductor, docs/conventions.md)
    ("ankle dorsiflexor moment, loading response, peak", "AnkleMoment", "X", "dorsiflexor moment", _INT_POS,
     "loading_response", "peak", "Winter 1991; Perry 2010"),
    ("ankle plantarflexor moment, late stance, peak", "AnkleMoment", "X", "plantarflexor moment", _EXT_POS,
     "late_stance", "peak", "Winter 1991; Perry 2010"),
    ("knee extensor moment, early stance, peak", "KneeMoment", "X", "extensor moment", _EXT_POS,
     "early_stance", "peak", "Winter 1991; Benedetti 1998"),
    ("knee flexor moment, terminal stance, peak", "KneeMoment", "X", "flexor moment", _INT_POS,
     "terminal_stance", "peak", "Winter 1991; Benedetti 1998"),
    ("knee extensor moment, pre-swing, peak", "KneeMoment", "X", "extensor moment", _EXT_POS,
     "pre_swing", "peak", "Winter 1991; Perry 2010"),
    ("hip extensor moment, early stance, peak", "HipMoment", "X", "extensor moment", _EXT_POS,
     "early_stance", "peak", "Winter 1991; Benedetti 1998"),
    ("hip flexor moment, late stance, peak", "HipMoment", "X", "flexor moment", _INT_POS,
     "late_stance", "peak", "Winter 1991; Benedetti 1998"),
    ("hip abductor moment, first half of stance, peak", "HipMoment", "Y", "abductor moment", _EXT_POS,
     "first_half_stance", "peak", "Winter 1991"),
    ("hip abductor moment, second half of stance, peak", "HipMoment", "Y", "abductor moment", _EXT_POS,
     "second_half_stance", "peak", "Winter 1991"),
    ("knee adduction moment (external), first half of stance, peak", "KneeMoment", "Y",
     "external adduction (varus) moment", _EXT_POS, "first_half_stance", "peak", "Foroughi 2009"),
    ("knee adduction moment (external), second half of stance, peak", "KneeMoment", "Y",
     "external adduction (varus) moment", _EXT_POS, "second_half_stance", "peak", "Foroughi 2009"),
    # power bursts (unchanged definitions; value = power, + generation)
    ("A2", "AnklePower", "", "generation", _SAME, "A2_window", "generation", "Winter 1991; Eng & Winter 1995"),
    ("K1", "KneePower", "", "generation", _SAME, "K1_window", "absorption", "Winter 1991; Eng & Winter 1995"),
    ("K2", "KneePower", "", "generation", _SAME, "K2_window", "generation", "Winter 1991; Eng & Winter 1995"),
    ("K3", "KneePower", "", "generation", _SAME, "K3_window", "absorption", "Winter 1991; Eng & Winter 1995"),
    ("K4", "KneePower", "", "generation", _SAME, "K4_window", "absorption", "Winter 1991; Eng & Winter 1995"),
    ("H1", "HipPower", "", "generation", _SAME, "H1_window", "generation", "Winter 1991; Eng & Winter 1995"),
    ("H2", "HipPower", "", "generation", _SAME, "H2_window", "absorption", "Winter 1991; Eng & Winter 1995"),
    ("H3", "HipPower", "", "generation", _SAME, "H3_window", "generation", "Winter 1991; Eng & Winter 1995"),
    # kinematics (Plug-in Gait angle signs: flexion, dorsiflexion, adduction, internal rotation +)
    ("knee flexion, swing, peak", "KneeAngles", "X", "flexion", _SAME, "swing", "peak", "Benedetti 1998; Perry 2010"),
    ("knee flexion, initial contact", "KneeAngles", "X", "flexion", _SAME, "initial_contact", "at",
     "Benedetti 1998; Perry 2010"),
    ("knee flexion, range of motion", "KneeAngles", "X", "range", _SAME, "cycle", "range", "Benedetti 1998"),
    ("ankle dorsiflexion, stance, peak", "AnkleAngles", "X", "dorsiflexion", _SAME, "stance", "peak",
     "Benedetti 1998; Perry 2010"),
    ("ankle plantarflexion, foot off", "AnkleAngles", "X", "plantarflexion", _NEG, "foot_off", "at",
     "Benedetti 1998; Perry 2010"),
    ("hip extension, stance, peak", "HipAngles", "X", "extension", _NEG, "stance", "peak",
     "Benedetti 1998; Perry 2010"),
    ("pelvic tilt, range of motion", "PelvisAngles", "X", "range", _SAME, "cycle", "range", "Benedetti 1998"),
    ("pelvic obliquity, range of motion", "PelvisAngles", "Y", "range", _SAME, "cycle", "range", "Benedetti 1998"),
    ("pelvic rotation, range of motion", "PelvisAngles", "Z", "range", _SAME, "cycle", "range", "Benedetti 1998"),
    ("foot progression, stance, mean", "FootProgressAngles", "Z", "internal rotation (in-toeing)", _SAME, "stance",
     "mean", "Benedetti 1998"),
]

PARAMETERS: tuple[ClinicalParameter, ...] = tuple(
    ClinicalParameter(name, var, comp, pos, sign, phase, kind, not var.endswith("Angles"), src)
    for name, var, comp, pos, sign, phase, kind, src in _TABLE)
KINDS = ("peak", "at", "range", "mean", "generation", "absorption")


def _check_definitions(defs) -> None:
    for d in defs:
        if d.phase not in PHASES or d.kind not in KINDS or d.component not in ("X", "Y", "Z", ""):
            raise SettingsError(f"clinical parameter {d.name!r}: unknown phase {d.phase!r}, kind {d.kind!r} "
                                f"or component {d.component!r}")


_check_definitions(PARAMETERS)


# --------------------------------------------------------------------------- evaluation (batched over cycles)


def _interp_rows(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Linear interpolation of each row of ``y`` (n, P), sampled on an even 0-100 % grid, at ``x`` (n,) %;
    NaN where ``x`` is NaN or outside 0-100."""
    n, p = y.shape
    step = 100.0 / (p - 1)
    ok = np.isfinite(x) & (x >= 0) & (x <= 100)
    pos = np.where(ok, x, 0.0) / step
    i0 = np.clip(np.floor(pos).astype(int), 0, p - 2)
    f = pos - i0
    rows = np.arange(n)
    out = (1.0 - f) * y[rows, i0] + f * y[rows, i0 + 1]
    return np.where(ok, out, np.nan)


def _close(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.isclose(a, b)`` for finite windows (its default tolerances), without its overhead."""
    with np.errstate(invalid="ignore"):
        return np.abs(a - b) <= 1e-8 + 1e-5 * np.abs(b)


def evaluate(defn: ClinicalParameter, y: np.ndarray, lo: np.ndarray, hi: np.ndarray, convention: str = "internal",
             ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Value and percent (n,) of one parameter on normalised curves ``y`` (n_cycles, P) for windows
    [``lo``, ``hi``] % (n,), with a note per cycle ('' when the value is clean)."""
    if convention not in CONVENTIONS:
        raise SettingsError(f"convention {convention!r}: must be internal or external")
    y = np.atleast_2d(np.asarray(y, float))
    n = y.shape[0]
    s = float(defn.sign[0] if convention == "internal" else defn.sign[1])
    value, at, notes = evaluate_rows(defn.kind, y, np.broadcast_to(np.asarray(lo, float), (n,)),
                                     np.broadcast_to(np.asarray(hi, float), (n,)), np.full(n, s),
                                     np.full(n, directional(defn)))
    return value, at, [absent_note(defn) if note == ABSENT else note for note in notes]


ABSENT = "absent: the window holds none of the named direction"  # evaluate_rows' note, named by absent_note


def directional(defn: ClinicalParameter) -> bool:
    """Whether a non-positive value of ``defn`` means its named moment is absent (a moment's peak),
    rather than a value of its own (an angle's peak: a position either side of zero)."""
    return defn.kind == "peak" and defn.kinetic


def absent_note(defn: ClinicalParameter) -> str:
    """The note of an absent peak: 'absent: no dorsiflexor moment in the loading response (...)'."""
    return (f"absent: no {defn.positive} in the {defn.phase.replace('_', ' ')} "
            f"({PHASES[defn.phase].definition}); the opposite moment, or none, throughout")


def evaluate_rows(kind: str, y: np.ndarray, lo: np.ndarray, hi: np.ndarray, sign: np.ndarray,
                  directional: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`evaluate` of one kind of parameter for many rows at once (a row: one definition on
    one cycle): curves ``y`` (rows, P), windows ``lo``, ``hi`` and the positive direction ``sign``
    (rows,), so a trial's parameters cost a few array operations per kind, not per definition.
    ``directional`` (rows,): peaks that are absent (NaN, note :data:`ABSENT`) when not positive."""
    n, p = y.shape
    grid = np.linspace(0.0, 100.0, p)
    s = sign[:, None]
    value = np.full(n, np.nan)
    at = np.full(n, np.nan)
    notes = [""] * n
    window_ok = np.isfinite(lo) & np.isfinite(hi) & (hi >= lo)
    inside = (grid[None, :] >= lo[:, None]) & (grid[None, :] <= hi[:, None])  # (n, P)

    if kind in ("generation", "absorption"):  # gaitid.cycles.parameters.power_burst, batched
        b = 1.0 if kind == "generation" else -1.0
        w = inside & np.isfinite(y)
        score = np.where(w, b * y, -np.inf)
        k = np.argmax(score, axis=1)
        best = score[np.arange(n), k]
        found = window_ok & np.isfinite(best) & (best > 0)
        value = np.where(found, y[np.arange(n), k], np.nan)
        at = np.where(found, grid[k], np.nan)
        for i in np.flatnonzero(window_ok & ~found):
            notes[i] = f"no {kind} in the window"
    elif kind == "at":
        value = sign * _interp_rows(y, lo)
        at = np.where(np.isfinite(value), lo, np.nan)
        for i in np.flatnonzero(window_ok & ~np.isfinite(value)):
            notes[i] = "curve has no value at this instant"
    else:
        y_lo, y_hi = _interp_rows(y, lo), _interp_rows(y, hi)
        gap = (inside & ~np.isfinite(y)).any(axis=1) | ~np.isfinite(y_lo) | ~np.isfinite(y_hi)
        if kind == "mean":
            m = np.where(inside, y, 0.0).sum(axis=1)
            cnt = inside.sum(axis=1)
            value = np.where(cnt > 0, sign * m / np.maximum(cnt, 1), np.nan)
        else:
            xs = np.concatenate([np.broadcast_to(grid, (n, p)), lo[:, None], hi[:, None]], axis=1)
            ys = np.concatenate([y, y_lo[:, None], y_hi[:, None]], axis=1)
            use = np.concatenate([inside, np.ones((n, 2), bool)], axis=1)
            if kind == "range":
                value = (np.where(use, ys, -np.inf).max(axis=1) - np.where(use, ys, np.inf).min(axis=1))
            else:  # peak in the positive direction
                score = np.where(use, s * ys, -np.inf)
                k = np.argmax(score, axis=1)
                value = score[np.arange(n), k]
                at = xs[np.arange(n), k]
                edge = (_close(at, lo) | _close(at, hi)) & (hi - lo < 100.0)
                for i in np.flatnonzero(edge & ~gap & window_ok):
                    notes[i] = "peak on the window's edge: the curve keeps rising beyond it"
                if directional is not None:  # none of the named moment: absent, never a value of the wrong sign
                    absent = directional & ~gap & window_ok & ~(value > 0)
                    value = np.where(absent, np.nan, value)
                    at = np.where(absent, np.nan, at)
                    for i in np.flatnonzero(absent):
                        notes[i] = ABSENT
        value = np.where(gap, np.nan, value)
        at = np.where(gap, np.nan, at)
        for i in np.flatnonzero(gap & window_ok):
            notes[i] = "curve has missing samples in the window"
    bad = ~window_ok
    value = np.where(bad, np.nan, value)
    at = np.where(bad, np.nan, at)
    return value, at, notes


def clinical_parameters(curves: Mapping[str, np.ndarray], events: CycleEvents, *, convention: str = "internal",
                        frame: str = "distal", units: Mapping[str, str] | None = None, side: str = "",
                        cycle=0, point_rate: float | None = None,
                        definitions: tuple[ClinicalParameter, ...] = PARAMETERS) -> pd.DataFrame:
    """Clinical parameters of one cycle (or of several: batched arrays) as a tidy table.

    ``curves``: {variable: (P,) or (P, 3) array on an even 0-100 % grid (P = 101 usually)}, or
    batched (n, P) / (n, P, 3); a power given as (P, 3) is summed over its components (Plug-in
    Gait stores the total in Z). ``events``: the cycle's :class:`CycleEvents` (% cycle).
    ``convention``: the moments' convention ('internal', gaitid's default, or 'external'); with
    ``frame='lab'`` the moment components are lab axes, not anatomical, and moment parameters
    are NaN. ``side``/``cycle``: labels (``cycle`` may be an array for batched input).
    ``point_rate`` (Hz): to give the Vicon frame number of each extremum (with the events' times).
    Variables absent from ``curves`` give no rows. Columns: see :data:`COLUMNS`.
    """
    columns = _parameter_columns(curves, events, convention=convention, frame=frame, units=units, side=side,
                                 cycle=cycle, point_rate=point_rate, definitions=definitions)
    if columns is None:
        return pd.DataFrame(columns=COLUMNS)
    out = pd.DataFrame(columns)
    return out.sort_values(["cycle"], kind="stable").reset_index(drop=True)[COLUMNS]


def _parameter_columns(curves, events: CycleEvents, *, convention, frame, units, side, cycle, point_rate,
                       definitions) -> dict[str, np.ndarray] | None:
    """:func:`clinical_parameters`' columns (:data:`COLUMNS`) as arrays, definition by definition
    (one block of rows per definition, the cycles inside), plus ``_order`` (the definition's
    position); None when no definition's variable is in ``curves``."""
    if convention not in CONVENTIONS:
        raise SettingsError(f"convention {convention!r}: must be internal or external")
    _check_definitions(definitions)
    units = units or {}
    windows = phase_windows(events)
    ev = events.arrays()
    n = ev["foot_off"].size
    cycles = np.broadcast_to(np.asarray(cycle), (n,))
    used = [(order, d) for order, d in enumerate(definitions) if d.variable in curves]
    def rows(a):
        return a if a.shape == (n,) else np.broadcast_to(a, (n,))

    windows = {ph: (rows(lo), rows(hi)) for ph, (lo, hi) in windows.items()}
    components = {}  # (variable, component) -> (n, P): each curve taken once
    results = {}  # definition position -> (value, at, notes), evaluated kind by kind over all rows
    lab = frame == "lab"
    by_kind: dict[str, list] = {}
    for order, d in used:
        if d.variable.endswith("Moment") and lab:
            results[order] = (np.full(n, np.nan), np.full(n, np.nan),
                              ["moments in the lab frame have no anatomical components"] * n)
        else:
            by_kind.setdefault(d.kind, []).append((order, d))
    for kind, items in by_kind.items():
        for _, d in items:
            if (d.variable, d.component) not in components:
                components[d.variable, d.component] = _component(np.asarray(curves[d.variable], float), d, n)
        y = np.concatenate([components[d.variable, d.component] for _, d in items])
        lo = np.concatenate([windows[d.phase][0] for _, d in items])
        hi = np.concatenate([windows[d.phase][1] for _, d in items])
        sign = np.repeat([float(d.sign[0] if convention == "internal" else d.sign[1]) for _, d in items], n)
        value, at, notes = evaluate_rows(kind, y, lo, hi, sign, np.repeat([directional(d) for _, d in items], n))
        for j, (order, d) in enumerate(items):
            results[order] = (value[j * n:(j + 1) * n], at[j * n:(j + 1) * n],
                              [absent_note(d) if note == ABSENT else note for note in notes[j * n:(j + 1) * n]])
    if not used:
        return None
    k = len(used)
    value = np.concatenate([results[order][0] for order, _ in used])
    at = np.concatenate([results[order][1] for order, _ in used])
    lo = np.concatenate([windows[d.phase][0] for _, d in used])
    hi = np.concatenate([windows[d.phase][1] for _, d in used])
    undefined = ~(np.isfinite(lo) & np.isfinite(hi))
    notes = [note for order, _ in used for note in results[order][2]]
    for i in np.flatnonzero(undefined):
        d = used[i // n][1]
        notes[i] = f"window undefined: no {' / '.join(PHASES[d.phase].needs) or 'event'} in this cycle"
    start, end = np.tile(ev["start_time"], k), np.tile(ev["end_time"], k)
    time = start + at / 100.0 * (end - start)
    timed = np.repeat([d.kind not in ("range", "mean") for _, d in used], n)

    def text(values):
        return np.repeat(np.array(values, dtype=object), n)

    return {
        "side": np.tile(np.broadcast_to(np.asarray(side, dtype=object), (n,)), k), "cycle": np.tile(cycles, k),
        "parameter": text([d.name for _, d in used]), "variable": text([d.variable for _, d in used]),
        "component": text([d.component for _, d in used]), "value": value,
        "unit": text([units.get(d.variable, "deg" if d.variable.endswith("Angles") else "") for _, d in used]),
        "percent": np.where(timed, at, np.nan), "phase": text([d.phase for _, d in used]),
        "window_start_pct": lo, "window_end_pct": hi, "time_s": np.where(np.isfinite(at), time, np.nan),
        "frame": (np.rint(time * point_rate) + 1) if point_rate else np.full(k * n, np.nan),
        "positive": text([d.positive for _, d in used]), "note": np.array(notes, dtype=object),
        "_order": np.repeat([order for order, _ in used], n),
    }


def _component(a: np.ndarray, d: ClinicalParameter, n: int) -> np.ndarray:
    """(n, P) curve of the definition's component from (P,), (P, 3), (n, P) or (n, P, 3)."""
    if d.component == "":
        if a.ndim >= 2 and a.shape[-1] == 3 and a.shape[-2] > 3:  # (P, 3) / (n, P, 3): Plug-in Gait power
            a = np.where(np.isnan(a).all(axis=-1), np.nan, np.nansum(a, axis=-1))
    else:
        if a.ndim < 2 or a.shape[-1] != 3:
            raise DataError(f"{d.variable}: expected (P, 3) or (n, P, 3) curves for component {d.component}, "
                            f"got shape {a.shape}")
        a = a[..., COMPONENT_INDEX[d.component]]
    a = np.atleast_2d(a)
    if a.shape[0] not in (1, n):
        raise DataError(f"{d.variable}: {a.shape[0]} cycles of curves for {n} cycles of events")
    return np.broadcast_to(a, (n, a.shape[1]))


# --------------------------------------------------------------------------- from gaitid's tables


@dataclass(frozen=True)
class CurveMatrices:
    """A tidy curves table as arrays: ``keys`` (one row per curve owner, e.g. a cycle: the key
    columns), ``percent`` (P,) sorted, ``values`` {(variable, component): (n_keys, P)} (NaN where
    the table has no value) and ``units`` {variable: unit}."""

    keys: pd.DataFrame
    percent: np.ndarray
    values: dict
    units: dict


def curve_matrices(curves: pd.DataFrame, keys=("cycle",), variables=None) -> CurveMatrices:
    """:class:`CurveMatrices` of a tidy curves table (:func:`gaitid.cycles.curves.cycle_curves`) grouped by
    the ``keys`` columns (e.g. ``("side", "cycle")``), for ``variables`` (all when None).
    Vectorised: one pass over the table whatever its number of curves."""
    keys = list(keys)
    c = curves if variables is None else curves[curves["variable"].isin(list(variables))]
    if c.empty:
        return CurveMatrices(pd.DataFrame(columns=keys), np.empty(0), {}, {})
    pct, p_idx = np.unique(c["percent"].to_numpy(float), return_inverse=True)
    k_idx = c.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    key_table = c[keys].drop_duplicates().reset_index(drop=True)
    vc = pd.DataFrame({"variable": c["variable"].astype(str), "component": c["component"].fillna("").astype(str)})
    v_idx = vc.groupby(["variable", "component"], sort=False, dropna=False).ngroup().to_numpy()
    v_uniq = list(vc.drop_duplicates().itertuples(index=False, name=None))
    arr = np.full((len(v_uniq), len(key_table), pct.size), np.nan)
    arr[v_idx, k_idx, p_idx] = c["value"].to_numpy(float)
    units = {}
    if "unit" in c.columns:
        first = c.drop_duplicates("variable")
        units = dict(zip(first["variable"].astype(str), first["unit"].fillna("").astype(str)))
    return CurveMatrices(key_table, pct, {tuple(v): arr[i] for i, v in enumerate(v_uniq)}, units)


def curve_arrays(curves: pd.DataFrame, side: str, cycles, variables=None) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """{variable: (n_cycles, P) or (n_cycles, P, 3)} of one side's cycles (in the order of
    ``cycles``) from a tidy curves table (:func:`gaitid.cycles.curves.cycle_curves`), and {variable: unit}.
    A cycle without a variable's curve gets NaN."""
    cycles = list(cycles)
    m = curve_matrices(curves[curves["side"] == side], ("cycle",), variables)
    if not m.values or not cycles:
        return {}, m.units
    pos = pd.Index(m.keys["cycle"]).get_indexer(cycles)
    out: dict[str, np.ndarray] = {}
    for (var, comp), a in m.values.items():
        a = np.where((pos >= 0)[:, None], a[np.maximum(pos, 0)], np.nan)
        if comp == "":
            out[var] = a
        else:
            block = out.setdefault(var, np.full((len(cycles), m.percent.size, 3), np.nan))
            block[:, :, COMPONENT_INDEX[comp]] = a
    return out, m.units


def clinical_table(curves: pd.DataFrame, cycles: pd.DataFrame, *, convention: str = "internal",
                   frame: str = "distal", point_rate: float | None = None,
                   definitions: tuple[ClinicalParameter, ...] = PARAMETERS) -> pd.DataFrame:
    """Clinical parameters of every cycle of a trial from its tidy tables.

    ``curves``: the curves table (:func:`gaitid.cycles.curves.cycle_curves`); ``cycles``: one row per
    cycle with ``side``, ``cycle``, ``kinetic``, ``foot_off_pct``, ``opposite_off_pct``,
    ``opposite_strike_pct`` (+ ``start_time_s``, ``end_time_s`` for times), as
    :func:`gaitid.cycles.curves.cycles_table` gives. Kinematic parameters come from every cycle,
    kinetic ones (moments, powers) from the kinetic cycles only, as the parameters table does.
    """
    by_side = {}
    for side in ("Left", "Right"):
        cs = cycles[cycles["side"] == side]
        if not cs.empty:
            by_side[side] = curve_arrays(curves, side, cs["cycle"].tolist(), {d.variable for d in definitions})
    return clinical_from_arrays(by_side, cycles, convention=convention, frame=frame, point_rate=point_rate,
                                definitions=definitions)


def clinical_from_arrays(curves: Mapping[str, tuple[Mapping[str, np.ndarray], Mapping[str, str]]],
                         cycles, *, convention: str = "internal", frame: str = "distal",
                         point_rate: float | None = None,
                         definitions: tuple[ClinicalParameter, ...] = PARAMETERS) -> pd.DataFrame:
    """:func:`clinical_table` from normalised arrays: ``curves`` {side: ({variable: (n_cycles, P) or
    (n_cycles, P, 3)}, {variable: unit})}, the cycles of a side in the order of that side's rows of
    ``cycles`` (a cycles table, or its columns as arrays: :func:`gaitid.cycles.curves.cycle_columns`;
    :func:`gaitid.cycles.curves.normalised_cycles` gives the curves in that order). One table built once."""
    cols = clinical_columns(curves, cycles, convention=convention, frame=frame, point_rate=point_rate,
                            definitions=definitions)
    if cols is None:
        return pd.DataFrame(columns=COLUMNS)
    return pd.DataFrame({k: _text(v) if v.dtype == object else v for k, v in cols.items()}, copy=False)


def clinical_columns(curves: Mapping[str, tuple[Mapping[str, np.ndarray], Mapping[str, str]]], cycles, *,
                     convention: str = "internal", frame: str = "distal", point_rate: float | None = None,
                     definitions: tuple[ClinicalParameter, ...] = PARAMETERS) -> dict[str, np.ndarray] | None:
    """:func:`clinical_from_arrays`' table as {column: array} (:data:`COLUMNS`, text in object
    arrays), rows sorted by cycle, side and definition; None when there is no row."""
    def column(name, dtype=float):
        return np.asarray(cycles[name], dtype) if name in cycles else None

    sides = column("side", object)
    if sides is None or sides.size == 0:
        return None
    numbers = column("cycle", None)
    kinetic_all = column("kinetic", bool)
    events_all = [column(name) for name in ("foot_off_pct", "opposite_off_pct", "opposite_strike_pct",
                                             "start_time_s", "end_time_s")]
    kinematic_only = tuple(d for d in definitions if not d.kinetic)
    groups = []  # (side label(s), rows of ``cycles``, curves, units)
    for side in ("Left", "Right"):
        rows = np.flatnonzero(sides == side)
        if side in curves and rows.size:
            groups.append((side, rows, *curves[side]))
    if len(groups) == 2 and _stackable(groups[0][2], groups[1][2]) and groups[0][3] == groups[1][3] and \
            sum(np.asarray(a).nbytes for _, _, arrays, _ in groups for a in arrays.values()) <= 1 << 21:
        # both sides in one pass, their cycles rows like any other (when small, 2 MB: a long trial's two
        # sides are not copied into one block, and its per-call cost is nothing beside its work)
        (_, rl, al, units), (_, rr, ar, _) = groups
        groups = [(np.repeat(np.array(["Left", "Right"], dtype=object), [rl.size, rr.size]), np.concatenate([rl, rr]),
                   {k: np.concatenate([al[k], ar[k]]) for k in al}, units)]
    parts = []
    for side, rows, arrays, units in groups:
        kinetic = kinetic_all[rows] if kinetic_all is not None else np.ones(rows.size, bool)
        # every definition on every cycle in one pass (rows are independent), then the kinetic
        # definitions kept on the kinetic cycles only
        defs = definitions if kinetic.any() else kinematic_only
        part = _parameter_columns(arrays, CycleEvents(*(e[rows] if e is not None else np.full(rows.size, np.nan)
                                                        for e in events_all)),
                                  convention=convention, frame=frame, units=units, side=side, cycle=numbers[rows],
                                  point_rate=point_rate, definitions=defs)
        if part is not None:
            kinetic_def = np.array([d.kinetic for d in defs])[part["_order"]]
            keep = np.tile(kinetic, part["value"].size // rows.size) | ~kinetic_def
            parts.append({k: v[keep] for k, v in part.items()})
    if not parts:
        return None
    order = {d.name: i for i, d in enumerate(definitions)}
    cols = {k: np.concatenate([p[k] for p in parts]) for k in COLUMNS}
    rank = np.array([order[name] for name in cols["parameter"]])
    side_rank = (cols["side"] == "Right").astype(int)  # 'Left' < 'Right', as a sort of the names
    keep = np.lexsort((rank, side_rank, cols["cycle"].astype(np.int64)))
    return {k: v[keep] for k, v in cols.items()}


def _stackable(a: Mapping[str, np.ndarray], b: Mapping[str, np.ndarray]) -> bool:
    """The two sides' curves have the same variables, each of the same shape but the cycles."""
    return list(a) == list(b) and all(np.shape(a[k])[1:] == np.shape(b[k])[1:] for k in a)


def _text(values: np.ndarray) -> pd.Series:
    """A text column as plain Python strings (object dtype): building pandas' pyarrow strings
    costs more than the parameters themselves."""
    return pd.Series(values, dtype=object, copy=False)  # (callers pass fresh arrays)


def result_clinical_parameters(result) -> pd.DataFrame:
    """:func:`clinical_table` of a :class:`gaitid.pipeline.Result` (its curves, cycles and settings)."""
    from gaitid.cycles.curves import cycles_table

    return clinical_table(result.curves, cycles_table(result.cycles), convention=result.settings.convention,
                          frame=result.settings.frame, point_rate=result.trial.point_rate)
