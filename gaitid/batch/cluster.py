"""A batch on a Dask distributed cluster: files read and trials processed on the workers, each
within the worker's share of its memory limit; a lost worker costs only its trial."""

from __future__ import annotations

import contextlib
import dataclasses
from pathlib import Path
from typing import Callable

from gaitid.batch.budget import Budget
from gaitid.batch.job import failed_row, run_job, scan_within_budget
from gaitid.batch.plan import Job
from gaitid.batch.session import TrialInfo
from gaitid.core.errors import SettingsError
from gaitid.core.settings import Settings
from gaitid.subject.layers import SubjectOptions

MEMORY_SHARE = 0.8  # of a worker's memory limit (the nanny pauses it at 80 %, kills it at 95 %)


def worker_budget(budget: Budget) -> Budget:
    """On a Dask worker: ``budget`` with its memory at most the worker's share of its memory
    limit (what the worker's process already holds taken off)."""
    try:
        from distributed import get_worker

        worker = get_worker()
        limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None) or getattr(
            worker, "memory_limit", None)
        threads = max(int(getattr(getattr(worker, "state", worker), "nthreads", 1) or 1), 1)
    except (ImportError, ValueError, AttributeError):
        return budget
    if not limit:
        return budget
    try:
        import psutil

        held = psutil.Process().memory_info().rss
    except (ImportError, OSError):
        held = 0
    share = int((MEMORY_SHARE * limit - held) / threads)
    if budget.memory is not None and budget.memory <= share:
        return budget
    return dataclasses.replace(budget, memory=max(share, 0), memory_source=(
        f"the Dask worker's memory limit of {limit / 2**20:.0f} MiB, {held / 2**20:.0f} MiB of it in use, "
        f"{threads} thread(s)"))


def _dask_job(job: Job, settings: Settings, mass, report: bool, force: bool, subject: SubjectOptions,
              budget: Budget) -> dict:
    """:func:`run_job` on a Dask worker, within the worker's share of its memory limit, so that a
    trial too big for the worker fails with a gaitid error naming it instead of getting the
    worker killed."""
    return run_job(job, settings, mass, report, force, subject, worker_budget(budget))


def _dask_scan(path: Path, budget: Budget) -> TrialInfo:
    return scan_within_budget(path, worker_budget(budget))


@contextlib.contextmanager
def dask_client(scheduler):
    try:
        from dask.distributed import Client
    except ImportError:
        raise SettingsError("--scheduler needs Dask: pip install 'gaitid[cluster]'") from None
    own = not hasattr(scheduler, "submit")
    client = Client(scheduler) if own else scheduler
    try:
        yield client
    finally:
        if own:
            client.close()


def dask_scanner(client, budget: Budget) -> Callable[[list[Path]], list[TrialInfo]]:
    """Files read on the cluster's workers (each within the worker's memory)."""

    def scan(files: list[Path]) -> list[TrialInfo]:
        futures = [client.submit(_dask_scan, f, budget, pure=False) for f in files]
        out = []
        for f, fut in zip(files, futures):
            try:
                out.append(fut.result())
            except Exception as exc:  # KilledWorker, a lost connection: this file only
                error = f"{f}: the Dask worker reading it failed ({type(exc).__name__}: {exc})"
                out.append(TrialInfo(f, "unknown", (f"cannot read: {error}",), None, {}, frozenset(), error))
        return out

    return scan


def run_dask(todo: list[Job], args: tuple, client, notify) -> list[dict]:
    from dask.distributed import as_completed as dask_completed

    rows = [run_job(job, *args) for job in todo if job.not_a_trial]
    for row in rows:
        notify(row)
    futures = {client.submit(_dask_job, job, *args, pure=False): job for job in todo if not job.not_a_trial}
    for fut in dask_completed(futures):
        try:
            rows.append(fut.result())
        except Exception as exc:  # KilledWorker, a lost connection: this trial only
            rows.append(failed_row(futures[fut], f"the Dask worker processing it failed "
                                                  f"({type(exc).__name__}: {exc}); the other trials went on"))
        notify(rows[-1])
    return rows
