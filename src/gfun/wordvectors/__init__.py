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

from gfun.wordvectors.base import WordVectorSource, vocabulary_hash
from gfun.wordvectors.dictionaries import find_freedict, freedict_pairs, read_dictd, read_pairs, split_pairs
from gfun.wordvectors.encoder import EncoderWordVectors
from gfun.wordvectors.evaluation import AlignmentReport, evaluate_alignment, translation_precision
from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes
from gfun.wordvectors.vecfile import VecFileSource, read_vec_subset

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
