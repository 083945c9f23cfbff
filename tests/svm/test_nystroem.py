"""gfun.svm.nystroem: the pieces of the Nystroem least-squares path, each against a direct computation."""

from __future__ import annotations

import numpy as np

from gfun.svm.nystroem import (
    from_upper_triangle,
    normal_equations,
    nystroem_features,
    nystroem_landmarks,
    ridge_path,
    row_blocks,
)


def test_row_blocks_cover_the_rows_in_whole_multiples() -> None:
    blocks = row_blocks(20000, multiple_of=4096)
    assert blocks[0].start == 0 and blocks[-1].stop == 20000
    assert all(b.stop == c.start for b, c in zip(blocks, blocks[1:], strict=False))
    assert all((b.stop - b.start) % 4096 == 0 for b in blocks[:-1])


def test_landmarks_and_features() -> None:
    rng = np.random.RandomState(0)
    X = rng.rand(50, 3)
    L = nystroem_landmarks(X, 10, "random", 0)
    assert L.shape == (10, 3) and all(any(np.array_equal(row, x) for x in X) for row in L)
    assert nystroem_landmarks(X, 10, "kmeans", 0).shape == (10, 3)
    F = nystroem_features(X, L, np.eye(10), 0.5)
    assert F.shape == (50, 11) and (F[:, -1] == 1).all()


def test_normal_equations_and_ridge_path_solve_the_regularised_least_squares() -> None:
    rng = np.random.RandomState(1)
    X, T = rng.rand(40, 3), np.where(rng.rand(40, 2) < 0.5, 1.0, -1.0)
    L, feature_map = X[:6], np.eye(6)
    fold_of = np.arange(40) % 2
    upper, B = normal_equations(X, T, fold_of, 2, L, feature_map, 0.5)
    G = from_upper_triangle(upper, 7)
    F = nystroem_features(X, L, feature_map, 0.5)
    np.testing.assert_allclose(G[0], F[fold_of == 0].T @ F[fold_of == 0], rtol=1e-10)
    np.testing.assert_allclose(B.sum(axis=0), F.T @ T, rtol=1e-10)
    C = 2.0
    W = ridge_path(G.sum(axis=0), B.sum(axis=0), [C])[0]
    Fc, Tc = F[:, :6] - F[:, :6].mean(axis=0), T - T.mean(axis=0)  # the intercept is not penalised
    direct = np.linalg.solve(Fc.T @ Fc + np.eye(6) / (2 * C), Fc.T @ Tc)
    np.testing.assert_allclose(W[:6], direct, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(W[6], T.mean(axis=0) - F[:, :6].mean(axis=0) @ W[:6], rtol=1e-6, atol=1e-9)


def test_kmeans_landmarks_are_the_same_bits_whatever_the_threads_of_the_process() -> None:
    # scikit-learn's Lloyd iterations add up each OpenMP thread's share of the centres: with the process's threads
    # they moved the centres' last bits (and every array of the model after them) with the machine's core count and
    # between a Dask worker (one thread) and the calling process
    from threadpoolctl import threadpool_limits

    rng = np.random.RandomState(0)
    X = rng.rand(3000, 30)
    runs = []
    for threads in (1, 2, 4):
        with threadpool_limits(limits=threads):
            runs.append(nystroem_landmarks(X, 200, "kmeans", random_state=0))
    assert runs[0].shape == (200, 30)
    for other in runs[1:]:
        assert np.array_equal(runs[0], other)


def test_the_nystroem_map_is_the_same_bits_whatever_the_blas_threads() -> None:
    # the eigendecomposition of K_mm gave other last bits with 1 and 2 OpenBLAS threads (1,000 landmarks), and every
    # array of the model after it moved with them; nystroem_map runs it on one thread
    from threadpoolctl import threadpool_limits

    from gfun.svm.nystroem import nystroem_map

    L = np.random.RandomState(0).rand(1000, 40)
    maps = []
    for threads in (1, 2, 4):
        with threadpool_limits(limits=threads, user_api="blas"):
            maps.append(nystroem_map(L, 0.05))
    assert maps[0].shape[1] == 1000 and np.isfinite(maps[0]).all()
    for other in maps[1:]:
        assert np.array_equal(maps[0], other)
