"""Running a planned batch: the trials in worker processes or on a Dask cluster, progress,
up-to-date checks, session reports and the combined per-cycle tables (see :mod:`gaitid.batch`)."""


from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

import gaitid
from gaitid.batch.job import (
    CURVE_KEYS,
    run_job,
    unpack_result,
)
from gaitid.batch.plan import Job, SubjectOptions, plan
from gaitid.errors import GaitIDError, SettingsError
from gaitid.io.atomic import atomic_path
from gaitid.settings import Settings

SUMMARY_COLUMNS = ["trial", "path", "subject", "session", "static", "pairing", "status", "error", "seconds",
                   "n_cycles", "n_kinetic_cycles", "subject_sources", "outdir"]



# ----------------------------------------------------------------------------- planning


# ----------------------------------------------------------------------------- one trial


# ----------------------------------------------------------------------------- progress


class Progress:
    """A one-line progress bar on a stream: counts and an estimate of the time left."""

    def __init__(self, total: int, stream=None):
        self.total, self.done, self.t0 = total, 0, time.perf_counter()
        self.counts = {"ok": 0, "failed": 0, "skipped": 0}
        self.stream = stream if stream is not None else sys.stderr

    def update(self, row: dict) -> None:
        self.done += 1
        self.counts[row["status"]] = self.counts.get(row["status"], 0) + 1
        elapsed = time.perf_counter() - self.t0
        left = elapsed / self.done * (self.total - self.done)
        width = 24
        filled = int(width * self.done / max(self.total, 1))
        line = (f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done}/{self.total}  "
                f"ok {self.counts['ok']}  failed {self.counts['failed']}  skipped {self.counts['skipped']}  "
                f"left ~{_fmt(left)}  ")
        end = "\n" if self.done == self.total else ""
        print(line, end=end, file=self.stream, flush=True)


def _fmt(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


# ----------------------------------------------------------------------------- the batch


def run_batch(
    sources: Iterable[str | os.PathLike],
    outdir: str | os.PathLike,
    settings: Settings | None = None,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    mass: float | str | None = None,
    subject: SubjectOptions | None = None,
    pairing: str | os.PathLike | dict | None = None,
    report: bool = True,
    parquet: bool = False,
    force: bool = False,
    progress: Callable[[dict], None] | None = None,
) -> pd.DataFrame:
    """Process every trial found; returns the summary table (also written to
    ``OUTDIR/batch_summary.csv``). ``jobs``: worker processes here; ``scheduler``: a Dask
    distributed scheduler address (``tcp://host:8786``) or a ``dask.distributed.Client``.
    ``mass`` (kg or 'plates') and ``subject`` (:class:`SubjectOptions`): subject data for
    every trial; ``pairing``: a pairing table overriding the automatic static trials."""
    settings = settings or Settings()
    if jobs < 1:
        raise SettingsError(f"jobs={jobs}: must be at least 1")
    subject = subject or SubjectOptions()
    if mass is not None:
        extra = SubjectOptions.from_mass(mass)
        subject = dataclasses.replace(subject, values={**(subject.values or {}), **(extra.values or {})},
                                      plates=subject.plates or extra.plates)
    todo = plan(sources, outdir, pairing=pairing)
    if not todo:
        raise SettingsError("no walking trial (.c3d) found in the given folders/patterns (static trials, "
                            "recognised by their content, are not processed on their own)")
    bar = Progress(len(todo)) if progress is None else None
    notify = progress or bar.update
    rows = []
    args = (settings, None, report, force, subject)
    if scheduler is not None:
        rows = _run_dask(todo, args, scheduler, notify)
    elif jobs == 1:
        for job in todo:
            rows.append(run_job(job, *args))
            notify(rows[-1])
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(run_job, job, *args) for job in todo]
            for fut in as_completed(futures):
                rows.append(fut.result())
                notify(rows[-1])
    order = {str(j.path): i for i, j in enumerate(todo)}
    rows = sorted(rows, key=lambda r: order[r["path"]])
    summary = pd.DataFrame(rows, columns=SUMMARY_COLUMNS)
    out = Path(outdir)
    if report:
        _session_reports(todo, summary, out, force)
    write_combined_tables(todo, summary, out, parquet=parquet, force=force)
    with atomic_path(out / "batch_summary.csv") as tmp:
        summary.to_csv(tmp, index=False)
    summary.attrs["up_to_date_failures"] = sum(bool(r.get("up_to_date")) for r in rows)
    return summary


def _stamp_of(job: Job) -> str:
    """A digest of the trial's run record (changes whenever its outputs are rewritten)."""
    try:
        return hashlib.sha1((job.outdir / "gaitid-run.json").read_bytes()).hexdigest()
    except OSError:
        return ""


def _up_to_date(stamp_path: Path, digest: dict, outputs: list[Path]) -> bool:
    try:
        return json.loads(stamp_path.read_text()) == digest and all(p.exists() for p in outputs)
    except (OSError, ValueError):
        return False


