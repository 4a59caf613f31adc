"""Speed of read_c3d against a bare ezc3d read: median ms per file and the ratio.

For every real C3D file (read in place from ../shared/realdata, skipped when absent):
``bare`` = ``ezc3d.c3d(path)`` (no platform extraction), ``ezc3d+fp`` =
``ezc3d.c3d(path, extract_forceplat_data=True)``, ``read_c3d`` = gaitid's full
read (validation, points split, plates at both rates, events, subject, vertical
axis). Goal: read_c3d within 1.25 x the bare read.

Run from the repository root: PYTHONPATH=. python benchmarks/bench_read.py [repeats]
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent))  # run from a checkout too

import statistics
import sys
import time
from pathlib import Path

import ezc3d

from gaitid.io.c3d import read_c3d

REALDATA = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"


def median_ms(fn, repeat: int) -> float:
    fn()  # warm caches and lazy imports
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def main() -> None:
    repeat = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    files = sorted(REALDATA.glob("*/*.c3d"))
    if not files:
        print(f"no real data in {REALDATA}: nothing to time")
        return
    print(f"median of {repeat} runs, ms")
    print(f"{'file':36s} {'frames':>6s} {'bare':>7s} {'ezc3d+fp':>9s} {'read_c3d':>9s} {'ratio':>6s}")
    ratios = []
    for f in files:
        s = str(f)
        bare = median_ms(lambda: ezc3d.c3d(s), repeat)
        with_fp = median_ms(lambda: ezc3d.c3d(s, extract_forceplat_data=True), max(3, repeat // 5))
        ours = median_ms(lambda: read_c3d(f), repeat)
        n = read_c3d(f).n_frames
        ratios.append(ours / bare)
        print(f"{f.parent.name + '/' + f.name:36s} {n:6d} {bare:7.1f} {with_fp:9.1f} {ours:9.1f} {ours / bare:6.2f}")
    print(f"ratio read_c3d / bare ezc3d: median {statistics.median(ratios):.2f}, max {max(ratios):.2f} (goal <= 1.25)")


if __name__ == "__main__":
    main()
