"""Batch runs: a session folder or a whole archive, on this machine or a Dask cluster.

Conventions (documented in the README):

- Trials: every ``*.c3d`` found under the given folders or glob patterns (recursively for
  folders). Files whose name contains ``static`` or ``cal`` (case-insensitive, e.g.
  ``PiG_Calibration3_FF.c3d``) are static calibration trials, not processed as walks.
- Each walking trial's static trial: a static trial in the same folder; with several, the
  one whose name shares the longest prefix with the trial's (then the newest).
- Subject data: the file's PROCESSING group; where a value is missing, a Vicon subject
  measurement file (``*.mp``, ``$Bodymass = 74``...) in the same folder fills it.
- Outputs: ``OUTDIR/<trial>/`` holds the tables (CSV), the report (PDF, HTML) and
  ``<trial>_results.c3d``; ``OUTDIR/batch_summary.csv`` lists every trial with its
  status (ok, failed, skipped), error, time and cycle counts. A trial whose outputs are
  up to date (same input size and modification time, same settings, same gaitid
  version: recorded in ``OUTDIR/<trial>/gaitid-run.json``) is skipped unless ``force``.
- One failing trial is recorded with its error and never stops the batch.
- Session reports: with reports on, every folder of trials gets
  ``OUTDIR/session_<folder>_report.pdf/.html`` pooling the cycles of all its trials that
  processed (trials skipped as up to date are read back from their saved
  ``OUTDIR/<trial>/gaitid-result.pkl``, written by the same gaitid version).
- Parallel: ``jobs`` worker processes on this machine, or a Dask distributed scheduler
  (``scheduler`` address; workers must see the same paths). Each trial is processed by
  the same function whichever way it runs, so the results are identical.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import pickle
import re
import sys
import time
import traceback
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

import gaitid
from gaitid.errors import GaitIDError, SettingsError
from gaitid.io.atomic import atomic_path
from gaitid.settings import Settings
from gaitid.trial import VICON_SUBJECT_FIELDS

STATIC_PATTERN = re.compile(r"static|cal", re.IGNORECASE)
SUMMARY_COLUMNS = ["trial", "path", "static", "status", "error", "seconds", "n_cycles", "n_kinetic_cycles", "outdir"]


@dataclass(frozen=True)
class Job:
    """One trial to process: its path, its static trial (or None) and its output folder."""

    path: Path
    static: Path | None
    outdir: Path


def is_static(path: Path) -> bool:
    return bool(STATIC_PATTERN.search(path.stem))


def find_trials(sources: Iterable[str | os.PathLike]) -> list[Path]:
    """Every C3D file under the folders / matching the glob patterns, sorted, without duplicates."""
    found: set[Path] = set()
    for src in sources:
        p = Path(src)
        if p.is_dir():
            found.update(q for q in p.rglob("*") if q.suffix.lower() == ".c3d" and q.is_file())
        elif p.is_file():
            found.add(p)
        else:
            matches = [Path(m) for m in glob.glob(str(src), recursive=True)]
            if not matches:
                raise SettingsError(f"no file or folder matches {src!r}")
            found.update(m for m in matches if m.is_file() and m.suffix.lower() == ".c3d")
    return sorted(q.resolve() for q in found)


def _common_prefix(a: str, b: str) -> int:
    return len(os.path.commonprefix([a.lower(), b.lower()]))


def static_for(trial: Path, statics: list[Path]) -> Path | None:
    """The static trial for ``trial``: same folder, longest common name prefix, then newest."""
    same = [s for s in statics if s.parent == trial.parent]
    if not same:
        return None
    return max(same, key=lambda s: (_common_prefix(s.stem, trial.stem), s.stat().st_mtime))


def plan(sources: Iterable[str | os.PathLike], outdir: str | os.PathLike) -> list[Job]:
    """The jobs of a batch: walking trials paired with their static trials."""
    files = find_trials(sources)
    statics = [f for f in files if is_static(f)]
    walks = [f for f in files if not is_static(f)]
    outdir = Path(outdir)
    names: dict[str, int] = {}
    jobs = []
    for w in walks:
        name = w.stem
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:  # same file name in two folders
            name = f"{name}-{hashlib.sha1(str(w.parent).encode()).hexdigest()[:6]}"
        jobs.append(Job(w, static_for(w, statics), outdir / name))
    return jobs


def _fill_subject(trial, folder: Path) -> None:
    """Fill subject values the C3D lacks from a ``*.mp`` file in the trial's folder."""
    from gaitid.model.subject import read_subject

    mps = sorted(folder.glob("*.mp"))
    if not mps:
        return
    measured = read_subject(mps[0])
    for field in VICON_SUBJECT_FIELDS.values():
        if getattr(trial.subject, field[0], None) is None:
            setattr(trial.subject, field[0], getattr(measured, field[0]))


def _fingerprint(job: Job, settings: Settings, extra: dict) -> dict:
    def stat(p: Path | None):
        if p is None:
            return None
        s = p.stat()
        return [str(p), s.st_size, s.st_mtime_ns]

    return {"input": stat(job.path), "static": stat(job.static), "settings": settings.as_dict(),
            "options": extra, "gaitid": gaitid.__version__}


