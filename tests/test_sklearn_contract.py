"""scikit-learn's model selection on gfun: GridSearchCV and cross_val_score on a corpus (or a DataFrame), nested
view parameters, RandomState seeds, NotFittedError."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score

from gfun import FineTunedTransformerClassifier, GeneralizedFunnelling, NaiveClassifier, load_model, make_fun
from gfun.datasets.demo import load_demo
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.metrics.scoring import macro_f1
from gfun.views.posteriors import PosteriorsView

GRID = [0.1, 1.0, 10.0]


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return train.subset(range(0, len(train), 2)), test.subset(range(0, len(test), 3))


def _folds() -> KFold:
    # the demo corpus lists its documents language by language: unshuffled folds would hold out whole languages
    return KFold(3, shuffle=True, random_state=0)


def test_a_corpus_splits_like_an_array(demo) -> None:
    train = demo[0]
    idx = np.array([3, 0, 7])
    assert train.shape == (len(train),)
    for part in (train[idx], train[idx, ...], train[list(idx)]):
        assert part.ids == [train.ids[i] for i in idx] and part.classes == train.classes
    assert train[1:4].ids == train.ids[1:4] and train[2].id == train.ids[2]
    assert len(train[np.arange(len(train)) % 2 == 0]) == (len(train) + 1) // 2


def test_grid_search_over_meta_C_agrees_with_gfun_own_cv(demo) -> None:
    train = demo[0]
    search = GridSearchCV(GeneralizedFunnelling(views="x", aggregation="mean", random_state=0), {"meta__C": GRID},
                          cv=_folds()).fit(train)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and len(set(np.round(scores, 6))) == len(GRID)  # C changes the model
    meta = default_meta().set_params(C="cv", C_grid=GRID, C_selection="global", cv=3)
    own = GeneralizedFunnelling(views="x", aggregation="mean", random_state=0, meta=meta).fit(train)
    assert set(own.meta_.C_) == {search.best_params_["meta__C"]}
    assert search.best_estimator_.meta.C == search.best_estimator_.meta_.C == search.best_params_["meta__C"]


def test_grid_search_over_a_view_parameter(demo) -> None:
    train = demo[0]
    named = GeneralizedFunnelling(views=[("x", PosteriorsView(cv=3))], aggregation="mean", random_state=0)
    search = GridSearchCV(named, {"x__C": [0.01, 1.0]}, cv=_folds()).fit(train)
    scores = search.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all() and scores[0] != scores[1]
    assert search.best_estimator_.views_[0].C == search.best_params_["x__C"]
    letters = GridSearchCV(GeneralizedFunnelling(views="x", aggregation="mean", random_state=0),
                           {"x__C": [0.01, 1.0]}, cv=_folds()).fit(train)  # a letters configuration: view_params
    assert letters.best_estimator_.view_params == {"x": {"C": letters.best_params_["x__C"]}}
    assert np.isfinite(letters.cv_results_["mean_test_score"]).all()


def test_cross_val_score_on_a_dataframe_equals_on_the_corpus(demo) -> None:
    pd = pytest.importorskip("pandas")
    train = demo[0]
    est = GeneralizedFunnelling(views="x", aggregation="mean", random_state=0)
    on_corpus = cross_val_score(est, train, cv=_folds())
    frame = pd.DataFrame({"text": train.texts, "lang": train.langs})
    on_frame = cross_val_score(est, frame, train.Y.toarray(), cv=_folds())
    assert np.isfinite(on_corpus).all()
    np.testing.assert_array_equal(on_frame, on_corpus)


def test_score_is_macro_f1_and_texts_without_langs_say_what_to_do(demo) -> None:
    train, test = demo
    model = GeneralizedFunnelling(views="x", aggregation="mean", random_state=0).fit(train)
    expected = macro_f1(test.Y.toarray(), model.predict(test))
    assert model.score(test) == expected == model.score(test.texts, test.Y.toarray(), langs=test.langs)
    with pytest.raises(ValueError, match="DataFrame"):
        model.score(test.texts, test.Y.toarray())


def test_random_state_may_be_a_RandomState(demo, tmp_path) -> None:
    train, test = demo
    fits = [GeneralizedFunnelling(views="x", aggregation="mean", random_state=np.random.RandomState(0),
                                  mapper=default_mapper().set_params(cv=3)).fit(train)
            for _ in range(2)]
    assert isinstance(fits[0].random_seed_, int) and fits[0].random_seed_ == fits[1].random_seed_
    np.testing.assert_array_equal(fits[0].decision_function(test), fits[1].decision_function(test))
    fits[0].save(tmp_path / "m")
    back = load_model(tmp_path / "m")
    assert back.random_state == fits[0].random_seed_
    np.testing.assert_array_equal(back.decision_function(test), fits[0].decision_function(test))


@pytest.mark.parametrize("estimator", [GeneralizedFunnelling(), make_fun(), NaiveClassifier(),
                                       FineTunedTransformerClassifier()], ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("method", ["predict", "predict_proba", "decision_function", "transform", "predict_labels",
                                    "predict_with_proba", "score", "get_state", "save"])
def test_every_unfitted_call_raises_NotFittedError(demo, tmp_path, estimator, method) -> None:
    if not hasattr(estimator, method):
        pytest.skip(f"{type(estimator).__name__} has no {method}")
    calls = {"get_state": lambda: estimator.get_state(), "save": lambda: estimator.save(tmp_path / "m")}
    for args in ((demo[1],), (["ein Text"],)):  # also before complaining that langs are missing
        with pytest.raises(NotFittedError):
            calls.get(method, lambda: getattr(estimator, method)(*args))()  # noqa: B023
