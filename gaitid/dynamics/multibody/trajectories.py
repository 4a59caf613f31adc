"""Minimum-jerk trajectories (Flash & Hogan 1985), as used by seed 001.

x(t) = x0 + (xf - x0) (10 s^3 - 15 s^4 + 6 s^5), s = t / T: the path from rest to rest that
minimises the integral of the squared jerk. Velocity, acceleration and jerk are analytic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.core.errors import DataError


@dataclass
class MinimumJerk:
    """A sampled minimum-jerk trajectory.

    time: (n,) s. position: (n, d) in the units of the end points (m for seed 001's
    finger-tip path); velocity (n, d) per s, acceleration (n, d) per s^2, jerk (n, d) per s^3.
    """

    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray
    jerk: np.ndarray


def minimum_jerk(start, end, duration: float, n_samples: int | None = None, rate: float = 100.0) -> MinimumJerk:
    """Minimum-jerk path from ``start`` to ``end`` (scalars or (d,) points) in ``duration`` s.

    Sampled at ``n_samples`` equally spaced times including both ends, or else at ``rate`` Hz
    (round(duration * rate) + 1 samples; seed 001's ``minjerk`` samples at 100 Hz by default).
    """
    x0 = np.atleast_1d(np.asarray(start, float))
    xf = np.atleast_1d(np.asarray(end, float))
    if x0.shape != xf.shape or x0.ndim != 1:
        raise DataError(f"minimum_jerk: start and end must be points of the same size, got {x0.shape} and {xf.shape}")
    if not (np.isfinite(duration) and duration > 0):
        raise DataError(f"minimum_jerk: duration must be a positive number of seconds, got {duration!r}")
    if n_samples is None:
        if not (np.isfinite(rate) and rate > 0):
            raise DataError(f"minimum_jerk: rate must be positive (Hz), got {rate!r}")
        n_samples = int(round(duration * rate)) + 1
    if n_samples < 2:
        raise DataError(f"minimum_jerk: need at least 2 samples, got {n_samples}")
    t = np.linspace(0.0, duration, n_samples)
    s = (t / duration)[:, None]
    D = xf - x0
    T = duration
    return MinimumJerk(
        time=t,
        position=x0 + D * (10 * s**3 - 15 * s**4 + 6 * s**5),
        velocity=D / T * (30 * s**2 - 60 * s**3 + 30 * s**4),
        acceleration=D / T**2 * (60 * s - 180 * s**2 + 120 * s**3),
        jerk=D / T**3 * (60 - 360 * s + 360 * s**2),
    )
