"""One-vs-rest linear SVMs on sparse features, with cross-validated decision scores.

Shared by the Posteriors view (tier 1) and the Naive baseline. Each class gets its own binary
liblinear SVM; a class whose training labels are all negative (or all positive) gets a
constant decision score instead of an error, as libsvm does in its internal cross-validation.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from joblib import delayed
from sklearn.exceptions import ConvergenceWarning

from gfun.core.parallel import run_parallel
from gfun.metrics.measures import f1_from_counts
from gfun.svm.sklearn_private import liblinear as _liblinear  # None when unusable: LinearSVC is the fallback
from gfun.svm.sklearn_private import liblinear_binary, public_liblinear

__all__ = ["LIBLINEAR_TOL", "LinearOvR", "cross_val_decision", "fit_linear_ovr", "make_folds", "select_C"]

logger = logging.getLogger(__name__)

#: Decision score given to documents by a class that had only negative (positive) training labels.
CONSTANT_SCORE = 1.0


@dataclass
class LinearOvR:
    """Fitted one-vs-rest linear SVMs: ``scores = X @ coef.T + intercept``.

    Attributes
    ----------
    coef : ndarray of shape (n_classes, n_features), float32
    intercept : ndarray of shape (n_classes,), float64
    """

    coef: np.ndarray
    intercept: np.ndarray

    def decision_function(self, X: sp.spmatrix | np.ndarray) -> np.ndarray:
        """Decision scores, shape (n_samples, n_classes)."""
        out = X @ self.coef.T
        out = np.asarray(out, dtype=np.float64)
        return out + self.intercept


#: liblinear solver ids (dual coordinate descent, L2 regularisation), as sklearn numbers them.
_SOLVER = {"squared_hinge": 1, "hinge": 3, "log": 7}  # liblinear solvers (7: dual L2-regularised logistic)
#: liblinear stopping tolerance of :func:`fit_linear_ovr` unless told otherwise (scikit-learn's ``LinearSVC`` default).
LIBLINEAR_TOL = 1e-4


#: The ``class_weight`` values the SVMs of gfun accept: unweighted, ``"balanced"`` (scikit-learn's: each label
#: weighted by ``n / (2 n_label)``) and ``"sqrt"`` (the square root of the balanced weights: a rare label weighs
#: more, but a tenth as frequent a label weighs about 3 times more, not 10).
CLASS_WEIGHTS: tuple[str | None, ...] = (None, "balanced", "sqrt")


def binary_class_weights(y: np.ndarray, class_weight: str | None) -> np.ndarray | None:
    """Weights of labels (0, 1) (``None``: unweighted); see :data:`CLASS_WEIGHTS`."""
    if class_weight is None:
        return None
    if class_weight in ("balanced", "sqrt"):
        n_pos = int(np.sum(y))
        weights = y.size / (2.0 * np.array([y.size - n_pos, n_pos], dtype=np.float64))
        return np.sqrt(weights) if class_weight == "sqrt" else weights
    raise ValueError(f"class_weight must be one of {CLASS_WEIGHTS}, got {class_weight!r}")


def sklearn_class_weight(y: np.ndarray, class_weight: str | None) -> dict[int, float] | None:
    """``class_weight`` as scikit-learn's estimators take it: ``{0: w0, 1: w1}`` (:func:`binary_class_weights`)."""
    weights = binary_class_weights(y, class_weight)
    return None if weights is None else {0: float(weights[0]), 1: float(weights[1])}


def _liblinear_seed(random_state: int | None) -> int:
    """The seed LinearSVC(random_state=...) hands liblinear, drawn once instead of once per class."""
    return int(np.random.RandomState(random_state).randint(np.iinfo("i").max))


