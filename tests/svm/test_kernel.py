"""RBFSVMOvR: one-vs-rest RBF SVMs sharing one Gram matrix, checked against scikit-learn's SVC.

The inputs are real meta-level vectors: Posteriors-view outputs of demo documents.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.svm import SVC

from gfun.datasets.demo import load_demo
from gfun.svm.kernel import RBFSVMOvR
from gfun.svm.linear import CONSTANT_SCORE, make_folds
from gfun.svm.rbf_kernel import rbf_kernel_inplace
from gfun.views.posteriors import PosteriorsView

GRID = (0.1, 1.0, 10.0)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(Ztr, Ytr, Zte, Yte): 30-dim posteriors of 150 training / 60 test documents, 6 classes + 2 constant."""
    train, test = load_demo()
    rng = np.random.RandomState(0)
    tr = np.concatenate([rng.choice(ix, 50, replace=False) for ix in train.select(["en", "it", "de"])
                         .by_language().values()])
    te = np.concatenate([rng.choice(ix, 20, replace=False) for ix in test.select(["en", "it", "de"])
                         .by_language().values()])
    train, test = train.select(["en", "it", "de"]).subset(np.sort(tr)), test.select(["en", "it", "de"]).subset(
        np.sort(te))
    view = PosteriorsView(random_state=0, train_posteriors="cv")
    Ztr = view.fit_transform(train.texts, np.asarray(train.langs, dtype=object), train.Y.toarray())
    Zte = view.transform(test.texts, np.asarray(test.langs, dtype=object))
    Ytr, Yte = train.Y.toarray(), test.Y.toarray()
    top = np.argsort(-Ytr.sum(axis=0), kind="stable")[:6]
    n, m = len(Ytr), len(Yte)
    Ytr = np.column_stack([Ytr[:, top], np.zeros(n, dtype=int), np.ones(n, dtype=int)])
    Yte = np.column_stack([Yte[:, top], np.zeros(m, dtype=int), np.ones(m, dtype=int)])
    return Ztr.astype(np.float64), Ytr, Zte.astype(np.float64), Yte


@pytest.mark.parametrize("shape", [(300, 30), (1000, 73), (500, 384), (1600, 73)])
def test_rbf_kernel_inplace_is_sklearns_bit_for_bit(shape: tuple[int, int]) -> None:
    """The in-place Gram and cross kernels equal sklearn's exactly (the SVMs trained on them cannot move), in
    blocks of rows and, for the largest (above ``THREADED_FROM`` entries), on threads."""
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.RandomState(shape[0])
    X = rng.rand(*shape)
    Xv = X + rng.normal(0.0, 0.05, shape)
    gamma = 1.0 / (shape[1] * X.var())
    gram = rbf_kernel_inplace(X, None, gamma)
    assert np.array_equal(gram, rbf_kernel(X, X, gamma=gamma))
    assert np.all(np.diag(gram) == 1.0)
    assert np.array_equal(rbf_kernel_inplace(Xv, X, gamma), rbf_kernel(Xv, X, gamma=gamma))
    assert np.array_equal(rbf_kernel_inplace(Xv[:7], X[::3], gamma), rbf_kernel(Xv[:7], X[::3], gamma=gamma))


@pytest.fixture(scope="module")
def cv_model(data) -> RBFSVMOvR:
    Ztr, Ytr, _, _ = data
    return RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0).fit(Ztr, Ytr)


