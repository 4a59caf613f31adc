"""Gait cycles and their time normalisation (0-100 %).

A cycle runs from a foot strike to the next foot strike of the same foot with
exactly one foot off of that foot inside (:func:`gait_cycles`). It is *kinetic*
when its stance (strike to foot off) is one valid plate contact of that foot (strike and off within
``tolerance`` = 50 ms of the cycle's; ``reason`` 'plate 1: 0.16 s decomposed' when part of the
stance is the foot's share of a plate both feet load); every cycle is *kinematic* (markers only).

Time normalisation (:func:`time_normalise`): linear interpolation in time at 101
points, 0-100 % of the cycle (or of the stance with ``stance_only``), from the
event times themselves (sub-frame), NaN where the curve is NaN.

Tables are pandas DataFrames in a tidy long format:

- curves (:func:`cycle_curves`): ``side, cycle, kinetic, variable, component,
  percent, value, unit`` (``component`` 'X', 'Y', 'Z' or '' for a scalar curve;
  ``percent`` of the cycle or of the stance);
- cycles (:func:`cycles_table`): one row per cycle.
Discrete parameters per cycle: :mod:`gaitid.cycles.parameters`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np
import pandas as pd

from gaitid.contacts import FootContact
from gaitid.core.errors import DataError
from gaitid.core.trial import Event, Trial
from gaitid.core.vocabulary import CYCLE_POINTS, FOOT_OFF, FOOT_STRIKE, SIDES

N_POINTS = CYCLE_POINTS
PERCENT = np.linspace(0.0, 100.0, N_POINTS)  # % of the cycle at each point (read-only)
PERCENT.flags.writeable = False
COMPONENTS = ("X", "Y", "Z")


@dataclass
class Cycle:
    """One gait cycle of one foot; times in s on the file clock (NaN when absent).

    ``index``: its number among that side's cycles, **from 1** (every table's ``cycle``). ``kinetic``:
    its stance is one valid plate contact; ``reason`` says why not ('' if kinetic).
    ``plates``: the plates of that contact.
    """

    side: str
    index: int
    start_time: float
    foot_off_time: float
    end_time: float
    opposite_off_time: float = np.nan
    opposite_strike_time: float = np.nan
    kinetic: bool = False
    reason: str = ""
    plates: tuple[int, ...] = ()

    @property
    def stride_time(self) -> float:
        return self.end_time - self.start_time

    def percent(self, t: float) -> float:
        """Time t as % of this cycle."""
        return 100.0 * (t - self.start_time) / self.stride_time

    @property
    def foot_off_pct(self) -> float:
        return self.percent(self.foot_off_time)


def gait_cycles(events: list[Event], contacts: list[FootContact] | None = None, tolerance: float = 0.05) -> list[Cycle]:
    """Cycles of both feet from foot strikes and foot offs (see the module docstring).

    ``contacts``: :class:`gaitid.contacts.FootContact` list, to mark kinetic cycles;
    None marks every cycle kinematic only. Each cycle looks up its events and contacts by
    binary search, so an hour of treadmill walking costs its cycles, not their square.
    """
    out = []
    for side in SIDES:
        own = sorted((e for e in events if e.context == side), key=lambda e: e.time)
        opp = sorted((e for e in events if e.context != side and e.context in SIDES), key=lambda e: e.time)
        strikes = np.array([e.time for e in own if e.label == FOOT_STRIKE], float)
        offs = np.array([e.time for e in own if e.label == FOOT_OFF], float)
        opp_offs = np.array([e.time for e in opp if e.label == FOOT_OFF], float)
        opp_strikes = np.array([e.time for e in opp if e.label == FOOT_STRIKE], float)
        lookup = _ContactLookup(contacts, side) if contacts is not None else None
        k = 1  # cycles are numbered from 1, as clinicians count them, everywhere (tables, API, report)
        for s0, s1 in zip(strikes[:-1], strikes[1:]):
            i, j = np.searchsorted(offs, s0, "right"), np.searchsorted(offs, s1, "left")  # offs strictly inside
            if j - i != 1:
                continue
            fo = float(offs[i])
            m = np.searchsorted(opp_offs, s0, "left")  # first opposite foot off in [s0, s1)
            o_off = float(opp_offs[m]) if m < opp_offs.size and opp_offs[m] < s1 else np.nan
            # first opposite strike in (s0, s1), not before the opposite foot off
            m = np.searchsorted(opp_strikes, s0 if np.isnan(o_off) or o_off <= s0 else o_off,
                                "right" if np.isnan(o_off) or o_off <= s0 else "left")
            o_str = float(opp_strikes[m]) if m < opp_strikes.size and opp_strikes[m] < s1 else np.nan
            c = Cycle(side, k, float(s0), fo, float(s1), o_off, o_str)
            _mark_kinetic(c, lookup, tolerance)
            out.append(c)
            k += 1
    return sorted(out, key=lambda c: (c.start_time, c.side))


class _ContactLookup:
    """One side's contacts (those given to that foot or with it among their feet), found by the
    time they overlap: sorted by strike time, with the longest contact bounding the search."""

    def __init__(self, contacts: list[FootContact], side: str):
        self.items = [fc for fc in contacts if side in fc.feet or fc.side == side]  # list order kept
        a = np.array([fc.strike_time if np.isfinite(fc.strike_time) else -np.inf for fc in self.items], float)
        b = np.array([fc.off_time if np.isfinite(fc.off_time) else np.inf for fc in self.items], float)
        self.a, self.b = a, b
        self.order = np.argsort(a, kind="stable")
        self.sorted_a = a[self.order]
        length = b - a
        finite = np.isfinite(length)
        self.longest = float(length[finite].max()) if finite.any() else 0.0
        self.unbounded = np.flatnonzero(~finite)  # open at the record's start or end: always looked at

    def overlapping(self, start: float, end: float) -> list[FootContact]:
        """The contacts overlapping [start, end], in the order of the list given."""
        lo = np.searchsorted(self.sorted_a, start - self.longest - 1e-9, "left")  # (a margin for rounding)
        hi = np.searchsorted(self.sorted_a, end, "right")
        idx = np.union1d(self.order[lo:hi], self.unbounded).astype(int)
        keep = idx[(self.a[idx] <= end) & (start <= self.b[idx])]
        return [self.items[i] for i in keep]


CYCLE_COLUMNS = ("side", "cycle", "start_time_s", "foot_off_time_s", "end_time_s", "foot_off_pct",
                 "opposite_off_pct", "opposite_strike_pct", "kinetic", "plates", "reason")


def cycle_columns(cycles: list[Cycle]) -> dict[str, np.ndarray]:
    """:func:`cycles_table`'s columns as arrays (text as Python strings in object arrays)."""
    def col(values, dtype):
        return np.array(values, dtype=dtype) if cycles else np.empty(0, dtype)

    return {
        "side": col([c.side for c in cycles], object), "cycle": col([c.index for c in cycles], np.int64),
        "start_time_s": col([c.start_time for c in cycles], float),
        "foot_off_time_s": col([c.foot_off_time for c in cycles], float),
        "end_time_s": col([c.end_time for c in cycles], float),
        "foot_off_pct": col([c.foot_off_pct for c in cycles], float),
        "opposite_off_pct": col([c.percent(c.opposite_off_time) for c in cycles], float),
        "opposite_strike_pct": col([c.percent(c.opposite_strike_time) for c in cycles], float),
        "kinetic": col([c.kinetic for c in cycles], bool),
        "plates": col([",".join(str(p) for p in c.plates) for c in cycles], object),
        "reason": col([c.reason for c in cycles], object),
    }


