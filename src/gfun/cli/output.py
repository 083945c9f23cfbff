"""Where ``gfun predict`` writes its records: a destination checked before the model is loaded (never the input,
nor a file of a saved model), standard output, or a file replaced atomically once every line is written."""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

__all__ = ["check_output_writable", "check_prediction_output", "prediction_output", "writes_to_stdout"]


def check_prediction_output(output: str, input_path: str, *, option: str = "--output") -> None:
    """Refuse an ``--output`` that would overwrite the input or write inside a gfun model directory. The output is
    resolved to its real file first: a symbolic link (or a path through a linked folder) is judged by the file it
    leads to, which is the one that would be replaced.

    Raises
    ------
    IsADirectoryError, ValueError
        And those of :func:`check_output_writable` (a file or directory that this user may not write).
    """
    from gfun.persistence.directory import model_directory_of

    if output == "-":
        return
    out = Path(output)
    real = Path(os.path.realpath(out))
    if real.is_dir():
        raise IsADirectoryError(f"{option} {output} is a directory; give a file name"
                                + (" (or - for standard output)" if option == "--output" else ""))
    with contextlib.suppress(OSError):
        if input_path != "-" and Path(input_path).is_file() and out.exists() and os.path.samefile(out, input_path):
            raise ValueError(f"{option} {output} is the input file {input_path}; refusing to overwrite it")
    owner = model_directory_of(out) or model_directory_of(real)
    if owner is not None:
        shown = output if real == Path(os.path.abspath(out)) else f"{output} (a link to {real})"
        raise ValueError(f"{option} {shown} lies inside the gfun model directory {owner}; refusing to write "
                         "there (it would damage the model)")
    check_output_writable(output, option=option)


def check_output_writable(output: str, *, option: str = "--output") -> None:
    """Refuse, before the model is loaded and anything is predicted, an ``--output`` that cannot be written: its
    directory (or the nearest existing one it would be created under) is not a directory in which gfun can create
    a file (a real write test: a file created and removed at once), or the file exists and this user may not
    write it (a read-only file, another user's file: refused as ``open(output, "w")`` would refuse it, although a
    rename in a writable directory could replace it). A link is judged by its real file. Standard output and
    special files (devices, FIFOs, written in place) are not tested.

    Raises
    ------
    NotADirectoryError, PermissionError
    """
    import secrets

    from gfun.core.atomic import check_writable, is_special_file

    if writes_to_stdout(output) or is_special_file(output):
        return
    try:
        check_writable(output)
    except PermissionError as exc:
        raise PermissionError(f"{option} {exc}; {_nothing(option)}") from None
    directory = Path(os.path.realpath(output)).parent
    while not directory.exists() and directory != directory.parent:
        directory = directory.parent
    if not directory.is_dir():
        raise NotADirectoryError(f"{option} {output}: {directory} is a file, not a directory")
    probe = directory / f".gfun-write-test.{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise PermissionError(f"{option} {output}: cannot write in {directory} ({exc.strerror or exc}); "
                              f"{_nothing(option)}") from None
    os.close(fd)
    os.unlink(probe)


def _nothing(option: str) -> str:
    return "nothing was predicted" if option == "--output" else "nothing was written"


def writes_to_stdout(output: str) -> bool:
    """Whether ``output`` is ``-`` or names the file standard output writes to (``/dev/stdout``, a redirect)."""
    if output == "-":
        return True
    try:
        out, std = os.stat(output), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return False
    return (out.st_dev, out.st_ino) == (std.st_dev, std.st_ino)


@contextlib.contextmanager
def prediction_output(output: str) -> Iterator[TextIO]:
    """The text stream predictions go to: stdout for ``-`` (or ``/dev/stdout``: its file is not reopened, so
    ``>>`` still appends), a device or FIFO written in place, otherwise a temporary file that replaces
    ``output`` only once every line is written."""
    from gfun.core.atomic import atomic_write, is_special_file

    if writes_to_stdout(output):
        yield sys.stdout
        sys.stdout.flush()
        return
    if not is_special_file(output):
        Path(output).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(output) as raw:
        fh = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        yield fh
        fh.flush()
        fh.detach()

