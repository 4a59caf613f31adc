"""A batch rerun redoes a trial whose input changed even when the file kept its size and time."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from gaitid.batch import run_batch
from gaitid.core.resources import sample_data_dir

pytestmark = pytest.mark.slow


def _replace_keeping_size_and_time(path: Path, old: bytes, new: bytes, at: int | None = None) -> None:
    st = path.stat()
    data = bytearray(path.read_bytes())
    i = data.rfind(old) if at is None else at
    assert i >= 0 and len(old) == len(new) and bytes(data[i:i + len(old)]) == old
    data[i:i + len(old)] = new
    tmp = path.with_suffix(".new")
    tmp.write_bytes(bytes(data))
    os.replace(tmp, path)  # a new file, as a copy or restore makes
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns)


@pytest.mark.parametrize("changed", ["trial", "static", "subject"])
def test_a_rerun_redoes_a_trial_whose_input_was_replaced_with_the_same_size_and_time(tmp_path, changed):
    """Before: the run record compared size and time only, so the rerun said "skipped" and kept
    the old outputs. Now the record holds each input's content hash: the trial is processed again."""
    folder = tmp_path / "session"
    folder.mkdir()
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", folder / "walk01.c3d")
    shutil.copy(sample_data_dir() / "static_synthetic.c3d", folder / "walk_static.c3d")
    (folder / "subject.mp").write_text("$Bodymass = 74\n$Height = 1760\n")
    out = tmp_path / "out"
    first = run_batch([folder], out, report=False, progress=lambda r: None)
    assert dict(zip(first["trial"], first["status"])) == {"walk01": "ok"}
    again = run_batch([folder], out, report=False, progress=lambda r: None)
    assert dict(zip(again["trial"], again["status"])) == {"walk01": "skipped"}

    if changed == "subject":
        _replace_keeping_size_and_time(folder / "subject.mp", b"74", b"75")
    else:
        path = folder / ("walk01.c3d" if changed == "trial" else "walk_static.c3d")
        size = path.stat().st_size
        last = path.read_bytes()[-1:]
        _replace_keeping_size_and_time(path, last, bytes([last[0] ^ 1]), at=size - 1)
    redone = run_batch([folder], out, report=False, progress=lambda r: None)
    assert dict(zip(redone["trial"], redone["status"])) == {"walk01": "ok"}


def test_content_hash_is_blake2b_of_the_bytes(tmp_path):
    import hashlib

    from gaitid.io.input_files import content_hash

    path = tmp_path / "x.bin"
    data = os.urandom(3 * (1 << 20) + 17)  # several chunks and a partial one
    path.write_bytes(data)
    assert content_hash(path) == hashlib.blake2b(data, digest_size=16).hexdigest()


def test_the_batch_scan_cache_reads_again_a_file_replaced_with_the_same_size_and_time(tmp_path):
    """Before: the scan cache (gaitid-scan.json: each file's kind, subject, anthropometry, for pairing)
    compared size and time only, so a replaced file kept its old facts. Now it holds the content hash."""
    from gaitid.batch.plan import plan
    from tests.c3d_mutations import RawC3D

    folder = tmp_path / "session"
    folder.mkdir()
    walk = folder / "walk01.c3d"
    shutil.copy(sample_data_dir() / "walk_synthetic.c3d", walk)
    scanned = []

    def scan(files):
        from gaitid.batch.session import scan_trial

        scanned.extend(f.name for f in files)
        return [scan_trial(f) for f in files]

    (job,) = plan([folder], tmp_path / "out", scan=scan)
    assert job.info.anthropometry["mass"] == 72.0 and scanned == ["walk01.c3d"]
    plan([folder], tmp_path / "out", scan=scan)
    assert scanned == ["walk01.c3d"]  # unchanged: from the cache
    c = RawC3D(walk.read_bytes())
    c.set_numbers("PROCESSING", "BODYMASS", [80.0], dims=c.param("PROCESSING", "BODYMASS").dims)
    changed = c.to_bytes()
    assert len(changed) == walk.stat().st_size
    st = walk.stat()
    walk.write_bytes(changed)
    os.utime(walk, ns=(st.st_atime_ns, st.st_mtime_ns))
    (job,) = plan([folder], tmp_path / "out", scan=scan)
    assert scanned == ["walk01.c3d", "walk01.c3d"] and job.info.anthropometry["mass"] == 80.0
