"""Per-frame body parameters (mass (n,), inertia (n, 3, 3)): the solver's batch of stacked
samples (gaitid.uncertainty stacks S perturbed chains along the frame axis) gives, frame by
frame, what separate solves with each sample's constant parameters give."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from bench_solver import gait_like_chain  # noqa: E402

from gaitid.core.errors import DataError  # noqa: E402
from gaitid.dynamics import Body, Chain, ExternalLoad, SegmentMotion, inverse_dynamics  # noqa: E402


def _stack(parts):
    """Concatenate per-sample motions and loads along the frame axis."""
    motions = [m for _, m, _ in parts]
    motion = [SegmentMotion(*(np.concatenate([getattr(ms[i], f) for ms in motions])
                              for f in ("R", "com_lab", "com_acc_lab", "omega_seg", "alpha_seg", "proximal_lab")),
                            distal_lab=np.concatenate([ms[i].distal_lab for ms in motions]))
              for i in range(3)]
    loads = [ExternalLoad(0, *(np.concatenate([getattr(ld[0], f) for _, _, ld in parts])
                              for f in ("force_lab", "point_lab", "free_moment_lab")))]
    return motion, loads


def _scaled(chain: Chain, k: float) -> Chain:
    return Chain(tuple(Body(b.name, b.mass * k, b.inertia_seg * k ** 2) for b in chain))


@pytest.mark.parametrize("method", ["recursive", "block"])
@pytest.mark.parametrize("frame", ["lab", "distal", "proximal"])
@pytest.mark.parametrize("contributions", [True, False])
def test_per_frame_parameters_equal_separate_solves(method, frame, contributions):
    n, factors = 50, (0.8, 1.0, 1.3)
    base = gait_like_chain(n, seed=3)
    parts = [(_scaled(base[0], k), *gait_like_chain(n, seed=10 + s)[1:]) for s, k in enumerate(factors)]
    motion, loads = _stack(parts)
    stacked = Chain(tuple(Body(b.name, np.repeat([p[0][i].mass for p in parts], n),
                               np.repeat([p[0][i].inertia_seg for p in parts], n, axis=0))
                          for i, b in enumerate(base[0])))
    prox = np.concatenate([p[1][-1].R for p in parts])
    kw = dict(method=method, frame=frame, contributions=contributions, proximal_R=prox)
    got = inverse_dynamics(stacked, motion, loads, **kw)
    for s, (chain, m, ld) in enumerate(parts):
        ref = inverse_dynamics(chain, m, ld, **{**kw, "proximal_R": m[-1].R})
        sl = slice(s * n, (s + 1) * n)
        for j in range(3):
            np.testing.assert_allclose(got.force_lab[j][sl], ref.force_lab[j], rtol=1e-10, atol=1e-9)
            np.testing.assert_allclose(got.moment[j][sl], ref.moment[j], rtol=1e-10, atol=1e-9)
            for part in ref.moment_parts:
                np.testing.assert_allclose(got.moment_parts[part][j][sl], ref.moment_parts[part][j],
                                           rtol=1e-10, atol=1e-9)
                np.testing.assert_allclose(got.force_parts[part][j][sl], ref.force_parts[part][j],
                                           rtol=1e-10, atol=1e-9)


def test_per_frame_masses_are_checked():
    chain, motion, loads = gait_like_chain(20)
    n = 20
    bad = Chain((Body("foot", np.full(n, 1.0), np.repeat(chain[0].inertia_seg[None], n - 1, axis=0)),
                 *chain.bodies[1:]))
    with pytest.raises(DataError, match="inertia_seg"):
        inverse_dynamics(bad, motion, loads)
    neg = Chain((Body("foot", np.r_[np.ones(n - 1), -1.0], np.repeat(chain[0].inertia_seg[None], n, axis=0)),
                 *chain.bodies[1:]))
    with pytest.raises(DataError, match="positive"):
        inverse_dynamics(neg, motion, loads)
