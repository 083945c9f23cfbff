"""Writing a model directory: the destination checks (run before an expensive fit), the claim and lock of the
directory, a complete new version folder, then the atomic swap of ``CURRENT`` (see :mod:`gfun.persistence`)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

import gfun
from gfun.core.atomic import check_writable, fsync_directory, write_bytes_atomic
from gfun.persistence.directory import (
    _O_DIRECTORY,
    _POINTER_TMP_RE,
    _VERSION_RE,
    ARRAYS,
    CURRENT,
    ESTIMATOR_MODULES,
    FORMAT,
    FORMAT_VERSION,
    LAYOUT_VERSION,
    MANIFEST,
    MARKER,
    MARKER_MAGIC,
    STATE,
    _current_version,
    _is_legacy_model,
    _read_marker,
)
from gfun.persistence.libraries import library_versions

__all__ = ["check_model_destination", "save_model"]

logger = logging.getLogger("gfun.persistence")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if isinstance(obj, type):  # e.g. a numpy dtype class given as a parameter
        return np.dtype(obj).name
    if isinstance(obj, np.dtype):
        return obj.name
    raise TypeError(f"cannot save a value of type {type(obj).__name__} in a model file")

_MARKER_TMP_RE = re.compile(r"^\.\.gfun-model\.[0-9a-f]{8}\.tmp$")


def _foreign_entries(path: Path) -> list[str]:
    """What ``path`` holds besides the temporary marker files of gfun's own claims (one in progress, or killed)."""
    names = []
    for name in os.listdir(path):
        with contextlib.suppress(FileNotFoundError):
            if not (_MARKER_TMP_RE.match(name) and stat.S_ISREG(os.lstat(path / name).st_mode)):
                names.append(name)
    return names

def _listing(path: Path, limit: int = 5) -> str:
    names = sorted(_foreign_entries(path))
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")

def _probe_writable(directory: Path, shown: Path) -> None:
    probe = directory / f".gfun-write-test.{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise PermissionError(f"cannot save a model to {shown}: {directory} is not writable "
                              f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)

def _check_pointer(path: Path) -> None:
    """Refuse a ``CURRENT`` that gfun would have to write (or read) through a link, or that is not a regular file
    (a FIFO would hang the save, ``/dev/zero`` never end), or that this user may not write: before the fit."""
    pointer = path / CURRENT
    try:
        st = os.lstat(pointer)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise FileExistsError(f"cannot save a model to {path}: {pointer} is a symbolic link; gfun never writes "
                              "through a link (nor reads one) in a model directory. Remove the link and save again")
    if not stat.S_ISREG(st.st_mode):
        raise FileExistsError(f"cannot save a model to {path}: {pointer} is not a regular file (a FIFO, device, "
                              "socket or directory); refusing to read or replace it. Remove it and save again")
    check_writable(pointer)

def check_model_destination(path: str | os.PathLike[str], *, overwrite: bool = True) -> None:
    """Check, before fitting, that a model can be saved to directory ``path``; raise a clear ``OSError`` if not.

    The destination must be a new path whose nearest existing parent is a writable directory, an empty
    directory, or a gfun model directory (marked with ``.gfun-model``; with ``overwrite=False`` one that
    holds no model yet). A file, a non-empty directory without the marker (the current directory with
    other files in it, a folder of data) and a model in the earlier flat layout are refused, and so is a
    model directory whose ``CURRENT`` is a symbolic link, not a regular file, or not writable.

    Raises
    ------
    NotADirectoryError
        ``path`` (or one of its parents) is a file.
    FileExistsError
        ``path`` is a non-empty directory that gfun did not write, holds a model and ``overwrite`` is False, or
        its ``CURRENT`` is a symbolic link or a special file.
    PermissionError
        The directory (or the parent it would be created in), or its ``CURRENT``, is not writable.
    """
    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise FileExistsError(f"cannot save a model to {p}: it is a dangling symbolic link")
    if p.exists():
        if not p.is_dir():
            raise NotADirectoryError(f"cannot save a model to {p}: it exists and is not a directory; refusing to "
                                     "replace it")
        marker = _read_marker(p)
        if marker is None and _foreign_entries(p):
            if _is_legacy_model(p):
                raise FileExistsError(
                    f"cannot save a model to {p}: it holds a model saved by an earlier gfun in the flat layout (no "
                    f"{MARKER} marker), which gfun does not replace because it cannot prove that it wrote every file "
                    "there; delete the directory yourself or save to another one")
            raise FileExistsError(
                f"cannot save a model to {p}: the directory is not empty and is not a gfun model directory (no "
                f"{MARKER} marker); it holds {_listing(p)}. Refusing to write there: choose a new or empty directory")
        if marker is not None:
            _check_pointer(p)
            if not overwrite and os.path.lexists(p / CURRENT):
                raise FileExistsError(f"{p} already holds a saved model (pass overwrite=True to replace it)")
        _probe_writable(p, p)
        return
    ancestor = p.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise NotADirectoryError(f"cannot save a model to {p}: {ancestor} is a file, not a directory")
    _probe_writable(ancestor, p)

