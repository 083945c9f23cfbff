"""One TF-IDF vocabulary shared by every language: the space of the pooled classifier and of the pooled view.

Languages share many surface tokens (program and package names, technical terms, numbers, loanwords, names), which
per-language vocabularies cannot share; one vocabulary over the documents of all languages lets one classifier see
every language's positives of a class at once, and it represents a document of any language (through the tokens it
shares with the training documents). The analysis is the one a practitioner writes first with scikit-learn:
lower-cased word tokens of two or more word characters, word n-grams, sublinear term frequency, smoothed idf, and
L2-normalised rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from sklearn.feature_extraction.text import CountVectorizer

__all__ = ["PooledTfidf"]


class PooledTfidf:
    """TF-IDF over one vocabulary for the documents of all languages.

    Parameters
    ----------
    ngram_range : (int, int)
        Word n-grams (unigrams and bigrams by default).
    min_df : int
        Minimum number of training documents a term occurs in.
    max_features : int, optional
        Keep the most frequent terms only.

    Attributes
    ----------
    vocabulary_ : list of str
        The terms, in column order.
    idf_ : ndarray (n_terms,)
        ``log((1 + n) / (1 + df)) + 1``, scikit-learn's smoothed idf.
    """

    def __init__(self, ngram_range: tuple[int, int] = (1, 2), min_df: int = 2, max_features: int | None = None) -> None:
        self.ngram_range = tuple(ngram_range)
        self.min_df = min_df
        self.max_features = max_features

    def _counter(self, vocabulary: dict[str, int] | None = None) -> CountVectorizer:
        # imported here: sklearn.feature_extraction would slow every start of gfun, P or not
        from sklearn.feature_extraction.text import CountVectorizer

        return CountVectorizer(ngram_range=self.ngram_range, min_df=1 if vocabulary is not None else self.min_df,
                               max_features=None if vocabulary is not None else self.max_features,
                               vocabulary=vocabulary, dtype=np.float32)

    def fit_transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Learn the vocabulary and idf of ``texts`` (all languages together); return their rows."""
        counter = self._counter()
        try:
            counts = counter.fit_transform(texts)
        except ValueError:  # no term reaches min_df (a handful of documents): keep every term
            counter = self._counter()
            counter.set_params(min_df=1, max_features=None)
            counts = counter.fit_transform(texts)
        terms = counter.get_feature_names_out()
        self.vocabulary_ = [str(t) for t in terms]
        df = np.bincount(counts.indices, minlength=counts.shape[1]).astype(np.float64)
        n = counts.shape[0]
        self.idf_ = (np.log((1.0 + n) / (1.0 + df)) + 1.0).astype(np.float32)
        self._index = {t: i for i, t in enumerate(self.vocabulary_)}
        return self._weigh(counts)

    def transform(self, texts: Sequence[str]) -> sp.csr_matrix:
        """Rows of new documents (of any language: terms outside the vocabulary are ignored)."""
        if not hasattr(self, "_index"):
            self._index = {t: i for i, t in enumerate(self.vocabulary_)}
        counts = self._counter(self._index).transform(texts)
        return self._weigh(counts)

    def _weigh(self, counts: sp.csr_matrix) -> sp.csr_matrix:
        X = sp.csr_matrix(counts, dtype=np.float32, copy=True)
        X.sum_duplicates()
        X.sort_indices()  # the same summation order for a document whether fitted on or transformed
        X.data = 1.0 + np.log(X.data)
        X = X @ sp.diags(self.idf_)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms).astype(np.float32) @ X, dtype=np.float32)

    @property
    def n_features_(self) -> int:
        return len(self.vocabulary_)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        return ({"ngram_range": list(self.ngram_range), "min_df": self.min_df, "max_features": self.max_features,
                 "vocabulary_": self.vocabulary_}, {"idf": self.idf_})

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> PooledTfidf:
        obj = cls(ngram_range=tuple(meta["ngram_range"]), min_df=int(meta["min_df"]),
                  max_features=meta.get("max_features"))
        obj.vocabulary_ = list(meta["vocabulary_"])
        obj.idf_ = np.asarray(arrays["idf"], dtype=np.float32)
        if obj.idf_.shape != (len(obj.vocabulary_),):
            from gfun.errors import DamagedModelError

            raise DamagedModelError(f"pooled TF-IDF: {len(obj.vocabulary_)} terms but an idf of shape {obj.idf_.shape}")
        return obj
