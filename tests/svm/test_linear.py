"""One-vs-rest liblinear SVMs on real TF-IDF vectors of the demo sample."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

from gfun.datasets.demo import load_demo
from gfun.metrics.measures import f1_from_counts
from gfun.svm.linear import CONSTANT_SCORE, cross_val_decision, fit_linear_ovr, make_folds, select_C
from gfun.text.tfidf import TfidfVectorizer


@pytest.fixture(scope="module")
def en() -> tuple[sp.csr_matrix, np.ndarray]:
    """TF-IDF of 150 English training documents and the 6 most frequent classes."""
    train = load_demo()[0].select("en")
    train = train.subset(range(150))
    X = TfidfVectorizer("en").fit_transform(train.texts)
    Y = train.Y.toarray()
    top = np.argsort(-Y.sum(axis=0), kind="stable")[:6]
    return sp.csr_matrix(X), Y[:, top]


def _reference(X: sp.spmatrix, y: np.ndarray, C: float, **kw) -> LinearSVC:
    return LinearSVC(C=C, dual=True, tol=1e-4, max_iter=2000, random_state=0, **kw).fit(X, y)


@pytest.mark.parametrize(("loss", "class_weight"), [("squared_hinge", None), ("hinge", None),
                                                     ("squared_hinge", "balanced")])
def test_equals_sklearn_linear_svc_per_class(en, loss: str, class_weight: str | None) -> None:
    X, Y = en
    model = fit_linear_ovr(X, Y, 1.0, loss=loss, class_weight=class_weight, random_state=0)
    assert model.coef.shape == (Y.shape[1], X.shape[1]) and model.intercept.shape == (Y.shape[1],)
    for j in range(Y.shape[1]):
        ref = _reference(X, Y[:, j], 1.0, loss=loss, class_weight=class_weight)
        np.testing.assert_allclose(model.coef[j], ref.coef_[0], rtol=1e-5, atol=1e-6)
        assert model.intercept[j] == pytest.approx(ref.intercept_[0], rel=1e-5, abs=1e-6)
        np.testing.assert_allclose(model.decision_function(X)[:, j], ref.decision_function(X), rtol=1e-5, atol=1e-5)


def test_sqrt_class_weight_is_sklearn_with_the_square_roots_of_the_balanced_weights(en) -> None:
    """``class_weight="sqrt"``: each label weighted by the square root of its balanced weight, as LinearSVC does
    with those weights given as a dict; a rare class's scores rise above the unweighted ones, less than balanced."""
    from gfun.svm.linear import binary_class_weights

    X, Y = en
    j = int(np.argmin(Y.sum(axis=0)))
    y = Y[:, j]
    n, n_pos = y.size, int(y.sum())
    np.testing.assert_allclose(binary_class_weights(y, "sqrt"), np.sqrt([n / (2 * (n - n_pos)), n / (2 * n_pos)]))
    model = fit_linear_ovr(X, Y, 1.0, class_weight="sqrt", random_state=0)
    ref = _reference(X, y, 1.0, class_weight=dict(enumerate(binary_class_weights(y, "sqrt"))))
    np.testing.assert_allclose(model.coef[j], ref.coef_[0], rtol=1e-5, atol=1e-6)
    mean = {w: float(fit_linear_ovr(X, Y, 1.0, class_weight=w, random_state=0).decision_function(X)[:, j].mean())
            for w in (None, "sqrt", "balanced")}
    assert mean[None] < mean["sqrt"] < mean["balanced"]  # the rare class's scores rise with its weight
    with pytest.raises(ValueError, match="class_weight must be one of"):
        binary_class_weights(y, "inverse")


def test_per_class_C(en) -> None:
    X, Y = en
    Cs = np.array([0.01, 0.1, 1.0, 10.0, 100.0, 1.0])
    model = fit_linear_ovr(X, Y, Cs, random_state=0)
    for j, c in enumerate(Cs):
        ref = _reference(X, Y[:, j], float(c))
        np.testing.assert_allclose(model.coef[j], ref.coef_[0], rtol=1e-4, atol=1e-5)
    # a tiny C shrinks the weights
    assert np.linalg.norm(model.coef[0]) < np.linalg.norm(model.coef[4])


def test_float32_and_dense_inputs_agree(en) -> None:
    X, Y = en
    a = fit_linear_ovr(X.astype(np.float32), Y, 1.0, random_state=0)
    b = fit_linear_ovr(X.astype(np.float64), Y, 1.0, random_state=0)
    np.testing.assert_allclose(a.coef, b.coef, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(a.decision_function(X), a.decision_function(X.toarray()), rtol=1e-5, atol=1e-6)


def test_constant_classes_give_constant_scores(en) -> None:
    X, Y = en
    Yc = np.column_stack([Y[:, 0], np.zeros(len(Y), dtype=int), np.ones(len(Y), dtype=int)])
    model = fit_linear_ovr(X, Yc, 1.0, random_state=0)
    S = model.decision_function(X[:20])
    np.testing.assert_array_equal(S[:, 1], -CONSTANT_SCORE)
    np.testing.assert_array_equal(S[:, 2], CONSTANT_SCORE)
    assert not model.coef[1].any() and not model.coef[2].any()
    assert np.unique(S[:, 0]).size > 1


def test_make_folds() -> None:
    folds = make_folds(23, 5, random_state=0)
    assert len(folds) == 5
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests.tolist()) == list(range(23))
    for tr, te in folds:
        assert not set(tr) & set(te) and len(tr) + len(te) == 23
    assert [te.tolist() for _, te in make_folds(23, 5, 0)] == [te.tolist() for _, te in folds]
    assert len(make_folds(3, 5, 0)) == 3
    assert make_folds(1, 5, 0) == [] and make_folds(0, 5, 0) == []