@pytest.mark.parametrize("C", [1.0, 10.0])
def test_decision_function_equals_sklearn_svc(data, C: float) -> None:
    Ztr, Ytr, Zte, _ = data
    model = RBFSVMOvR(C=C, probability=False).fit(Ztr, Ytr)
    assert model.cv_scores_ is None and model.platt_A_ is None and model.oof_decision_ is None
    assert model.C_.tolist() == [C] * Ytr.shape[1]
    ref_gamma = SVC(gamma="scale").fit(Ztr, Ytr[:, 0])._gamma
    assert model.gamma_ == pytest.approx(ref_gamma)
    D = model.decision_function(Zte)
    assert D.shape == (len(Zte), Ytr.shape[1])
    for j in range(6):
        ref = SVC(kernel="rbf", gamma=model.gamma_, C=C).fit(Ztr, Ytr[:, j])
        np.testing.assert_allclose(D[:, j], ref.decision_function(Zte), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(model.predict(Zte)[:, j], ref.predict(Zte))
    assert model.support_vectors_.shape == (model.support_.size, Ztr.shape[1])
    np.testing.assert_array_equal(model.support_vectors_, Ztr[model.support_])


def test_fixed_gamma(data) -> None:
    Ztr, Ytr, Zte, _ = data
    model = RBFSVMOvR(C=1.0, gamma=0.7, probability=False).fit(Ztr, Ytr)
    assert model.gamma_ == 0.7
    ref = SVC(kernel="rbf", gamma=0.7, C=1.0).fit(Ztr, Ytr[:, 1])
    np.testing.assert_allclose(model.decision_function(Zte)[:, 1], ref.decision_function(Zte), rtol=1e-5, atol=1e-5)


def test_constant_classes(data, cv_model: RBFSVMOvR) -> None:
    _, _, Zte, _ = data
    D = cv_model.decision_function(Zte)
    np.testing.assert_array_equal(D[:, 6], -CONSTANT_SCORE)
    np.testing.assert_array_equal(D[:, 7], CONSTANT_SCORE)
    assert not cv_model.dual_coef_[:, 6:].any()
    P = cv_model.predict(Zte)
    assert not P[:, 6].any() and P[:, 7].all()
    proba = cv_model.predict_proba(Zte)
    assert np.isfinite(proba).all()
    assert proba[:, 6].max() < 0.05 and proba[:, 7].min() > 0.95


def test_only_constant_classes_and_a_single_sample() -> None:
    X = np.array([[0.2, 0.4, 0.1]])
    model = RBFSVMOvR(C="cv", C_grid=GRID).fit(X, np.array([[1, 0]]))
    assert model.support_vectors_.shape == (0, 3) and model.cv_scores_ is None
    np.testing.assert_array_equal(model.decision_function(np.ones((2, 3))), [[1.0, -1.0], [1.0, -1.0]])
    proba = model.predict_proba(np.ones((2, 3)))
    assert np.isfinite(proba).all() and (proba[:, 0] > 0.5).all() and (proba[:, 1] < 0.5).all()


def test_gram_fallback_gives_the_same_models(data, cv_model: RBFSVMOvR) -> None:
    Ztr, Ytr, Zte, _ = data
    fallback = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0, max_gram_samples=0).fit(Ztr, Ytr)
    np.testing.assert_array_equal(fallback.C_, cv_model.C_)
    np.testing.assert_allclose(fallback.cv_scores_, cv_model.cv_scores_, atol=1e-12)
    np.testing.assert_array_equal(fallback.support_, cv_model.support_)
    np.testing.assert_allclose(fallback.decision_function(Zte), cv_model.decision_function(Zte), rtol=1e-6,
                               atol=1e-6)
    np.testing.assert_array_equal(fallback.predict(Zte), cv_model.predict(Zte))
    np.testing.assert_allclose(fallback.oof_decision_, cv_model.oof_decision_, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(fallback.predict_proba(Zte), cv_model.predict_proba(Zte), atol=1e-5)


def test_C_by_cross_validation(data, cv_model: RBFSVMOvR) -> None:
    _, Ytr, _, _ = data
    k = Ytr.shape[1]
    assert cv_model.cv_scores_.shape == (len(GRID), k)
    assert ((cv_model.cv_scores_ >= 0) & (cv_model.cv_scores_ <= 1)).all()
    assert set(cv_model.C_.tolist()) <= set(GRID) and cv_model.C_.shape == (k,)
    for j in range(k):
        col = cv_model.cv_scores_[:, j]
        assert cv_model.C_[j] == GRID[int(np.argmax(col >= col.max() - 1e-12))]  # best F1, ties to smaller C
    assert cv_model.C_[6] == GRID[0] and cv_model.C_[7] == GRID[0]  # constant classes: all C tie
    assert cv_model.oof_decision_.shape == Ytr.shape
    # the out-of-fold scores of the chosen C are what the F1 of cv_scores_ was computed from
    pred = cv_model.oof_decision_ > 0
    Yb = Ytr.astype(bool)
    tp, fp, fn = (pred & Yb).sum(0), (pred & ~Yb).sum(0), (~pred & Yb).sum(0)
    f1 = np.where(tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 1.0)
    np.testing.assert_allclose(f1, cv_model.cv_scores_.max(axis=0))


def test_cv_scores_equal_brute_force_svc_cross_validation(data, cv_model: RBFSVMOvR) -> None:
    """Every (C, class) cell of cv_scores_ is the pooled out-of-fold F1 of plain SVCs on the same folds."""
    Ztr, Ytr, _, _ = data
    oof = np.zeros((len(GRID), *Ytr.shape))
    for tr, te in make_folds(len(Ztr), 4, 0):
        for j in range(6):
            for g, c in enumerate(GRID):
                if 0 < Ytr[tr, j].sum() < tr.size:
                    svc = SVC(kernel="rbf", gamma=cv_model.gamma_, C=c).fit(Ztr[tr], Ytr[tr, j])
                    oof[g, te, j] = svc.decision_function(Ztr[te])
                else:
                    oof[g, te, j] = CONSTANT_SCORE if Ytr[tr, j].all() else -CONSTANT_SCORE
    pred, Yb = oof[:, :, :6] > 0, Ytr[:, :6].astype(bool)
    tp, fp, fn = (pred & Yb).sum(1), (pred & ~Yb).sum(1), (~pred & Yb).sum(1)
    f1 = np.where(tp + fp + fn > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 1.0)
    np.testing.assert_allclose(cv_model.cv_scores_[:, :6], f1, atol=0.02)
    chosen = oof[[GRID.index(c) for c in cv_model.C_[:6]], :, np.arange(6)].T
    np.testing.assert_allclose(cv_model.oof_decision_[:, :6], chosen, rtol=1e-4, atol=1e-4)


def test_global_C_selection(data, cv_model: RBFSVMOvR) -> None:
    Ztr, Ytr, _, _ = data
    model = RBFSVMOvR(C="cv", C_grid=GRID, C_selection="global", cv=4, random_state=0).fit(Ztr, Ytr)
    assert len(set(model.C_.tolist())) == 1
    np.testing.assert_allclose(model.cv_scores_, cv_model.cv_scores_)  # same folds, same candidates
    assert model.C_[0] == GRID[int(np.argmax(model.cv_scores_.mean(axis=1)))]


def test_predict_proba_in_unit_interval_and_monotone_in_decision(data, cv_model: RBFSVMOvR) -> None:
    Ztr, Ytr, Zte, _ = data
    Z = np.vstack([Ztr, Zte])
    D = cv_model.decision_function(Z)
    P = cv_model.predict_proba(Z)
    assert P.shape == D.shape and ((P >= 0) & (P <= 1)).all()
    oof = cv_model.oof_decision_
    informative = 0
    for j in range(Ytr.shape[1]):
        step = np.diff(P[np.argsort(D[:, j], kind="stable"), j])
        assert (step >= -1e-12).all() or (step <= 1e-12).all()  # a monotone function of the decision score
        # where the out-of-fold scores rank positives higher, the posterior increases with the score
        pos = Ytr[:, j] == 1
        if 0 < pos.sum() < pos.size and oof[pos, j].mean() - oof[~pos, j].mean() > 0.1:
            informative += 1
            assert cv_model.platt_A_[j] < 0
            assert (step >= -1e-12).all() and step.sum() > 0.1
    assert informative >= 3
    np.testing.assert_array_equal(cv_model.predict(Z), (D > 0).astype(np.int8))
    assert cv_model.predict(Z).dtype == np.int8


def test_deterministic_and_thread_parallel_equal(data, cv_model: RBFSVMOvR) -> None:
    Ztr, Ytr, Zte, _ = data
    again = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0, n_jobs=2).fit(Ztr, Ytr)
    np.testing.assert_array_equal(again.C_, cv_model.C_)
    np.testing.assert_allclose(again.predict_proba(Zte), cv_model.predict_proba(Zte), rtol=0, atol=1e-12)


