"""Atomic output files: write to a temporary file in the target folder, then rename.

A reader of the target path sees either the old complete file or the new
complete file, never a partial one, and an interrupted run leaves no debris
with the final name. Refuses to replace any of the inputs being processed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Iterator

from gaitid.errors import GaitIDError


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextlib.contextmanager
def atomic_path(target: str | Path, *, inputs: tuple[str | Path, ...] = ()) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success rename it onto ``target``.

    The temporary file keeps the target's extension (writers such as ezc3d and
    pandas' Excel writer choose their format from it).
    ``inputs``: files the caller read; writing onto one of them raises GaitIDError.
    """
    target = Path(target)
    for src in inputs:
        if Path(src).exists() and target.exists() and os.path.samefile(src, target):
            raise GaitIDError("refusing to overwrite an input file", target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=f".tmp{target.suffix}", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()
