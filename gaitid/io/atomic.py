"""Safe output files: never replace an input, never leave a partial file under its final name.

* **Atomic.** :func:`atomic_path` yields a temporary file in the target folder;
  the writer writes it, the caller's ``verify`` (if any) checks it, and only
  then is it renamed onto the target (``os.replace``). A reader of the target
  sees the old complete file or the new complete file, never a partial one.
* **Verified.** Some writers (ezc3d) do not report a short write on a full
  disk: every C3D writer passes a ``verify`` that re-reads the temporary file's
  header and checks its size against what the header promises. A failed check,
  or any ``OSError`` on the way (full disk, read-only folder, ``-o`` naming a
  file), is an :class:`~gaitid.core.errors.OutputError` naming the file; the target
  is left untouched.
* **Inputs are never replaced.** Every reader calls :func:`register_input` on
  the file it reads; :func:`atomic_path` refuses (``OutputError`` naming both
  files) to replace any registered file, compared by resolved path and by
  inode (hard links, other spellings of the same path). The registry is
  process-local; :func:`forget_inputs` clears it (for long-lived processes).
* **Inputs read whole.** A reader reads its file inside :func:`unchanged_while_read`: a file
  whose identity, size or modification time differ at the end of the read from the start
  (an acquisition or copy still writing it) is refused, not read as a mix of two versions.
* **No debris.** Temporary files are named ``.gaitid-tmp-<pid>-<random>-<target
  name>``. An interrupted writer removes its own; a killed process cannot, so
  each :func:`atomic_path` first removes the folder's stale ones: those whose
  owning process is gone, or older than :data:`STALE_AFTER_S`.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

from gaitid.core.errors import FileFormatError, GaitIDError, OutputError

TMP_PREFIX = ".gaitid-tmp-"
STALE_AFTER_S = 3600.0  # a temporary file this old is stale even if its process id is in use again
_TMP_NAME = re.compile(re.escape(TMP_PREFIX) + r"(\d+)-")

_inputs_by_inode: dict[tuple[int, int], Path] = {}
_inputs_by_path: dict[str, Path] = {}


# A file name may take 255 bytes; the temporary beside it adds about 30 (TMP_PREFIX, pid, random) and
# the longest output suffix 30 (``_uncertainty_contributions.csv``): a trial's stem longer than this
# is shortened in every output name (:func:`output_stem`).
MAX_OUTPUT_STEM_BYTES = 150


def output_stem(stem: str) -> str:
    """The trial ``stem`` as its output files and folders are named: itself when it takes at most
    :data:`MAX_OUTPUT_STEM_BYTES` bytes (UTF-8), else its first characters, ``-`` and 10 hex
    digits of its SHA-1 (so two long stems sharing their start still get distinct names)."""
    raw = stem.encode("utf-8", "surrogateescape")
    if len(raw) <= MAX_OUTPUT_STEM_BYTES:
        return stem
    import hashlib

    head = raw[: MAX_OUTPUT_STEM_BYTES - 11].decode("utf-8", "ignore")  # (a character cut in two is dropped)
    return f"{head}-{hashlib.sha1(raw).hexdigest()[:10]}"


def register_input(path: str | os.PathLike) -> None:
    """Record that this process read ``path``: no output may replace it afterwards."""
    p = Path(path)
    with contextlib.suppress(OSError, RuntimeError):  # RuntimeError: a symbolic-link loop (Python < 3.13)
        resolved = p.resolve()
        _inputs_by_path[str(resolved)] = p
        st = resolved.stat()
        _inputs_by_inode[(st.st_dev, st.st_ino)] = p


def file_state(path: str | os.PathLike) -> tuple[int, int, int, int] | None:
    """A file's device, inode, size and modification time (ns); None if it cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _change(before, after) -> str:
    if after is None:
        return "removed"
    if before[:2] != after[:2]:
        return "replaced by another file"
    if before[2] != after[2]:
        return f"{before[2]} bytes, then {after[2]}"
    return f"modified: its time went from {before[3]} to {after[3]} ns"


@contextlib.contextmanager
def unchanged_while_read(path: str | os.PathLike) -> Iterator[None]:
    """Read ``path`` inside this: a :class:`~gaitid.core.errors.FileFormatError` naming it if its
    identity, size or time (``st_mtime_ns``) at the end differ from the start (a file still being
    written: what was read may mix two versions), also when the read itself failed. A change
    within the file system's time resolution that keeps the size is not seen."""
    before = file_state(path)
    try:
        yield
    except BaseException as exc:
        if before is not None and file_state(path) != before:
            raise _changed(path, before) from exc
        raise
    if before is not None and file_state(path) != before:
        raise _changed(path, before)


def _changed(path, before) -> FileFormatError:
    return FileFormatError(f"changed while it was read ({_change(before, file_state(path))}); read it again "
                           f"when it is complete", path)


