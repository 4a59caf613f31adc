"""A batch's combined tables, ``batch_cycles``, ``batch_parameters``, ``batch_emg`` and ``batch_emg_timing``
(docs/sessions.md, docs/emg.md).

Each trial's rows are made by the trial's own job, in the worker processes and so in parallel,
from the Result it has just written (:func:`write_trial_rows`): ``OUTDIR/<trial>/gaitid-batch_cycles.part``
and ``gaitid-batch_parameters.part``, each a first line naming the trial table it was made from
(its file identity, size and time) and the trial's identity columns, then the rows as CSV. The
combined tables (:func:`write_combined_tables`) are the pieces copied one after the other: a
file copy per trial, in bounded memory whatever the archive's size. A piece that is missing or no
longer matches its trial's table (written by an older gaitid, the table rewritten since) is made
again from that table, as the combined tables were made before the pieces.

The rows are those of ``pd.concat`` over the trials (columns: the union, in order of
appearance; a trial's missing column empty), written by :func:`gaitid.export.write_csv`.
"""

from __future__ import annotations

import csv
import hashlib
import json
import shutil
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

import gaitid
from gaitid.export import write_columns, write_csv
from gaitid.io.atomic import atomic_path

CURVE_KEYS = ["side", "cycle", "kinetic", "variable", "component", "unit"]
IDENTITY = ["subject", "session", "trial", "path"]
TABLES = {"batch_cycles": "curves", "batch_parameters": "parameters",  # combined table: the trial table it takes
          "batch_emg": "emg", "batch_emg_timing": "emg_timing"}
EMPTY_COLUMNS = {"batch_cycles": [*IDENTITY, *CURVE_KEYS], "batch_parameters": IDENTITY,  # no trial has rows
                 "batch_emg": IDENTITY, "batch_emg_timing": IDENTITY}
TEXT_COLUMNS = ("component", "unit", "variable", "parameter", "side", "muscle", "channel")  # '' (a scalar), not NaN
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet takes such a cell as a formula (OWASP)
PIECE_VERSION = 1


def safe_cell(value):
    """A text cell that starts with ``= + - @``, a tab or a carriage return prefixed with an
    apostrophe, as spreadsheet tools expect (OWASP "CSV injection"); other values as they are."""
    return f"'{value}" if isinstance(value, str) and value.startswith(FORMULA_START) else value


def spreadsheet_safe(table: pd.DataFrame, columns: Iterable[str] | None = None) -> pd.DataFrame:
    """``table`` with every text cell of ``columns`` (default: all) made :func:`safe_cell`: a trial
    named ``=HYPERLINK(...).c3d`` stays text in Excel."""
    out = table.copy()
    for col in (columns if columns is not None else out.columns):
        if col in out.columns and (out[col].dtype == object or pd.api.types.is_string_dtype(out[col])):
            out[col] = out[col].map(safe_cell)
    return out


def trial_stamp(job) -> str:
    """A digest of the trial's run record (changes whenever its outputs are rewritten)."""
    try:
        return hashlib.sha1((job.outdir / "gaitid-run.json").read_bytes()).hexdigest()
    except OSError:
        return ""


def up_to_date(stamp_path: Path, digest: dict, outputs: list[Path]) -> bool:
    """Whether ``stamp_path`` records ``digest`` and every output exists."""
    try:
        return json.loads(stamp_path.read_text()) == digest and all(p.exists() for p in outputs)
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------------- one trial's rows


def identity(job) -> dict:
    """The identity columns a trial's rows carry in the combined tables."""
    return {"subject": job.subject, "session": job.session_label, "trial": job.path.stem, "path": str(job.path)}


def _source(job, name: str) -> Path:
    from gaitid.io.atomic import output_stem

    return job.outdir / f"{output_stem(job.path.stem)}_{TABLES[name]}.csv"


def _piece_path(job, name: str) -> Path:
    return job.outdir / f"gaitid-{name}.part"


def _file_id(path: Path) -> list | None:
    try:
        s = path.stat()
    except OSError:
        return None
    return [s.st_ino, s.st_size, s.st_mtime_ns]  # a rewrite (atomic: a new file) changes the identity


def _text(table: pd.DataFrame) -> pd.DataFrame:
    fixed = {c: table[c].fillna("").astype(str) for c in TEXT_COLUMNS if c in table.columns}
    return table.assign(**fixed) if fixed else table


def _with_identity(table: pd.DataFrame, job) -> pd.DataFrame:
    ident = {k: safe_cell(v) for k, v in identity(job).items()}
    return table.assign(**ident)[[*ident, *table.columns]]


def curves_from_table(long: pd.DataFrame) -> pd.DataFrame:
    """A trial's curves table (long: one row per curve and percent) one row per curve, its values
    in columns pct_<percent>, rows in the order of the keys (``unstack``'s)."""
    wide = long.set_index([*CURVE_KEYS, "percent"])["value"].unstack("percent")
    wide.columns = [f"pct_{p:g}" for p in wide.columns]
    return wide.reset_index()


