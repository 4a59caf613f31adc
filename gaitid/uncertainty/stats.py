"""Statistics over the columns of a design: Monte Carlo SD and 95 % interval, first-order SD and
its split by error source.

Any quantity computed for every column (a curve's value per frame, per percent of a cycle, a
peak per cycle) is an array ``Y`` (m, C, k): m items (frames, percents), C columns, k components.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from gaitid.uncertainty.design import Design
from gaitid.uncertainty.errormodel import SOURCES

Z95 = 1.959963984540054  # two-sided 95 % of a normal distribution


@dataclass
class ColumnStats:
    """Per item and component (m, k): ``sd`` and the 95 % interval ``low``/``high`` (Monte Carlo:
    SD and 2.5/97.5 percentiles of the Monte Carlo columns; linear only: the first-order SD and
    nominal +- 1.96 SD), ``sd_linear`` the first-order SD, ``variance`` the first-order variance
    per error source (its sum is ``sd_linear**2``)."""

    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    sd_linear: np.ndarray
    variance: dict[str, np.ndarray]


def column_stats(Y: np.ndarray, design: Design) -> ColumnStats:
    """Statistics of ``Y`` (m, C, k) over the design's columns (see the module docstring).

    First order: the derivative along each parameter is the finite difference of its linear
    column from the nominal one, divided by the step (in SD units), so its variance share is
    its square; marker noise adds the mean square deviation of the noise-only columns from the
    nominal. NaN where the item is NaN (unknown load, missing kinematics)."""
    nominal = Y[:, design.nominal]
    variance = {s: np.zeros_like(nominal) for s in SOURCES}
    if design.linear.stop > design.linear.start:
        J = (Y[:, design.linear] - nominal[:, None]) / design.step
        for s, idx in design.source_index().items():
            if idx:
                variance[s] = np.sum(J[:, idx] ** 2, axis=1)
    if design.noise_only.stop > design.noise_only.start:
        variance["markers"] = np.mean((Y[:, design.noise_only] - nominal[:, None]) ** 2, axis=1)
    sd_linear = np.sqrt(sum(variance.values()))
    if design.mc.stop > design.mc.start + 1:
        mc = np.ascontiguousarray(np.swapaxes(Y[:, design.mc], 1, 2))  # (m, k, S): reductions along the last axis
        sd = np.std(mc, axis=2, ddof=1)
        with warnings.catch_warnings():  # all-NaN items give NaN quietly
            warnings.simplefilter("ignore", RuntimeWarning)
            low, high = np.quantile(mc, [0.025, 0.975], axis=2)
    else:
        sd, low, high = sd_linear, nominal - Z95 * sd_linear, nominal + Z95 * sd_linear
    return ColumnStats(sd, low, high, sd_linear, variance)
