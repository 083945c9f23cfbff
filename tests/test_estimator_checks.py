"""scikit-learn's estimator checks (``sklearn.utils.estimator_checks``) on gfun's estimators.

``check_estimator`` cannot run whole: its checks feed numeric matrices, and gfun's input is texts with their
languages. gfun's estimators say so in their tags (``input_tags.string``, no ``two_d_array``), so
``check_estimator`` runs the one check that needs no data (cloning) and skips the rest with a warning. Every
check it would run on a numeric estimator is listed below, in one of three groups:

* :data:`APPLIED`: run as scikit-learn wrote it, on every estimator of the saved-model allow-list;
* :data:`ON_TEXTS`: the property checked is tested here on texts (each entry names the test);
* :data:`NOT_APPLICABLE`: why the check does not apply to a classifier of texts.

:func:`test_every_check_is_accounted_for` fails when scikit-learn adds a check, so that it is placed in a group.
"""

from __future__ import annotations

import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks
from sklearn.utils.validation import check_is_fitted

from gfun import GeneralizedFunnelling, NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.datasets.demo import load_demo
from gfun.persistence.directory import ESTIMATOR_MODULES, _estimators
from gfun.views.posteriors import PosteriorsView

APPLIED = ("check_estimator_cloneable", "check_estimator_tags_renamed", "check_valid_tag_types",
           "check_estimator_repr", "check_no_attributes_set_in_init", "check_do_not_raise_errors_in_init_or_set_params",
           "check_parameters_default_constructible", "check_get_params_invariance", "check_set_params",
           "check_mixin_order")

ON_TEXTS = {
    "check_estimators_fit_returns_self": "test_fit_returns_self_and_leaves_the_parameters_alone",
    "check_dont_overwrite_parameters": "test_fit_returns_self_and_leaves_the_parameters_alone",
    "check_estimators_overwrite_params": "test_fit_returns_self_and_leaves_the_parameters_alone",
    "check_fit_idempotent": "test_refit_gives_the_same_model",
    "check_pipeline_consistency": "test_refit_gives_the_same_model (a clone fitted alike predicts alike)",
    "check_dict_unchanged": "test_predicting_changes_nothing",
    "check_methods_subset_invariance": "test_predictions_do_not_depend_on_the_other_documents",
    "check_methods_sample_order_invariance": "test_predictions_do_not_depend_on_the_other_documents",
    "check_estimators_unfitted": "test_sklearn_contract.py::test_every_unfitted_call_raises_NotFittedError",
    "check_transformers_unfitted": "test_sklearn_contract.py::test_every_unfitted_call_raises_NotFittedError",
    "check_fit_check_is_fitted": "test_fitted_state_pickle_and_probabilities",
    "check_estimators_pickle": "test_fitted_state_pickle_and_probabilities",
    "check_decision_proba_consistency": "test_fitted_state_pickle_and_probabilities",
    "check_fit_score_takes_y": "test_fit_and_score_take_y",
    "check_requires_y_none": "test_fit_without_labels_or_documents_says_why",
    "check_estimators_empty_data_messages": "test_fit_without_labels_or_documents_says_why",
    "check_classifiers_multilabel_output_format_predict": "test_multilabel_outputs",
    "check_classifiers_multilabel_output_format_decision_function": "test_multilabel_outputs",
    "check_classifiers_multilabel_output_format_predict_proba": "test_multilabel_outputs",
    "check_classifiers_multilabel_representation_invariance": "test_multilabel_outputs",
}

