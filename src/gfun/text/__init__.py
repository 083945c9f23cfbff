"""Language-aware text analysis and the per-language TF-IDF (re-exported from the modules that hold them).

:mod:`gfun.text.analysis`
    Language codes (:func:`resolve_language`), tokenisation, stop words, stemming: :class:`Analyzer`
    (the tokenisation rules are documented there).
:mod:`gfun.text.tfidf`
    :class:`TfidfVectorizer` (one language, equations 1-3 of the gFun paper) and :class:`MultilingualTfidf`
    (one vectorizer per language).
"""
