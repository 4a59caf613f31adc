"""Input files checked before any reader opens them (:func:`input_file`).

A FIFO named ``walk.c3d`` would block its reader forever and ``/dev/zero`` never ends; a loop of
symbolic links, a folder or a file far beyond the size of its kind are refused too, each with a
:class:`~gaitid.core.errors.FileFormatError` naming the file and what it is.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from gaitid.core.errors import FileFormatError


def input_file(path: str | os.PathLike, what: str = "file", max_bytes: int | None = None) -> int:
    """The size in bytes of the input ``path``, checked before anything opens it: a
    :class:`~gaitid.core.errors.FileFormatError` naming it when it is missing, a symbolic-link loop,
    a folder, not a regular file (a FIFO, a device such as ``/dev/zero``, a socket), or larger than
    ``max_bytes`` (``what`` names the kind of file in the messages)."""
    p = Path(path)
    try:
        st = os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise FileFormatError("is a loop of symbolic links, not a file", p) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise FileFormatError(f"{what} not found", p) from None
        raise FileFormatError(f"cannot read the {what} ({exc.strerror or exc})", p) from None
    if stat.S_ISDIR(st.st_mode):
        raise FileFormatError(f"is a directory, not a {what}", p)
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "a special file")
        raise FileFormatError(f"is {kind}, not a regular file: give the {what} itself", p)
    if max_bytes is not None and st.st_size > max_bytes:
        raise FileFormatError(f"{what} of {st.st_size / 2**20:.1f} MB, beyond the {max_bytes / 2**20:g} MB "
                              f"gaitid reads as a {what} (real ones are far smaller): is it the right file?", p)
    return st.st_size


HASH_CHUNK = 1 << 20


def content_hash(path) -> str:
    """The BLAKE2b digest (16 bytes, hex) of a file's bytes, read in chunks of :data:`HASH_CHUNK`."""
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while chunk := fh.read(HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()