def cycles_table(cycles: list[Cycle]) -> pd.DataFrame:
    """One row per cycle: side, cycle, start_time_s, foot_off_time_s, end_time_s, foot_off_pct,
    opposite_off_pct, opposite_strike_pct, kinetic, plates, reason (text columns plain strings,
    see :func:`curves_table`; every column object when there is no cycle)."""
    if not cycles:
        return pd.DataFrame(columns=list(CYCLE_COLUMNS), dtype=object)
    return pd.DataFrame({k: pd.Series(v, dtype=object, copy=False) if v.dtype == object else v
                         for k, v in cycle_columns(cycles).items()}, copy=False)  # (fresh arrays: not copied again)


def _mark_kinetic(c: Cycle, contacts, tolerance: float) -> None:
    if contacts is None:
        c.reason = "no plate contacts given"
        return
    best = None
    for fc in contacts.overlapping(c.start_time, c.foot_off_time):  # overlapping the stance, in list order
        a = fc.strike_time if np.isfinite(fc.strike_time) else -np.inf
        b = fc.off_time if np.isfinite(fc.off_time) else np.inf
        best = fc if best is None else best
        if abs(a - c.start_time) <= tolerance and abs(b - c.foot_off_time) <= tolerance:
            best = fc
            break
    if best is None:
        c.reason = "stance not on a force plate"
        return
    names = ",".join(str(p) for p in best.plates)
    c.plates = best.plates
    if not best.valid:
        c.reason = f"stance on plate {names} invalid: {best.reason}"
        return
    if not (abs(best.strike_time - c.start_time) <= tolerance and abs(best.off_time - c.foot_off_time) <= tolerance):
        c.reason = (f"plate {names} contact ({best.strike_time:.3f}-{best.off_time:.3f} s) does not match the "
                    f"stance ({c.start_time:.3f}-{c.foot_off_time:.3f} s) within {1000 * tolerance:.0f} ms")
        return
    c.kinetic = True
    c.reason = best.reason if best.decomposed_s > 0 else c.reason  # "plate 1: 0.16 s decomposed"


