"""Saving and loading fitted models, without pickle, without ever destroying what gfun did not write.

A saved model is a directory that gfun owns::

    DIR/
      .gfun-model                  marker: JSON {"magic": "gfun model directory", "layout": 1, ...}
      CURRENT                      pointer: JSON {"version": "v-...", "manifest_sha256": ..., "manifest_size": ...}
      v-20261126T091500123456Z-1a2b3c4d/
        manifest.json              format, format version, gfun version, estimator, configuration, classes,
                                   languages, and the SHA-256 and size of the two other files
        state.json                 the fitted state's structure and scalars (vocabularies, parameters)
        arrays.npz                 the fitted state's numeric arrays (loaded with ``allow_pickle=False``)

Ownership. gfun writes into a directory only if it is new, empty, or carries the marker ``.gfun-model``
(a JSON file with gfun's magic string, written when gfun first claims the directory). Any other
non-empty directory (a web application, a data folder, the current directory) is refused with a message
naming it and what it holds, and so is a path that is a file. gfun only ever deletes what its own
naming proves it wrote inside a marked directory: ``v-<timestamp>-<random>`` version folders other than
the current one and its own ``.CURRENT.*.tmp`` files. Nothing beside the directory (such as a
``.DIR.old`` backup) is touched. :func:`check_model_destination` runs these checks (and a real write
test) before an expensive fit.

Atomic replacement. A save writes a complete new version folder (files flushed to disk), then
replaces ``CURRENT`` with a single ``os.replace``, and only after that removes the previous version.
A reader follows ``CURRENT``, so it always finds either the old or the new complete model; a reader
that followed the old pointer just before the old version was removed retries with the new pointer.
Concurrent saves to one directory are serialised with an advisory lock (``flock``) on the directory.
A save that was killed leaves an unreferenced version folder, removed by the next save. New
directories and files get the usual permissions (the umask decides, as for any other file).

Loading never executes code from the files: JSON and plain numeric arrays only, and the estimator
class is looked up in a fixed allow-list. Only regular files inside the directory are read: symbolic
links (for instance to ``/dev/zero`` or to a file elsewhere), devices and FIFOs are refused without
being opened for reading. ``CURRENT`` records the size and SHA-256 of the manifest, and the manifest
those of the other files; sizes are checked before reading and checksums before parsing. A model
written in another format version is refused, and a damaged or hand-edited manifest or state
(missing keys, wrong types, inconsistent entries) raises :class:`DamagedModelError` naming the file and
the field. After loading, the model is run on one probe document per language; a state that loads
but cannot predict is refused the same way.

References. Parts of a state that are a deterministic function of a local encoder are stored by reference,
identified by a SHA-256 and rebuilt at load time from the local copy (never downloaded): the weights of a B view
that fine-tuning did not change, and the word vectors of an M view over sub-word means (``e5-subword``). A copy
that differs is refused with :class:`ReferenceMismatchError`, naming the state file and the encoder; a
self-contained save (``gfun train --self-contained``) stores them instead.

Models saved by gfun 0.1.0 in the earlier flat layout (``manifest.json``, ``state.json`` and
``arrays.npz`` directly in the directory, no marker) still load, with the same checks except the
manifest checksum, which that layout did not have. gfun does not save over such a directory (it
cannot prove that it wrote it): delete it or choose another directory.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
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
from typing import IO, Any

import numpy as np

import gfun
from gfun.atomic import fsync_directory, write_bytes_atomic
from gfun.errors import DamagedModelError, ModelFormatError, ReferenceMismatchError, UnregisteredViewError
from gfun.state import (  # noqa: F401 - the state flattening helpers are re-exported
    _TrackedDict,
    _Trail,
    load_state,
    load_states,
    prefixed,
    put_state,
    put_states,
    sub_arrays,
)

__all__ = ["FORMAT_VERSION", "DamagedModelError", "ModelFormatError", "ReferenceMismatchError", "UnregisteredViewError",
           "check_model_destination", "load_model", "model_directory_of", "read_manifest", "save_model"]

logger = logging.getLogger(__name__)

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


class _VersionVanished(Exception):
    """A file of the version folder a reader followed is gone (removed by a concurrent save: the reader retries)."""

    def __init__(self, version: str, filename: str) -> None:
        super().__init__(version, filename)
        self.version, self.filename = version, filename


#: The estimators a model directory may hold: class name -> the module that defines it. Loading looks the
#: saved class name up here (never anywhere else); the modules are imported by name when needed, so that this
#: module does not import the estimators (which import it to save themselves).
ESTIMATOR_MODULES: dict[str, str] = {"GeneralizedFunnelling": "gfun.funnelling", "NaiveClassifier": "gfun.baselines",
                                     "FineTunedTransformerClassifier": "gfun.baselines",
                                     "UpperBoundClassifier": "gfun.baselines",
                                     "LRIClassifier": "gfun.crosslingual", "CLESAClassifier": "gfun.crosslingual",
                                     "KCCAClassifier": "gfun.crosslingual", "DCIClassifier": "gfun.crosslingual"}


def _estimators() -> dict[str, type]:
    import importlib

    return {name: getattr(importlib.import_module(module), name) for name, module in ESTIMATOR_MODULES.items()}


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


# ---------------------------------------------------------------------------------------------- ownership
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


def _listing(path: Path, limit: int = 5) -> str:
    names = sorted(os.listdir(path))
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def model_directory_of(path: str | os.PathLike[str]) -> Path | None:
    """The gfun model directory that ``path`` is or lies inside (marked, or in the flat layout), or None."""
    p = Path(os.path.abspath(path))
    for candidate in (p, *p.parents):
        if candidate.is_dir() and (_read_marker(candidate) is not None or _is_legacy_model(candidate)):
            return candidate
    return None


def _probe_writable(directory: Path, shown: Path) -> None:
    probe = directory / f".gfun-write-test.{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        raise PermissionError(f"cannot save a model to {shown}: {directory} is not writable "
                              f"({exc.strerror or exc})") from None
    os.close(fd)
    os.unlink(probe)


def check_model_destination(path: str | os.PathLike[str], *, overwrite: bool = True) -> None:
    """Check, before fitting, that a model can be saved to directory ``path``; raise a clear ``OSError`` if not.

    The destination must be a new path whose nearest existing parent is a writable directory, an empty
    directory, or a gfun model directory (marked with ``.gfun-model``; with ``overwrite=False`` one that
    holds no model yet). A file, a non-empty directory without the marker (the current directory with
    other files in it, a folder of data) and a model in the earlier flat layout are refused.

    Raises
    ------
    NotADirectoryError
        ``path`` (or one of its parents) is a file.
    FileExistsError
        ``path`` is a non-empty directory that gfun did not write, or holds a model and ``overwrite`` is False.
    PermissionError
        The directory (or the parent it would be created in) is not writable.
    """
    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise FileExistsError(f"cannot save a model to {p}: it is a dangling symbolic link")
    if p.exists():
        if not p.is_dir():
            raise NotADirectoryError(f"cannot save a model to {p}: it exists and is not a directory; refusing to "
                                     "replace it")
        marker = _read_marker(p)
        if marker is None and os.listdir(p):
            if _is_legacy_model(p):
                raise FileExistsError(
                    f"cannot save a model to {p}: it holds a model saved by an earlier gfun in the flat layout (no "
                    f"{MARKER} marker), which gfun does not replace because it cannot prove that it wrote every file "
                    "there; delete the directory yourself or save to another one")
            raise FileExistsError(
                f"cannot save a model to {p}: the directory is not empty and is not a gfun model directory (no "
                f"{MARKER} marker); it holds {_listing(p)}. Refusing to write there: choose a new or empty directory")
        if marker is not None and not overwrite and (p / CURRENT).exists():
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
    """Create ``path`` (umask permissions) or adopt it if empty, and mark it as a gfun model directory."""
    path.mkdir(parents=True, exist_ok=True)
    if _read_marker(path) is not None:
        return
    if os.listdir(path):  # something appeared since check_model_destination
        check_model_destination(path)
    marker = {"magic": MARKER_MAGIC, "layout": LAYOUT_VERSION, "created_by": f"gfun {gfun.__version__}",
              "note": "a gfun model directory: `gfun train --model` and save_model replace its CURRENT version; "
                      "the v-* folders and CURRENT belong to gfun"}
    write_bytes_atomic(path / MARKER, (json.dumps(marker, indent=1) + "\n").encode("utf-8"), fsync=True)


def _current_version(path: Path) -> str | None:
    try:
        pointer = json.loads((path / CURRENT).read_bytes()[:_SMALL_FILE].decode("utf-8"))
        version = pointer.get("version") if isinstance(pointer, dict) else None
    except (OSError, ValueError):
        return None
    return version if isinstance(version, str) and _VERSION_RE.match(version) else None


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


# ---------------------------------------------------------------------------------------------- saving
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
    if name not in _estimators():
        raise TypeError(f"cannot save a {name}; supported: {sorted(_estimators())}")
    path = Path(path)
    check_model_destination(path, overwrite=overwrite)
    meta, arrays = model.get_state()
    for key, arr in arrays.items():
        if np.asarray(arr).dtype == object:
            raise TypeError(f"state array {key!r} has dtype object, which cannot be saved safely")
    state = json.dumps(meta, default=_json_default, ensure_ascii=False).encode("utf-8")
    _claim(path)
    with _locked(path):
        if not overwrite and (path / CURRENT).exists():
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
            }
            mbytes = (json.dumps(manifest, indent=1, default=_json_default, ensure_ascii=False) + "\n").encode()
            _write_file(vdir / MANIFEST, mbytes)
            fsync_directory(vdir)
            pointer = {"version": vdir.name, "manifest_sha256": hashlib.sha256(mbytes).hexdigest(),
                       "manifest_size": len(mbytes)}
            write_bytes_atomic(path / CURRENT, (json.dumps(pointer, indent=1) + "\n").encode(), fsync=True)
        except BaseException:
            if _current_version(path) != vdir.name:
                shutil.rmtree(vdir, ignore_errors=True)
            raise
        _remove_stale(path, keep=vdir.name)
    logger.info("saved %s to %s (%s)", name, path, vdir.name)
    return path


# ---------------------------------------------------------------------------------------------- loading
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


def _verified(fh: IO[bytes], shown: Path, *, size: int | None, sha256: str | None, limit: int,
              recorded_in: str) -> IO[bytes]:
    """Check ``fh``'s size (before reading) and checksum; return it rewound."""
    actual = os.fstat(fh.fileno()).st_size
    if size is not None and actual != size:
        raise DamagedModelError(f"{shown} has {actual} bytes but {recorded_in} records {size}: it was truncated or "
                                f"modified after saving, so it cannot match its checksum in {recorded_in}; "
                                "refusing to load it")
    if actual > limit:
        raise DamagedModelError(f"{shown} is {actual} bytes, more than the {limit} allowed for it")
    if sha256 is not None:
        h = hashlib.sha256()
        n = 0
        for block in iter(lambda: fh.read(1 << 20), b""):
            n += len(block)
            if n > actual:
                raise DamagedModelError(f"{shown} grew while it was read; refusing to load it")
            h.update(block)
        if h.hexdigest() != sha256:
            raise DamagedModelError(f"{shown} does not match its checksum in {recorded_in} (the file was modified "
                                    "or truncated after saving); refusing to load it")
        fh.seek(0)
    return fh


