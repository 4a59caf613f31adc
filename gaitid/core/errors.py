"""The exceptions gaitid raises.

Every error a user can cause (a bad file, a model that does not fit the trial,
data that cannot be processed) is a :class:`GaitIDError`, whose message names
the file or the item and says what is wrong. Anything else escaping gaitid is a
bug in gaitid.
"""

from __future__ import annotations

from pathlib import Path


class GaitIDError(Exception):
    """Base class of every error gaitid raises on purpose. ``cli``: the message as the command
    line says it, where a script's way to fix it differs (``--mass KG`` rather than
    ``subject=KG``); :meth:`for_cli` gives it."""

    def __init__(self, message: str, path: str | Path | None = None, *, cli: str | None = None):
        self.path = None if path is None else Path(path)
        self.reason = message
        self.cli_reason = cli
        super().__init__(f"{self.path}: {message}" if path is not None else message)

    def for_cli(self) -> str:
        """The message for a command-line user: naming only the command's options."""
        if getattr(self, "cli_reason", None) is None:
            return str(self)
        return f"{self.path}: {self.cli_reason}" if self.path is not None else self.cli_reason


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
