"""Baselines on (a sample of) the demo data: the Naive per-language classifier and Fun (make_fun)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from gfun.baselines.naive import NaiveClassifier, make_fun
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.svm.linear import fit_linear_ovr
from gfun.text.tfidf import TfidfVectorizer

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in LANGS])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus, MultilingualCorpus]:
    full_train, full_test = load_demo()
    return _sample(full_train, 120, 0), _sample(full_test, 60, 1), full_test


@pytest.fixture(scope="module")
def naive(demo) -> NaiveClassifier:
    return NaiveClassifier(C=1.0, random_state=0).fit(demo[0])


@pytest.fixture(scope="module")
def fun(demo) -> GeneralizedFunnelling:
    return make_fun(meta_C=1.0, random_state=0).fit(demo[0])


# ----------------------------------------------------------------------------------------------- Naive
def test_naive_sklearn_contract(demo, naive: NaiveClassifier) -> None:
    est = NaiveClassifier(C=0.5, cv=3)
    params = est.get_params()
    assert set(params) == set(inspect.signature(NaiveClassifier.__init__).parameters) - {"self"}
    assert est.set_params(C=2.0) is est and est.C == 2.0
    assert clone(est).get_params() == est.get_params()
    assert not hasattr(clone(naive), "models_")
    for method in (est.predict, est.decision_function, est.predict_labels):
        with pytest.raises(NotFittedError):
            method(demo[1])
    learned = set(vars(naive)) - set(params)
    assert learned == {"classes_", "languages_", "models_", "C_"}
    assert naive.classes_ == list(demo[0].classes) and naive.languages_ == LANGS


def test_naive_predictions(demo, naive: NaiveClassifier) -> None:
    _, test, _ = demo
    pred = naive.predict(test)
    assert pred.shape == (len(test), len(test.classes)) and pred.dtype == np.int8
    assert set(np.unique(pred)) <= {0, 1} and pred.any()
    np.testing.assert_array_equal(pred, (naive.decision_function(test) > 0).astype(np.int8))
    np.testing.assert_array_equal(naive.predict(test.texts, langs=test.langs), pred)
    assert naive.predict_labels(test) == [[naive.classes_[j] for j in np.flatnonzero(r)] for r in pred]
    assert all(C.tolist() == [1.0] * len(test.classes) for C in naive.C_.values())


def test_naive_is_one_independent_classifier_per_language(demo, naive: NaiveClassifier) -> None:
    train, test, _ = demo
    en_train, en_test = train.select("en"), test.select("en")
    alone = NaiveClassifier(C=1.0, random_state=0).fit(en_train)
    assert alone.languages_ == ["en"]
    np.testing.assert_array_equal(alone.decision_function(en_test), naive.decision_function(en_test))
    # and it is exactly TF-IDF of that language followed by one linear SVM per class
    vec = TfidfVectorizer("en")
    svm = fit_linear_ovr(vec.fit_transform(en_train.texts), en_train.Y.toarray(), 1.0, random_state=0)
    np.testing.assert_allclose(svm.decision_function(vec.transform(en_test.texts)),
                               naive.decision_function(en_test), rtol=1e-6, atol=1e-7)


def test_naive_C_by_cross_validation(demo) -> None:
    train, _, _ = demo
    grid = (10.0, 0.1, 1.0)
    est = NaiveClassifier(C="cv", C_grid=grid, cv=3, random_state=0).fit(train.select(["en", "it"]))
    assert sorted(est.C_) == ["en", "it"]
    for Cs in est.C_.values():
        assert Cs.shape == (len(train.classes),) and set(Cs.tolist()) <= set(grid)
    assert len({c for Cs in est.C_.values() for c in Cs.tolist()}) > 1
    with pytest.raises(ValueError, match="C must be"):
        NaiveClassifier(C="auto").fit(train)


def test_naive_deterministic(demo, naive: NaiveClassifier) -> None:
    again = NaiveClassifier(C=1.0, random_state=0)
    assert again.fit(demo[0]) is again
    np.testing.assert_array_equal(again.decision_function(demo[1]), naive.decision_function(demo[1]))


def test_naive_unseen_language(demo, naive: NaiveClassifier) -> None:
    _, test, full_test = demo
    mixed = MultilingualCorpus.concat([test.subset(range(4)), full_test.select("fr").subset(range(2))])
    with pytest.raises(UnseenLanguageError, match="'fr'"):
        naive.predict(mixed)


def test_naive_label_lists_and_single_document_language(demo) -> None:
    train, test, _ = demo
    texts = train.texts + ["ein einziges dänisches Dokument"]
    langs = train.langs + ["da"]
    labels = [list(ls) for ls in train.labels] + [[train.classes[0]]]
    est = NaiveClassifier(C=1.0, random_state=0).fit(texts, labels, langs=langs)
    assert est.classes_ == sorted(train.classes) and est.languages_ == ["da", *LANGS]
    pred = est.predict(["et andet dokument", "noch ein Text"], langs=["da", "de"])
    assert pred.shape == (2, len(train.classes))
    assert pred[0].tolist() == [1 if c == train.classes[0] else 0 for c in est.classes_]  # constant classifiers


# ----------------------------------------------------------------------------------------------- Fun
def test_make_fun_configuration() -> None:
    est = make_fun(random_state=3, meta_C=1.0)
    assert isinstance(est, GeneralizedFunnelling)
    assert est.normalize is False and est.views == "x" and est.aggregation == "concat"
    assert est.random_state == 3 and est.meta_C == 1.0
    assert make_fun().normalize is False
    with pytest.raises(ValueError, match="Posteriors view only"):
        make_fun(views="xm")
    assert clone(est).get_params() == est.get_params()


def test_fun_meta_input_is_the_raw_posteriors(demo, fun: GeneralizedFunnelling) -> None:
    _, test, _ = demo
    assert fun.scaler_ is None and fun.mappers_ == {} and fun.mapper_scalers_ == {}
    Z = fun.transform(test)
    raw = fun.views_[0].transform(test.texts, np.asarray(test.langs, dtype=object))
    np.testing.assert_array_equal(Z, raw)  # no L2, no z-scoring
    assert ((Z >= 0) & (Z <= 1)).all()
    pred, proba = fun.predict(test), fun.predict_proba(test)
    assert pred.shape == proba.shape == (len(test), len(test.classes)) and pred.dtype == np.int8
    assert ((proba >= 0) & (proba <= 1)).all()


def test_fun_differs_from_normalised_gfun(demo, fun: GeneralizedFunnelling) -> None:
    train, test, _ = demo
    gfun = GeneralizedFunnelling(meta_C=1.0, random_state=0, aggregation="concat").fit(train)
    assert gfun.scaler_ is not None
    assert not np.allclose(gfun.transform(test), fun.transform(test), atol=1e-3)
    assert not np.allclose(gfun.decision_function(test), fun.decision_function(test), atol=1e-3)
