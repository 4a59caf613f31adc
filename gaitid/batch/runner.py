"""Running a planned batch: the trials in worker processes or on a Dask cluster, progress,
up-to-date checks, session reports and the combined per-cycle tables (see :mod:`gaitid.batch`)."""


from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

import gaitid
from gaitid.batch.budget import Budget
from gaitid.batch.cluster import dask_client, dask_scanner, run_dask
from gaitid.batch.combined import spreadsheet_safe, trial_stamp, up_to_date, write_combined_tables
from gaitid.batch.job import failed_row, run_job, scan_within_budget, unpack_result
from gaitid.batch.plan import Job, plan
from gaitid.batch.session import TrialInfo
from gaitid.batch.workers import WorkerPool, describe_death
from gaitid.core.errors import GaitIDError, SettingsError
from gaitid.core.settings import Settings
from gaitid.io.atomic import atomic_path
from gaitid.subject.layers import SubjectOptions

SUMMARY_COLUMNS = ["trial", "path", "subject", "session", "static", "pairing", "status", "error", "warnings",
                   "checks", "seconds", "n_cycles", "n_kinetic_cycles", "subject_sources", "outdir"]
DEFAULT_TIME_LIMIT_S = 3600.0  # per trial; generous (an hour-long trial takes minutes), catches a hang
MEMORY_SHARE = 0.8  # of the physical memory, shared by the trials processed at once


def default_budget(jobs: int, memory: int | None = None, seconds: float | None = DEFAULT_TIME_LIMIT_S) -> Budget:
    """Each trial's budget: ``memory`` bytes if given, else ``GAITID_MEMORY_BUDGET`` if set, else
    :data:`MEMORY_SHARE` of this machine's physical memory shared by ``jobs`` trials at once."""
    from gaitid.io.c3d_check import BUDGET_ENV, memory_budget

    source = "--memory-limit"
    if memory is None and os.environ.get(BUDGET_ENV, "").strip():
        memory, source = memory_budget(), f"the environment variable {BUDGET_ENV}"
    if memory is None:
        try:
            total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            total = None
        if total:
            memory = int(MEMORY_SHARE * total / max(jobs, 1))
            source = f"{MEMORY_SHARE:.0%} of this machine's {total / 2**30:.0f} GiB shared by {jobs} worker(s); " \
                     "--memory-limit sets it"
    return Budget(memory, seconds, source)


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


