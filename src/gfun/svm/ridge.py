"""One-vs-rest ridge classifiers on dense vectors, in closed form, each class's penalty chosen by leave-one-out.

The learner of the E view (:class:`gfun.views.encoder.EncoderPosteriorsView`). On a few hundred dense dimensions
(a sentence encoder's vectors) a class's least-squares direction is cheap to compute exactly, for every class and
every penalty at once: one eigendecomposition of the centred vectors' scatter matrix ``X'X`` serves them all, and
the leave-one-out residuals of every penalty come from the same decomposition (Allen's PRESS), so choosing the
penalty costs no refit. liblinear's dual coordinate descent, by contrast, solves each class on its own and passes
over the dense matrix dozens of times per class (debtags run 0: 73 classes x 6 fits, about 28 s on 2 cores,
against about 1 s here).

With an unpenalised intercept and two target values, the least-squares direction is Fisher's discriminant
(``(S + alpha I)^-1 (m_pos - m_neg)``, ``S`` the pooled scatter) whatever the two values are, so the classes are
not weighted: the Platt sigmoids fitted on the out-of-fold scores (:func:`gfun.views.pooled.calibrated_scores`)
place a rare class's scores, and the meta-classifier its threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from joblib import delayed

from gfun.core.parallel import run_parallel
from gfun.svm.linear import LinearOvR, make_folds

__all__ = ["RIDGE_ALPHAS", "fit_ridge_ovr", "ridge_scores"]

#: The penalties each class chooses from (by leave-one-out squared error), for vectors scaled to unit mean norm.
RIDGE_ALPHAS: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)


def fit_ridge_ovr(X: np.ndarray, Y: np.ndarray, alphas: Sequence[float] = RIDGE_ALPHAS
                  ) -> tuple[LinearOvR, np.ndarray]:
    """Fit one ridge regression per column of ``Y`` on targets +1 / -1, with an unpenalised intercept.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Dense vectors.
    Y : ndarray of shape (n_samples, n_classes), binary
    alphas : sequence of float
        Penalties; each class keeps the one with the smallest mean squared leave-one-out residual (the smaller on a
        tie).

    Returns
    -------
    model : LinearOvR
        ``scores = X @ coef.T + intercept`` (coef float32, as :func:`gfun.svm.linear.fit_linear_ovr`'s).
    alpha : ndarray of shape (n_classes,)
        The penalty each class kept.
    """
    alphas = np.asarray([float(a) for a in alphas], dtype=np.float64)
    if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
        raise ValueError(f"alphas must be positive numbers, got {list(alphas)}")
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise ValueError(f"ridge needs at least 2 training vectors, got {n}")
    mean = X.mean(axis=0)
    Xc = X - mean
    T = np.where(np.asarray(Y) > 0, 1.0, -1.0)
    t_mean = T.mean(axis=0)
    Tc = T - t_mean
    s, V = np.linalg.eigh(Xc.T @ Xc)
    s = np.maximum(s, 0.0)  # rounding can leave the smallest eigenvalues slightly negative
    XV = Xc @ V
    proj = XV.T @ Tc  # V' X' T: the targets in the eigenbasis
    best_err = np.full(T.shape[1], np.inf)
    W = np.zeros((X.shape[1], T.shape[1]))
    chosen = np.zeros(T.shape[1])
    for a in alphas:
        f = 1.0 / (s + a)
        W_a = V @ (proj * f[:, None])
        leverage = np.einsum("ij,j,ij->i", XV, f, XV) + 1.0 / n  # the intercept's share: 1 / n
        press = ((Tc - Xc @ W_a) / (1.0 - leverage)[:, None]) ** 2
        err = press.mean(axis=0)
        better = err < best_err
        best_err[better], W[:, better], chosen[better] = err[better], W_a[:, better], a
    intercept = t_mean - mean @ W
    return LinearOvR(np.ascontiguousarray(W.T, dtype=np.float32), intercept.astype(np.float64)), chosen


def ridge_scores(X: np.ndarray, Y: np.ndarray, *, alphas: Sequence[float] = RIDGE_ALPHAS, cv: int,
                 random_state: int | None, groups: np.ndarray | None = None, n_jobs: int | None = None
                 ) -> tuple[LinearOvR, np.ndarray, np.ndarray | None]:
    """One-vs-rest ridge classifiers on ``X``: the fitted model, its in-sample scores and its ``cv``-fold
    out-of-fold scores (``None`` with too few documents to cross-validate), as
    :func:`gfun.views.pooled.pooled_scores` returns them for liblinear.

    The model on all documents and the fold models are fitted side by side (``n_jobs``), each with one BLAS
    thread, so the scores are the same bits for any ``n_jobs``; documents sharing a value of ``groups`` stay in one
    fold.
    """
    Y = np.asarray(Y)
    folds = make_folds(X.shape[0], cv, random_state, groups)
    parts = [np.arange(X.shape[0])] + [tr for tr, _ in folds]
    fitted = run_parallel((delayed(fit_ridge_ovr)(X[idx], Y[idx], alphas) for idx in parts), n_jobs,
                          blas_threads=1)
    model = fitted[0][0]
    held_out = None
    if folds:
        held_out = np.zeros(Y.shape, dtype=np.float64)
        for (fold_model, _), (_, te) in zip(fitted[1:], folds, strict=True):
            held_out[te] = fold_model.decision_function(X[te])
    return model, model.decision_function(X), held_out