def test_state_round_trip_through_json(data, cv_model: RBFSVMOvR) -> None:
    _, _, Zte, _ = data
    meta, arrays = cv_model.get_state()
    meta = json.loads(json.dumps(meta))
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values())
    back = RBFSVMOvR.from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    assert back.get_params() == cv_model.get_params()
    np.testing.assert_array_equal(back.decision_function(Zte), cv_model.decision_function(Zte))
    np.testing.assert_array_equal(back.predict_proba(Zte), cv_model.predict_proba(Zte))
    np.testing.assert_array_equal(back.C_, cv_model.C_)
    np.testing.assert_array_equal(back.cv_scores_, cv_model.cv_scores_)
    plain = RBFSVMOvR(C=1.0, probability=False).fit(data[0], data[1])
    back = RBFSVMOvR.from_state(*plain.get_state())
    assert back.platt_A_ is None and back.cv_scores_ is None
    np.testing.assert_array_equal(back.predict(Zte), plain.predict(Zte))


def test_float32_support_vectors_are_the_saved_model_and_barely_move_the_scores(data) -> None:
    Ztr, Ytr, Zte, _ = data
    Ztr, Zte = np.sqrt(Ztr), np.sqrt(Zte)  # not float32 numbers (the posteriors are)
    cv_model = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0).fit(Ztr, Ytr)
    small = clone(cv_model).set_params(support_dtype="float32").fit(Ztr, Ytr)
    assert small.support_vectors_.dtype == np.float32 and cv_model.support_vectors_.dtype == np.float64
    np.testing.assert_array_equal(small.support_, cv_model.support_)  # the same SVMs, the same C
    np.testing.assert_array_equal(small.dual_coef_, cv_model.dual_coef_)
    assert small.support_vectors_.nbytes * 2 == cv_model.support_vectors_.nbytes
    # the fitted model is the saved one: identical scores after a round trip
    meta, arrays = small.get_state()
    back = RBFSVMOvR.from_state(json.loads(json.dumps(meta)), {k: np.array(v) for k, v in arrays.items()})
    assert back.support_vectors_.dtype == np.float32
    np.testing.assert_array_equal(back.decision_function(Zte), small.decision_function(Zte))
    # scores computed in float64 from float32 vectors: within float32 rounding of the float64 model's
    D, D64 = small.decision_function(Zte), cv_model.decision_function(Zte)
    assert D.dtype == np.float64
    np.testing.assert_allclose(D, D64, rtol=0, atol=1e-5)
    assert not np.array_equal(D, D64)  # the cast did happen
    with pytest.raises(ValueError, match="support_dtype"):
        RBFSVMOvR(C=1.0, support_dtype="float16").fit(Ztr, Ytr)