def _session_reports(todo: list[Job], summary: pd.DataFrame, outdir: Path, force: bool = False) -> None:
    """One report per session (a subject in a folder), from the saved results of its
    processed trials; rebuilt only when one of its trials changed. A session of one trial has
    no session report: the trial's own report is it."""
    done = set(summary.loc[summary["status"].isin(["ok", "skipped"]), "path"])
    sessions: dict[str, list[Job]] = {}
    for job in todo:
        if str(job.path) in done:
            sessions.setdefault(job.session, []).append(job)
    notes = []
    for key, jobs in sessions.items():
        if len(jobs) < 2:
            continue
        name = f"session_{jobs[0].session_label}"
        stamp = outdir / f"{name}_report.json"
        digest = {"trials": [[str(j.path), _stamp_of(j)] for j in jobs], "gaitid": gaitid.__version__}
        outputs = [outdir / f"{name}_report.pdf", outdir / f"{name}_report.html"]
        if not force and _up_to_date(stamp, digest, outputs):
            continue
        results = []
        for job in jobs:
            try:
                results.append(unpack_result((job.outdir / "gaitid-result.pkl").read_bytes()))
            except (OSError, pickle.UnpicklingError, AttributeError, EOFError, TypeError, KeyError, ValueError):
                notes.append(f"{job.path.name}: no saved result for the session report (rerun with --force)")
        if not results:
            continue
        from gaitid.report import (
            write_report,  # (imports matplotlib: only when a report is due)
        )

        subject = jobs[0].subject or "subject unknown"
        try:
            write_report(results, outdir, name=name,
                         title=f"Session {jobs[0].session_label} ({subject}): {len(results)} trial"
                               f"{'s' if len(results) > 1 else ''}")
            with atomic_path(stamp) as tmp:
                tmp.write_text(json.dumps(digest, indent=1))
        except GaitIDError as exc:
            notes.append(f"session report {name}: {exc}")
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def write_combined_tables(todo: list[Job], summary: pd.DataFrame, outdir: Path, *, parquet: bool = False,
                          force: bool = False) -> list[Path]:
    """``batch_cycles`` (one row per cycle and variable component, the curve at 0..100 % as
    columns pct_0..pct_100) and ``batch_parameters`` (one row per cycle and parameter) over
    every trial processed, with subject, session and trial columns; rebuilt only when a trial
    changed."""
    done = summary.loc[summary["status"].isin(["ok", "skipped"]), "path"].tolist()
    jobs = [j for j in todo if str(j.path) in set(done)]
    names = ["batch_cycles", "batch_parameters"]
    outputs = [outdir / f"{n}.{ext}" for n in names for ext in (("csv", "parquet") if parquet else ("csv",))]
    digest = {"trials": [[str(j.path), _stamp_of(j)] for j in jobs], "parquet": parquet, "gaitid": gaitid.__version__}
    stamp = outdir / "batch_tables.json"
    if not force and _up_to_date(stamp, digest, outputs):
        return []
    curves, params = [], []
    for j in jobs:
        ident = {"subject": j.subject, "session": j.session_label, "trial": j.path.stem, "path": str(j.path)}
        c = _read_table(j.outdir / f"{j.path.stem}_curves.csv")
        if c is not None and not c.empty:
            wide = c.set_index([*CURVE_KEYS, "percent"])["value"].unstack("percent")
            wide.columns = [f"pct_{p:g}" for p in wide.columns]
            wide = wide.reset_index()
            curves.append(wide.assign(**ident)[[*ident, *wide.columns]])
        p = _read_table(j.outdir / f"{j.path.stem}_parameters.csv")
        if p is not None and not p.empty:
            params.append(p.assign(**ident)[[*ident, *p.columns]])
    cols_c = ["subject", "session", "trial", "path", "side", "cycle", "kinetic", "variable", "component", "unit"]
    tables = {"batch_cycles": pd.concat(curves, ignore_index=True) if curves else pd.DataFrame(columns=cols_c),
              "batch_parameters": pd.concat(params, ignore_index=True) if params else pd.DataFrame(
                  columns=["subject", "session", "trial", "path"])}
    written = []
    outdir.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        with atomic_path(outdir / f"{name}.csv") as tmp:
            table.to_csv(tmp, index=False)
        written.append(outdir / f"{name}.csv")
        if parquet:
            with atomic_path(outdir / f"{name}.parquet") as tmp:
                table.to_parquet(tmp, index=False)
            written.append(outdir / f"{name}.parquet")
    with atomic_path(stamp) as tmp:
        tmp.write_text(json.dumps(digest, indent=1))
    return written


def _read_table(path: Path) -> pd.DataFrame | None:
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError):
        return None
    for col in ("component", "unit", "variable", "parameter", "side"):  # '' (a scalar), not NaN
        if col in table.columns:
            table[col] = table[col].fillna("").astype(str)
    return table


def _run_dask(todo: list[Job], args: tuple, scheduler, notify) -> list[dict]:
    try:
        from dask.distributed import Client
        from dask.distributed import as_completed as dask_completed
    except ImportError:
        raise SettingsError("--scheduler needs Dask: pip install 'gaitid[cluster]'") from None
    own = not hasattr(scheduler, "submit")
    client = Client(scheduler) if own else scheduler
    try:
        futures = [client.submit(run_job, job, *args, pure=False) for job in todo]
        rows = []
        for fut in dask_completed(futures):
            rows.append(fut.result())
            notify(rows[-1])
        return rows
    finally:
        if own:
            client.close()
