"""Output files that are either the old or the new complete content, never half written.

:func:`atomic_write` writes to a temporary file beside the target (created with the umask, like any
other file) and renames it over the target with one ``os.replace`` only once everything was
written: an error, an interrupt or a kill leaves the previous file untouched (and at most a hidden
``.NAME.XXXXXXXX.tmp`` beside it). Special files are never renamed over: devices, FIFOs, sockets and
anything under ``/dev`` or ``/proc`` (``/dev/stdout``, ``/dev/null``, ``/dev/fd/N``) are opened and
written directly. A symbolic link to a regular file stays a link: its target is replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "fsync_directory", "is_special_file", "write_bytes_atomic"]


def is_special_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is written in place rather than replaced: a device, FIFO or socket, or under /dev or /proc."""
    absolute = os.path.abspath(path)
    if absolute in ("/dev", "/proc") or absolute.startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _temporary_beside(target: Path) -> tuple[Path, int]:
    """A new file ``.NAME.XXXXXXXX.tmp`` in ``target``'s directory (mode 0666 less the umask) and its descriptor."""
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {target}")  # pragma: no cover


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, fsync: bool = False) -> Iterator[IO[bytes]]:
    """A binary file object whose content replaces ``path`` when the ``with`` block ends without an error.

    Parameters
    ----------
    path : path
        The file to write. A special file (see :func:`is_special_file`) is opened and written directly.
        The parent directory must exist.
    fsync : bool
        Flush the new content to the disk before the rename (and the directory after it).

    Raises
    ------
    IsADirectoryError
        ``path`` is a directory.
    """
    target = Path(path)
    if is_special_file(target):
        with open(target, "wb") as fh:
            yield fh
        return
    real = Path(os.path.realpath(target))
    if real.is_dir():
        raise IsADirectoryError(f"{target} is a directory, not a file")
    tmp, fd = _temporary_beside(real)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        with contextlib.suppress(OSError):  # a replaced file keeps its permissions
            os.chmod(tmp, stat.S_IMODE(os.stat(real).st_mode))
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_directory(real.parent)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, fsync: bool = False) -> None:
    """Replace ``path`` by ``data`` in one rename (see :func:`atomic_write`)."""
    with atomic_write(path, fsync=fsync) as fh:
        fh.write(data)


def fsync_directory(path: str | os.PathLike[str]) -> None:
    """Make the entries of directory ``path`` (new names, renames) durable; a no-op where unsupported."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)