def test_small_calls_keep_float32_support_vectors_widened_and_score_the_same_bits(data, monkeypatch) -> None:
    """A served request (a few documents) must not widen 20 MB of float32 support vectors at every call: small
    calls keep the float64 copy, large ones keep nothing, and the scores are the same bits as widening each time."""
    import pickle

    import gfun.svm.kernel
    from gfun.svm.rbf_kernel import rbf_kernel_inplace

    monkeypatch.setattr(gfun.svm.kernel, "KEEP_WIDE_SUPPORT_BELOW", 8)  # 256 by default; 60 test documents here

    Ztr, Ytr, Zte, _ = data
    model = RBFSVMOvR(C=1.0, support_dtype="float32", random_state=0).fit(np.sqrt(Ztr), Ytr)
    Zte = np.sqrt(Zte)

    def widened_every_time(X):  # what decision_function did before: widen, then the kernel
        K = rbf_kernel_inplace(X, np.asarray(model.support_vectors_, dtype=np.float64), model.gamma_)
        return K @ model.dual_coef_ + model.intercept_

    np.testing.assert_array_equal(model.decision_function(Zte), widened_every_time(Zte))
    assert "_wide" not in model.__dict__  # a large call keeps nothing
    for rows in (slice(0, 1), slice(5, 12), slice(59, 60)):
        np.testing.assert_array_equal(model.decision_function(Zte[rows]), widened_every_time(Zte[rows]))
    wide = model._wide[1]
    assert wide.dtype == np.float64 and model.decision_function(Zte[:3]) is not None and model._wide[1] is wide
    assert "_wide" not in pickle.loads(pickle.dumps(model)).__dict__  # never pickled (nor saved: get_state)
    model.support_vectors_ = model.support_vectors_.copy()  # new vectors: the kept copy is not reused
    np.testing.assert_array_equal(model.decision_function(Zte[:2]), widened_every_time(Zte[:2]))
    assert model._wide[1] is not wide


