"""Which perturbed copies of a trial are evaluated: the columns of one batched solve.

Every scalar error of the error model that can affect the trial is a :class:`Parameter`
(one axis of a joint-centre offset, of a landmark's misplacement, a segment's mass factor,
one contact's centre-of-pressure offset...). A :class:`Design` lists the perturbed copies
("columns") evaluated together, stacked along the frame axis:

- ``samples`` Monte Carlo columns: every parameter drawn N(0, SD);
- one nominal column (nothing perturbed): the reference of the linearised propagation;
- one column per parameter, moved by ``step`` SD alone: its finite-difference derivative
  (the first-order propagation: variance = sum of squared derivatives x SD^2). With many
  Monte Carlo columns (at least REGRESSION_RATIO per parameter) these are left out and the
  first-order coefficients are fitted to the Monte Carlo columns instead (least squares on the
  draws, :func:`first_order`): the same quantity, without its own columns;
- ``noise_samples`` columns with marker noise alone (noise is a function of time, not a few
  parameters: its first-order variance is that of these columns about the nominal).

Marker noise reaches the Monte Carlo columns additively: Monte Carlo column s gets the output
deviation of noise column s mod K from the nominal (:func:`with_noise`). Noise of 0.5 mm,
filtered, moves the outputs far less than the systematic errors and linearly, so its
interaction with them is of second order; filtering K noise realisations instead of one per
Monte Carlo column is what keeps the batch within its time budget (tests check the additive
Monte Carlo against noise drawn in every column).

Draws come from one random stream per error source (``numpy.random.default_rng([seed, k])``, k the
source's fixed number in :data:`gaitid.uncertainty.errormodel.STREAMS`),
so two trials of a session processed with the same seed share the draws of their systematic
errors (the same subject, markers and tables): sample s of every trial is one consistent world.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from gaitid.uncertainty.errormodel import SOURCES, STREAMS

LINEAR_STEP = 0.01  # SD units: small enough for a derivative, far above rounding (1e-4 mm on a 10 mm SD)
REGRESSION_RATIO = 4  # Monte Carlo columns per parameter from which the first order is fitted to them


@dataclass(frozen=True)
class Parameter:
    """One scalar input error. ``source``: one of SOURCES; ``key``: what it moves, e.g.
    ('centre', 'Left', 'hip', 0) (axis 0 = ap), ('landmark', 'Left', 'knee', 'LKNE', 1),
    ('mass', 'thigh'), ('com', 'thigh'), ('gyration', 'thigh'), ('cop', 'Left', 0, 1) (contact 0,
    lab y), ('gain', 'Left', 0); ``sd``: its standard deviation (m, or relative)."""

    source: str
    key: tuple
    sd: float

    @property
    def label(self) -> str:
        return " ".join(str(k) for k in self.key)


@dataclass
class Design:
    """The columns of one batched evaluation (see the module docstring).

    ``values`` (C, P): every parameter's value in every column (SI); ``noise`` (C,): marker
    noise drawn in the column (the noise-only columns); ``mc``, ``linear``, ``noise_only``:
    slices of the columns; ``nominal``: the unperturbed column; ``step``: the linear columns'
    move, in SD units; ``regression``: the first order is fitted to the Monte Carlo columns."""

    parameters: list[Parameter]
    values: np.ndarray
    noise: np.ndarray
    mc: slice
    nominal: int
    linear: slice
    noise_only: slice
    step: float
    seed: int
    regression: bool = False

    @property
    def n_columns(self) -> int:
        return self.values.shape[0]

    def column_values(self, key_prefix: tuple) -> tuple[np.ndarray, list[Parameter]]:
        """(C, k) values of the parameters whose key starts with ``key_prefix``, and those parameters."""
        idx = [i for i, p in enumerate(self.parameters) if p.key[: len(key_prefix)] == key_prefix]
        return self.values[:, idx], [self.parameters[i] for i in idx]

    def value(self, key: tuple) -> np.ndarray:
        """(C,) values of one parameter (zeros when the design has no such parameter)."""
        for i, p in enumerate(self.parameters):
            if p.key == key:
                return self.values[:, i]
        return np.zeros(self.n_columns)

    @functools.cached_property
    def fit(self) -> np.ndarray:
        """(P, S): least-squares coefficients of the parameters (per SD) from Monte Carlo outputs,
        intercept fitted and dropped: b = fit @ y for y (S,)."""
        sd = np.array([p.sd for p in self.parameters])
        z = self.values[self.mc] / sd  # (S, P) draws in SD units
        return np.linalg.pinv(np.column_stack([np.ones(len(z)), z]))[1:]

    def subset(self, columns: slice) -> "Design":
        """The design restricted to some columns (a chunk of the batch): their values and noise
        only (slices and the nominal index refer to the whole design)."""
        return Design(self.parameters, self.values[columns], self.noise[columns], self.mc, self.nominal, self.linear,
                      self.noise_only, self.step, self.seed, self.regression)

    def source_index(self) -> dict[str, list[int]]:
        """Parameter indices by error source."""
        return {s: [i for i, p in enumerate(self.parameters) if p.source == s] for s in SOURCES}


def make_design(parameters: list[Parameter], samples: int, noise_samples: int, seed: int,
                linear: bool = True, step: float = LINEAR_STEP, noise_per_sample: bool = False) -> Design:
    """The columns for ``parameters``: ``samples`` Monte Carlo draws, the nominal, the first order
    (``linear``: one column per parameter, or fitted to the Monte Carlo columns when there are at
    least REGRESSION_RATIO of them per parameter) and ``noise_samples`` noise-only columns;
    parameters with a zero SD are dropped. ``noise_per_sample``: marker noise drawn in every Monte
    Carlo column too (exact, slower) instead of added from the noise-only columns."""
    parameters = [p for p in parameters if p.sd > 0]
    P = len(parameters)
    regression = linear and samples >= REGRESSION_RATIO * max(P, 1)
    linear = linear and not regression
    sd = np.array([p.sd for p in parameters])
    z = np.zeros((samples, P))
    for source in SOURCES:  # one stream per source: draws independent of the others' count
        cols = [i for i, p in enumerate(parameters) if p.source == source]
        if cols:
            z[:, cols] = np.random.default_rng([seed, STREAMS[source]]).standard_normal((samples, len(cols)))
    lin = np.eye(P) * step if linear else np.zeros((0, P))
    zs = np.vstack([z, np.zeros((1, P)), lin, np.zeros((noise_samples, P))])
    noise = np.zeros(zs.shape[0], bool)
    noise[samples + 1 + lin.shape[0]:] = True
    noise[:samples] = noise_per_sample and noise_samples > 0
    a = samples + 1
    b = a + lin.shape[0]
    return Design(parameters, zs * sd, noise, slice(0, samples), samples, slice(a, b), slice(b, b + noise_samples),
                  step, seed, regression)


def with_noise(Y: np.ndarray, design: Design) -> np.ndarray:
    """The Monte Carlo columns (m, S, k) of outputs ``Y`` (m, C, k) with the marker noise: column s
    plus the deviation of noise column s mod K from the nominal (see the module docstring), or
    as they are when noise was drawn in them (or there is none)."""
    mc = Y[:, design.mc]
    K = design.noise_only.stop - design.noise_only.start
    S = design.mc.stop - design.mc.start
    if K == 0 or S == 0 or design.noise[design.mc].any():
        return mc
    idx = design.noise_only.start + np.arange(S) % K
    return mc + (Y[:, idx] - Y[:, design.nominal][:, None])


def first_order(Y: np.ndarray, design: Design) -> np.ndarray:
    """(m, P, k) first-order coefficients of outputs ``Y`` (m, C, k): the change per SD of each
    parameter. From the linear columns (finite differences), or by least squares on the Monte
    Carlo columns without noise (``design.regression``): Y_s = b_0 + sum_p b_p z_sp."""
    nominal = Y[:, design.nominal]
    if not design.regression:
        return (Y[:, design.linear] - nominal[:, None]) / design.step
    mc = np.ascontiguousarray(np.swapaxes(Y[:, design.mc], 1, 2))  # (m, k, S)
    return np.swapaxes(mc @ design.fit.T, 1, 2)  # one matrix product (BLAS)
