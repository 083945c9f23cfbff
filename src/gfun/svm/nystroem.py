"""The Nystroem paths of :class:`gfun.svm.kernel.RBFSVMOvR` (:class:`NystroemPathMixin`: ``approximation=
"nystroem-ls"`` and ``"nystroem"``) and what they solve with: the Nystroem landmarks, the passes over the training
vectors, and the least-squares weights of every C from one eigendecomposition.

The passes over the training vectors are the part of the fit that grows with their number. Each is cut into jobs of
:data:`CHUNKS_PER_JOB` chunks of :data:`CHUNK_ROWS` rows (:func:`row_blocks`): :func:`normal_equations` sums a
job's share of every fold's normal equations, :func:`held_out_scores` scores a job's rows with the weights of their
fold. The jobs go through :func:`gfun.core.parallel.iter_parallel` (threads, or a Dask cluster's workers), and
their sums are added up in the order of the jobs: the same numbers wherever and on how many workers they run.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from joblib import delayed

from gfun.core.parallel import iter_parallel, run_parallel
from gfun.svm.linear import make_folds
from gfun.svm.rbf_kernel import rbf_kernel_inplace

__all__ = ["CHUNKS_PER_JOB", "CHUNK_ROWS", "NystroemPathMixin", "from_upper_triangle", "held_out_scores",
           "normal_equations", "nystroem_features", "nystroem_landmarks", "nystroem_map", "ridge_path",
           "row_blocks"]

logger = logging.getLogger("gfun.svm.kernel")

#: Rows whose Nystroem features are computed at once (two float64 arrays of ``CHUNK_ROWS x n_components``).
CHUNK_ROWS = 8192
#: Chunks per job of the passes over the training vectors. A job of the first pass returns the upper triangle of
#: every fold's ``F'F`` (``4 cv (n_components + 1)^2`` bytes): more rows per
#: job send less of it per row, fewer rows balance the jobs better over a few cores.
CHUNKS_PER_JOB = 1


def nystroem_landmarks(X: np.ndarray, n_components: int, landmarks: str, random_state: int | None) -> np.ndarray:
    """``n_components`` landmarks for the Nystroem features: k-means centres (``landmarks="kmeans"``: k-means++
    seeding, a few Lloyd iterations on a random sample of at most ``8 * n_components`` vectors) or a uniform
    sample of the rows of ``X`` (``"random"``, or when ``n_components`` covers them all). k-means runs on one thread:
    the same centres whatever the threads of the process (its OpenMP and BLAS threads), on a worker or not."""
    n = X.shape[0]
    m = min(int(n_components), n)
    rng = np.random.RandomState(random_state)
    if landmarks == "random" or m == n:
        return X[np.sort(rng.choice(n, m, replace=False))]
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    sample = X[np.sort(rng.choice(n, min(n, 8 * m), replace=False))]
    # one thread: scikit-learn's Lloyd iterations sum each thread's share of the centres, so the centres' last bits
    # (and every bit of the model after them) would depend on the OpenMP threads of the process fitting them
    with threadpool_limits(limits=1):
        km = KMeans(n_clusters=m, n_init=1, max_iter=10, random_state=random_state).fit(sample)
    return km.cluster_centers_


def nystroem_map(landmarks: np.ndarray, gamma: float) -> np.ndarray:
    """The map ``(m, n_landmarks)`` of the Nystroem features ``K(X, landmarks) @ map.T``: ``K_mm^(-1/2)`` from the
    eigendecomposition of the landmarks' RBF kernel, its null directions dropped (features of bounded scale).

    It runs on one BLAS thread: an eigendecomposition's last bits depend on the threads that compute it, and with
    them every array of the model after it, so one thread gives the same model whatever the process's BLAS threads
    (``OPENBLAS_NUM_THREADS``, the machine's cores) and wherever it is fitted (a Dask worker has one thread)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        Kmm = rbf_kernel_inplace(landmarks, None, gamma)
        evals, evecs = np.linalg.eigh(Kmm)
    keep = evals > evals.max() * 1e-10
    return (evecs[:, keep] / np.sqrt(evals[keep])).T


def row_blocks(n: int, multiple_of: int | None = None) -> list[slice]:
    """The rows of each job of a pass over ``n`` vectors: ``CHUNKS_PER_JOB * CHUNK_ROWS`` at a time, rounded down
    to a multiple of ``multiple_of`` (default ``CHUNK_ROWS``; at least one), so that a job's chunks (or batches)
    are those of one pass."""
    multiple_of = CHUNK_ROWS if multiple_of is None else int(multiple_of)
    rows = max(1, CHUNKS_PER_JOB * CHUNK_ROWS // multiple_of) * multiple_of
    return [slice(start, min(start + rows, n)) for start in range(0, n, rows)]


def nystroem_features(X: np.ndarray, landmarks: np.ndarray, feature_map: np.ndarray, gamma: float) -> np.ndarray:
    """The Nystroem features of the rows of ``X`` with a last column of ones (the intercept's): ``(rows, m + 1)``."""
    m = feature_map.shape[0]
    out = np.empty((X.shape[0], m + 1))
    out[:, :m] = rbf_kernel_inplace(X, landmarks, gamma) @ feature_map.T
    out[:, m] = 1.0
    return out


def normal_equations(X: np.ndarray, T: np.ndarray, fold_of: np.ndarray, n_parts: int, landmarks: np.ndarray,
                     feature_map: np.ndarray, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Each fold's share of the normal equations in the rows of one job, chunk by chunk.

    Parameters
    ----------
    X : ndarray (rows, d)
        The job's training vectors.
    T : ndarray (rows, k)
        Their targets (+-1).
    fold_of : ndarray (rows,)
        The cross-validation fold each row is held out in (all 0 without folds).
    n_parts : int
        The number of folds (1 without folds).
    landmarks, feature_map, gamma
        The Nystroem features (:func:`nystroem_features`).

    Returns
    -------
    G : ndarray (n_parts, (m + 1) (m + 2) / 2)
        The upper triangle of ``F'F`` of each fold's rows (the order of ``numpy.triu_indices``;
        :func:`from_upper_triangle` restores the matrices): half the bytes to send back.
    B : ndarray (n_parts, m + 1, k)
        ``F'T`` of each fold's rows.
    """
    m = feature_map.shape[0]
    G = np.zeros((n_parts, m + 1, m + 1))
    B = np.zeros((n_parts, m + 1, T.shape[1]))
    for start in range(0, X.shape[0], CHUNK_ROWS):
        sl = slice(start, start + CHUNK_ROWS)
        F = nystroem_features(X[sl], landmarks, feature_map, gamma)
        for f in np.unique(fold_of[sl]):
            rows = F[fold_of[sl] == f]
            G[f] += rows.T @ rows  # numpy's symmetric product: half the work, exactly symmetric
            B[f] += rows.T @ T[sl][fold_of[sl] == f]
    upper = np.triu_indices(m + 1)
    return G[:, upper[0], upper[1]], B


def from_upper_triangle(upper: np.ndarray, size: int) -> np.ndarray:
    """The symmetric matrices ``(..., size, size)`` of their upper triangles (:func:`normal_equations`'s ``G``)."""
    rows, cols = np.triu_indices(size)
    out = np.empty((*upper.shape[:-1], size, size))
    out[..., rows, cols] = upper
    out[..., cols, rows] = upper
    return out


def held_out_scores(X: np.ndarray, fold_of: np.ndarray, landmarks: np.ndarray, feature_map: np.ndarray,
                    gamma: float, W: np.ndarray) -> np.ndarray:
    """The decision scores of the rows of one job by the weights of the models their fold did not train:
    ``W`` is ``(n_folds, n_grid, m + 1, k)`` (:func:`ridge_path` of each fold); returns ``(n_grid, rows, k)``,
    float32."""
    out = np.zeros((W.shape[1], X.shape[0], W.shape[3]), dtype=np.float32)
    for start in range(0, X.shape[0], CHUNK_ROWS):
        sl = slice(start, start + CHUNK_ROWS)
        F = nystroem_features(X[sl], landmarks, feature_map, gamma)
        for f in np.unique(fold_of[sl]):
            rows = np.flatnonzero(fold_of[sl] == f)
            for g in range(W.shape[1]):
                out[g, start + rows] = F[rows] @ W[f, g]
    return out


def ridge_path(G: np.ndarray, B: np.ndarray, Cs: Sequence[float]) -> list[np.ndarray]:
    """Least-squares weights ``(m + 1, k)`` for each C (ridge ``1 / (2 C)``, last feature the unpenalised
    intercept column of ones), from ``G = F'F`` and ``B = F'T`` of the features with that column appended.

    The intercept is eliminated by centring (``G`` and ``B`` minus their means' outer products); one
    eigendecomposition of the centred ``G`` then serves every C (``O(m^2 k)`` each instead of a solve).
    """
    m = G.shape[0] - 1
    n_rows = G[m, m]
    s, b0 = G[:m, m], B[m]
    Gc = G[:m, :m] - np.outer(s, s) / n_rows
    Bc = B[:m] - np.outer(s, b0) / n_rows
    evals, Q = np.linalg.eigh(Gc)
    evals = np.maximum(evals, 0.0)
    P = Q.T @ Bc
    out = []
    for C in Cs:
        W = np.empty((m + 1, B.shape[1]))
        W[:m] = Q @ (P / (evals + 1.0 / (2.0 * C))[:, None])
        W[m] = (b0 - s @ W[:m]) / n_rows
        out.append(W)
    return out


class NystroemPathMixin:
    """The approximate paths of :class:`gfun.svm.kernel.RBFSVMOvR`: least squares (``"nystroem-ls"``) or linear SVMs
    (``"nystroem"``) on Nystroem features of the same RBF kernel, final models included."""

    def _fit_nystroem(self, X: np.ndarray, Y: np.ndarray, grid: list[float],
                      X_val: np.ndarray | None = None, groups: np.ndarray | None = None) -> Any:
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
                         groups: np.ndarray | None = None) -> Any:
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
        self.nystroem_components_ = L
        self.nystroem_map_ = nystroem_map(L, self.gamma_)  # features = K(X, L) @ map.T
        m = self.nystroem_map_.shape[0]
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