def run_job(job: Job, settings: Settings, mass: float | str | None = None, report: bool = True,
            force: bool = False) -> dict:
    """Process one trial and write its outputs; never raises (the error goes in the row)."""
    from gaitid.pipeline import load_trial, process

    t0 = time.perf_counter()
    row = {"trial": job.outdir.name, "path": str(job.path), "static": str(job.static or ""),
           "status": "ok", "error": "", "seconds": 0.0, "n_cycles": 0, "n_kinetic_cycles": 0, "outdir": str(job.outdir)}
    stamp = job.outdir / "gaitid-run.json"
    try:
        fp = json.loads(json.dumps(_fingerprint(job, settings, {"mass": mass, "report": report})))
        if not force and stamp.exists():
            try:
                old = json.loads(stamp.read_text())
            except ValueError:
                old = None
            if old is not None and old.get("fingerprint") == fp:
                row.update(status="skipped", n_cycles=old.get("n_cycles", 0),
                           n_kinetic_cycles=old.get("n_kinetic_cycles", 0))
                return row
        trial = load_trial(job.path, cop_threshold=settings.cop_threshold_n)
        _fill_subject(trial, job.path.parent)
        result = process(trial, subject=mass, static=job.static, settings=settings)
        result.to_csv(job.outdir)
        result.to_c3d(job.outdir / f"{result.name}_results.c3d")
        if report:
            result.report(job.outdir)
            with atomic_path(job.outdir / "gaitid-result.pkl") as tmp:  # for the session report
                tmp.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        row["n_cycles"] = len(result.cycles)
        row["n_kinetic_cycles"] = sum(c.kinetic for c in result.cycles)
        with atomic_path(stamp) as tmp:
            tmp.write_text(json.dumps({"fingerprint": fp, "n_cycles": row["n_cycles"],
                                       "n_kinetic_cycles": row["n_kinetic_cycles"]}, indent=1))
    except GaitIDError as exc:
        row.update(status="failed", error=str(exc))
    except Exception as exc:  # a bug in gaitid: record it, keep the batch going
        last = traceback.extract_tb(exc.__traceback__)[-1]
        row.update(status="failed", error=f"internal error {type(exc).__name__}: {exc} "
                                          f"({Path(last.filename).name}:{last.lineno})")
    row["seconds"] = round(time.perf_counter() - t0, 3)
    return row


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


def run_batch(
    sources: Iterable[str | os.PathLike],
    outdir: str | os.PathLike,
    settings: Settings | None = None,
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    mass: float | str | None = None,
    report: bool = True,
    force: bool = False,
    progress: Callable[[dict], None] | None = None,
) -> pd.DataFrame:
    """Process every trial found; returns the summary table (also written to
    ``OUTDIR/batch_summary.csv``). ``jobs``: worker processes here; ``scheduler``: a Dask
    distributed scheduler address (``tcp://host:8786``) or a ``dask.distributed.Client``."""
    settings = settings or Settings()
    if jobs < 1:
        raise SettingsError(f"jobs={jobs}: must be at least 1")
    todo = plan(sources, outdir)
    if not todo:
        raise SettingsError("no walking trial (.c3d) found in the given folders/patterns")
    bar = Progress(len(todo)) if progress is None else None
    notify = progress or bar.update
    rows = []
    args = (settings, mass, report, force)
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
    summary = pd.DataFrame(sorted(rows, key=lambda r: order[r["path"]]), columns=SUMMARY_COLUMNS)
    if report:
        summary = _session_reports(todo, summary, Path(outdir))
    with atomic_path(Path(outdir) / "batch_summary.csv") as tmp:
        summary.to_csv(tmp, index=False)
    return summary


def _session_reports(todo: list[Job], summary: pd.DataFrame, outdir: Path) -> pd.DataFrame:
    """One report per folder of trials, from the saved results of its processed trials."""
    from gaitid.report import write_report

    done = set(summary.loc[summary["status"].isin(["ok", "skipped"]), "path"])
    folders: dict[Path, list[Job]] = {}
    for job in todo:
        if str(job.path) in done:
            folders.setdefault(job.path.parent, []).append(job)
    notes = []
    for folder, jobs in folders.items():
        results = []
        for job in jobs:
            try:
                results.append(pickle.loads((job.outdir / "gaitid-result.pkl").read_bytes()))
            except (OSError, pickle.UnpicklingError, AttributeError, EOFError):
                notes.append(f"{job.path.name}: no saved result for the session report (rerun with --force)")
        if not results:
            continue
        try:
            write_report(results, outdir, name=f"session_{folder.name}", title=f"Session {folder.name}: {len(results)} trials")
        except GaitIDError as exc:
            notes.append(f"session report of {folder}: {exc}")
    for note in notes:
        print(f"warning: {note}", file=sys.stderr)
    return summary


def _run_dask(todo: list[Job], args: tuple, scheduler, notify) -> list[dict]:
    try:
        from dask.distributed import Client, as_completed as dask_completed
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