def _scanner(pool: WorkerPool | None, budget: Budget) -> Callable[[list[Path]], list[TrialInfo]]:
    def scan(files: list[Path]) -> list[TrialInfo]:
        if pool is None:
            return [scan_within_budget(f, budget) for f in files]
        out = []
        answers = pool.map(scan_within_budget, [(f, budget) for f in files], budget.seconds)
        for f, (status, value) in zip(files, answers):
            if status == "ok":
                out.append(value)
            else:
                error = f"{f}: {describe_death(status, value, budget.seconds)} while reading it"
                out.append(TrialInfo(f, "unknown", (f"cannot read: {error}",), None, {}, frozenset(), error))
        return out

    return scan


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
    memory_limit: int | None = None,
    time_limit_s: float | None = DEFAULT_TIME_LIMIT_S,
    replace_outputs: bool = False,
) -> pd.DataFrame:
    """Process every trial found; returns the summary table (also written to
    ``OUTDIR/batch_summary.csv``). ``jobs``: worker processes here (``jobs=1``: in this
    process); ``scheduler``: a Dask distributed scheduler address (``tcp://host:8786``) or a
    ``dask.distributed.Client``. ``mass`` (kg or 'plates') and ``subject``
    (:class:`SubjectOptions`): subject data for every trial; ``pairing``: a pairing table
    overriding the automatic static trials. ``memory_limit`` (bytes) and ``time_limit_s``: what
    one trial may take (:func:`default_budget`; on Dask also at most the worker's share of its
    memory limit); a trial over budget, or whose worker process dies, is recorded as failed with
    the reason and the others go on. ``replace_outputs``: each results C3D replaces the trial's own
    outputs of the same names (Vicon's) instead of suffixing gaitid's (:func:`gaitid.export.result_points`)."""
    settings = settings or Settings()
    if jobs < 1:
        raise SettingsError(f"jobs={jobs}: must be at least 1 (--jobs)")
    subject = subject or SubjectOptions()
    if mass is not None:
        extra = SubjectOptions.from_mass(mass)
        subject = dataclasses.replace(subject, values={**(subject.values or {}), **(extra.values or {})},
                                      plates=subject.plates or extra.plates)
    budget = default_budget(jobs if scheduler is None else 1, memory_limit, time_limit_s)
    out = Path(outdir)
    args = (settings, None, report, force, subject, budget)
    pool = WorkerPool(jobs, report=report, memory=budget.memory) if scheduler is None and jobs > 1 else None
    with contextlib.ExitStack() as stack:
        if pool is not None:
            stack.callback(pool.close)
        client = stack.enter_context(dask_client(scheduler)) if scheduler is not None else None
        scan = dask_scanner(client, budget) if client is not None else _scanner(pool, budget)
        todo = plan(sources, outdir, pairing=pairing, scan=scan)
        if replace_outputs:
            todo = [dataclasses.replace(j, replace_outputs=True) for j in todo]
        if not any(not j.not_a_trial for j in todo):
            raise SettingsError("no walking trial (.c3d) found in the given folders/patterns (static trials, "
                                "recognised by their content, are not processed on their own)")
        for job in todo:
            if job.renamed:
                print(f"warning: {job.path}: {job.renamed}", file=sys.stderr)
        bar = Progress(len(todo)) if progress is None else None
        finished: list[dict] = []  # the rows of the trials done, in the order they finished

        def notify(row: dict) -> None:
            finished.append(row)
            (progress or bar.update)(row)

        try:
            if pool is not None:
                summary = _run_pool(pool, todo, args, notify, out, report=report, parquet=parquet, force=force)
            else:
                if client is not None:
                    run_dask(todo, args, client, notify)
                else:
                    for job in todo:
                        notify(run_job(job, *args))
                summary = _summary(todo, finished)
                if report:
                    for task in _session_tasks(todo, summary, out, force):
                        _warn(session_report(*task))
                write_combined_tables(todo, summary, out, parquet=parquet, force=force)
        except KeyboardInterrupt:  # Ctrl-C: the workers stopped, the summary of what finished written
            if pool is not None:  # the trials whose answer came with the interruption are done
                for (kind, _), status, row in pool.stop():
                    if kind == "trial" and status == "ok" and row["path"] not in {r["path"] for r in finished}:
                        notify(row)
            summary = _summary(todo, [*finished, *_not_run(todo, finished)])
            _write_summary(out, summary)
            trials = {str(j.path) for j in todo if not j.not_a_trial}
            done = sum(r["path"] in trials for r in finished)
            raise BatchInterrupted(done, len(trials) - done, out / "batch_summary.csv") from None
    _write_summary(out, summary)
    summary.attrs["up_to_date_failures"] = int(summary["up_to_date"].eq(True).sum())
    return _public(summary)


class BatchInterrupted(KeyboardInterrupt):
    """A batch stopped by Ctrl-C (SIGINT): ``done`` trials finished (their outputs and records are
    complete: the next run skips them), ``not_started`` not (marked 'not run' in ``summary``,
    ``batch_summary.csv``, written for what finished)."""

    def __init__(self, done: int, not_started: int, summary):
        super().__init__(f"interrupted: {done} done, {not_started} not started; run again to continue")
        self.done, self.not_started, self.summary = done, not_started, summary


NOT_RUN = "not run"


def _not_run(todo: list[Job], finished: list[dict]) -> list[dict]:
    """Summary rows for the jobs of ``todo`` with no row in ``finished`` (status 'not run')."""
    seen = {r["path"] for r in finished}
    return [{**failed_row(j, ""), "status": NOT_RUN, "error": f"{NOT_RUN}: interrupted"}
            for j in todo if str(j.path) not in seen]


def _write_summary(out: Path, summary: pd.DataFrame) -> None:
    with atomic_path(out / "batch_summary.csv") as tmp:
        spreadsheet_safe(summary[SUMMARY_COLUMNS]).to_csv(tmp, index=False)


def _public(summary: pd.DataFrame) -> pd.DataFrame:
    attrs = dict(summary.attrs)
    table = summary[SUMMARY_COLUMNS].copy()
    table.attrs.update(attrs)
    return table


def _summary(todo: list[Job], rows: list[dict]) -> pd.DataFrame:
    order = {str(j.path): i for i, j in enumerate(todo)}
    rows = sorted(rows, key=lambda r: order[r["path"]])
    return pd.DataFrame(rows, columns=[*SUMMARY_COLUMNS, "up_to_date"])


def _warn(notes: list[str]) -> None:
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)


