"""A file changed while gaitid reads it (an acquisition or a copy still writing it) is refused,
not read as a mix of two versions; a clean file is never refused."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

import gaitid.io.c3d as c3d_module
from gaitid.core.errors import FileFormatError
from gaitid.core.resources import sample_data_dir
from gaitid.io.c3d import read_c3d
from gaitid.io.mot import read_storage, write_mot
from gaitid.io.trc import read_trc, write_trc

CHANGED = "changed while it was read"


def _grow(path: Path) -> None:  # a block more (C3D), blank lines (text): still a valid file once complete
    with open(path, "ab") as fh:
        fh.write(b"\0" * 512 if path.suffix == ".c3d" else b"\n" * 4)


def _touch(path: Path) -> None:  # same size and bytes, a new modification time (1 s later)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _replace(path: Path) -> None:  # a new file of the same size and time under the name
    st = path.stat()
    tmp = path.with_name("new" + path.suffix)
    tmp.write_bytes(path.read_bytes())
    os.replace(tmp, path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


MUTATIONS = {"grown": (_grow, "bytes, then"), "touched": (_touch, "its time went from"),
             "replaced": (_replace, "replaced by another file")}


def _changing_once(monkeypatch, owner, name, change, when=lambda *a: True):
    """``owner.name`` wrapped: the first call that ``when`` accepts changes the file (its first
    argument) and then reads it as it now is (no timing: the change is done when the read is half way)."""
    original = getattr(owner, name)
    done = []

    def wrapped(*args, **kwargs):
        if not done and when(*args):
            done.append(args[0])
            change(Path(args[0]))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, wrapped)
    return done


@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_c3d_changed_between_its_header_and_its_frames_is_refused(tmp_path, monkeypatch, mutation):
    """Before: read_c3d returned a trial (header and parameters of one version, frames of the
    other). Now a FileFormatError naming the file and what changed."""
    path = tmp_path / "walk.c3d"
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", path)
    change, said = MUTATIONS[mutation]
    done = _changing_once(monkeypatch, c3d_module, "read_data", change)
    with pytest.raises(FileFormatError) as err:
        read_c3d(path)
    assert done == [path]
    assert CHANGED in str(err.value) and said in str(err.value) and str(path) in str(err.value)
    assert "read it again when it is complete" in str(err.value)
    assert read_c3d(path).markers.shape[0] > 0  # complete now: read


def test_a_static_changed_while_it_is_read_fails_the_run(tmp_path, monkeypatch):
    from gaitid.pipeline import process

    trial, static = tmp_path / "walk.c3d", tmp_path / "static.c3d"
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", trial)
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", static)
    done = _changing_once(monkeypatch, c3d_module, "read_data", _grow, when=lambda p, *a: Path(p) == static)
    with pytest.raises(FileFormatError, match=CHANGED) as err:
        process(trial, static=static)
    assert done == [static] and err.value.path == static


def _trc_and_mot(tmp_path: Path) -> tuple[Path, Path]:
    trc = write_trc(read_c3d(sample_data_dir() / "walk_synthetic.c3d"), tmp_path / "walk.trc")
    t = np.arange(50) / 100.0
    mot = write_mot(tmp_path / "grf.mot", ["ground_force_vy"], t, np.c_[700.0 + t], name="grf")
    return Path(trc), Path(mot)


@pytest.mark.parametrize("kind", ["trc", "mot"])
@pytest.mark.parametrize("mutation", list(MUTATIONS))
def test_a_trc_or_mot_changed_while_it_is_read_is_refused(tmp_path, monkeypatch, kind, mutation):
    trc, mot = _trc_and_mot(tmp_path)
    path, reader = (trc, read_trc) if kind == "trc" else (mot, read_storage)
    change, said = MUTATIONS[mutation]
    done = _changing_once(monkeypatch, Path, "read_text", change, when=lambda p, *a: Path(p) == path)
    with pytest.raises(FileFormatError) as err:
        reader(path)
    assert done == [path] and CHANGED in str(err.value) and said in str(err.value)
    reader(path)  # complete now: read


def test_no_clean_file_is_refused(realdata, tmp_path):
    """No false alarm: every C3D of the real data and the synthetic trials, TRC and MOT."""
    files = sorted(realdata.rglob("*.c3d")) + sorted(sample_data_dir().glob("*.c3d"))
    assert len(files) >= 10
    refused = []
    for f in files:
        try:
            read_c3d(f)
        except FileFormatError as exc:
            if CHANGED in str(exc):
                refused.append(f)
        except Exception:  # noqa: BLE001  (other problems of a file are other tests' business)
            pass
    assert refused == []
    trc, mot = _trc_and_mot(tmp_path)
    assert read_trc(trc).markers.shape[0] > 0 and read_storage(mot).values.shape == (50, 1)
