"""A view written outside gfun: named, fitted side by side with built-in views, saved, loaded, checked."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.preprocessing import normalize

from gfun import GeneralizedFunnelling, load_model, register_view
from gfun.datasets.demo import load_demo
from gfun.errors import UnregisteredViewError
from gfun.funnelling.meta import default_meta
from gfun.views import unregister_view
from gfun.views.base import ViewGenerator
from gfun.views.checks import check_view
from gfun.views.posteriors import PosteriorsView


# ------------------------------------------------------------------- the user's view (what a user writes)
class HashedWordsView(ViewGenerator):
    """Hashed word counts, IDF-weighted over all languages, L2-normalised."""

    def __init__(self, n_features: int = 256) -> None:
        self.n_features = n_features

    def _counts(self, texts):  # noqa: ANN001, ANN202
        return HashingVectorizer(n_features=self.n_features, alternate_sign=False, norm=None).transform(texts)

    def fit_transform(self, texts, langs, Y):  # noqa: ANN001, ANN201
        self.languages_ = sorted(set(langs))
        df = np.asarray((self._counts(texts) > 0).sum(axis=0)).ravel()
        self.idf_ = np.log((1 + len(texts)) / (1 + df)) + 1
        return self.transform(texts, langs)

    def transform(self, texts, langs):  # noqa: ANN001, ANN201
        self._check_languages(langs)
        return normalize(self._counts(texts).multiply(self.idf_).tocsr()).toarray().astype(np.float32)

    def covers(self, lang):  # noqa: ANN001, ANN201
        return lang in self.languages_

    def get_state(self):  # noqa: ANN201
        return {"n_features": self.n_features, "languages": self.languages_}, {"idf": self.idf_}

    @classmethod
    def from_state(cls, meta, arrays):  # noqa: ANN001, ANN206
        view = cls(meta["n_features"])
        view.languages_, view.idf_ = list(meta["languages"]), arrays["idf"]
        return view


# ------------------------------------------------------------------- the tests
@pytest.fixture()
def registered():
    register_view("h", HashedWordsView)
    yield
    unregister_view("h")


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return train.subset(range(0, len(train), 5)), test.subset(range(0, len(test), 5))


def test_the_custom_view_passes_the_public_checks() -> None:
    check_view(HashedWordsView(n_features=64))


@pytest.mark.parametrize("views", ["xh", [("x", PosteriorsView(cv=3)), ("words", HashedWordsView(128))]])
def test_fits_saves_loads_and_predicts_identically_beside_built_in_views(registered, demo, tmp_path, views) -> None:
    train, test = demo
    model = GeneralizedFunnelling(views=views, aggregation='mean', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    names = ["x", "h"] if views == "xh" else ["x", "words"]
    assert model.view_names_ == names and set(model.mappers_) == {names[1]}  # the custom view is mapped
    model.save(tmp_path / "model")
    back = load_model(tmp_path / "model")
    assert back.view_names_ == names and isinstance(back.views_[1], HashedWordsView)
    np.testing.assert_array_equal(back.decision_function(test), model.decision_function(test))
    np.testing.assert_array_equal(back.predict(test), model.predict(test))
    unregister_view("h")  # loading needs the registration: the model never imports (or unpickles) the class
    with pytest.raises(UnregisteredViewError, match="register_view"):
        load_model(tmp_path / "model")
    register_view("h", PosteriorsView)  # another class under the saved name is refused too
    with pytest.raises(UnregisteredViewError, match="HashedWordsView"):
        load_model(tmp_path / "model")
    register_view("h", HashedWordsView, replace=True)


def test_an_unregistered_view_fits_but_is_not_saved(demo, tmp_path) -> None:
    model = GeneralizedFunnelling(views=[('x', PosteriorsView(cv=3)), ('words', HashedWordsView(64))],
                                  aggregation='mean', random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(demo[0])
    with pytest.raises(ValueError, match="register_view"):
        model.save(tmp_path / "model")


def test_two_views_with_one_name_are_refused_at_construction(registered) -> None:
    with pytest.raises(ValueError, match="two views are named 'x'"):
        GeneralizedFunnelling(views=[("x", PosteriorsView()), ("x", HashedWordsView())])
    with pytest.raises(ValueError, match="two views are named 'h'"):
        GeneralizedFunnelling(views=[HashedWordsView(), ("h", PosteriorsView())])  # a bare view: its registered name
    with pytest.raises(ValueError, match="repeat"):
        GeneralizedFunnelling(views="xhx")
    with pytest.raises(ValueError, match="unknown view letter"):
        GeneralizedFunnelling(views="xq").fit(["a"], [[1]], langs=["en"])


def test_registration_rules(registered) -> None:
    with pytest.raises(ValueError, match="taken by"):
        register_view("x", HashedWordsView)  # a built-in name
    with pytest.raises(ValueError, match="taken by"):
        register_view("h", PosteriorsView)  # already bound, without replace=True
    with pytest.raises(TypeError):
        register_view("hh", PosteriorsView())  # an instance, not a class
    with pytest.raises(ValueError, match="view name"):
        register_view("My View", HashedWordsView)
    with pytest.raises(ValueError, match="built-in"):
        unregister_view("x")


def test_view_params_and_nested_params_reach_the_view(registered, demo) -> None:
    est = GeneralizedFunnelling(views='xh', view_params={'h': {'n_features': 32}}, aggregation='mean', random_state=0,
                                meta=default_meta().set_params(C=1.0))
    assert est.set_params(h__n_features=16, meta__C=2.0) is est
    assert est.view_params == {"h": {"n_features": 16}} and est.meta.C == 2.0
    assert est.fit(demo[0]).views_[1].idf_.shape == (16,)
    with pytest.raises(ValueError, match="no parameter"):
        GeneralizedFunnelling(views="xh", view_params={"h": {"n_feature": 8}}).fit(demo[0])
    with pytest.raises(ValueError, match=r"WordEmbeddingView has no parameter\(s\) \['sorce'\]"):
        GeneralizedFunnelling(views="xm", view_params={"m": {"sorce": "e5"}}).fit(demo[0])  # typos raise
    with pytest.raises(ValueError, match="unknown view 'q'"):
        GeneralizedFunnelling(views="x", view_params={"q": {"C": 1.0}}).fit(demo[0])
    with pytest.raises(ValueError, match="no parameter"):
        GeneralizedFunnelling(views="x").set_params(x__c=10.0)
    named = GeneralizedFunnelling(views=[("x", PosteriorsView()), ("words", HashedWordsView())])
    params = named.get_params()
    assert params["words__n_features"] == 256 and params["x__C"] == 1.0
    named.set_params(words__n_features=8, x=PosteriorsView(C=10.0))
    assert named.get_params()["words__n_features"] == 8 and named.get_params()["x__C"] == 10.0
    with pytest.raises(ValueError, match="no view is named"):
        named.set_params(m__source="e5")