CURVES_PER_BLOCK = 32_768  # rows (curves) of a trial's curves piece gathered and written at a time


def curves_from_arrays(result, per_block: int | None = None):
    """The Result's cycle curves one row per curve, as columns (``{name: array}``) from its
    time-normalised arrays: the rows of :func:`curves_from_table` of its curves table (the same
    keys, order and values), without building that table. Yields blocks of at most ``per_block``
    rows (None: one block), each gathered from the arrays when it is due, so a long trial's curves
    never exist twice; nothing without curves."""
    from gaitid.core.vocabulary import SIDES
    from gaitid.cycles.curves import N_POINTS, PERCENT, curve_layout

    layout, labels = curve_layout(result.normalised, result.outputs.units)  # the codes of the curves CSV
    per_cycle, seen = [], {side: 0 for side in layout}
    for c in result.cycles:  # each cycle's curves, in the order of the cycles (its row in its side's arrays)
        if c.side in layout:
            per_cycle.append((c.side, c.index, bool(c.kinetic), seen[c.side]))
            seen[c.side] += 1
    if not per_cycle:
        return
    size = np.array([layout[side][0].size for side, *_ in per_cycle])
    side_code = np.repeat([SIDES.index(side) for side, *_ in per_cycle], size)
    key_codes = {"side": side_code,
                 "cycle": np.repeat(np.array([c[1] for c in per_cycle], dtype=np.int64), size),
                 "kinetic": np.repeat(np.array([c[2] for c in per_cycle], dtype=bool), size),
                 **{k: np.concatenate([layout[side][i] for side, *_ in per_cycle])
                    for i, k in enumerate(("variable", "component", "unit"))}}
    row = np.repeat([c[3] for c in per_cycle], size)  # the cycle's row in its side's arrays
    rank = {k: np.argsort(np.argsort(np.array(labels[k], dtype=object).astype(str), kind="stable"),
                          kind="stable")[key_codes[k]] if k in labels else key_codes[k] for k in CURVE_KEYS}
    order = np.lexsort([rank[k] for k in reversed(CURVE_KEYS)])  # (lexsort's last key sorts first)
    # which of its side's arrays holds each curve (the component in it: its code)
    source_of = {side: np.concatenate([np.full(v.shape[2] if v.ndim == 3 else 1, j) for j, v in enumerate(arrays)])
                 for side, (*_, arrays) in layout.items()}
    source = np.concatenate([source_of[side] for side, *_ in per_cycle])
    step = len(order) if per_block is None else per_block
    width = int(source.max()) + 1
    for a in range(0, len(order), step):
        idx = order[a : a + step]
        values = np.empty((len(idx), N_POINTS))
        pair = side_code[idx] * width + source[idx]  # the block's curves grouped by the array holding them
        for p in np.unique(pair):
            at = np.flatnonzero(pair == p)
            arr = layout[SIDES[p // width]][3][p % width]  # (n_cycles, N_POINTS) or (n_cycles, N_POINTS, k)
            rows, comp = row[idx[at]], key_codes["component"][idx[at]]
            values[at] = arr[rows] if arr.ndim == 2 else arr[rows, :, comp - 1]
        block = {k: np.array(labels[k], dtype=object)[key_codes[k][idx]] if k in labels else key_codes[k][idx]
                 for k in CURVE_KEYS}
        yield {**block, **{f"pct_{p:g}": values[:, j] for j, p in enumerate(PERCENT)}}


def _read_table(path: Path) -> pd.DataFrame | None:
    try:
        table = pd.read_csv(path, engine="pyarrow")  # the trials' tables, written by pyarrow too
    except (OSError, ValueError):
        return None
    return _text(table)


def _rows_from_files(job, name: str) -> pd.DataFrame | None:
    table = _read_table(_source(job, name))
    if table is None or table.empty:
        return None
    return curves_from_table(table) if name == "batch_cycles" else table


def _write_piece(job, name: str, source_id: list | None, rows) -> Path:
    """``rows``: a table, or blocks of columns (:func:`curves_from_arrays`) the identity columns go
    before (written one after the other, the header once)."""
    path = _piece_path(job, name)
    head = json.dumps({"piece": PIECE_VERSION, "source": source_id, "identity": identity(job)}) + "\n"
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(head.encode())
            if isinstance(rows, pd.DataFrame):
                write_csv(_with_identity(rows, job), f)
            elif rows is not None:
                for k, block in enumerate(rows):
                    n = len(next(iter(block.values())))
                    write_columns({**{c: [safe_cell(v)] * n for c, v in identity(job).items()}, **block}, f,
                                  header=k == 0)
    return path


def write_trial_rows(result, job) -> None:
    """Write the trial's pieces of the combined tables, from ``result`` just written to the
    trial's tables (called by the trial's job, in the worker): the curves from the Result's
    arrays (text, integer and boolean keys and float values: what the curves table reads back
    as); the parameters, small, read back from the trial's table (its free-text columns read
    back otherwise: an empty note is NaN there). A piece that cannot be written is made again
    when the combined tables are."""
    curves = (curves_from_arrays(result, CURVES_PER_BLOCK) if result.normalised is not None
              else _rows_from_files(job, "batch_cycles"))
    rows = {"batch_cycles": curves, **{name: _rows_from_files(job, name) for name in TABLES if name != "batch_cycles"}}
    try:
        for name in TABLES:
            _write_piece(job, name, _file_id(_source(job, name)), rows[name])
    except OSError:
        drop_trial_rows(job)


def drop_trial_rows(job) -> None:
    """Remove the trial's pieces (before its outputs are rewritten: a job stopped half way leaves
    none, so the next combined tables are made from its tables)."""
    for name in TABLES:
        try:
            _piece_path(job, name).unlink()
        except OSError:
            pass


def _piece(job, name: str) -> Path:
    """The trial's piece of the combined table ``name``, made again from its table unless it
    matches that table and the trial's identity."""
    path, source = _piece_path(job, name), _file_id(_source(job, name))
    try:
        with open(path, "rb") as f:
            head = json.loads(f.readline())
        if head == {"piece": PIECE_VERSION, "source": source, "identity": identity(job)}:
            return path
    except (OSError, ValueError):
        pass
    return _write_piece(job, name, source, _rows_from_files(job, name))


# --------------------------------------------------------------------------- the combined tables


def _header(path: Path) -> bytes:
    with open(path, "rb") as f:
        f.readline()
        return f.readline()


def _columns(header: bytes) -> list[str]:
    return next(csv.reader([header.decode()]))


def _concatenate(jobs: list, name: str, target) -> bool:
    """The trials' pieces of table ``name`` under one header (the union of their columns in
    order of appearance); False when no trial has rows."""
    pieces = [(job, _piece(job, name)) for job in jobs]
    with_rows = [(job, p, h) for job, p in pieces if (h := _header(p))]
    if not with_rows:
        return False
    union = list(dict.fromkeys(c for _, _, h in with_rows for c in _columns(h)))
    with open(target, "wb") as out:
        if all(h == with_rows[0][2] for _, _, h in with_rows):
            out.write(with_rows[0][2])
        else:
            write_csv(pd.DataFrame(columns=union), out)
        for job, path, header in with_rows:
            with open(path, "rb") as f:
                f.readline()
                f.readline()
                if _columns(header) == union:
                    shutil.copyfileobj(f, out, 1 << 20)
                    continue
            # a trial without some column: its rows from its table, laid out on the union (that column empty)
            rows = _rows_from_files(job, name)
            if rows is not None:
                write_csv(_with_identity(rows, job).reindex(columns=union), out, header=False)
    return True


def write_combined_tables(todo: list, summary: pd.DataFrame, outdir: Path, *, parquet: bool = False,
                          force: bool = False) -> list[Path]:
    """``batch_cycles`` (one row per cycle and variable component, the curve at 0..100 % as
    columns pct_0..pct_100), ``batch_parameters`` (one row per cycle and parameter), ``batch_emg`` and
    ``batch_emg_timing`` (the trials' EMG tables, long, as written) over
    every trial processed, with subject, session and trial columns; rebuilt only when a trial
    changed. ``--parquet`` also writes them as Parquet (that copy is built in memory)."""
    done = set(summary.loc[summary["status"].isin(["ok", "skipped"]), "path"])
    jobs = [j for j in todo if str(j.path) in done and not j.not_a_trial]
    outputs = [outdir / f"{n}.{ext}" for n in TABLES for ext in (("csv", "parquet") if parquet else ("csv",))]
    digest = {"trials": [[str(j.path), trial_stamp(j)] for j in jobs], "parquet": parquet, "gaitid": gaitid.__version__}
    stamp = outdir / "batch_tables.json"
    if not force and up_to_date(stamp, digest, outputs):
        return []
    written = []
    outdir.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        with atomic_path(outdir / f"{name}.csv") as tmp:
            if not _concatenate(jobs, name, tmp):
                write_csv(pd.DataFrame(columns=EMPTY_COLUMNS[name]), tmp)
        written.append(outdir / f"{name}.csv")
        if parquet:  # one table in memory, from the trials' tables
            parts = [_with_identity(t, j) for j in jobs if (t := _rows_from_files(j, name)) is not None]
            table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=EMPTY_COLUMNS[name])
            with atomic_path(outdir / f"{name}.parquet") as tmp:
                table.to_parquet(tmp, index=False)
            written.append(outdir / f"{name}.parquet")
    with atomic_path(stamp) as tmp:
        tmp.write_text(json.dumps(digest, indent=1))
    return written
