"""Platt calibration: sigmoids mapping decision scores to posterior probabilities.

The fit follows Platt (2000) with the numerically safe Newton method of Lin, Lin and Weng
(2007), the procedure libsvm uses for ``probability=True``: regularised targets
``t+ = (N+ + 1) / (N+ + 2)`` and ``t- = 1 / (N- + 2)``, and ``P(y=1|s) = 1 / (1 + exp(A s + B))``.
It is vectorised over classes: one call fits one sigmoid per column, each column on its own (the same numbers
whatever the other columns), so that blocks of columns can be fitted in parallel (``n_jobs``).

``fit_intercept=False`` fits the sigmoid through ``P = 0.5`` at score 0 (``B = 0``, ``A < 0``), so that
``P > 0.5`` exactly when the score is positive: probabilities that agree with the labels a decision
threshold of 0 predicts (what :class:`gfun.funnelling.generalized.GeneralizedFunnelling` reports).
"""

from __future__ import annotations

import numpy as np
from joblib import delayed

from gfun.core.parallel import run_parallel, split_blocks

__all__ = ["fit_platt", "fit_platt_or_prior", "platt_posteriors"]


def _log1pexp(z: np.ndarray) -> np.ndarray:
    """``log(1 + exp(z))`` without overflow."""
    return np.logaddexp(0.0, z)


def _sigmoid_neg(f: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(f))`` computed stably."""
    out = np.empty_like(f, dtype=np.float64)
    pos = f >= 0
    e = np.exp(-f[pos])
    out[pos] = e / (1.0 + e)
    out[~pos] = 1.0 / (1.0 + np.exp(f[~pos]))
    return out


def fit_platt(scores: np.ndarray, y: np.ndarray, *, max_iter: int = 100, min_step: float = 1e-10,
              sigma: float = 1e-12, eps: float = 1e-5, fit_intercept: bool = True, n_jobs: int | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """Fit one Platt sigmoid per column.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes)
        Decision scores, ideally produced on data the scorer was not trained on
        (cross-validated), otherwise the sigmoids are over-confident.
    y : array-like of shape (n_samples, n_classes)
        Binary targets (dense or sparse).
    max_iter, min_step, sigma, eps
        Newton iterations, smallest line-search step, Hessian ridge and stopping tolerance on the gradient.
    fit_intercept : bool
        ``False`` fixes ``B = 0`` and keeps ``A <= -1e-6``: ``P > 0.5`` if and only if the score is positive.
    n_jobs : int, optional
        Blocks of columns fitted in parallel, on a Dask cluster's workers or, from
        :data:`gfun.core.parallel.SPLIT_FROM_ROWS` samples on, on threads (:func:`gfun.core.parallel.split_blocks`):
        the same sigmoids for any ``n_jobs``.

    Returns
    -------
    A, B : ndarray of shape (n_classes,)
        Sigmoid parameters: ``P = 1 / (1 + exp(A * s + B))``.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim == 1:
        s = s[:, None]
    yy = y.toarray() if hasattr(y, "toarray") else np.asarray(y)
    yy = yy.reshape(s.shape).astype(bool)
    options = {"max_iter": max_iter, "min_step": min_step, "sigma": sigma, "eps": eps, "fit_intercept": fit_intercept}
    blocks = split_blocks(s.shape[1], n_jobs, rows=s.shape[0])
    if len(blocks) == 1:
        return _fit_columns(s, yy, **options)
    parts = run_parallel((delayed(_fit_columns)(s[:, b], yy[:, b], **options) for b in blocks), n_jobs)
    return np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])


