"""The Posteriors view (X): per-language TF-IDF, linear SVMs and Platt calibration.

For each language, one linear SVM per class is trained on that language's TF-IDF vectors; its
decision scores are mapped to calibrated posteriors by a Platt sigmoid fitted on
cross-validated decision scores (as libsvm's ``probability=True`` does internally). The view of
a document is the vector of |Y| posteriors, comparable across languages.

The posteriors of the training documents are produced either in-sample, by the classifiers
trained on them (the paper's Fun(TAT), the default), or out-of-fold (``train_posteriors="cv"``).

The languages are fitted as parallel jobs; where they are too few jobs for the workers (a Dask cluster), each
language's classes are split into blocks, more for a language with more work (:func:`gfun.core.parallel.
weighted_blocks`), each block a job, with the same models.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from joblib import delayed

from gfun.core.parallel import run_parallel, weighted_blocks
from gfun.core.state import checked_array, load_state, put_state
from gfun.corpus.inputs import check_C
from gfun.svm.calibration import fit_platt_or_prior, platt_posteriors
from gfun.svm.linear import LinearOvR, cross_val_decision, fit_linear_ovr, make_folds
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer
from gfun.views.base import LanguageReach, ViewGenerator
from gfun.views.words import LinearTerms, linear_terms, term_words

__all__ = ["PosteriorsView"]

logger = logging.getLogger(__name__)


@dataclass
class _LanguageModel:
    vectorizer: TfidfVectorizer
    svm: LinearOvR
    platt_A: np.ndarray
    platt_B: np.ndarray

    def posteriors(self, texts: Sequence[str]) -> np.ndarray:
        X = self.vectorizer.transform(texts)
        return platt_posteriors(self.svm.decision_function(X), self.platt_A, self.platt_B)


@dataclass
class _ClassBlock:
    """What the job of some classes of one language returns: their SVMs, sigmoids and training posteriors."""

    svm: LinearOvR
    platt_A: np.ndarray
    platt_B: np.ndarray
    constant: np.ndarray  # classes without a positive (or a negative) training document here
    posteriors: np.ndarray  # float32: in-sample or out-of-fold, by ``train_posteriors``
    held_out: np.ndarray  # float32: out-of-fold (in-sample when the documents are too few to cross-validate)
    cross_validated: bool


def _fit_classes(X: sp.csr_matrix, Y: np.ndarray, *, C: float, loss: str, class_weight: str | None, cv: int,
                 train_posteriors: str, random_state: int | None) -> _ClassBlock:
    """The linear SVMs of some classes (the columns of ``Y``) of one language, their Platt sigmoids fitted on
    ``cv``-fold out-of-fold decision scores (on in-sample scores with too few documents to cross-validate), and the
    training documents' posteriors. Every class is fitted on its own: blocks of classes give the same numbers as
    all of them at once, and the whole of a block's work runs where its job runs."""
    fit_kw = {"loss": loss, "class_weight": class_weight, "random_state": random_state}
    svm = fit_linear_ovr(X, Y, C, **fit_kw)
    folds = make_folds(X.shape[0], cv, random_state)
    in_sample = svm.decision_function(X)
    held_out = cross_val_decision(X, Y, C, folds, **fit_kw) if folds else in_sample
    A, B, constant = fit_platt_or_prior(held_out, Y)
    out_of_fold = platt_posteriors(held_out, A, B).astype(np.float32)
    scores = platt_posteriors(in_sample, A, B).astype(np.float32) if train_posteriors == "in-sample" else out_of_fold
    return _ClassBlock(svm, A, B, constant, scores, out_of_fold, bool(folds))


def _language_model(lang: str, vec: TfidfVectorizer, X: sp.csr_matrix, parts: list[_ClassBlock]
                    ) -> tuple[_LanguageModel, np.ndarray, np.ndarray]:
    """One language's model from its class blocks (in class order); returns it with the training documents'
    posteriors (in-sample or out-of-fold, by ``train_posteriors``) and their out-of-fold posteriors."""
    svm = LinearOvR(np.vstack([part.svm.coef for part in parts]),
                    np.concatenate([part.svm.intercept for part in parts]))
    model = _LanguageModel(vec, svm, np.concatenate([part.platt_A for part in parts]),
                           np.concatenate([part.platt_B for part in parts]))
    if not parts[0].cross_validated:
        logger.warning("language %r has %d training document(s): too few to cross-validate; the Platt "
                       "sigmoids are fitted on in-sample scores", lang, X.shape[0])
    logger.info("X view: language %s fitted (%d docs, %d terms, %d constant classes)", lang, X.shape[0],
                X.shape[1], int(sum(part.constant.sum() for part in parts)))
    return model, np.hstack([part.posteriors for part in parts]), np.hstack([part.held_out for part in parts])


