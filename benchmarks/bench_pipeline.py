"""End-to-end speed: process() per trial (read, model, events, plates, solver, cycles,
tables), and the report, on the sample and on the real trials that store a body mass.

    python benchmarks/bench_pipeline.py [--repeat 5]

Prints the median time per trial and what that means for rerunning an archive.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gaitid.core.resources import sample_data_dir  # noqa: E402
from gaitid.pipeline import process  # noqa: E402

REALDATA = REPO.parent / "shared" / "realdata"
TRIALS = [sample_data_dir() / "walk_synthetic.c3d"] + [
    REALDATA / rel for rel in ("biomechzoo/HC030A05.c3d", "c3d-parser/MH0222_BP06.c3d",
                               "python-gaitalytics/test_small.c3d", "btkdata/PiG_Motion3_FF.c3d",
                               "btkdata/FunctionalWalk.c3d")
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    process(TRIALS[0])  # imports and caches warm
    rows = []
    for path in TRIALS:
        if not path.exists():
            print(f"skip {path} (absent)")
            continue
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            result = process(path)
            times.append(time.perf_counter() - t0)
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            result.report(tmp)
            report = time.perf_counter() - t0
        rows.append((path.name, result.trial.n_frames, statistics.median(times), report))
    print(f"{'trial':28s} {'frames':>6s} {'process (ms)':>13s} {'report (ms)':>12s}")
    for name, n, t, rep in rows:
        print(f"{name:28s} {n:6d} {1000 * t:13.0f} {1000 * rep:12.0f}")
    per = statistics.median(t for _, _, t, _ in rows)
    rep = statistics.median(r for *_, r in rows)
    print(f"median: {1000 * per:.0f} ms per trial without the report, {1000 * (per + rep):.0f} ms with it: "
          f"about {3600 / (per + rep):.0f} trials per hour per core with reports, {3600 / per:.0f} without")


if __name__ == "__main__":
    main()
