"""Generation time and peak memory of the long synthetic trials.

Each trial is written in a fresh Python process (so its peak resident memory is its own) by
gaitid.validation.synthetic's block-wise writer: the overground walkway at 1x, 10x, 100x and 1000x the
sample walk's 380 frames (100 Hz markers, 1 kHz plates; plate pairs every 4 strides, at most 4
pairs) and a one-hour split-belt treadmill trial (360,000 frames, 2 x 3.6 M plate samples).
Printed per trial: frames, plates, seconds generating / writing the C3D (ezc3d) / writing the
truth CSV, microseconds per frame, that figure as a ratio to the 1x walk (the machine is
shared: compare ratios within one run), peak RSS and the C3D size.

    python benchmarks/bench_synthetic.py            # without truth CSVs
    python benchmarks/bench_synthetic.py --truth    # with them (large: about 1.4 kB per frame)
    python benchmarks/bench_synthetic.py --quick    # 1x, 10x, 100x only
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from gaitid.validation.synthetic.write import write_scenario
from gaitid.validation.synthetic import walkway_scenario, WalkwayParams, treadmill_scenario, TreadmillParams
kind, size, out, truth = sys.argv[1], float(sys.argv[2]), Path(sys.argv[3]), sys.argv[4] == "1"
t0 = time.perf_counter()
if kind == "walkway":
    scn = walkway_scenario(WalkwayParams(n_frames=int(size)))
else:
    scn = treadmill_scenario(TreadmillParams(duration_s=size))
setup = time.perf_counter() - t0
timings = {}
paths = write_scenario(scn, out, truth=truth, timings=timings)
total = time.perf_counter() - t0
print(json.dumps(dict(frames=scn.params.n_frames, plates=len(scn.plates), setup_s=setup, total_s=total,
                      peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      c3d_mb=paths[0].stat().st_size / 1e6,
                      truth_mb=(paths[1].stat().st_size / 1e6 if truth else 0.0), **timings)))
"""


def run(kind: str, size: float, truth: bool, tmp: Path) -> dict:
    out = tmp / f"{kind}_{int(size)}.c3d"
    res = subprocess.run([sys.executable, "-c", CHILD, kind, str(size), str(out), "1" if truth else "0"],
                         capture_output=True, text=True, check=True)
    for f in tmp.iterdir():
        f.unlink()
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    truth = "--truth" in sys.argv
    cases = [("walkway", 380 * m, f"walk {m}x") for m in (1, 10, 100, 1000)]
    cases.append(("treadmill", 3600.0, "treadmill 1 h"))
    if "--quick" in sys.argv:
        cases = cases[:3]
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for kind, size, name in cases:
            r = run(kind, size, truth, Path(d))
            rows.append((name, r))
            print(f"{name}: {json.dumps(r)}", file=sys.stderr)
    base = rows[0][1]["total_s"] / rows[0][1]["frames"]
    print(f"{'trial':15s} {'frames':>8s} {'plates':>6s} {'total s':>8s} {'generate':>9s} {'c3d':>7s} {'truth':>7s} "
          f"{'us/frame':>9s} {'ratio':>6s} {'peak MB':>8s} {'C3D MB':>7s}")
    for name, r in rows:
        per = r["total_s"] / r["frames"]
        print(f"{name:15s} {r['frames']:8d} {r['plates']:6d} {r['total_s']:8.1f} {r['generate_s']:9.1f} "
              f"{r['c3d_write_s']:7.1f} {r['truth_csv_s']:7.1f} {per * 1e6:9.0f} {per / base:6.2f} "
              f"{r['peak_mb']:8.0f} {r['c3d_mb']:7.1f}")


if __name__ == "__main__":
    main()
