"""One-vs-rest RBF SVMs that share one Gram matrix across classes, folds and C values.

This is gFun's meta-classifier (and, with ``probability=True``, the mapper of a view to
calibrated posteriors in the averaging aggregation). Every class of a one-vs-rest RBF SVM
sees the same training vectors, so the kernel matrix is computed once and each binary SVM
is trained by libsvm on the precomputed kernel; cross-validation folds are slices of the
same matrix. C is chosen by k-fold cross-validation (per class, or one C for all classes),
and the out-of-fold decision scores at the chosen C are reused to fit Platt sigmoids, so
posteriors cost no extra training. Each fold's kernel blocks are computed from the vectors when
the fold starts and freed when it ends (the same numbers as slices of the whole Gram matrix,
without holding both); the whole Gram matrix exists only while the final models are trained.

The method follows a memory budget (``max_memory``): exact while the Gram matrix fits, beyond
it (``approximation="auto"``) regularised least squares on Nystroem features of the same kernel,
which solves every class, fold and C value from one pass over the data (memory and time linear in
the number of training vectors). The switch is logged.

The pieces it is built from have their own modules: the memory budget (:mod:`gfun.svm.memory_budget`), the RBF
kernel (:mod:`gfun.svm.rbf_kernel`), the decision thresholds (:mod:`gfun.svm.thresholds`), the Nystroem landmarks
and least-squares path (:mod:`gfun.svm.nystroem`), Platt sigmoids (:mod:`gfun.svm.calibration`), folds and class
weights (:mod:`gfun.svm.linear`).
"""

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Sequence

import numpy as np
from joblib import delayed
from sklearn.base import BaseEstimator
from sklearn.utils.extmath import row_norms
from sklearn.utils.validation import check_is_fitted

from gfun.core.parallel import iter_parallel, run_parallel
from gfun.core.progress import LOG_EVERY, format_duration
from gfun.core.state import checked_array
from gfun.corpus.inputs import check_C
from gfun.metrics.measures import f1_from_counts
from gfun.svm.calibration import fit_platt, platt_posteriors
from gfun.svm.linear import CONSTANT_SCORE, binary_class_weights, make_folds
from gfun.svm.memory_budget import DEFAULT_MAX_MEMORY, LIBSVM_CACHE_MB, exact_memory, parse_memory
from gfun.svm.nystroem import (
    from_upper_triangle,
    held_out_scores,
    normal_equations,
    nystroem_landmarks,
    ridge_path,
    row_blocks,
)
from gfun.svm.rbf_kernel import rbf_kernel_inplace
from gfun.svm.sklearn_private import libsvm as _libsvm  # None when unusable: SVC is the fallback
from gfun.svm.sklearn_private import libsvm_binary
from gfun.svm.thresholds import THRESHOLD_RULES, validated_thresholds

__all__ = ["APPROXIMATIONS", "DEFAULT_C_GRID", "RBFSVMOvR"]

logger = logging.getLogger(__name__)

#: Calls of :meth:`RBFSVMOvR.decision_function` on fewer samples keep float32 support vectors widened to float64.
KEEP_WIDE_SUPPORT_BELOW = 256

#: The paper's grid: C = 10^i for i in {-1, ..., 4}.
DEFAULT_C_GRID: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)
#: Values of ``approximation``: ``None`` (exact), ``"auto"`` (exact within ``max_memory``, else ``"nystroem-ls"``),
#: ``"nystroem"`` (linear SVMs on Nystroem features), ``"nystroem-ls"`` (least squares on Nystroem features).
APPROXIMATIONS: tuple[str | None, ...] = (None, "auto", "nystroem", "nystroem-ls")



def _as_dense_labels(Y: object) -> np.ndarray:
    Y = Y.toarray() if hasattr(Y, "toarray") else np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    return Y.astype(bool)


def _libsvm_weights(y: np.ndarray, class_weight: str | None) -> np.ndarray:
    weights = binary_class_weights(y, class_weight)
    return np.empty(0) if weights is None else weights  # libsvm: an empty array means unweighted


