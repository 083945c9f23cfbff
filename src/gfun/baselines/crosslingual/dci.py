"""DCI: Distributional Correspondence Indexing (Moreo, Esuli & Sebastiani 2016, JAIR 55), polylingual setup.

Method
------
DCI represents every term ``t`` of a language by its *distributional correspondence* with a set of
*pivots* that exist in every language, ``profile(t) = [DCF(t, p_1), ..., DCF(t, p_m)]``, computed on that
language's documents; a document's vector is the TF-IDF-weighted sum of its terms' profiles, then
standardised (each dimension to zero mean and unit variance within the language: the paper's "normal"
post-processing, which removes what is language-specific in the scale of the dimensions). Terms that
behave alike with respect to the pivots land close together whatever their language.

Distributional correspondence functions (``dcf``), over the ``D`` documents of the language, with ``t`` and
``p`` read as binary occurrence vectors:

* ``"linear"`` (default, as Esuli et al. 2019): ``P(t | p) - P(t | not p)`` (true positive rate plus true
  negative rate minus 1);
* ``"pmi"``: ``log2(P(t, p) / (P(t) P(p)))``, 0 where a probability is 0.

Resource and differences from the paper's setup
-----------------------------------------------
In the 2016 paper (cross-lingual sentiment) the pivots are source-language words chosen by mutual
information with the labels and carried to the target language with a bilingual dictionary (the
"oracle" of Prettenhofer & Stein). Esuli et al. (2019), having training documents in every language,
use the *classes* as pivots: ``p_c`` is the label vector of class ``c`` over the language's training
documents, so no dictionary is needed and the space has one dimension per class. gfun follows the 2019
setup: the resource is the labelled training data itself, and a language without training documents
cannot be represented (:class:`~gfun.views.base.UnseenLanguageError`). The standardisation uses the
statistics of the language's training documents (the authors' code uses those of whatever batch it
transforms, which makes a prediction depend on the other test documents).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import scipy.sparse as sp

from gfun.baselines.crosslingual.base import CrossLingualClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.text.tfidf import MultilingualTfidf

__all__ = ["DCFS", "DCIClassifier", "correspondence"]

logger = logging.getLogger(__name__)

DCFS = ("linear", "pmi")
_STD_FLOOR = 1e-5


def correspondence(X: sp.spmatrix, P: np.ndarray, dcf: str = "linear") -> np.ndarray:
    """Distributional correspondence of every term (column of ``X``) with every pivot (column of ``P``).

    Parameters
    ----------
    X : sparse matrix of shape (n_docs, n_terms)
        Term weights (only occurrence, ``> 0``, matters).
    P : ndarray of shape (n_docs, n_pivots)
        Pivot occurrence (binary).
    dcf : {"linear", "pmi"}

    Returns
    -------
    ndarray of shape (n_terms, n_pivots)
    """
    if dcf not in DCFS:
        raise ValueError(f"dcf must be one of {DCFS}, got {dcf!r}")
    B = sp.csr_matrix(X, dtype=np.float64, copy=True)
    B.data = (B.data > 0).astype(np.float64)
    P = (np.asarray(P) > 0).astype(np.float64)
    D = B.shape[0]
    tp = np.asarray((B.T @ P), dtype=np.float64)  # docs with term and pivot
    df = np.asarray(B.sum(axis=0)).ravel()[:, None]  # docs with term
    npos = P.sum(axis=0)[None, :]  # docs with pivot
    if dcf == "linear":
        with np.errstate(divide="ignore", invalid="ignore"):
            tpr = np.where(npos > 0, tp / npos, 0.0)
            fpr = np.where(D - npos > 0, (df - tp) / (D - npos), 0.0)
        return tpr - fpr
    with np.errstate(divide="ignore", invalid="ignore"):
        pmi = np.log2(tp * D / (df * npos))
    return np.where((tp > 0) & (df > 0) & (npos > 0), pmi, 0.0)


class DCIClassifier(CrossLingualClassifier):
    """Distributional Correspondence Indexing baseline with the classes as pivots (see the module docstring).

    Parameters
    ----------
    dcf : {"linear", "pmi"}
        Distributional correspondence function.
    tfidf, classifier, n_jobs, random_state, kernel
        See :class:`gfun.baselines.crosslingual.base.CrossLingualClassifier`.

    Attributes
    ----------
    profiles_ : dict of str to ndarray of shape (n_terms, n_classes)
        Each language's term profiles.
    mean_, std_ : dict of str to ndarray of shape (n_classes,)
        Standardisation of each language's document vectors (from its training documents).
    """

    _name = "DCI"

    def __init__(self, dcf: str = "linear", tfidf: MultilingualTfidf | None = None,
                 classifier: LinearSVMs | None = None, n_jobs: int | None = None,
                 random_state: int | None = None, kernel: str = "linear") -> None:
        self.dcf = dcf
        self.kernel = kernel
        super().__init__(tfidf, classifier, n_jobs, random_state)

    def _fit_space(self, texts: dict[str, list[str]], Y: dict[str, np.ndarray], X: Any) -> None:
        if self.dcf not in DCFS:
            raise ValueError(f"dcf must be one of {DCFS}, got {self.dcf!r}")
        self.vectorizers_, self.profiles_, self.mean_, self.std_ = {}, {}, {}, {}
        tfidf = self._tfidf()
        for lang, Xl in tfidf.fit_transform_by_language(texts).items():
            self.vectorizers_[lang] = tfidf.vectorizers_[lang]
            self.profiles_[lang] = correspondence(Xl, Y[lang], self.dcf).astype(np.float32)
            raw = np.asarray(sp.csr_matrix(Xl, dtype=np.float64) @ self.profiles_[lang].astype(np.float64))
            self.mean_[lang] = raw.mean(axis=0)
            self.std_[lang] = np.maximum(raw.std(axis=0), _STD_FLOOR)
        self.languages_ = sorted(self.vectorizers_)

    def _project(self, lang: str, Xl: sp.csr_matrix) -> np.ndarray:
        raw = np.asarray(Xl @ self.profiles_[lang].astype(np.float64))
        return (raw - self.mean_[lang]) / self.std_[lang]

    def _space_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        arrays: dict[str, np.ndarray] = {}
        for lang in self.languages_:
            arrays[f"{lang}/profiles"] = self.profiles_[lang]
            arrays[f"{lang}/mean"] = self.mean_[lang]
            arrays[f"{lang}/std"] = self.std_[lang]
        return {}, arrays

    def _load_space(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        self.profiles_ = {lang: np.asarray(arrays[f"{lang}/profiles"]) for lang in self.languages_}
        self.mean_ = {lang: np.asarray(arrays[f"{lang}/mean"]) for lang in self.languages_}
        self.std_ = {lang: np.asarray(arrays[f"{lang}/std"]) for lang in self.languages_}
