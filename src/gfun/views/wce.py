"""The word-class embeddings view (W): TF-IDF-weighted averages of supervised word-class embeddings.

Word-class embeddings (WCEs, Moreo, Esuli and Sebastiani 2021) describe a word by its correlation
with each class of the codeframe, as observed in the training documents. gFun (section 3.3) uses
the *normalised dot product* as the correlation and no dimensionality reduction, so a WCE has
|Y| dimensions, and the dimensions mean the same thing in every language: WCEs of different
languages are aligned by construction.

For one language, with ``X`` the (n x V) TF-IDF matrix of its training documents (equations 1-3,
rows of unit norm) and ``Y`` the (n x |Y|) binary label matrix, this module computes::

    S[w, c]   = sum_d X[d, w] Y[d, c] / sum_d X[d, w]        (normalised dot product)
    WCE[w, c] = (S[w, c] - mean_w' S[w', c]) / std_w' S[w', c]   (each class column z-scored over the vocabulary)

``S[w, c]`` is the share of the TF-IDF mass of word ``w`` that falls in documents of class ``c``
(the "dotn" supervised embeddings of the WCE paper's reference code, followed by its z-scoring of
every dimension). Details fixed here: the standard deviation is the population one (ddof=0);
a class column that is constant over the vocabulary (e.g. a class without positive documents in
this language) becomes all zeros; a word with no TF-IDF mass in the training documents (a word
occurring in every training document has idf 0) gets a zero WCE and is left out of the column
statistics.

The view of a document is then ``l2(sif(x @ WCE))`` with ``x`` its TF-IDF vector (see
:mod:`gfun.views.sif` for the common-component removal, fitted on the training views). A language
without training documents has no WCEs: it is not covered.

Training views. The paper computes the views of the training documents with the WCEs estimated on
those same documents (``train_views="in-sample"``). A word seen in one training document then
carries exactly that document's labels, so training views are cleaner than test views, in the way
in-sample posteriors are over-confident. ``train_views="cv"`` (the default) computes each training document's
view with WCEs estimated on the other folds of its language (test views still use the WCEs of all
the training documents).
"""

from __future__ import annotations

import logging
from typing import Literal

import numpy as np
import scipy.sparse as sp

from gfun.svm.linear import make_folds
from gfun.text.tfidf import TfidfVectorizer
from gfun.views.base import LanguageReach
from gfun.views.embeddings import _TfidfProjectionView
from gfun.views.sif import SIFMode

__all__ = ["WordClassEmbeddingView", "word_class_embeddings"]

logger = logging.getLogger(__name__)


def word_class_embeddings(X: sp.spmatrix | np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Word-class embeddings of a vocabulary: normalised dot product, columns z-scored.

    Parameters
    ----------
    X : sparse or dense matrix of shape (n_docs, n_terms)
        Non-negative term weights (the TF-IDF of one language's training documents).
    Y : array of shape (n_docs, n_classes)
        Binary labels.

    Returns
    -------
    ndarray of shape (n_terms, n_classes), float32
        See the module docstring for the exact definition.
    """
    X = sp.csr_matrix(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    mass = np.asarray(X.sum(axis=0)).ravel()
    live = mass > 0
    S = np.asarray(X.T @ Y)
    S[live] /= mass[live, None]
    S[~live] = 0.0
    out = np.zeros_like(S)
    if live.any():
        mean = S[live].mean(axis=0)
        std = S[live].std(axis=0)
        ok = std > 1e-12
        out[np.ix_(live, ok)] = (S[np.ix_(live, ok)] - mean[ok]) / std[ok]
    return out.astype(np.float32)


class WordClassEmbeddingView(_TfidfProjectionView):
    """Word-class embeddings VGF (letter W): per-language TF-IDF x WCE -> SIF -> L2, |Y| dimensions.

    Parameters
    ----------
    min_df : int
        Minimum document frequency of a term, per language.
    stopwords, stem : bool
        Analyser options (as the Posteriors view's, so by default the same vocabulary).
    sif : {"language", "global", "none"}
        Common-component removal (see :class:`gfun.views.sif.CommonComponents`).
    train_views : {"in-sample", "cv"}
        How the views of the training documents are produced (see the module docstring).
    cv : int
        Folds for ``train_views="cv"``.
    random_state : int, optional
        Seed of the folds.

    Attributes
    ----------
    languages_ : list of str
        Training languages (the only ones covered).
    n_features_out_ : int
        |Y|.
    vectorizers_ : dict of str to TfidfVectorizer
    matrices_ : dict of str to ndarray of shape (n_terms, n_classes)
        The WCE matrix of each language (rows in the vectorizer's column order).
    sif_ : CommonComponents
    """

    letter = "w"
    output = "features"
    description = "word-class embeddings"

    def __init__(self, min_df: int = 1, stopwords: bool = True, stem: bool = True, sif: SIFMode = "language",
                 train_views: Literal["in-sample", "cv"] = "cv", cv: int = 5,
                 random_state: int | None = None) -> None:
        self.min_df = min_df
        self.stopwords = stopwords
        self.stem = stem
        self.sif = sif
        self.train_views = train_views
        self.cv = cv
        self.random_state = random_state

    def _check_fit_params(self) -> None:
        super()._check_fit_params()
        if self.train_views not in ("in-sample", "cv"):
            raise ValueError(f"train_views must be 'in-sample' or 'cv', got {self.train_views!r}")

    def _vectorizer_params(self) -> dict:
        return {"min_df": self.min_df, "stopwords": self.stopwords, "stem": self.stem}

    def _fit_matrix(self, lang: str, vectorizer: TfidfVectorizer, X: sp.csr_matrix, texts: list[str],
                    Y: np.ndarray) -> np.ndarray:
        wce = word_class_embeddings(X, Y)
        logger.info("W view [%s]: WCEs of %d terms x %d classes from %d documents", lang, *wce.shape, X.shape[0])
        return wce

    def _training_views(self, lang: str, X: sp.csr_matrix, Y: np.ndarray, matrix: np.ndarray) -> np.ndarray:
        folds = make_folds(X.shape[0], self.cv, self.random_state) if self.train_views == "cv" else []
        if not folds:
            return np.asarray(X @ matrix, dtype=np.float64)
        out = np.zeros((X.shape[0], matrix.shape[1]))
        for train, test in folds:
            out[test] = X[test] @ word_class_embeddings(X[train], Y[train])
        return out

    def covers(self, lang: str) -> bool:
        return lang in getattr(self, "vectorizers_", {})

    def language_reach(self) -> LanguageReach:
        return "training"

    def embedding(self, lang: str, word: str) -> np.ndarray:
        """The WCE (|Y| values) of a word of language ``lang``.

        The word is analysed as the documents are (case folding, stemming), so ``"Lawyers"`` finds
        the row of ``lawyer``'s stem.

        Raises
        ------
        KeyError
            When the language was not seen in training or the word is not in its vocabulary.
        """
        if lang not in self.vectorizers_:
            raise KeyError(f"no word-class embeddings for language {lang!r} (fitted on {self.languages_})")
        vec = self.vectorizers_[lang]
        terms = vec.analyzer_(word) or [word]
        j = vec.vocabulary_.get(terms[0])
        if j is None:
            raise KeyError(f"word {word!r} ({lang}, term {terms[0]!r}) is not in the training vocabulary")
        return self.matrices_[lang][j]

    def _unseen_views(self, lang: str, texts: list[str]) -> np.ndarray:  # pragma: no cover - covers() is False
        raise AssertionError("unreachable: W covers training languages only")
