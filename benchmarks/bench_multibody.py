"""Frames per second of the multibody oracles (gaitid.dynamics.multibody), all frames at once.

Prints, for 1e3 .. 1e5 frames: the twist-wrench RNEA (seed 003 9.53-9.57) on a 3-joint
chain and on a 15-joint leg-like chain (3 prismatic + 12 revolute, as the synthetic trial
uses), the closed-form mass matrix (9.82) on the 15-joint chain, and the planar
tau = M q'' + C + G + E on a 3-link chain.

    python benchmarks/bench_multibody.py [--max-frames 100000] [--repeat 3]

Runs on one core (OMP/OPENBLAS/MKL_NUM_THREADS=1 unless already set).
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

from gaitid.dynamics.multibody import planar, screw  # noqa: E402


def chain(n_prismatic: int, n_revolute: int, seed: int = 0) -> screw.ScrewChain:
    rng = np.random.default_rng(seed)
    n = n_prismatic + n_revolute
    eye = np.eye(3)
    S = np.zeros((n, 6))
    for i in range(n):
        k = i % 3
        if i < n_prismatic:
            S[i, 3 + k] = 1.0
        else:
            q = np.array([0.0, 0.0, -0.4 * ((i - n_prismatic) // 3)])
            S[i, :3] = eye[k]
            S[i, 3:] = -np.cross(eye[k], q)
    M_list = np.broadcast_to(np.eye(4), (n + 1, 4, 4)).copy()
    M_list[:, 2, 3] = -0.4 / 3
    G = np.stack([screw.spatial_inertia(rng.uniform(1, 8), np.diag(rng.uniform(0.01, 0.2, 3))) for _ in range(n)])
    return screw.ScrewChain(M_list, G, S)


def best_time(fun, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fun()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-frames", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    small, leg = chain(0, 3), chain(3, 12)
    arm = planar.PlanarChain([2.0, 1.5, 0.5], [0.45, 0.4, 0.2], [0.2, 0.18, 0.1], [0.04, 0.02, 0.004])
    print(f"{'frames':>8} {'case':<34} {'seconds':>9} {'frames/s':>12}")
    n = 1000
    while n <= args.max_frames:
        cases = []
        for name, sc in (("rnea, 3 joints", small), ("rnea, 15 joints (leg)", leg)):
            th, thd, thdd = (rng.normal(size=(n, sc.n_joints)) for _ in range(3))
            cases.append((name, lambda sc=sc, th=th, thd=thd, thdd=thdd: screw.rnea(sc, th, thd, thdd)))
        th = rng.normal(size=(n, 15))
        cases.append(("mass_matrix (9.82), 15 joints", lambda th=th: screw.mass_matrix(leg, th)))
        q, qd, qdd = (rng.normal(size=(n, 3)) for _ in range(3))
        cases.append(("planar inverse_dynamics, 3 links", lambda: planar.inverse_dynamics(arm, q, qd, qdd)))
        for name, fun in cases:
            s = best_time(fun, args.repeat)
            print(f"{n:>8} {name:<34} {s:>9.4f} {n / s:>12.0f}")
        n *= 10


if __name__ == "__main__":
    main()
