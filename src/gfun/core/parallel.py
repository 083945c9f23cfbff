"""Parallel execution without over-subscription, on threads, processes or a Dask cluster.

gfun's heavy loops (languages of tier 1, classes of the SVMs) call liblinear and libsvm, which
release the GIL, so they run on threads by default: no process start-up, no copies of the
training data. Numpy's BLAS may start its own threads inside each job; while jobs run in
parallel in this process, :func:`run_parallel` caps those at ``cpu_count // n_jobs`` so that
``n_jobs`` jobs never ask for more cores than the machine has.

Every call goes through :class:`joblib.Parallel`, so an enclosing
``joblib.parallel_config(backend=...)`` decides where jobs run: ``"loky"`` (processes; joblib then
limits the BLAS threads of its workers itself) or ``"dask"`` (the workers of a
``dask.distributed`` cluster, after ``Client(...)``)::

    from dask.distributed import Client, LocalCluster
    from joblib import parallel_config

    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    with parallel_config(backend="dask"):
        GeneralizedFunnelling(views="xmw", n_jobs=-1).fit(train)

Under the Dask backend every call runs its jobs on the workers, whatever ``n_jobs`` says (joblib's Dask backend
uses all of them). :func:`iter_parallel` hands the results over one at a time, in order, so that a caller summing
them (the Nystroem path's normal equations) holds a few at a time; :func:`on_dask_cluster` tells the work that
only pays on a cluster's workers (the B view's frozen pass, which loads the encoder on each worker) where to run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from joblib import Parallel, effective_n_jobs
from joblib.parallel import get_active_backend

__all__ = ["JOBS_PER_WORKER", "MIN_BLOCK_DOCS", "blas_threads_per_job", "document_blocks", "iter_parallel",
           "on_dask_cluster", "run_parallel", "split_blocks", "SPLIT_FROM_ROWS", "weighted_blocks"]

#: How many jobs per worker :func:`split_blocks` aims at: a few, so that unequal blocks even out.
JOBS_PER_WORKER = 2
#: Rows from which :func:`split_blocks` splits GIL-bound work (``rows=``) on the threads of one process: on 2 cores
#: the meta-classifier's thresholds and sigmoids of 100,286 documents took 19 s less in blocks; at 6,491 nothing
#: was gained.
SPLIT_FROM_ROWS = 20_000


#: Fewest documents :func:`document_blocks` puts in a block: below, the job costs more to ship than to run.
MIN_BLOCK_DOCS = 1_000


def blas_threads_per_job(n_jobs: int | None) -> int:
    """BLAS threads each of ``n_jobs`` concurrent jobs may use: ``max(1, cpu_count // n_jobs)``."""
    jobs = max(1, effective_n_jobs(n_jobs))
    return max(1, (os.cpu_count() or 1) // jobs)


def on_dask_cluster() -> bool:
    """Whether the active joblib backend is Dask's (``parallel_config(backend="dask")``): jobs run on its workers."""
    backend, _ = get_active_backend(prefer="threads")
    return type(backend).__name__ == "DaskDistributedBackend"


def split_blocks(n_items: int, n_jobs: int | None, *, rows: int | None = None) -> list[np.ndarray]:
    """Blocks of ``range(n_items)`` (ascending, in order) for work that would otherwise run as one job:
    :data:`JOBS_PER_WORKER` blocks per worker, at most one per item. ``n_jobs`` counts the workers as joblib does
    (on a Dask cluster, its workers). Work in groups of unequal size: :func:`weighted_blocks`.

    ``rows``: the rows of work that makes many small numpy calls (which hold the GIL): it is split only from the
    calling process's main thread (not inside another job, on a thread or on a worker), and there only on a Dask
    cluster or from :data:`SPLIT_FROM_ROWS` rows on (threads gain on large arrays only).

    Splitting must not change the result: use it for work whose items are computed independently of one another
    (the classes of one-vs-rest models, per-class thresholds)."""
    if rows is not None and (threading.current_thread() is not threading.main_thread()
                             or (rows < SPLIT_FROM_ROWS and not on_dask_cluster())):
        return [np.arange(n_items)]
    workers = max(1, effective_n_jobs(n_jobs))
    k = max(1, min(n_items, JOBS_PER_WORKER * workers))
    return [block for block in np.array_split(np.arange(n_items), k) if block.size]


def weighted_blocks(n_items: int, weights: Sequence[float], n_jobs: int | None) -> list[list[np.ndarray]]:
    """Blocks of ``range(n_items)`` for each of ``len(weights)`` groups of unequal work (a language's classes, whose
    SVMs cost about the nonzeros of its TF-IDF matrix): one block per group while the groups give every worker
    :data:`JOBS_PER_WORKER` jobs, else each group cut into blocks in proportion to its share of the work, at least
    one, at most one per item.

    With the same count of blocks for every group, the largest group's blocks set the time of the phase while the
    small groups' workers wait: on 16 workers, debtags' English (30% of the documents) in 5 blocks takes as long as
    the whole phase's work shared out. Splitting must not change the result (see :func:`split_blocks`)."""
    groups = len(weights)
    workers = max(1, effective_n_jobs(n_jobs))
    target = JOBS_PER_WORKER * workers
    if groups >= target:
        return [[np.arange(n_items)] for _ in range(groups)]
    w = np.maximum(np.asarray(weights, dtype=float), 0.0)
    total = float(w.sum())
    shares = w / total if total > 0 else np.full(groups, 1.0 / max(1, groups))
    counts = [max(1, min(n_items, int(np.ceil(target * share)))) for share in shares]
    return [[block for block in np.array_split(np.arange(n_items), k) if block.size] for k in counts]


def document_blocks(sizes: Sequence[int], n_jobs: int | None) -> list[int]:
    """How many blocks of consecutive documents each group (a language's training documents) is cut into, for work
    done document by document in Python (tokenising), whose blocks are merged in order.

    One block per group on the threads of one process, where such work takes turns on the GIL. On a Dask cluster,
    blocks of about ``sum(sizes) / (JOBS_PER_WORKER * workers)`` documents (at least :data:`MIN_BLOCK_DOCS`), so
    that the largest group no longer sets the time of the phase; a group of fewer documents stays one block.
    Splitting must not change the result (:func:`gfun.text.tfidf.merge_term_counts` merges the blocks of a
    language's counts into those of one pass)."""
    if not on_dask_cluster():
        return [1] * len(sizes)
    workers = max(1, effective_n_jobs(n_jobs))
    target = max(MIN_BLOCK_DOCS, -(-sum(int(s) for s in sizes) // (JOBS_PER_WORKER * workers)))
    return [max(1, -(-int(s) // target)) for s in sizes]


def _blas_cap(n_jobs: int | None, prefer: str, blas_threads: int | None) -> AbstractContextManager:
    """The BLAS threads of this process while the jobs run: ``blas_threads`` when given, else
    :func:`blas_threads_per_job` when ``n_jobs`` jobs share this process's cores (nothing when they run elsewhere)."""
    from threadpoolctl import threadpool_limits

    if blas_threads is not None:
        return threadpool_limits(limits=int(blas_threads), user_api="blas")
    backend, _ = get_active_backend(prefer=prefer)
    in_process = type(backend).__name__ in ("ThreadingBackend", "SequentialBackend")
    if in_process and effective_n_jobs(n_jobs) > 1:
        return threadpool_limits(limits=blas_threads_per_job(n_jobs), user_api="blas")
    return nullcontext()


def run_parallel(jobs: Iterable[Any], n_jobs: int | None, *, prefer: str = "threads",
                 blas_threads: int | None = None) -> list[Any]:
    """Run ``joblib.delayed`` jobs with :class:`joblib.Parallel`, capping BLAS threads meanwhile.

    Parameters
    ----------
    jobs : iterable of delayed calls
    n_jobs : int, optional
        As in joblib (``None``: 1 unless a ``parallel_config`` says otherwise; ``-1``: all cores).
    prefer : {"threads", "processes"}
        Soft hint used when no backend is active (``parallel_config`` wins).
    blas_threads : int, optional
        BLAS threads of the jobs that run in this process, whatever ``n_jobs`` (default: ``cpu_count // n_jobs``
        when jobs run in parallel here). ``1`` makes the jobs compute the same bits as on a Dask worker, which runs
        one BLAS thread per process by default (``distributed.nanny.pre-spawn-environ``): BLAS results can depend
        on the number of threads (the summation order of a product).

    Returns
    -------
    list
        The jobs' results, in order.
    """
    with _blas_cap(n_jobs, prefer, blas_threads):
        return Parallel(n_jobs=n_jobs, prefer=prefer)(jobs)


def iter_parallel(jobs: Iterable[Any], n_jobs: int | None, *, prefer: str = "threads",
                  blas_threads: int | None = None) -> Iterator[Any]:
    """:func:`run_parallel`, the results handed over one at a time, in the order of the jobs.

    joblib dispatches a few jobs ahead of the one consumed (``pre_dispatch``), so only those results are held at
    once, however many jobs there are. Consume the generator to the end (the BLAS cap lasts until then).
    """
    with _blas_cap(n_jobs, prefer, blas_threads):
        yield from Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")(jobs)