def _fit_one(X: sp.spmatrix, y: np.ndarray, C: float, loss: str, class_weight: str | None,
             random_state: int | None, max_iter: int, seed: int | None = None, tol: float = LIBLINEAR_TOL
             ) -> tuple[np.ndarray, float]:
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        sign = 1.0 if n_pos else -1.0
        return np.zeros(X.shape[1], dtype=np.float32), sign * CONSTANT_SCORE
    sparse = sp.issparse(X) and X.format == "csr"
    dense = isinstance(X, np.ndarray) and X.dtype == np.float64 and X.flags.c_contiguous
    if _liblinear is not None and (sparse or dense) and loss in _SOLVER:
        # liblinear directly (what LinearSVC.fit ends up calling): LinearSVC re-validates X and y, encodes
        # labels and draws a seed on every call, which costs more than the solve itself for the small
        # per-class problems of tier 1; liblinear releases the GIL, so classes can run in threads.
        weights = binary_class_weights(y, class_weight)
        weights = np.ones(2) if weights is None else weights
        fast = liblinear_binary(X, y, sparse, _SOLVER[loss], tol, float(C), weights, max_iter,
                                _liblinear_seed(random_state) if seed is None else seed)
        if fast is not None:  # None: the private function changed (see gfun.svm.sklearn_private)
            return fast
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        if loss == "log":
            from sklearn.linear_model import LogisticRegression

            svm = LogisticRegression(C=C, solver="liblinear", dual=True,
                                     class_weight=sklearn_class_weight(y, class_weight),
                                     max_iter=max_iter, tol=tol, random_state=random_state)
        else:
            from sklearn.svm import LinearSVC  # the fallback only: imported where used, not at every start

            svm = LinearSVC(C=C, loss=loss, class_weight=sklearn_class_weight(y, class_weight), dual=True,
                            max_iter=max_iter, tol=tol, random_state=random_state)
        with public_liblinear():  # its generator is the module's: one solve at a time
            svm.fit(X, y)
    return svm.coef_[0].astype(np.float32), float(svm.intercept_[0])


def fit_linear_ovr(X: sp.spmatrix, Y: np.ndarray, C: float | Sequence[float] | np.ndarray = 1.0, *,
                   loss: str = "squared_hinge", class_weight: str | None = None,
                   random_state: int | None = None, max_iter: int = 2000, n_jobs: int | None = None,
                   tol: float = LIBLINEAR_TOL) -> LinearOvR:
    """Fit one binary linear SVM per column of ``Y``.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_samples, n_features)
    Y : ndarray of shape (n_samples, n_classes), binary
    C : float or array of shape (n_classes,)
        Regularisation, shared or per class.
    loss : {"squared_hinge", "hinge", "log"}
        liblinear loss (``"log"``: logistic regression, dual solver).
    class_weight : {None, "balanced", "sqrt"}
        See :data:`CLASS_WEIGHTS`.
    random_state, max_iter
        Passed to :class:`sklearn.svm.LinearSVC`.
    tol : float
        liblinear's stopping tolerance (of the dual's projected gradient): :data:`LIBLINEAR_TOL`, scikit-learn's,
        by default; liblinear's own default for its dual solvers is 0.1.
    n_jobs : int, optional
        Classes fitted in parallel threads (liblinear releases the GIL); the models are the same for any
        ``n_jobs`` (each concurrent solve draws from a generator of its own: see :mod:`gfun.svm.sklearn_private`).
    """
    Y = np.asarray(Y)
    if sp.issparse(X):
        # liblinear works on float64 CSR with int32 indices: convert once, not once per class
        X = sp.csr_matrix(X, dtype=np.float64)
        if X.indices.dtype != np.int32 or X.indptr.dtype != np.int32:
            X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    else:
        X = np.ascontiguousarray(X, dtype=np.float64)
    Cs = np.broadcast_to(np.asarray(C, dtype=np.float64), (Y.shape[1],))
    coef = np.zeros((Y.shape[1], X.shape[1]), dtype=np.float32)
    intercept = np.zeros(Y.shape[1])
    seed = _liblinear_seed(random_state)
    args = [(X, Y[:, j], float(Cs[j]), loss, class_weight, random_state, max_iter, seed, tol)
            for j in range(Y.shape[1])]
    if n_jobs is None or n_jobs == 1:  # the common case inside tier-1 jobs: no nested pool
        results = [_fit_one(*a) for a in args]
    else:
        results = run_parallel((delayed(_fit_one)(*a) for a in args), n_jobs)
    for j, (w, b) in enumerate(results):
        coef[j], intercept[j] = w, b
    return LinearOvR(coef, intercept)