def inputs_read() -> list[Path]:
    """The files registered by :func:`register_input` in this process (as the readers named them)."""
    return list(dict.fromkeys(list(_inputs_by_path.values()) + list(_inputs_by_inode.values())))


def forget_inputs() -> None:
    """Clear the registry of files read (a long-lived process starting an unrelated job)."""
    _inputs_by_inode.clear()
    _inputs_by_path.clear()


def _input_replaced_by(target: Path, inputs: tuple[str | Path, ...]) -> Path | None:
    """The input file that writing ``target`` would replace, or None."""
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symbolic-link loop (Python < 3.13)
        resolved = target.absolute()
    if str(resolved) in _inputs_by_path:
        return _inputs_by_path[str(resolved)]
    try:
        st = resolved.stat()
    except OSError:
        st = None
    if st is not None and (st.st_dev, st.st_ino) in _inputs_by_inode:
        return _inputs_by_inode[(st.st_dev, st.st_ino)]
    for src in inputs:
        src_p = Path(src)
        with contextlib.suppress(OSError, RuntimeError):
            if src_p.resolve() == resolved or (st is not None and src_p.exists() and os.path.samefile(src_p, resolved)):
                return src_p
    return None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, owned by someone else
    return True


def clean_stale_temporaries(folder: str | os.PathLike, *, max_age_s: float = STALE_AFTER_S) -> list[Path]:
    """Remove gaitid's temporary files in ``folder`` left by a killed run; returns those removed.

    A temporary file is stale when the process that made it (the pid in its name) no
    longer exists, or when it is older than ``max_age_s``. Files not named by gaitid
    are never touched.
    """
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        m = _TMP_NAME.match(entry.name)
        if not m:
            continue
        try:
            if not entry.is_file(follow_symlinks=False):
                continue
            age = now - entry.stat(follow_symlinks=False).st_mtime
            if _pid_alive(int(m.group(1))) and age < max_age_s:
                continue
            os.unlink(entry.path)
            removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


@contextlib.contextmanager
def atomic_path(
    target: str | Path,
    *,
    inputs: tuple[str | Path, ...] = (),
    verify: Callable[[Path], None] | None = None,
) -> Iterator[Path]:
    """Yield a temporary path beside ``target``; on success verify it and rename it onto ``target``.

    The temporary file keeps the target's extension (writers such as ezc3d and
    pandas' Excel writer choose their format from it).
    ``inputs``: files the caller read, refused as targets like every registered input.
    ``verify(tmp)``: called after the writer returns; it raises a GaitIDError if the
    file is incomplete (the target is then left as it was).
    """
    target = Path(target)
    replaced = _input_replaced_by(target, tuple(str(i) for i in inputs if i is not None))
    if replaced is not None:
        raise OutputError(f"refusing to overwrite an input file of this run ({replaced})", target)
    if target.is_dir():
        raise OutputError("is a folder; an output file cannot replace it", target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the output folder ({exc.strerror or exc})", target.parent) from exc
    if not target.parent.is_dir():
        raise OutputError("the output folder is not a folder", target.parent)
    clean_stale_temporaries(target.parent)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{TMP_PREFIX}{os.getpid()}-", suffix=f"-{target.name}", dir=target.parent)
        os.close(fd)
    except OSError as exc:
        raise OutputError(f"cannot write in the output folder ({exc.strerror or exc})", target.parent) from exc
    tmp_path = Path(tmp)
    try:
        with contextlib.suppress(OSError):
            os.chmod(tmp_path, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual permissions
        try:
            yield tmp_path
            if not tmp_path.is_file():
                raise OutputError("the writer produced no file", target)
            if verify is not None:
                try:
                    verify(tmp_path)
                except GaitIDError as exc:
                    raise OutputError(exc.reason, target) from exc
            os.replace(tmp_path, target)
        except GaitIDError:
            raise
        except OSError as exc:  # full disk, quota, read-only file system...
            raise OutputError(f"could not write the file ({exc.strerror or exc})", target) from exc
    finally:
        with contextlib.suppress(OSError):
            if tmp_path.exists():
                tmp_path.unlink()


def verify_c3d(expected_frames: int | None = None, expected_points: int | None = None) -> Callable[[Path], None]:
    """A ``verify`` for :func:`atomic_path`: the file is a complete C3D (header, parameters and
    every data byte the header promises are present) with the frames and points expected."""

    def check(tmp: Path) -> None:
        from gaitid.io.c3d_check import check_c3d

        try:
            layout = check_c3d(tmp)
        except GaitIDError as exc:
            raise OutputError(f"the C3D file written is incomplete or corrupt ({exc.reason}); "
                              "is the disk full?", tmp) from exc
        if expected_frames is not None and layout.n_frames != expected_frames:
            raise OutputError(f"the C3D file written holds {layout.n_frames} frames, "
                              f"{expected_frames} expected", tmp)
        if expected_points is not None and layout.n_points != expected_points:
            raise OutputError(f"the C3D file written holds {layout.n_points} points, "
                              f"{expected_points} expected", tmp)

    return check
