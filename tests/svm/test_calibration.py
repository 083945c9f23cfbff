"""Platt calibration (vectorised over classes) against scikit-learn's reference implementation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.calibration import _sigmoid_calibration

from gfun.svm.calibration import fit_platt, platt_posteriors


def _data(n: int = 300, k: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.RandomState(seed)
    Y = (rng.rand(n, k) < np.linspace(0.05, 0.5, k)).astype(np.int8)
    # informative but noisy scores, with a different scale and offset per column
    scale = np.linspace(0.5, 4.0, k)
    S = (Y * 2.0 - 1.0) * scale * 0.6 + rng.randn(n, k) * scale + np.linspace(-1, 1, k)
    return S, Y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_sklearn_sigmoid_calibration(seed: int) -> None:
    S, Y = _data(seed=seed)
    A, B = fit_platt(S, Y)
    assert A.shape == B.shape == (S.shape[1],)
    grid = np.linspace(S.min(), S.max(), 50)
    for j in range(S.shape[1]):
        a_ref, b_ref = _sigmoid_calibration(S[:, j], Y[:, j])
        np.testing.assert_allclose([A[j], B[j]], [a_ref, b_ref], rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(platt_posteriors(grid[:, None], A[j:j + 1], B[j:j + 1])[:, 0],
                                   1.0 / (1.0 + np.exp(a_ref * grid + b_ref)), atol=5e-4)


def test_vectorised_fit_equals_column_by_column_fit() -> None:
    S, Y = _data(k=5, seed=3)
    A, B = fit_platt(S, Y)
    for j in range(S.shape[1]):
        a, b = fit_platt(S[:, j], Y[:, j])
        np.testing.assert_allclose([A[j], B[j]], [a[0], b[0]], rtol=1e-10, atol=1e-12)


def test_sparse_labels_equal_dense_labels() -> None:
    S, Y = _data(seed=4)
    np.testing.assert_array_equal(np.stack(fit_platt(S, sp.csr_matrix(Y))), np.stack(fit_platt(S, Y)))


def test_posteriors_are_monotone_in_the_score() -> None:
    S, Y = _data(seed=5)
    A, B = fit_platt(S, Y)
    assert (A < 0).all()  # positive labels go with high scores
    grid = np.repeat(np.linspace(-20, 20, 401)[:, None], S.shape[1], axis=1)
    P = platt_posteriors(grid, A, B)
    assert ((P >= 0) & (P <= 1)).all()
    assert (np.diff(P, axis=0) >= 0).all()
    assert (P[-1] > P[0]).all()


def test_anti_correlated_scores_give_decreasing_posteriors() -> None:
    S, Y = _data(seed=6)
    A, B = fit_platt(-S, Y)
    assert (A > 0).all()
    P = platt_posteriors(-np.sort(S, axis=0), A, B)
    assert (np.diff(P, axis=0) >= 0).all()


def test_degenerate_columns_give_finite_values() -> None:
    rng = np.random.RandomState(7)
    n = 120
    y_mixed = (rng.rand(n) < 0.3).astype(int)
    S = np.column_stack([
        rng.randn(n),                       # all-negative labels
        rng.randn(n),                       # all-positive labels
        np.full(n, 2.5),                    # constant score, mixed labels
        np.zeros(n),                        # zero scores, mixed labels
        np.full(n, -1.0),                   # constant score, all-negative labels (a constant-class SVM)
        (y_mixed * 2 - 1) * 1e6,            # huge, perfectly separating scores
        (y_mixed * 2 - 1) * 1.0,            # perfectly separating unit scores
    ])
    Y = np.column_stack([np.zeros(n), np.ones(n), y_mixed, y_mixed, np.zeros(n), y_mixed, y_mixed]).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow / invalid-value warnings
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            A, B = fit_platt(S, Y)
            P = platt_posteriors(S, A, B)
    assert np.isfinite(A).all() and np.isfinite(B).all()
    assert np.isfinite(P).all() and ((P >= 0) & (P <= 1)).all()
    assert P[:, 0].max() < 0.1 and P[:, 4].max() < 0.1  # all-negative columns: low posteriors
    assert P[:, 1].min() > 0.9
    prior = y_mixed.mean()
    # without an informative score the posterior is (about) the smoothed prior
    np.testing.assert_allclose(P[:, 2], (y_mixed.sum() + 1) / (n + 2), atol=0.02)
    np.testing.assert_allclose(P[:, 3], prior, atol=0.02)
    # separable scores: confident but regularised by Platt's targets (never exactly 0 or 1 for unit scores)
    assert (P[y_mixed == 1, 6] > 0.9).all() and (P[y_mixed == 0, 6] < 0.1).all()
    assert (P[:, 6] < 1).all() and (P[:, 6] > 0).all()
    assert (P[y_mixed == 1, 5] > 0.9).all() and (P[y_mixed == 0, 5] < 0.1).all()


def test_posteriors_of_extreme_scores_do_not_overflow() -> None:
    A = np.array([-1.0, -50.0, 3.0])
    B = np.array([0.0, 2.0, -1.0])
    S = np.array([[-1e6, 1e6, 1e6], [1e6, -1e6, -1e6], [0.0, 0.0, 0.0]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        P = platt_posteriors(S, A, B)
    np.testing.assert_allclose(P[0], [0.0, 1.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(P[1], [1.0, 0.0, 1.0], atol=1e-300)
    np.testing.assert_allclose(P[2], 1.0 / (1.0 + np.exp(B)))


# ------------------------------------------------------------------------------------------ labels vs probabilities
def test_platt_through_the_origin_agrees_with_the_sign_of_the_score() -> None:
    rng = np.random.RandomState(0)
    y = rng.rand(400, 3) < [0.1, 0.5, 0.9]
    scores = np.where(y, 1.0, -1.0) * rng.rand(400, 3) * 2 + rng.randn(400, 3) + [0.7, -0.4, 0.3]
    A, B = fit_platt(scores, y, fit_intercept=False)
    assert (B == 0).all() and (A < 0).all()
    P = platt_posteriors(scores, A, B)
    np.testing.assert_array_equal(P > 0.5, scores > 0)
    A_free, B_free = fit_platt(scores, y)
    assert ((platt_posteriors(scores, A_free, B_free) > 0.5) != (scores > 0)).any()  # free sigmoids disagree
    anti = fit_platt(-scores, y, fit_intercept=False)[0]  # scores that point the wrong way: still decreasing
    assert (anti < 0).all()


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sigmoids_fitted_in_blocks_of_columns_are_the_same_bits(fit_intercept: bool,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Each column's sigmoid is fitted on its own: in blocks of columns (one column a block included), as on a
    cluster (the blocks run here on threads), the same numbers."""
    import gfun.core.parallel

    rng = np.random.RandomState(0)
    Y = rng.rand(3000, 13) < np.linspace(0.01, 0.4, 13)
    scores = rng.randn(3000, 13) + 2.0 * Y - 1.0
    A, B = fit_platt(scores, Y, fit_intercept=fit_intercept)
    calls = []
    monkeypatch.setattr(gfun.core.parallel, "on_dask_cluster", lambda: calls.append(1) or True)
    for n_jobs in (2, 7, 13):
        A2, B2 = fit_platt(scores, Y, fit_intercept=fit_intercept, n_jobs=n_jobs)
        assert np.array_equal(A, A2) and np.array_equal(B, B2)
    assert calls  # the blocks were asked for
