"""The pooled view (P): one TF-IDF vocabulary over all languages, one linear SVM per class, calibrated posteriors.

Where the Posteriors view (X) trains one classifier per language on that language's vocabulary, the pooled view
trains one classifier per class on the documents of every language at once, over one shared vocabulary
(:class:`gfun.text.pooled.PooledTfidf`): it sees every language's positives of a class together, shares the tokens
languages have in common (names, technical terms, numbers, loanwords), and represents a document of any language,
so it also serves languages without training documents. Its linear SVMs weigh the classes by their frequency
(``class_weight="balanced"``): one classifier over all languages meets every rare class at its rarest.

The decision scores are mapped to posteriors by Platt sigmoids fitted on out-of-fold scores, as for X. The training
documents' views are out-of-fold by default (``train_posteriors="cv"``): what the meta-classifier learns from them
is what new documents look like.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Literal

import numpy as np

from gfun.corpus.inputs import check_C
from gfun.svm.calibration import fit_platt_or_prior, platt_posteriors
from gfun.svm.linear import LinearOvR, cross_val_decision, fit_linear_ovr, make_folds
from gfun.text.pooled import PooledTfidf
from gfun.views.base import LanguageReach, ViewGenerator
from gfun.views.words import LinearTerms, linear_terms, term_words

__all__ = ["VIEW_TOL", "PooledPosteriorsView", "calibrated_scores", "pooled_scores"]

logger = logging.getLogger(__name__)

#: liblinear stopping tolerance of the pooled views' SVMs (P, E, F). Between scikit-learn's 1e-4 and liblinear's
#: own 0.1: on debtags run 0 it halves P's fit and moves no training posterior by more than 0.003
#: (``benchmarks/bench_view_tol.py``).
VIEW_TOL = 1e-2


def pooled_scores(X: object, Y: np.ndarray, *, C: float, class_weight: str | None, cv: int,
                  random_state: int | None, n_jobs: int | None = None, groups: np.ndarray | None = None,
                  tol: float = VIEW_TOL) -> tuple[LinearOvR, np.ndarray, np.ndarray | None]:
    """One-vs-rest linear SVMs on the pooled rows ``X``: the fitted SVMs, their in-sample decision scores and their
    ``cv``-fold out-of-fold scores (``None`` with too few documents to cross-validate); documents sharing a value
    of ``groups`` stay in one fold; ``tol`` is liblinear's stopping tolerance."""
    fit_kw = {"class_weight": class_weight, "random_state": random_state, "n_jobs": n_jobs, "tol": tol}
    svm = fit_linear_ovr(X, Y, C, **fit_kw)
    folds = make_folds(X.shape[0], cv, random_state, groups)
    held_out = cross_val_decision(X, Y, C, folds, **fit_kw) if folds else None
    return svm, svm.decision_function(X), held_out


