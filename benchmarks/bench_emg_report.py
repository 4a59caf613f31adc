"""What the report's EMG page costs: each report written with and without it (docs/report.md).

Trials with EMG: the sample walk with two synthetic channels and, when ../shared/realdata is there,
HC030A05.c3d (10 channels) and test_small.c3d (14). The same Result is reported as it is and with
``emg=None`` (no EMG page), interleaved ``--repeats`` times so the shared machine's load hits both
alike; prints the best CPU time of each, the page's share and process() for scale.

    python benchmarks/bench_emg_report.py [--repeats 25]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
import time
import warnings
from pathlib import Path

from gaitid.io.c3d import read_c3d
from gaitid.pipeline import process
from gaitid.validation.synthetic.emg_bursts import Burst, with_emg

ROOT = Path(__file__).resolve().parent.parent
REALDATA = ROOT.parent / "shared" / "realdata"


def results():
    walk = with_emg(read_c3d(ROOT / "sample_data" / "walk_synthetic.c3d"),
                    [Burst("Left", "Tib Ant", ((0.0, 12.0), (60.0, 100.0))), Burst("Right", "Gast", ((20.0, 50.0),))])
    yield "sample walk + 2 synthetic EMG channels", process(walk)
    for name, path in (("HC030A05.c3d (10 EMG channels)", "biomechzoo/HC030A05.c3d"),
                       ("test_small.c3d (14 EMG channels)", "python-gaitalytics/test_small.c3d")):
        if (REALDATA / path).exists():
            yield name, process(REALDATA / path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=25)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as tmp:
        for name, r in results():
            without = dataclasses.replace(r, emg=None)
            best = {"without": float("inf"), "with": float("inf"), "process": float("inf")}
            for k in range(args.repeats):
                for key, fn in (("without", lambda: without.report(tmp)), ("with", lambda: r.report(tmp)),
                                ("process", lambda: process(r.trial))):
                    if key == "process" and k >= 5:
                        continue
                    t = time.process_time()
                    fn()
                    best[key] = min(best[key], time.process_time() - t)
            a, b = best["without"], best["with"]
            print(f"{name}: report without the EMG page {1000 * a:.0f} ms, with {1000 * b:.0f} ms "
                  f"(+{100 * (b - a) / a:.1f} %); process() {1000 * best['process']:.0f} ms")


if __name__ == "__main__":
    main()
