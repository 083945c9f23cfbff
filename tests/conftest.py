"""Shared fixtures: the real corpora under ../shared/data (or $GFUN_DATA)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# tests never write into the user's cache (~/.cache/gfun): converted models, word vectors
os.environ.setdefault("GFUN_CACHE", tempfile.mkdtemp(prefix="gfun-test-cache-"))

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
