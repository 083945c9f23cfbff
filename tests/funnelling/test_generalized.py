"""GeneralizedFunnelling on (a sample of) the bundled demo data."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.corpus.inputs import as_label_matrix
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.funnelling.aggregation import Mean
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.funnelling.select import Select
from gfun.metrics.evaluation import evaluate
from gfun.svm.kernel import DEFAULT_C_GRID
from gfun.views.posteriors import PosteriorsView

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int, langs=LANGS) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in langs])))


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus, MultilingualCorpus, MultilingualCorpus]:
    """(train, test, full_train, full_test): 120 train / 60 test documents in each of de, en, it."""
    full_train, full_test = load_demo()
    return _sample(full_train, 120, 0), _sample(full_test, 60, 1), full_train, full_test


@pytest.fixture(scope="module")
def model(demo) -> GeneralizedFunnelling:
    return GeneralizedFunnelling(aggregation='mean', random_state=0, meta=default_meta().set_params(C=1.0)).fit(demo[0])


# ----------------------------------------------------------------------------------------------- sklearn contract
def test_sklearn_contract(demo, model: GeneralizedFunnelling) -> None:
    est = GeneralizedFunnelling(views='x', random_state=5, meta=default_meta().set_params(C=1.0),
                                mapper=default_mapper().set_params(cv=3))
    params = est.get_params(deep=False)
    assert set(params) == set(inspect.signature(GeneralizedFunnelling.__init__).parameters) - {"self"}
    assert len(params) <= 12
    deep = est.get_params()
    assert deep["mapper__cv"] == 3 and deep["meta__C"] == 1.0 and params["random_state"] == 5
    assert not any(k.startswith("aggregation__") for k in deep)  # a policy given by name has no nested parameters
    assert est.set_params(aggregation__cv=5).aggregation.cv == 5  # ... until one is set
    assert est.set_params(mapper__cv=4, meta__C=10.0) is est and est.mapper.cv == 4 and est.meta.C == 10.0
    cloned = clone(est)
    flat = lambda e: {k: v for k, v in e.get_params().items() if not hasattr(v, "get_params")}  # noqa: E731
    assert cloned is not est and flat(cloned) == flat(est) and cloned.meta is not est.meta
    fitted_clone = clone(model)
    assert not hasattr(fitted_clone, "meta_") and flat(fitted_clone) == flat(model)
    assert not [k for k in vars(est) if k.endswith("_")]  # __init__ stores parameters only
    with pytest.raises(NotFittedError):
        est.transform(demo[1])
    learned = set(vars(model)) - set(params)
    assert learned and all(k.endswith("_") for k in learned)
    assert {"classes_", "languages_", "views_", "meta_", "scaler_", "timings_"} <= learned


@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "predict_labels"])
def test_unfitted_prediction_raises_not_fitted(demo, method: str) -> None:
    try:
        getattr(GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)), method)(demo[1])
    except NotFittedError:
        return
    except AttributeError as exc:
        raise AssertionError(f"AttributeError instead of NotFittedError: {exc}") from None
    raise AssertionError("no error")


def test_predict_shapes_and_types(demo, model: GeneralizedFunnelling) -> None:
    _, test, _, _ = demo
    n, k = len(test), len(test.classes)
    pred = model.predict(test)
    assert pred.shape == (n, k) and pred.dtype == np.int8 and set(np.unique(pred)) <= {0, 1}
    assert pred.any()
    proba = model.predict_proba(test)
    assert proba.shape == (n, k) and np.isfinite(proba).all() and ((proba >= 0) & (proba <= 1)).all()
    dec = model.decision_function(test)
    np.testing.assert_array_equal(pred, (dec > 0).astype(np.int8))
    Z = model.transform(test)
    assert Z.shape == (n, model.n_meta_features_) == (n, k) and np.isfinite(Z).all()
    labels = model.predict_labels(test)
    assert labels == [[model.classes_[j] for j in np.flatnonzero(row)] for row in pred]
    assert model.meta_.C_.tolist() == [1.0] * k


def test_training_views_are_standardised(demo, model: GeneralizedFunnelling) -> None:
    """In-sample training posteriors are what transform recomputes: the z-scored columns of tier 2."""
    Z = model.transform(demo[0])
    np.testing.assert_allclose(Z.mean(axis=0), 0.0, atol=1e-4)
    std = Z.std(axis=0)
    assert np.all((np.abs(std - 1.0) < 1e-3) | (std < 1e-6))


def test_deterministic_with_the_same_random_state(demo, model: GeneralizedFunnelling) -> None:
    again = GeneralizedFunnelling(random_state=0, aggregation='mean', meta=default_meta().set_params(C=1.0))
    assert again.fit(demo[0]) is again
    assert again.classes_ == model.classes_ == list(demo[0].classes) and again.languages_ == LANGS
    np.testing.assert_array_equal(again.predict(demo[1]), model.predict(demo[1]))
    np.testing.assert_array_equal(again.predict_proba(demo[1]), model.predict_proba(demo[1]))


def test_beats_naive_with_default_cross_validation(demo) -> None:
    """gFun-X as configured by default (select aggregation, meta C = 1) and with the meta-classifier's C chosen
    by 5-fold CV over the paper's grid, vs Naive."""
    train, test, _, _ = demo
    naive = NaiveClassifier(classifier=LinearSVMs(C="cv", C_grid=(0.1, 1.0, 10.0), cv=3), random_state=0).fit(train)
    f1_naive = evaluate(test.Y, naive.predict(test), test.langs).loc["average", "F1_macro"]
    default = GeneralizedFunnelling(random_state=0).fit(train)
    assert default.meta is None and default.aggregation == "select"
    cv = GeneralizedFunnelling(aggregation='mean', random_state=0, meta=default_meta().set_params(C='cv')).fit(train)
    assert cv.meta_.cv_scores_.shape == (len(DEFAULT_C_GRID), len(train.classes))
    assert set(cv.meta_.C_.tolist()) <= set(DEFAULT_C_GRID)
    for gfun in (default, cv):
        f1_gfun = evaluate(test.Y, gfun.predict(test), test.langs).loc["average", "F1_macro"]
        assert f1_gfun > f1_naive, (f1_gfun, f1_naive)