_NUMERIC = "feeds a numeric matrix; gfun's input is texts with their languages"
_SINGLE_LABEL = "feeds a 1-d single-label target; gfun is multilabel (an indicator matrix or label lists)"
NOT_APPLICABLE = {
    "check_array_api_input": "array-API namespaces (torch, cupy arrays) of a numeric matrix; gfun reads texts",
    "check_classifier_data_not_an_array": _NUMERIC + " (as nested lists)",
    "check_transformer_data_not_an_array": _NUMERIC + " (as nested lists)",
    "check_classifiers_classes": _SINGLE_LABEL,
    "check_classifiers_one_label": _SINGLE_LABEL + "; a class without positives is kept, with a warning",
    "check_classifiers_one_label_sample_weights": _SINGLE_LABEL + "; gfun takes no sample_weight",
    "check_classifiers_regression_target": _SINGLE_LABEL + " (continuous)",
    "check_classifiers_train": _NUMERIC + " (blobs) with " + _SINGLE_LABEL.split("; ")[0].removeprefix("feeds "),
    "check_supervised_y_2d": "warns on a (n, 1) target of a single-output estimator; gfun's target is 2-d by design",
    "check_supervised_y_no_nan": _NUMERIC + " and a float target with NaN; gfun's labels are binarised",
    "check_complex_data": _NUMERIC + " (complex)",
    "check_dtype_object": _NUMERIC + " (object dtype)",
    "check_estimators_dtypes": _NUMERIC + " (float32, int64 ...)",
    "check_estimators_nan_inf": _NUMERIC + " (NaN, inf)",
    "check_estimator_sparse_array": _NUMERIC + " (sparse)",
    "check_estimator_sparse_matrix": _NUMERIC + " (sparse)",
    "check_estimator_sparse_tag": "the sparse-input tag of a numeric estimator",
    "check_f_contiguous_array_estimator": _NUMERIC + " (Fortran-ordered)",
    "check_readonly_memmap_input": _NUMERIC + " (read-only memmap)",
    "check_positive_only_tag_during_fit": _NUMERIC + " (negative values)",
    "check_transformer_general": _NUMERIC + " (transform's output on blobs)",
    "check_fit1d": _NUMERIC + " (1-d)",
    "check_fit2d_1feature": _NUMERIC + " (one column)",
    "check_fit2d_1sample": _NUMERIC + " (one row)",
    "check_fit2d_predict1d": _NUMERIC + " (1-d at predict)",
    "check_n_features_in": "n_features_in_ counts the columns of a numeric matrix; texts have none",
    "check_n_features_in_after_fitting": "n_features_in_ counts the columns of a numeric matrix; texts have none",
    "check_estimators_partial_fit_n_features": "gfun's estimators have no partial_fit",
    "check_classifier_multioutput": "multi-output targets with several classes per output; gfun's are binary",
    "check_non_transformer_estimators_n_iter": "n_iter_ is for estimators with a max_iter parameter; none here",
    "check_transformer_n_iter": "n_iter_ is for estimators with a max_iter parameter; none here",
}

ESTIMATORS = sorted(ESTIMATOR_MODULES)


def _check(name: str):
    check = getattr(estimator_checks, name, None)
    if check is None:
        pytest.skip(f"{name} is not in this scikit-learn")
    return check


@pytest.mark.parametrize("check_name", APPLIED)
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_applicable_checks_pass(estimator: str, check_name: str) -> None:
    est = _estimators()[estimator]()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(check_name)(estimator, est)


@pytest.mark.parametrize("check_name", APPLIED)
def test_applicable_checks_pass_on_named_views(check_name: str) -> None:
    est = GeneralizedFunnelling(views=[("x", PosteriorsView(C=10.0)), "w"], view_params={"w": {"min_df": 2}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(check_name)("GeneralizedFunnelling", est)


def test_check_estimator_runs_and_skips_the_numeric_checks() -> None:
    check_estimator = estimator_checks.check_estimator
    if "on_fail" not in inspect.signature(check_estimator).parameters:
        pytest.skip("this scikit-learn's check_estimator does not read input tags")
    with pytest.warns(estimator_checks.SkipTestWarning, match="requires input"):
        results = check_estimator(GeneralizedFunnelling(), on_fail=None)
    assert [r["status"] for r in results] == ["passed"]  # cloning, then every numeric check skipped
    tags = GeneralizedFunnelling().__sklearn_tags__()
    assert tags.input_tags.string and not tags.input_tags.two_d_array and tags.classifier_tags.multi_label


def test_every_check_is_accounted_for() -> None:
    generator = getattr(estimator_checks, "estimator_checks_generator", None)
    if generator is None:
        pytest.skip("this scikit-learn has no estimator_checks_generator")

    class AsIfNumeric(GeneralizedFunnelling):  # the tags of a numeric classifier-transformer: every check yielded
        def __sklearn_tags__(self):
            tags = super().__sklearn_tags__()
            tags.input_tags.two_d_array, tags.input_tags.string = True, False
            return tags

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yielded = {estimator_checks._check_name(check) for _, check in generator(AsIfNumeric(), mark=None)}
    groups = [set(APPLIED), set(ON_TEXTS), set(NOT_APPLICABLE)]
    assert not (groups[0] & groups[1] or groups[0] & groups[2] or groups[1] & groups[2])
    unplaced = yielded - set().union(*groups)
    assert not unplaced, f"scikit-learn checks not placed in APPLIED, ON_TEXTS or NOT_APPLICABLE: {sorted(unplaced)}"


# ---------------------------------------------------------------------------------------------- on texts
@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    return train.subset(range(0, len(train), 4)), test.subset(range(0, len(test), 5))


def _gfun() -> GeneralizedFunnelling:
    # a view given as an object keeps its own random_state (gfun's seeds only the views it builds from letters)
    return GeneralizedFunnelling(views=[("x", PosteriorsView(cv=3, random_state=0))], aggregation="mean",
                                 random_state=0)


@pytest.fixture(scope="module")
def fitted(demo):
    naive = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)
    return {"gfun": _gfun().fit(demo[0]), "naive": naive.fit(demo[0])}


def _params(est) -> dict:
    return {k: pickle.dumps(v) for k, v in est.get_params(deep=True).items()}


@pytest.mark.parametrize("make", [_gfun, lambda: NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)],
                         ids=["gfun", "naive"])
