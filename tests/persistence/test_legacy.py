"""gfun.persistence.legacy: every older shape of a saved state is brought to today's before anything reads it."""

from __future__ import annotations

import numpy as np

from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.persistence.legacy import nested_params, upgrade
from gfun.text.tfidf import TfidfVectorizer


def test_old_tfidf_states_keep_whole_runs() -> None:
    meta, arrays = TfidfVectorizer("zh").fit(["土耳其", "黑海"]).get_state()
    del meta["params"]["segment"]  # a state saved before segmentation existed
    model = {"views": [{"letter": "x", "state": {"vectorizers": {"zh": meta}}}]}
    upgrade("GeneralizedFunnelling", model, {})
    assert meta["params"]["segment"] is False
    assert TfidfVectorizer.from_state(meta, arrays).analyzer_("土耳其") == ["土耳其"]


def test_flat_parameters_become_the_nested_estimators() -> None:
    flat = {"views": "xw", "meta_C": 10.0, "meta_C_grid": [1, 10], "mapper_C": 2.0, "gamma": 0.5, "cv": 3,
            "first_tier_C": 0.5, "aggregation": "select", "select_cv": 4, "meta_zscore": False, "n_jobs": 2}
    params = nested_params(flat)
    assert params["meta"] == {"params": {"C": 10.0, "C_grid": [1, 10], "gamma": 0.5}}
    assert params["mapper"] == {"params": {"C": 2.0, "gamma": 0.5, "C_grid": [1, 10], "cv": 3}}
    assert params["aggregation"] == {"policy": "select", "params": {"zscore": False, "cv": 4}}
    assert params["view_params"] == {"x": {"C": 0.5, "cv": 3}, "w": {"cv": 3}}
    assert set(GeneralizedFunnelling().get_params(deep=False)) >= set(params)


def test_model_level_fields_get_the_values_that_reproduce_the_old_behaviour() -> None:
    meta = {"params": {"views": "x"}, "views": [{"letter": "x", "state": {}}]}
    arrays = {"scaler/mean": np.array([0.5, 0.25], dtype=np.float32)}
    upgrade("GeneralizedFunnelling", meta, arrays)
    assert (meta["selected_views_"], meta["dropped_views_"], meta["selected_l2_"], meta["fallback_views"]) == (
        ["x"], [], False, [])
    assert arrays["meta_input/mean"].dtype == np.float64 and arrays["meta_input/mean"].tolist() == [0.5, 0.25]
    upper: dict = {}
    upgrade("UpperBoundClassifier", upper, {})
    assert upper["train_languages_"] == []


def test_an_e_view_saved_before_its_ridge_learner_keeps_its_linear_svms() -> None:
    old = {"params": {"C": 0.1, "class_weight": "balanced", "cv": 5}}
    new = {"params": {"C": 0.1, "learner": "ridge"}}
    meta = {"params": {"views": "xe"}, "views": [{"letter": "x", "state": {}}, {"letter": "e", "state": old},
                                                 {"letter": "e", "state": new}]}
    upgrade("GeneralizedFunnelling", meta, {})
    assert old["params"]["learner"] == "svm" and new["params"]["learner"] == "ridge"


def test_a_state_of_no_known_shape_is_left_to_the_loader() -> None:
    for meta in ({"params": {"views": "x"}, "views": [True, {"letter": "r", "state": 3}]}, {"params": 7}):
        assert upgrade("GeneralizedFunnelling", meta, {})[0] is meta
    assert upgrade("GeneralizedFunnelling", [], {})[0] == []


def test_flat_baseline_parameters_become_its_parts() -> None:
    from gfun.baselines.crosslingual.kcca import KCCAClassifier
    from gfun.baselines.naive import NaiveClassifier

    meta = {"params": {"C": 1.0, "C_grid": [0.1, 1.0], "cv": 3, "loss": "hinge", "class_weight": None, "min_df": 2,
                       "stopwords": False, "stem": True, "n_jobs": None, "random_state": 0}}
    upgrade("NaiveClassifier", meta, {})
    est = NaiveClassifier(**NaiveClassifier._params_from_state(meta["params"]))
    params = est.get_params()
    assert (params["classifier__C"], params["classifier__C_grid"], params["classifier__loss"]) == (1.0, (0.1, 1.0),
                                                                                                    "hinge")
    assert (params["tfidf__min_df"], params["tfidf__stopwords"], params["random_state"]) == (2, False, 0)
    kcca = {"params": {"C": "cv", "n_components": 3}}
    upgrade("KCCAClassifier", kcca, {})
    assert KCCAClassifier(**KCCAClassifier._params_from_state(kcca["params"])).get_params()["tfidf__min_df"] == 2
