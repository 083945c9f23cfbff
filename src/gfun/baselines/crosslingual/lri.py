"""LRI: Lightweight Random Indexing (Moreo, Esuli & Sebastiani 2016, JAIR 57) for polylingual classification.

Method (the paper's, as the baselines of Esuli et al. 2019 set it up)
------------------------------------------------------------------------
1. Each language's documents get TF-IDF vectors; the *juxtaposed* polylingual space is the union of the
   languages' vocabularies (the training documents of every language live in one space, each language
   filling its own terms).
2. Random Indexing maps every feature ``f`` of the juxtaposed space to a sparse random *index vector* of
   ``n_dimensions`` entries with exactly ``non_zeros`` non-zero values ``±1/sqrt(non_zeros)`` (LRI's
   "lightweight" choice is ``non_zeros=2``); the first non-zero of feature ``f`` sits in dimension
   ``f mod n_dimensions`` (round robin, so that every dimension is used), the others in random distinct
   dimensions, signs at random. A document's vector is the sum of its terms' index vectors weighted by
   TF-IDF, i.e. ``X @ R``: nearly orthogonal index vectors keep the juxtaposed space's geometry.
3. One-vs-rest linear SVMs on the projected training documents of all languages classify every document.

Resource and differences from the paper's setup
-----------------------------------------------
LRI uses no external resource: its cross-lingual signal is the single classifier trained on all languages
plus, with ``shared_terms=True`` (default), the term strings that several languages share (on debtags,
program names, ``gnome``, ``python``, ``library`` ...), which fall on one feature of the juxtaposed space.
``shared_terms=False`` keeps every language's terms apart (a strictly block-diagonal juxtaposition).
Esuli et al. (2019) ran LRI with the reduced space as large as the juxtaposed one (the default here,
``n_dimensions=None``); the index vectors are drawn from ``random_state`` rather than a global seed.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import scipy.sparse as sp

from gfun.baselines.crosslingual.base import CrossLingualClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.text.tfidf import MultilingualTfidf

__all__ = ["LRIClassifier", "random_index_vectors"]

logger = logging.getLogger(__name__)


def random_index_vectors(n_features: int, n_dimensions: int, non_zeros: int = 2,
                         random_state: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """LRI index vectors: for each feature, ``non_zeros`` distinct dimensions and their signed values.

    Returns
    -------
    dims : ndarray of shape (n_features, non_zeros), int32
        ``dims[f, 0] = f % n_dimensions``; the others drawn uniformly among the remaining dimensions.
    values : ndarray of shape (n_features, non_zeros), float32
        ``±1 / sqrt(non_zeros)``.
    """
    if n_dimensions < non_zeros or non_zeros < 1:
        raise ValueError(f"need 1 <= non_zeros <= n_dimensions, got non_zeros={non_zeros}, "
                         f"n_dimensions={n_dimensions}")
    rng = np.random.RandomState(random_state)
    dims = np.empty((n_features, non_zeros), dtype=np.int64)
    dims[:, 0] = np.arange(n_features) % n_dimensions
    if non_zeros == 2:
        dims[:, 1] = (dims[:, 0] + 1 + rng.randint(0, n_dimensions - 1, size=n_features)) % n_dimensions
    elif non_zeros > 2:
        for f in range(n_features):
            others = rng.choice(n_dimensions - 1, size=non_zeros - 1, replace=False)
            dims[f, 1:] = (dims[f, 0] + 1 + others) % n_dimensions
    values = (rng.randint(0, 2, size=(n_features, non_zeros)) * 2.0 - 1.0) / np.sqrt(non_zeros)
    return dims.astype(np.int32), values.astype(np.float32)


class LRIClassifier(CrossLingualClassifier):
    """Lightweight Random Indexing baseline (see the module docstring).

    Parameters
    ----------
    n_dimensions : int, optional
        Dimensions of the random-indexing space; ``None``: the number of juxtaposed features.
    non_zeros : int
        Non-zero values per index vector (2 in LRI).
    shared_terms : bool
        Identical term strings of different languages share one juxtaposed feature.
    tfidf, classifier, n_jobs, random_state
        See :class:`gfun.baselines.crosslingual.base.CrossLingualClassifier`.

    Attributes
    ----------
    n_dimensions_ : int
    features_ : dict of str to ndarray
        For each language, the juxtaposed feature of each of its vectorizer's terms.
    dims_, values_ : ndarray
        The index vectors of the juxtaposed features (:func:`random_index_vectors`).
    """

    _name = "LRI"

    def __init__(self, n_dimensions: int | None = None, non_zeros: int = 2, shared_terms: bool = True,
                 tfidf: MultilingualTfidf | None = None, classifier: LinearSVMs | None = None,
                 n_jobs: int | None = None,
                 random_state: int | None = None) -> None:
        self.n_dimensions = n_dimensions
        self.non_zeros = non_zeros
        self.shared_terms = shared_terms
        super().__init__(tfidf, classifier, n_jobs, random_state)

    def _fit_space(self, texts: dict[str, list[str]], Y: dict[str, np.ndarray], X: Any) -> None:
        self.vectorizers_ = self._tfidf().fit_by_language(texts).vectorizers_
        self.languages_ = sorted(self.vectorizers_)
        keys = {lang: [t if self.shared_terms else f"{lang}:{t}" for t in vec.get_feature_names_out()]
                for lang, vec in self.vectorizers_.items()}
        feature = {k: i for i, k in enumerate(sorted(set().union(*[set(v) for v in keys.values()])))}
        self.features_ = {lang: np.array([feature[k] for k in ks], dtype=np.int64) for lang, ks in keys.items()}
        n_features = len(feature)
        self.n_dimensions_ = int(self.n_dimensions) if self.n_dimensions else n_features
        self.dims_, self.values_ = random_index_vectors(n_features, self.n_dimensions_, self.non_zeros,
                                                        self.random_state)
        self._R: dict[str, sp.csr_matrix] = {}
        logger.info("LRI: %d juxtaposed features -> %d dimensions", n_features, self.n_dimensions_)

    def _matrix(self, lang: str) -> sp.csr_matrix:
        """The (n_terms of ``lang``, n_dimensions) random-indexing matrix of a language (built once)."""
        cache = self.__dict__.setdefault("_R", {})
        if lang not in cache:
            f, k = self.features_[lang], self.non_zeros
            R = sp.csr_matrix((self.values_[f].ravel().astype(np.float64), self.dims_[f].ravel(),
                               np.arange(0, len(f) * k + 1, k)), shape=(len(f), self.n_dimensions_))
            R.sum_duplicates()
            cache[lang] = R
        return cache[lang]

    def _project(self, lang: str, Xl: sp.csr_matrix) -> sp.csr_matrix:
        return sp.csr_matrix(Xl @ self._matrix(lang))

    def _space_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays = {"dims": self.dims_, "values": self.values_}
        arrays.update({f"features/{lang}": f for lang, f in self.features_.items()})
        return {"n_dimensions": self.n_dimensions_}, arrays

    def _load_space(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.n_dimensions_ = int(meta["n_dimensions"])
        self.dims_, self.values_ = np.asarray(arrays["dims"]), np.asarray(arrays["values"])
        self.features_ = {lang: np.asarray(arrays[f"features/{lang}"]) for lang in self.languages_}
        self._R = {}