def _fit_binary(Kx: np.ndarray, y: np.ndarray, C: float, gamma: float, precomputed: bool,
                class_weight: str | None, tol: float, cache_size: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Train one binary SVM; returns (support indices, dual coefficients, intercept)."""
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == y.size:
        return np.zeros(0, dtype=np.int64), np.zeros(0), (1.0 if n_pos else -1.0) * CONSTANT_SCORE
    if _libsvm is not None and Kx.dtype == np.float64 and Kx.flags.c_contiguous:
        # libsvm directly (what SVC.fit ends up calling): SVC.fit first scans the whole (n x n) matrix for
        # NaNs while holding the GIL, a quarter of the time of a fit and a brake on the threads of the
        # other classes; libsvm itself runs without the GIL. Labels 0 < 1 as SVC encodes them.
        fast = libsvm_binary(Kx, y, kernel="precomputed" if precomputed else "rbf", gamma=gamma, tol=tol, C=C,
                             class_weight=_libsvm_weights(y, class_weight), cache_size=cache_size)
        if fast is not None:  # None: the private function changed (see gfun.svm.sklearn_private)
            return fast
    from sklearn.svm import SVC  # the fallback only: importing it would slow every start

    svm = SVC(C=C, kernel="precomputed" if precomputed else "rbf", gamma=gamma, class_weight=class_weight,
              tol=tol, cache_size=cache_size)
    svm.fit(Kx, y)
    # sklearn exposes binary dual coefficients and intercept with the sign of decision_function
    return svm.support_.astype(np.int64), svm.dual_coef_[0].copy(), float(svm.intercept_[0])


def _support_decisions(Xte: np.ndarray, Xtr: np.ndarray, models: list, gamma: float) -> np.ndarray:
    """Decision scores ``(n_te, len(models))`` of one class's models on ``Xte``, by the kernel of their support
    vectors (rows of ``Xtr``); a model repeated (the path's early exit) is not computed again."""
    from sklearn.metrics.pairwise import rbf_kernel  # here: importing sklearn.metrics would slow every start

    out = np.empty((Xte.shape[0], len(models)))
    for g, (sup, dual, b) in enumerate(models):
        if g and models[g] is models[g - 1]:
            out[:, g] = out[:, g - 1]
        else:
            out[:, g] = rbf_kernel(Xte, Xtr[sup], gamma=gamma) @ dual + b if sup.size else b
    return out


def _model_scores(Kte: np.ndarray, models: list) -> np.ndarray:
    """Decision scores ``(n_te, len(models))`` of binary models (support indices, dual coefficients, intercept) from
    a kernel block ``(n_te, n_tr)``: one product with all their dual coefficients, reading the block once."""
    dual = np.zeros((Kte.shape[1], len(models)))
    intercept = np.zeros(len(models))
    for i, (sup, d, b) in enumerate(models):
        dual[sup, i] = d
        intercept[i] = b
    return Kte @ dual + intercept


def _decision_rows(X: np.ndarray, gamma: float, intercept: np.ndarray, sv: np.ndarray | None,
                   sv_norms: np.ndarray | None, dual: np.ndarray | None, components: np.ndarray | None,
                   feature_map: np.ndarray | None, linear_coef: np.ndarray | None, *, batch_size: int
                   ) -> np.ndarray:
    """Decision scores of the rows of ``X``, ``batch_size`` at a time: by the Nystroem features and their linear
    weights (``components`` given), else by the support vectors (float64, with their squared norms) and dual
    coefficients; the intercept alone without either."""
    out = np.empty((X.shape[0], intercept.shape[0]))
    for start in range(0, X.shape[0], batch_size):
        chunk = X[start:start + batch_size]
        if components is not None:
            features = rbf_kernel_inplace(chunk, components, gamma) @ feature_map.T
            out[start:start + batch_size] = features @ linear_coef.T + intercept
        elif sv.shape[0]:
            K = rbf_kernel_inplace(chunk, sv, gamma, Y_norms=sv_norms)
            out[start:start + batch_size] = K @ dual + intercept
        else:
            out[start:start + batch_size] = intercept
    return out


class RBFSVMOvR(BaseEstimator):
    """One-vs-rest RBF-kernel SVMs for multilabel data, sharing one kernel matrix.

    Parameters
    ----------
    C : float or "cv"
        Regularisation. ``"cv"`` chooses it by ``cv``-fold cross-validation over ``C_grid``.
    C_grid : sequence of float
        Candidate values of C (the paper's ``10^-1 ... 10^4`` by default).
    C_selection : {"per-class", "global"}
        ``"per-class"``: each class keeps the C with the best cross-validated F1 (ties to the smaller C);
        ``"global"``: one C for all classes, the one with the best cross-validated macro-F1.
    cv : int
        Number of folds for choosing C and for the out-of-fold scores the Platt sigmoids are fitted on.
    gamma : float or "scale"
        RBF width; ``"scale"`` is ``1 / (n_features * X.var())`` as in scikit-learn.
    probability : bool
        Fit Platt sigmoids on out-of-fold decision scores so that :meth:`predict_proba` works.
    class_weight : {None, "balanced"}
    threshold : {"zero", "f1", "validated", "k"}
        Decision threshold of each class. ``"zero"``: the SVM's own (a positive score predicts the class).
        ``"f1"``: the threshold that maximises the class's F1 on the out-of-fold decision scores of the
        cross-validation (free: those scores are computed anyway), folded into the intercept, so that
        :meth:`decision_function`, :meth:`predict` and the Platt posteriors all use it. ``"validated"``: per
        class, 0 or the F1-optimal threshold, whichever raises the mean of macro- and micro-F1 of cross-fitted
        predictions (see :func:`gfun.svm.thresholds.validated_thresholds`). ``"k"``: the threshold that maximises
        the class's K (true minus false positive rate: recall-aware, for K rather than F1). Meaningful only when the
        training vectors
        look like the test vectors (out-of-fold first-tier outputs).
    tol : float
        libsvm stopping tolerance.
    max_gram_samples : int
        Exact path: largest training set for which the Gram matrix is precomputed (above it libsvm evaluates
        the kernel itself, slower but in little memory).
    approximation : {"auto", None, "nystroem", "nystroem-ls"}
        ``None``: exact. ``"auto"``: exact while :func:`gfun.svm.memory_budget.exact_memory` fits in
        ``max_memory``, else ``"nystroem-ls"`` (logged). ``"nystroem-ls"``: one-vs-rest regularised least
        squares (targets +-1, ridge ``1 / (2 C)``, unpenalised intercept) on ``n_components`` Nystroem features
        of the same RBF kernel: the normal equations of every class, fold and C come from one pass over the
        training vectors in chunks (each fold's are the whole minus the fold's own), so memory is
        ``O(n_components^2)`` besides the inputs and C by cross-validation costs almost nothing.
        ``"nystroem"``: linear SVMs (liblinear, hinge loss) on the same features, one class at a time (slow on
        dense features: far slower than the exact path wherever the exact path fits in memory). C selection,
        thresholds and Platt calibration work as on the exact path.
    n_components : int
        Nystroem landmarks (at most the number of training vectors).
    landmarks : {"kmeans", "random"}
        How the Nystroem landmarks are chosen: k-means centres (k-means++ seeding, a few Lloyd iterations on a
        random sample of at most ``8 * n_components`` vectors), or a uniform sample of the training vectors.
    max_memory : int, float or str
        Memory budget of the exact path, bytes or a string like ``"2GB"`` (see ``approximation="auto"``).
    n_jobs : int, optional
        Threads training binary SVMs in parallel (libsvm releases the GIL; the Gram matrix is shared).
    support_dtype : {"float64", "float32"}
        Precision in which the support vectors are kept (and saved) once fitted: ``"float32"`` halves the largest array
        of a fitted model (``n_support x n_features`` values). The cast happens at the end of :meth:`fit`, so the fitted
        model is the one saved and loaded; decision scores are still computed in float64 (small calls keep the widened
        copy, see :data:`KEEP_WIDE_SUPPORT_BELOW`).
    random_state : int, optional
        Seed of the cross-validation folds.
    verbose : bool
        Log progress.

    Attributes
    ----------
    support_vectors_ : ndarray (n_support, n_features)
        Union of the support vectors of all classes.
    dual_coef_ : ndarray (n_support, n_classes)
    intercept_ : ndarray (n_classes,)
    C_ : ndarray (n_classes,)
        The C used by each class.
    gamma_ : float
    cv_scores_ : ndarray (len(C_grid), n_classes) or None
        Cross-validated F1 of each candidate C.
    platt_A_, platt_B_ : ndarray (n_classes,) or None
    threshold_ : ndarray (n_classes,)
        The decision threshold of each class (folded into ``intercept_``).
    validated_decision_ : ndarray (n_samples, n_classes) or None
        Out-of-fold decision scores minus the threshold each class gets without the sample's fold (transient,
        not persisted): the honest validation of the model and its thresholds.
    """

    def __init__(self, C: float | str = "cv", C_grid: Sequence[float] = DEFAULT_C_GRID,
                 C_selection: str = "per-class", cv: int = 5, gamma: float | str = "scale",
                 probability: bool = True, class_weight: str | None = None, threshold: str = "zero",
                 tol: float = 1e-3,
                 max_gram_samples: int = 30000, approximation: str | None = "auto", n_components: int = 1000,
                 landmarks: str = "kmeans", max_memory: int | float | str = DEFAULT_MAX_MEMORY,
                 support_dtype: str = "float64", n_jobs: int | None = None, random_state: int | None = None,
                 verbose: bool = False) -> None:
        self.C = C
        self.C_grid = C_grid
        self.C_selection = C_selection
        self.cv = cv
        self.gamma = gamma
        self.probability = probability
        self.class_weight = class_weight
        self.threshold = threshold
        self.tol = tol
        self.max_gram_samples = max_gram_samples
        self.approximation = approximation
        self.n_components = n_components
        self.landmarks = landmarks
        self.max_memory = max_memory
        self.support_dtype = support_dtype
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fitting
    def _check_params(self) -> list[float]:
        if self.threshold not in THRESHOLD_RULES:
            raise ValueError(f"threshold must be one of {THRESHOLD_RULES}, got {self.threshold!r}")
        if self.C_selection not in ("per-class", "global"):
            raise ValueError(f"C_selection must be 'per-class' or 'global', got {self.C_selection!r}")
        if self.approximation not in APPROXIMATIONS:
            raise ValueError(f"approximation must be one of {APPROXIMATIONS}, got {self.approximation!r}")
        if self.landmarks not in ("kmeans", "random"):
            raise ValueError(f"landmarks must be 'kmeans' or 'random', got {self.landmarks!r}")
        parse_memory(self.max_memory)
        if self.support_dtype not in ("float64", "float32"):
            raise ValueError(f"support_dtype must be 'float64' or 'float32', got {self.support_dtype!r}")
        if isinstance(self.C, str):
            if self.C != "cv":
                raise ValueError(f"C must be a positive number or 'cv', got {self.C!r}")
            grid = sorted(float(check_C(c, "each value of C_grid", allow_cv=False)) for c in self.C_grid)
            if not grid:
                raise ValueError(f"C_grid must hold positive values, got {self.C_grid!r}")
            return grid
        check_C(self.C, "C")
        if self.C_selection not in ("per-class", "global"):
            raise ValueError(f"C_selection must be 'per-class' or 'global', got {self.C_selection!r}")
        return [float(self.C)]

    def _gamma(self, X: np.ndarray) -> float:
        if self.gamma == "scale":
            var = float(X.var())
            return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        if isinstance(self.gamma, numbers.Real) and self.gamma > 0:
            return float(self.gamma)
        raise ValueError(f"gamma must be a positive number or 'scale', got {self.gamma!r}")

    def _fit_many(self, Kx: np.ndarray, Y: np.ndarray, Cs: np.ndarray, precomputed: bool) -> list:
        cache = LIBSVM_CACHE_MB if precomputed else 500.0
        order = np.argsort(-Y.sum(axis=0), kind="stable")  # the longest solves first (see _validate)
        jobs = (delayed(_fit_binary)(Kx, Y[:, j], float(Cs[j]), self.gamma_, precomputed, self.class_weight,
                                     self.tol, cache) for j in order)
        models: list = [None] * Y.shape[1]
        # the same bits for any n_jobs (see _validate)
        for j, model in zip(order, run_parallel(jobs, self.n_jobs, blas_threads=1), strict=True):
            models[j] = model
        return models

    def _path(self, Ktr: np.ndarray, y: np.ndarray, grid: list[float], precomputed: bool
              ) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The models (support indices, dual coefficients, intercept) of one class for every C of the (ascending)
        grid.

        Once a solution has no bounded support vector (every dual coefficient below C), it is also the
        optimum for every larger C, so the remaining C values reuse it (the same object) instead of retraining.
        """
        models: list[tuple[np.ndarray, np.ndarray, float]] = []
        for c in grid:
            model = _fit_binary(Ktr, y, c, self.gamma_, precomputed, self.class_weight, self.tol,
                                LIBSVM_CACHE_MB if precomputed else 500.0)
            models.append(model)
            sup, dual, _ = model
            if self.class_weight is None and (sup.size == 0 or np.abs(dual).max() < c * (1 - 1e-8)):
                return models + [model] * (len(grid) - len(models))
        return models

    def _held_out(self, paths: list[list], Kte: np.ndarray | None, Xte: np.ndarray, Xtr: np.ndarray) -> np.ndarray:
        """Held-out decision scores ``(n_grid, n_te, n_classes)`` of a fold's models (``paths``: each class's models
        for every C): with the fold's kernel block, one product with the dual coefficients of all of them (reading
        the block once, not once per model); without it, the kernel of each model's support vectors, class by class
        in parallel."""
        n_grid, k = len(paths[0]) if paths else 0, len(paths)
        if Kte is None:
            jobs = (delayed(_support_decisions)(Xte, Xtr, models, self.gamma_) for models in paths)
            return np.stack(run_parallel(jobs, self.n_jobs, blas_threads=1), axis=2).transpose(1, 0, 2)
        scores = _model_scores(Kte, [model for models in paths for model in models])
        return scores.reshape(Kte.shape[0], k, n_grid).transpose(2, 0, 1)

    def _climbs(self, n: int, k: int, n_grid: int, folds: list) -> bool:
        """Whether the kernel blocks of every fold fit in ``max_memory`` besides the held-out scores of every C
        (:meth:`_climb` holds them all)."""
        held = 8.0 * sum(len(tr) * (len(tr) + len(te)) for tr, te in folds)
        return held + 8.0 * n_grid * n * k + LIBSVM_CACHE_MB * 2**20 * max(1, self.n_jobs or 1) <= parse_memory(
            self.max_memory)

    def _climb(self, X: np.ndarray, X_te: np.ndarray, Y: np.ndarray, folds: list, grid: list[float],
               reused: tuple[int, np.ndarray]) -> np.ndarray:
        """Held-out decision scores ``(n_grid, n, k)`` of a search of each class's C along the grid, outward from
        the C whose held-out decisions are known (``reused``: its index, its decisions).

        Each step trains, for every class still searching, the next C below and the next above (every fold's kernel
        blocks are held, so a step costs its solves only); a class goes on in a direction while its cross-validated
        F1 is not below its best so far; upwards, a fold whose solution has no bounded support vector keeps it (the
        optimum for any larger C) and a class stops once every fold has. The C values a class never reached get the
        scores of the last one it trained in that direction (below its best), so :meth:`_choose_C` picks among those
        it trained: the whole grid's choice unless a class's F1 rises again after a fall.
        """
        g0, known = reused
        n, k = Y.shape
        oof = np.zeros((len(grid), n, k))
        oof[g0] = known
        blocks = [(rbf_kernel_inplace(X[tr], None, self.gamma_), rbf_kernel_inplace(X_te[te], X[tr], self.gamma_))
                  for tr, te in folds]

        def f1(g: int) -> np.ndarray:  # the cross-validated F1 of every class at grid[g]
            pred = oof[g] > 0
            return f1_from_counts((pred & Y).sum(axis=0), (pred & ~Y).sum(axis=0), (~pred & Y).sum(axis=0), 0)

        best = f1(g0)
        at = {-1: np.full(k, g0), 1: np.full(k, g0)}  # the last C index trained in each direction
        going = {d: np.full(k, 0 <= g0 + d < len(grid)) for d in (-1, 1)}
        settled = np.full((len(folds), k), -1)  # upwards: the C index of a fold's solution without bounded SVs
        while going[-1].any() or going[1].any():
            steps = [(j, d, at[d][j] + d) for j in range(k) for d in (-1, 1) if going[d][j]]
            for f, ((tr, te), (Ktr, Kte)) in enumerate(zip(folds, blocks, strict=True)):
                todo = [(j, d, g) for j, d, g in steps if d < 0 or settled[f, j] < 0]
                jobs = (delayed(_fit_binary)(Ktr, Y[tr, j], grid[g], self.gamma_, True, self.class_weight, self.tol,
                                             LIBSVM_CACHE_MB) for j, _, g in todo)
                models = run_parallel(jobs, self.n_jobs, blas_threads=1)
                scores = _model_scores(Kte, models)
                for g in {g for _, _, g in todo}:
                    cols = [i for i, (_, _, gi) in enumerate(todo) if gi == g]
                    oof[g][np.ix_(te, [todo[i][0] for i in cols])] = scores[:, cols]
                for (j, d, g), (sup, dual, _) in zip(todo, models, strict=True):
                    if d > 0 and self.class_weight is None and (sup.size == 0 or np.abs(dual).max() < grid[g] * (
                            1 - 1e-8)):
                        settled[f, j] = g  # the optimum for every larger C too
                for j, d, g in steps:
                    if d > 0 and 0 <= settled[f, j] < g:
                        oof[g, te, j] = oof[settled[f, j], te, j]
            scores_at = {g: f1(g) for g in {g for _, _, g in steps}}
            for j, d, g in steps:
                score = scores_at[g][j]
                on = score >= best[j] - 1e-12  # not below the best so far (a plateau may rise again)
                best[j] = max(best[j], score)
                at[d][j] = g
                if not on or (d > 0 and (settled[:, j] >= 0).all()) or not 0 <= g + d < len(grid):
                    going[d][j] = False
                    rest = range(g + d, -1, -1) if d < 0 else range(g + d, len(grid))
                    for r in rest:
                        oof[r, :, j] = oof[g, :, j]
        return oof

    def fit(self, X: np.ndarray, Y: object, X_val: np.ndarray | None = None,
            groups: np.ndarray | None = None) -> RBFSVMOvR:
        """Fit one RBF SVM per column of the binary label matrix ``Y``: :meth:`validate`, then :meth:`finish`.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
        Y : array-like or sparse matrix of shape (n_samples, n_classes)
        X_val : ndarray of shape (n_samples, n_features), optional
            Another version of the same training samples, the one the cross-validation scores its held-out
            fold on (the models of each fold are still trained on rows of ``X``). gFun passes the
            out-of-fold first-tier outputs here while training on the in-sample ones: C, the Platt sigmoids
            and the thresholds are then chosen on inputs like those of new documents.
        groups : ndarray of shape (n_samples,), optional
            Samples sharing a value stay in the same cross-validation fold (see
            :func:`gfun.svm.linear.make_folds`).
        """
        self._validate(X, Y, X_val, groups)
        return self.finish(X, Y)

    def validate(self, X: np.ndarray, Y: object, X_val: np.ndarray | None = None,
                 groups: np.ndarray | None = None, *, known: RBFSVMOvR | None = None) -> RBFSVMOvR:
        """The cross-validation part of :meth:`fit` alone: C, thresholds, Platt sigmoids, no final models.

        Sets ``C_``, ``cv_scores_``, ``threshold_``, ``oof_decision_`` and ``validated_decision_`` (the
        out-of-fold decision scores with each fold's thresholds fitted without it: positive means predicted),
        enough to compare inputs by their validated predictions for a fraction of the cost of a fit (the
        folds' models only, no final models). :meth:`finish` then trains the final models of the one kept.
        (With ``approximation`` the final models are trained here already.)

        ``known``: a model this one's settings (folds, seed, tolerance, threshold rule) already validated on the
        same ``X``, ``Y``, ``X_val`` and ``groups`` at a single C of ``C_grid`` (``select`` compares its candidates
        so): its held-out decisions stand for that C's, which is not trained again; the rest of the grid is.
        """
        return self._validate(X, Y, X_val, groups, known)

    def calibrate(self, Y: object) -> RBFSVMOvR:
        """Fit the Platt sigmoids of a model validated with ``probability=False`` (set ``probability=True``
        first), on the held-out decisions of that validation, as :meth:`validate` itself would have."""
        self._set_platt(_as_dense_labels(Y))
        return self

    def _method(self, n: int, k: int, n_grid: int) -> str | None:
        """The approximation this fit uses (``None``: exact), ``approximation="auto"`` resolved by the budget."""
        if self.approximation != "auto":
            return self.approximation
        need, budget = exact_memory(n, k, n_grid, self.n_jobs), parse_memory(self.max_memory)
        if need <= budget:
            return None
        logger.warning("RBF SVM: the exact kernel of %d training vectors needs %.2f GB, more than max_memory "
                       "(%.2f GB): Nystroem approximation (%d landmarks, least squares) instead", n, need / 2**30,
                       budget / 2**30, min(int(self.n_components), n))
        return "nystroem-ls"

    def _validate(self, X: np.ndarray, Y: object, X_val: np.ndarray | None, groups: np.ndarray | None,
                  known: RBFSVMOvR | None = None) -> RBFSVMOvR:
        grid = self._check_params()
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = _as_dense_labels(Y)
        if X.ndim != 2 or X.shape[0] != Y.shape[0]:
            raise ValueError(f"X has shape {X.shape} but Y has {Y.shape[0]} rows")
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if X_val is not None:
            X_val = np.ascontiguousarray(X_val, dtype=np.float64)
            if X_val.shape != X.shape or not np.isfinite(X_val).all():
                raise ValueError(f"X_val must be finite and of the shape of X {X.shape}, got {X_val.shape}")
        n, k = Y.shape
        self.gamma_ = self._gamma(X)
        self.n_features_in_ = X.shape[1]
        self.method_ = self._method(n, k, len(grid))
        if self.method_ == "nystroem":
            return self._fit_nystroem(X, Y, grid, X_val, groups)
        if self.method_ == "nystroem-ls":
            return self._fit_nystroem_ls(X, Y, grid, X_val, groups)
        reused = self._known_decisions(known, grid, Y.shape)
        trained = [c for g, c in enumerate(grid) if reused is None or g != reused[0]]  # the C values fitted here
        self.nystroem_components_ = self.nystroem_map_ = None
        self.dual_coef_ = None  # not fitted until finish()
        precomputed = n <= self.max_gram_samples
        X_te = X if X_val is None else X_val
        need_cv = len(grid) > 1 or self.probability or self.threshold != "zero"
        folds = make_folds(n, self.cv, self.random_state, groups) if need_cv else []
        # C searched outward from a known one, every fold's kernel blocks held (when they fit the memory budget)
        climb = bool(reused is not None and len(grid) > 1 and precomputed and folds
                     and self._climbs(n, k, len(grid), folds))
        oof = np.zeros((len(trained), n, k))
        if climb:
            oof = self._climb(X, X_te, Y, folds, grid, reused)
        elif folds and trained:
            started = last_info = time.perf_counter()
            for f, (tr, te) in enumerate(folds):
                # each fold's blocks computed from the vectors (bit for bit the slices of the whole Gram matrix,
                # which is not held meanwhile) and freed at the end of the fold
                Ktr = rbf_kernel_inplace(X[tr], None, self.gamma_) if precomputed else X[tr]
                Kte = rbf_kernel_inplace(X_te[te], X[tr], self.gamma_) if precomputed else None
                # the classes with the most positives (the longest solves) first: fewer idle threads at the end
                order = np.argsort(-Y[tr].sum(axis=0), kind="stable")
                jobs = (delayed(self._path)(Ktr, Y[tr, j], trained, precomputed) for j in order)
                # one BLAS thread per job whatever n_jobs: a matrix-vector product's summation order (and so
                # its last bits) depends on the number of BLAS threads
                paths: list = [None] * k
                for j, models in zip(order, run_parallel(jobs, self.n_jobs, blas_threads=1), strict=True):
                    paths[j] = models
                oof[:, te, :] = self._held_out(paths, Kte, X_te[te], X[tr])
                del Ktr, Kte, jobs, paths  # before the next fold's blocks are computed (else two folds' blocks coexist)
                if self.verbose:  # each fold at DEBUG; at INFO only on a long fit, every LOG_EVERY seconds
                    now = time.perf_counter()
                    elapsed = now - started
                    left = elapsed / (f + 1) * (len(folds) - f - 1)
                    slow = f + 1 < len(folds) and now - last_info >= LOG_EVERY
                    last_info = now if slow else last_info
                    logger.log(logging.INFO if slow else logging.DEBUG,
                               "RBF SVM: fold %d/%d done (%d classes x %d C values, %d documents), %s%s", f + 1,
                               len(folds), k, len(trained), n, format_duration(elapsed),
                               f", about {format_duration(left)} left" if f + 1 < len(folds) else "")
        if reused is not None and not climb:
            oof = np.insert(oof, reused[0], reused[1], axis=0)
        scores, best = self._choose_C(oof, Y) if len(grid) > 1 and folds else (None, np.zeros(k, dtype=int))
        self.cv_scores_ = scores
        self.C_ = np.asarray([grid[g] for g in best], dtype=np.float64)
        self.oof_decision_ = oof[best, :, np.arange(k)].T if folds else None  # transient, not persisted
        self._set_thresholds_and_platt(Y, folds)
        return self

    def _known_decisions(self, known: RBFSVMOvR | None, grid: list[float], shape: tuple[int, int]
                         ) -> tuple[int, np.ndarray] | None:
        """(index in ``grid``, held-out decisions before thresholds) of a ``known`` validation (see
        :meth:`validate`), or None without one; ValueError if it cannot be the same validation at one C."""
        if known is None:
            return None
        C = np.unique(getattr(known, "C_", np.zeros(0)))
        same = {p: (known.get_params()[p], self.get_params()[p]) for p in ("cv", "random_state", "tol", "threshold")}
        if (getattr(known, "oof_decision_", None) is None or known.oof_decision_.shape != shape or C.size != 1
                or float(C[0]) not in grid or getattr(known, "gamma_", None) != self.gamma_
                or any(a != b for a, b in same.values())):
            raise ValueError(f"known must be validated on the same data and folds at one C of C_grid {grid} with "
                             f"the same settings ({same}, C {C.tolist()})")
        return grid.index(float(C[0])), known.oof_decision_ + known.threshold_

    def _choose_C(self, oof: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Cross-validated F1 ``(n_grid, k)`` of the out-of-fold scores ``(n_grid, n, k)`` of every C, and the
        index of the C each class keeps (``C_selection``; ties to the smaller C)."""
        pred = oof > 0
        tp = (pred & Y).sum(axis=1)
        fp = (pred & ~Y).sum(axis=1)
        fn = (~pred & Y).sum(axis=1)
        scores = f1_from_counts(tp, fp, fn, np.zeros_like(tp))
        if self.C_selection == "global":
            return scores, np.full(Y.shape[1], int(np.argmax(scores.mean(axis=1))))
        return scores, np.argmax(scores >= scores.max(axis=0, keepdims=True) - 1e-12, axis=0)

    def _set_thresholds_and_platt(self, Y: np.ndarray, folds: list) -> None:
        """``threshold_``, ``validated_decision_`` and the Platt sigmoids from ``oof_decision_`` (pre-threshold)."""
        self.threshold_ = np.zeros(Y.shape[1])
        self.validated_decision_ = self.oof_decision_
        if self.threshold != "zero" and folds:
            self.threshold_, self.validated_decision_ = validated_thresholds(self.oof_decision_, Y, folds,
                                                                             self.threshold)
            self.oof_decision_ = self.oof_decision_ - self.threshold_
        self._set_platt(Y)

    def _set_platt(self, Y: np.ndarray) -> None:
        """The Platt sigmoids (``probability``) from ``oof_decision_``, smoothed priors where there is none."""
        if not self.probability:
            self.platt_A_ = self.platt_B_ = None
        elif self.oof_decision_ is not None:
            self.platt_A_, self.platt_B_ = fit_platt(self.oof_decision_, Y)
        else:  # too few samples to cross-validate: smoothed priors
            n, n_pos = Y.shape[0], Y.sum(axis=0)
            self.platt_A_ = np.zeros(Y.shape[1])
            self.platt_B_ = np.log((n - n_pos + 1.0) / (n_pos + 1.0))

    def finish(self, X: np.ndarray, Y: object) -> RBFSVMOvR:
        """Train the final models on all of ``X`` (the inputs :meth:`validate` was given) at the chosen C."""
        if getattr(self, "nystroem_components_", None) is not None:
            return self  # the approximate path trains its final models in validate()
        X = np.ascontiguousarray(X, dtype=np.float64)
        Y = _as_dense_labels(Y)
        n, k = Y.shape
        precomputed = n <= self.max_gram_samples
        gram = rbf_kernel_inplace(X, None, self.gamma_) if precomputed else X
        models = self._fit_many(gram, Y, self.C_, precomputed)
        del gram
        support = np.unique(np.concatenate([m[0] for m in models] + [np.zeros(0, dtype=np.int64)]))
        pos = np.searchsorted(support, np.arange(n))
        dual = np.zeros((support.size, k))
        for j, (sup, d, _b) in enumerate(models):
            dual[pos[sup], j] = d
        self.support_ = support
        self.support_vectors_ = X[support].astype(self.support_dtype)
        self.dual_coef_ = dual
        self.intercept_ = np.asarray([m[2] for m in models], dtype=np.float64) - self.threshold_
        if self.verbose:
            logger.info("RBF SVM: %d classes fitted, %d support vectors in all, C chosen: %s", k, support.size,
                        _count_text(self.C_))
        return self

    def _fit_nystroem(self, X: np.ndarray, Y: np.ndarray, grid: list[float],
                      X_val: np.ndarray | None = None, groups: np.ndarray | None = None) -> RBFSVMOvR:
        from sklearn.kernel_approximation import Nystroem

        from gfun.svm.linear import cross_val_decision, fit_linear_ovr, select_C

        n, k = Y.shape
        nys = Nystroem(kernel="rbf", gamma=self.gamma_, n_components=min(int(self.n_components), n),
                       random_state=self.random_state).fit(X)
        self.nystroem_components_ = nys.components_
        self.nystroem_map_ = nys.normalization_
        features = self._nystroem_features(X)
        features_val = None if X_val is None else self._nystroem_features(X_val)
        # hinge loss, as the kernel SVM's (liblinear also regularises the bias, which libsvm does not)
        fit_kw = {"loss": "hinge", "class_weight": self.class_weight, "random_state": self.random_state}
        need_cv = len(grid) > 1 or self.probability or self.threshold != "zero"
        folds = make_folds(n, self.cv, self.random_state, groups) if need_cv else []
        self.C_ = (select_C(features, Y, grid, folds, X_eval=features_val, **fit_kw) if len(grid) > 1
                   else np.full(k, grid[0]))
        self.cv_scores_ = None
        linear = fit_linear_ovr(features, Y, self.C_, n_jobs=self.n_jobs, **fit_kw)
        self.linear_coef_ = linear.coef.astype(np.float64)
        self.intercept_ = linear.intercept
        self.support_ = np.zeros(0, dtype=np.int64)
        self.support_vectors_ = np.zeros((0, X.shape[1]), dtype=self.support_dtype)
        self.dual_coef_ = np.zeros((0, k))
        self.oof_decision_ = (cross_val_decision(features, Y, self.C_, folds, X_eval=features_val, **fit_kw)
                              if folds else None)
        self._set_thresholds_and_platt(Y, folds)
        self.intercept_ = self.intercept_ - self.threshold_
        if self.verbose:
            logger.info("RBF SVM (Nystroem, %d components): %d classes fitted", features.shape[1], k)
        return self

    def _landmarks(self, X: np.ndarray) -> np.ndarray:
        """``n_components`` landmarks for the Nystroem features (``landmarks``): k-means centres or a sample."""
        return nystroem_landmarks(X, self.n_components, self.landmarks, self.random_state)

    def _fit_nystroem_ls(self, X: np.ndarray, Y: np.ndarray, grid: list[float], X_val: np.ndarray | None = None,
                         groups: np.ndarray | None = None) -> RBFSVMOvR:
        """``approximation="nystroem-ls"``: regularised least squares on Nystroem features, every class at once.

        With features ``F`` (and a constant column for the intercept) and targets ``T`` (+-1), the weights of
        every class for ridge ``lambda = 1 / (2 C)`` solve ``(F'F + lambda I) W = F'T``. ``F'F`` and ``F'T``
        are summed over chunks of rows, per fold; a fold's training system is the sum of the other folds' parts,
        so the cross-validation of every C costs one pass over the data and one eigendecomposition per fold
        (:func:`gfun.svm.nystroem.ridge_path`). The held-out scores (on ``X_val`` if given) come from a second pass.
        Both passes run as jobs over blocks of rows (:func:`gfun.svm.nystroem.row_blocks`), and the systems of the
        folds and of the whole as one job each (on a Dask cluster's workers under
        ``parallel_config(backend="dask")``); the landmarks (k-means), ``K_mm``'s eigendecomposition and the choice
        of C run here.
        """
        n, k = Y.shape
        L = self._landmarks(X)
        Kmm = rbf_kernel_inplace(L, None, self.gamma_)
        evals, evecs = np.linalg.eigh(Kmm)
        keep = evals > evals.max() * 1e-10  # drop the null directions of K_mm: features of bounded scale
        self.nystroem_components_ = L
        self.nystroem_map_ = (evecs[:, keep] / np.sqrt(evals[keep])).T  # features = K(X, L) @ map.T
        m = int(keep.sum())
        T = np.where(Y, 1.0, -1.0)
        need_cv = len(grid) > 1 or self.probability or self.threshold != "zero"
        folds = make_folds(n, self.cv, self.random_state, groups) if need_cv else []
        fold_of = np.zeros(n, dtype=np.int64)
        for f, (_, te) in enumerate(folds):
            fold_of[te] = f
        n_parts = max(len(folds), 1)
        blocks = row_blocks(n)  # whole chunks per block
        n_jobs = self.n_jobs if len(blocks) > 1 else 1
        G = np.zeros((n_parts, (m + 1) * (m + 2) // 2))  # upper triangles
        B = np.zeros((n_parts, m + 1, k))
        jobs = (delayed(normal_equations)(X[b], T[b], fold_of[b], n_parts, L, self.nystroem_map_, self.gamma_)
                for b in blocks)
        # one BLAS thread per job: the same bits on a Dask worker, any n_jobs; added in the order of the blocks
        for G_part, B_part in iter_parallel(jobs, n_jobs, blas_threads=1):
            G += G_part
            B += B_part
        G = from_upper_triangle(G, m + 1)
        G_all, B_all = G.sum(axis=0), B.sum(axis=0)

        # every fold's system (the other folds' parts summed: not the whole minus the fold's, no cancellation) and
        # the whole's, solved for every C as jobs, one BLAS thread each (an eigendecomposition's bits depend on it)
        systems = [(G.sum(axis=0, where=others[:, None, None]), B.sum(axis=0, where=others[:, None, None]))
                   for others in (np.arange(len(folds)) != f for f in range(len(folds)))] + [(G_all, B_all)]
        paths = run_parallel((delayed(ridge_path)(G_s, B_s, grid) for G_s, B_s in systems),
                             self.n_jobs if len(systems) > 1 else 1, blas_threads=1)
        del systems
        final = paths.pop()
        scores = None
        if folds:
            W = np.stack([np.stack(path) for path in paths])
            del paths
            X_te = X if X_val is None else X_val
            oof = np.zeros((len(grid), n, k), dtype=np.float32)
            jobs = (delayed(held_out_scores)(X_te[b], fold_of[b], L, self.nystroem_map_, self.gamma_, W)
                    for b in blocks)
            for b, part in zip(blocks, iter_parallel(jobs, n_jobs, blas_threads=1), strict=True):
                oof[:, b] = part
            del W
            if len(grid) > 1:
                scores, best = self._choose_C(oof, Y)
            else:
                best = np.zeros(k, dtype=int)
            self.oof_decision_ = oof[best, :, np.arange(k)].T.astype(np.float64)
            del oof
        else:
            best = np.zeros(k, dtype=int)
            self.oof_decision_ = None
        self.cv_scores_ = scores
        self.C_ = np.asarray([grid[g] for g in best], dtype=np.float64)
        coef = np.zeros((m + 1, k))
        for g in np.unique(best):
            cols = np.flatnonzero(best == g)
            coef[:, cols] = final[g][:, cols]
        self.linear_coef_ = np.ascontiguousarray(coef[:m].T)
        self.intercept_ = coef[m].copy()
        self.support_ = np.zeros(0, dtype=np.int64)
        self.support_vectors_ = np.zeros((0, X.shape[1]), dtype=self.support_dtype)
        self.dual_coef_ = np.zeros((0, k))
        self._set_thresholds_and_platt(Y, folds)
        self.intercept_ = self.intercept_ - self.threshold_
        if self.verbose:
            logger.info("RBF SVM (Nystroem least squares, %d features): %d classes fitted", m, k)
        return self

    def _nystroem_features(self, X: np.ndarray) -> np.ndarray:
        return rbf_kernel_inplace(X, self.nystroem_components_, self.gamma_) @ self.nystroem_map_.T

    # ------------------------------------------------------------------ inference
    def decision_function(self, X: np.ndarray, batch_size: int = 4096) -> np.ndarray:
        """Decision scores (n_samples, n_classes); positive means the class is predicted.

        Beyond one block of rows (:func:`gfun.svm.nystroem.row_blocks`, whole batches), the blocks are jobs
        (``n_jobs`` threads, or a Dask cluster's workers), each computed with one BLAS thread wherever it runs.
        """
        check_is_fitted(self, "dual_coef_")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"expected {self.n_features_in_} features, got array of shape {X.shape}")
        sv, sv_norms = self._wide_support(keep=X.shape[0] < KEEP_WIDE_SUPPORT_BELOW)
        nystroem = getattr(self, "nystroem_components_", None) is not None
        model = ((None, None, None, self.nystroem_components_, self.nystroem_map_, self.linear_coef_) if nystroem
                 else (sv, sv_norms, self.dual_coef_, None, None, None))
        # whole batches per block: the same batches, so the same numbers, as in one call
        blocks = row_blocks(X.shape[0], multiple_of=batch_size)
        if len(blocks) == 1:
            return _decision_rows(X, self.gamma_, self.intercept_, *model, batch_size=batch_size)
        jobs = (delayed(_decision_rows)(X[b], self.gamma_, self.intercept_, *model, batch_size=batch_size)
                for b in blocks)
        return np.concatenate(run_parallel(jobs, self.n_jobs, blas_threads=1))

    def _wide_support(self, keep: bool) -> tuple[np.ndarray, np.ndarray]:
        """The support vectors in float64 (the kernel is computed in float64) and their squared norms.

        float32 support vectors are widened for the kernel; a call on fewer than :data:`KEEP_WIDE_SUPPORT_BELOW`
        samples (a served request) keeps the widened copy for the next calls, where
        widening at every call would cost more than the kernel itself; a larger call (training, a test set)
        widens once for all its samples and keeps nothing. Never saved, never pickled; the same bits either way.
        """
        sv = self.support_vectors_
        kept = self.__dict__.get("_wide")
        if kept is not None and kept[0] is sv:
            return kept[1], kept[2]
        wide = np.asarray(sv, dtype=np.float64)
        norms = row_norms(wide, squared=True)
        if keep:
            self._wide = (sv, wide, norms)
        return wide, norms

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.pop("_wide", None)  # a cache of the support vectors in float64: rebuilt on demand
        return state

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Binary predictions (n_samples, n_classes), int8."""
        return (self.decision_function(X) > 0).astype(np.int8)

    def anchor_sigmoids(self, Y: np.ndarray) -> None:
        """Refit the fitted model's Platt sigmoids through 0.5 at decision 0 (``B = 0``), on its out-of-fold
        decision scores (the logistic of the decision score when it has none: too few documents).

        Predictions threshold the decision scores at 0; with free sigmoids a probability could fall on the other
        side of 0.5. Anchored, ``predict_proba > 0.5`` equals the predictions by construction; the predicted labels
        are unchanged. Does nothing without sigmoids (``probability=False``).
        """
        if getattr(self, "platt_A_", None) is None:
            return
        oof = getattr(self, "oof_decision_", None)
        if oof is not None:
            self.platt_A_, self.platt_B_ = fit_platt(oof, Y, fit_intercept=False)
        else:
            self.platt_A_, self.platt_B_ = np.full(Y.shape[1], -1.0), np.zeros(Y.shape[1])

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Platt-calibrated posteriors P(class | x), shape (n_samples, n_classes)."""
        return self.proba_from_scores(self.decision_function(X))

    def proba_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """The Platt-calibrated posteriors of decision scores already computed by :meth:`decision_function`."""
        check_is_fitted(self, "dual_coef_")
        if self.platt_A_ is None:
            raise AttributeError("predict_proba needs probability=True at fit time")
        return platt_posteriors(scores, self.platt_A_, self.platt_B_)

    # ------------------------------------------------------------------ persistence
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and numpy arrays describing the fitted model (no pickle)."""
        check_is_fitted(self, "dual_coef_")
        meta = {"params": _jsonable_params(self.get_params()), "gamma_": self.gamma_,
                "n_features_in_": self.n_features_in_, "probability_fitted": self.platt_A_ is not None}
        arrays = {"support_vectors_": self.support_vectors_, "dual_coef_": self.dual_coef_,
                  "intercept_": self.intercept_, "C_": self.C_, "support_": self.support_}
        if self.platt_A_ is not None:
            arrays["platt_A_"] = self.platt_A_
            arrays["platt_B_"] = self.platt_B_
        if self.cv_scores_ is not None:
            arrays["cv_scores_"] = self.cv_scores_
        if getattr(self, "nystroem_components_", None) is not None:
            arrays.update(nystroem_components_=self.nystroem_components_, nystroem_map_=self.nystroem_map_,
                          linear_coef_=self.linear_coef_)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> RBFSVMOvR:
        """Rebuild a fitted model from :meth:`get_state` output."""
        params = dict(meta["params"])
        params["C_grid"] = tuple(params["C_grid"])
        obj = cls(**params)
        obj.gamma_ = float(meta["gamma_"])
        obj.n_features_in_ = d = int(meta["n_features_in_"])
        # every array checked against the others before use (a damaged file fails here, not at predict)
        obj.intercept_ = checked_array(arrays, "intercept_", (None,))
        k = obj.intercept_.shape[0]
        obj.support_vectors_ = checked_array(arrays, "support_vectors_", (None, d), what="n_features_in_ columns")
        n_sv = obj.support_vectors_.shape[0]
        obj.dual_coef_ = checked_array(arrays, "dual_coef_", (n_sv, k), what="a row per support vector, a column per "
                                       "class")
        obj.C_ = checked_array(arrays, "C_", (k,), what="one value per class")
        obj.support_ = checked_array(arrays, "support_", (n_sv,), "iu", what="one per support vector")
        obj.platt_A_ = checked_array(arrays, "platt_A_", (k,), optional=True, what="one value per class")
        obj.platt_B_ = checked_array(arrays, "platt_B_", (k,), optional=obj.platt_A_ is None,
                                     what="one value per class")
        obj.cv_scores_ = arrays.get("cv_scores_")
        obj.nystroem_components_ = checked_array(arrays, "nystroem_components_", (None, d), optional=True,
                                                 what="n_features_in_ columns")
        obj.nystroem_map_ = obj.linear_coef_ = None
        if obj.nystroem_components_ is not None:
            m = obj.nystroem_components_.shape[0]
            obj.nystroem_map_ = checked_array(arrays, "nystroem_map_", (None, m), what="a column per landmark")
            obj.linear_coef_ = checked_array(arrays, "linear_coef_", (k, obj.nystroem_map_.shape[0]),
                                             what="a row per class, a column per Nystroem feature")
        obj.oof_decision_ = None
        return obj


def _count_text(values: np.ndarray) -> str:
    """How many classes took each value, in plain numbers: ``1 (30 classes), 10 (43 classes)``."""
    vals, counts = np.unique(np.asarray(values), return_counts=True)
    return ", ".join(f"{float(v):g} ({int(c)} class{'' if c == 1 else 'es'})"
                     for v, c in zip(vals, counts, strict=True))


def _jsonable_params(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, tuple | list):
            v = [float(x) if isinstance(x, numbers.Real) else x for x in v]
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out
