"""Baselines: Naive (one monolingual classifier per language), UpperBound, Fun (Funnelling, 2019), fine-tuned
transformer.

Naive trains, for each language, one linear SVM per class on that language's TF-IDF vectors,
with C chosen by cross-validation, and classifies each test document with the classifier of
its language: no information crosses languages. UpperBound (the paper's section 4.4, after Esuli et al.
2019) trains the same learner once, on the English version of every training document, and classifies
the English version of every test document: the idealised bound of a parallel corpus. Fun is
:class:`GeneralizedFunnelling` with the Posteriors view only and no normalisation.
:class:`~gfun.baselines.transformer.FineTunedTransformerClassifier` (the paper's mBERT row) lives in
:mod:`gfun.baselines.transformer`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from joblib import delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from gfun.baselines.parts import LinearSVMs, NestedPartsMixin
from gfun.core.parallel import run_parallel
from gfun.core.state import checked_array, load_state, put_state
from gfun.corpus.inputs import training_data, unpack
from gfun.errors import UnseenLanguageError
from gfun.estimator import LabelPredictionsMixin, check_finite
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.linear import LinearOvR
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer

__all__ = ["ENGLISH_FIELD", "NaiveClassifier", "UpperBoundClassifier", "english_versions", "make_fun"]

logger = logging.getLogger(__name__)

#: The corpus extra field holding each document's English version (see :func:`english_versions`).
ENGLISH_FIELD = "text_en"


def make_fun(**params: Any) -> GeneralizedFunnelling:
    """Funnelling (Esuli, Moreo, Sebastiani 2019; Fun(TAT)): Posteriors view only, no normalisation.

    Parameters
    ----------
    **params
        Further :class:`GeneralizedFunnelling` parameters (``random_state``, ``n_jobs``, ``meta``, ...).
        ``zero_shot_views="m"`` adds the 2019 paper's zero-shot fallback: an auxiliary classifier on aligned
        word embeddings serves the languages without training documents.
    """
    params.setdefault("views", "x")
    params.setdefault("normalize", False)
    params.setdefault("aggregation", "concat")
    if params["views"] != "x":
        raise ValueError("Fun uses the Posteriors view only (views='x')")
    return GeneralizedFunnelling(**params)


def _fit_language(lang: str, vec: TfidfVectorizer, X: sp.csr_matrix, Y: np.ndarray, classifier: LinearSVMs, *,
                  random_state: int | None, groups: np.ndarray | None = None, n_jobs: int | None = None,
                  label: str = "Naive") -> tuple[TfidfVectorizer, LinearOvR, np.ndarray]:
    svm, Cs = classifier.fit_ovr(X, Y, random_state=random_state, groups=groups, n_jobs=n_jobs)
    logger.info("%s: language %s fitted (%d docs, %d terms)", label, lang, X.shape[0], X.shape[1])
    return vec, svm, Cs


class NaiveClassifier(NestedPartsMixin, LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin, BaseEstimator):
    """The naive monolingual baseline: per-language TF-IDF and one linear SVM per class.

    Parameters
    ----------
    tfidf : MultilingualTfidf, optional
        The per-language TF-IDF (``None``: ``MultilingualTfidf()``).
    classifier : LinearSVMs, optional
        The SVMs of each language (``None``: ``LinearSVMs()``, C per class and language by cross-validated F1);
        ``set_params(classifier__C=1.0)`` sets its parameters.
    n_jobs : int, optional
        Languages fitted in parallel (threads by default: liblinear releases the GIL; see
        :mod:`gfun.core.parallel` for processes or a Dask cluster).
    random_state : int, optional

    Attributes
    ----------
    classes_ : list of str
    languages_ : list of str
    models_ : dict of str to (TfidfVectorizer, LinearOvR)
    C_ : dict of str to ndarray
        The C chosen for each class, per language.
    """

    def __init__(self, tfidf: MultilingualTfidf | None = None, classifier: LinearSVMs | None = None, *,
                 n_jobs: int | None = None, random_state: int | None = None) -> None:
        self.tfidf = tfidf
        self.classifier = classifier
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> NaiveClassifier:
        """Fit one classifier per language (same inputs as :meth:`GeneralizedFunnelling.fit`)."""
        classifier = self.part("classifier")
        classifier.check()
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        tfidf = self.part("tfidf").set_params(n_jobs=self.n_jobs)
        matrices = tfidf.fit_transform(texts, lang_arr)
        results = run_parallel((
            delayed(_fit_language)(lang, tfidf.vectorizers_[lang], X, Y[rows], classifier,
                                   random_state=self.random_state)
            for lang, (rows, X) in matrices.items()), self.n_jobs)
        self.models_ = {lang: (vec, svm) for lang, (vec, svm, _) in zip(self.languages_, results, strict=True)}
        self.C_ = {lang: Cs for lang, (_, _, Cs) in zip(self.languages_, results, strict=True)}
        return self

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Decision scores of each document's own-language classifiers (n_docs, n_classes)."""
        check_is_fitted(self, "models_")
        texts, lang_arr = unpack(X, langs)
        unseen = sorted(set(lang_arr.tolist()) - set(self.models_))
        if unseen:
            raise UnseenLanguageError(f"the Naive baseline has no classifier for language(s) {unseen} "
                                      f"(trained on {self.languages_}); it cannot classify unseen languages",
                                      languages=unseen)
        out = np.zeros((len(texts), len(self.classes_)))
        for lang in np.unique(lang_arr):
            idx = np.flatnonzero(lang_arr == lang)
            vec, svm = self.models_[lang]
            out[idx] = svm.decision_function(vec.transform([texts[i] for i in idx]))
        return check_finite(out, f"the {type(self).__name__}", lang_arr)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "models_")
        meta: dict = {"params": self._params_state(), "classes_": self.classes_, "languages_": self.languages_,
                      "vectorizers": {}}
        arrays: dict[str, np.ndarray] = {}
        for lang, (vec, svm) in self.models_.items():
            meta["vectorizers"][lang] = put_state(vec, f"{lang}/vec/", arrays)
            arrays[f"{lang}/coef"] = svm.coef
            arrays[f"{lang}/intercept"] = svm.intercept
            arrays[f"{lang}/C"] = self.C_[lang]
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> NaiveClassifier:
        obj = cls(**cls._params_from_state(meta["params"]))
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.models_, obj.C_ = {}, {}
        k = len(obj.classes_)
        for lang in obj.languages_:
            vec = load_state(TfidfVectorizer, meta["vectorizers"][lang], arrays, f"{lang}/vec/")
            coef = checked_array(arrays, f"{lang}/coef", (k, len(vec.vocabulary_)),
                                 what="a row per class, a column per term of the vocabulary")
            intercept = checked_array(arrays, f"{lang}/intercept", (k,), what="one value per class")
            obj.models_[lang] = (vec, LinearOvR(coef, intercept))
            obj.C_[lang] = checked_array(arrays, f"{lang}/C", (k,), what="one value per class")
        return obj


