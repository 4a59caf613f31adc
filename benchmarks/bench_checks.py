"""What the data checks cost, as a share of process(), measured in one run (docs/checks.md).

    python benchmarks/bench_checks.py [--rounds 7]

For the synthetic sample walk and the clean real trials of ../shared/realdata, each round times
process() once and then each check on that Result (CPU time, best of 3): the quality stage
(gaitid.pipeline.quality: plate geometry, plate units, COP under the foot, body mass, markers,
dynamic consistency), the body mass against the plates (gaitid.subject.bodymass.check_mass, run in
the subject stage) and the reader's marker-extent check. Prints each trial's median over the rounds
of the checks' sum over process() (which includes them), and each check's time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import gaitid
from gaitid.core.resources import sample_data_dir
from gaitid.io.marker_units import marker_extent
from gaitid.model.markerset import load_model
from gaitid.pipeline.quality import quality_checks
from gaitid.subject.bodymass import check_mass

REAL = Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
TRIALS = {
    "sample walk": (sample_data_dir() / "walk_synthetic.c3d", {}),
    "HC030A05": (REAL / "biomechzoo/HC030A05.c3d", {}),
    "MH0222_BP06": (REAL / "c3d-parser/MH0222_BP06.c3d", {}),
    "test_small": (REAL / "python-gaitalytics/test_small.c3d", {}),
    "walking2 (1249 frames)": (REAL / "opensim-core/walking2.c3d", {"model": "isb", "subject": 70.0}),
}


def cpu(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args(argv)
    print("CPU ms, median of the rounds; share = the checks' sum / process() (which includes them)")
    print(f"{'trial':24s} {'process':>8s} {'quality':>8s} {'mass':>6s} {'extent':>7s} {'share':>7s}")
    for name, (path, options) in TRIALS.items():
        if not path.is_file():
            print(f"{name:24s} skipped: {path} absent")
            continue
        rows = []
        for _ in range(args.rounds):
            p = cpu(lambda: gaitid.process(path, **options))
            r = gaitid.process(path, **options)
            model = load_model(r.settings.model)
            q = cpu(lambda: quality_checks(r.trial, model, r.markers, r.subject, r.kinematics, r.foot_contacts,
                                           r.loads, r.settings))
            m = cpu(lambda: check_mass(r.trial, r.subject.subject.mass, "bench", contacts=r.foot_contacts,
                                       markers=r.markers))
            e = cpu(lambda: marker_extent(r.trial.markers))
            rows.append((p, q, m, e, (q + m + e) / p))
        p, q, m, e, share = (statistics.median(col) for col in zip(*rows))
        print(f"{name:24s} {1e3 * p:8.1f} {1e3 * q:8.2f} {1e3 * m:6.2f} {1e3 * e:7.2f} {100 * share:6.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