def test_sklearn_contract_and_errors(data) -> None:
    Ztr, Ytr, Zte, _ = data
    est = RBFSVMOvR(C=2.0, cv=3)
    assert clone(est).get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        est.decision_function(Zte)
    with pytest.raises(NotFittedError):
        est.get_state()
    no_proba = RBFSVMOvR(C=1.0, probability=False).fit(Ztr, Ytr)
    with pytest.raises(AttributeError, match="probability"):
        no_proba.predict_proba(Zte)
    with pytest.raises(ValueError, match="features"):
        no_proba.decision_function(Zte[:, :5])
    bad_X = Ztr.copy()
    bad_X[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RBFSVMOvR(C=1.0).fit(bad_X, Ytr)
    with pytest.raises(ValueError, match="rows"):
        RBFSVMOvR(C=1.0).fit(Ztr, Ytr[:-1])
    for params in ({"C": -1.0}, {"C": "auto"}, {"C": "cv", "C_grid": ()}, {"C": "cv", "C_grid": (0.0, 1.0)},
                   {"C": 1.0, "gamma": -2.0}, {"C": 1.0, "C_selection": "best"}):
        with pytest.raises(ValueError):
            RBFSVMOvR(**params).fit(Ztr, Ytr)


def test_bad_C_selection_rejected_with_cv(data) -> None:
    Ztr, Ytr, _, _ = data
    with pytest.raises(ValueError, match="C_selection"):
        RBFSVMOvR(C="cv", C_grid=GRID, C_selection="globl", cv=3).fit(Ztr[:40], Ytr[:40])


# ------------------------------------------------------------------------------------------- Nystroem
def test_nystroem_approximation_close_to_the_exact_kernel(data) -> None:
    from gfun.metrics.measures import f1_from_counts

    Ztr, Ytr, Zte, Yte = data

    def macro_f1(pred: np.ndarray) -> float:
        Y = Yte.astype(bool)
        tp, fp, fn = (pred & Y).sum(0), (pred & ~Y).sum(0), (~pred & Y).sum(0)
        return float(f1_from_counts(tp, fp, fn, np.zeros_like(tp)).mean())

    exact = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0).fit(Ztr, Ytr)
    # as many landmarks as training vectors: the features reproduce the kernel exactly
    full = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, approximation="nystroem", n_components=10_000,
                     random_state=0).fit(Ztr, Ytr)
    assert full.nystroem_components_.shape == Ztr.shape and full.dual_coef_.shape == (0, Ytr.shape[1])
    agree = (full.predict(Zte) == exact.predict(Zte)).mean()
    assert agree > 0.97, agree
    assert abs(macro_f1(full.predict(Zte) > 0) - macro_f1(exact.predict(Zte) > 0)) < 0.05
    # fewer landmarks: still a usable classifier, calibrated, constant classes handled
    small = RBFSVMOvR(C=1.0, approximation="nystroem", n_components=40, random_state=0).fit(Ztr, Ytr)
    P = small.predict_proba(Zte)
    assert P.shape == Yte.shape and np.all((P >= 0) & (P <= 1))
    assert np.all(small.predict(Zte)[:, -2] == 0) and np.all(small.predict(Zte)[:, -1] == 1)
    assert macro_f1(small.predict(Zte) > 0) > 0.5 * macro_f1(exact.predict(Zte) > 0)
    # persistence without pickle
    meta, arrays = small.get_state()
    json.dumps(meta)
    back = RBFSVMOvR.from_state(meta, arrays)
    np.testing.assert_allclose(back.decision_function(Zte), small.decision_function(Zte))
    with pytest.raises(ValueError, match="nystroem"):
        RBFSVMOvR(C=1.0, approximation="random-fourier").fit(Ztr, Ytr)