def english_versions(X: Any, langs: Sequence[str] | None = None, *, field: str = ENGLISH_FIELD) -> list[str]:
    """The English version of every document of ``X``.

    Parameters
    ----------
    X : MultilingualCorpus or list of str
        A corpus whose extra field ``field`` holds each document's English version (the loaders of the parallel
        datasets set it: ``debtags``, the English original of each translated package description; ``sib200``,
        the English sentence of the same ``index_id``), or texts with ``langs``. An English document without the
        field is its own English version.
    langs : sequence of str, optional
        With a list of texts.
    field : str

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        When a non-English document has no English version; the message counts them per language.
    """
    from gfun.corpus.multilingual import MultilingualCorpus

    texts, lang_arr = unpack(X, langs)
    english = X.extra.get(field) if isinstance(X, MultilingualCorpus) else None
    out: list[str] = []
    missing: dict[str, int] = {}
    for i, (text, lang) in enumerate(zip(texts, lang_arr, strict=True)):
        version = english[i] if english is not None else None
        if not isinstance(version, str) or not version.strip():
            if lang != "en":
                missing[str(lang)] = missing.get(str(lang), 0) + 1
                continue
            version = text
        out.append(version)
    if missing:
        where = ", ".join(f"{lang}: {n}" for lang, n in sorted(missing.items()))
        raise ValueError(f"UpperBound needs the English version of every non-English document (the corpus field "
                         f"extra[{field!r}], which only the loaders of parallel datasets set: debtags, sib200; in "
                         f"files, a {field!r} field: gfun datasets build debtags --english); "
                         f"{sum(missing.values())} of {len(texts)} documents have none ({where})")
    return out


