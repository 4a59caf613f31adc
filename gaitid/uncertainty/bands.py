"""The report's bands: the 0-100 % mean kinetic curve of each side with its 95 % interval.

:func:`band_curves` takes one Result (or a session's Results) processed with uncertainty and
returns, per side, variable and component, the mean over the kinetic cycles and the band of
that mean. For a session the Monte Carlo columns are pooled sample by sample: with one seed,
sample s of every trial drew the same systematic errors (same subject, landmarks, tables), so
the pooled mean of sample s is one consistent world, and systematic errors do not average out
over trials (they should not: they are the same in every trial).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gaitid.core.errors import DataError
from gaitid.uncertainty.stats import coverage_interval

BAND_COLUMNS = ["side", "variable", "component", "percent", "unit", "mean", "sd", "low95", "high95"]


def band_curves(results) -> pd.DataFrame:
    """Columns ``side, variable, component, percent, unit, mean, sd, low95, high95``: the mean
    over kinetic cycles (nominal) and the SD and 95 % interval of that mean, for every kinetic
    variable (joint forces, moments, powers, ground reaction) and component. ``results``: a
    Result or a list of Results (a session), each processed with ``uncertainty=...``.
    DataError naming the trial when one has no uncertainty."""
    results = list(results) if isinstance(results, (list, tuple)) else [results]
    for r in results:
        if getattr(r, "uncertainty", None) is None:
            raise DataError(f"{r.name}: processed without uncertainty (process(..., uncertainty=True), "
                            "gaitid run --uncertainty)")
    if len(results) == 1:
        return results[0].uncertainty.bands[BAND_COLUMNS].copy()
    return _pooled(results)


def _pooled(results) -> pd.DataFrame:
    seeds = {(r.uncertainty.settings.seed, r.uncertainty.settings.samples) for r in results}
    if len(seeds) != 1:
        raise DataError("session bands: the trials were processed with different uncertainty seeds or sample "
                        "counts; process them with the same UncertaintySettings")
    parts = []
    keys = sorted({k for r in results for k in r.uncertainty.mean_samples})
    for side, variable, component in keys:
        weights, means, samples, unit = [], [], [], ""
        for r in results:
            s = r.uncertainty.mean_samples.get((side, variable, component))
            if s is None:
                continue
            b = r.uncertainty.bands
            sel = b[(b["side"] == side) & (b["variable"] == variable) & (b["component"] == component)]
            w = sum(1 for c in r.cycles if c.side == side and c.kinetic)
            weights.append(w)
            means.append(sel["mean"].to_numpy(float))
            samples.append(s.astype(float))
            unit = sel["unit"].iloc[0]
        w = np.asarray(weights, float)
        mean = _weighted(np.stack(means), w)
        pooled = _weighted(np.stack(samples), w)  # (S, 101)
        low, high = coverage_interval(pooled.T)
        parts.append(pd.DataFrame(dict(side=side, variable=variable, component=component,
                                       percent=np.linspace(0, 100, pooled.shape[1]), unit=unit, mean=mean,
                                       sd=np.std(pooled, axis=0, ddof=1), low95=low, high95=high)))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=BAND_COLUMNS)


def _weighted(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted mean over the first axis (trials) skipping NaN; NaN where every trial is NaN."""
    wb = w.reshape((-1,) + (1,) * (x.ndim - 1)) * np.isfinite(x)
    total = wb.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, np.nansum(x * wb, axis=0) / total, np.nan)
