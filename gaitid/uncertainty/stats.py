"""Statistics over the columns of a design: Monte Carlo SD and 95 % interval, first-order SD and
its split by error source.

Any quantity computed for every column (a curve's value per frame, per percent of a cycle, a
peak per cycle) is an array ``Y`` (m, C, k): m items (frames, percents), C columns, k components.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.uncertainty.design import Design
from gaitid.uncertainty.errormodel import SOURCES

Z95 = 1.959963984540054  # two-sided 95 % of a normal distribution


@dataclass
class ColumnStats:
    """Per item and component (m, k): ``sd`` and the 95 % interval ``low``/``high`` (Monte Carlo:
    SD and the probabilistically symmetric 95 % coverage interval of the Monte Carlo columns,
    :func:`coverage_interval`; linear only: the first-order SD and nominal +- 1.96 SD), ``sd_linear`` the first-order SD, ``variance`` the first-order variance
    per error source (its sum is ``sd_linear**2``)."""

    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sd_linear: np.ndarray
    variance: dict[str, np.ndarray]


def column_stats(Y: np.ndarray, design: Design) -> ColumnStats:
    """Statistics of ``Y`` (m, C, k) over the design's columns (see the module docstring).

    First order: the change per SD along each parameter (finite differences of the linear
    columns, or fitted to the Monte Carlo columns: :func:`gaitid.uncertainty.design.first_order`),
    so its variance share is its square; marker noise adds the mean square deviation of the
    noise-only columns from the nominal. The Monte Carlo columns get the marker noise added
    (:func:`gaitid.uncertainty.design.with_noise`). ``Y`` holds outputs without added noise.
    NaN where the item is NaN (unknown load, missing kinematics)."""
    m, C, k = Y.shape
    flat = np.moveaxis(Y, 1, 0).reshape(C, m * k)
    known = np.isfinite(flat[design.nominal])  # unknown loads stay NaN: no statistics to compute there
    T = np.ascontiguousarray(flat[:, known])  # columns first: row slices are contiguous
    nominal = T[design.nominal]
    variance = {s: np.zeros_like(nominal) for s in SOURCES}
    if design.linear.stop > design.linear.start or design.regression:
        J = design.fit @ T[design.mc] if design.regression else (T[design.linear] - nominal) / design.step
        for s, idx in design.source_index().items():
            if idx:
                variance[s] = np.sum(J[idx] ** 2, axis=0)
    K = design.noise_only.stop - design.noise_only.start
    if K:
        variance["markers"] = np.mean((T[design.noise_only] - nominal) ** 2, axis=0)
    sd_linear = np.sqrt(sum(variance.values()))
    S = design.mc.stop - design.mc.start
    if S > 1:
        mc = T[design.mc]
        if K and not design.noise[design.mc].any():  # the noise of noise column s mod K (see with_noise)
            mc = mc + (T[design.noise_only.start + np.arange(S) % K] - nominal)
        sd = np.std(mc, axis=0, ddof=1)
        low, high = coverage_interval(np.ascontiguousarray(mc.T))
    else:
        sd, low, high = sd_linear, nominal - Z95 * sd_linear, nominal + Z95 * sd_linear

    def full(v):
        out = np.full(m * k, np.nan)
        out[known] = v
        return out.reshape(m, k)

    sd, low, high, sd_linear = (full(v) for v in (sd, low, high, sd_linear))
    variance = {s: full(v) for s, v in variance.items()}
    return ColumnStats(sd, low, high, sd_linear, variance)


def coverage_interval(samples: np.ndarray, p: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The probabilistically symmetric coverage interval of Monte Carlo samples (last axis, S
    of them), as JCGM 101:2008 (GUM Supplement 1, 7.7) takes it: with q = round(p S) and
    r = (S - q) / 2 (rounded up), the order statistics y_(r) and y_(r+q) (1-based). Two order
    statistics (one partition) instead of np.quantile's four. NaN where an item has a NaN sample."""
    S = samples.shape[-1]
    q = int(round(p * S))
    r = max(1, (S - q + 1) // 2)
    lo, hi = r - 1, min(r + q - 1, S - 1)
    part = np.partition(samples, (lo, hi), axis=-1)
    bad = np.isnan(samples).any(axis=-1)
    low, high = part[..., lo], part[..., hi]
    low[bad] = np.nan
    high[bad] = np.nan
    return low, high