# ----------------------------------------------------------------------------------------------- configurations
def test_train_posteriors_in_sample_vs_cv(demo, model: GeneralizedFunnelling) -> None:
    train, test, _, _ = demo
    langs = np.asarray(train.langs, dtype=object)
    Y = train.Y.toarray()
    in_sample = PosteriorsView(random_state=0)
    Z_in = in_sample.fit_transform(train.texts, langs, Y)
    cv_view = PosteriorsView(random_state=0, train_posteriors="cv")
    Z_cv = cv_view.fit_transform(train.texts, langs, Y)
    assert Z_in.shape == Z_cv.shape == Y.shape
    assert not np.allclose(Z_in, Z_cv, atol=1e-3)
    # in-sample posteriors are over-confident: higher on the true labels, lower elsewhere
    assert Z_in[Y == 1].mean() > Z_cv[Y == 1].mean() and Z_in[Y == 0].mean() < Z_cv[Y == 0].mean()
    # the same classifiers and sigmoids: identical posteriors for new documents and for re-transformed training ones
    test_langs = np.asarray(test.langs, dtype=object)
    np.testing.assert_array_equal(in_sample.transform(test.texts, test_langs),
                                  cv_view.transform(test.texts, test_langs))
    np.testing.assert_allclose(in_sample.transform(train.texts, langs), Z_in, atol=1e-6)
    gf_cv = GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0),
                                  aggregation=Mean(train_posteriors='cv')).fit(train)
    assert not np.allclose(gf_cv.decision_function(test), model.decision_function(test), atol=1e-3)


def test_single_view_mean_equals_concat_and_view_objects_equal_letters(demo, model: GeneralizedFunnelling) -> None:
    train, test, _, _ = demo
    concat = GeneralizedFunnelling(random_state=0, aggregation='concat',
                                   meta=default_meta().set_params(C=1.0)).fit(train)
    np.testing.assert_allclose(concat.predict_proba(test), model.predict_proba(test), atol=1e-6)
    objs = GeneralizedFunnelling(views=[PosteriorsView(random_state=0)], random_state=0, aggregation='mean',
                                 meta=default_meta().set_params(C=1.0)).fit(train)
    np.testing.assert_allclose(objs.predict_proba(test), model.predict_proba(test), atol=1e-6)