@pytest.mark.parametrize("threshold", ["zero", "validated"])
def test_validate_then_finish_is_fit(data, threshold: str) -> None:
    """What select does (cross-validate candidates, train the kept one) gives the model fit() gives."""
    X, Y = data[0], data[1]
    full = RBFSVMOvR(C=1.0, cv=3, threshold=threshold, random_state=0).fit(X, Y)
    part = RBFSVMOvR(C=1.0, cv=3, threshold=threshold, random_state=0).validate(X, Y)
    assert part.validated_decision_.shape == Y.shape
    np.testing.assert_array_equal(part.threshold_, full.threshold_)
    part.finish(X, Y)
    np.testing.assert_allclose(part.decision_function(X), full.decision_function(X), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(part.predict_proba(X), full.predict_proba(X), rtol=1e-10, atol=1e-12)


def test_validate_reuses_the_held_out_decisions_of_a_known_C(data, monkeypatch) -> None:
    """A grid validation given a validation at one of its C values (how select compares its candidates) does not
    train that C again, and chooses C, thresholds and sigmoids as the whole grid does: by searching each class's C
    outward from the known one while its cross-validated F1 does not fall, or, when every fold's kernel blocks do not
    fit the memory budget together, over the whole grid fold by fold."""
    import gfun.svm.kernel_exact as kernel

    X, Y = data[0], data[1]
    grid = (0.01, 0.1, 1.0, 10.0, 100.0)
    settings = {"cv": 3, "threshold": "validated", "random_state": 0, "C_grid": grid}
    whole = RBFSVMOvR(C="cv", **settings).validate(X, Y)
    at_one = RBFSVMOvR(C=1.0, probability=False, **settings).validate(X, Y)
    trained: list[float] = []
    fit_binary = kernel._fit_binary
    monkeypatch.setattr(kernel, "_fit_binary", lambda Kx, y, C, *a: trained.append(C) or fit_binary(Kx, y, C, *a))
    for blocks_fit in (True, False):
        monkeypatch.setattr(RBFSVMOvR, "_climbs", lambda self, *a, fit=blocks_fit: fit)
        trained.clear()
        reused = RBFSVMOvR(C="cv", **settings).validate(X, Y, known=at_one)
        assert trained and 1.0 not in trained  # the other C values only
        np.testing.assert_array_equal(reused.C_, whole.C_)
        np.testing.assert_array_equal(reused.threshold_, whole.threshold_)
        np.testing.assert_allclose(reused.platt_A_, whole.platt_A_, rtol=1e-10)
        if not blocks_fit:
            np.testing.assert_allclose(reused.cv_scores_, whole.cv_scores_)
    with pytest.raises(ValueError, match="known must be validated on the same data and folds"):
        RBFSVMOvR(C="cv", **{**settings, "cv": 4}).validate(X, Y, known=at_one)
    with pytest.raises(ValueError, match="at one C of C_grid"):
        RBFSVMOvR(C="cv", **{**settings, "C_grid": (0.1, 10.0)}).validate(X, Y, known=at_one)


def test_calibrate_fits_the_sigmoids_validate_would_have(data) -> None:
    """A validation without sigmoids (select's comparison), calibrated afterwards, is the validation with them."""
    X, Y = data[0], data[1]
    settings = {"C": 1.0, "cv": 3, "threshold": "validated", "random_state": 0}
    with_platt = RBFSVMOvR(probability=True, **settings).validate(X, Y)
    later = RBFSVMOvR(probability=False, **settings).validate(X, Y)
    assert later.platt_A_ is None
    later.set_params(probability=True).calibrate(Y)
    np.testing.assert_array_equal(later.platt_A_, with_platt.platt_A_)
    np.testing.assert_array_equal(later.platt_B_, with_platt.platt_B_)


# ------------------------------------------------------------------------------- memory budget, least squares
def test_parse_memory_and_exact_memory() -> None:
    from gfun.svm.memory_budget import exact_memory, parse_memory

    assert parse_memory("2GB") == 2 * 2**30 and parse_memory("512m") == 512 * 2**20 and parse_memory(1e9) == 1e9
    assert parse_memory("1.5 G") == 1.5 * 2**30
    for bad in ("lots", "-1GB", 0, "0GB", True):
        with pytest.raises(ValueError, match="memory"):
            parse_memory(bad)
    # the Gram matrix dominates: 6,491 documents (debtags run 0) fit in 2 GB, 18,347 do not
    assert exact_memory(6491, 73, 6, 2) < parse_memory("2GB") < exact_memory(18347, 73, 1, 2)
    assert exact_memory(2000, 73) - exact_memory(1000, 73) > 8 * (2000**2 - 1000**2) - 1


def test_auto_switches_to_nystroem_least_squares_beyond_the_budget(data, caplog) -> None:
    import logging

    from gfun.metrics.measures import f1_from_counts

    Ztr, Ytr, Zte, Yte = data

    def macro_f1(pred: np.ndarray) -> float:
        Y = Yte.astype(bool)
        tp, fp, fn = (pred & Y).sum(0), (pred & ~Y).sum(0), (~pred & Y).sum(0)
        return float(f1_from_counts(tp, fp, fn, np.zeros_like(tp)).mean())

    exact = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, random_state=0).fit(Ztr, Ytr)
    assert exact.method_ is None and exact.dual_coef_.shape[0] > 0
    with caplog.at_level(logging.WARNING, logger="gfun.svm.kernel"):
        approx = RBFSVMOvR(C="cv", C_grid=GRID, cv=4, max_memory="1MB", n_components=60, random_state=0).fit(Ztr, Ytr)
    assert approx.method_ == "nystroem-ls" and "max_memory" in caplog.text and "Nystroem" in caplog.text
    assert approx.nystroem_components_.shape == (60, Ztr.shape[1]) and approx.dual_coef_.shape == (0, Ytr.shape[1])
    assert approx.cv_scores_.shape == (len(GRID), Ytr.shape[1]) and set(approx.C_) <= set(GRID)
    P = approx.predict_proba(Zte)
    assert np.all((P >= 0) & (P <= 1))
    assert np.all(approx.predict(Zte)[:, -2] == 0) and np.all(approx.predict(Zte)[:, -1] == 1)  # constant classes
    assert macro_f1(approx.predict(Zte) > 0) > 0.8 * macro_f1(exact.predict(Zte) > 0)
    meta, arrays = approx.get_state()
    json.dumps(meta)
    np.testing.assert_allclose(RBFSVMOvR.from_state(meta, arrays).decision_function(Zte), approx.decision_function(Zte))
    with pytest.raises(ValueError, match="approximation"):
        RBFSVMOvR(C=1.0, approximation="random-fourier").fit(Ztr, Ytr)
    with pytest.raises(ValueError, match="landmarks"):
        RBFSVMOvR(C=1.0, landmarks="leverage").fit(Ztr, Ytr)


