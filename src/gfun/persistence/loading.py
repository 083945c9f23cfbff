"""Reading a model directory: the pointer and manifest checked, only regular files inside the directory opened,
sizes and checksums verified before parsing, the estimator rebuilt from the allow-list and probed, a damaged
field named (see :mod:`gfun.persistence`)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import logging
import math
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

import gfun
from gfun.core.state import _TrackedDict, _Trail
from gfun.errors import (
    DamagedModelError,
    LibraryVersionError,
    ModelFormatError,
    ReferenceMismatchError,
    StateArrayError,
    UnregisteredViewError,
)
from gfun.persistence.directory import (
    _LEGACY_MANIFEST_LIMIT,
    _O_DIRECTORY,
    _O_NOFOLLOW,
    _SHA256_RE,
    _SMALL_FILE,
    _VERSION_RE,
    ARRAYS,
    CURRENT,
    ESTIMATOR_MODULES,
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    MARKER,
    STATE,
    _current_version,
    _open_regular,
    _read_marker,
    estimator_class,
)
from gfun.persistence.legacy import upgrade
from gfun.persistence.libraries import LIBRARIES, library_versions, raising_library

__all__ = ["load_model", "model_description", "read_manifest"]

logger = logging.getLogger("gfun.persistence")


class _VersionVanished(Exception):
    """A file of the version folder a reader followed is gone (removed by a concurrent save: the reader retries)."""

    def __init__(self, version: str, filename: str) -> None:
        super().__init__(version, filename)
        self.version, self.filename = version, filename

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
    name = manifest.get("estimator")
    if not isinstance(name, str) or name not in ESTIMATOR_MODULES:
        raise ModelFormatError(f"{root}: unknown estimator {name!r}; this gfun loads {sorted(ESTIMATOR_MODULES)}")
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
        arrays = _read_arrays(fh, where / ARRAYS)
    try:
        meta = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise DamagedModelError(f"{where / STATE} is damaged: {exc}") from None
    if not isinstance(meta, dict):
        raise _field_error(where / STATE, "(top level)", "an object", meta)
    return meta, arrays

#: The most bytes of array data an ``arrays.npz`` may declare: this many times its size on disk (gfun stores its
#: members uncompressed, so a file gfun wrote declares at most its own size), and never less than the floor.
_MAX_EXPANSION = 4
_EXPANSION_FLOOR = 64 << 20
#: numpy dtype kinds a model's arrays may have: booleans, integers, floating-point and complex numbers.
_ARRAY_KINDS = "biufc"


def _member_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, shown: Path) -> tuple[tuple[int, ...], np.dtype, int]:
    """The shape, dtype and size in bytes of data that the ``.npy`` member ``info`` declares, read from its header
    alone (nothing is allocated), checked: a plain numeric dtype, and a data size that matches the member's size."""
    key = info.filename[:-4]
    with zf.open(info) as member:
        version = np.lib.format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = np.lib.format.read_array_header_2_0(member)
        else:
            raise ValueError(f"unsupported .npy format version {version}")
        offset = member.tell()
    if dtype.hasobject or dtype.kind not in _ARRAY_KINDS or dtype.fields is not None:
        raise DamagedModelError(f"{shown} is damaged: array {key!r} has dtype {dtype}, not plain numbers (gfun never "
                                "reads pickled or object arrays); refusing to load it")
    if not all(isinstance(n, int) and n >= 0 for n in shape):
        raise DamagedModelError(f"{shown} is damaged: array {key!r} declares the shape {shape}; refusing to load it")
    nbytes = math.prod(shape) * dtype.itemsize
    if offset + nbytes != info.file_size:
        raise DamagedModelError(f"{shown} is damaged: array {key!r} declares shape {shape} of {dtype} ({nbytes} "
                                f"bytes) but its member holds {info.file_size - offset} bytes of data; refusing to "
                                "load it")
    return shape, dtype, nbytes


