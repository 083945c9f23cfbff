"""Atomic files (gfun.core.atomic): the old file survives a failed write; special files are recognised by path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gfun.core.atomic import atomic_write, is_special_file, write_bytes_atomic
from tests.unprivileged import as_unprivileged


def test_special_files_are_recognised_by_path_without_touching_them() -> None:
    for path in ("/dev/stdout", "/dev/null", "/dev/fd/1", "/proc/self/fd/1"):
        assert is_special_file(path)


def test_atomic_write_keeps_the_old_file_on_error(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    with pytest.raises(RuntimeError), atomic_write(target) as fh:
        fh.write(b"half")
        raise RuntimeError("boom")
    assert target.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]
    with atomic_write(target) as fh:
        fh.write(b"new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640


# ------------------------------------------------------------------------------------- links, special files, rights


def test_a_file_the_writer_may_not_write_is_refused_as_open_would_refuse_it(tmp_path: Path) -> None:
    """A rename in a writable directory must not replace a file that open(path, "w") could not write."""
    import shutil
    import tempfile

    if os.geteuid() != 0:  # an unprivileged user may not write its own mode-444 file with open(..., "w")
        locked = tmp_path / "locked.txt"
        locked.write_text("keep")
        locked.chmod(0o444)
        with pytest.raises(PermissionError, match="locked.txt"):
            with atomic_write(locked) as fh:
                fh.write(b"new")
        assert locked.read_text() == "keep" and os.listdir(tmp_path) == ["locked.txt"]
        return
    # as root every file is writable: check as an unprivileged user in a forked child
    shared = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        shared.chmod(0o777)  # a directory the user may write (so a rename would succeed)
        for name, mode in (("read-only.txt", 0o444), ("roots.txt", 0o644)):
            target = shared / name
            target.write_text("root's data")
            target.chmod(mode)
            code, message = as_unprivileged(lambda target=target: write_bytes_atomic(target, b"replaced"))
            assert code == 3 and "PermissionError" in message and name in message, (name, message)
            assert target.read_text() == "root's data" and target.stat().st_uid == 0
            assert stat.S_IMODE(target.stat().st_mode) == mode
        assert sorted(os.listdir(shared)) == ["read-only.txt", "roots.txt"]  # no temporary file left
        # a file the user may write is replaced, and a new file is created, as open(..., "w") would
        (shared / "open.txt").write_text("old")
        (shared / "open.txt").chmod(0o666)
        assert as_unprivileged(lambda: write_bytes_atomic(shared / "open.txt", b"new")) == (0, "")
        assert as_unprivileged(lambda: write_bytes_atomic(shared / "new.txt", b"new")) == (0, "")
        assert (shared / "open.txt").read_text() == "new" and (shared / "new.txt").read_text() == "new"
    finally:
        shutil.rmtree(shared)


def test_a_read_only_directory_is_named_not_the_temporary_file(tmp_path: Path) -> None:
    import shutil
    import tempfile

    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        try:
            with pytest.raises(PermissionError, match=r"ro: the directory is not writable"):
                write_bytes_atomic(ro / "out.txt", b"x")
        finally:
            ro.chmod(0o755)
        return
    ro = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        ro.chmod(0o755)
        code, message = as_unprivileged(lambda: write_bytes_atomic(ro / "out.txt", b"x"))
        assert code == 3 and f"{ro}: the directory is not writable" in message and ".tmp" not in message, message
    finally:
        shutil.rmtree(ro)


def test_files_gfun_owns_are_never_written_through_a_link_nor_in_place(tmp_path: Path) -> None:
    """follow_symlinks=False, special_in_place=False (a model's CURRENT): a link or a FIFO is refused, untouched."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    link = tmp_path / "CURRENT"
    link.symlink_to(victim)
    with pytest.raises(FileExistsError, match="CURRENT is a symbolic link"):
        write_bytes_atomic(link, b"pointer", follow_symlinks=False, special_in_place=False)
    assert victim.read_text() == "precious" and link.is_symlink()
    link.unlink()
    os.mkfifo(link)  # opening it for writing would wait for a reader forever
    with pytest.raises(FileExistsError, match="CURRENT is not a regular file"):
        write_bytes_atomic(link, b"pointer", follow_symlinks=False, special_in_place=False)
    assert stat.S_ISFIFO(os.lstat(link).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["CURRENT", "victim.txt"]
    link.unlink()
    write_bytes_atomic(link, b"pointer", follow_symlinks=False, special_in_place=False)
    assert link.read_bytes() == b"pointer"


def test_a_symlinked_output_is_resolved_and_its_real_file_checked(tmp_path: Path) -> None:
    """For a file the user names, a link to a regular file is followed like open(..., "w") follows it: the real
    file is replaced (the link stays) and the real file's rights decide."""
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    write_bytes_atomic(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    if os.geteuid() != 0:
        real.chmod(0o444)
        with pytest.raises(PermissionError, match="real.txt"):
            write_bytes_atomic(link, b"newer")
        assert real.read_text() == "new"


def test_dev_stdout_redirected_to_a_file_is_written_in_place(tmp_path: Path) -> None:
    """``/dev/stdout`` resolves to the file standard output is redirected to: it is opened as ``open`` would open it
    (the same file, the same inode), never replaced by a rename."""
    import subprocess
    import sys

    log = tmp_path / "log.txt"
    log.write_text("first\n")
    inode = log.stat().st_ino
    code = "from gfun.core.atomic import write_bytes_atomic\nwrite_bytes_atomic('/dev/stdout', b'second\\n')\n"
    with open(log, "a") as out:
        subprocess.run([sys.executable, "-c", code], stdout=out, check=True, timeout=60,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)})
    assert log.read_text().endswith("second\n") and log.stat().st_ino == inode and os.listdir(tmp_path) == ["log.txt"]