def test_nystroem_least_squares_folds_equal_models_trained_on_the_folds(data, monkeypatch) -> None:
    """Each fold's system is the whole minus the fold's part: its held-out scores are those of a model trained
    on the other folds alone (same landmarks), and the final model is the one trained on all rows."""
    Ztr, Ytr, Zte, _ = data
    L = Ztr[::5].copy()
    monkeypatch.setattr(RBFSVMOvR, "_landmarks", lambda self, X: L)
    kw = {"C": 10.0, "gamma": 0.5, "approximation": "nystroem-ls"}
    cv = RBFSVMOvR(cv=3, random_state=0, **kw).fit(Ztr, Ytr)
    for tr, te in make_folds(len(Ztr), 3, 0):
        alone = RBFSVMOvR(probability=False, **kw).fit(Ztr[tr], Ytr[tr])
        assert alone.oof_decision_ is None
        np.testing.assert_allclose(cv.oof_decision_[te], alone.decision_function(Ztr[te]), rtol=1e-6, atol=1e-6)
    plain = RBFSVMOvR(probability=False, **kw).fit(Ztr, Ytr)
    np.testing.assert_allclose(cv.decision_function(Zte), plain.decision_function(Zte), rtol=1e-8, atol=1e-8)


def _fitted_arrays(model: RBFSVMOvR) -> dict[str, np.ndarray]:
    return dict(model.get_state()[1]) | {"oof": model.validated_decision_}