def _read_arrays(fh: IO[bytes], shown: Path) -> dict[str, np.ndarray]:
    """The arrays of an ``arrays.npz``, memory bounded before anything is allocated: every member's header is
    read first (its shape and dtype), and the data they declare together may not exceed
    :data:`_MAX_EXPANSION` times the file's size (:data:`_EXPANSION_FLOOR` at least); a member whose data
    does not match its header, a pickled or non-numeric array, or a damaged zip is a DamagedModelError naming
    the file and the array."""
    size = os.fstat(fh.fileno()).st_size
    budget = max(_EXPANSION_FLOOR, _MAX_EXPANSION * size)
    try:
        with zipfile.ZipFile(fh) as zf:
            infos = zf.infolist()
            keys = [info.filename[:-4] for info in infos]
            bad = next((info.filename for info in infos if not info.filename.endswith(".npy")), None)
            if bad is not None:
                raise DamagedModelError(f"{shown} is damaged: member {bad!r} is not a .npy array; refusing to load it")
            if len(set(keys)) != len(keys):
                raise DamagedModelError(f"{shown} is damaged: an array is stored twice; refusing to load it")
            total = 0
            for info in infos:
                total += _member_header(zf, info, shown)[2]
                if total > budget:
                    raise DamagedModelError(
                        f"{shown} is damaged: its arrays declare more than {budget} bytes of data (array "
                        f"{info.filename[:-4]!r} passes that), more than a {size}-byte file gfun writes can hold; "
                        "refusing to load it")
            arrays = {}
            for key, info in zip(keys, infos, strict=True):
                with zf.open(info) as member:
                    arrays[key] = np.lib.format.read_array(member, allow_pickle=False)
            return arrays
    except DamagedModelError:
        raise
    except (ValueError, OSError, EOFError, KeyError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError) as exc:  # not a zip, a bad CRC, an unsupported compression, a truncated member ...
        raise DamagedModelError(f"{shown} cannot be read as plain numeric arrays (no pickle, no object arrays): "
                                f"{exc}") from None


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

#: Exceptions of torch that are failures of the accelerator loading a network (out of its memory, a device error),
#: not of the model's files: raised as they are, not as a damaged state.
ACCELERATOR_FAILURES = ("OutOfMemoryError", "AcceleratorError")


def _version_change(exc: BaseException, saved: Any) -> tuple[str, str, str] | None:
    """``(library, installed, saved)`` when ``exc`` was raised inside a library the manifest recorded (``saved``:
    its ``libraries``) whose installed version is another one; else None."""
    module = raising_library(exc)
    if module is None or not isinstance(saved, dict):
        return None
    name = LIBRARIES[module]
    then, now = saved.get(name), library_versions((module,)).get(name)
    if not isinstance(then, str) or now is None or then == now:
        return None
    return name, now, then


