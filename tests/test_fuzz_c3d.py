"""Fuzz read_c3d with truncated and byte-flipped copies of real C3D files.

Every mutant must give a Trial or a GaitIDError: never a crash (segfault, other
exception) and never a hang. The reads run in a child process (a worker fed
one path at a time), so a segfault shows up as a test failure with the
offending mutant saved under ``FUZZ_SAVE`` (default: pytest's tmp dir) instead
of killing pytest; a read that takes longer than ``HANG_S`` is a hang. (This
found nine mutants on which ezc3d 1.7.2 segfaulted or hung; each became a rule
in gaitid.io.c3d_check and a case in test_reader_badinput.py. read_c3d now
decodes files itself, but the isolation stays: it costs nothing.)

Run more mutants for the issue's robustness figures with::

    python tests/test_fuzz_c3d.py 5000            # prints tried / Trial / gaitid error / crash / hang
    python tests/test_fuzz_c3d.py 3000 5 all      # mutants of every real C3D file
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.conftest import REALDATA  # noqa: E402

HANG_S = 10.0
# small real files keep the run short; the header/parameter section is where parsers break
FUZZ_SOURCES = ["btkdata/PiG_Calibration3_FF.c3d", "btkdata/Eb015pi.c3d", "btkdata/Gait.c3d", "btkdata/PlugInC3D.c3d"]

_WORKER = r"""
import sys
sys.path.insert(0, sys.argv[1])
from gaitid.core.errors import GaitIDError
from gaitid.io.c3d import read_c3d
for line in sys.stdin:
    path = line.rstrip("\n")
    try:
        read_c3d(path)
        out = "TRIAL"
    except GaitIDError as exc:
        out = "GAITID " + type(exc).__name__
    except BaseException as exc:
        out = "OTHER " + type(exc).__name__ + ": " + str(exc).replace("\n", " ")[:200]
    sys.stdout.write(out + "\n")
    sys.stdout.flush()
"""


def mutants(data: bytes, n: int, rng: np.random.Generator):
    """``n`` corrupted copies of ``data``: truncations, byte flips (mostly in header/parameters), extreme bytes."""
    size = len(data)
    head = min(size, (data[0] + 2) * 512 + 4096) if size > 0 else 0
    for _ in range(n):
        kind = rng.integers(4)
        if kind == 0:  # truncation anywhere
            yield "truncate", data[: int(rng.integers(0, size))]
            continue
        buf = bytearray(data)
        k = int(rng.integers(1, 9))
        region = head if kind in (1, 2) else size
        idx = rng.integers(0, region, k)
        if kind == 1 or kind == 3:  # random bytes
            buf_vals = rng.integers(0, 256, k)
        else:  # extreme values that break sizes and offsets
            buf_vals = rng.choice([0x00, 0x01, 0x7F, 0x80, 0xFF], k)
        for i, v in zip(idx, buf_vals):
            buf[int(i)] = int(v)
        if kind == 3 and rng.random() < 0.3:  # flipped and cut
            buf = buf[: int(rng.integers(size // 2, size))]
        yield ("flip-header" if kind in (1, 2) else "flip-any"), bytes(buf)


class Worker:
    """A child Python process reading one C3D path per request."""

    def __init__(self):
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(HERE.parent)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )

    def read(self, path: str, timeout: float) -> str:
        try:
            self.proc.stdin.write(path + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            return "CRASH"
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return "HANG"
        line = self.proc.stdout.readline()
        if not line:
            return "CRASH"
        return line.strip()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def run_fuzz(n_total: int, seed: int, save_dir: Path, sources: list[Path] | None = None) -> tuple[Counter, list[str]]:
    """Run ``n_total`` mutants spread over ``sources`` (default FUZZ_SOURCES); returns outcome counts and
    the failures (saved)."""
    rng = np.random.default_rng(seed)
    if sources is None:
        sources = [REALDATA / s for s in FUZZ_SOURCES if (REALDATA / s).exists()]
    counts: Counter = Counter()
    failures: list[str] = []
    worker = Worker()
    save_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        mutant_path = os.path.join(tmp, "mutant.c3d")
        try:
            for k, src in enumerate(sources):
                data = src.read_bytes()
                n = n_total // len(sources) + (1 if k < n_total % len(sources) else 0)
                for j, (kind, blob) in enumerate(mutants(data, n, rng)):
                    with open(mutant_path, "wb") as fh:
                        fh.write(blob)
                    out = worker.read(mutant_path, HANG_S)
                    counts["tried"] += 1
                    if out == "TRIAL":
                        counts["trial"] += 1
                    elif out.startswith("GAITID"):
                        counts["gaitid error"] += 1
                    else:
                        key = {"CRASH": "crash", "HANG": "hang"}.get(out, "other exception")
                        counts[key] += 1
                        saved = save_dir / f"{src.stem}-{kind}-{j}.c3d"
                        saved.write_bytes(blob)
                        failures.append(f"{key}: {saved} ({out})")
                        if out in ("CRASH", "HANG"):
                            worker.close()
                            worker = Worker()
        finally:
            worker.close()
    return counts, failures


@pytest.mark.slow
def test_fuzz_truncated_and_flipped_files(tmp_path, realdata):
    n = int(os.environ.get("GAITID_FUZZ_N", "2000"))
    save = Path(os.environ.get("FUZZ_SAVE", tmp_path / "fuzz-failures"))
    counts, failures = run_fuzz(n, seed=20261121, save_dir=save)
    print(dict(counts))
    assert counts["tried"] == n
    assert not failures, "\n".join(failures[:20])
    assert counts["trial"] > 0 and counts["gaitid error"] > 0  # both outcomes exercised


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    every = len(sys.argv) > 3 and sys.argv[3] == "all"
    sources = sorted(REALDATA.glob("*/*.c3d")) if every else None
    counts, failures = run_fuzz(n, seed, Path(tempfile.gettempdir()) / "gaitid-fuzz-failures", sources)
    print(dict(counts))
    print("\n".join(failures[:50]))