@pytest.mark.parametrize(("params", "match"), [
    ({"aggregation": "sum"}, "aggregation"), ({"aggregation": Mean(train_posteriors="oof")}, "train_posteriors"),
    ({"views": [("meta", PosteriorsView())]}, "cannot be named"),
    ({"views": "q"}, "unknown view"), ({"views": "xx"}, "repeat"), ({"views": ""}, "at least one"),
    ({"views": []}, "at least one"),
])
def test_invalid_parameters(demo, params: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GeneralizedFunnelling(**params, meta=default_meta().set_params(C=1.0)).fit(demo[0].subset(range(30)))


# ----------------------------------------------------------------------------------------------- inputs
def test_list_of_texts_with_langs_equals_corpus_input(demo, model: GeneralizedFunnelling) -> None:
    train, test, _, _ = demo
    est = GeneralizedFunnelling(random_state=0, aggregation='mean', meta=default_meta().set_params(C=1.0)).fit(
        train.texts, train.Y.toarray(), langs=train.langs)
    assert est.classes_ == [str(j) for j in range(len(train.classes))]
    np.testing.assert_array_equal(est.predict_proba(test.texts, langs=test.langs), model.predict_proba(test))
    np.testing.assert_array_equal(model.predict(test.texts, langs=test.langs), model.predict(test))
    np.testing.assert_array_equal(model.transform(list(test.texts), langs=tuple(test.langs)), model.transform(test))


def test_y_as_label_lists(demo, model: GeneralizedFunnelling) -> None:
    train, test, _, _ = demo
    assert (train.Y.sum(axis=0) > 0).all()  # every class occurs, so the classes are the codeframe, sorted
    est = GeneralizedFunnelling(random_state=0, aggregation='mean', meta=default_meta().set_params(C=1.0)).fit(
        train.texts, [list(ls) for ls in train.labels], langs=train.langs)
    assert est.classes_ == sorted(train.classes)
    order = [model.classes_.index(c) for c in est.classes_]
    # the same model up to the column order (libsvm may stop at a slightly different point within its tolerance)
    dec, ref = est.decision_function(test.texts, langs=test.langs), model.decision_function(test)[:, order]
    np.testing.assert_allclose(dec, ref, atol=1e-2)
    clear = np.abs(ref) > 1e-2
    np.testing.assert_array_equal(est.predict(test.texts, langs=test.langs)[clear],
                                  model.predict(test)[:, order][clear])
    np.testing.assert_allclose(est.predict_proba(test.texts, langs=test.langs), model.predict_proba(test)[:, order],
                               atol=1e-2)


def test_label_matrix_inputs() -> None:
    lists = [["b"], ["a", "b"], []]
    Y, names = as_label_matrix(lists, 3)
    assert names == ["a", "b"] and Y.tolist() == [[0, 1], [1, 1], [0, 0]] and Y.dtype == np.int8
    Y2, names2 = as_label_matrix(np.array([[0, 1], [1, 1], [0, 0]]), 3)
    assert Y2.tolist() == Y.tolist() and names2 == ["0", "1"]
    with pytest.raises(ValueError, match="binary"):
        as_label_matrix(np.array([[0, 2]]), 1)
    with pytest.raises(ValueError, match="rows"):
        as_label_matrix(np.zeros((2, 3)), 3)


def test_nested_list_binary_matrix_is_a_label_matrix() -> None:
    Y, _ = as_label_matrix([[1, 0, 1], [0, 1, 0]], 2)
    assert Y.tolist() == [[1, 0, 1], [0, 1, 0]]


def test_input_errors(demo, model: GeneralizedFunnelling) -> None:
    train, test, _, _ = demo
    with pytest.raises(ValueError, match="langs"):
        model.predict(test.texts)
    with pytest.raises(ValueError, match="langs"):
        model.predict(test, langs=test.langs)
    with pytest.raises(TypeError, match="single string"):
        model.predict("one text", langs=["en"])
    with pytest.raises(ValueError, match="languages"):
        model.predict(test.texts[:3], langs=["en"])
    unlabelled = MultilingualCorpus(train.ids[:5], train.langs[:5], train.texts[:5])
    with pytest.raises(ValueError, match="no labels"):
        GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)).fit(unlabelled)
    with pytest.raises(ValueError, match="rows"):
        GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)).fit(train.texts[:5], train.Y.toarray()[:4],
                              langs=train.langs[:5])


def test_unseen_language(demo, model: GeneralizedFunnelling) -> None:
    _, test, _, full_test = demo
    fr = full_test.select("fr").subset(range(5))
    for method in (model.predict, model.predict_proba, model.transform):
        with pytest.raises(UnseenLanguageError, match="'fr'"):
            method(fr)
    mixed = MultilingualCorpus.concat([test.subset(range(3)), fr])
    with pytest.raises(UnseenLanguageError, match="'fr'"):
        model.predict(mixed)
    with pytest.raises(UnseenLanguageError, match="'pt'"):
        model.predict(["uma descrição"], langs=["pt"])


