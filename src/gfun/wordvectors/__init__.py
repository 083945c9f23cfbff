"""Sources of word vectors aligned across languages (the resources of the M and R views).

* :class:`VecFileSource`: ``.vec`` text files (MUSE / fastText), read lazily for a vocabulary;
* :class:`EncoderWordVectors`: vectors derived from a multilingual encoder for any vocabulary
  (default: the offline multilingual-e5-small), cached on disk;
* :class:`ProcrustesAligned`: optional orthogonal refinement of each language onto English with a
  bilingual dictionary (FreeDict databases: :func:`freedict_pairs`);
* :func:`evaluate_alignment`: word-translation precision@1 with cosine and CSLS.
* :func:`make_source`: a source from a short spec (``"e5"``, ``"e5-subword"``, ``"vec:DIR"``, ...).

Every source answers ``source.vectors(lang, vocabulary)`` with a ``(len(vocabulary), dim)``
float32 matrix, zero rows for out-of-vocabulary words.  Importing this package does not import
torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# ``procrustes`` is also the name of a submodule: importing that submodule anywhere would rebind the
# package attribute to the module, so the function is bound here (this imports numpy, nothing heavier).
from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes

if TYPE_CHECKING:
    from gfun.wordvectors.base import WordVectorSource

# Imported on first use, so that ``gfun --help`` (which registers ``gfun embeddings``) stays fast.
_LAZY = {
    "WordVectorSource": "gfun.wordvectors.base",
    "vocabulary_hash": "gfun.wordvectors.base",
    "find_freedict": "gfun.wordvectors.dictionaries",
    "freedict_pairs": "gfun.wordvectors.dictionaries",
    "read_dictd": "gfun.wordvectors.dictionaries",
    "read_pairs": "gfun.wordvectors.dictionaries",
    "split_pairs": "gfun.wordvectors.dictionaries",
    "EncoderWordVectors": "gfun.wordvectors.encoder",
    "AlignmentReport": "gfun.wordvectors.evaluation",
    "evaluate_alignment": "gfun.wordvectors.evaluation",
    "translation_precision": "gfun.wordvectors.evaluation",
    "VecFileSource": "gfun.wordvectors.vecfile",
    "read_vec_subset": "gfun.wordvectors.vecfile",
}

__all__ = [
    "SOURCE_HELP",
    "AlignmentReport",
    "EncoderWordVectors",
    "ProcrustesAligned",
    "VecFileSource",
    "WordVectorSource",
    "evaluate_alignment",
    "find_freedict",
    "freedict_pairs",
    "make_source",
    "procrustes",
    "read_dictd",
    "read_pairs",
    "read_vec_subset",
    "split_pairs",
    "translation_precision",
    "vocabulary_hash",
]


SOURCE_HELP = (
    "word-vector source: 'e5' (multilingual-e5-small, each word encoded in isolation), 'e5-subword' "
    "(mean of its sub-word input embeddings), 'encoder:SPEC' / 'encoder-subword:SPEC' (any encoder spec: "
    "folder or cached HF id), 'vec:PATH' (a folder of <lang>.vec / wiki.multi.<lang>.vec files, or a "
    "template with {lang})"
)


def make_source(spec: str, *, cache_dir: str | None = None, **options: Any) -> WordVectorSource:
    """Build a word-vector source from a short spec (see ``SOURCE_HELP``).

    Parameters
    ----------
    spec : str
        ``"e5"``, ``"e5-subword"``, ``"encoder:<model spec>"``, ``"encoder-subword:<model spec>"``
        or ``"vec:<folder or template>"``.
    cache_dir : str, optional
        gfun cache root.
    **options
        Passed to the source's constructor.

    Returns
    -------
    WordVectorSource
    """
    from gfun.wordvectors.encoder import EncoderWordVectors
    from gfun.wordvectors.vecfile import VecFileSource

    kind, _, arg = spec.partition(":")
    if kind in ("e5", "encoder") and (arg or kind == "e5"):
        return EncoderWordVectors(arg or "multilingual-e5-small", cache_dir=cache_dir, **options)
    if kind in ("e5-subword", "encoder-subword") and (arg or kind == "e5-subword"):
        return EncoderWordVectors(
            arg or "multilingual-e5-small", method="subword-mean", cache_dir=cache_dir, **options
        )
    if kind == "vec" and arg:
        return VecFileSource(arg, cache_dir=cache_dir, **options)
    raise ValueError(f"unknown word-vector source {spec!r}; {SOURCE_HELP}")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gfun.wordvectors' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
