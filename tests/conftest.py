"""Shared fixtures: the real corpora under ../shared/data (or $GFUN_DATA)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# tests never write into the user's cache (~/.cache/gfun): converted models, word vectors (~550 MB per session,
# removed when the session ends; a cache the caller set is the caller's)
if "GFUN_CACHE" not in os.environ:
    os.environ["GFUN_CACHE"] = tempfile.mkdtemp(prefix="gfun-test-cache-")
    atexit.register(shutil.rmtree, os.environ["GFUN_CACHE"], ignore_errors=True)

SHARED_DATA = Path(os.environ.get("GFUN_DATA", ROOT.parent / "shared" / "data")).resolve()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """Folder with debtags/, exceptius/, sib200/; tests needing it are skipped where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA} (set GFUN_DATA)")
    return SHARED_DATA


@pytest.fixture(scope="session")
def debtags_dir(shared_data: Path) -> Path:
    path = shared_data / "debtags"
    if not (path / "Packages.lz4").exists():
        pytest.skip(f"debtags files not found in {path}")
    return path
