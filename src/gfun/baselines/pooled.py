"""The pooled baseline: what a practitioner writes first — one classifier over one vocabulary shared by all languages.

One TF-IDF vocabulary over the documents of every language (:class:`gfun.text.pooled.PooledTfidf`: word unigrams
and bigrams, sublinear tf, ``min_df=2``) and one-vs-rest linear SVMs with class weights inversely proportional to
class frequency, C chosen by cross-validation on the training documents only (the mean of macro- and micro-F1 of the
out-of-fold predictions, one C for all classes, ties to the smaller C). It classifies documents of any language,
languages without training documents included (through the tokens they share with the training documents).

The paper never measured it: its Naive baseline is one classifier per language, and its Fun and gFun first tiers
fit one vocabulary per language without class weights.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gfun.corpus.inputs import check_C, document_groups, training_data, unpack
from gfun.estimator import LabelPredictionsMixin
from gfun.metrics.measures import f1_from_counts
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.linear import LinearOvR, cross_val_decision, fit_linear_ovr, make_folds
from gfun.text.pooled import PooledTfidf

__all__ = ["POOLED_C_GRID", "PooledClassifier", "choose_C"]

logger = logging.getLogger(__name__)

#: The values of C the pooled baseline's cross-validation chooses from.
POOLED_C_GRID: tuple[float, ...] = (0.1, 0.3, 1.0, 3.0)


def _f1_mean(pred: np.ndarray, Y: np.ndarray) -> float:
    """The mean of macro-F1 and micro-F1 of boolean predictions against boolean labels."""
    tp, fp, fn = (pred & Y).sum(0), (pred & ~Y).sum(0), (~pred & Y).sum(0)
    tn = len(Y) - tp - fp - fn
    macro = float(np.mean(f1_from_counts(tp, fp, fn, tn)))
    micro = float(f1_from_counts(tp.sum(), fp.sum(), fn.sum(), tn.sum()))
    return (macro + micro) / 2


def choose_C(X: Any, Y: np.ndarray, C: float | str, grid: Sequence[float], cv: int, groups: np.ndarray | None,
             name: str, *, random_state: int | None, fit_kw: dict) -> tuple[float, dict[float, float]]:
    """``C`` itself, or with ``C="cv"`` the value of ``grid`` whose one-vs-rest linear models (``fit_kw`` for
    :func:`~gfun.svm.linear.fit_linear_ovr`) give the best mean of macro- and micro-F1 of ``cv``-fold out-of-fold
    predictions (folds keep ``groups`` together; ties to the smaller C; 1 with too few documents to cross-validate).
    Returns ``(C, {C: validated score})``; ``name`` names the estimator in the log line."""
    if C != "cv":
        return float(C), {}
    folds = make_folds(X.shape[0], cv, random_state, groups)
    if not folds:
        return 1.0, {}
    Yb = Y.astype(bool)
    scores = {c: _f1_mean(cross_val_decision(X, Y, c, folds, **fit_kw) > 0, Yb)
              for c in sorted(float(c) for c in grid)}
    best = max(scores, key=lambda c: (scores[c], -c))
    logger.info("%s: validated mean of F1M and F1µ %s; C = %g", name, {c: round(v, 4) for c, v in scores.items()},
                best)
    return best, scores


class PooledClassifier(LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin, BaseEstimator):
    """One linear classifier per class over a vocabulary pooled across languages (``gfun train --method pooled``).

    Parameters
    ----------
    C : float or "cv"
        Regularisation of the linear SVMs; ``"cv"`` chooses one C from ``C_grid`` by ``cv``-fold cross-validation
        on the training documents.
    C_grid : sequence of float
    cv : int
    class_weight : {"balanced", None}
    ngram_range : (int, int)
        Word n-grams of the vocabulary.
    min_df : int
        Minimum number of training documents (of any language) a term occurs in.
    n_jobs : int, optional
        Classes fitted in parallel.
    random_state : int, optional
        Seed of the folds and of liblinear.

    Attributes
    ----------
    classes_ : list of str
    languages_ : list of str
        The training languages (documents of any language are classified).
    tfidf_ : PooledTfidf
    svm_ : LinearOvR
    C_ : float
        The C used.
    cv_scores_ : dict of float to float
        The validated mean of macro- and micro-F1 of each C of the grid (empty when C is given).
    """

    def __init__(self, C: float | str = "cv", C_grid: Sequence[float] = POOLED_C_GRID, cv: int = 3,
                 class_weight: str | None = "balanced", ngram_range: tuple[int, int] = (1, 2), min_df: int = 2,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.C = C
        self.C_grid = C_grid
        self.cv = cv
        self.class_weight = class_weight
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> PooledClassifier:
        """Fit the vocabulary and the classifiers (same inputs as :meth:`GeneralizedFunnelling.fit`).

        The cross-validation that chooses C keeps the translations of one text (a corpus's parallel field, see
        :data:`gfun.corpus.inputs.PARALLEL_FIELDS`) in one fold, as a practitioner's grouped folds would."""
        check_C(self.C, "C")
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if len(texts) == 0:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        Y = np.asarray(Y, dtype=np.int8)
        self.tfidf_ = PooledTfidf(ngram_range=tuple(self.ngram_range), min_df=self.min_df)
        Xs = self.tfidf_.fit_transform(list(texts))
        fit_kw = {"class_weight": self.class_weight, "random_state": self.random_state, "n_jobs": self.n_jobs}
        groups = document_groups(X, len(texts), "auto")
        self.C_, self.cv_scores_ = choose_C(Xs, Y, self.C, self.C_grid, self.cv, groups, "pooled",
                                            random_state=self.random_state, fit_kw=fit_kw)
        self.svm_ = fit_linear_ovr(Xs, Y, self.C_, **fit_kw)
        return self

    def language_reach(self) -> str:
        """``"any"``: one vocabulary for all languages classifies documents of any language (``gfun info``)."""
        return "any"

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Decision scores (n_docs, n_classes) of documents of any language."""
        check_is_fitted(self, "svm_")
        texts, _ = unpack(X, langs)
        return self.svm_.decision_function(self.tfidf_.transform(list(texts)))

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "svm_")
        params = self.get_params()
        params["C_grid"] = list(params["C_grid"])
        params["ngram_range"] = list(params["ngram_range"])
        tfidf_meta, tfidf_arrays = self.tfidf_.get_state()
        meta = {"params": params, "classes_": self.classes_, "languages_": self.languages_, "C_": self.C_,
                "cv_scores_": [[c, s] for c, s in self.cv_scores_.items()], "tfidf": tfidf_meta}
        arrays = {f"tfidf/{k}": v for k, v in tfidf_arrays.items()}
        arrays.update({"coef": self.svm_.coef, "intercept": self.svm_.intercept})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> PooledClassifier:
        params = dict(meta["params"])
        params["C_grid"] = tuple(params["C_grid"])
        params["ngram_range"] = tuple(params["ngram_range"])
        obj = cls(**params)
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.C_ = float(meta["C_"])
        obj.cv_scores_ = {float(c): float(s) for c, s in meta.get("cv_scores_", [])}
        obj.tfidf_ = PooledTfidf.from_state(meta["tfidf"], {k[len("tfidf/"):]: v for k, v in arrays.items()
                                                            if k.startswith("tfidf/")})
        obj.svm_ = LinearOvR(arrays["coef"], arrays["intercept"])
        return obj
