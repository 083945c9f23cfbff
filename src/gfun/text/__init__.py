"""Language-aware text analysis and the per-language TF-IDF.

:mod:`gfun.text.analysis`
    Language codes (:func:`~gfun.text.analysis.resolve_language`), tokenisation, stop words, stemming:
    :class:`~gfun.text.analysis.Analyzer` (the tokenisation rules are documented there).
:mod:`gfun.text.tfidf`
    :class:`~gfun.text.tfidf.TfidfVectorizer` (one language, equations 1-3 of the gFun paper) and
    :class:`~gfun.text.tfidf.MultilingualTfidf` (one vectorizer per language).
:mod:`gfun.text.langid`
    Language identification for documents that come without a language code.
"""