@contextlib.contextmanager
def _locked(directory: Path) -> Iterator[None]:
    """An exclusive advisory lock on ``directory`` (serialises concurrent saves; readers never wait)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    fd = os.open(directory, os.O_RDONLY | _O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock

def _claim(path: Path) -> None:
    """Adopt ``path`` (created, or empty) and mark it as a gfun model directory; called under :func:`_locked`, so
    that a concurrent save into the same new directory finds the marker, not this claim half done."""
    if _read_marker(path) is not None:
        return
    if _foreign_entries(path):  # something appeared since check_model_destination
        check_model_destination(path)
    for name in os.listdir(path):  # a claim that was killed before its rename
        if _MARKER_TMP_RE.match(name):
            with contextlib.suppress(OSError):
                os.unlink(path / name)
    marker = {"magic": MARKER_MAGIC, "layout": LAYOUT_VERSION, "created_by": f"gfun {gfun.__version__}",
              "note": "a gfun model directory: `gfun train --model` and save_model replace its CURRENT version; "
                      "the v-* folders and CURRENT belong to gfun"}
    write_bytes_atomic(path / MARKER, (json.dumps(marker, indent=1) + "\n").encode("utf-8"), fsync=True,
                       follow_symlinks=False, special_in_place=False)

def _remove_stale(path: Path, keep: str | None) -> None:
    """Remove version folders other than ``keep`` and leftover pointer files: only names gfun itself creates."""
    for name in os.listdir(path):
        entry = path / name
        try:
            st = os.lstat(entry)
        except FileNotFoundError:
            continue
        if _VERSION_RE.match(name) and name != keep and stat.S_ISDIR(st.st_mode):
            shutil.rmtree(entry, ignore_errors=True)
        elif _POINTER_TMP_RE.match(name) and stat.S_ISREG(st.st_mode):
            with contextlib.suppress(OSError):
                entry.unlink()

def _new_version(path: Path) -> Path:
    for _ in range(100):
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%S%f")
        vdir = path / f"v-{stamp}Z-{secrets.token_hex(4)}"
        try:
            vdir.mkdir()
            return vdir
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a new version folder in {path}")  # pragma: no cover

def _write_file(path: Path, data: bytes | None = None, arrays: dict[str, np.ndarray] | None = None) -> None:
    with open(path, "xb") as fh:
        if arrays is not None:
            np.savez(fh, **arrays)
        else:
            fh.write(data or b"")
        fh.flush()
        os.fsync(fh.fileno())

def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()

def save_model(model: Any, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """Save a fitted gfun estimator to directory ``path``, replacing its previous model atomically.

    Parameters
    ----------
    model : GeneralizedFunnelling, NaiveClassifier or FineTunedTransformerClassifier
        A fitted estimator.
    path : path
        Target directory: new, empty, or a gfun model directory (see the module docstring). Anything
        else is refused and left untouched.
    overwrite : bool
        Allow replacing an existing saved model.

    Raises
    ------
    NotADirectoryError, FileExistsError, PermissionError
        See :func:`check_model_destination`.
    """
    name = type(model).__name__
    if name not in ESTIMATOR_MODULES:
        raise TypeError(f"cannot save a {name}; supported: {sorted(ESTIMATOR_MODULES)}")
    path = Path(path)
    check_model_destination(path, overwrite=overwrite)
    meta, arrays = model.get_state()
    for key, arr in arrays.items():
        if np.asarray(arr).dtype == object:
            raise TypeError(f"state array {key!r} has dtype object, which cannot be saved safely")
    state = json.dumps(meta, default=_json_default, ensure_ascii=False).encode("utf-8")
    path.mkdir(parents=True, exist_ok=True)  # umask permissions
    with _locked(path):
        _claim(path)
        _check_pointer(path)  # again: CURRENT may have changed during the fit
        if not overwrite and os.path.lexists(path / CURRENT):
            raise FileExistsError(f"{path} already holds a saved model (pass overwrite=True to replace it)")
        _remove_stale(path, keep=_current_version(path))  # folders of saves that were killed
        vdir = _new_version(path)
        try:
            _write_file(vdir / STATE, state)
            _write_file(vdir / ARRAYS, arrays={k: np.asarray(v) for k, v in arrays.items()})
            files = (STATE, ARRAYS)
            manifest = {
                "format": FORMAT,
                "format_version": FORMAT_VERSION,
                "gfun_version": gfun.__version__,
                "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                "estimator": name,
                "config": meta.get("params", {}),
                "classes": list(getattr(model, "classes_", [])),
                "languages": list(getattr(model, "languages_", [])),
                "files": {f: _sha256_file(vdir / f) for f in files},
                "sizes": {f: (vdir / f).stat().st_size for f in files},
                "libraries": library_versions(),
            }
            mbytes = (json.dumps(manifest, indent=1, default=_json_default, ensure_ascii=False) + "\n").encode()
            _write_file(vdir / MANIFEST, mbytes)
            fsync_directory(vdir)
            pointer = {"version": vdir.name, "manifest_sha256": hashlib.sha256(mbytes).hexdigest(),
                       "manifest_size": len(mbytes)}
            write_bytes_atomic(path / CURRENT, (json.dumps(pointer, indent=1) + "\n").encode(), fsync=True,
                               follow_symlinks=False, special_in_place=False)
        except BaseException:
            if _current_version(path) != vdir.name:
                shutil.rmtree(vdir, ignore_errors=True)
            raise
        _remove_stale(path, keep=vdir.name)
    logger.info("saved %s to %s (%s)", name, path, vdir.name)
    return path
