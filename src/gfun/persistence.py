"""Saving and loading fitted models, without pickle.

A saved model is a directory::

    manifest.json   format, format version, gfun version, estimator, configuration, classes,
                    languages, and the SHA-256 of every other file
    state.json      the fitted state's structure and scalars (vocabularies, parameters)
    arrays.npz      the fitted state's numeric arrays (loaded with ``allow_pickle=False``)

Loading never executes code from the files: JSON and plain numeric arrays only, and the
estimator class is looked up in a fixed allow-list. A file whose checksum does not match the
manifest (tampered or truncated) and a model written in another format version are refused
with a clear message.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import gfun

__all__ = ["FORMAT_VERSION", "ModelFormatError", "load_model", "save_model"]

logger = logging.getLogger(__name__)

FORMAT = "gfun-model"
#: Bumped whenever the saved state's layout changes incompatibly.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
STATE = "state.json"
ARRAYS = "arrays.npz"


class ModelFormatError(ValueError):
    """A saved model cannot be loaded: not a gfun model, another format version, or damaged files."""


def sub_arrays(arrays: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    """The arrays stored under ``prefix`` (a component's share of a composite state), with the prefix removed."""
    return {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}


def _estimators() -> dict[str, type]:
    from gfun.baselines import FineTunedTransformerClassifier, NaiveClassifier
    from gfun.funnelling import GeneralizedFunnelling

    return {"GeneralizedFunnelling": GeneralizedFunnelling, "NaiveClassifier": NaiveClassifier,
            "FineTunedTransformerClassifier": FineTunedTransformerClassifier}


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


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


def save_model(model: Any, path: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """Save a fitted gfun estimator to directory ``path`` (written atomically).

    Parameters
    ----------
    model : GeneralizedFunnelling or NaiveClassifier
        A fitted estimator.
    path : path
        Target directory. An existing directory is replaced only if it holds a gfun model.
    overwrite : bool
        Allow replacing an existing saved model.
    """
    name = type(model).__name__
    if name not in _estimators():
        raise TypeError(f"cannot save a {name}; supported: {sorted(_estimators())}")
    path = Path(path)
    if path.exists():
        if not (path / MANIFEST).exists():
            raise FileExistsError(f"{path} exists and is not a saved gfun model; refusing to overwrite it")
        if not overwrite:
            raise FileExistsError(f"{path} already holds a saved model (pass overwrite=True)")
    meta, arrays = model.get_state()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        (tmp / STATE).write_text(json.dumps(meta, default=_json_default, ensure_ascii=False), encoding="utf-8")
        for key, arr in arrays.items():
            if np.asarray(arr).dtype == object:
                raise TypeError(f"state array {key!r} has dtype object, which cannot be saved safely")
        with open(tmp / ARRAYS, "wb") as fh:
            np.savez(fh, **{k: np.asarray(v) for k, v in arrays.items()})
        params = meta.get("params", {})
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "gfun_version": gfun.__version__,
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "estimator": name,
            "config": params,
            "classes": list(getattr(model, "classes_", [])),
            "languages": list(getattr(model, "languages_", [])),
            "files": {f: _sha256(tmp / f) for f in (STATE, ARRAYS)},
        }
        (tmp / MANIFEST).write_text(json.dumps(manifest, indent=1, default=_json_default, ensure_ascii=False)
                                    + "\n", encoding="utf-8")
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            path.rename(old)
            tmp.rename(path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    logger.info("saved %s to %s", name, path)
    return path


def read_manifest(path: str | os.PathLike[str]) -> dict:
    """The manifest of a saved model, validated."""
    path = Path(path)
    mpath = path / MANIFEST
    if not mpath.exists():
        raise ModelFormatError(f"{path} is not a saved gfun model (no {MANIFEST})")
    try:
        manifest = json.loads(mpath.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ModelFormatError(f"{mpath} is damaged: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ModelFormatError(f"{mpath} does not describe a gfun model")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ModelFormatError(
            f"{path} was saved by gfun {manifest.get('gfun_version', '?')} in model format version {version}; "
            f"this gfun ({gfun.__version__}) reads format version {FORMAT_VERSION}. Retrain the model, or load "
            f"it with gfun {manifest.get('gfun_version', '?')}.")
    return manifest


def load_model(path: str | os.PathLike[str]) -> Any:
    """Load a model saved by :func:`save_model`.

    Raises
    ------
    ModelFormatError
        Not a gfun model, an incompatible format version, a checksum mismatch or an unknown estimator.
    """
    path = Path(path)
    manifest = read_manifest(path)
    files = manifest.get("files", {})
    for fname in (STATE, ARRAYS):
        fpath = path / fname
        if fname not in files:
            raise ModelFormatError(f"{path}: the manifest lists no checksum for {fname}")
        if not fpath.exists():
            raise ModelFormatError(f"{path}: {fname} is missing")
        if _sha256(fpath) != files[fname]:
            raise ModelFormatError(f"{path}: {fname} does not match its checksum in {MANIFEST} (the file was "
                                   "modified or truncated after saving); refusing to load it")
    estimators = _estimators()
    name = manifest.get("estimator")
    if name not in estimators:
        raise ModelFormatError(f"{path}: unknown estimator {name!r}; this gfun loads {sorted(estimators)}")
    meta = json.loads((path / STATE).read_text(encoding="utf-8"))
    with np.load(path / ARRAYS, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    model = estimators[name].from_state(meta, arrays)
    logger.info("loaded %s from %s (saved by gfun %s)", name, path, manifest.get("gfun_version"))
    return model
