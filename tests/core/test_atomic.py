"""Atomic files (gfun.core.atomic): the old file survives a failed write; special files are recognised by path."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from gfun.core.atomic import atomic_write, is_special_file


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
