"""Functional hip centres and knee axes on synthetic calibration trials with exact truth.

    PYTHONPATH=. python benchmarks/bench_functional.py [--seeds 3] [--knee]

For each marker set (Plug-in Gait's two thigh and two shank markers: sphere and circle fits;
with CGM2-style four-marker clusters: SCoRE and SARA), range of motion, marker noise and
soft-tissue artefact (:mod:`gaitid.validation.synthetic.functional_trials`), builds a hip star arc and a
knee flexion trial from the synthetic static, calibrates both sides, and prints the largest hip
centre error (mm), the largest knee axis error (deg), the largest residuals and the time of one
calibration (two 20 s trials at 100 Hz), the largest spreads (the markers' own centres' distance,
mm, and axes' angle, deg: :func:`gaitid.model.centre_fits.centre_spread`) and which fits were warned
or refused. ``--knee``: the knee alone over its ranges (20-90 deg) and noise levels, with a 45-degree
hip trial for Plug-in Gait's thigh. ``--knee-gap``: the knee axis's distance from the knee marker
(KNE, which the synthetic axis runs through) over knee ranges 30-90 deg and artefacts 0-10 mm. The
tables in docs/functional.md come from this script.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gaitid.core.resources import sample_data_dir
from gaitid.io.c3d import read_c3d
from gaitid.model.functional import functional_calibration
from gaitid.validation.synthetic.functional_trials import (
    functional_trial,
    with_clusters,
)

RANGES = (10, 20, 30, 45, 60)
LEVELS = ((0.5, 0.0), (1.0, 2.0), (1.0, 5.0), (1.0, 10.0))  # (noise mm, soft-tissue artefact mm)


def one(static, rng_deg, noise, sta, seed, knee_deg=None, hip_sta=None):
    hip, truth = functional_trial(static, "hip", range_deg=rng_deg, noise_mm=noise, sta_mm=sta if hip_sta is None
                                  else hip_sta, seed=seed, path="hip.c3d")
    knee, _ = functional_trial(static, "knee", range_deg=knee_deg or 2 * rng_deg, noise_mm=noise, sta_mm=sta,
                               seed=seed + 100, path="knee.c3d")
    t0 = time.perf_counter()
    cal = functional_calibration([hip, knee], static=static)
    dt = time.perf_counter() - t0
    hip_err = [np.linalg.norm(f.centre - truth.hip_centres[s]) * 1e3 for (j, s), f in cal.fits.items() if j == "hip"]
    knee_err = [np.degrees(np.arccos(np.clip(f.axis_lab @ truth.knee_axes[s], -1, 1)))
                for (j, s), f in cal.fits.items() if j == "knee"]
    res = {j: max([f.residual_mm for (jj, _), f in cal.fits.items() if jj == j], default=np.nan) for j in ("hip", "knee")}
    spread = {j: max([f.spread for (jj, _), f in cal.fits.items() if jj == j and np.isfinite(f.spread)], default=np.nan)
              for j in ("hip", "knee")}
    refused = [f"{j[0]}{s[0]}" for j in ("hip", "knee") for s in ("Left", "Right") if (j, s) not in cal.fits]
    warned = [f"{j[0]}{s[0]}" for (j, s), f in cal.fits.items() if f.status == "warned"]
    return (max(hip_err, default=np.nan), max(knee_err, default=np.nan), res["hip"], res["knee"], dt, spread["hip"],
            spread["knee"], refused, warned)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--knee", action="store_true")
    ap.add_argument("--knee-gap", action="store_true")
    args = ap.parse_args()
    static = read_c3d(sample_data_dir() / "static_synthetic.c3d")
    if args.knee_gap:
        return knee_gaps(static, args.seeds)
    print("| markers | hip range (deg) | knee range (deg) | noise (mm) | STA (mm) | hip error max (mm) | hip residual (mm) "
          "| hip spread (mm) | knee axis error max (deg) | knee residual (mm) | knee spread (deg) | refused | warned "
          "| s per calibration |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    cases = [(rng_deg, None, noise, sta) for rng_deg in RANGES for noise, sta in LEVELS]
    if args.knee:  # the hip trial: 45 deg, the same noise, no artefact
        cases = [(45, knee, noise, sta) for knee in (20, 30, 40, 60, 90) for noise, sta in ((1.0, 0.0), (2.0, 0.0),
                                                                                            (1.0, 10.0))]
    for label, st in (("PiG (2 per segment)", static), ("clusters (4)", with_clusters(static))):
        for rng_deg, knee_deg, noise, sta in cases:
            rows = [one(st, rng_deg, noise, sta, seed, knee_deg, 0.0 if args.knee else None)
                    for seed in range(args.seeds)]
            he, ke, hr, kr, dt, hs, ks = (np.nanmax([r[i] for r in rows]) if any(np.isfinite(r[i]) for r in rows)
                                          else np.nan for i in range(7))
            refused = sorted({x for r in rows for x in r[7]})
            warned = sorted({x for r in rows for x in r[8]})
            print(f"| {label} | {rng_deg} | {knee_deg or 2 * rng_deg} | {noise:g} | {sta:g} | {he:.1f} | {hr:.1f} | "
                  f"{hs:.1f} | {ke:.2f} | {kr:.1f} | {ks:.2f} | {' '.join(refused) or '-'} | {' '.join(warned) or '-'} | "
                  f"{dt:.2f} |", flush=True)


def knee_gaps(static, seeds: int) -> None:
    """The knee axis's gap to KNE (mm, largest over sides and seeds) and the fits it warns."""
    print("| markers | knee range (deg) | STA (mm) | gap to KNE, largest (mm) | warned for the gap |")
    print("|---|---|---|---|---|")
    for label, st in (("PiG (2 per segment)", static), ("clusters (4)", with_clusters(static))):
        for knee_deg in (30, 60, 90):
            for sta in (0.0, 2.0, 5.0, 10.0):
                gaps, flagged = [], []
                for seed in range(seeds):
                    hip, _ = functional_trial(st, "hip", range_deg=45, noise_mm=1.0, sta_mm=0.0, seed=seed + 10,
                                              path="hip.c3d")
                    knee, _ = functional_trial(st, "knee", range_deg=knee_deg, noise_mm=1.0, sta_mm=sta, seed=seed,
                                               path="knee.c3d")
                    for (j, s), f in functional_calibration([hip, knee], static=st).fits.items():
                        if j == "knee":
                            gaps.append(f.gap_mm)
                            if "functional_max_knee_gap_mm" in f.reason:
                                flagged.append(f"{s[0]}{seed}")
                print(f"| {label} | {knee_deg} | {sta:g} | {max(gaps, default=np.nan):.1f} | "
                      f"{' '.join(flagged) or '-'} |", flush=True)


if __name__ == "__main__":
    main()
