"""CLESA: Cross-Lingual Explicit Semantic Analysis (Sorg & Cimiano 2012, Data & Knowledge Engineering 74).

Method
------
Explicit Semantic Analysis represents a text by its similarity to each of ``m`` *concepts*, each described
by a document (a Wikipedia article in the paper). CL-ESA takes concepts described in several languages
(articles linked across language editions): a document of language ``l`` is compared with the language-``l``
descriptions, so dimension ``j`` means concept ``j`` in every language and the space is shared. Here
similarity is the dot product of TF-IDF vectors (the "dot" setting of the baselines of Esuli et al. 2019),
the document vector is then scaled to unit length, and one-vs-rest linear SVMs classify all languages.

Resource and differences from the paper's setup
-----------------------------------------------
Sorg & Cimiano and Esuli et al. (2019) use Wikipedia articles available in all the languages. gfun uses a
:class:`~gfun.baselines.crosslingual.resources.ParallelCollection` (``parallel``); with ``parallel="auto"`` on debtags,
the concepts are Debian binary packages, described by their English description and its human
translations, restricted to the packages whose source package is among the training documents' (so no test
document is a concept); on SIB-200 the concepts are the training sentences (``index_id``), each in every
language of the collection (:func:`~gfun.baselines.crosslingual.resources.sib200_parallel`: the training documents'
translations, no dev or test sentence). The concepts are the ``max_concepts`` items described in the most languages
(ties broken at random from ``random_state``); unlike Wikipedia articles in every language, a package may
lack some translations: its dimension is then 0 for the documents of those languages. The concepts are
in-domain (package descriptions classifying package descriptions), which Wikipedia is not; any language of
the collection can be served, also without training documents (zero-shot), except one whose few descriptions give
no vocabulary: it is left out with a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from gfun.baselines.crosslingual.base import CrossLingualClassifier, csr_from_state, csr_state, l2_rows
from gfun.baselines.crosslingual.resources import AUTO, ParallelCollection, fit_language_tfidf, resolve_parallel
from gfun.baselines.parts import LinearSVMs
from gfun.text.tfidf import MultilingualTfidf

__all__ = ["CLESAClassifier", "select_items"]

logger = logging.getLogger(__name__)


def select_items(coll: ParallelCollection, languages: Sequence[str], max_items: int | None, min_languages: int,
                 random_state: int | None) -> np.ndarray:
    """Indices of the items described in the most of ``languages`` (at least ``min_languages``), at most
    ``max_items``, ties in random order."""
    cover = np.sum([coll.present(lang) for lang in languages], axis=0) if languages else np.zeros(len(coll))
    tie = np.random.RandomState(random_state).permutation(len(coll))
    order = np.lexsort((tie, -cover))
    order = order[cover[order] >= min_languages]
    return np.sort(order[:max_items] if max_items else order)


class CLESAClassifier(CrossLingualClassifier):
    """Cross-Lingual Explicit Semantic Analysis baseline (see the module docstring).

    Parameters
    ----------
    parallel : ParallelCollection, mapping, path or "auto"
        The concepts (see :func:`gfun.baselines.crosslingual.resources.resolve_parallel`).
    data_dir : str, optional
        The dataset folder that ``parallel="auto"`` reads (the ``debtags`` or ``sib200`` folder the training
        corpus was built from); default ``$GFUN_DATA/<dataset>``. The experiments pass their ``--data-dir``.
    max_concepts : int, optional
        Number of concepts (dimensions); ``None``: every item with ``min_languages`` languages.
    min_languages : int
        Least number of languages a concept must be described in.
    tfidf, classifier, n_jobs, random_state, kernel
        See :class:`gfun.baselines.crosslingual.base.CrossLingualClassifier`.

    Attributes
    ----------
    concepts_ : dict of str to csr_matrix of shape (n_concepts, n_terms)
        The TF-IDF vectors of each language's concept descriptions (zero rows where missing).
    concept_ids_ : list of str
    """

    _name = "CLESA"
    _resource_params = ("parallel",)

    def __init__(self, parallel: Any = AUTO, max_concepts: int | None = 5000, min_languages: int = 2,
                 tfidf: MultilingualTfidf | None = None, classifier: LinearSVMs | None = None,
                 n_jobs: int | None = None,
                 random_state: int | None = None, kernel: str = "linear",
                 data_dir: str | None = None) -> None:
        self.parallel = parallel
        self.data_dir = data_dir
        self.max_concepts = max_concepts
        self.min_languages = min_languages
        self.kernel = kernel
        super().__init__(tfidf, classifier, n_jobs, random_state)

    def _fit_space(self, texts: dict[str, list[str]], Y: dict[str, np.ndarray], X: Any) -> None:
        coll = resolve_parallel(self.parallel, X, self.data_dir)
        langs = sorted(set(texts) | set(coll.languages))
        idx = select_items(coll, langs, self.max_concepts, self.min_languages, self.random_state)
        if not len(idx):
            raise ValueError(f"CLESA: the parallel collection has no item described in {self.min_languages} "
                             f"or more of the languages {langs}")
        coll = coll.subset(idx)
        self.concept_ids_ = list(coll.ids)
        self.vectorizers_, self.concepts_ = {}, {}
        described = {}
        for lang in langs:
            mask = coll.present(lang)
            if not mask.any():
                if lang in texts:
                    raise ValueError(f"CLESA: no concept is described in {lang!r}, a training language")
                continue
            described[lang] = mask, [t for t in coll.texts[lang] if t is not None]
        own = {lang: texts.get(lang, []) for lang in described}
        vectorizers, mats = fit_language_tfidf(
            self._tfidf, {lang: own[lang] + desc for lang, (_, desc) in described.items()}, texts, "CLESA")
        for lang, (mask, _) in described.items():
            if lang not in mats:  # left out (with a warning): too few texts for a vocabulary
                continue
            vec = vectorizers[lang]
            Wp = sp.csr_matrix(mats[lang][len(own[lang]):], dtype=np.float32)  # the descriptions' rows
            W = sp.csr_matrix((Wp.data, Wp.indices, _spread(Wp.indptr, np.flatnonzero(mask), len(coll))),
                              shape=(len(coll), len(vec.vocabulary_)))
            self.vectorizers_[lang], self.concepts_[lang] = vec, W
        self.languages_ = sorted(self.vectorizers_)
        logger.info("CLESA: %d concepts; descriptions per language %s", len(coll),
                    {lang: int(coll.present(lang).sum()) for lang in self.languages_})

    def _project(self, lang: str, Xl: sp.csr_matrix) -> np.ndarray:
        return l2_rows(np.asarray((Xl @ self.concepts_[lang].T.astype(np.float64)).toarray()))

    def _space_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        for lang, W in self.concepts_.items():
            arrays.update(csr_state(W, f"{lang}/"))
        return {"concept_ids": self.concept_ids_}, arrays

    def _load_space(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.concept_ids_ = list(meta["concept_ids"])
        self.concepts_ = {lang: csr_from_state(arrays, f"{lang}/") for lang in self.languages_}


def _spread(indptr: np.ndarray, rows: np.ndarray, n_rows: int) -> np.ndarray:
    """The indptr of a matrix whose rows ``rows`` are those of a CSR matrix with ``indptr`` (others empty)."""
    lengths = np.zeros(n_rows, dtype=np.int64)
    lengths[rows] = np.diff(indptr)
    return np.concatenate([[0], np.cumsum(lengths)])
