from pathlib import Path

import pytest

from gaitid.core.errors import GaitIDError
from gaitid.io.atomic import atomic_path


def test_atomic_write_replaces_only_on_success(tmp_path: Path):
    target = tmp_path / "out.csv"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("interrupted")
    assert target.read_text() == "old"
    assert list(tmp_path.iterdir()) == [target]  # no temporary debris
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new"


def test_atomic_write_refuses_to_overwrite_input(tmp_path: Path):
    src = tmp_path / "trial.c3d"
    src.write_bytes(b"data")
    with pytest.raises(GaitIDError, match="input"):
        with atomic_path(src, inputs=(src,)) as tmp:
            tmp.write_bytes(b"x")
    assert src.read_bytes() == b"data"


def test_atomic_output_has_ordinary_permissions(tmp_path: Path):
    import os
    import stat

    target = tmp_path / "out.csv"
    with atomic_path(target) as tmp:
        tmp.write_text("x")
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~mask
