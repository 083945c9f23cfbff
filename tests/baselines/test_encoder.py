"""The frozen-encoder baselines (``encoder-tfidf``, ``encoder-lr``) on a tiny BERT, and liblinear's logistic loss."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.configuration import build_estimator, parse_config
from gfun.datasets.demo import load_demo
from gfun.svm.linear import fit_linear_ovr
from tests.neural_fixtures import single_torch_thread, tiny_bert_folder


def test_logistic_loss_is_scikit_learns_liblinear_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.RandomState(0)
    X = rng.randn(120, 6)
    Y = (X[:, :3] + 0.5 * rng.randn(120, 3) > 0.8).astype(np.int8)
    ours = fit_linear_ovr(X, Y, 3.0, loss="log", class_weight="balanced", random_state=0)
    for j in range(3):
        ref = LogisticRegression(C=3.0, solver="liblinear", dual=True, class_weight="balanced", tol=1e-4,
                                 max_iter=2000, random_state=0).fit(X, Y[:, j])
        np.testing.assert_allclose(ours.coef[j], ref.coef_[0], rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(ours.intercept[j], ref.intercept_[0], rtol=1e-3, atol=1e-4)


torch_only = pytest.mark.torch


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, _one_thread):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    train, _ = load_demo()
    return str(tiny_bert_folder(tmp_path_factory.mktemp("tiny-bert"), list(train.texts)[:600], max_positions=128))


@pytest.fixture(scope="module")
def _one_thread():
    pytest.importorskip("torch")
    yield from single_torch_thread()


@torch_only
@pytest.mark.parametrize("method", ["encoder-tfidf", "encoder-lr"])
def test_encoder_baselines_fit_choose_C_save_load_and_serve_any_language(method, tiny, tmp_path):
    from gfun import load_model

    train, test = load_demo()
    train = train.select(["de", "en"]).subset(range(0, 700, 4))
    params = {"model": tiny, "prefix": "", "max_length": 64, "device": "cpu", "C_grid": (1.0, 10.0)}
    est = build_estimator(parse_config(method), random_state=0, view_params={method: params})
    assert est.features == ("encoder" if method == "encoder-lr" else "tfidf+encoder") and est.C == "cv"
    est.fit(train)
    assert set(est.cv_scores_) == {1.0, 10.0} and est.C_ in (1.0, 10.0)
    assert (est.tfidf_ is None) == (method == "encoder-lr")
    french = test.select(["fr"]).subset(range(15))
    scores = est.decision_function(french)
    assert scores.shape == (15, len(est.classes_)) and np.isfinite(scores).all()
    est.save(tmp_path / "m")
    np.testing.assert_allclose(load_model(tmp_path / "m").decision_function(french), scores, rtol=1e-6, atol=1e-7)


@torch_only
def test_encoder_baseline_refuses_unknown_features(tiny):
    from gfun.baselines.encoder import EncoderLinearClassifier

    train, _ = load_demo()
    with pytest.raises(ValueError, match="features must be one of"):
        EncoderLinearClassifier(features="tfidf", model=tiny).fit(train.subset(range(20)))
