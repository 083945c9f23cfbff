"""The RBF kernel computed in place: scikit-learn's ``rbf_kernel``, bit for bit, in half its peak memory."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.utils.extmath import row_norms

__all__ = ["rbf_kernel_inplace"]

#: Bytes of kernel rows turned from dot products into kernel values in one go: each block goes through every
#: step (scaling, norms, clipping, exponential) while it sits in a core's cache, instead of seven passes over
#: the whole matrix through memory.
BLOCK_BYTES = 1 << 20
#: Kernels with at least this many entries have their blocks shared among threads (numpy releases the GIL in
#: its element-wise loops), when computed from the main thread (a worker of a parallel loop keeps to itself).
THREADED_FROM = 1 << 21
#: Most threads one kernel uses.
MAX_THREADS = 8


def _threads(n_entries: int) -> int:
    if n_entries < THREADED_FROM or threading.current_thread() is not threading.main_thread():
        return 1
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))


def rbf_kernel_inplace(X: np.ndarray, Y: np.ndarray | None, gamma: float, *,
                       Y_norms: np.ndarray | None = None) -> np.ndarray:
    """``sklearn.metrics.pairwise.rbf_kernel(X, Y)`` (``Y=None``: of ``X`` with itself) for float64 arrays, bit for
    bit, computed inside the one ``(len(X), len(Y))`` array it returns.

    scikit-learn's version holds two such arrays at its peak (``-2 * X @ Y.T`` is a second one). The same operations in
    the same order, done in place, give the same bits. They run on blocks of rows (:data:`BLOCK_BYTES`), each kept in
    cache through all of them, shared among threads for a large kernel computed from the main thread
    (:data:`THREADED_FROM`): element-wise operations, so the bits are those of one pass over the whole matrix.
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
    rows = max(1, BLOCK_BYTES // (8 * max(1, K.shape[1])))
    square = Y is None

    def finish(start: int) -> None:
        B = K[start:start + rows]
        B *= -2.0
        B += XX[start:start + rows]
        B += YY
        np.maximum(B, 0.0, out=B)
        if square:
            np.fill_diagonal(B[:, start:], 0.0)
        B *= -gamma
        np.exp(B, out=B)

    starts = range(0, K.shape[0], rows)
    threads = min(_threads(K.size), len(starts))
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            for _ in pool.map(finish, starts):
                pass
    else:
        for start in starts:
            finish(start)
    return K