class UpperBoundClassifier(NaiveClassifier):
    """The paper's UpperBound: one English classifier trained and tested on the English versions of the documents.

    As in section 4.4 of the paper (after Esuli, Moreo and Sebastiani 2019): every non-English training document
    is replaced by its English version, one monolingual English classifier is trained (the Naive baseline's
    learner: TF-IDF and one linear SVM per class, C by cross-validation), and every test document is classified
    through its English version; scores stay per language of the original documents. It is the idealised bound
    a cross-lingual method strives to reach, and exists only where the corpus gives every document an English
    version (:func:`english_versions`): ``debtags`` (each translated description has its English original) and
    ``sib200`` (parallel by construction). Elsewhere ``fit``/``predict`` raise a :class:`ValueError`.

    On a parallel training set (SIB-200) the English copies of one sentence are identical: they are kept (the
    paper's definition) and always fall in the same cross-validation fold (no leak into the choice of C).

    Parameters
    ----------
    tfidf, classifier, random_state
        As :class:`NaiveClassifier`.
    n_jobs : int, optional
        Classes fitted in parallel (threads).

    Attributes
    ----------
    classes_ : list of str
    languages_ : list of str
        ``["en"]``: the one classifier's language.
    train_languages_ : list of str
        The languages of the original training documents.
    models_ : dict
        ``{"en": (TfidfVectorizer, LinearOvR)}``.
    C_ : dict
        ``{"en": C per class}``.
    """

    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> UpperBoundClassifier:
        """Fit the English classifier on the English versions of the training documents."""
        classifier = self.part("classifier")
        classifier.check()
        _, lang_arr, Y, classes = training_data(X, y, langs)
        english = english_versions(X, langs)
        self.classes_ = classes
        self.train_languages_ = sorted(set(lang_arr.tolist()))
        groups = np.unique(np.asarray(english, dtype=object), return_inverse=True)[1]
        tfidf = self.part("tfidf")
        X = tfidf.fit_transform_by_language({"en": english})["en"]
        vec, svm, Cs = _fit_language("en", tfidf.vectorizers_["en"], X, Y, classifier, random_state=self.random_state,
                                     groups=groups, n_jobs=self.n_jobs, label="UpperBound")
        self.languages_ = ["en"]
        self.models_ = {"en": (vec, svm)}
        self.C_ = {"en": Cs}
        return self

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Decision scores of the English classifier on the documents' English versions (n_docs, n_classes)."""
        check_is_fitted(self, "models_")
        english = english_versions(X, langs)
        vec, svm = self.models_["en"]
        if not english:
            return np.zeros((0, len(self.classes_)))
        return check_finite(svm.decision_function(vec.transform(english)), f"the {type(self).__name__}")

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta, arrays = super().get_state()
        meta["train_languages_"] = self.train_languages_
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> UpperBoundClassifier:
        obj = super().from_state(meta, arrays)
        obj.train_languages_ = list(meta["train_languages_"])
        return obj
