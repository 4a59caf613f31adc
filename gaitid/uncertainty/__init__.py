"""How sure is each kinetic curve: joint-load uncertainty from the errors a lab actually has.

An error model (:mod:`gaitid.uncertainty.errormodel`, ``models/uncertainty/default.toml``, every
figure with its published source) says how wrong each input may be: joint centres per method,
palpated landmarks, body-segment parameters per table, centre of pressure and force per plate
kind, marker noise. :func:`joint_load_uncertainty` (the pipeline's uncertainty stage,
``process(..., uncertainty=...)``) propagates it through the whole model and solver in one
batch: Monte Carlo, and a first-order (linearised) propagation that splits the variance by
error source. :func:`band_curves` gives the report its bands.
"""

from gaitid.uncertainty.bands import band_curves
from gaitid.uncertainty.errormodel import PLATE_KINDS, SOURCES, ErrorModel, load_error_model
from gaitid.uncertainty.propagate import (
    Uncertainty,
    UncertaintySettings,
    joint_load_uncertainty,
    uncertainty_settings,
    with_uncertainty,
)

__all__ = ["PLATE_KINDS", "SOURCES", "ErrorModel", "Uncertainty", "UncertaintySettings", "band_curves",
           "joint_load_uncertainty", "load_error_model", "uncertainty_settings", "with_uncertainty"]
