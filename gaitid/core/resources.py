"""Where the installed data folders are.

``models/`` and ``sample_data/`` sit at the top of the repository. A wheel
carries them inside the package as ``gaitid/_data/models`` and
``gaitid/_data/sample_data``; a source checkout or an editable install reads
them from the repository itself.
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent.parent  # the gaitid package


def _find(name: str) -> Path:
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"gaitid data folder '{name}' not found (looked in {_PKG / '_data' / name} and {_PKG.parent / name}); "
        "the installation is incomplete"
    )


def models_dir() -> Path:
    """Folder holding the model definitions and parameter tables (``models/``)."""
    return _find("models")


def sample_data_dir() -> Path:
    """Folder holding the project's own sample trials (``sample_data/``)."""
    return _find("sample_data")
