"""Multilingual multilabel corpora: documents, their files, and the inputs estimators accept.

:mod:`gfun.corpus.multilingual` (:class:`~gfun.corpus.multilingual.MultilingualCorpus`,
:class:`~gfun.corpus.multilingual.Document`, :func:`~gfun.corpus.multilingual.read_corpus`), :mod:`gfun.corpus.files`
(the JSONL and TSV formats) and :mod:`gfun.corpus.inputs` (what ``fit``/``predict`` accept, turned into texts,
languages and a label matrix).
"""
