"""Parallel execution: BLAS threads capped inside parallel jobs, and the same fit on a Dask cluster."""

from __future__ import annotations

import os

import numpy as np
import pytest
from joblib import delayed, parallel_config
from threadpoolctl import threadpool_info

from gfun.core.parallel import blas_threads_per_job, iter_parallel, on_dask_cluster, run_parallel
from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_mapper, default_meta


def _blas_threads() -> int:
    return max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default=0)


def test_blas_threads_per_job() -> None:
    cpus = os.cpu_count() or 1
    assert blas_threads_per_job(1) == cpus
    assert blas_threads_per_job(2) == max(1, cpus // 2)
    assert blas_threads_per_job(10 * cpus) == 1
    assert blas_threads_per_job(-1) == 1


def test_blas_threads_are_capped_inside_parallel_jobs_only() -> None:
    before = _blas_threads()
    if before == 0:
        pytest.skip("numpy reports no BLAS thread pool")
    inside = run_parallel((delayed(_blas_threads)() for _ in range(4)), n_jobs=2 * (os.cpu_count() or 1))
    assert max(inside) == 1  # 2 x cpus jobs: one BLAS thread each
    assert _blas_threads() == before  # restored afterwards
    # one job at a time: no cap
    assert run_parallel((delayed(_blas_threads)() for _ in range(2)), n_jobs=1) == [before, before]


def test_results_keep_the_order_of_the_jobs() -> None:
    assert run_parallel((delayed(pow)(i, 2) for i in range(20)), n_jobs=2) == [i * i for i in range(20)]
    assert list(iter_parallel((delayed(pow)(i, 2) for i in range(20)), n_jobs=2)) == [i * i for i in range(20)]


def test_blas_threads_fixes_the_jobs_threads_whatever_n_jobs() -> None:
    if _blas_threads() < 2:
        pytest.skip("numpy's BLAS runs one thread here")
    for n_jobs in (1, 2):
        assert set(run_parallel((delayed(_blas_threads)() for _ in range(3)), n_jobs, blas_threads=1)) == {1}
        assert set(iter_parallel((delayed(_blas_threads)() for _ in range(3)), n_jobs, blas_threads=1)) == {1}


def test_split_blocks_gives_each_worker_a_few_blocks() -> None:
    from concurrent.futures import ThreadPoolExecutor

    from gfun.core.parallel import JOBS_PER_WORKER, SPLIT_FROM_ROWS, split_blocks

    blocks = split_blocks(10, 4)
    assert len(blocks) == JOBS_PER_WORKER * 4
    assert np.concatenate(blocks).tolist() == list(range(10))  # every item once, in order
    assert len(split_blocks(3, 64)) == 3 and len(split_blocks(0, 4)) == 0  # at most one block per item
    assert len(split_blocks(10, 1)) == JOBS_PER_WORKER
    # GIL-bound work: split on this process's threads from SPLIT_FROM_ROWS rows on, and never inside another job
    assert len(split_blocks(10, 4, rows=SPLIT_FROM_ROWS - 1)) == 1
    assert len(split_blocks(10, 4, rows=SPLIT_FROM_ROWS)) == 8
    with ThreadPoolExecutor(1) as pool:
        assert len(pool.submit(split_blocks, 10, 4, rows=SPLIT_FROM_ROWS).result()) == 1
        assert len(pool.submit(split_blocks, 10, 4).result()) == 8


def test_weighted_blocks_give_the_larger_groups_more_blocks() -> None:
    from gfun.core.parallel import JOBS_PER_WORKER, weighted_blocks

    # 7 groups keep 2 workers busy: one block each, whatever the weights
    assert [[b.tolist() for b in g] for g in weighted_blocks(5, [9, 1, 1, 1, 1, 1, 1], 2)] == [[[0, 1, 2, 3, 4]]] * 7
    # 16 workers, 32 jobs wanted: debtags-like languages, English 30% of the work
    weights = [30, 25, 20, 15, 5, 3, 2]
    blocks = weighted_blocks(73, weights, 16)
    counts = [len(g) for g in blocks]
    assert counts == [int(np.ceil(JOBS_PER_WORKER * 16 * w / 100)) for w in weights] == [10, 8, 7, 5, 2, 1, 1]
    for g in blocks:  # every class once per group, in order
        assert np.concatenate(g).tolist() == list(range(73))
    # the largest block of work is near the work each worker gets, not 5 times it as with equal counts per group
    largest = max(w / len(g) for w, g in zip(weights, blocks, strict=True))
    assert largest <= sum(weights) / (JOBS_PER_WORKER * 16) * 1.01
    assert [len(g) for g in weighted_blocks(3, [1, 1000], 64)] == [1, 3]  # at least one block, at most one per item
    assert [len(g) for g in weighted_blocks(4, [0, 0], 4)] == [4, 4]  # no work measured: equal shares


def test_document_blocks_cut_the_large_languages_on_a_cluster_only(monkeypatch) -> None:
    import gfun.core.parallel as parallel
    from gfun.core.parallel import JOBS_PER_WORKER, MIN_BLOCK_DOCS, document_blocks

    sizes = [30_000, 10_000, 500]
    assert document_blocks(sizes, 16) == [1, 1, 1]  # threads of one process: tokenising takes turns on the GIL
    monkeypatch.setattr(parallel, "on_dask_cluster", lambda: True)
    target = -(-sum(sizes) // (JOBS_PER_WORKER * 16))
    assert target > MIN_BLOCK_DOCS
    assert document_blocks(sizes, 16) == [-(-30_000 // target), -(-10_000 // target), 1]
    assert document_blocks(sizes, 2) == [3, 1, 1]  # blocks of 10,125 documents: only the largest is cut
    assert document_blocks([5 * MIN_BLOCK_DOCS], 1000) == [5]  # never below MIN_BLOCK_DOCS a block


def test_on_dask_cluster_follows_the_joblib_backend() -> None:
    assert not on_dask_cluster()
    with parallel_config(backend="threading"):
        assert not on_dask_cluster()


def test_on_dask_cluster_under_the_dask_backend(dask_client) -> None:
    with parallel_config(backend="dask"):
        assert on_dask_cluster()


@pytest.fixture(scope="module")
def dask_client():
    """A client of a ``LocalCluster`` of 2 single-threaded worker processes, shared by this module's tests."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.fixture(scope="module")
def small_demo():
    train, test = load_demo()
    rng = np.random.RandomState(0)
    keep = [rng.choice(idx, 60, replace=False) for lang, idx in train.by_language().items() if lang in ("en", "it")]
    return train.subset(np.sort(np.concatenate(keep))), test.select("en").subset(range(40))


@pytest.mark.parametrize("max_memory", ["2GB", "1MB"])  # exact meta-classifier; Nystroem least squares
def test_fit_on_a_dask_local_cluster_equals_the_threaded_fit(small_demo, dask_client, max_memory: str) -> None:
    distributed = pytest.importorskip("distributed")
    train, test = small_demo
    kernel = {"max_memory": max_memory, "n_components": 100}
    params = {"views": "x", "aggregation": "mean", "random_state": 0, "n_jobs": 2,
              "meta": default_meta().set_params(C="cv", C_grid=(0.1, 1.0, 10.0), threshold="validated", **kernel),
              "mapper": default_mapper().set_params(cv=3, **kernel), "view_params": {"x": {"cv": 3}}}
    # the threaded reference with one job: liblinear's random generator is shared by a process's threads
    local = GeneralizedFunnelling(**{**params, "n_jobs": 1}).fit(train)
    assert local.meta_.method_ == (None if max_memory == "2GB" else "nystroem-ls")
    with distributed.get_task_stream(dask_client) as stream, parallel_config(backend="dask"):
        remote = GeneralizedFunnelling(**params).fit(train)
    assert len(stream.data) > 0  # the jobs ran on the cluster's workers
    assert {task["worker"] for task in stream.data} <= set(dask_client.scheduler_info()["workers"])
    if max_memory == "1MB":  # the Nystroem passes too
        assert any("normal_equations" in task["key"] for task in stream.data)
    # X's TF-IDF counted in blocks and its class blocks, the thresholds, the sigmoids
    for job in ("_count_block", "_fit_counted", "_fit_classes", "_optimal_and_crossed", "_fit_columns"):
        assert any(job in task["key"] for task in stream.data), f"no {job} job ran on the workers"
    # the same bits: the jobs that compute with BLAS run one BLAS thread here as on the workers
    assert np.array_equal(remote.predict_proba(test), local.predict_proba(test))
    assert np.array_equal(remote.decision_function(test), local.decision_function(test))


@pytest.mark.slow  # ~30 s of CPU: two worker processes import torch and load the encoder, two fits of gFun-XB
@pytest.mark.torch
def test_every_tier_runs_on_a_dask_local_cluster_and_gives_the_local_fit(small_demo, dask_client, tmp_path) -> None:
    """gFun-XB under ``parallel_config(backend="dask")`` on 2 single-threaded worker processes: the X view's
    languages and classes, the B view's frozen pass (each worker loads the tiny encoder from its folder), the B
    mapper's Nystroem passes, the meta-classifier's folds and classes and ``select``'s candidates run on the workers,
    and the fitted model is the local one, bit for bit."""
    distributed = pytest.importorskip("distributed")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from tests.neural_fixtures import tiny_bert_folder

    train, test = small_demo
    folder = tiny_bert_folder(tmp_path / "tiny-bert", train.texts, layers=3)
    tiny_b = {"model": str(folder), "preset": "cpu", "trainable_layers": 1, "max_epochs": 1, "lr": 1e-2,
              "head_lr": 1e-2, "max_length": 32, "batch_size": 16, "eval_batch_size": 16, "head_epochs": 0,
              "device": "cpu"}

    def model(n_jobs: int) -> GeneralizedFunnelling:
        return GeneralizedFunnelling(
            views="xb", view_params={"x": {"cv": 3}, "b": tiny_b},
            # the default meta-classifier, exact (libsvm: its folds and classes); the mapper forced approximate
            mapper=default_mapper().set_params(cv=3, approximation="nystroem-ls", n_components=40),
            random_state=0, n_jobs=n_jobs)

    local = model(1).fit(train)  # one job: liblinear's generator is shared by the threads of a process
    with distributed.get_task_stream(dask_client) as stream, parallel_config(backend="dask"):
        remote = model(2).fit(train)
    workers = set(dask_client.scheduler_info()["workers"])
    ran = {task["key"] for task in stream.data}
    assert {task["worker"] for task in stream.data} == workers  # both workers took part
    for job in ("_count_block", "_fit_counted", "_fit_classes", "_frozen_batches", "normal_equations",
                "held_out_scores", "_path", "_fit_binary"):
        assert any(job in key for key in ran), f"no {job} job ran on the workers"
    assert remote.selected_views_ == local.selected_views_ and remote.aggregation_.scores_ == local.aggregation_.scores_
    assert np.array_equal(remote.decision_function(test), local.decision_function(test))
    assert np.array_equal(remote.predict_proba(test), local.predict_proba(test))
