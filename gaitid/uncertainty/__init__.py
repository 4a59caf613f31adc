"""How sure is each kinetic curve: joint-load uncertainty from the errors a lab actually has.

An error model (:mod:`gaitid.uncertainty.errormodel`, ``models/uncertainty/default.toml``, every
figure with its published source) says how wrong each input may be: joint centres per method,
palpated landmarks, body-segment parameters per table, centre of pressure and force per plate
kind, marker noise. :func:`joint_load_uncertainty` (the pipeline's uncertainty stage,
``process(..., uncertainty=...)``) propagates it through the whole model and solver in one
batch, from the :class:`~gaitid.uncertainty.nominal.NominalRun` the pipeline hands it: Monte
Carlo, and a first-order (linearised) propagation that splits the variance by error source.
:func:`band_curves` gives the report its bands.

The names below are imported on first use (as :mod:`gaitid`'s own): every run imports the
record :mod:`gaitid.uncertainty.nominal`, the stage's modules load only when a run asks for it.
"""

from __future__ import annotations

import importlib

_LAZY = {  # public name -> module that defines it
    "band_curves": "gaitid.uncertainty.bands",
    "PLATE_KINDS": "gaitid.uncertainty.errormodel",
    "SOURCES": "gaitid.uncertainty.errormodel",
    "ErrorModel": "gaitid.uncertainty.errormodel",
    "load_error_model": "gaitid.uncertainty.errormodel",
    "NominalRun": "gaitid.uncertainty.nominal",
    "Uncertainty": "gaitid.uncertainty.propagate",
    "UncertaintySettings": "gaitid.uncertainty.propagate",
    "joint_load_uncertainty": "gaitid.uncertainty.propagate",
    "uncertainty_settings": "gaitid.uncertainty.propagate",
    "with_uncertainty": "gaitid.uncertainty.propagate",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gaitid.uncertainty' has no attribute {name!r}")