def make_folds(n_samples: int, n_splits: int, random_state: int | None,
               groups: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled K folds over ``n_samples`` (fewer when there are fewer samples; none below 2).

    With ``groups`` (one value per sample), samples sharing a value fall in the same fold (the groups are
    shuffled and dealt to the folds in turn): the translations of one text in a parallel corpus never sit on
    both sides of a split.
    """
    if groups is None:
        k = min(n_splits, n_samples)
        if k < 2:
            return []
        return _shuffled_kfold(n_samples, k, random_state)
    groups = np.asarray(groups)
    if groups.shape != (n_samples,):
        raise ValueError(f"groups must hold one value per sample ({n_samples}), got shape {groups.shape}")
    uniq, inverse = np.unique(groups, return_inverse=True)
    k = min(n_splits, uniq.size)
    if k < 2:
        return []
    fold_of_group = np.empty(uniq.size, dtype=np.int64)
    fold_of_group[np.random.RandomState(random_state).permutation(uniq.size)] = np.arange(uniq.size) % k
    fold = fold_of_group[inverse]
    return [(np.flatnonzero(fold != f), np.flatnonzero(fold == f)) for f in range(k)]


def _shuffled_kfold(n_samples: int, k: int, random_state: object) -> list[tuple[np.ndarray, np.ndarray]]:
    """The splits of scikit-learn's ``KFold(k, shuffle=True, random_state=random_state)``, index for index: the
    samples shuffled by the seed's generator, the first ``n_samples % k`` folds one sample larger, each fold's
    training and test indices in ascending order, without importing ``sklearn.model_selection`` at every start of
    gfun."""
    from sklearn.utils import check_random_state

    order = np.arange(n_samples)
    check_random_state(random_state).shuffle(order)
    sizes = np.full(k, n_samples // k, dtype=np.int64)
    sizes[:n_samples % k] += 1
    folds, start = [], 0
    for size in sizes:
        test = np.zeros(n_samples, dtype=bool)
        test[order[start:start + size]] = True
        folds.append((np.flatnonzero(~test), np.flatnonzero(test)))
        start += size
    return folds


def cross_val_decision(X: sp.spmatrix, Y: np.ndarray, C: float | np.ndarray,
                       folds: list[tuple[np.ndarray, np.ndarray]], X_eval: object = None,
                       **fit_kw: object) -> np.ndarray:
    """Out-of-fold decision scores (n_samples, n_classes) of :func:`fit_linear_ovr` models.

    ``X_eval`` (same rows as ``X``): score each held-out fold on these vectors instead of on ``X``'s.
    """
    Y = np.asarray(Y)
    if sp.issparse(X) and X.dtype != np.float64:
        X = X.astype(np.float64)
    X_te = X if X_eval is None else X_eval
    out = np.zeros(Y.shape, dtype=np.float64)
    for tr, te in folds:
        model = fit_linear_ovr(X[tr], Y[tr], C, **fit_kw)  # type: ignore[arg-type]
        out[te] = model.decision_function(X_te[te])
    return out


def select_C(X: sp.spmatrix, Y: np.ndarray, grid: Sequence[float],
             folds: list[tuple[np.ndarray, np.ndarray]], X_eval: object = None, **fit_kw: object) -> np.ndarray:
    """Per-class C maximising the cross-validated F1 (contingency pooled over folds).

    Ties go to the smaller C. Returns an array of shape (n_classes,).
    """
    grid = sorted(float(c) for c in grid)
    Y = np.asarray(Y).astype(bool)
    best = np.full(Y.shape[1], float(grid[0]))
    if not folds:
        return best
    best_f1 = np.full(Y.shape[1], -1.0)
    for c in grid:
        pred = cross_val_decision(X, Y, c, folds, X_eval=X_eval, **fit_kw) > 0
        tp = (pred & Y).sum(axis=0)
        fp = (pred & ~Y).sum(axis=0)
        fn = (~pred & Y).sum(axis=0)
        f1 = f1_from_counts(tp, fp, fn, np.zeros_like(tp))
        better = f1 > best_f1 + 1e-12
        best[better] = c
        best_f1[better] = f1[better]
    return best