def _rebuild(cls: type, meta: dict, arrays: dict[str, np.ndarray], where: Path, libraries: Any = None) -> Any:
    """``cls.from_state``; a failure (a damaged state) becomes a DamagedModelError naming the field, or a
    LibraryVersionError when it was raised inside a library installed here in another version than the one the
    model was saved with (``libraries``: the manifest's)."""
    try:
        return cls.from_state(meta, arrays)
    except ReferenceMismatchError as exc:  # not damage: this machine's copy of a referenced encoder differs
        raise ReferenceMismatchError(f"{where / STATE}: {exc}") from None
    except UnregisteredViewError as exc:  # not damage either: a view class this process has not registered
        raise UnregisteredViewError(f"{where / STATE}: {exc}") from None
    except (ImportError, OSError, MemoryError, ModelFormatError):  # a missing optional dependency (or view class),
        raise  # or too little memory here, is not damage
    except Exception as exc:  # noqa: BLE001 - any other failure means the state is not one gfun wrote
        if type(exc).__name__ in ACCELERATOR_FAILURES:  # this machine's device, not the files
            raise
        trail = _Trail()
        again: Exception | None = None
        try:
            cls.from_state(_TrackedDict(meta, "", trail), _TrackedDict(arrays, "arrays:", trail))
        except Exception as exc2:  # noqa: BLE001 - the same failure, now with the fields read before it
            again = exc2
        if isinstance(again, StateArrayError) and again.field.startswith("arrays:"):
            field = again.field  # an array of the wrong shape or dtype names itself
        else:
            field = _blame(trail, meta, str(exc))
        fname, what = STATE, f"field {field!r}"
        if field.startswith("arrays:"):
            fname, what = ARRAYS, f"array {field[len('arrays:/'):]!r}"
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        change = _version_change(exc, libraries)
        if change is not None:
            name, now, then = change
            raise LibraryVersionError(
                f"{where / fname}: {name} {now} could not rebuild {what} ({detail}); the model was saved with "
                f"{name} {then}. Its files match the checksums they were saved with, so unless they were edited "
                f"by hand the change of {name} is the likely cause: load it where {name} {then} is installed, or "
                "fit and save it again here") from None
        raise DamagedModelError(f"{where / fname} is damaged or was edited by hand: {what} ({detail}); "
                                "refusing to load it") from None

def _vocabularies(doc: Any, trail: str = "") -> Iterator[tuple[str, Any]]:
    """Every ``vocabulary`` field of a state, with its path (``views/0/state/vectorizers/de/vocabulary``)."""
    if isinstance(doc, dict):
        for key, value in doc.items():
            path = f"{trail}/{key}" if trail else str(key)
            if key == "vocabulary":
                yield path, value
            else:
                yield from _vocabularies(value, path)
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            yield from _vocabularies(value, f"{trail}/{i}")


def _check_values(meta: dict, arrays: dict[str, np.ndarray], where: Path, manifest: dict) -> None:
    """Refuse hand edits that would load and fail later, or silently mislabel: a class list that repeats a class
    (two columns for one name), a vocabulary holding something else than distinct strings (no text's word is a
    number), a Platt parameter that is not a finite number (NaN probabilities for every document)."""
    for field, classes in (("classes", manifest.get("classes")), ("classes_", meta.get("classes_"))):
        if isinstance(classes, list):
            repeated = sorted({str(c) for c in classes if classes.count(c) > 1})
            if repeated:
                shown = where / (MANIFEST if field == "classes" else STATE)
                raise DamagedModelError(f"{shown} is damaged or was edited by hand: field {field!r} repeats the "
                                        f"class(es) {repeated[:3]}; refusing to load it")
    for path, vocabulary in _vocabularies(meta):
        if isinstance(vocabulary, list):
            bad = next((t for t in vocabulary if not isinstance(t, str)), None)
            if bad is not None or len(set(vocabulary)) != len(vocabulary):
                what = (f"holds {type(bad).__name__} {bad!r}, not a word" if bad is not None
                        else "repeats a word")
                raise DamagedModelError(f"{where / STATE} is damaged or was edited by hand: field {path!r} {what}; "
                                        "refusing to load it")
    for key, array in arrays.items():
        name = key.rsplit("/", 1)[-1]
        if name.startswith("platt_") and array.dtype.kind in "fc" and not np.isfinite(array).all():
            raise DamagedModelError(f"{where / ARRAYS} is damaged or was edited by hand: array {key!r} holds NaN or "
                                    "infinite Platt parameters; refusing to load it")


def _probe(model: Any, where: Path, manifest: dict) -> None:
    """Refuse a state that loads but is inconsistent: the manifest must agree and one document per language work."""
    for attr, key in (("classes_", "classes"), ("languages_", "languages")):
        if list(getattr(model, attr, [])) != list(manifest[key]):
            raise DamagedModelError(f"{where / STATE} is damaged: field {attr!r} disagrees with field {key!r} of "
                                    f"{where / MANIFEST}; refusing to load it")
    from gfun.corpus.multilingual import MultilingualCorpus

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
    meta, arrays = upgrade(manifest["estimator"], meta, arrays, format_version=manifest["format_version"])
    _check_values(meta, arrays, where, manifest)
    model = _rebuild(estimator_class(manifest["estimator"]), meta, arrays, where, manifest.get("libraries"))
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

