"""gaitid: 3D joint kinetics from motion-capture gait trials.

The public API is small and imported lazily (so ``gaitid --help`` stays fast):

- :func:`read_c3d`, :func:`write_c3d` -- C3D trials in and out (:mod:`gaitid.io.c3d`)
- :func:`read_opensim_trial` -- an OpenSim ``.trc`` (+ GRF ``.mot``) as a Trial
- :func:`process` -> :class:`Result`, :class:`Settings` -- the whole job for one trial
- :func:`run_batch` -- folders and archives (worker processes or a Dask cluster)
- :class:`Trial` -- one trial in SI units, Z-up lab frame (:mod:`gaitid.core.trial`)
- :func:`inverse_dynamics` -- the block-matrix Newton-Euler solver (:mod:`gaitid.dynamics`)
- :class:`GaitIDError` and subclasses -- every error gaitid raises on purpose (:mod:`gaitid.core.errors`)
"""

from __future__ import annotations

import importlib

from gaitid.core.errors import (  # noqa: F401  (re-exported)
    DataError,
    FileFormatError,
    GaitIDError,
    ModelError,
    SettingsError,
    UnsupportedError,
)

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY = {
    "read_c3d": "gaitid.io.c3d",
    "read_opensim_trial": "gaitid.io.opensim",
    "run_batch": "gaitid.batch",
    "write_c3d": "gaitid.io.c3d",
    "Trial": "gaitid.core.trial",
    "inverse_dynamics": "gaitid.dynamics",
    "process": "gaitid.pipeline",
    "Result": "gaitid.pipeline",
    "Settings": "gaitid.core.settings",
}

__all__ = sorted(
    [*_LAZY, "GaitIDError", "FileFormatError", "UnsupportedError", "ModelError", "DataError", "SettingsError"]
)


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gaitid' has no attribute {name!r}")