def test_fit_returns_self_and_leaves_the_parameters_alone(demo, make) -> None:
    est = make()
    before = _params(est)
    public = {k for k in vars(est) if not k.endswith("_") and not k.startswith("_")}
    assert est.fit(demo[0]) is est
    assert _params(est) == before  # parameters (the view objects too) untouched by fit
    assert {k for k in vars(est) if not k.endswith("_") and not k.startswith("_")} == public  # no new public attr


@pytest.mark.parametrize("name", ["gfun", "naive"])
def test_refit_gives_the_same_model(demo, fitted, name) -> None:
    est = fitted[name]
    again = clone(est).fit(demo[0])
    np.testing.assert_array_equal(again.decision_function(demo[1]), est.decision_function(demo[1]))
    twice = clone(est).fit(demo[1].subset(range(20))).fit(demo[0])  # a fit forgets the previous one
    np.testing.assert_array_equal(twice.decision_function(demo[1]), est.decision_function(demo[1]))


@pytest.mark.parametrize("name", ["gfun", "naive"])
def test_predicting_changes_nothing(demo, fitted, name) -> None:
    est = fitted[name]
    state = pickle.dumps(est)
    for method in ("predict", "decision_function", "predict_proba", "transform"):
        if hasattr(est, method):
            getattr(est, method)(demo[1])
    assert pickle.dumps(est) == state


@pytest.mark.parametrize("name", ["gfun", "naive"])
def test_predictions_do_not_depend_on_the_other_documents(demo, fitted, name) -> None:
    est, test = fitted[name], demo[1]
    order = np.random.RandomState(0).permutation(len(test))
    for method in ("predict", "decision_function", "predict_proba", "transform"):
        if not hasattr(est, method):
            continue
        full = getattr(est, method)(test)
        half = order[: len(order) // 2]
        # as scikit-learn's checks: equal up to the last bits of BLAS sums over batches of another size
        np.testing.assert_allclose(getattr(est, method)(test.subset(order)), full[order], rtol=1e-7, atol=1e-12)
        np.testing.assert_allclose(getattr(est, method)(test.subset(half)), full[half], rtol=1e-7, atol=1e-12)


def test_fitted_state_pickle_and_probabilities(demo, fitted) -> None:
    est = fitted["gfun"]
    check_is_fitted(est)
    with pytest.raises(NotFittedError):
        check_is_fitted(_gfun())
    restored = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(restored.decision_function(demo[1]), est.decision_function(demo[1]))
    scores, proba = est.decision_function(demo[1]), est.predict_proba(demo[1])
    for j in range(scores.shape[1]):  # per class, probabilities rank documents as the scores do
        by_score = np.argsort(scores[:, j], kind="stable")
        assert (np.diff(proba[by_score, j]) >= 0).all()


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_fit_and_score_take_y(estimator: str) -> None:
    cls = _estimators()[estimator]
    for method in ("fit", "score"):
        params = list(inspect.signature(getattr(cls, method)).parameters)
        assert params[1:3] == ["X", "y"], f"{estimator}.{method}{params}"


def test_fit_without_labels_or_documents_says_why(demo) -> None:
    texts, langs = demo[0].texts[:10], demo[0].langs[:10]
    with pytest.raises(ValueError, match="label"):
        _gfun().fit(texts, None, langs=langs)
    with pytest.raises(ValueError, match="documents"):
        _gfun().fit([], np.zeros((0, 3)), langs=[])


@pytest.mark.parametrize("name", ["gfun", "naive"])
def test_multilabel_outputs(demo, fitted, name) -> None:
    est, (train, test) = fitted[name], demo
    n, k = len(test), len(train.classes)
    pred = est.predict(test)
    assert pred.shape == (n, k) and set(np.unique(pred)) <= {0, 1} and np.issubdtype(pred.dtype, np.integer)
    scores = est.decision_function(test)
    assert scores.shape == (n, k) and np.issubdtype(scores.dtype, np.floating)
    np.testing.assert_array_equal(pred, (scores > 0).astype(pred.dtype))
    if hasattr(est, "predict_proba"):
        proba = est.predict_proba(test)
        assert proba.shape == (n, k) and ((proba >= 0) & (proba <= 1)).all()
    # the labels inside the corpus, as a sparse or a dense indicator matrix: the same model
    for Y in (train.Y, train.Y.toarray()):
        again = clone(est).fit(train.texts, Y, langs=train.langs)
        np.testing.assert_array_equal(again.decision_function(test), scores)
