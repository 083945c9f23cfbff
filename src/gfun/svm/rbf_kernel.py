"""The RBF kernel computed in place: scikit-learn's ``rbf_kernel``, bit for bit, in half its peak memory."""

from __future__ import annotations

import numpy as np
from sklearn.utils.extmath import row_norms

__all__ = ["rbf_kernel_inplace"]


def rbf_kernel_inplace(X: np.ndarray, Y: np.ndarray | None, gamma: float, *,
                       Y_norms: np.ndarray | None = None) -> np.ndarray:
    """``sklearn.metrics.pairwise.rbf_kernel(X, Y)`` (``Y=None``: of ``X`` with itself) for float64 arrays, bit for
    bit, computed inside the one ``(len(X), len(Y))`` array it returns.

    scikit-learn's version holds two such arrays at its peak (``-2 * X @ Y.T`` is a second one): 340 MB more for
    the Gram matrix of 6,500 documents. The same operations in the same order, done in place, give the same bits.
    ``Y_norms``: the squared row norms of ``Y`` (``row_norms(Y, squared=True)``) when already known.
    """
    X = np.asarray(X, dtype=np.float64)
    XX = row_norms(X, squared=True)[:, None]
    if Y is None:
        K = X @ X.T  # what rbf_kernel(X, X) computes too (numpy's symmetric product)
        YY = XX.T
    else:
        Y = np.asarray(Y, dtype=np.float64)
        K = X @ Y.T
        YY = (row_norms(Y, squared=True) if Y_norms is None else Y_norms)[None, :]
    K *= -2.0
    K += XX
    K += YY
    np.maximum(K, 0.0, out=K)
    if Y is None:
        np.fill_diagonal(K, 0.0)
    K *= -gamma
    np.exp(K, out=K)
    return K
