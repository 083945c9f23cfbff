"""What the ``"nystroem-ls"`` approximation of :class:`gfun.svm.kernel.RBFSVMOvR` solves with: the Nystroem
landmarks, and the least-squares weights of every C from one eigendecomposition."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["nystroem_landmarks", "ridge_path"]


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
