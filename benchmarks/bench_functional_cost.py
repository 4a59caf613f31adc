"""The cost of a functional calibration and of process() with one (docs/functional.md).

    PYTHONPATH=. python benchmarks/bench_functional_cost.py

Synthetic 20 s, 100 Hz star arcs and knee flexions built from each walk's static (best of 5
runs, ms): the calibration alone, process() without and with the calibration value.
"""

from __future__ import annotations

import time
from pathlib import Path

from gaitid.core.resources import sample_data_dir
from gaitid.io.c3d import read_c3d
from gaitid.model.functional import session_calibration
from gaitid.pipeline import process
from gaitid.validation.synthetic.functional_trials import functional_trial, with_clusters

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata" / "btkdata"


def best(f, k=5) -> float:
    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times) * 1000


def main() -> None:
    cases = [("sample walk", sample_data_dir() / "walk_synthetic.c3d", sample_data_dir() / "static_synthetic.c3d")]
    if REAL.is_dir():
        cases.append(("PiG_Motion-FlatFoot-Full", REAL / "PiG_Motion-FlatFoot-Full.c3d",
                      REAL / "PiG_Calibration-FlatFoot-Full.c3d"))
    for label, walk_path, static_path in cases:
        static, walk = read_c3d(static_path), read_c3d(walk_path)
        hip, _ = functional_trial(static, "hip", sta_mm=2, path="hip.c3d")
        knee, _ = functional_trial(static, "knee", range_deg=90, sta_mm=2, path="knee.c3d")
        cal = session_calibration([hip, knee], static)
        print(f"{label}: {walk.n_frames} frames; process {best(lambda: process(walk, static=static)):.0f} ms, with "
              f"the calibration value {best(lambda: process(walk, static=static, functional=cal)):.0f} ms; "
              f"calibration: hip trial {best(lambda: session_calibration([hip], static)):.0f} ms, hip and knee "
              f"{best(lambda: session_calibration([hip, knee], static)):.0f} ms")
    st = with_clusters(read_c3d(sample_data_dir() / "static_synthetic.c3d"))
    hip, _ = functional_trial(st, "hip", sta_mm=2, path="hip.c3d")
    knee, _ = functional_trial(st, "knee", range_deg=90, sta_mm=2, path="knee.c3d")
    print(f"four-marker clusters: hip trial {best(lambda: session_calibration([hip], st)):.0f} ms, hip and knee "
          f"{best(lambda: session_calibration([hip, knee], st)):.0f} ms")


if __name__ == "__main__":
    main()
