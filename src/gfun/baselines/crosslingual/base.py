"""What the cross-lingual baselines share: per-language TF-IDF, a language-independent space, linear SVMs.

Each baseline (LRI, CLESA, KCCA, DCI) maps the TF-IDF vector of a document of language ``l`` into one
space shared by all languages; one-vs-rest linear SVMs trained on the training documents of every
language, in that space, classify all test documents, as in the setups of Esuli, Moreo & Sebastiani (2019).
A subclass implements :meth:`_fit_space` (learn the mapping), :meth:`_project` (apply it) and
:meth:`_space_state` / :meth:`_load_space` (persistence).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.preprocessing import normalize
from sklearn.utils.validation import check_is_fitted

from gfun.baselines.parts import NestedPartsMixin
from gfun.core.state import checked_array, load_state, load_states, prefixed, put_state, put_states, sub_arrays
from gfun.corpus.inputs import training_data, unpack
from gfun.errors import UnseenLanguageError
from gfun.estimator import LabelPredictionsMixin, check_finite
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.linear import LinearOvR
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer

__all__ = ["CrossLingualClassifier", "csr_from_state", "csr_state", "l2_rows"]

logger = logging.getLogger(__name__)


def csr_state(m: sp.spmatrix, prefix: str) -> dict[str, np.ndarray]:
    """The arrays of a CSR matrix, under ``prefix``."""
    m = sp.csr_matrix(m)
    return {f"{prefix}data": m.data, f"{prefix}indices": m.indices, f"{prefix}indptr": m.indptr,
            f"{prefix}shape": np.asarray(m.shape, dtype=np.int64)}


def csr_from_state(arrays: dict[str, np.ndarray], prefix: str) -> sp.csr_matrix:
    """Inverse of :func:`csr_state`."""
    shape = tuple(int(s) for s in arrays[f"{prefix}shape"])
    return sp.csr_matrix((arrays[f"{prefix}data"], arrays[f"{prefix}indices"], arrays[f"{prefix}indptr"]),
                         shape=shape)


def l2_rows(Z: np.ndarray | sp.spmatrix) -> np.ndarray | sp.csr_matrix:
    """Rows scaled to unit L2 norm (all-zero rows stay zero)."""
    return normalize(Z, norm="l2", axis=1, copy=True)


class CrossLingualClassifier(NestedPartsMixin, LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin,
                             BaseEstimator):
    """Base of the cross-lingual baselines (not used directly).

    ``score`` is the macro-averaged F1, as for every gfun estimator (:class:`gfun.metrics.scoring.MacroF1ScoreMixin`).

    Common parameters
    -----------------
    tfidf : MultilingualTfidf, optional
        The per-language TF-IDF (``None``: the baseline's default, :attr:`parts`).
    classifier : LinearSVMs, optional
        The SVMs in the shared space (``None``: ``LinearSVMs()``, C per class by cross-validated F1);
        ``set_params(classifier__C=1.0)`` sets its parameters (see :mod:`gfun.baselines.parts`).
    n_jobs : int, optional
        Classes fitted in parallel threads.
    random_state : int, optional
    kernel : {"linear", "rbf"}
        Of the SVMs, for the methods with a dense space (CLESA, KCCA, DCI): ``"rbf"`` trains
        :class:`gfun.svm.kernel.RBFSVMOvR` (the classifier's C, chosen the same way), as the authors' code of
        Esuli et al. (2019) does on the dense spaces when it optimises C.

    Attributes (after fit)
    ----------------------
    classes_ : list of str
    languages_ : list of str
        Languages the model can classify.
    vectorizers_ : dict of str to TfidfVectorizer
    svm_ : LinearOvR or RBFSVMOvR
    C_ : ndarray of shape (n_classes,)
    fit_seconds_ : dict of str to float
        ``space`` (learning the mapping) and ``svm`` (the classifiers).
    """

    #: Name in messages and logs.
    _name = "cross-lingual baseline"
    #: Extra (non-common) constructor parameters whose value may not be JSON-serialisable.
    _resource_params: tuple[str, ...] = ()

    def __init__(self, tfidf: Any = None, classifier: Any = None, n_jobs: int | None = None,
                 random_state: int | None = None) -> None:
        """Store the common parameters (each subclass stores its own, then calls this)."""
        self.tfidf = tfidf
        self.classifier = classifier
        self.n_jobs = n_jobs
        self.random_state = random_state

    # -- to implement ---------------------------------------------------------------------------------
    def _fit_space(self, texts: dict[str, list[str]], Y: dict[str, np.ndarray], X: Any) -> None:
        raise NotImplementedError

    def _project(self, lang: str, Xl: sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
        raise NotImplementedError

    def _space_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        raise NotImplementedError

    def _load_space(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------------------
    def _tfidf(self) -> MultilingualTfidf:
        return self.part("tfidf")

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> CrossLingualClassifier:
        """Learn the shared space from the training documents (and the method's resource), then the SVMs.

        Same inputs as :meth:`gfun.baselines.naive.NaiveClassifier.fit`: a labelled
        :class:`~gfun.corpus.multilingual.MultilingualCorpus`, or texts with ``y`` and ``langs``.
        """
        classifier = self.part("classifier")
        classifier.check()
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        self.classes_ = classes
        groups = {lang: np.flatnonzero(lang_arr == lang) for lang in sorted(set(lang_arr.tolist()))}
        t0 = time.perf_counter()
        self._fit_space({lang: [texts[i] for i in idx] for lang, idx in groups.items()},
                        {lang: Y[idx] for lang, idx in groups.items()}, X)
        t1 = time.perf_counter()
        Z = self._transform(texts, lang_arr)
        kernel = getattr(self, "kernel", "linear")
        if kernel not in ("linear", "rbf"):
            raise ValueError(f"kernel must be 'linear' or 'rbf', got {kernel!r}")
        if kernel == "rbf":
            from gfun.svm.kernel import RBFSVMOvR

            self.svm_ = RBFSVMOvR(C=classifier.C, C_grid=classifier.C_grid, cv=classifier.cv, probability=False,
                                  class_weight=classifier.class_weight, n_jobs=self.n_jobs,
                                  random_state=self.random_state).fit(np.asarray(Z), Y)
            self.C_ = np.asarray(self.svm_.C_, dtype=np.float64)
            self.fit_seconds_ = {"space": t1 - t0, "svm": time.perf_counter() - t1}
            return self
        self.svm_, self.C_ = classifier.fit_ovr(Z, Y, random_state=self.random_state, n_jobs=self.n_jobs)
        self.fit_seconds_ = {"space": t1 - t0, "svm": time.perf_counter() - t1}
        logger.info("%s: space of %d dimensions in %.1fs, SVMs in %.1fs", self._name, Z.shape[1],
                    self.fit_seconds_["space"], self.fit_seconds_["svm"])
        return self

    def _transform(self, texts: Sequence[str], lang_arr: np.ndarray) -> np.ndarray | sp.csr_matrix:
        """The documents in the shared space, in input order."""
        unseen = sorted(set(lang_arr.tolist()) - set(self.languages_))
        if unseen:
            raise UnseenLanguageError(f"{self._name} cannot represent language(s) {unseen} (it serves "
                                      f"{self.languages_})", languages=unseen)
        parts, order = [], []
        for lang in sorted(set(lang_arr.tolist())):
            idx = np.flatnonzero(lang_arr == lang)
            Xl = self.vectorizers_[lang].transform([texts[i] for i in idx])
            parts.append(self._project(lang, sp.csr_matrix(Xl, dtype=np.float64)))
            order.append(idx)
        if not parts:
            raise ValueError("no documents")
        inverse = np.argsort(np.concatenate(order), kind="stable")
        if any(sp.issparse(p) for p in parts):
            return sp.vstack([sp.csr_matrix(p) for p in parts], format="csr")[inverse]
        return np.ascontiguousarray(np.vstack(parts)[inverse], dtype=np.float64)

    def transform(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray | sp.csr_matrix:
        """The documents' vectors in the language-independent space (n_docs, n_dimensions)."""
        check_is_fitted(self, "svm_")
        texts, lang_arr = unpack(X, langs)
        return self._transform(texts, lang_arr)

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """SVM scores (n_docs, n_classes)."""
        return check_finite(self.svm_.decision_function(self.transform(X, langs=langs)), f"the {type(self).__name__}")

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "svm_")
        params = self._params_state()
        for name in self._resource_params:  # a collection object is not saved: the fitted space replaces it
            if not isinstance(params[name], str):
                params[name] = None
        smeta, sarrays = self._space_state()
        arrays = prefixed(sarrays, "space/")
        meta: dict = {"params": params, "classes_": self.classes_, "languages_": self.languages_,
                      "vectorizers": put_states(self.vectorizers_, "vec/{}/", arrays), "space": smeta}
        arrays["svm/C"] = self.C_
        if isinstance(self.svm_, LinearOvR):
            arrays["svm/coef"] = self.svm_.coef
            arrays["svm/intercept"] = self.svm_.intercept
        else:
            meta["rbf_svm"] = put_state(self.svm_, "svm/rbf/", arrays)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> CrossLingualClassifier:
        obj = cls(**cls._params_from_state(meta["params"]))
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.vectorizers_ = load_states(TfidfVectorizer, meta["vectorizers"], arrays, "vec/{}/")
        obj._load_space(meta["space"], sub_arrays(arrays, "space/"))
        k = len(obj.classes_)
        if "rbf_svm" in meta:
            from gfun.svm.kernel import RBFSVMOvR

            checked_array(arrays, "svm/rbf/intercept_", (k,), what="one value per class")
            obj.svm_ = load_state(RBFSVMOvR, meta["rbf_svm"], arrays, "svm/rbf/")
        else:
            obj.svm_ = LinearOvR(checked_array(arrays, "svm/coef", (k, None), what="a row per class"),
                                 checked_array(arrays, "svm/intercept", (k,), what="one value per class"))
        obj.C_ = checked_array(arrays, "svm/C", (k,), what="one value per class")
        return obj
