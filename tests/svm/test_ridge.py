"""One-vs-rest ridge classifiers on dense vectors of the demo sample (its TF-IDF reduced to 40 dimensions)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.linear_model import Ridge

from gfun.datasets.demo import load_demo
from gfun.svm.linear import make_folds
from gfun.svm.ridge import fit_ridge_ovr, ridge_scores
from gfun.text.tfidf import TfidfVectorizer


@pytest.fixture(scope="module")
def dense() -> tuple[np.ndarray, np.ndarray]:
    """40-dimensional vectors of 160 English training documents and the 6 most frequent classes."""
    train = load_demo()[0].select("en").subset(range(160))
    X = TruncatedSVD(40, random_state=0).fit_transform(TfidfVectorizer("en").fit_transform(train.texts))
    Y = train.Y.toarray()
    top = np.argsort(-Y.sum(axis=0), kind="stable")[:6]
    return X, Y[:, top]


def test_each_class_is_the_ridge_regression_of_its_chosen_penalty(dense):
    X, Y = dense
    model, alpha = fit_ridge_ovr(X, Y, alphas=(0.01, 0.1, 1.0))
    for j in range(Y.shape[1]):
        ref = Ridge(alpha=alpha[j]).fit(X, np.where(Y[:, j] > 0, 1.0, -1.0))
        np.testing.assert_allclose(model.coef[j], ref.coef_, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(model.intercept[j], ref.intercept_, rtol=1e-6, atol=1e-6)
    assert model.coef.dtype == np.float32 and model.coef.shape == (Y.shape[1], X.shape[1])


def test_the_penalty_is_the_one_with_the_smallest_leave_one_out_error(dense):
    X, Y = dense
    X, Y = X[:60], Y[:60]
    alphas = (0.01, 0.3, 3.0, 30.0)
    T = np.where(Y > 0, 1.0, -1.0)
    errors = np.zeros((len(alphas), Y.shape[1]))
    for a, alpha in enumerate(alphas):  # brute force: 60 refits per penalty
        for i in range(len(X)):
            rest = np.arange(len(X)) != i
            pred = Ridge(alpha=alpha).fit(X[rest], T[rest]).predict(X[i:i + 1])[0]
            errors[a] += (T[i] - pred) ** 2
    _, chosen = fit_ridge_ovr(X, Y, alphas=alphas)
    np.testing.assert_array_equal(chosen, np.asarray(alphas)[errors.argmin(axis=0)])
    assert len(set(chosen)) > 1  # the classes do not all agree: the choice is per class


def test_out_of_fold_scores_come_from_models_that_did_not_see_the_fold_and_are_the_same_for_any_n_jobs(dense):
    X, Y = dense
    groups = np.arange(len(X)) // 2  # pairs of documents, as translations are
    model, in_sample, held_out = ridge_scores(X, Y, cv=4, random_state=3, groups=groups, n_jobs=1)
    again = ridge_scores(X, Y, cv=4, random_state=3, groups=groups, n_jobs=2)
    np.testing.assert_array_equal(again[1], in_sample)
    np.testing.assert_array_equal(again[2], held_out)
    np.testing.assert_array_equal(in_sample, model.decision_function(X))
    for tr, te in make_folds(len(X), 4, 3, groups):
        assert not set(groups[tr]) & set(groups[te])
        fold_model, _ = fit_ridge_ovr(X[tr], Y[tr])
        np.testing.assert_array_equal(held_out[te], fold_model.decision_function(X[te]))
    # the held-out scores rank the held-out documents (they are not noise): AUC well above chance on average
    from sklearn.metrics import roc_auc_score

    assert np.mean([roc_auc_score(Y[:, j], held_out[:, j]) for j in range(Y.shape[1])]) > 0.7


def test_a_class_without_positives_scores_every_document_alike(dense):
    X, Y = dense
    Y = Y.copy()
    Y[:, 2] = 0
    model, _ = fit_ridge_ovr(X, Y)
    scores = model.decision_function(X[:5])
    np.testing.assert_allclose(scores[:, 2], -1.0, atol=1e-6)


@pytest.mark.parametrize("alphas", [(), (0.0, 1.0), (-1.0,), (float("nan"),)])
def test_penalties_must_be_positive(dense, alphas):
    X, Y = dense
    with pytest.raises(ValueError, match="alphas must be positive"):
        fit_ridge_ovr(X, Y, alphas=alphas)


def test_one_training_vector_is_refused(dense):
    X, Y = dense
    with pytest.raises(ValueError, match="at least 2 training vectors"):
        fit_ridge_ovr(X[:1], Y[:1])