def _read_small_json(dir_fd: int, name: str, shown: Path, *, size: int | None = None, sha256: str | None = None,
                     limit: int = _SMALL_FILE, recorded_in: str = "") -> Any:
    with _open_regular(dir_fd, name, shown) as fh:
        _verified(fh, shown, size=size, sha256=sha256, limit=limit, recorded_in=recorded_in)
        data = fh.read(limit + 1)
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise DamagedModelError(f"{shown} is damaged: {exc}") from None


def _field_error(shown: Path, field: str, expected: str, value: Any) -> DamagedModelError:
    text = repr(value)
    return DamagedModelError(f"{shown} is damaged: field {field!r} should be {expected}, got "
                             f"{text if len(text) <= 60 else text[:57] + '...'}")


def _check_manifest(manifest: Any, shown: Path, root: Path, *, layout: bool) -> dict:
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFormatError(f"{shown} does not describe a gfun model")
    version = manifest.get("format_version")
    saved_by = str(manifest.get("gfun_version", "?"))
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            f"{root} was saved by gfun {saved_by} in model format version {version}; this gfun ({gfun.__version__}) "
            f"reads format version {FORMAT_VERSION}. Retrain the model, or load it with gfun {saved_by}.")
    estimators = _estimators()
    name = manifest.get("estimator")
    if not isinstance(name, str) or name not in estimators:
        raise ModelFormatError(f"{root}: unknown estimator {name!r}; this gfun loads {sorted(estimators)}")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise _field_error(shown, "files", "an object of SHA-256 checksums", files)
    for fname in (STATE, ARRAYS):
        if fname not in files:
            raise DamagedModelError(f"{shown} is damaged: the manifest lists no checksum for {fname} "
                                    f"(field 'files/{fname}')")
        if not isinstance(files[fname], str) or not _SHA256_RE.match(files[fname]):
            raise _field_error(shown, f"files/{fname}", "a SHA-256 checksum (64 hex digits)", files[fname])
    sizes = manifest.get("sizes")
    if layout or sizes is not None:
        if not isinstance(sizes, dict):
            raise _field_error(shown, "sizes", "an object of file sizes", sizes)
        for fname in (STATE, ARRAYS):
            value = sizes.get(fname)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise _field_error(shown, f"sizes/{fname}", "a size in bytes", value)
    for key in ("classes", "languages"):
        value = manifest.get(key)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _field_error(shown, key, "a list of strings", value)
    if not isinstance(manifest.get("config", {}), dict):
        raise _field_error(shown, "config", "an object", manifest.get("config"))
    return manifest


