"""Sources of word vectors aligned across languages (the resources of the M and R views).

* :class:`VecFileSource`: ``.vec`` text files (MUSE / fastText), read lazily for a vocabulary;
* :class:`EncoderWordVectors`: vectors derived from a multilingual encoder for any vocabulary
  (default: the offline multilingual-e5-small), cached on disk;
* :class:`ProcrustesAligned`: optional orthogonal refinement of each language onto English with a
  bilingual dictionary (FreeDict databases: :func:`freedict_pairs`);
* :func:`evaluate_alignment`: word-translation precision@1 with cosine and CSLS.

Every source answers ``source.vectors(lang, vocabulary)`` with a ``(len(vocabulary), dim)``
float32 matrix, zero rows for out-of-vocabulary words.  Importing this package does not import
torch.
"""

from __future__ import annotations

import importlib
from typing import Any

# ``procrustes`` is also the name of a submodule: importing that submodule anywhere would rebind the
# package attribute to the module, so the function is bound here (this imports numpy, nothing heavier).
from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes

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
    "AlignmentReport",
    "EncoderWordVectors",
    "ProcrustesAligned",
    "VecFileSource",
    "WordVectorSource",
    "evaluate_alignment",
    "find_freedict",
    "freedict_pairs",
    "procrustes",
    "read_dictd",
    "read_pairs",
    "read_vec_subset",
    "split_pairs",
    "translation_precision",
    "vocabulary_hash",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gfun.wordvectors' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
