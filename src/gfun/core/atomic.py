"""Output files that are either the old or the new complete content, never half written.

:func:`atomic_write` writes to a temporary file beside the target (created with the umask, like any
other file) and renames it over the target with one ``os.replace`` only once everything was
written: an error, an interrupt or a kill leaves the previous file untouched (and at most a hidden
``.NAME.XXXXXXXX.tmp`` beside it). The target is resolved to the real file and checked before anything
is created: a directory is refused, and so is a file that ``open(path, "w")`` could not write (a
read-only file, another user's file: the rename must not bypass its permissions). A replaced file keeps
its mode, and its owner and group where the writer may set them.

Files a user names (``--output``, ``to_jsonl``): a symbolic link is followed as ``open`` follows it (the
link stays, its real file is replaced); devices, FIFOs, sockets and anything under ``/dev`` or ``/proc``
(``/dev/stdout``, ``/dev/null``, ``/dev/fd/N``) are opened and written directly, never renamed over.
Files gfun owns (a model's ``CURRENT`` and marker: ``follow_symlinks=False, special_in_place=False``):
a symbolic link is never written through and a special file is refused without being opened.
The temporary file is created with ``O_EXCL | O_NOFOLLOW``, so it never follows a link either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "check_writable", "fsync_directory", "is_special_file", "write_bytes_atomic"]

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_EFFECTIVE = os.access in os.supports_effective_ids


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


def _may_write(path: str | os.PathLike[str]) -> bool:
    """``os.access(path, W_OK)`` with the effective ids (what ``open(path, "w")`` checks)."""
    return os.access(path, os.W_OK, effective_ids=_EFFECTIVE)


def _shown(target: Path, real: Path) -> str:
    return str(target) if Path(os.path.abspath(target)) == real else f"{target} (a link to {real})"


def _read_only(shown: str) -> PermissionError:
    return PermissionError(f"{shown}: permission denied: this user may not write the file (gfun respects its "
                           "permissions as open(..., 'w') would)")


def check_writable(path: str | os.PathLike[str]) -> None:
    """Raise ``PermissionError`` if ``open(path, "w")`` would be refused for lack of rights (a read-only file,
    another user's file) or if the file could not be created in its directory (or its nearest existing parent).

    ``path`` is resolved to its real file first; nothing is created."""
    target = Path(path)
    real = Path(os.path.realpath(target))
    if real.exists():
        if not real.is_dir() and not _may_write(real):
            raise _read_only(_shown(target, real))
        if is_special_file(real):
            return
    parent = real.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.is_dir() and not os.access(parent, os.W_OK | os.X_OK, effective_ids=_EFFECTIVE):
        raise PermissionError(f"cannot write {target}: {parent}: the directory is not writable")


def _temporary_beside(target: Path, shown: str) -> tuple[Path, int]:
    """A new file ``.NAME.XXXXXXXX.tmp`` in ``target``'s directory (mode 0666 less the umask) and its descriptor."""
    for _ in range(100):
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise PermissionError(f"cannot write {shown}: {target.parent}: the directory is not writable "
                                      f"({exc.strerror})") from None
            raise
    raise FileExistsError(f"cannot create a temporary file beside {target}")  # pragma: no cover


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike[str], *, fsync: bool = False, follow_symlinks: bool = True,
                 special_in_place: bool = True) -> Iterator[IO[bytes]]:
    """A binary file object whose content replaces ``path`` when the ``with`` block ends without an error.

    Parameters
    ----------
    path : path
        The file to write. The parent directory must exist.
    fsync : bool
        Flush the new content to the disk before the rename (and the directory after it).
    follow_symlinks : bool
        Follow a symbolic link ``path`` to its real file, as ``open`` does (a file the user named). With
        False (a file gfun owns), a link is refused and never written through.
    special_in_place : bool
        Open and write a special file (see :func:`is_special_file`) directly, as ``open`` does. With False,
        a device, FIFO or socket is refused without being opened.

    Raises
    ------
    IsADirectoryError
        ``path`` is a directory.
    PermissionError
        ``open(path, "w")`` would be refused (a read-only file, another user's file), or the directory is not
        writable; checked before anything is created.
    FileExistsError
        ``path`` is a symbolic link and ``follow_symlinks`` is False, or a special file and ``special_in_place``
        is False.
    """
    target = Path(path)
    if follow_symlinks:
        real = Path(os.path.realpath(target))
        try:
            st: os.stat_result | None = os.stat(real)
        except FileNotFoundError:
            st = None
    else:
        real = Path(os.path.abspath(target))
        try:
            st = os.lstat(real)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise FileExistsError(f"{target} is a symbolic link; gfun does not write through it (remove the link "
                                  "and try again)")
    shown = _shown(target, real)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(f"{shown} is a directory, not a file")
    if is_special_file(target) or is_special_file(real) or (st is not None and not stat.S_ISREG(st.st_mode)):
        if not special_in_place:
            raise FileExistsError(f"{target} is not a regular file (a device, FIFO or socket); refusing to open or "
                                  "replace it")
        with open(target, "wb") as fh:  # open itself checks the rights
            yield fh
        return
    if st is not None and not _may_write(real):
        raise _read_only(shown)
    tmp, fd = _temporary_beside(real, shown)
    try:
        with os.fdopen(fd, "wb") as fh:
            yield fh
            fh.flush()
            if st is not None:  # a replaced file keeps its owner and group (where allowed) and its permissions
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(fh.fileno(), st.st_uid, st.st_gid)
                    except OSError:  # not root: keep at least the group, where this user belongs to it
                        with contextlib.suppress(OSError):
                            os.fchown(fh.fileno(), -1, st.st_gid)
                with contextlib.suppress(OSError):
                    os.fchmod(fh.fileno(), stat.S_IMODE(st.st_mode))
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    if fsync:
        fsync_directory(real.parent)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *, fsync: bool = False,
                       follow_symlinks: bool = True, special_in_place: bool = True) -> None:
    """Replace ``path`` by ``data`` in one rename (see :func:`atomic_write`)."""
    with atomic_write(path, fsync=fsync, follow_symlinks=follow_symlinks, special_in_place=special_in_place) as fh:
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