def _view_entry(branch: Any) -> dict:
    """One view of :func:`model_description`: letter, class name, the languages it serves, and for a frozen-encoder
    view the tokens and precision its vectors were computed with (``encoder``)."""
    entry = {"letter": branch.name, "name": type(branch.view).__name__, **branch.view.language_coverage().as_dict()}
    settings = getattr(branch.view, "encoder_settings_", None)
    if settings is not None:
        entry["encoder"] = {"max_length": int(settings["max_length"]), "quantize": bool(settings["quantize"])}
    return entry


def _unseen_views(model: Any) -> list[str] | None:
    """The views whose mean the meta-classifier of languages without training documents reads (``select``'s
    ``unseen="own"``), or ``None`` when the one meta-classifier serves every language."""
    policy = getattr(model, "aggregation_", None)
    own = policy.unseen_language_meta() if policy is not None else None
    return None if own is None else list(own.views)


def model_description(model: Any, manifest: dict, path: str | os.PathLike[str]) -> dict[str, Any]:
    """What a loaded model is (``gfun info``, ``GET /model`` of ``gfun serve``): estimator, classes, languages,
    views (and the languages each serves: its :meth:`~gfun.views.base.ViewGenerator.language_coverage`), whether
    the model serves documents of any language (``any_language``, with the views that do in
    ``any_language_views``), selected and zero-shot views, the views the meta-classifier of languages without
    training documents reads (``unseen_language_views``, ``None`` without one), whether it gives probabilities, the
    training settings,
    when and by which gfun version it was saved, the gfun version reading it, its size.

    Each view's entry holds ``letter``, ``name``, ``languages`` (the training languages it serves),
    ``any_language``, ``reach`` (``"training"``, ``"some"``, ``"any"``) and ``serves`` (the same in words: "de, en",
    "any language (trained on de, en)"). A model without views (a baseline) serves any language when its
    ``language_reach()`` says ``"any"``, else its training languages."""
    from gfun.predictions import has_probabilities

    languages = list(getattr(model, "languages_", manifest.get("languages", [])))
    branches = getattr(model, "branches_", None)
    views = [_view_entry(b) for b in branches or []]
    fallback = [_view_entry(b) for b in getattr(model, "fallback_branches_", [])]
    any_views = [v["letter"] for v in views + fallback if v["any_language"]]
    reach = getattr(model, "language_reach", None)
    any_language = bool(any_views) if branches is not None else bool(callable(reach) and reach() == "any")
    return {"model": str(path), "estimator": manifest.get("estimator"), "classes": list(model.classes_),
            "languages": languages, "any_language": any_language, "any_language_views": any_views,
            "views": views, "zero_shot_views": fallback,
            "selected_views": getattr(model, "selected_views_", None), "unseen_language_views": _unseen_views(model),
            "probabilities": has_probabilities(model),
            "settings": manifest.get("config", {}), "created": manifest.get("created"),
            "saved_by_gfun": manifest.get("gfun_version"), "gfun_version": gfun.__version__,
            "saved_with": _saved_with(manifest.get("libraries")),
            "size_bytes": sum((manifest.get("sizes") or {}).values()) or None}


def _saved_with(saved: Any) -> dict[str, dict[str, str | None]] | None:
    """``{library: {"saved": version, "here": version or None}}`` of the manifest's ``libraries`` (None before
    they were recorded)."""
    if not isinstance(saved, dict):
        return None
    installed = library_versions(tuple(m for m, name in LIBRARIES.items() if name in saved))
    return {str(k): {"saved": str(v), "here": installed.get(str(k))} for k, v in sorted(saved.items())}


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
