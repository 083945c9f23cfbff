"""The fast path (liblinear/libsvm called directly, one shared Gram matrix, threads) against the exact path.

The exact path is what a straightforward implementation does: ``LinearSVC`` per class and language in tier 1,
``SVC`` computing its own RBF kernel for every class, fold and C in tier 2. Both must give the same model.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

import gfun.funnelling.meta
import gfun.svm.kernel_exact
import gfun.svm.linear
from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.svm.kernel import RBFSVMOvR


class _SVCEverywhere(RBFSVMOvR):
    """RBFSVMOvR that never precomputes the Gram matrix (libsvm evaluates the kernel itself)."""

    def fit(self, X, Y, **kw):  # noqa: ANN001, ANN003, ANN201
        self.max_gram_samples = 0
        return super().fit(X, Y, **kw)


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    rng = np.random.RandomState(3)
    keep = [rng.choice(idx, 70, replace=False) for lang, idx in train.by_language().items() if lang in ("fr", "it")]
    return train.subset(np.sort(np.concatenate(keep))), test.select(["fr", "it"]).subset(range(150))


def _params(views: str, **meta: object) -> dict:
    """The estimator of these tests: 3-fold X and W views (their own cv) and mappers, the meta-classifier's
    parameters as given (none: the default meta-classifier), n_jobs=2."""
    return {"views": views, "view_params": {v: {"cv": 3} for v in views}, "random_state": 0, "n_jobs": 2,
            "meta": default_meta().set_params(**meta) if meta else None,
            "mapper": default_mapper().set_params(cv=3)}


def _everywhere(params: dict) -> dict:
    """``params`` with the meta-classifier and the mappers as :class:`_SVCEverywhere` (no Gram matrix)."""
    return {**params, "meta": _SVCEverywhere(**params["meta"].get_params()),
            "mapper": _SVCEverywhere(**params["mapper"].get_params())}


@pytest.mark.parametrize("views", ["x", "xw"])
def test_fast_path_equals_exact_path(demo, views: str) -> None:
    train, test = demo
    params = {**_params(views, C="cv", C_grid=(0.1, 1.0, 10.0)), "aggregation": "mean"}
    fast = GeneralizedFunnelling(**params).fit(train)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gfun.svm.linear, "_liblinear", None)  # LinearSVC.fit per class
        mp.setattr(gfun.svm.kernel_exact, "_libsvm", None)  # SVC.fit per class
        # kernel evaluated by libsvm, no Gram matrix
        exact = GeneralizedFunnelling(**{**_everywhere(params), "n_jobs": 1}).fit(train)
        assert isinstance(exact.meta_, _SVCEverywhere)
        assert all(isinstance(m, _SVCEverywhere) for m in exact.mappers_.values())
    # the two paths stop libsvm at different points within its tolerance, and the kernel's last bits depend on
    # the BLAS threads numpy was left with by earlier tests: a near-tie of the C search or a document on the
    # decision boundary may go either way, nothing more
    assert (fast.meta_.C_ == exact.meta_.C_).mean() >= 0.9
    assert (fast.predict(test) == exact.predict(test)).mean() >= 0.995
    # libsvm stops within its tolerance (1e-3) of the optimum, at a point that depends on the kernel values'
    # last bits (sklearn's rbf_kernel vs libsvm's own): scores agree to that tolerance, not to the last digit
    np.testing.assert_allclose(fast.decision_function(test), exact.decision_function(test), atol=1e-2)
    np.testing.assert_allclose(fast.predict_proba(test), exact.predict_proba(test), atol=5e-3)


def test_nystroem_meta_classifier_close_to_exact(demo, tmp_path) -> None:
    from gfun.metrics.evaluation import evaluate
    from gfun.persistence.loading import load_model
    from gfun.persistence.saving import save_model

    train, test = demo
    # mean: both views reach the meta-classifier (select may keep X alone and drop W's mapper)
    params = {**_params("xw", C=1.0), "aggregation": "mean", "n_jobs": None}
    exact = GeneralizedFunnelling(**params).fit(train)
    nystroem = {"approximation": "nystroem", "n_components": 100}
    approx = GeneralizedFunnelling(**{**params, "meta": clone(params["meta"]).set_params(**nystroem),
                                      "mapper": clone(params["mapper"]).set_params(**nystroem)}).fit(train)
    assert approx.meta_.nystroem_components_.shape[0] == 100
    assert approx.mappers_["w"].nystroem_components_.shape[0] == 100
    f1 = {name: evaluate(test.Y, m.predict(test), test.langs).loc["average", "F1_macro"]
          for name, m in (("exact", exact), ("approx", approx))}
    assert abs(f1["approx"] - f1["exact"]) < 0.06, f1
    save_model(approx, tmp_path / "m")
    np.testing.assert_allclose(load_model(tmp_path / "m").predict_proba(test), approx.predict_proba(test))


def test_fast_path_equals_exact_path_with_out_of_fold_validation(demo) -> None:
    """The select default validates on other inputs than it trains on: both kernel paths agree there too."""
    train, test = demo
    params = {**_params("xw"), "n_jobs": 1}  # the default meta-classifier (meta=None)
    fast = GeneralizedFunnelling(**params).fit(train)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(gfun.funnelling.meta, "RBFSVMOvR", _SVCEverywhere)  # meta=None: default_meta() builds one
        exact = GeneralizedFunnelling(**{**params, "mapper": _SVCEverywhere(**params["mapper"].get_params())}
                                      ).fit(train)
        assert isinstance(exact.meta_, _SVCEverywhere)
    assert fast.selected_views_ == exact.selected_views_ and fast.aggregation_.l2_ == exact.aggregation_.l2_
    assert (fast.predict(test) == exact.predict(test)).mean() >= 0.99


def test_memory_budget_switches_meta_and_mappers_to_the_approximation(demo, tmp_path, caplog) -> None:
    """``max_memory`` too small for the Gram matrix: meta-classifier and mappers go Nystroem, logged, close to
    exact; the default budget keeps the exact path (the same model as ``approximation=None``)."""
    import logging

    from gfun.metrics.evaluation import evaluate
    from gfun.persistence.loading import load_model
    from gfun.persistence.saving import save_model

    train, test = demo
    params = {**_params("xw", C="cv", C_grid=(0.1, 1.0, 10.0)), "aggregation": "mean", "n_jobs": None}

    def with_svms(**svm: object) -> GeneralizedFunnelling:
        return GeneralizedFunnelling(**{**params, "meta": clone(params["meta"]).set_params(**svm),
                                        "mapper": clone(params["mapper"]).set_params(**svm)})

    exact = with_svms(approximation=None).fit(train)
    default = GeneralizedFunnelling(**params).fit(train)
    assert default.meta_.method_ is None and default.mappers_["w"].method_ is None
    np.testing.assert_array_equal(default.decision_function(test), exact.decision_function(test))
    with caplog.at_level(logging.WARNING, logger="gfun.svm.kernel"):
        approx = with_svms(max_memory="8MB", n_components=80).fit(train)
    assert approx.meta_.method_ == "nystroem-ls" and approx.mappers_["w"].method_ == "nystroem-ls"
    assert caplog.text.count("more than max_memory") >= 2
    f1 = {name: evaluate(test.Y, m.predict(test), test.langs).loc["average", "F1_macro"]
          for name, m in (("exact", exact), ("approx", approx))}
    assert abs(f1["approx"] - f1["exact"]) < 0.06, f1
    save_model(approx, tmp_path / "m")
    np.testing.assert_allclose(load_model(tmp_path / "m").predict_proba(test), approx.predict_proba(test))
