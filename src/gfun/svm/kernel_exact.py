"""The exact path of :class:`gfun.svm.kernel.RBFSVMOvR`: libsvm on one precomputed RBF kernel shared by every class,
fold and C value.

Each fold's kernel blocks are computed from the vectors when the fold starts and freed when it ends (the same
numbers as slices of the whole Gram matrix, without holding both); each class's models are trained along the grid of
C (:meth:`ExactPathMixin._path`), or searched outward from a C already validated (:meth:`ExactPathMixin._climb`); the
whole Gram matrix exists only while the final models are trained (:meth:`ExactPathMixin.finish`). Binary SVMs are
solved by libsvm directly (:mod:`gfun.svm.sklearn_private`), ``SVC`` being the fallback.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from joblib import delayed

from gfun.core.parallel import run_parallel
from gfun.core.progress import LOG_EVERY, format_duration
from gfun.metrics.measures import f1_from_counts
from gfun.svm.kernel_validation import _as_dense_labels
from gfun.svm.linear import CONSTANT_SCORE, binary_class_weights, make_folds, sklearn_class_weight
from gfun.svm.memory_budget import LIBSVM_CACHE_MB, parse_memory
from gfun.svm.rbf_kernel import rbf_kernel_inplace
from gfun.svm.sklearn_private import libsvm as _libsvm  # None when unusable: SVC is the fallback
from gfun.svm.sklearn_private import libsvm_binary

__all__ = ["ExactPathMixin"]

logger = logging.getLogger("gfun.svm.kernel")


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

    svm = SVC(C=C, kernel="precomputed" if precomputed else "rbf", gamma=gamma,
              class_weight=sklearn_class_weight(y, class_weight), tol=tol, cache_size=cache_size)
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

def _count_text(values: np.ndarray) -> str:
    """How many classes took each value, in plain numbers: ``1 (30 classes), 10 (43 classes)``."""
    vals, counts = np.unique(np.asarray(values), return_counts=True)
    return ", ".join(f"{float(v):g} ({int(c)} class{'' if c == 1 else 'es'})"
                     for v, c in zip(vals, counts, strict=True))


class ExactPathMixin:
    """The exact cross-validation and final models of :class:`gfun.svm.kernel.RBFSVMOvR`."""

    def _validate_exact(self, X: np.ndarray, Y: np.ndarray, X_val: np.ndarray | None, groups: np.ndarray | None,
                        grid: list[float], known: Any = None) -> Any:
        """The exact path's cross-validation (:meth:`~gfun.svm.kernel.RBFSVMOvR.validate`): every fold's kernel blocks
        computed from the vectors, each class's models along the grid of C (or searched outward from the C of a
        ``known`` validation), then C, thresholds and sigmoids chosen on the held-out decisions."""
        n, k = Y.shape
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

    def _known_decisions(self, known: Any, grid: list[float], shape: tuple[int, int]
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

    def finish(self, X: np.ndarray, Y: object) -> Any:
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