def time_normalise(values: np.ndarray, time: np.ndarray, start: float, end: float, n_points: int = N_POINTS) -> np.ndarray:
    """Values (n, ...) sampled at ``time`` (n,), resampled linearly at ``n_points`` instants
    evenly spaced from ``start`` to ``end`` (s). NaN outside the data or next to NaN samples (for
    (n, k) values also at a grid point on the sample after a NaN one: :func:`interpolate`)."""
    values = np.asarray(values, float)
    time = np.asarray(time, float)
    if values.shape[0] != time.shape[0]:
        raise DataError(f"curve has {values.shape[0]} samples but the time base {time.shape[0]}")
    if not end > start:
        raise DataError(f"cycle end {end} s is not after its start {start} s")
    if time.shape[0] < 2:
        raise DataError(f"curve has {time.shape[0]} sample(s): at least 2 are needed to interpolate")
    at = np.linspace(start, end, n_points)
    if values.ndim == 1:  # numpy's rule (as scipy's interp1d for one curve): a sample's own value where it is one
        return np.interp(at, time, values, left=np.nan, right=np.nan)
    return interpolate(values, time, at)


def bracket(time: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The samples either side of each instant ``at`` on the sorted ``time`` base: indices ``lo``
    and ``hi = lo + 1`` and a mask of the instants outside ``[time[0], time[-1]]``. Touches only
    those samples (binary search), so a cycle costs its own points, not the trial's length."""
    hi = np.clip(np.searchsorted(time, at, side="left"), 1, time.shape[0] - 1)
    return hi - 1, hi, (at < time[0]) | (at > time[-1])


def interpolate(values: np.ndarray, time: np.ndarray, at: np.ndarray, where=None) -> np.ndarray:
    """Linear interpolation of ``values`` (n, ...) on ``time`` (n,) at the instants ``at`` (m,):
    (m, ...), NaN outside the data and next to a NaN sample (scipy's ``interp1d`` rule, the same
    arithmetic: slope of the bracketing samples times the offset from the lower one).
    ``where``: :func:`bracket` of ``at``, when several curves share it."""
    lo, hi, out = bracket(time, at) if where is None else where
    t_lo = time[lo]
    y_lo = values[lo]
    shape = (-1,) + (1,) * (values.ndim - 1)
    y = (values[hi] - y_lo) / (time[hi] - t_lo).reshape(shape) * (at - t_lo).reshape(shape) + y_lo
    y[out] = np.nan
    return y


def components(a: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """A curve's columns with their names: [('', a)] for (n,), [('X', a[:, 0]), ...] for (n, k<=3)."""
    a = np.asarray(a, float)
    if a.ndim == 1:
        return [("", a)]
    if a.ndim == 2 and a.shape[1] <= 3:
        return [(COMPONENTS[k], a[:, k]) for k in range(a.shape[1])]
    raise DataError(f"curve of shape {a.shape}: expected (n,) or (n, 3)")


def normalised_cycles(curves: Mapping[str, Mapping[str, np.ndarray]], time: np.ndarray, cycles: list[Cycle],
                      stance_only: bool = False, n_points: int = N_POINTS) -> dict[str, dict[str, np.ndarray]]:
    """Every cycle's curves time-normalised, as arrays: ``{side: {variable: (n_cycles, P) or
    (n_cycles, P, k)}}``, the cycles of a side in the order of ``cycles`` (the sides in the order
    of their first cycle). One binary search for
    all the cycles' instants of a side, then each variable read only at the samples that bracket
    them: the cost grows with the cycles' points, not with the trial's length times the cycles."""
    time = np.asarray(time, float)
    out: dict[str, dict[str, np.ndarray]] = {}
    for side in dict.fromkeys(c.side for c in cycles if c.side in SIDES):  # first cycle's side first
        own = [c for c in cycles if c.side == side]
        by_name = curves.get(side, {})
        if not own or not by_name:
            continue
        if time.shape[0] < 2:
            raise DataError(f"curves have {time.shape[0]} sample(s): at least 2 are needed to interpolate")
        for c in own:
            if not (c.foot_off_time if stance_only else c.end_time) > c.start_time:
                raise DataError(f"cycle end {c.end_time} s is not after its start {c.start_time} s")
        at = np.concatenate([np.linspace(c.start_time, c.foot_off_time if stance_only else c.end_time, n_points)
                             for c in own])
        arrays = {}
        for name, arr in by_name.items():
            a = np.asarray(arr, float)
            if a.ndim > 2 or (a.ndim == 2 and a.shape[1] > 3):
                raise DataError(f"curve of shape {a.shape}: expected (n,) or (n, 3)")
            if a.shape[0] != time.shape[0]:
                raise DataError(f"curve has {a.shape[0]} samples but the time base {time.shape[0]}")
            arrays[name] = a
        # the curves stacked in blocks of columns (about 32 MB at most: an hour-long trial's curves are never
        # copied whole; a trial of a few minutes is one block), each block interpolated at once
        flat = {name: a.reshape(time.shape[0], -1) for name, a in arrays.items()}
        block_of = (np.cumsum([f.shape[1] for f in flat.values()]) - 1) // max(1, (1 << 22) // time.shape[0])
        where, out[side] = bracket(time, at), {}
        for b in np.unique(block_of):
            chunk = [name for name, k in zip(flat, block_of) if k == b]
            block, col = interpolate(np.column_stack([flat[name] for name in chunk]), time, at, where), 0
            for name in chunk:
                k = flat[name].shape[1]
                out[side][name] = block[:, col:col + k].reshape((len(own), n_points) + arrays[name].shape[1:])
                col += k
    return out


def curve_layout(arrays: Mapping[str, Mapping[str, np.ndarray]], units: Mapping[str, str] | None = None):
    """How :func:`curves_table` codes ``arrays``' curves: ``({side: (variable, component, unit codes
    of its curves in a cycle, its arrays)}, labels)`` (component 0: scalar, 1-3: X-Z; labels: texts)."""
    units, names, unit_names, layout = units or {}, {}, {}, {}
    for side, by_name in arrays.items():
        var, comp, unit, sources = [], [], [], []
        for name, v in by_name.items():
            k = v.shape[2] if v.ndim == 3 else 1
            var += [names.setdefault(name, len(names))] * k
            comp += [0] if v.ndim == 2 else list(range(1, k + 1))
            unit += [unit_names.setdefault(units.get(name, ""), len(unit_names))] * k
            sources.append(v)
        if sources:
            layout[side] = (np.array(var), np.array(comp), np.array(unit), sources)
    return layout, {"side": list(SIDES), "variable": list(names), "component": ["", *COMPONENTS],
                    "unit": list(unit_names)}


def curve_rows(arrays: Mapping[str, Mapping[str, np.ndarray]], cycles: list[Cycle],
               units: Mapping[str, str] | None = None, n_points: int = N_POINTS, max_rows: int | None = None):
    """:func:`curves_table`'s rows, without the table, in blocks of whole cycles of about ``max_rows`` rows
    (None: one): ``(columns, labels)``, text as codes into ``labels`` (:func:`curve_layout`); none without curves."""
    pct = np.linspace(0.0, 100.0, n_points)
    layout, labels = curve_layout(arrays, units)
    per_side = {}  # side -> (values (n_c, K*P), variable, component, unit codes (K,))
    for side, (var, comp, unit, sources) in layout.items():
        blocks = [np.moveaxis(v if v.ndim == 3 else v[:, :, None], 2, 1) for v in sources]  # (n_c, k, P)
        per_side[side] = (np.concatenate(blocks, axis=1).reshape(blocks[0].shape[0], -1), var, comp, unit)
    position, values, meta, rows = {side: 0 for side in per_side}, [], [], 0

    def block():
        reps = np.array([m[3].size * n_points for m in meta])

        def codes(i):
            return np.repeat(np.concatenate([m[i] for m in meta]), n_points)

        return {
            "side": np.repeat([m[0] for m in meta], reps),
            "cycle": np.repeat(np.array([m[1] for m in meta], dtype=np.int64), reps),
            "kinetic": np.repeat(np.array([m[2] for m in meta], dtype=bool), reps),
            "variable": codes(3), "component": codes(4),
            "percent": np.tile(pct, int(reps.sum()) // n_points),
            "value": np.concatenate(values), "unit": codes(5),
        }, labels

    for c in cycles:
        if c.side not in per_side:
            continue
        values_c, var, comp, unit = per_side[c.side]
        values.append(values_c[position[c.side]])
        position[c.side] += 1
        meta.append((SIDES.index(c.side), c.index, bool(c.kinetic), var, comp, unit))
        rows += var.size * n_points
        if max_rows is not None and rows >= max_rows:
            yield block()
            values, meta, rows = [], [], 0
    if values:
        yield block()


def curves_table(arrays: Mapping[str, Mapping[str, np.ndarray]], cycles: list[Cycle],
                 units: Mapping[str, str] | None = None, n_points: int = N_POINTS) -> pd.DataFrame:
    """The tidy long table of :func:`normalised_cycles`' arrays (see the module docstring): one
    block of rows per cycle in the order of ``cycles``, then per variable and component, then
    percent. Text columns are categorical (one byte a row, not one string object)."""
    cols = ["side", "cycle", "kinetic", "variable", "component", "percent", "value", "unit"]
    block = next(curve_rows(arrays, cycles, units, n_points), None)  # all rows in one block
    if block is None:
        return pd.DataFrame(columns=cols)
    columns, labels = block
    return pd.DataFrame({k: pd.Categorical.from_codes(v, categories=labels[k]) if k in labels else v
                         for k, v in columns.items()}, columns=cols)


def curves_summary(arrays: Mapping[str, Mapping[str, np.ndarray]], units: Mapping[str, str] | None = None,
                   n_points: int = N_POINTS) -> pd.DataFrame | None:
    """Mean, sample SD (ddof 1) and n across the cycles of :func:`normalised_cycles`' arrays, per
    side, variable, component and percent, NaN-skipping: the table
    :func:`gaitid.cycles.parameters.summarise` gives of the curves table (same columns), from the arrays."""
    units = units or {}
    keys, means, sds, counts = [], [], [], []
    for side, by_name in arrays.items():
        items = list(by_name.items())
        for start in range(0, len(items), 8):  # eight variables at a time: temporaries stay small
            blocks = []
            for name, v in items[start:start + 8]:
                blocks.append(v if v.ndim == 3 else v[:, :, None])
                comps = ("",) if v.ndim == 2 else COMPONENTS[: v.shape[2]]
                keys += [(side, name, comp, units.get(name, "")) for comp in comps]
            v3 = np.concatenate(blocks, axis=2)  # (n_cycles, P, K): several variables at once
            ok = np.isfinite(v3)
            n = ok.sum(axis=0)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(n > 0, np.where(ok, v3, 0.0).sum(axis=0) / n, np.nan)
                ss = np.where(ok, (v3 - mean) ** 2, 0.0).sum(axis=0)
                sd = np.where(n > 1, np.sqrt(ss / (n - 1)), np.nan)
            means.append(mean.T.reshape(-1))  # one run of P percents per curve
            sds.append(sd.T.reshape(-1))
            counts.append(n.T.reshape(-1))
    if not keys:
        return None
    text = {c: pd.Series(np.repeat(np.array([k[i] for k in keys], dtype=object), n_points), dtype=object, copy=False)
            for i, c in enumerate(("side", "variable", "component", "unit"))}
    return pd.DataFrame({**text, "percent": np.tile(np.linspace(0.0, 100.0, n_points), len(keys)),
                         "mean": np.concatenate(means), "sd": np.concatenate(sds),
                         "n": np.concatenate(counts).astype(np.int64)}, copy=False)  # (fresh arrays)


def cycle_curves(curves: Mapping[str, Mapping[str, np.ndarray]], time: np.ndarray, cycles: list[Cycle],
                 units: Mapping[str, str] | None = None, stance_only: bool = False,
                 n_points: int = N_POINTS) -> pd.DataFrame:
    """Time-normalised curves of every cycle, tidy long table (see the module docstring).

    ``curves``: {side: {variable: (n,) or (n, 3) array on ``time``}}; ``units``: {variable: unit}.
    """
    arrays = normalised_cycles(curves, time, cycles, stance_only=stance_only, n_points=n_points)
    return curves_table(arrays, cycles, units, n_points)


def model_output_curves(trial: Trial, kinds: tuple[str, ...] = ("angle", "moment", "power", "force"),
                        ) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """Plug-in Gait outputs stored in the trial as ``({side: {name: values}}, {name: unit})``,
    the 'L'/'R' prefix removed (``LAnkleMoment`` -> Left ``AnkleMoment``)."""
    curves: dict[str, dict[str, np.ndarray]] = {s: {} for s in SIDES}
    units = {}
    for label, mo in trial.model_outputs.items():
        if mo.kind not in kinds or len(label) < 2 or label[0] not in "LR":
            continue
        side = "Left" if label[0] == "L" else "Right"
        curves[side][label[1:]] = mo.values
        units[label[1:]] = mo.unit
    return curves, units
