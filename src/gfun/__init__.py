"""gfun: Generalized Funnelling for cross-lingual multilabel text classification.

The main entry points are :class:`gfun.GeneralizedFunnelling` (the two-tier ensemble),
:class:`gfun.NaiveClassifier` (one monolingual classifier per language),
:class:`gfun.MultilingualCorpus` (documents, languages, labels) and :func:`gfun.evaluate`.
"""

from __future__ import annotations

import logging

from gfun.corpus import CorpusFormatError, Document, MultilingualCorpus, read_corpus

__version__ = "0.1.0"

__all__ = [
    "CorpusFormatError",
    "Document",
    "MultilingualCorpus",
    "__version__",
    "read_corpus",
]

logging.getLogger(__name__).addHandler(logging.NullHandler())
