"""The exceptions gaitid raises.

Every error a user can cause (a bad file, a model that does not fit the trial,
data that cannot be processed) is a :class:`GaitIDError`, whose message names
the file or the item and says what is wrong. Anything else escaping gaitid is a
bug in gaitid.
"""

from __future__ import annotations

from pathlib import Path


class GaitIDError(Exception):
    """Base class of every error gaitid raises on purpose."""

    def __init__(self, message: str, path: str | Path | None = None):
        self.path = None if path is None else Path(path)
        self.reason = message
        super().__init__(f"{self.path}: {message}" if path is not None else message)


class FileFormatError(GaitIDError):
    """A file is missing, unreadable, truncated, corrupted or not the format expected."""


class UnsupportedError(GaitIDError):
    """The file is valid but uses a feature gaitid does not support (for example a force-plate type)."""


class ModelError(GaitIDError):
    """A model definition or parameter table is invalid, or a trial lacks what the model needs."""


class DataError(GaitIDError):
    """The data cannot be processed as asked (no markers, NaN-only channels, no valid contact...)."""


class OutputError(GaitIDError):
    """An output cannot be written: it would replace an input, the folder is not writable, or the
    file written is incomplete (full disk)."""


class SettingsError(GaitIDError):
    """A setting has an invalid value."""


class BudgetError(GaitIDError):
    """A trial would need more memory, or takes more time, than the budget it runs with (batch:
    ``--memory-limit``, ``--time-limit``, a Dask worker's memory limit)."""