def _fit_language(lang: str, vec: TfidfVectorizer, X: sp.csr_matrix, Y: np.ndarray, *, C: float, loss: str,
                  class_weight: str | None, cv: int, train_posteriors: str, random_state: int | None,
                  ) -> tuple[_LanguageModel, np.ndarray, np.ndarray]:
    """One language's model, all its classes in one job (see :func:`_language_model`)."""
    part = _fit_classes(X, Y, C=C, loss=loss, class_weight=class_weight, cv=cv, train_posteriors=train_posteriors,
                        random_state=random_state)
    return _language_model(lang, vec, X, [part])


class PosteriorsView(ViewGenerator):
    """Posteriors VGF (letter X): per-language TF-IDF -> linear SVMs -> calibrated posteriors.

    Parameters
    ----------
    C : float
        Regularisation of the linear SVMs.
    loss : {"squared_hinge", "hinge"}
        liblinear loss of the linear SVMs.
    class_weight : {None, "balanced"}
    cv : int
        Folds for the out-of-fold decision scores the Platt sigmoids are fitted on.
    train_posteriors : {"in-sample", "cv"}
        How the posteriors of the training documents are produced: by the classifiers trained on
        them (Fun(TAT), the paper's choice) or out-of-fold.
    min_df : int
        Minimum document frequency of a term, per language.
    stopwords, stem : bool
        Analyser options (see :class:`gfun.text.analysis.Analyzer`).
    n_jobs : int, optional
        Languages fitted in parallel (threads by default: liblinear releases the GIL; see
        :mod:`gfun.core.parallel` for processes or a Dask cluster).
    random_state : int, optional
        Seed of the folds and of liblinear.

    Attributes
    ----------
    languages_ : list of str
    n_classes_ : int
    models_ : dict of str to fitted per-language models
    train_oof_ : ndarray (n_docs, n_classes)
        Out-of-fold posteriors of the training documents (whatever ``train_posteriors``), left by
        :meth:`fit_transform` (gFun reads them to validate its meta-classifier on test-like inputs, and
        drops them).
    """

    letter = "x"
    output = "posteriors"
    from_estimator = ("n_jobs", "random_state", "train_posteriors")
    description = "posteriors"

    def __init__(self, C: float = 1.0, loss: str = "squared_hinge", class_weight: str | None = None,
                 cv: int = 5, train_posteriors: Literal["in-sample", "cv"] = "in-sample", min_df: int = 1,
                 stopwords: bool = True, stem: bool = True, n_jobs: int | None = None,
                 random_state: int | None = None) -> None:
        self.C = C
        self.loss = loss
        self.class_weight = class_weight
        self.cv = cv
        self.train_posteriors = train_posteriors
        self.min_df = min_df
        self.stopwords = stopwords
        self.stem = stem
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _vectorizer_params(self) -> dict:
        return {"min_df": self.min_df, "stopwords": self.stopwords, "stem": self.stem}

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray) -> np.ndarray:
        if self.train_posteriors not in ("in-sample", "cv"):
            raise ValueError(f"train_posteriors must be 'in-sample' or 'cv', got {self.train_posteriors!r}")
        check_C(self.C, "C", allow_cv=False)
        langs = np.asarray(langs, dtype=object)
        Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.int8)
        tfidf = MultilingualTfidf(**self._vectorizer_params(), n_jobs=self.n_jobs)
        matrices = tfidf.fit_transform(texts, langs)
        languages = list(matrices)
        groups = {lang: rows for lang, (rows, _) in matrices.items()}
        fit_kw = {"C": self.C, "loss": self.loss, "class_weight": self.class_weight, "cv": self.cv,
                  "train_posteriors": self.train_posteriors, "random_state": self.random_state}
        blocks = weighted_blocks(Y.shape[1], [X.nnz for _, X in matrices.values()], self.n_jobs)
        if all(len(b) == 1 for b in blocks):  # a job per language
            results = run_parallel((delayed(_fit_language)(lang, tfidf.vectorizers_[lang], X, Y[rows], **fit_kw)
                                    for lang, (rows, X) in matrices.items()), self.n_jobs)
        else:  # a job per language and block of classes, more blocks for more work; here, only their assembly
            parts = run_parallel((delayed(_fit_classes)(X, Y[rows][:, block], **fit_kw)
                                  for (rows, X), lang_blocks in zip(matrices.values(), blocks, strict=True)
                                  for block in lang_blocks), self.n_jobs)
            ends = np.cumsum([len(b) for b in blocks])
            results = [_language_model(lang, tfidf.vectorizers_[lang], X, parts[end - len(lang_blocks):end])
                       for (lang, (_, X)), lang_blocks, end in zip(matrices.items(), blocks, ends, strict=True)]
        self.languages_ = languages
        self.n_classes_ = Y.shape[1]
        self.models_ = {lang: model for lang, (model, _, _) in zip(languages, results, strict=True)}
        out = np.zeros(Y.shape, dtype=np.float32)
        oof = np.zeros(Y.shape, dtype=np.float32)
        for idx, (_, post, held_out) in zip(groups.values(), results, strict=True):
            out[idx] = post
            oof[idx] = held_out
        self.train_oof_ = oof  # transient: handed over once by pop_training_oof
        return out

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        langs = np.asarray(langs, dtype=object)
        self._check_languages(langs)
        out = np.zeros((len(texts), self.n_classes_), dtype=np.float32)
        for lang in np.unique(langs):
            idx = np.flatnonzero(langs == lang)
            out[idx] = self.models_[lang].posteriors([texts[i] for i in idx])
        return out

    def covers(self, lang: str) -> bool:
        return lang in getattr(self, "models_", {})

    def linear_terms(self, text: str, lang: str) -> LinearTerms:
        """The terms of one document of ``lang`` and their shares ``w_jt * x_t`` of the scores of the language's
        linear SVMs (see :class:`gfun.views.words.LinearTerms`); the view's posteriors are the Platt sigmoids of
        those scores."""
        self._check_languages(np.asarray([lang], dtype=object))
        model = self.models_[lang]
        vec = model.vectorizer
        analyzer = vec.analyzer_
        return linear_terms(vec.transform([text]), model.svm.coef, model.svm.intercept, vec.get_feature_names_out(),
                            lambda terms: term_words(text, terms, analyzer.tokenize, analyzer))

    def language_reach(self) -> LanguageReach:
        return "training"

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta: dict = {"params": self.get_params(), "languages_": self.languages_, "n_classes_": self.n_classes_,
                      "vectorizers": {}}
        arrays: dict[str, np.ndarray] = {}
        for lang, m in self.models_.items():
            meta["vectorizers"][lang] = put_state(m.vectorizer, f"{lang}/vec/", arrays)
            arrays[f"{lang}/coef"] = m.svm.coef
            arrays[f"{lang}/intercept"] = m.svm.intercept
            arrays[f"{lang}/platt_A"] = m.platt_A
            arrays[f"{lang}/platt_B"] = m.platt_B
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> PosteriorsView:
        obj = cls(**meta["params"])
        obj.languages_ = list(meta["languages_"])
        obj.n_classes_ = int(meta["n_classes_"])
        obj.models_ = {}
        k = obj.n_classes_
        for lang in obj.languages_:
            vec = load_state(TfidfVectorizer, meta["vectorizers"][lang], arrays, f"{lang}/vec/")
            coef, intercept, platt_A, platt_B = (
                checked_array(arrays, f"{lang}/{name}", shape, what=what) for name, shape, what in (
                    ("coef", (k, len(vec.vocabulary_)), "a row per class, a column per term of the vocabulary"),
                    ("intercept", (k,), "one value per class"), ("platt_A", (k,), "one value per class"),
                    ("platt_B", (k,), "one value per class")))
            obj.models_[lang] = _LanguageModel(vec, LinearOvR(coef, intercept), platt_A, platt_B)
        return obj
