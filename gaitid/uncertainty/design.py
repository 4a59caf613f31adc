"""Which perturbed copies of a trial are evaluated: the columns of one batched solve.

Every scalar error of the error model that can affect the trial is a :class:`Parameter`
(one axis of a joint-centre offset, of a landmark's misplacement, a segment's mass factor,
one contact's centre-of-pressure offset...). A :class:`Design` lists the perturbed copies
("columns") evaluated together, stacked along the frame axis:

- ``samples`` Monte Carlo columns: every parameter drawn N(0, SD);
- one nominal column (nothing perturbed): the reference of the linearised propagation;
- one column per parameter, moved by ``step`` SD alone: its finite-difference derivative
  (the first-order propagation: variance = sum of squared derivatives x SD^2);
- ``noise_samples`` columns with marker noise alone (noise is a function of time, not a few
  parameters: its first-order variance is that of these columns about the nominal).

Marker noise reaches the Monte Carlo columns additively: Monte Carlo column s gets the output
deviation of noise column s mod K from the nominal (:func:`add_noise`). Noise of 0.5 mm,
filtered, moves the outputs far less than the systematic errors and linearly, so its
interaction with them is of second order; filtering K noise realisations instead of one per
Monte Carlo column is what keeps the batch within its time budget (tests check the additive
Monte Carlo against noise drawn in every column).

Draws come from one random stream per error source (``numpy.random.default_rng([seed, k])``),
so two trials of a session processed with the same seed share the draws of their systematic
errors (the same subject, markers and tables): sample s of every trial is one consistent world.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gaitid.uncertainty.errormodel import SOURCES

LINEAR_STEP = 0.01  # SD units: small enough for a derivative, far above rounding (1e-4 mm on a 10 mm SD)


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
    noise drawn in the column (the noise-only columns); ``mc``, ``linear``, ``noise_only``: slices of the columns; ``nominal``: the
    unperturbed column; ``step``: the linear columns' move, in SD units."""

    parameters: list[Parameter]
    values: np.ndarray
    noise: np.ndarray
    mc: slice
    nominal: int
    linear: slice
    noise_only: slice
    step: float
    seed: int

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

    def source_index(self) -> dict[str, list[int]]:
        """Parameter indices by error source."""
        return {s: [i for i, p in enumerate(self.parameters) if p.source == s] for s in SOURCES}


def make_design(parameters: list[Parameter], samples: int, noise_samples: int, seed: int,
                linear: bool = True, step: float = LINEAR_STEP, noise_per_sample: bool = False) -> Design:
    """The columns for ``parameters``: ``samples`` Monte Carlo draws, the nominal, one column per
    parameter (when ``linear``) and ``noise_samples`` noise-only columns; parameters with a zero
    SD are dropped. ``noise_per_sample``: marker noise drawn in every Monte Carlo column too
    (exact, slower) instead of added from the noise-only columns (:func:`add_noise`)."""
    parameters = [p for p in parameters if p.sd > 0]
    P = len(parameters)
    sd = np.array([p.sd for p in parameters])
    z = np.zeros((samples, P))
    for k, source in enumerate(SOURCES):  # one stream per source: draws independent of the others' count
        cols = [i for i, p in enumerate(parameters) if p.source == source]
        if cols:
            z[:, cols] = np.random.default_rng([seed, k]).standard_normal((samples, len(cols)))
    lin = np.eye(P) * step if linear else np.zeros((0, P))
    zs = np.vstack([z, np.zeros((1, P)), lin, np.zeros((noise_samples, P))])
    noise = np.zeros(zs.shape[0], bool)
    noise[samples + 1 + lin.shape[0]:] = True
    noise[:samples] = noise_per_sample and noise_samples > 0
    a = samples + 1
    b = a + lin.shape[0]
    return Design(parameters, zs * sd, noise, slice(0, samples), samples, slice(a, b), slice(b, b + noise_samples),
                  step, seed)


def add_noise(Y: np.ndarray, design: Design) -> np.ndarray:
    """Outputs ``Y`` (m, C, k) with the marker noise added to the Monte Carlo columns, in place:
    column s gets the deviation of noise column s mod K from the nominal (see the module
    docstring). Returns ``Y``."""
    K = design.noise_only.stop - design.noise_only.start
    S = design.mc.stop - design.mc.start
    if K == 0 or S == 0 or design.noise[design.mc].any():  # no noise, or drawn in the columns themselves
        return Y
    idx = design.noise_only.start + np.arange(S) % K
    Y[:, design.mc] += Y[:, idx] - Y[:, design.nominal][:, None]
    return Y
