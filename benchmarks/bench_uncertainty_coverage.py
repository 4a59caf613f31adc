"""Coverage of the joint-load uncertainty on the synthetic trial with exact truth.

Errors drawn from the error model are injected into the trial's inputs (markers, landmarks and
widths in both trials, hip centres, segment parameters, plate channels:
gaitid.validation.synthetic.injected), the trial is processed with ``--samples`` Monte Carlo draws, and the
fraction of stance frames on a plate where the 95 % interval covers the true joint moment is
printed per side, joint and plane, for unfiltered markers (the propagation alone) and for the
given cutoffs (the filter's own bias is not an input error). Frames of one replication share its
systematic errors: the figures' spread is that of about as many draws as replications.
The expected coverage of a Monte Carlo interval from S draws is q / (S + 1) (94.5 % at 200).

    python benchmarks/bench_uncertainty_coverage.py [--replications 100] [--samples 200] [--cutoffs 12 6]
"""

from __future__ import annotations

import sys as _sys
from pathlib import Path as _Path

_sys.path.insert(0, str(_Path(__file__).resolve().parent.parent))  # run from a checkout too

import argparse
import os
import tempfile
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from gaitid.validation.synthetic.injected import coverage_run  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replications", type=int, default=100)
    ap.add_argument("--samples", type=int, default=200)
    ap.add_argument("--cutoffs", type=float, nargs="*", default=[12.0, 6.0])
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for cutoff in [None, *args.cutoffs]:
            t0 = time.time()
            tab = coverage_run(args.replications, args.samples, cutoff, _Path(tmp))
            label = "unfiltered markers and plates" if cutoff is None else f"{cutoff:g} Hz markers and plates"
            print(f"\ncoverage of the true joint moments by the 95 % intervals, {label} "
                  f"({args.replications} replications x {args.samples} samples, {time.time() - t0:.0f} s)")
            pivot = tab.pivot_table(index=["side", "joint"], columns="plane", values="coverage", sort=False)
            print(pivot[["sagittal", "frontal", "transverse"]].round(3).to_string())
            per_joint = tab.groupby("joint", sort=False)[["covered", "frames"]].sum()
            print("per joint:", ", ".join(f"{j} {r.covered / r.frames:.3f}" for j, r in per_joint.iterrows()),
                  f"| overall {tab['covered'].sum() / tab['frames'].sum():.3f}")


if __name__ == "__main__":
    main()
