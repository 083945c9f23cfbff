"""Language-aware text analysis and the per-language TF-IDF (re-exported from the modules that hold them).

:mod:`gfun.analysis`
    Language codes (:func:`resolve_language`), tokenisation, stop words, stemming: :class:`Analyzer`
    (the tokenisation rules are documented there).
:mod:`gfun.tfidf`
    :class:`TfidfVectorizer` (one language, equations 1-3 of the gFun paper) and :class:`MultilingualTfidf`
    (one vectorizer per language).
"""

from __future__ import annotations

from gfun.analysis import ANALYZER_VERSION, Analyzer, UnknownLanguageError, resolve_language
from gfun.tfidf import STATE_VERSION, MultilingualTfidf, TfidfVectorizer

__all__ = ["ANALYZER_VERSION", "STATE_VERSION", "Analyzer", "MultilingualTfidf", "TfidfVectorizer",
           "UnknownLanguageError", "resolve_language"]
