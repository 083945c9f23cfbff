"""Significance of the difference between two systems scored over the same runs (the paper's paired t-test).

Section 4.2 of the paper: two systems are compared by a paired two-tailed t-test over the runs; the results
tables (:mod:`gfun.experiments.tables`) mark the methods not significantly different from the best.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["paired_ttest"]

ArrayLike = Any  # array-like of float


def paired_ttest(a: ArrayLike, b: ArrayLike, atol: float = 1e-12) -> float:
    """Two-tailed paired t-test p-value between two systems' scores over the same runs.

    Parameters
    ----------
    a, b : array-like of float, shape (n_runs,)
        Scores of the two systems, paired by run (run ``i`` of ``a`` is run ``i`` of ``b``).
    atol : float, default 1e-12
        Differences whose absolute value is at most ``atol`` count as zero, and differences
        that all lie within ``atol`` of each other count as constant (guards against
        floating-point noise in scores computed the same way).

    Returns
    -------
    float
        The p-value of :func:`scipy.stats.ttest_rel`. Two degenerate cases, where the t
        statistic is 0/0 or x/0, are defined explicitly: all differences zero gives **1.0**
        (no evidence of any difference); all differences equal and non-zero gives **0.0**
        (a deterministic difference).

    Raises
    ------
    ValueError
        If the inputs are not 1-D, differ in length, have fewer than 2 runs, or hold NaN/inf.
    """
    a_ = np.asarray(a, dtype=np.float64)
    b_ = np.asarray(b, dtype=np.float64)
    if a_.ndim != 1 or b_.ndim != 1:
        raise ValueError("a and b must be 1-D sequences of per-run scores")
    if a_.shape != b_.shape:
        raise ValueError(f"a and b must have the same number of runs, got {a_.size} and {b_.size}")
    if a_.size < 2:
        raise ValueError(f"a paired t-test needs at least 2 runs, got {a_.size}")
    if not (np.all(np.isfinite(a_)) and np.all(np.isfinite(b_))):
        raise ValueError("a and b must hold finite numbers")
    d = a_ - b_
    if np.all(np.abs(d) <= atol):
        return 1.0
    if np.ptp(d) <= atol:
        return 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        p = float(stats.ttest_rel(a_, b_).pvalue)
    return p
