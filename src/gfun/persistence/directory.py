"""A gfun model directory: its file names and format version, the marker that proves gfun wrote it, the pointer
to its current version, and the estimators it may hold. What :mod:`gfun.persistence.saving` writes and
:mod:`gfun.persistence.loading` reads (the layout is described in :mod:`gfun.persistence`)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import IO

from gfun.errors import DamagedModelError

__all__ = ["ESTIMATOR_MODULES", "FORMAT_VERSION", "model_directory_of"]

FORMAT = "gfun-model"
#: Bumped whenever the saved state's layout changes incompatibly.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
STATE = "state.json"
ARRAYS = "arrays.npz"
MARKER = ".gfun-model"
MARKER_MAGIC = "gfun model directory"
#: Layout of the model directory (marker, pointer, version folders).
LAYOUT_VERSION = 1
CURRENT = "CURRENT"
_VERSION_RE = re.compile(r"^v-\d{8}T\d{12}Z-[0-9a-f]{8}$")
_POINTER_TMP_RE = re.compile(r"^\.CURRENT\.[0-9a-f]{8}\.tmp$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_SMALL_FILE = 1 << 16  # marker and pointer
_LEGACY_MANIFEST_LIMIT = 1 << 28
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


#: The estimators a model directory may hold: class name -> the module that defines it. Loading looks the
#: saved class name up here (never anywhere else); the modules are imported by name when needed, so that this
#: module does not import the estimators (which import it to save themselves).
ESTIMATOR_MODULES: dict[str, str] = {
    "GeneralizedFunnelling": "gfun.funnelling.generalized",
    "NaiveClassifier": "gfun.baselines.naive",
    "UpperBoundClassifier": "gfun.baselines.naive",
    "PooledClassifier": "gfun.baselines.pooled",
    "EncoderLinearClassifier": "gfun.baselines.encoder",
    "FineTunedTransformerClassifier": "gfun.baselines.transformer",
    "TunedTransformerClassifier": "gfun.baselines.transformer",
    "LRIClassifier": "gfun.baselines.crosslingual.lri",
    "CLESAClassifier": "gfun.baselines.crosslingual.clesa",
    "KCCAClassifier": "gfun.baselines.crosslingual.kcca",
    "DCIClassifier": "gfun.baselines.crosslingual.dci",
}


def _estimators() -> dict[str, type]:
    """Every estimator class a model can hold, by saved name (imports every estimator's module)."""
    return {name: estimator_class(name) for name in ESTIMATOR_MODULES}


def estimator_class(name: str) -> type:
    """The estimator class saved under ``name``; only its own module is imported (loading a gFun model does not
    import the cross-lingual baselines, nor they the transformer's)."""
    import importlib

    return getattr(importlib.import_module(ESTIMATOR_MODULES[name]), name)

def _read_marker(path: Path) -> dict | None:
    """The marker of directory ``path`` if it holds a valid one (a regular file with gfun's magic), else None."""
    mpath = path / MARKER
    try:
        st = os.lstat(mpath)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or st.st_size > _SMALL_FILE:
        return None
    try:
        marker = json.loads(mpath.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(marker, dict) or marker.get("magic") != MARKER_MAGIC:
        return None
    return marker

def _is_legacy_model(path: Path) -> bool:
    """Whether ``path`` holds a model in gfun 0.1.0's flat layout (no marker, a gfun manifest.json)."""
    mpath = path / MANIFEST
    try:
        if not stat.S_ISREG(os.lstat(mpath).st_mode) or os.lstat(mpath).st_size > _LEGACY_MANIFEST_LIMIT:
            return False
        manifest = json.loads(mpath.read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT

def model_directory_of(path: str | os.PathLike[str]) -> Path | None:
    """The gfun model directory that ``path`` is or lies inside (marked, or in the flat layout), or None."""
    p = Path(os.path.abspath(path))
    for candidate in (p, *p.parents):
        if candidate.is_dir() and (_read_marker(candidate) is not None or _is_legacy_model(candidate)):
            return candidate
    return None

def _open_regular(dir_fd: int, name: str, shown: Path) -> IO[bytes]:
    """``name`` in directory ``dir_fd``, opened for reading if it is a regular file (never a link or device)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)  # FileNotFoundError goes to the caller
    if stat.S_ISLNK(st.st_mode):
        raise DamagedModelError(f"{shown} is a symbolic link; a model's files must be regular files inside its "
                                "directory, so gfun does not follow it")
    if not stat.S_ISREG(st.st_mode):
        raise DamagedModelError(f"{shown} is not a regular file (a directory, device, FIFO or socket); refusing "
                                "to read it")
    fd = os.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_NONBLOCK, dir_fd=dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the two calls
        os.close(fd)
        raise DamagedModelError(f"{shown} is not a regular file; refusing to read it")
    return os.fdopen(fd, "rb")

def _current_version(path: Path) -> str | None:
    """The version ``path``'s CURRENT names, or None (no pointer, a damaged one, or not a regular file: a link,
    a FIFO or a device is never opened for reading, and at most a small file's size is read)."""
    try:
        fd = os.open(path, os.O_RDONLY | _O_DIRECTORY)
    except OSError:
        return None
    try:
        with _open_regular(fd, CURRENT, path / CURRENT) as fh:
            data = fh.read(_SMALL_FILE + 1)
        pointer = json.loads(data.decode("utf-8"))
        version = pointer.get("version") if isinstance(pointer, dict) else None
    except (OSError, ValueError):  # DamagedModelError is a ValueError
        return None
    finally:
        os.close(fd)
    return version if isinstance(version, str) and _VERSION_RE.match(version) else None