def test_missing_classes_and_a_single_document_language(demo) -> None:
    """A class without positives anywhere, one without positives in a language, and a one-document language."""
    train, test, full_train, full_test = demo
    classes = train.classes
    gone, partial = classes[0], classes[1]
    lone = full_train.select("fr").subset([0])
    labels = [tuple(c for c in ls if c != gone and not (c == partial and lang == "it"))
              for ls, lang in zip(train.labels + lone.labels, train.langs + lone.langs, strict=True)]
    data = MultilingualCorpus(train.ids + lone.ids, train.langs + lone.langs, train.texts + lone.texts, labels,
                              classes)
    Y = data.Y.toarray()
    assert Y[:, 0].sum() == 0 and Y[np.asarray(data.langs) == "it", 1].sum() == 0 and Y[:, 1].sum() > 0
    est = GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)).fit(data)
    assert est.languages_ == ["de", "en", "fr", "it"]
    new = MultilingualCorpus.concat([test, full_test.select("fr").subset(range(10))])
    pred, proba = est.predict(new), est.predict_proba(new)
    assert pred.shape == proba.shape == (len(new), len(classes))
    assert np.isfinite(proba).all() and ((proba >= 0) & (proba <= 1)).all()
    assert not pred[:, 0].any() and proba[:, 0].max() < 0.5
    assert pred[:, 1].any() or proba[:, 1].max() > proba[:, 0].max()
    assert np.isfinite(est.transform(new)).all()


def test_balanced_meta_class_weight_predicts_more_positives(demo, model: GeneralizedFunnelling) -> None:
    train, test = demo[0], demo[1]
    balanced = clone(model).set_params(meta__class_weight="balanced").fit(train)
    assert balanced.meta_.class_weight == "balanced"
    # same tier 1, so the meta-level inputs are identical; only the meta-classifier's weights differ
    np.testing.assert_array_equal(balanced.transform(test), model.transform(test))
    assert balanced.predict(test).sum() > model.predict(test).sum()


def test_cv_groups_come_from_the_corpus_parallel_fields() -> None:
    from gfun.corpus.inputs import document_groups
    from gfun.corpus.multilingual import MultilingualCorpus

    corpus = MultilingualCorpus(["a", "b", "c"], ["en", "it", "en"], ["x y", "x z", "y z"], [["c0"], [], ["c0"]],
                                ["c0"], extra={"source": ["p1", "p1", "p2"], "other": [1, 2, 3]})
    np.testing.assert_array_equal(document_groups(corpus, 3, "auto"), ["p1", "p1", "p2"])
    np.testing.assert_array_equal(document_groups(corpus, 3, "other"), ["1", "2", "3"])
    assert document_groups(corpus, 3, None) is None
    assert document_groups(["x y"], 1, "auto") is None  # texts carry no groups
    with pytest.raises(ValueError, match="no such extra field"):
        document_groups(corpus, 3, "index_id")
    with pytest.raises(ValueError, match="2 documents"):
        document_groups(corpus, 2, "source")
    assert GeneralizedFunnelling()._cv_groups(corpus, 3, Mean()) is None  # the paper's plain folds
    assert GeneralizedFunnelling()._cv_groups(corpus, 3, Select()).tolist() == ["p1", "p1", "p2"]


def test_the_log_of_a_fit_names_phases_in_words_and_keeps_folds_at_debug(demo, caplog) -> None:
    """INFO: one line per view, in words ("X view (posteriors): fitted in 0.2 s"); each fold of an RBF SVM only at
    DEBUG (a short fit would otherwise log three lines per SVM that say nothing)."""
    import logging

    with caplog.at_level(logging.DEBUG, logger="gfun"):
        GeneralizedFunnelling(views="xp", aggregation="mean", random_state=0, verbose=True).fit(demo[0])
    info = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(m.startswith("X view (posteriors): fitted in ") and m.endswith(" s") for m in info), info
    assert any(m.startswith("P view (pooled posteriors): fitted in ") for m in info), info
    assert not [m for m in info if "fold" in m], info
    assert any(m.startswith("RBF SVM: fold 1/") for m in debug)


def test_the_unseen_language_error_lists_every_registered_view_that_serves_one(demo) -> None:
    """The views named in the error come from the registry (gfun.views.VIEW_CLASSES and each view's reach): the
    built-in ones that serve languages without training documents (M, B, R, P, E, F) and a view registered later,
    never X or W (their training languages only)."""
    from gfun.views import register_view, unregister_view
    from gfun.views.pooled import PooledPosteriorsView

    class AnyLanguageView(PooledPosteriorsView):
        """Any-language VGF (letter Z): a pooled view under another name."""

    train = _sample(demo[0], 20, 0)
    x_only = GeneralizedFunnelling(views="x", random_state=0, meta=default_meta().set_params(C=1.0)).fit(train)
    register_view("z", AnyLanguageView)
    try:
        with pytest.raises(UnseenLanguageError) as caught:
            x_only.predict(["uma descrição"], langs=["pt"])
    finally:
        unregister_view("z")
    listed = str(caught.value).rpartition("training documents:")[2]
    for letter in "MBRPEFZ":
        assert f"{letter} (" in listed, (letter, listed)
    for letter in "XW":
        assert f"{letter} (" not in listed, (letter, listed)
    assert "Z (Any-language)" in listed