@pytest.mark.parametrize("approximation", ["nystroem-ls", None])
def test_row_block_jobs_give_the_same_model_on_threads_and_on_a_dask_cluster(data, monkeypatch,
                                                                              approximation) -> None:
    """The passes over the training vectors (Nystroem least squares) and the decision scores of many rows are jobs
    over blocks of rows: with blocks of 20 rows they run on a Dask cluster's workers, and the model, its held-out
    scores and its decision scores are the same bits for 1 thread, 2 threads and the cluster."""
    distributed = pytest.importorskip("distributed")
    from joblib import parallel_config

    from gfun.svm import nystroem

    monkeypatch.setattr(nystroem, "CHUNK_ROWS", 20)  # 150 training rows: 8 blocks
    Ztr, Ytr, Zte, _ = data
    Zval = Ztr + np.random.RandomState(1).normal(0.0, 0.02, Ztr.shape)
    kw = {"C": "cv", "C_grid": GRID, "cv": 3, "approximation": approximation, "n_components": 50,
          "threshold": "validated", "random_state": 0}
    fits = {n_jobs: RBFSVMOvR(n_jobs=n_jobs, **kw).fit(Ztr, Ytr, X_val=Zval) for n_jobs in (1, 2)}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        with distributed.get_task_stream(client) as stream, parallel_config(backend="dask"):
            fits["dask"] = RBFSVMOvR(**kw).fit(Ztr, Ytr, X_val=Zval)
            remote_scores = fits["dask"].decision_function(Zte, batch_size=8)  # 60 rows: 4 blocks of 2 batches
    tasks = {task["key"] for task in stream.data}
    expected = ["_decision_rows"] + (["normal_equations", "ridge_path", "held_out_scores"] if approximation
                                     else ["_path"])
    for name in expected:
        assert any(name in key for key in tasks), (name, tasks)
    reference = _fitted_arrays(fits[1])
    for run in (2, "dask"):
        arrays = _fitted_arrays(fits[run])
        assert arrays.keys() == reference.keys()
        for key, value in reference.items():
            assert np.array_equal(arrays[key], value), (run, key)
    for run in (1, 2):
        assert np.array_equal(fits[run].decision_function(Zte, batch_size=8), remote_scores)


def test_held_out_scores_are_the_same_bits_for_any_n_jobs_whatever_blas_threads() -> None:
    """The cross-validation's class jobs compute with one BLAS thread for any n_jobs: the held-out scores, the Platt
    sigmoids and C of n_jobs=1 in a process with two BLAS threads are those of n_jobs=2 (a matrix-vector product
    sums in another order on two BLAS threads; it does at these shapes: 450 held-out rows, ~1,700 support vectors)."""
    from threadpoolctl import threadpool_limits

    train, test = load_demo()
    langs = np.asarray(train.langs, dtype=object)
    view = PosteriorsView(random_state=0, train_posteriors="cv")
    Z = np.vstack([view.fit_transform(train.texts, langs, train.Y.toarray()),
                   view.transform(test.texts[:500], np.asarray(test.langs[:500], dtype=object))]).astype(np.float64)
    Y = np.vstack([train.Y.toarray(), test.Y.toarray()[:500]])
    # the two most frequent classes, 30% of their labels flipped: hard problems, most documents support vectors
    Y = Y[:, np.argsort(-Y.sum(axis=0), kind="stable")[:2]] ^ (np.random.RandomState(0).rand(len(Y), 2) < 0.3)
    with threadpool_limits(limits=2, user_api="blas"):
        one = RBFSVMOvR(C="cv", C_grid=(1.0, 10.0), random_state=0, n_jobs=1).fit(Z, Y)
    two = RBFSVMOvR(C="cv", C_grid=(1.0, 10.0), random_state=0, n_jobs=2).fit(Z, Y)
    assert one.support_.size > 1500
    for name in ("C_", "platt_A_", "platt_B_", "threshold_", "dual_coef_", "intercept_"):
        assert getattr(one, name).tobytes() == getattr(two, name).tobytes(), name
