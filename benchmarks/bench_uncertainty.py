"""Extra time per trial of the joint-load uncertainty at 50, 200 and 1000 samples.

For each trial, best of ``--repeat`` CPU times (this process, one core) of ``process()``
without uncertainty and with ``uncertainty=S``, measured alternately in one run (the machine
is shared and noisy): prints the extra seconds, the ratio to the nominal processing, the
stage's own time and its columns (Monte Carlo + nominal + one per input error + noise-only),
and the first-order-only propagation (``samples=0``, the fast check). Target: at most 1 s
extra per trial at 200 samples.

    python benchmarks/bench_uncertainty.py [--samples 50 200 1000] [--repeat 3]

Trials: the synthetic sample (with its static trial) and the real trials of
../shared/realdata that have a static trial or Plug-in Gait kinetics (skipped when absent).
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent))  # run from a checkout too

import argparse
import os
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from gaitid.core.resources import sample_data_dir  # noqa: E402
from gaitid.pipeline import process  # noqa: E402
from gaitid.uncertainty import UncertaintySettings  # noqa: E402

REAL = _Path(__file__).resolve().parent.parent.parent / "shared" / "realdata"
TRIALS = [
    (sample_data_dir() / "walk_synthetic.c3d", sample_data_dir() / "static_synthetic.c3d"),
    (REAL / "btkdata" / "PiG_Motion3_FF.c3d", REAL / "btkdata" / "PiG_Calibration3_FF.c3d"),
    (REAL / "c3d-parser" / "MH0222_BP06.c3d", None),
    (REAL / "biomechzoo" / "HC030A05.c3d", None),
]


def cpu(fn) -> tuple[float, object]:
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, nargs="+", default=[50, 200, 1000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print("CPU seconds of this process, best of", args.repeat, "(one core); extra = with - without uncertainty")
    print(f"{'trial':<22} {'frames':>6} {'samples':>8} {'columns':>8} {'nominal':>8} {'with':>8} {'extra':>7} "
          f"{'ratio':>6} {'stage':>7}")
    for walk, static in TRIALS:
        if not walk.exists():
            print(f"{walk.name:<22} skipped: {walk} is absent")
            continue
        kw = dict(static=static) if static is not None and static.exists() else {}
        process(walk, **kw, uncertainty=UncertaintySettings(samples=10))  # warm caches (tables, imports)
        configs = [UncertaintySettings(samples=s) for s in args.samples] + [UncertaintySettings(samples=0)]
        best = {i: (float("inf"), None) for i in range(-1, len(configs))}
        for _ in range(args.repeat):  # alternate, so load changes hit every configuration alike
            for i in range(-1, len(configs)):
                t, r = cpu(lambda: process(walk, **kw, uncertainty=configs[i] if i >= 0 else None))
                if t < best[i][0]:
                    best[i] = (t, r)
        t0 = best[-1][0]
        for i, how in enumerate(configs):
            t, r = best[i]
            u = r.uncertainty
            cols = u.columns
            label = f"{how.samples}" if how.samples else "linear"
            print(f"{walk.name:<22} {r.trial.n_frames:>6} {label:>8} {cols:>8} {t0:>8.3f} {t:>8.3f} {t - t0:>7.3f} "
                  f"{t / t0:>6.1f} {u.seconds:>7.3f}")


if __name__ == "__main__":
    main()