def calibrated_scores(in_sample: np.ndarray, held_out: np.ndarray | None, Y: np.ndarray, name: str
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Platt sigmoids of one-vs-rest decision scores, fitted on the out-of-fold scores ``held_out`` (on the in-sample
    ones, with a warning naming the view ``name``, when there are too few documents to cross-validate); a class
    without a positive (or a negative) document gets its smoothed prior. Returns ``(A, B, scores they were fitted
    on)``."""
    if held_out is None:
        logger.warning("%s: %d training document(s), too few to cross-validate; the Platt sigmoids are fitted "
                       "on in-sample scores", name, in_sample.shape[0])
        held_out = in_sample
    A, B, _ = fit_platt_or_prior(held_out, Y)
    return A, B, held_out


class PooledPosteriorsView(ViewGenerator):
    """Pooled VGF (letter P): one TF-IDF vocabulary for all languages -> linear SVMs -> calibrated posteriors.

    Parameters
    ----------
    C : float
        Regularisation of the linear SVMs.
    class_weight : {"balanced", None}
        Class weights of the linear SVMs.
    cv : int
        Folds of the out-of-fold decision scores (Platt sigmoids, out-of-fold training views).
    train_posteriors : {"cv", "in-sample"}
        The training documents' views: out-of-fold (the default) or from the classifiers trained on them.
    ngram_range : (int, int)
        Word n-grams of the vocabulary.
    min_df : int
        Minimum number of training documents (of any language) a term occurs in.
    tol : float
        liblinear's stopping tolerance (:data:`VIEW_TOL`).
    n_jobs : int, optional
        Classes fitted in parallel.
    random_state : int, optional
        Seed of the folds and of liblinear.

    Attributes
    ----------
    tfidf_ : PooledTfidf
    svm_ : LinearOvR
    platt_A_, platt_B_ : ndarray (n_classes,)
    languages_ : list of str
        The training languages (the view serves any language).
    """

    letter = "p"
    output = "posteriors"
    transfers_by_vocabulary = True
    description = "pooled posteriors"

    def __init__(self, C: float = 0.3, class_weight: str | None = "balanced", cv: int = 5,
                 train_posteriors: Literal["cv", "in-sample"] = "cv", ngram_range: tuple[int, int] = (1, 2),
                 min_df: int = 2, tol: float = VIEW_TOL, n_jobs: int | None = None,
                 random_state: int | None = None) -> None:
        self.C = C
        self.class_weight = class_weight
        self.cv = cv
        self.train_posteriors = train_posteriors
        self.ngram_range = ngram_range
        self.min_df = min_df
        self.tol = tol
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, *,
                      groups: np.ndarray | None = None) -> np.ndarray:
        """Fit on the training documents of all languages; ``groups`` (one value per document) keeps the
        translations of one text in one fold of the cross-validation (see
        :meth:`~gfun.views.base.ViewGenerator.takes_groups`)."""
        if self.train_posteriors not in ("in-sample", "cv"):
            raise ValueError(f"train_posteriors must be 'in-sample' or 'cv', got {self.train_posteriors!r}")
        check_C(self.C, "C", allow_cv=False)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int8)
        self.tfidf_ = PooledTfidf(ngram_range=tuple(self.ngram_range), min_df=self.min_df)
        X = self.tfidf_.fit_transform(list(texts))
        self.svm_, in_sample, held_out = pooled_scores(X, Y, C=self.C, class_weight=self.class_weight, cv=self.cv,
                                                       random_state=self.random_state, n_jobs=self.n_jobs,
                                                       groups=groups, tol=self.tol)
        self.platt_A_, self.platt_B_, held_out = calibrated_scores(in_sample, held_out, Y, "P view")
        self.languages_ = sorted({str(lang) for lang in np.asarray(langs, dtype=object)})
        self.n_classes_ = Y.shape[1]
        oof = platt_posteriors(held_out, self.platt_A_, self.platt_B_).astype(np.float32)
        logger.info("P view: %d documents of %d language(s), %d terms", X.shape[0], len(self.languages_),
                    X.shape[1])
        if self.train_posteriors == "cv":
            return oof
        self.train_oof_ = oof  # transient: handed over once by pop_training_oof
        return platt_posteriors(in_sample, self.platt_A_, self.platt_B_).astype(np.float32)

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        X = self.tfidf_.transform(list(texts))
        return platt_posteriors(self.svm_.decision_function(X), self.platt_A_, self.platt_B_).astype(np.float32)

    def covers(self, lang: str) -> bool:
        return hasattr(self, "svm_")

    def linear_terms(self, text: str, lang: str) -> LinearTerms:
        """The terms (words and word bigrams) of one document and their shares ``w_jt * x_t`` of the linear SVMs'
        scores (see :class:`gfun.views.words.LinearTerms`); the view's posteriors are the Platt sigmoids of those
        scores. The language plays no part: the vocabulary is shared."""
        return linear_terms(self.tfidf_.transform([text]), self.svm_.coef, self.svm_.intercept,
                            self.tfidf_.vocabulary_,
                            lambda terms: term_words(text, terms, lambda _: [], lambda token: [token.lower()]))

    def language_reach(self) -> LanguageReach:
        return "any"

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        params = self.get_params()
        params["ngram_range"] = list(params["ngram_range"])
        tfidf_meta, tfidf_arrays = self.tfidf_.get_state()
        meta = {"params": params, "languages_": self.languages_, "n_classes_": self.n_classes_, "tfidf": tfidf_meta}
        arrays = {f"tfidf/{k}": v for k, v in tfidf_arrays.items()}
        arrays.update({"coef": self.svm_.coef, "intercept": self.svm_.intercept, "platt_A": self.platt_A_,
                       "platt_B": self.platt_B_})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> PooledPosteriorsView:
        params = dict(meta["params"])
        params["ngram_range"] = tuple(params["ngram_range"])
        obj = cls(**params)
        obj.tfidf_ = PooledTfidf.from_state(meta["tfidf"], {k[len("tfidf/"):]: v for k, v in arrays.items()
                                                            if k.startswith("tfidf/")})
        obj.svm_ = LinearOvR(arrays["coef"], arrays["intercept"])
        obj.platt_A_, obj.platt_B_ = arrays["platt_A"], arrays["platt_B"]
        obj.languages_ = list(meta["languages_"])
        obj.n_classes_ = int(meta["n_classes_"])
        return obj
