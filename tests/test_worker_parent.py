"""A batch's worker processes exit when the batch dies, however it dies (SIGKILL included)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc/self/stat").exists(),
                                reason="reads the workers' state in /proc (Linux)")

_BATCH = r"""
import sys, time
from gaitid.batch import workers
if sys.argv[1] == "watchdog-only":
    workers._parent_death_signal = lambda: False
pool = workers.WorkerPool(2)
pool.submit("idle", workers.os.getpid, ())
pids = []
while len(pids) < 1:
    pids += [value for _, status, value in pool.results() if status == "ok"]
pool.submit("busy", time.sleep, (120,))  # one worker busy for two minutes, one blocked on its pipe
pool.submit("idle2", time.sleep, (0,))
pool.results(poll=1.0)
print(*[w.proc.pid for w in pool.workers], flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited (its new parent may be slow to reap it)


@pytest.mark.parametrize("mode", ["pdeathsig", "watchdog-only"])
def test_workers_exit_when_the_batch_is_killed(mode):
    """Before: the workers of a SIGKILLed batch stayed for ever, blocked on their task pipe (each
    worker forked after another holds that pipe's other end) or busy in their task. Now the Linux
    parent-death signal, and on every system a watchdog thread (``watchdog-only``: the signal
    disabled), end them within seconds."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-c", _BATCH, mode], stdout=subprocess.PIPE, text=True, env=env)
    pids = []
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and all(_running(p) for p in pids)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 8.0
        while any(_running(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [p for p in pids if _running(p)] == []
    finally:
        proc.kill()
        proc.wait()
        for p in pids:
            if _running(p):
                os.kill(p, signal.SIGKILL)
