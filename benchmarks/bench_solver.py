"""Frames per second of the inverse-dynamics solvers on a foot-shank-thigh chain.

Prints, for 1e3 .. 1e6 frames: the recursive vectorised solver (the fast path, the
default), the batched block solve (seed 000, one numpy.linalg.solve), each with and
without the contributions split, and a per-frame Python loop that builds B and inverts
it as seed 000 does (timed on at most 2000 frames, its per-frame cost then scaled).
Ratios are to the fast path (recursive, contributions on) measured in the same run.

    python benchmarks/bench_solver.py [--max-frames 1000000] [--repeat 3]

Runs on one core: set OMP_NUM_THREADS / OPENBLAS_NUM_THREADS=1 before numpy loads
(done below unless already set).
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

import numpy as np  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

from gaitid.dynamics import Body, Chain, ExternalLoad, SegmentMotion, inverse_dynamics, skew  # noqa: E402


def gait_like_chain(n: int, seed: int = 0):
    """Foot, shank, thigh with adult-sized parameters and random (instantaneous) motion:
    (chain, motion, loads)."""
    rng = np.random.default_rng(seed)
    params = [("foot", 1.2, (0.0011, 0.0053, 0.0049)), ("shank", 3.5, (0.048, 0.0051, 0.047)),
              ("thigh", 9.0, (0.15, 0.032, 0.15))]
    bodies, motion = [], []
    prev = None
    for name, m, diag in params:
        proximal = rng.standard_normal((n, 3)) * 0.3
        bodies.append(Body(name, m, np.diag(diag)))
        motion.append(SegmentMotion(
            Rotation.random(n, random_state=rng).as_matrix(),
            rng.standard_normal((n, 3)) * 0.3, rng.standard_normal((n, 3)) * 5, rng.standard_normal((n, 3)) * 5,
            rng.standard_normal((n, 3)) * 50, proximal,
            prev if prev is not None else np.full((n, 3), np.nan)))
        prev = proximal
    load = ExternalLoad(0, rng.standard_normal((n, 3)) * 300, rng.standard_normal((n, 3)) * 0.3,
                        rng.standard_normal((n, 3)) * 3)
    return Chain(tuple(bodies)), motion, [load]


def per_frame_loop(chain, motion, loads, g=np.array([0.0, 0.0, -9.81])):
    """Seed 000 as printed: per frame, build B and the right-hand side, x = inv(B) @ rhs
    (eqs. (18)-(19), with S(v) of eq. (15))."""
    n, k = motion[0].R.shape[0], len(chain)
    out = np.empty((n, 6 * k))
    for f in range(n):
        B = np.zeros((6 * k, 6 * k))
        rhs = np.zeros(6 * k)
        for i, (body, s) in enumerate(zip(chain, motion)):
            Rt = s.R[f].T
            c = s.com_lab[f]
            r = slice(6 * i, 6 * i + 3)
            rm = slice(6 * i + 3, 6 * i + 6)
            B[r, r] = np.eye(3)
            B[rm, rm] = np.eye(3)
            B[rm, r] = Rt @ skew(s.proximal_lab[f] - c)
            if i > 0:
                B[r, 6 * i - 6:6 * i - 3] = -np.eye(3)
                B[rm, 6 * i - 6:6 * i - 3] = -Rt @ skew(s.distal_lab[f] - c)
                B[rm, 6 * i - 3:6 * i] = -Rt @ motion[i - 1].R[f]
            w = s.omega_seg[f]
            rhs[r] = body.mass * (s.com_acc_lab[f] - g)
            rhs[rm] = body.inertia_seg @ s.alpha_seg[f] + np.cross(w, body.inertia_seg @ w)
            for ld in loads:
                if ld.segment == i:
                    rhs[r] -= ld.force_lab[f]
                    rhs[rm] -= Rt @ (np.cross(ld.point_lab[f] - c, ld.force_lab[f]) + ld.free_moment_lab[f])
        out[f] = np.linalg.inv(B) @ rhs
    return out


def best_time(fn, repeat: int) -> tuple[float, float]:
    """Best wall-clock and best CPU (process) time of ``repeat`` calls, in seconds.

    On a machine shared with other jobs the CPU time of this (single-threaded) process is
    the steadier figure; both are printed.
    """
    wall = cpu = np.inf
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - w0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-frames", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    sizes = [s for s in (1_000, 10_000, 100_000, 1_000_000) if s <= args.max_frames]
    print(f"foot-shank-thigh chain, best of {args.repeat}; us/frame and fps from CPU time of this process "
          "(wall-clock in brackets); ratio = CPU time / CPU time of the fast path (recursive + contributions)")
    print(f"{'frames':>9} {'method':<38} {'us/frame':>9} {'(wall)':>9} {'fps':>12} {'ratio':>7}")
    for n in sizes:
        chain, motion, loads = gait_like_chain(n)
        rows = []
        for label, kw in (("recursive + contributions (default)", dict(method="recursive")),
                          ("recursive, no contributions", dict(method="recursive", contributions=False)),
                          ("block solve + contributions", dict(method="block")),
                          ("block solve, no contributions", dict(method="block", contributions=False))):
            rep = args.repeat if n < 1_000_000 or kw["method"] == "recursive" else 1
            rows.append((label, *best_time(lambda: inverse_dynamics(chain, motion, loads, **kw), rep), n))
        m = min(n, 2000)
        sub = gait_like_chain(m)
        loop = best_time(lambda: per_frame_loop(*sub), 1)
        rows.append((f"per-frame loop, inv (timed on {m})", *loop, m))
        ref = rows[0][2] / rows[0][3]
        for label, wall, cpu, count in rows:
            t = cpu / count
            print(f"{n:>9} {label:<38} {t * 1e6:>9.3f} {wall / count * 1e6:>9.3f} {1 / t:>12,.0f} {t / ref:>7.2f}")
        del chain, motion, loads


if __name__ == "__main__":
    main()