@pytest.mark.parametrize("n", [2, 3, 7, 23, 101, 6491])
def test_make_folds_are_those_of_scikit_learns_shuffled_kfold(n) -> None:
    """gfun computes the folds itself (importing sklearn.model_selection costs 0.12 s of every start): the same
    indices, in the same order and dtype, as ``KFold(k, shuffle=True, random_state=seed)``, the folds every saved
    model and published score was fitted with."""
    from sklearn.model_selection import KFold

    for k in (2, 3, 5):
        for seed in (0, 1, 12345, None):
            if k > n:
                continue
            ours = make_folds(n, k, seed if seed is not None else np.random.RandomState(7))
            theirs = list(KFold(k, shuffle=True, random_state=seed if seed is not None else np.random.RandomState(7))
                          .split(np.zeros(n)))
            assert len(ours) == len(theirs) == k
            for (tr, te), (tr2, te2) in zip(ours, theirs, strict=True):
                assert tr.dtype == tr2.dtype and te.dtype == te2.dtype
                np.testing.assert_array_equal(tr, tr2)
                np.testing.assert_array_equal(te, te2)


def test_cross_val_decision(en) -> None:
    X, Y = en
    folds = make_folds(X.shape[0], 4, random_state=0)
    oof = cross_val_decision(X, Y, 1.0, folds, random_state=0)
    assert oof.shape == Y.shape and oof.dtype == np.float64
    in_sample = fit_linear_ovr(X, Y, 1.0, random_state=0).decision_function(X)
    assert not np.allclose(oof, in_sample, atol=1e-3)
    # the in-sample scores separate the training labels better than out-of-fold ones
    margin_in = np.mean(np.where(Y == 1, in_sample, -in_sample))
    margin_oof = np.mean(np.where(Y == 1, oof, -oof))
    assert margin_in > margin_oof
    # each fold's rows come from a model trained on the other folds only
    tr, te = folds[2]
    np.testing.assert_allclose(oof[te], fit_linear_ovr(X[tr], Y[tr], 1.0, random_state=0).decision_function(X[te]),
                               rtol=1e-5, atol=1e-6)


def _cv_f1(X, Y, c, folds) -> np.ndarray:
    pred = cross_val_decision(X, Y, c, folds, random_state=0) > 0
    Yb = Y.astype(bool)
    tp, fp, fn = (pred & Yb).sum(0), (pred & ~Yb).sum(0), (~pred & Yb).sum(0)
    return f1_from_counts(tp, fp, fn, np.zeros_like(tp))


def test_select_C_maximises_cross_validated_f1(en) -> None:
    X, Y = en
    Y = np.column_stack([Y, np.zeros(len(Y), dtype=int)])  # plus a class without positives
    grid = [0.01, 1.0, 100.0]
    folds = make_folds(X.shape[0], 3, random_state=0)
    best = select_C(X, Y, grid, folds, random_state=0)
    assert best.shape == (Y.shape[1],) and set(best.tolist()) <= set(grid)
    f1 = np.stack([_cv_f1(X, Y, c, folds) for c in grid])
    for j in range(Y.shape[1]):
        chosen = grid.index(best[j])
        assert f1[chosen, j] == pytest.approx(f1[:, j].max())
        assert chosen == int(np.argmax(f1[:, j] >= f1[:, j].max() - 1e-12))  # ties to the smaller C
    assert best[-1] == 0.01  # every C ties on the empty class: the smallest wins
    assert len(set(best.tolist())) > 1 or f1.std() == 0
    assert select_C(X, Y, grid, [], random_state=0).tolist() == [0.01] * Y.shape[1]


def test_select_C_ties_go_to_the_smaller_C_for_any_grid_order(en) -> None:
    X, Y = en
    Y = np.column_stack([Y[:, :1], np.zeros(len(Y), dtype=int)])
    folds = make_folds(X.shape[0], 3, random_state=0)
    assert select_C(X, Y, [100.0, 0.01, 1.0], folds, random_state=0)[1] == 0.01


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_the_models_are_the_same_bits_for_any_n_jobs(loss: str) -> None:
    """Classes solved at the same time on threads draw liblinear's coordinate order from generators of their own:
    n_jobs=4 (five times) gives the models of n_jobs=1 byte for byte."""
    train = load_demo()[0].select("en")
    X = sp.csr_matrix(TfidfVectorizer("en").fit_transform(train.texts))
    Y = train.Y.toarray()
    Y = Y[:, Y.sum(axis=0) >= 5]  # 28 classes that reach the solver
    one = fit_linear_ovr(X, Y, 1.0, loss=loss, random_state=0)
    for _ in range(5):
        four = fit_linear_ovr(X, Y, 1.0, loss=loss, random_state=0, n_jobs=4)
        assert four.coef.tobytes() == one.coef.tobytes() and four.intercept.tobytes() == one.intercept.tobytes()
