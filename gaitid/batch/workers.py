"""Worker processes for a batch: they import gaitid once and take many tasks, and one that dies
costs only the task it was running (see docs/sessions.md)."""

from __future__ import annotations

import importlib
import multiprocessing
import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time
from collections import deque
from multiprocessing.connection import wait as wait_connections
from typing import Callable

GRACE_S = 10.0  # a worker still busy this long after its trial's time budget is killed
WATCH_S = 1.0  # how often a worker checks that the batch that started it is still alive
UNWIND_S = 5.0  # a worker whose parent died, still alive this long after its SIGTERM, exits at once
PR_SET_PDEATHSIG = 1  # Linux prctl(2)


def _modules(report: bool) -> list[str]:
    """What a trial (and its report) imports."""
    if not report:
        return ["gaitid.pipeline"]
    from gaitid.report import MODULES

    return ["gaitid.pipeline", *MODULES]


def _preload(report: bool) -> None:
    for name in _modules(report):
        importlib.import_module(name)


def _parent_death_signal() -> bool:
    """Linux: ask the kernel to send this process SIGTERM when its parent dies (SIGKILL included;
    strictly, when the parent's thread that started it ends: the pool's owner); False where that
    is not available (the watchdog alone then notices)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _parent_alive(parent: int):
    """A test of whether this worker's parent is alive: POSIX, the parent seen at start is still its
    parent (a dead parent's children are reparented); Windows (no reparenting), the parent's sentinel."""
    if os.name == "nt":
        proc = multiprocessing.parent_process()
        return (lambda: True) if proc is None else proc.is_alive
    return lambda: os.getppid() == parent


def _watch_parent(alive: Callable[[], bool], period: float = WATCH_S) -> None:
    """Until the parent that started this worker dies: then SIGTERM to this process (its task
    unwinds, its temporary files removed) and, if it is still alive :data:`UNWIND_S` later, an exit
    without cleanup. On every system, beside the Linux parent-death signal: without it a worker
    blocked on its task pipe would wait for ever (its siblings forked after it hold the pipe's other end)."""
    while alive():
        time.sleep(period)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
    except (OSError, ValueError):
        pass
    time.sleep(UNWIND_S)
    os._exit(128 + signal.SIGTERM)


def _worker_main(conn, report: bool, memory: int | None, watch: bool = True) -> None:
    """A worker process: import the pipeline (and the report) once, then run the tasks it is sent
    (``(function, args)``, answered ``('ok', value)`` or ``('error', text)``) until ``None``.
    With ``watch``, it exits when the process that started it dies, however it died (with the
    forkserver start method that is the server, which exits when the batch does)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C: the parent stops the batch
    signal.signal(signal.SIGTERM, _stop)  # the parent's stop: unwind (temporary files removed), then exit
    if watch:
        alive = _parent_alive(os.getppid())
        _parent_death_signal()  # (after reading the parent: one already dead is then noticed below)
        threading.Thread(target=_watch_parent, args=(alive,), daemon=True, name="gaitid-parent-watch").start()
    if memory:
        from gaitid.io.c3d_check import BUDGET_ENV

        os.environ[BUDGET_ENV] = str(memory)  # the reader's own check uses the same budget
    _preload(report)  # once per worker, not per trial (already done when forked from the parent)
    while True:
        try:
            task = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        fn, args = task
        try:
            answer = ("ok", fn(*args))
        except SystemExit:  # stopped (SIGTERM): no answer
            return
        except BaseException as exc:  # noqa: BLE001  (tasks record their own errors; this is a bug)
            answer = ("error", f"{type(exc).__name__}: {exc}")
        try:
            conn.send(answer)
        except (OSError, ValueError):
            return


def _stop(signum, frame) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one stop (the parent's, or its death's twice) unwinds once
    raise SystemExit(128 + signum)


class _Worker:
    def __init__(self, ctx, init: tuple):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, *init), daemon=True, name="gaitid-batch-worker")
        self.proc.start()
        child.close()
        self.task = None
        self.deadline = None


class WorkerPool:
    """Worker processes that import gaitid once and take many tasks, one at a time each.

    Unlike :class:`concurrent.futures.ProcessPoolExecutor`, a worker that dies (killed by the
    system for lack of memory, a crash in a library) costs only the task it was running: the
    pool knows which one, reports it (``'died'``, with the exit code) and starts a new worker. A
    worker still busy :data:`GRACE_S` after its task's time budget is killed (``'timeout'``).
    With the fork start method the parent imports gaitid once before the workers start."""

    def __init__(self, n: int, *, report: bool = False, memory: int | None = None):
        self.ctx = multiprocessing.get_context()
        self.n, self.init = n, (report, memory)
        if self.ctx.get_start_method() == "fork":  # import once here: every worker shares it
            _preload(report)
        elif self.ctx.get_start_method() == "forkserver":
            self.ctx.set_forkserver_preload(_modules(report))
        self.workers: list[_Worker] = []
        self.queue: deque = deque()

    def submit(self, key, fn: Callable, args: tuple, seconds: float | None = None, *, first: bool = False) -> None:
        """Queue a task; ``first``: before the tasks already queued (taken by the next idle worker)."""
        (self.queue.appendleft if first else self.queue.append)((key, fn, args, seconds))

    @property
    def busy(self) -> bool:
        return bool(self.queue) or any(w.task is not None for w in self.workers)

    def _dispatch(self) -> None:
        idle = [w for w in self.workers if w.task is None]
        while self.queue and (idle or len(self.workers) < self.n):
            if not idle:
                self.workers.append(_Worker(self.ctx, self.init))
                idle.append(self.workers[-1])
            w = idle.pop()
            key, fn, args, seconds = self.queue.popleft()
            try:
                w.conn.send((fn, args))
            except (OSError, ValueError):  # the worker died while idle: a new one takes the task
                self._drop(w)
                self.queue.appendleft((key, fn, args, seconds))
                continue
            w.task = (key, seconds)
            w.deadline = time.monotonic() + seconds + GRACE_S if seconds else None

    def _drop(self, w: _Worker) -> None:
        if w.proc.is_alive():
            w.proc.kill()
        w.proc.join()
        w.conn.close()
        self.workers.remove(w)

    def results(self, poll: float = 0.5) -> list[tuple]:
        """The tasks finished since the last call: ``(key, 'ok' | 'error' | 'died' | 'timeout',
        value | text | exit code | seconds)``; waits at most ``poll`` seconds for one."""
        self._dispatch()
        busy = [w for w in self.workers if w.task is not None]
        if not busy:
            return []
        ready = set(wait_connections([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=poll))
        done, now = [], time.monotonic()
        for w in busy:
            key, seconds = w.task
            if w.conn in ready:
                try:
                    status, value = w.conn.recv()
                except (EOFError, OSError):
                    pass  # died: below
                else:
                    w.task = None
                    done.append((key, status, value))
                    continue
            if w.proc.sentinel in ready or not w.proc.is_alive():
                w.proc.join()
                done.append((key, "died", w.proc.exitcode))
                self._drop(w)
            elif w.deadline is not None and now > w.deadline:
                done.append((key, "timeout", seconds))
                self._drop(w)
        self._dispatch()
        return done

    def map(self, fn: Callable, args_list: list[tuple], seconds: float | None = None) -> list[tuple]:
        """``fn(*args)`` for each; a list of ``(status, value)`` in order (see :meth:`results`)."""
        for i, args in enumerate(args_list):
            self.submit(("map", i), fn, args, seconds)
        out: dict[int, tuple] = {}
        while len(out) < len(args_list):
            for (_, i), status, value in self.results():
                out[i] = (status, value)
        return [out[i] for i in range(len(args_list))]

    def stop(self, timeout: float = 5.0) -> list[tuple]:
        """Stop now (the batch is interrupted): queued tasks dropped, the answers already sent
        returned (``(key, status, value)``), every worker sent SIGTERM, which ends its task as an
        exception would (its ``atomic_path`` writes remove their temporary files; a trial's record
        is written only when it is done), killed after ``timeout`` seconds if still alive."""
        self.queue.clear()
        answers = []
        for w in self.workers:
            try:
                if w.task is not None and w.conn.poll(0):
                    answers.append((w.task[0], *w.conn.recv()))
            except (EOFError, OSError):
                pass
        for w in self.workers:
            if w.proc.is_alive():
                w.proc.terminate()
        deadline = time.monotonic() + timeout
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join()
            w.conn.close()
        self.workers = []
        return answers

    def close(self) -> None:
        for w in self.workers:
            try:
                w.conn.send(None)
            except (OSError, ValueError):
                pass
        for w in self.workers:
            w.proc.join(timeout=5)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join()
            w.conn.close()
        self.workers = []


def describe_death(status: str, value, seconds: float | None = None) -> str:
    """Why a task's worker process gave no answer, in words."""
    if status == "timeout":
        return f"stopped responding: killed {GRACE_S:g} s after the {seconds or value:g} s one trial may take here " \
               f"(--time-limit)"
    if status == "error":
        return f"internal error in the worker: {value}"
    if isinstance(value, int) and value < 0:
        try:
            name = signal.Signals(-value).name
        except ValueError:
            name = f"signal {-value}"
        cause = " (the system's out-of-memory killer sends SIGKILL)" if name == "SIGKILL" else ""
        return f"the worker process processing it was killed by {name}{cause}; the other trials went on"
    return f"the worker process processing it exited (code {value}) without an answer; the other trials went on"
