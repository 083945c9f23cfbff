"""Fitted views (and their mappers) reused across configurations through ``memory``; the mappers' C."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.persistence.loading import load_model
from gfun.persistence.saving import save_model


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    rng = np.random.RandomState(0)
    keep = [rng.choice(idx, 80, replace=False) for lang, idx in train.by_language().items() if lang in ("de", "en")]
    return train.subset(np.sort(np.concatenate(keep))), test.select(["de", "en"]).subset(range(120))


PARAMS = {"mapper": default_mapper().set_params(cv=3), "random_state": 0}


def test_views_fitted_once_across_configurations(demo, tmp_path) -> None:
    train, test = demo
    cache = tmp_path / "views"
    xw = GeneralizedFunnelling(views="xw", memory=cache, **PARAMS).fit(train)
    assert xw.cache_hits_ == [] and {"view_x", "view_w", "mapper_w", "meta"} <= set(xw.timings_)
    # x alone: the X view comes from the cache and gives what a fresh fit gives
    x_cached = GeneralizedFunnelling(views="x", memory=cache, **PARAMS).fit(train)
    assert x_cached.cache_hits_ == ["x"] and "view_x" not in x_cached.timings_
    x_fresh = GeneralizedFunnelling(views="x", **PARAMS).fit(train)
    np.testing.assert_array_equal(x_cached.predict(test), x_fresh.predict(test))
    np.testing.assert_allclose(x_cached.predict_proba(test), x_fresh.predict_proba(test))
    # n_jobs is not part of the key; the mapper of W comes back too
    again = GeneralizedFunnelling(views="xw", memory=cache, n_jobs=2, **PARAMS).fit(train)
    assert again.cache_hits_ == ["x", "w"] and "mapper_w" not in again.timings_
    assert set(again.mappers_) == set(xw.mappers_) and again.dropped_views_ == xw.dropped_views_
    np.testing.assert_allclose(again.predict_proba(test), xw.predict_proba(test))
    # anything that changes a view's result misses: its parameters, the training documents
    other = GeneralizedFunnelling(views='xw', memory=cache, **PARAMS, view_params={'x': {'C': 0.5}}).fit(train)
    assert other.cache_hits_ == ["w"]
    fewer = GeneralizedFunnelling(views="x", memory=cache, **PARAMS).fit(train.subset(range(100)))
    assert fewer.cache_hits_ == []


def test_a_model_fitted_with_memory_saves_without_it(demo, tmp_path) -> None:
    train, test = demo
    model = GeneralizedFunnelling(views="x", memory=str(tmp_path / "c"), **PARAMS).fit(train)
    save_model(model, tmp_path / "model")
    loaded = load_model(tmp_path / "model")
    assert loaded.memory is None
    np.testing.assert_allclose(loaded.predict_proba(test), model.predict_proba(test))


def test_mapper_C_is_fixed_unless_asked(demo) -> None:
    train, _ = demo
    # the paper optimises C for the meta-classifier only
    # (mean: W's mapper always serves; select would drop it with W when it does not keep W)
    paper = GeneralizedFunnelling(views='xw', aggregation='mean', random_state=0,
                                  meta=default_meta().set_params(C='cv', C_grid=(0.1, 1.0, 10.0)),
                                  mapper=default_mapper().set_params(cv=3)).fit(train)
    assert np.all(paper.mappers_["w"].C_ == 1.0) and paper.mappers_["w"].cv_scores_ is None
    assert paper.meta_.cv_scores_ is not None
    tuned = GeneralizedFunnelling(views='xw', aggregation='mean', random_state=0,
                                  meta=default_meta().set_params(C=1.0, C_grid=(0.1, 1.0, 10.0)),
                                  mapper=default_mapper().set_params(C='cv', C_grid=(0.1, 1.0, 10.0), cv=3)).fit(train)
    assert tuned.mappers_["w"].cv_scores_.shape == (3, len(train.classes))
    assert set(np.unique(tuned.mappers_["w"].C_)) <= {0.1, 1.0, 10.0}
