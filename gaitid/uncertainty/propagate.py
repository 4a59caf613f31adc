"""The uncertainty stage: every kinetic output with its SD and 95 % interval from the error model.

:func:`joint_load_uncertainty` builds the design (Monte Carlo draws, the nominal, one column
per input error, noise-only columns; :mod:`gaitid.uncertainty.design`), rebuilds the model for
all columns at once (:mod:`gaitid.uncertainty.segments`), perturbs the feet's loads
(:mod:`gaitid.uncertainty.foot_load_errors`), solves each leg ONCE for all columns (per-frame masses and
inertias, :class:`gaitid.dynamics.Body`), names the outputs as the nominal ones
(:func:`gaitid.cycles.outputs.output_curves`) and gathers the statistics (:mod:`gaitid.uncertainty.tables`).
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

import gaitid.uncertainty.tables as tb
from gaitid.core.errors import BudgetError, SettingsError
from gaitid.core.vocabulary import SIDES
from gaitid.cycles.outputs import Outputs, output_curves
from gaitid.dynamics import inverse_dynamics
from gaitid.io.c3d_check import BUDGET_ENV, memory_budget
from gaitid.uncertainty.design import Design, Parameter, make_design
from gaitid.uncertainty.errormodel import NOISE_STREAM, PLATE_KINDS, SOURCES, ErrorModel, load_error_model
from gaitid.uncertainty.foot_load_errors import perturbed_loads
from gaitid.uncertainty.inputs import error_parameters
from gaitid.uncertainty.nominal import NominalRun
from gaitid.uncertainty.points import filtered_noise, model_points
from gaitid.uncertainty.segments import perturbed_kinematics, prepare

KINETIC_SUFFIXES = ("Force", "Moment", "Power")  # joint forces, moments, powers and the ground reaction


@dataclass(frozen=True)
class UncertaintySettings:
    """How the uncertainty is computed. ``samples``: Monte Carlo draws (0: the first-order
    propagation alone, the fast check); ``seed``: the random streams (the same seed gives the
    same draws, also across the trials of a session); ``error_model``: a shipped name or a
    lab's TOML file (:func:`~gaitid.uncertainty.errormodel.load_error_model`); ``plates``: the
    plate kind ('floor', 'floor_uncorrected', 'treadmill' or one the error model adds);
    ``sources``: the error sources included; ``noise_samples``: noise-only columns for the
    first-order marker-noise term and the noise added to the Monte Carlo columns; ``linear``:
    also the first-order propagation (it gives the contribution of each source; off only to save
    time); ``noise_per_sample``: draw marker noise in every Monte Carlo column (exact, slower)
    instead of adding the effect of the noise-only columns (:func:`gaitid.uncertainty.design.with_noise`)."""

    samples: int = 200
    seed: int = 0
    error_model: str | Path | ErrorModel = "default"
    plates: str = "floor"
    sources: tuple[str, ...] = SOURCES
    noise_samples: int = 16
    linear: bool = True
    noise_per_sample: bool = False

    def __post_init__(self) -> None:
        def bad(name, why):
            return SettingsError(f"uncertainty setting {name}={getattr(self, name)!r}: {why}")

        if isinstance(self.samples, bool) or not isinstance(self.samples, (int, np.integer)) or self.samples < 0 \
                or self.samples == 1:
            raise bad("samples", "must be 0 (first-order only) or a number of Monte Carlo draws >= 2")
        if self.samples == 0 and not self.linear:
            raise bad("linear", "samples=0 is the first-order propagation: it cannot be switched off too")
        if not isinstance(self.noise_samples, (int, np.integer)) or self.noise_samples < 0:
            raise bad("noise_samples", "must be a number >= 0")
        if self.noise_per_sample and not self.noise_samples:
            raise bad("noise_per_sample", "needs noise_samples > 0 (they give the first-order noise term)")
        object.__setattr__(self, "sources", tuple(self.sources))
        unknown = set(self.sources) - set(SOURCES)
        if unknown:
            raise bad("sources", f"unknown source(s) {', '.join(sorted(unknown))}; known: {', '.join(SOURCES)}")
        if not isinstance(self.plates, str):
            raise bad("plates", f"must be a plate kind ({', '.join(PLATE_KINDS)})")


def uncertainty_settings(value) -> UncertaintySettings | None:
    """None or False: no uncertainty; True: the defaults; an int: that many Monte Carlo samples;
    a dict: UncertaintySettings fields; an UncertaintySettings as is."""
    if value is None or value is False:
        return None
    if value is True:
        return UncertaintySettings()
    if isinstance(value, UncertaintySettings):
        return value
    if isinstance(value, (int, np.integer)):
        return UncertaintySettings(samples=int(value))
    if isinstance(value, dict):
        try:
            return UncertaintySettings(**value)
        except TypeError as exc:
            raise SettingsError(f"uncertainty={value!r}: {exc}") from None
    raise SettingsError(f"uncertainty must be True, a number of samples or UncertaintySettings, not {value!r}")


@dataclass
class Uncertainty:
    """The uncertainty of one trial's kinetic outputs (joint forces, moments, powers, ground
    reactions). Tables (units in their ``unit`` column, see :mod:`gaitid.uncertainty.tables`):
    ``frames`` (per frame), ``curves`` (per cycle and percent), ``curves_summary`` (mean curve
    over cycles), ``parameters`` / ``parameters_summary`` (the kinetic clinical parameters of
    :mod:`gaitid.cycles.clinical`, each in its phase of the cycle, per cycle / their mean),
    ``contributions`` (per error source, its share of the first-order variance of each
    parameter's mean), ``bands`` (the mean curve over kinetic cycles with its
    95 % band: what the report draws). ``mean_samples``: {(side, variable, component): (S, 101)
    float32} the Monte Carlo columns' mean kinetic-cycle curves, for pooling a session.
    ``parameters_used``: the input errors; ``seconds``: CPU time of the stage."""

    settings: UncertaintySettings
    error_model: ErrorModel
    parameters_used: list[Parameter]
    frames: pd.DataFrame
    curves: pd.DataFrame
    curves_summary: pd.DataFrame
    parameters: pd.DataFrame
    parameters_summary: pd.DataFrame
    contributions: pd.DataFrame
    bands: pd.DataFrame
    mean_samples: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    seconds: float = float("nan")
    columns: int = 0  # perturbed copies of the trial evaluated (Monte Carlo, nominal, first order, noise)
    first_order: str = ""  # how the first order was had: finite differences or fitted to the Monte Carlo

    @property
    def error_model_table(self) -> pd.DataFrame:
        """Every figure of the error model with its source."""
        return pd.DataFrame(self.error_model.table())


# Peak memory of the stage per column per frame (bytes): its outputs for every column (curves, the
# per-frame and per-cycle tables) stay until the statistics are taken. Measured (peak RSS of
# process() with uncertainty minus without, over the columns x frames): 3.1 kB on the 380-frame
# sample walk (110 and 217 columns: 50 and 200 samples), 2.8-3.2 kB on synthetic walkways of 1,900
# and 3,800 frames (128 and 278 columns), 3.2 kB on PiG_Motion3_FF and FunctionalWalk (293 and 438
# frames, 217 columns); the solver's chunk of ROWS_PER_CHUNK rows is in the figure. The estimate
# takes 3.6 kB, 1.1-1.3x these. Re-measure when the stage's tables change.
BYTES_PER_COLUMN_FRAME = 3_600


def check_memory(n_frames: int, design: Design, how: UncertaintySettings) -> int:
    """The stage's estimated peak memory (bytes: BYTES_PER_COLUMN_FRAME x columns x frames), or a
    :class:`~gaitid.core.errors.BudgetError` when it exceeds the memory budget (the reader's:
    ``GAITID_MEMORY_BUDGET``, :func:`gaitid.io.c3d_check.memory_budget`), checked before anything
    is allocated, naming the samples asked, the estimate, the budget and what to do."""
    need = BYTES_PER_COLUMN_FRAME * design.n_columns * n_frames
    budget = memory_budget()
    if need > budget:
        others = 1 + (design.noise_only.stop - design.noise_only.start) + (len(design.parameters) if how.linear else 0)
        fit = budget // (BYTES_PER_COLUMN_FRAME * n_frames) - others  # with every first-order column: it fits
        fix = (f"ask for at most {fit} samples or raise" if fit >= 2 else "raise") + \
            f" the environment variable {BUDGET_ENV}"
        what = (f"{how.samples} Monte Carlo samples ({design.n_columns} columns x {n_frames} frames) would need about "
                f"{need / 2**20:.0f} MiB, over the memory budget of {budget / 2**20:.0f} MiB")
        raise BudgetError(f"the uncertainty with {what}; {fix} (bytes, or e.g. '16G')",
                          cli=f"--uncertainty with {what}; {fix.replace('ask for', 'use --uncertainty N with')} "
                              f"(bytes, or e.g. '16G')")
    return need


ROWS_PER_CHUNK = 1 << 18  # frames x columns evaluated at once: memory bounded, cost linear in trial length


def column_curves(run: NominalRun, design: Design, noise_sd: float, points: tuple | None = None
                  ) -> dict[str, dict[str, np.ndarray]]:
    """{side: {variable: (n, C, k)}}: the kinetic outputs of every column of ``design`` applied to
    the nominal ``run``, in the units and layout of the nominal outputs; ``noise_sd``: the marker
    noise (m) of the noise-only columns, whose effect the statistics add to the Monte Carlo ones
    (:func:`gaitid.uncertainty.design.with_noise`). One solver call per leg for a chunk of columns
    of at most ROWS_PER_CHUNK frames x columns (all of them for a trial of 1300 frames at 200 samples).
    ``points``: :func:`~gaitid.uncertainty.points.model_points` of the run when the caller has them."""
    trial, settings = run.trial, run.settings
    n, C, rate = trial.n_frames, design.n_columns, trial.point_rate
    rng = np.random.default_rng([design.seed, NOISE_STREAM])  # the marker-noise stream
    prep = prepare(run, design, points)
    step = max(1, ROWS_PER_CHUNK // n)
    parts = []
    for a in range(0, C, step):  # chunks of columns, not a loop per sample
        cols = slice(a, min(C, a + step))
        noisy = design.noise[cols]
        noise = filtered_noise(prep.points, noisy, noise_sd, rng, rate, settings) if noise_sd > 0 and noisy.any() else None
        pk = perturbed_kinematics(run, design, cols, prep, noise)
        ext, feet = perturbed_loads(run.loads, design.subset(cols), rate, settings)
        root_R = pk.root.R if pk.root is not None else None
        joints = {side: inverse_dynamics(pk.chains[side], pk.motion[side], [ext[side]],
                                         gravity_lab=(0.0, 0.0, -settings.gravity_m_s2), frame=settings.frame,
                                         convention=settings.convention, proximal_R=root_R, contributions=False)
                  for side in SIDES}
        outs: Outputs = output_curves(pk, joints, feet, run.model, settings, run.subject)
        parts.append({side: {v: np.asarray(a).reshape(n, cols.stop - cols.start, -1)
                             for v, a in outs.curves[side].items() if v.endswith(KINETIC_SUFFIXES)} for side in SIDES})
    return {side: {v: np.concatenate([p[side][v] for p in parts], axis=1) if len(parts) > 1 else parts[0][side][v]
                   for v in parts[0][side]} for side in SIDES}


def joint_load_uncertainty(run: NominalRun, how: UncertaintySettings) -> Uncertainty:
    """The uncertainty stage (see the module docstring): draws the input errors of the error
    model, evaluates the nominal ``run`` for all of them in one batch and returns :class:`Uncertainty`.
    Its peak memory, at most about 3.6 kB per column per frame (:data:`BYTES_PER_COLUMN_FRAME`; 200
    samples are 217-280 columns: about 5 GB for a 60 s trial at 100 Hz), is checked against the memory budget first
    (:func:`check_memory`)."""
    t0 = _time.process_time()
    trial, model, settings, cycles = run.trial, run.model, run.settings, run.cycles
    errors = load_error_model(how.error_model)
    errors.plate(how.plates)  # an unknown plate kind fails here, naming the error model
    points = model_points(trial, model, run.static, settings)  # filtered once, for the parameters and the columns
    params = error_parameters(model, set(points[0]), run.loads, errors, how.plates, settings.bsip, how.sources,
                              run.kinematics.parameters, weight=float(run.subject.mass or 0.0) * settings.gravity_m_s2)
    noise_sd = errors.marker_noise if "markers" in how.sources else 0.0
    design = make_design(params, how.samples, how.noise_samples if noise_sd > 0 else 0, how.seed,
                         linear=how.linear, noise_per_sample=how.noise_per_sample)
    check_memory(trial.n_frames, design, how)  # before the batch is built
    curves = column_curves(run, design, noise_sd, points)
    norm = tb.normalised(curves, trial.time, cycles)
    values = tb.parameter_values(norm, cycles, settings.convention, settings.frame, design.nominal)
    par_summary, contributions = tb.parameter_summary(values, design, run.outputs.units)
    kinetic_means = tb.cycle_means(norm, cycles, kinetic_only=True)
    summary, band = tb.summary_rows([tb.cycle_means(norm, cycles, kinetic_only=False), kinetic_means], design)
    bands = tb.band_rows(band, kinetic_means, design, run.outputs.units)
    mean_samples = tb.monte_carlo_means(kinetic_means, design) if how.samples else {}
    notes = []
    if run.static is None and model.static:
        notes.append("no static trial: the static calibrations (foot offsets) are not recomputed with the "
                     "landmark and centre errors, so the foot frame moves with the ankle centre error")
    out = Uncertainty(
        settings=how, error_model=errors, parameters_used=design.parameters,
        frames=tb.frames_rows(curves, trial.frames, design),
        curves=tb.curves_rows(norm, design),
        curves_summary=summary,
        parameters=tb.parameter_rows(values, design), parameters_summary=par_summary, contributions=contributions,
        bands=bands, mean_samples=mean_samples, notes=notes)
    out.columns = design.n_columns
    out.first_order = ("fitted to the Monte Carlo" if design.regression else
                       "finite differences" if design.linear.stop > design.linear.start else "none")
    out.seconds = _time.process_time() - t0
    return out


def with_uncertainty(table: pd.DataFrame | None, extra: pd.DataFrame, keys: list[str]) -> pd.DataFrame | None:
    """A result table with the uncertainty columns of ``extra`` joined on ``keys`` (NaN for rows
    without: angles, moment contributions, non-kinetic cycles' parameters)."""
    if table is None:
        return None
    table = table.drop(columns=[c for c in tb.COLUMNS if c in table.columns])  # joined once (dataclasses.replace
    if extra is None or extra.empty:  # of a Result runs its __post_init__ again on tables that have them)
        return table.assign(**{c: np.nan for c in tb.COLUMNS})
    merged = table.merge(extra[keys + tb.COLUMNS], on=keys, how="left", sort=False)
    merged.attrs = dict(table.attrs)
    return merged


