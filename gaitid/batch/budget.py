"""What one trial of a batch may take: its memory (estimated from the C3D header before it is
read) and its time (a timer in the thread processing it). See docs/sessions.md."""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

from gaitid.core.errors import BudgetError

# Peak memory of one trial's job beyond decoding it: a fixed part (the modules a job imports on first
# use, its report) and a part per frame (bytes). benchmarks/bench_batch.py --memory measured a batch
# job (processing, tables, its rows of the combined tables, results C3D, the session report's input,
# its report) at 56 MiB for the 380-frame sample walk, 180 and 427 MiB for walkways of 3,800 and
# 15,200 frames (8 plates at 1 kHz) and 623 MiB for a 36,000-frame treadmill trial (2 plates); the
# estimate (decoding + these) is then 1.2-1.8x the real peak. Re-measure when the pipeline's memory
# per frame changes.
PROCESS_BYTES_FIXED = 64 * 2**20
PROCESS_BYTES_PER_FRAME = 10_000


@dataclass(frozen=True)
class Budget:
    """What one trial may take: ``memory`` (bytes; its peak estimated from the C3D header and
    parameters before anything is read, :func:`trial_memory`) and ``seconds`` (wall time of the
    whole job: reading, processing, writing, report). None: no limit."""

    memory: int | None = None
    seconds: float | None = None
    memory_source: str = "--memory-limit"  # what set ``memory``, named in the error


def trial_memory(path: Path) -> int | None:
    """Estimated peak memory (bytes) of processing the trial at ``path``: decoding (what the
    header, parameters and plates promise, :meth:`gaitid.io.c3d_check.C3DLayout.decoded_bytes`)
    plus :data:`PROCESS_BYTES_FIXED` and :data:`PROCESS_BYTES_PER_FRAME` per frame. Reads only the
    header and parameters (a bad file raises its gaitid error). None for files that are not C3D."""
    if Path(path).suffix.lower() != ".c3d":
        return None
    from gaitid.io.c3d_check import check_c3d

    layout = check_c3d(path)
    used = layout.params.get("FORCE_PLATFORM", {}).get("USED", [0])
    n_plates = int(used[0]) if isinstance(used, (list, tuple)) and used and isinstance(used[0], (int, float)) else 0
    decoding = layout.decoded_bytes(max(0, min(n_plates, 255)))
    return decoding + PROCESS_BYTES_FIXED + layout.n_frames * PROCESS_BYTES_PER_FRAME


def check_memory(path: Path, budget: int | None, where: str = "--memory-limit") -> None:
    """A :class:`~gaitid.core.errors.BudgetError` naming the trial when its estimated peak memory
    exceeds ``budget`` bytes (checked before anything is allocated)."""
    if budget is None:
        return
    need = trial_memory(path)
    if need is not None and need > budget:
        raise BudgetError(f"processing this trial would need about {need / 2**20:.0f} MiB, more than the "
                          f"{budget / 2**20:.0f} MiB one trial may use here ({where})", path)


class OutOfTime(BaseException):
    """Raised in the thread processing a trial when its time budget is spent (a BaseException, so
    no ``except Exception`` on the way swallows it; :func:`run_job` turns it into a failed row)."""


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Raise :class:`OutOfTime` in this thread after ``seconds``: a SIGALRM timer in the main
    thread, else (a Dask worker's thread) an asynchronous exception set by a timer thread. Both
    act between Python bytecodes: one long numpy call finishes first (worker processes are also
    killed by the parent after the budget and a grace period)."""
    if not seconds or seconds <= 0:
        yield
        return
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def alarm(signum, frame):
            raise OutOfTime()

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        return
    tid, lock, state = threading.get_ident(), threading.Lock(), {"done": False, "fired": False}

    def fire():
        with lock:
            if not state["done"]:
                state["fired"] = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), ctypes.py_object(OutOfTime))

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    delivered = False
    try:
        yield
    except OutOfTime:
        delivered = True
        raise
    finally:
        # A stop that fired but was not raised yet is raised here and dropped: the job is over.
        # Never clear it with PyThreadState_SetAsyncExc(id, NULL): CPython then leaves its eval
        # breaker signalled for every thread, and on 3.11 the next profiled call never returns.
        try:
            with lock:
                state["done"] = True
                timer.cancel()
            if state["fired"] and not delivered:
                for _ in range(10_000_000):  # the pending exception is raised between bytecodes
                    pass
        except OutOfTime:
            pass