def _fit_columns(s: np.ndarray, yy: np.ndarray, *, max_iter: int, min_step: float, sigma: float, eps: float,
                 fit_intercept: bool) -> tuple[np.ndarray, np.ndarray]:
    """:func:`fit_platt` of float64 scores and boolean targets of the same shape, in this process."""
    n_pos = yy.sum(axis=0).astype(np.float64)
    n_neg = yy.shape[0] - n_pos
    hi = (n_pos + 1.0) / (n_pos + 2.0)
    lo = 1.0 / (n_neg + 2.0)
    t = np.where(yy, hi, lo)
    A = np.zeros(s.shape[1])
    B = np.log((n_neg + 1.0) / (n_pos + 1.0)) if fit_intercept else np.zeros(s.shape[1])

    def objective(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        f = s * a + b
        # -[t log p + (1-t) log(1-p)] with p = 1/(1+exp(f))  ==  t f + log(1+exp(-f))
        return (t * f + _log1pexp(-f)).sum(axis=0)

    fval = objective(A, B)
    active = np.ones(s.shape[1], dtype=bool)
    for _ in range(max_iter):
        if not active.any():
            break
        f = s[:, active] * A[active] + B[active]
        p = _sigmoid_neg(f)
        q = 1.0 - p
        d2 = p * q
        sa = s[:, active]
        h11 = sigma + (sa * sa * d2).sum(axis=0)
        h22 = sigma + d2.sum(axis=0)
        h21 = (sa * d2).sum(axis=0)
        d1 = t[:, active] - p
        g1 = (sa * d1).sum(axis=0)
        g2 = d1.sum(axis=0)
        if fit_intercept:
            done = (np.abs(g1) < eps) & (np.abs(g2) < eps)
            det = h11 * h22 - h21 * h21
            dA = -(h22 * g1 - h21 * g2) / det
            dB = -(-h21 * g1 + h11 * g2) / det
        else:  # one-parameter Newton step on A
            done = np.abs(g1) < eps
            dA = -g1 / h11
            dB = np.zeros_like(dA)
        gd = g1 * dA + g2 * dB
        idx = np.flatnonzero(active)
        step = np.ones(idx.size)
        pending = ~done
        newA = A[idx].copy()
        newB = B[idx].copy()
        while pending.any():
            cand_a = A[idx] + step * dA
            cand_b = B[idx] + step * dB
            fa = np.full(idx.size, np.inf)
            cols = idx[pending]
            fsub = s[:, cols] * cand_a[pending] + cand_b[pending]
            fa[pending] = (t[:, cols] * fsub + _log1pexp(-fsub)).sum(axis=0)
            ok = pending & (fa < fval[idx] + 1e-4 * step * gd)
            newA[ok] = cand_a[ok]
            newB[ok] = cand_b[ok]
            fval[idx[ok]] = fa[ok]
            pending &= ~ok
            step = np.where(pending, step / 2.0, step)
            stuck = pending & (step < min_step)
            if stuck.any():
                done |= stuck  # line search failed: keep the current point
                pending &= ~stuck
        A[idx] = newA
        B[idx] = newB
        still = ~done
        active[idx[~still]] = False
    if not fit_intercept:  # scores anti-correlated with the labels (or constant): keep the sigmoid decreasing
        A = np.minimum(A, -1e-6)
    return A, B


def fit_platt_or_prior(scores: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`fit_platt` per column of ``Y``, except that a class without a positive (or without a negative) document
    gets the constant sigmoid of its smoothed prior (``A = 0``, ``B = log((N- + 1) / (N+ + 1))``). Returns ``A``,
    ``B`` and the mask of those constant classes."""
    A, B = fit_platt(scores, Y)
    n_pos = Y.sum(axis=0)
    constant = (n_pos == 0) | (n_pos == Y.shape[0])
    if constant.any():
        A[constant] = 0.0
        B[constant] = np.log((Y.shape[0] - n_pos[constant] + 1.0) / (n_pos[constant] + 1.0))
    return A, B, constant


def platt_posteriors(scores: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Apply the sigmoids: ``1 / (1 + exp(A * s + B))``, column-wise, computed stably."""
    return _sigmoid_neg(np.asarray(scores, dtype=np.float64) * A + B)
