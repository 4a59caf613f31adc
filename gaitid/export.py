"""Exports of a :class:`gaitid.pipeline.result.Result`: tables, Excel, C3D with results, OpenSim.

Every file is written atomically (temporary file, then rename) and never onto the
input trial. Length: the four export kinds share the table builders and the input check;
split them into a package when another kind is added.

Tables (CSV / Parquet, one file each, ``<trial>_<table>.<ext>``), tidy long format:

=================  ==========================================================================
table              columns
=================  ==========================================================================
frames             frame (Vicon frame number), time_s, side, variable, component, value, unit, flag
curves             side, cycle, kinetic, variable, component, percent, value, unit
curves_summary     side, variable, component, unit, percent, mean, sd, n
parameters         side, cycle, parameter, variable, component, value, unit, percent
parameters_summary side, parameter, variable, component, unit, mean, percent_mean, sd, n
events             label, context, time_s, frame, source
contacts           plates, side, strike_time_s, off_time_s, valid, reason, source, ...
emg                side, muscle, channel, cycle, percent, value, unit (docs/emg.md)
emg_timing         side, muscle, channel, cycle, burst, onset_percent, offset_percent, threshold, unit, method
fills              label, method, first_frame, last_frame, duration_s, reason: every marker gap filled
                   (method spline, rigid or pca) or left NaN (method '', the reason); written for a
                   trial with marker gaps only (docs/gaps.md)
=================  ==========================================================================

``variable`` uses Plug-in Gait's names without the side letter (``AnkleMoment``,
``KneeAngles``, ``HipPower``, ``GroundReactionForce``) plus gaitid's moment
contributions (``AnkleMomentInertial``, ``...Velocity``, ``...Gravity``, ``...External``).

Excel (:func:`write_excel`): one workbook in a wide per-cycle layout, one sheet per table:
``curves`` (one row per cycle and % of the cycle, one column per variable and component, e.g.
``AnkleMoment X [N.m/kg]``), ``curves_summary`` (mean, SD, n per side and %), ``parameters``
(one row per cycle, one column per parameter and its timing), ``parameters_summary``,
``cycles``, ``events``, ``contacts``. The per-frame table stays in CSV / Parquet: any trial
length fits a spreadsheet (a table longer than Excel's 1,048,576 rows would continue on a
second sheet).

C3D: a copy of the input trial (rebuilt from gaitid's parsed trial: markers, virtual points,
model outputs, analog channels, plates as type-2 wrenches, events, subject) with the results
added as points named, expressed and scaled as Plug-in Gait stores its outputs, whatever the
Result's frame, convention and normalisation (``LAnkleMoment``: external, distal segment's frame,
N.mm/kg; ``LAnklePower`` in W/kg in the Z component, ``LAnkleForce`` in N/kg, ``LKneeAngles`` in
degrees; ground reactions rotated back into the file's own lab), listed in
POINT:ANGLES/FORCES/MOMENTS/POWERS (:func:`result_points`). The trial's own points of those
names (Vicon's outputs) are kept: gaitid's then carry a suffix (``_gaitid`` unless given) unless
``replace_outputs`` asks to replace them in the copy.

OpenSim: ``<trial>_grf.mot`` (+ ExternalLoads XML) and ``<trial>_id.sto`` with every
joint moment in N.m (unnormalised), columns ``<side>_<joint>_moment_<x|y|z>``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from gaitid.core.errors import FileFormatError, GaitIDError, OutputError
from gaitid.core.signal import runs
from gaitid.cycles.outputs import FLAGS, flag_codes, load_flags
from gaitid.io.atomic import atomic_path

TABLES = ("frames", "curves", "curves_summary", "parameters", "parameters_summary", "events", "contacts", "emg",
          "emg_timing", "fills")
ROWS_PER_BLOCK = 1 << 18  # rows per block of the long tables written from arrays (about 20 MB of Arrow)


def tables(result, frames: bool = True, curves: bool = True) -> dict[str, pd.DataFrame]:
    """The Result's tables by name (see the module docstring; the EMG tables only for a trial with EMG
    channels); ``frames=False`` / ``curves=False``:
    without the per-frame / per-cycle one (:func:`write_frames` / :func:`write_curves` write them
    from the arrays)."""
    out = {
        **({"frames": result.frames} if frames else {}),
        **({"curves": result.curves} if curves else {}),
        "curves_summary": result.curves_summary,
        "parameters": result.parameters,
        "parameters_summary": result.parameters_summary,
        "events": events_table(result.events),
        "contacts": result.contacts,
        **({"emg": result.emg_curves, "emg_timing": result.emg_timing}
           if getattr(result, "emg", None) is not None else {}),  # a trial with EMG channels only
        **({"fills": fills_table(result)} if _has_gaps(result) else {}),  # a trial with marker gaps only
    }
    return {k: (v if v is not None else pd.DataFrame()) for k, v in out.items()}


def _has_gaps(result) -> bool:
    fills = getattr(result, "fills", None)
    return fills is not None and bool(fills.filled or fills.unfilled)


def fills_table(result) -> pd.DataFrame:
    """One row per marker gap (:meth:`gaitid.model.gap_fill.MarkerFills.table`); no row without gaps."""
    from gaitid.model.gap_fill import MarkerFills

    return (result.fills if getattr(result, "fills", None) is not None else MarkerFills()).table()


def events_table(events) -> pd.DataFrame:
    """One row per event (:class:`gaitid.core.trial.Event`): label, context (side), time_s, frame,
    source; the ``events`` table of the CSV / Parquet files and of the workbook."""
    return pd.DataFrame([(e.label, e.context, e.time, e.frame, e.source) for e in events],
                        columns=["label", "context", "time_s", "frame", "source"])


def _inputs(result) -> tuple:
    return (result.trial.path,) if result.trial.path is not None else ()


def write_tables(result, outdir: str | os.PathLike, fmt: str = "csv") -> list[Path]:
    """Every table as ``<outdir>/<trial>_<table>.csv`` (or ``.parquet``)."""
    if fmt not in ("csv", "parquet"):
        raise GaitIDError(f"table format must be 'csv' or 'parquet', not {fmt!r}")
    outdir = Path(outdir)
    written = []
    streamed = getattr(result, "uncertainty", None) is None  # with uncertainty: the tables with its columns
    # the curves as CSV from the arrays unless the table exists already (Parquet: the table, categorical)
    stream_curves = fmt == "csv" and streamed and not result.curves_built

    def put(name, write):
        target = outdir / f"{result.name}_{name}.{fmt}"
        with atomic_path(target, inputs=_inputs(result)) as tmp:
            write(tmp)
        written.append(target)

    if streamed:
        put("frames", lambda tmp: write_frames(result, tmp, fmt))
    if stream_curves:
        put("curves", lambda tmp: write_curves(result, tmp))
    for name, table in tables(result, frames=not streamed, curves=not stream_curves).items():
        put(name, lambda tmp: write_csv(table, tmp) if fmt == "csv"
            else _stringify_objects(table).to_parquet(tmp, index=False))
    return written


def _csv_options(header: bool = True):
    import pyarrow.csv as pacsv

    return pacsv.WriteOptions(include_header=header)  # text quoted, numbers and empty (NaN) fields not


def write_csv(table: pd.DataFrame, path, header: bool = True) -> None:
    """A table as CSV through pyarrow's writer (C++: several times pandas' speed; numbers in their
    shortest round-trip form, NaN an empty field, booleans true/false); pandas for mixed columns.
    ``path``: a path or a binary file; ``header=False``: the rows only."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if table.shape[1] == 0:
        return table.to_csv(path, index=False, header=header)
    try:
        arrow = pa.Table.from_pandas(_stringify_objects(table), preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return table.to_csv(path, index=False, header=header)
    arrow = arrow.cast(pa.schema([pa.field(f.name, f.type.value_type) if pa.types.is_dictionary(f.type) else f
                                  for f in arrow.schema]))
    pacsv.write_csv(arrow, path, write_options=_csv_options(header))


def write_columns(columns: dict, path, header: bool = True) -> None:
    """A table given as its columns (``{name: numpy array or list}``, in order) written as
    :func:`write_csv` writes a DataFrame of them (NaN and None an empty field), without building
    the DataFrame."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = pa.Table.from_arrays([pa.array(v, from_pandas=True) for v in columns.values()], names=list(columns))
    pacsv.write_csv(table, path, write_options=_csv_options(header))


def write_frames(result, path, fmt: str = "csv") -> None:
    """The per-frame long table (``Result.frames``' rows and columns) written straight from the
    per-frame arrays, ``ROWS_PER_BLOCK`` rows at a time (whole curves: one block of rows per side,
    variable and component): the table itself is never built, so memory stays bounded whatever
    the trial's length."""
    import pyarrow as pa

    trial, n = result.trial, result.trial.n_frames
    schema = pa.schema([("frame", pa.int64()), ("time_s", pa.float64()), ("side", pa.string()),
                        ("variable", pa.string()), ("component", pa.string()), ("value", pa.float64()),
                        ("unit", pa.string()), ("flag", pa.string())])
    flags = load_flags(result.loads, n, getattr(result, "fills", None), result.outputs)
    columns = []  # (side, variable, component, unit, values (n,), flag codes (n,)) in the table's order
    for side, by_name in result.outputs.curves.items():
        for name, arr in by_name.items():
            a = np.asarray(arr, float).reshape(n, -1)
            comps = ("X", "Y", "Z")[: a.shape[1]] if a.shape[1] > 1 else ("",)
            f = flag_codes(flags, side, name, n)
            columns += [(side, name, comp, result.outputs.units.get(name, ""), a[:, k], f) for k, comp in enumerate(comps)]
    frames, time = np.asarray(trial.frames, np.int64), np.asarray(trial.time, float)

    def text(labels):  # one label per column of values, repeated over its n rows
        names = list(dict.fromkeys(labels))
        return _arrow_text(np.repeat(np.array([names.index(x) for x in labels]), n), names)

    if fmt == "csv":
        import pyarrow.csv as pacsv

        writer = pacsv.CSVWriter(str(path), schema, write_options=_csv_options())
    else:
        import pyarrow.parquet as pq

        writer = pq.ParquetWriter(str(path), schema)
    per_chunk = max(1, ROWS_PER_BLOCK // max(n, 1))  # about ROWS_PER_BLOCK rows at a time, whatever the length
    with writer:
        for i in range(0, len(columns), per_chunk):
            chunk = columns[i:i + per_chunk]
            k = len(chunk)
            writer.write_table(pa.table([
                pa.array(np.tile(frames, k)), pa.array(np.tile(time, k)), text([c[0] for c in chunk]),
                text([c[1] for c in chunk]), text([c[2] for c in chunk]),
                pa.array(np.concatenate([c[4] for c in chunk]), from_pandas=True), text([c[3] for c in chunk]),
                _arrow_text(np.concatenate([c[5] for c in chunk]), list(FLAGS)),
            ], schema=schema))


def write_curves(result, path) -> None:
    """The time-normalised long table (``Result.curves``' rows and columns, the same CSV) written
    from the normalised arrays, whole cycles about ``ROWS_PER_BLOCK`` rows at a time
    (:func:`gaitid.cycles.curves.curve_rows`): the table is never built, so a long trial's hundreds of
    cycles cost a block, not the table and its string copies."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    from gaitid.cycles.curves import curve_rows

    schema = pa.schema([("side", pa.string()), ("cycle", pa.int64()), ("kinetic", pa.bool_()),
                        ("variable", pa.string()), ("component", pa.string()), ("percent", pa.float64()),
                        ("value", pa.float64()), ("unit", pa.string())])
    with pacsv.CSVWriter(str(path), schema, write_options=_csv_options()) as writer:
        for columns, labels in curve_rows(result.normalised, result.cycles, result.outputs.units,
                                          max_rows=ROWS_PER_BLOCK):
            writer.write_table(pa.table([_arrow_text(columns[k], labels[k]) if k in labels
                                         else pa.array(columns[k], from_pandas=True) for k in schema.names],
                                        schema=schema))


def _arrow_text(codes: np.ndarray, names: list[str]):
    """A text column from integer ``codes`` into ``names``: dictionary-encoded, then plain text,
    without a Python string per row."""
    import pyarrow as pa

    array = pa.DictionaryArray.from_arrays(np.asarray(codes, np.int32), pa.array(names, pa.string()))
    return array.cast(pa.string())


def _stringify_objects(table: pd.DataFrame) -> pd.DataFrame:
    """Parquet needs one type per column: tuples (plate lists) and mixed objects become text."""
    out = table.copy()
    for col in out.columns:
        if (out[col].dtype == object and pd.api.types.infer_dtype(out[col], skipna=True) not in ("string", "empty")
                and out[col].map(lambda v: isinstance(v, (tuple, list, dict))).any()):  # (text columns: C check)
            out[col] = out[col].map(str)
    return out


def output_label(variable: str, component: str, unit: str) -> str:
    """Column name of one output component: 'AnkleMoment X [N.m/kg]', 'HipPower [W/kg]'."""
    name = f"{variable} {component}" if component else variable
    return f"{name} [{unit}]" if unit else name


def curves_wide(result) -> pd.DataFrame:
    """Time-normalised cycles, wide: one row per cycle and percent (``side, cycle, kinetic,
    percent``), one column per output variable and component, in the output's unit. Built from the
    per-frame arrays with :func:`gaitid.cycles.curves.time_normalise`, as ``Result.curves`` is."""
    from gaitid.core.vocabulary import CYCLE_POINTS
    from gaitid.cycles.curves import PERCENT, time_normalise

    units = result.outputs.units
    order: dict[tuple[str, str], int] = {}
    blocks = {}
    for side, curves in result.outputs.curves.items():
        cols, arrays = [], []
        for name, arr in curves.items():
            a = np.asarray(arr, float).reshape(result.trial.n_frames, -1)
            comps = ("X", "Y", "Z")[: a.shape[1]] if a.shape[1] > 1 else ("",)
            cols += [(name, c) for c in comps]
            arrays.append(a)
        for c in cols:
            order.setdefault(c, len(order))
        blocks[side] = ([order[c] for c in cols], np.hstack(arrays) if arrays else None)
    rows, keys = [], []
    for c in sorted(result.cycles, key=lambda c: (c.side, c.index)):
        where, block = blocks.get(c.side, ([], None))
        values = np.full((CYCLE_POINTS, len(order)), np.nan)
        if block is not None:
            values[:, where] = time_normalise(block, result.trial.time, c.start_time, c.end_time)
        rows.append(values)
        keys.append((c.side, c.index, bool(c.kinetic)))
    meta = pd.DataFrame({
        "side": [k[0] for k in keys for _ in range(CYCLE_POINTS)],
        "cycle": np.repeat([k[1] for k in keys], CYCLE_POINTS).astype(int),
        "kinetic": np.repeat([k[2] for k in keys], CYCLE_POINTS).astype(bool),
        "percent": np.tile(PERCENT, len(keys)),
    })
    labels = [output_label(v, c, units.get(v, "")) for v, c in order]
    values = pd.DataFrame(np.vstack(rows) if rows else np.empty((0, len(labels))), columns=labels)
    return pd.concat([meta, values], axis=1)


def curves_summary_wide(curves: pd.DataFrame) -> pd.DataFrame:
    """Mean, sample SD and n of the cycles in ``curves`` (:func:`curves_wide`), wide: one row per
    side and percent, three columns per output variable and component ('AnkleMoment X [N.m/kg]
    mean', '... SD', '... n'); NaN-skipping, as :func:`gaitid.cycles.parameters.summarise`."""
    labels = [c for c in curves.columns if c not in ("side", "cycle", "kinetic", "percent")]
    if curves.empty:
        return pd.DataFrame(columns=["side", "percent"])
    g = curves.groupby(["side", "percent"], sort=True)[labels]
    stats = {"mean": g.mean(), "SD": g.std(ddof=1), "n": g.count()}
    out = pd.concat({k: v for k, v in stats.items()}, axis=1)
    out = out[[(stat, lab) for lab in labels for stat in stats]]
    out.columns = [f"{lab} {stat}" for stat, lab in out.columns]
    return out.reset_index()


def parameters_wide(result) -> pd.DataFrame:
    """Discrete parameters, wide: one row per cycle (``side, cycle``), one column per parameter
    ('cadence [steps/min]', 'ankle plantarflexor moment, late stance, peak [N.m/kg]', 'AnklePower
    A2 [W/kg]') and, for timed parameters (peaks, bursts), their timing ('... timing [% cycle]')."""
    p = result.parameters
    if p is None or p.empty:
        return pd.DataFrame(columns=["side", "cycle"])
    def name(parameter: str, variable: str, component: str) -> str:
        if " " in parameter:  # a clinical parameter names itself ('knee flexion, swing, peak')
            return parameter
        return " ".join(x for x in (variable, component, parameter) if x)  # 'AnklePower A2'

    names = pd.Series([name(a, b, c) for a, b, c in zip(p["parameter"].tolist(), p["variable"].fillna("").tolist(),
                                                        p["component"].fillna("").tolist())], index=p.index)
    units = p["unit"].fillna("")
    p = p.assign(label=names + (" [" + units + "]").where(units != "", ""), timing=names + " timing [% cycle]")
    order = list(dict.fromkeys(p["label"]))
    value = p.pivot_table(index=["side", "cycle"], columns="label", values="value", aggfunc="first", sort=False)
    value = value.reindex(columns=order)
    timed = p[p["percent"].notna()]
    if not timed.empty:
        t_order = list(dict.fromkeys(timed["timing"]))
        timing = timed.pivot_table(index=["side", "cycle"], columns="timing", values="percent", aggfunc="first",
                                   sort=False).reindex(columns=t_order)
        value = value.join(timing)
        # each timing column right after its value column
        pairs = dict(zip(p["label"], p["timing"]))
        value = value[[c for lab in order for c in (lab, pairs[lab]) if c in value.columns]]
    value.columns.name = None
    return value.reset_index()


def excel_tables(result) -> dict[str, pd.DataFrame]:
    """The sheets of :func:`write_excel`, in order."""
    from gaitid.cycles.curves import cycles_table

    small = tables_small(result)
    about = pd.DataFrame({"item": ["trial", "file", "written by", "layout", "per-frame data"], "value": [
        result.name, str(result.trial.path or ""), "gaitid",
        "curves: one row per cycle and % of the cycle, one column per output variable and component, in the "
        "unit its name gives; parameters: one row per cycle",
        f"not in this workbook (it can exceed a spreadsheet's row limit): {result.name}_frames.csv or "
        f".parquet (Result.to_csv / to_parquet)"]})
    curves = curves_wide(result)
    return {"about": about, "curves": curves, "curves_summary": curves_summary_wide(curves),
            "parameters": parameters_wide(result), "parameters_summary": small["parameters_summary"],
            "cycles": cycles_table(result.cycles), "events": small["events"], "contacts": small["contacts"]}


def tables_small(result) -> dict[str, pd.DataFrame]:
    """The Result's short tables (events, contacts, parameter summary), without the per-frame one."""
    summary = result.parameters_summary if result.parameters_summary is not None else pd.DataFrame()
    return {"events": events_table(result.events), "contacts": result.contacts, "parameters_summary": summary}


def write_excel(result, path: str | os.PathLike) -> Path:
    """One ``.xlsx`` workbook in a wide per-cycle layout (:func:`excel_tables`): curves, their mean
    and SD, parameters per cycle, cycles, events, contacts. The per-frame table is not in it (CSV,
    Parquet): any trial length stays within a spreadsheet's limits (:mod:`gaitid.io.xlsx`)."""
    from gaitid.io.xlsx import write_xlsx

    path = Path(path)
    sheets = excel_tables(result)
    sheets.update({k: _stringify_objects(sheets[k]) for k in ("events", "contacts")})
    with atomic_path(path, inputs=_inputs(result)) as tmp:
        write_xlsx(tmp, sheets)
    return path


# --------------------------------------------------------------------------- C3D


def _per_kg(unit: str, result) -> float:
    """Factor from ``unit`` to the mass-normalised unit Plug-in Gait stores."""
    s = result.trial.subject
    g = result.settings.gravity_m_s2
    m, h = s.mass, s.height or math.nan
    return {
        "N/kg": 1.0, "N.m/kg": 1.0, "W/kg": 1.0, "deg": 1.0,
        "N": 1.0 / m, "N.m": 1.0 / m, "W": 1.0 / m,
        "BW": g, "BW.H": g * h, "BW.sqrt(g.H)": g * math.sqrt(g * h),
    }[unit]


KIND_OF_UNIT = {"N/kg": "force", "N.m/kg": "moment", "W/kg": "power", "deg": "angle"}  # Plug-in Gait's per-kg units
DEFAULT_SUFFIX = "_gaitid"  # the results' names when the trial has points of the plain ones (Vicon's outputs)


@dataclass
class ResultPoints:
    """What :func:`write_results_c3d` adds to the copy: ``points`` ``{label: (POINT group, (n_frames,
    3) values as stored)}``, the ``suffix`` of their labels, the trial's points they replace
    (``replace_outputs``) and ``skipped`` ``{label: reason}`` (results not written)."""

    points: dict[str, tuple[str, np.ndarray]]
    suffix: str
    replaced: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def summary(self) -> list[str]:
        """Lines for the user: which names were written, in which convention, and what was not."""
        names = sorted(self.points, key=lambda label: not label.removesuffix(self.suffix).endswith("Moment"))
        shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
        lines = [f"results C3D: {len(names)} points ({shown}) in Plug-in Gait's convention (external moments, "
                 f"distal frame, N.mm/kg)"]
        if self.replaced:
            lines.append(f"  replacing {len(self.replaced)} of the file's own outputs (--replace-outputs)")
        elif self.suffix:
            lines.append(f"  the file's own outputs are kept; gaitid's carry the suffix {self.suffix}")
        reasons: dict[str, list[str]] = {}
        for label, why in self.skipped.items():
            reasons.setdefault(why, []).append(label)
        for why, labels in reasons.items():
            lines.append(f"  not written: {', '.join(labels[:4])}{', ...' if len(labels) > 4 else ''}: {why}")
        return lines


def result_points(result, suffix: str | None = None, replace_outputs: bool = False) -> ResultPoints:
    """The results as Plug-in Gait stores its outputs, whatever the Result's ``Settings.frame``,
    ``convention`` and ``normalise`` (:func:`gaitid.cycles.outputs.plugin_gait_curves`: external
    forces and moments in the distal segment's frame, per kg; moments in N.mm/kg, powers in Z,
    ground reactions in the file's own lab), from the per-frame arrays (``result.outputs``).

    Labels: ``L``/``R`` + the variable + ``suffix``. ``suffix=None``: none, or
    :data:`DEFAULT_SUFFIX` when a plain label is already a point of the trial (Vicon's outputs)
    and ``replace_outputs`` is False. A label that is a point of the trial is replaced only with
    ``replace_outputs``; otherwise an :class:`~gaitid.core.errors.OutputError`."""
    from gaitid.cycles.outputs import plugin_gait_curves
    from gaitid.io.c3d import OUTPUT_GROUPS
    from gaitid.model.markerset import load_model

    trial = result.trial
    model = load_model(result.settings.model)
    curves, units, skipped = plugin_gait_curves(result.outputs, result.kinematics, model, result.settings,
                                                trial.subject)
    n = trial.n_frames
    values = {}
    for side, by_name in curves.items():
        for variable, arr in by_name.items():
            group, _, _, scale = OUTPUT_GROUPS[KIND_OF_UNIT[units[variable]]]
            a = np.asarray(arr, float).reshape(n, -1)
            if a.shape[1] == 1:  # scalar (power): Plug-in Gait stores it in Z
                vals = np.where(np.isnan(a), np.nan, 0.0) * np.ones((1, 3))
                vals[:, 2] = a[:, 0]
            else:
                vals = np.full((n, 3), np.nan)
                vals[:, : a.shape[1]] = a[:, :3]
            if variable == "GroundReactionForce":  # our Z-up lab -> the file's lab
                vals = vals @ trial.lab_rotation
            values[f"{side[0]}{variable}"] = (group, vals * scale)
    existing = {*trial.marker_labels, *trial.virtual_labels, *trial.model_outputs}
    if suffix is None:
        suffix = DEFAULT_SUFFIX if existing.intersection(values) and not replace_outputs else ""
    points = {f"{label}{suffix}": v for label, v in values.items()}
    clash = [label for label in points if label in existing]
    if clash and not replace_outputs:
        raise OutputError(f"the results C3D would replace {len(clash)} points of the trial ({', '.join(clash[:3])}"
                          f"{', ...' if len(clash) > 3 else ''}): give another --suffix (suffix=), or "
                          "--replace-outputs (replace_outputs=True) to replace them", trial.path)
    sides = {f"{side[0]}": side for side in curves}
    skip = {f"{s}{variable}{suffix}": why for variable, why in skipped.items() for s in sides}
    return ResultPoints(points, suffix, clash, skip)


def write_results_c3d(result, path: str | os.PathLike, suffix: str | None = None, replace_outputs: bool = False,
                      points: ResultPoints | None = None) -> Path:
    """A copy of the input trial with the results added as Plug-in Gait-style points
    (:func:`result_points`, or ``points`` already made by it).

    Built from gaitid's own parsed trial (:func:`gaitid.io.c3d.write_c3d` in the file's
    own lab), not by re-reading the input with another library, so every file gaitid
    reads can be written back; verified before it replaces ``path``."""
    from gaitid.io.c3d import write_c3d

    src = result.trial.path
    if src is None or not Path(src).name.lower().endswith(".c3d"):  # (a file named '.c3d' has no suffix)
        raise FileFormatError("results can be written back only into a copy of the input C3D file", src)
    points = points or result_points(result, suffix, replace_outputs)
    return write_c3d(result.trial, path, extra_points=points.points, file_lab=True)


# --------------------------------------------------------------------------- OpenSim


def plate_bodies(result) -> dict[int, str]:
    """OpenSim body per plate from the plate assignment: ``calcn_l`` / ``calcn_r`` for a plate
    with valid contacts of one foot; ``ground`` (no effect on the model) for a plate that is
    unused, invalid or shared by both feet over the trial."""
    sides: dict[int, set] = {fp.index: set() for fp in result.trial.force_plates}
    for _, row in result.contacts.iterrows():
        if row.get("valid") and row.get("side") in ("Left", "Right"):
            plates = row["plates"]
            if isinstance(plates, str):  # the contacts table's '1,2' for a contact over two plates
                plates = [x for x in plates.split(",") if x.strip()]
            elif not isinstance(plates, (tuple, list)):
                plates = (plates,)
            for p in plates:
                sides.setdefault(int(p), set()).add(row["side"])
    body = {"Left": "calcn_l", "Right": "calcn_r"}
    return {p: body[next(iter(s))] if len(s) == 1 else "ground" for p, s in sides.items()}


def write_opensim(result, outdir: str | os.PathLike) -> list[Path]:
    """``<trial>_grf.mot`` (+ ``_grf.xml``) and ``<trial>_id.sto`` (joint moments, N.m, in the
    frame of ``Settings.frame``, internal convention unless the settings say external; its header
    names the frames whose moments are flagged, from a decomposed foot load or a filled marker)."""
    from gaitid.io.mot import write_sto
    from gaitid.io.opensim import write_grf_mot

    outdir = Path(outdir)
    grf = write_grf_mot(result.trial, outdir / f"{result.name}_grf.mot", xml_path=outdir / f"{result.name}_grf.xml",
                        bodies=plate_bodies(result), inputs=_inputs(result))
    mass = result.trial.subject.mass
    labels, cols, flagged = [], [], []
    flags = load_flags(result.loads, result.trial.n_frames, getattr(result, "fills", None), result.outputs)
    for side in ("Left", "Right"):
        codes = np.zeros(result.trial.n_frames, np.int8)
        for joint in ("Ankle", "Knee", "Hip"):
            if f"{joint}Moment" in result.outputs.curves.get(side, {}):
                codes |= flag_codes(flags, side, f"{joint}Moment", result.trial.n_frames)
        flagged += _flag_comments(result.trial, side, codes)
        for joint in ("Ankle", "Knee", "Hip"):
            arr = result.outputs.curves.get(side, {}).get(f"{joint}Moment")
            if arr is None:
                continue
            a = np.asarray(arr, float).reshape(result.trial.n_frames, -1)
            factor = _per_kg(result.outputs.units.get(f"{joint}Moment", ""), result) * mass
            for k, comp in enumerate(("x", "y", "z")):
                labels.append(f"{side.lower()}_{joint.lower()}_moment_{comp}")
                cols.append(a[:, k] * factor if k < a.shape[1] else np.full(result.trial.n_frames, np.nan))
    sto = write_sto(outdir / f"{result.name}_id.sto", labels, result.trial.time, np.column_stack(cols),
                    name=f"{result.name} inverse dynamics (gaitid)", inputs=_inputs(result),
                    comments=[f"moments in N.m, {result.settings.frame} frame, {result.settings.convention} convention",
                              *flagged])
    return [grf, sto]


def _flag_comments(trial, side: str, codes: np.ndarray) -> list[str]:
    """One line per flag (:data:`FLAGS`: 1 decomposed foot load, 2 filled marker) that ``side``'s
    moments carry, with its frames (the file's numbers), as the frames table's ``flag`` column
    marks them: the values there are reconstructed."""
    out = []
    for bit, what in ((1, "from a decomposed foot load (its share of a plate both feet load)"),
                      (2, "from a filled marker gap")):
        a, b = runs((codes & bit) > 0)
        if a.size:
            spans = ", ".join(f"{trial.frames[i]}-{trial.frames[j - 1]}" for i, j in zip(a, b))
            out.append(f"{side.lower()} moments {FLAGS[bit]} on frames {spans}: {what}")
    return out
