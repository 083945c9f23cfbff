"""gfun.funnelling.state: a fitted GeneralizedFunnelling written as JSON + arrays and rebuilt, each nested estimator
saved as its parameters and the policy's fitted state saved by the policy itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.aggregation import WMean
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.funnelling.select import Select
from tests.demo_samples import sample_languages

LANGS = ("de", "en", "it")


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    train, test = load_demo()
    return sample_languages(train, 100, 0, LANGS), sample_languages(test, 40, 1, LANGS)


@pytest.mark.parametrize("aggregation", [Select(cv=3), WMean(), "mean"], ids=["select", "wmean", "mean"])
def test_state_round_trip(demo, aggregation) -> None:
    train, test = demo
    model = GeneralizedFunnelling(views="x", aggregation=aggregation, random_state=0,
                                  meta=default_meta().set_params(C=2.0)).fit(train)
    meta, arrays = model.get_state()
    meta = json.loads(json.dumps(meta))  # JSON-able as saved
    assert meta["params"]["meta"] == {"params": json.loads(json.dumps(model.meta.get_params(deep=False)))}
    policy_meta, policy_arrays = model.aggregation_.get_state()
    assert all(meta[k] == v for k, v in policy_meta.items()) and set(policy_arrays) <= set(arrays)
    loaded = GeneralizedFunnelling.from_state(meta, arrays)
    assert type(loaded.aggregation_) is type(model.aggregation_)
    assert loaded.get_params()["meta__C"] == 2.0 and loaded.selected_views_ == model.selected_views_
    np.testing.assert_array_equal(loaded.decision_function(test), model.decision_function(test))
    if isinstance(model.aggregation_, Select):
        assert loaded.aggregation_.l2_ == model.aggregation_.l2_ and loaded.aggregation_.selected_ == ["x"]
    if isinstance(model.aggregation_, WMean):
        for a, b in zip(loaded.aggregation_.weights_, model.aggregation_.weights_, strict=True):
            np.testing.assert_array_equal(a, b)


def test_a_cache_location_is_not_saved(demo, tmp_path) -> None:
    model = GeneralizedFunnelling(views="x", aggregation="mean", random_state=0, memory=str(tmp_path)).fit(demo[0])
    assert model.get_state()[0]["params"]["memory"] is None