def _read_pointer(dir_fd: int, root: Path) -> dict:
    shown = root / CURRENT
    try:
        pointer = _read_small_json(dir_fd, CURRENT, shown)
    except FileNotFoundError:
        raise ModelFormatError(f"{root} is a gfun model directory but holds no complete model ({CURRENT} is "
                               "missing: the first save into it did not finish)") from None
    if not isinstance(pointer, dict):
        raise _field_error(shown, "(top level)", "an object", pointer)
    version = pointer.get("version")
    if not isinstance(version, str) or not _VERSION_RE.match(version):
        raise _field_error(shown, "version", "the name of a v-<timestamp>-<random> folder", version)
    if not isinstance(pointer.get("manifest_sha256"), str) or not _SHA256_RE.match(pointer["manifest_sha256"]):
        raise _field_error(shown, "manifest_sha256", "a SHA-256 checksum (64 hex digits)",
                           pointer.get("manifest_sha256"))
    size = pointer.get("manifest_size")
    if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= _LEGACY_MANIFEST_LIMIT:
        raise _field_error(shown, "manifest_size", "a size in bytes", size)
    return pointer


@contextlib.contextmanager
def _opened_dir(name: str | Path, *, dir_fd: int | None = None, follow: bool = True) -> Iterator[int]:
    flags = os.O_RDONLY | _O_DIRECTORY | (0 if follow else _O_NOFOLLOW)
    fd = os.open(name, flags, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def _locate(root: Path, dir_fd: int) -> tuple[dict, Path, str | None]:
    """The validated manifest of the model in ``root``, the folder holding its files, and its version (if any)."""
    if _read_marker(root) is None:
        try:
            os.stat(MANIFEST, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise ModelFormatError(f"{root} is not a saved gfun model (no {MARKER} marker and no {MANIFEST})") from None
        manifest = _read_small_json(dir_fd, MANIFEST, root / MANIFEST, limit=_LEGACY_MANIFEST_LIMIT)
        return _check_manifest(manifest, root / MANIFEST, root, layout=False), root, None
    pointer = _read_pointer(dir_fd, root)
    version = pointer["version"]
    where = root / version
    try:
        with _opened_dir(version, dir_fd=dir_fd, follow=False) as vfd:
            manifest = _read_small_json(vfd, MANIFEST, where / MANIFEST, size=pointer["manifest_size"],
                                        sha256=pointer["manifest_sha256"], limit=_LEGACY_MANIFEST_LIMIT,
                                        recorded_in=f"{root / CURRENT}")
    except FileNotFoundError as exc:
        raise _VersionVanished(version, Path(exc.filename or version).name) from None
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        if stat.S_ISLNK(os.stat(version, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise DamagedModelError(f"{where} is a symbolic link; a model's folders must be inside its directory, so "
                                    "gfun does not follow it") from None
        raise DamagedModelError(f"{where} (named by {root / CURRENT}) is not a directory") from None
    return _check_manifest(manifest, where / MANIFEST, root, layout=True), where, version


def _read_state(dir_fd: int, where: Path, manifest: dict) -> tuple[dict, dict[str, np.ndarray]]:
    files, sizes = manifest["files"], manifest.get("sizes") or {}
    mname = str(where / MANIFEST)
    with _open_regular(dir_fd, STATE, where / STATE) as fh:
        _verified(fh, where / STATE, size=sizes.get(STATE), sha256=files[STATE], limit=1 << 40,
                  recorded_in=mname)
        raw = fh.read()
    with _open_regular(dir_fd, ARRAYS, where / ARRAYS) as fh:
        _verified(fh, where / ARRAYS, size=sizes.get(ARRAYS), sha256=files[ARRAYS], limit=1 << 40,
                  recorded_in=mname)
        try:
            with np.load(fh, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files}
        except (ValueError, OSError, EOFError, KeyError) as exc:  # object (pickled) arrays, not a zip, ...
            raise DamagedModelError(f"{where / ARRAYS} cannot be read as plain numeric arrays (no pickle, "
                                    f"no object arrays): {exc}") from None
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise DamagedModelError(f"{where / STATE} is damaged: {exc}") from None
    if not isinstance(meta, dict):
        raise _field_error(where / STATE, "(top level)", "an object", meta)
    return meta, arrays


def _resolve(doc: Any, path: str) -> Any:
    for key in path.strip("/").split("/") if path.strip("/") else []:
        if isinstance(doc, dict) and key in doc:
            doc = doc[key]
        elif isinstance(doc, list) and key.isdigit() and int(key) < len(doc):
            doc = doc[int(key)]
        else:
            return None
    return doc


def _blame(trail: list[str], meta: dict, message: str) -> str:
    """The field to name for a failed rebuild: the last one read, or a key of a recently read object that the
    error message names (``max_features must be ...`` raised after a whole ``params`` object was read)."""
    if not trail:
        return "(top level)"
    for path in reversed(trail[-200:]):
        value = _resolve(meta, path) if not path.startswith("arrays:") else None
        if isinstance(value, dict):
            named = [k for k in value if isinstance(k, str) and re.search(rf"\b{re.escape(k)}\b", message)]
            if len(named) == 1:
                return f"{path}/{named[0]}".lstrip("/")
    return trail[-1].lstrip("/")


def _rebuild(cls: type, meta: dict, arrays: dict[str, np.ndarray], where: Path) -> Any:
    """``cls.from_state``; a failure (a damaged state) becomes a DamagedModelError naming the field."""
    try:
        return cls.from_state(meta, arrays)
    except ReferenceMismatchError as exc:  # not damage: this machine's copy of a referenced encoder differs
        raise ReferenceMismatchError(f"{where / STATE}: {exc}") from None
    except UnregisteredViewError as exc:  # not damage either: a view class this process has not registered
        raise UnregisteredViewError(f"{where / STATE}: {exc}") from None
    except (ImportError, OSError, ModelFormatError):  # a missing optional dependency (or view class) is not damage
        raise
    except Exception as exc:  # noqa: BLE001 - any other failure means the state is not one gfun wrote
        trail = _Trail()
        with contextlib.suppress(Exception):
            cls.from_state(_TrackedDict(meta, "", trail), _TrackedDict(arrays, "arrays:", trail))
        field = _blame(trail, meta, str(exc))
        fname, what = STATE, f"field {field!r}"
        if field.startswith("arrays:"):
            fname, what = ARRAYS, f"array {field[len('arrays:/'):]!r}"
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise DamagedModelError(f"{where / fname} is damaged or was edited by hand: {what} ({detail}); "
                                "refusing to load it") from None


def _probe(model: Any, where: Path, manifest: dict) -> None:
    """Refuse a state that loads but is inconsistent: the manifest must agree and one document per language work."""
    for attr, key in (("classes_", "classes"), ("languages_", "languages")):
        if list(getattr(model, attr, [])) != list(manifest[key]):
            raise DamagedModelError(f"{where / STATE} is damaged: field {attr!r} disagrees with field {key!r} of "
                                    f"{where / MANIFEST}; refusing to load it")
    from gfun.corpus import MultilingualCorpus

    langs = list(model.languages_)
    if not langs:
        return
    level = logging.getLogger("gfun").level
    logging.getLogger("gfun").setLevel(logging.ERROR)
    try:
        probe = MultilingualCorpus([f"probe-{i}" for i in range(len(langs))], langs,
                                   ["gfun model check"] * len(langs))
        scores = np.asarray(model.decision_function(probe), dtype=np.float64)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise DamagedModelError(f"{where} is damaged: the state loads but cannot classify a document "
                                f"({type(exc).__name__}: {exc}); refusing to load it") from None
    finally:
        logging.getLogger("gfun").setLevel(level)
    if scores.shape != (len(langs), len(model.classes_)) or not np.isfinite(scores).all():
        raise DamagedModelError(f"{where} is damaged: the state loads but gives scores of shape {scores.shape} (or "
                                f"non-finite scores) for {len(model.classes_)} classes; refusing to load it")


@contextlib.contextmanager
def _opened_root(root: Path) -> Iterator[int]:
    try:
        fd = os.open(root, os.O_RDONLY | _O_DIRECTORY)
    except FileNotFoundError:
        raise ModelFormatError(f"{root} is not a saved gfun model (no such directory)") from None
    except NotADirectoryError:
        raise ModelFormatError(f"{root} is not a saved gfun model (it is a file, not a directory)") from None
    try:
        yield fd
    finally:
        os.close(fd)


def _load_once(root: Path) -> tuple[Any, dict, Path]:
    with _opened_root(root) as dir_fd:
        manifest, where, version = _locate(root, dir_fd)
        try:
            if version is None:
                meta, arrays = _read_state(dir_fd, where, manifest)
            else:
                with _opened_dir(version, dir_fd=dir_fd, follow=False) as vfd:
                    meta, arrays = _read_state(vfd, where, manifest)
        except FileNotFoundError as exc:
            name = Path(exc.filename or "").name or (version or "")
            if version is None:
                raise DamagedModelError(f"{root}: {name} is missing") from None
            raise _VersionVanished(version, name) from None
    model = _rebuild(_estimators()[manifest["estimator"]], meta, arrays, where)
    _probe(model, where, manifest)
    return model, manifest, where


def _load(root: Path) -> tuple[Any, dict, Path]:
    """:func:`_load_once`, retried when a concurrent save removed the version being read."""
    for _ in range(10):
        try:
            return _load_once(root)
        except _VersionVanished as exc:
            if _current_version(root) == exc.version:  # not a concurrent save: the file is really missing
                name = exc.filename if exc.filename != exc.version else f"the folder {exc.version}"
                raise DamagedModelError(f"{root / exc.version}: {name} is missing") from None
            logger.debug("%s was replaced while it was read; reading the new version", root)
    raise DamagedModelError(f"{root} kept being replaced while it was read (10 tries)")


def read_manifest(path: str | os.PathLike[str]) -> dict:
    """The manifest of the model saved in ``path``, checked against ``CURRENT``'s checksum and validated."""
    root = Path(path)
    for _ in range(10):
        try:
            with _opened_root(root) as dir_fd:
                return _locate(root, dir_fd)[0]
        except _VersionVanished:
            continue
    raise DamagedModelError(f"{root} kept being replaced while it was read (10 tries)")


def model_description(model: Any, manifest: dict, path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a loaded model is (``gfun info``, ``GET /model`` of ``gfun serve``): estimator, classes, languages,
    views (and the languages each covers), selected and zero-shot views, whether it gives probabilities, the
    training settings, when and by which gfun version it was saved, the gfun version reading it, its size."""
    from gfun.predictions import has_probabilities

    languages = list(getattr(model, "languages_", manifest.get("languages", [])))
    views = [{"letter": b.name, "name": type(b.view).__name__,
              "languages": [lang for lang in languages if b.view.covers(lang)]}
             for b in getattr(model, "branches_", [])]
    fallback = [{"letter": b.name, "name": type(b.view).__name__} for b in getattr(model, "fallback_branches_", [])]
    return {"model": str(path), "estimator": manifest.get("estimator"), "classes": list(model.classes_),
            "languages": languages, "views": views, "zero_shot_views": fallback,
            "selected_views": getattr(model, "selected_views_", None), "probabilities": has_probabilities(model),
            "settings": manifest.get("config", {}), "created": manifest.get("created"),
            "saved_by_gfun": manifest.get("gfun_version"), "gfun_version": gfun.__version__,
            "size_bytes": sum((manifest.get("sizes") or {}).values()) or None}


def load_model(path: str | os.PathLike[str]) -> Any:
    """Load a model saved by :func:`save_model` (or by gfun 0.1.0 in the flat layout).

    Raises
    ------
    ModelFormatError
        Not a gfun model, an incompatible format version or an unknown estimator.
    DamagedModelError
        A subclass of ModelFormatError: a checksum or size mismatch, a symbolic link or special file
        among the model's files, or a malformed manifest or state (the message names file and field).
    """
    root = Path(path)
    model, manifest, where = _load(root)
    logger.info("loaded %s from %s (saved by gfun %s)", manifest["estimator"], where, manifest.get("gfun_version"))
    return model