def _run_pool(pool: WorkerPool, todo: list[Job], args: tuple, notify, out: Path, *, report: bool,
              parquet: bool, force: bool) -> pd.DataFrame:
    """Trials, each session's report as soon as its trials are done (before the trials still
    queued: it is drawn while the other workers go on with them, and only the last session's
    report is left after the last trial), then the combined tables, all in the worker processes."""
    budget: Budget = args[-1]
    rows: dict[int, dict] = {}
    waiting: dict[str, set[int]] = {}
    for i, job in enumerate(todo):
        if job.not_a_trial:
            rows[i] = run_job(job, *args)
            notify(rows[i])
            continue
        waiting.setdefault(job.session, set()).add(i)
        pool.submit(("trial", i), run_job, (job, *args), budget.seconds)
    notes: list[str] = []
    tables_sent = False
    while pool.busy or not tables_sent:
        if not tables_sent and len(rows) == len(todo):  # every trial done: the combined tables, beside
            summary = _summary(todo, list(rows.values()))  # the session reports still being drawn
            pool.submit(("tables", 0), _tables_task, (todo, summary, out, parquet, force))
            tables_sent = True
        for (kind, i), status, value in pool.results():
            if kind == "trial":
                rows[i] = value if status == "ok" else failed_row(todo[i],
                                                                  describe_death(status, value, budget.seconds))
                notify(rows[i])
                session = waiting[todo[i].session]
                session.discard(i)
                if report and not session:
                    done = _summary(todo, list(rows.values()))
                    members = [j for j in todo if j.session == todo[i].session]
                    for task in _session_tasks(members, done, out, force):  # next, beside the other
                        pool.submit(("session", 0), session_report, task, first=True)  # sessions' trials
            elif status == "ok" and kind == "session":
                notes += value
            elif status != "ok":
                what = "session report" if kind == "session" else "combined tables"
                notes.append(f"{what}: {describe_death(status, value)}")
    _warn(notes)
    return _summary(todo, list(rows.values()))


def _tables_task(todo: list[Job], summary: pd.DataFrame, outdir: Path, parquet: bool, force: bool) -> list[str]:
    write_combined_tables(todo, summary, outdir, parquet=parquet, force=force)
    return []


def _session_tasks(todo: list[Job], summary: pd.DataFrame, outdir: Path, force: bool = False) -> list[tuple]:
    """The session reports due (arguments of :func:`session_report`): one per session (a subject
    in a folder) of two trials or more processed, unless its trials are unchanged since it was
    written. A session of one trial has no session report: the trial's own report is it."""
    done = set(summary.loc[summary["status"].isin(["ok", "skipped"]), "path"])
    sessions: dict[str, list[Job]] = {}
    for job in todo:
        if str(job.path) in done and not job.not_a_trial:
            sessions.setdefault(job.session, []).append(job)
    tasks = []
    for jobs in sessions.values():
        if len(jobs) < 2:
            continue
        name = f"session_{jobs[0].session_label}"
        digest = {"trials": [[str(j.path), trial_stamp(j)] for j in jobs], "gaitid": gaitid.__version__}
        outputs = [outdir / f"{name}_report.pdf", outdir / f"{name}_report.html"]
        if not force and up_to_date(outdir / f"{name}_report.json", digest, outputs):
            continue
        tasks.append((jobs, outdir, name, digest))
    return tasks


def session_report(jobs: list[Job], outdir: Path, name: str, digest: dict) -> list[str]:
    """Write one session's report from its trials' saved results; returns the warnings."""
    notes, results = [], []
    for job in jobs:
        try:
            results.append(unpack_result((job.outdir / "gaitid-result.pkl").read_bytes()))
        except (OSError, pickle.UnpicklingError, AttributeError, EOFError, TypeError, KeyError, ValueError):
            notes.append(f"{job.path.name}: no saved result for the session report (rerun with --force)")
    if not results:
        return notes
    from gaitid.report import write_report  # (imports matplotlib: only when a report is due)

    subject = jobs[0].subject or "subject unknown"
    try:
        from gaitid.batch.job import read_configured_norms

        write_report(results, outdir, name=name, normative=read_configured_norms(results[0].settings.convention),
                     title=f"Session {jobs[0].session_label} ({subject}): {len(results)} trial"
                           f"{'s' if len(results) > 1 else ''}")
        with atomic_path(outdir / f"{name}_report.json") as tmp:
            tmp.write_text(json.dumps(digest, indent=1))
    except GaitIDError as exc:
        notes.append(f"session report {name}: {exc}")
    return notes
