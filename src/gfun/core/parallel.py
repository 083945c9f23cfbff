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
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from contextlib import nullcontext
from typing import Any

from joblib import Parallel, effective_n_jobs
from joblib.parallel import get_active_backend

__all__ = ["blas_threads_per_job", "run_parallel"]


def blas_threads_per_job(n_jobs: int | None) -> int:
    """BLAS threads each of ``n_jobs`` concurrent jobs may use: ``max(1, cpu_count // n_jobs)``."""
    jobs = max(1, effective_n_jobs(n_jobs))
    return max(1, (os.cpu_count() or 1) // jobs)


def run_parallel(jobs: Iterable[Any], n_jobs: int | None, *, prefer: str = "threads") -> list[Any]:
    """Run ``joblib.delayed`` jobs with :class:`joblib.Parallel`, capping BLAS threads meanwhile.

    Parameters
    ----------
    jobs : iterable of delayed calls
    n_jobs : int, optional
        As in joblib (``None``: 1 unless a ``parallel_config`` says otherwise; ``-1``: all cores).
    prefer : {"threads", "processes"}
        Soft hint used when no backend is active (``parallel_config`` wins).

    Returns
    -------
    list
        The jobs' results, in order.
    """
    backend, _ = get_active_backend(prefer=prefer)
    in_process = type(backend).__name__ in ("ThreadingBackend", "SequentialBackend")
    n = effective_n_jobs(n_jobs)
    limit = nullcontext()
    if in_process and n > 1:
        from threadpoolctl import threadpool_limits

        limit = threadpool_limits(limits=blas_threads_per_job(n_jobs), user_api="blas")
    with limit:
        return Parallel(n_jobs=n_jobs, prefer=prefer)(jobs)
