"""What the ``"nystroem-ls"`` approximation of :class:`gfun.svm.kernel.RBFSVMOvR` solves with: the Nystroem
landmarks, the passes over the training vectors, and the least-squares weights of every C from one
eigendecomposition.

The passes over the training vectors are the part of the fit that grows with their number. Each is cut into jobs of
:data:`CHUNKS_PER_JOB` chunks of :data:`CHUNK_ROWS` rows (:func:`row_blocks`): :func:`normal_equations` sums a
job's share of every fold's normal equations, :func:`held_out_scores` scores a job's rows with the weights of their
fold. The jobs go through :func:`gfun.core.parallel.iter_parallel` (threads, or a Dask cluster's workers), and
their sums are added up in the order of the jobs: the same numbers wherever and on how many workers they run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gfun.svm.rbf_kernel import rbf_kernel_inplace

__all__ = ["CHUNKS_PER_JOB", "CHUNK_ROWS", "from_upper_triangle", "held_out_scores", "normal_equations",
           "nystroem_features", "nystroem_landmarks", "ridge_path", "row_blocks"]

#: Rows whose Nystroem features are computed at once (two float64 arrays of ``CHUNK_ROWS x n_components``).
CHUNK_ROWS = 8192
#: Chunks per job of the passes over the training vectors. A job of the first pass returns the upper triangle of
#: every fold's ``F'F`` (``4 cv (n_components + 1)^2`` bytes): more rows per
#: job send less of it per row, fewer rows balance the jobs better over a few cores.
CHUNKS_PER_JOB = 1


def nystroem_landmarks(X: np.ndarray, n_components: int, landmarks: str, random_state: int | None) -> np.ndarray:
    """``n_components`` landmarks for the Nystroem features: k-means centres (``landmarks="kmeans"``: k-means++
    seeding, a few Lloyd iterations on a random sample of at most ``8 * n_components`` vectors) or a uniform
    sample of the rows of ``X`` (``"random"``, or when ``n_components`` covers them all)."""
    n = X.shape[0]
    m = min(int(n_components), n)
    rng = np.random.RandomState(random_state)
    if landmarks == "random" or m == n:
        return X[np.sort(rng.choice(n, m, replace=False))]
    from sklearn.cluster import KMeans

    sample = X[np.sort(rng.choice(n, min(n, 8 * m), replace=False))]
    km = KMeans(n_clusters=m, n_init=1, max_iter=10, random_state=random_state).fit(sample)
    return km.cluster_centers_


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
