"""The evaluation measures: F1 and K of binary label matrices, micro- and macro-averaged (per language:
:func:`gfun.metrics.evaluation.evaluate`).

The measures follow equations 4 and 5 of the gFun paper (section 4.2). For one binary
problem with counts TP, FP, FN, TN:

.. code-block:: text

    F1 = 2TP / (2TP + FP + FN)            if TP + FP + FN > 0
       = 1                                if TP = FP = FN = 0

    K  = TP/(TP + FN) + TN/(TN + FP) - 1  if TP + FN > 0 and TN + FP > 0
       = 2 TN/(TN + FP) - 1               if TP + FN = 0
       = 2 TP/(TP + FN) - 1               if TN + FP = 0

Equation 5 leaves one case undefined: no documents at all (TP = FP = FN = TN = 0), where both
``TP + FN = 0`` and ``TN + FP = 0``. This module sets **K = 1** there, the same convention
equation 4 uses for F1: a classifier that makes no mistake scores the maximum. It is also
the value the ``TP + FN = 0`` branch gives for every non-empty set with ``FP = 0``, and it
keeps "a perfect prediction scores K = 1" true for every input.

Multilabel averages (section 4.2): the **micro** average sums TP, FP, FN and TN over the
classes and then applies the formula; the **macro** average applies the formula per class and
takes the unweighted mean over the classes. The paper reports each measure averaged over the
languages of the test set (:func:`gfun.metrics.evaluation.evaluate` does both).

Label matrices are binary, shaped ``(n_docs, n_classes)``: numpy arrays (bool, int or float
holding only 0 and 1), nested lists, or scipy sparse matrices/arrays. A 1-D vector is read as
a single class.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

__all__ = [
    "CONTINGENCY_COLUMNS",
    "MEASURES",
    "contingency",
    "f1_from_counts",
    "f1_macro_present",
    "f1_score",
    "k_from_counts",
    "k_score",
    "measures_from_contingency",
]

MEASURES: tuple[str, ...] = ("F1_macro", "F1_micro", "K_macro", "K_micro")
"""Names of the four measures the paper reports, in the paper's order."""

#: Columns of the contingency table returned by :func:`contingency`.
CONTINGENCY_COLUMNS: tuple[str, ...] = ("TP", "FP", "FN", "TN")

Average = Literal["macro", "micro"] | None
ArrayLike = Any  # numpy array, scipy sparse matrix/array, or nested sequence


# ---------------------------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------------------------


def _as_binary(y: ArrayLike, name: str) -> np.ndarray | sp.csr_array:
    """Return ``y`` as a 2-D bool ndarray or an int8 CSR array after checking it is binary.

    Parameters
    ----------
    y : array-like or sparse matrix
        Label matrix, ``(n_docs, n_classes)``; a 1-D vector is read as one class.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray or scipy.sparse.csr_array
        Bool ndarray for dense input, CSR array with 0/1 ``int8`` data for sparse input.

    Raises
    ------
    ValueError
        If ``y`` is not 1-D or 2-D, is not numeric, or holds values other than 0 and 1.
    """
    if sp.issparse(y):
        if y.ndim != 2:
            raise ValueError(f"{name} must be 2-D (n_docs, n_classes), got {y.ndim} dimensions")
        csr = sp.csr_array(y, copy=True)
        csr.sum_duplicates()
        data = csr.data
        if data.dtype != np.bool_:
            if not (np.issubdtype(data.dtype, np.number)):
                raise ValueError(f"{name} must hold numbers 0/1, got dtype {data.dtype}")
            if not np.all((data == 0) | (data == 1)):
                raise ValueError(f"{name} must be binary (only 0 and 1), found other values")
        out = sp.csr_array((data.astype(np.int8), csr.indices, csr.indptr), shape=csr.shape)
        return out
    arr = np.asarray(y)
    if arr.ndim == 1:
        arr = arr.reshape(-1, 1)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_docs, n_classes), got {arr.ndim} dimensions")
    if arr.dtype == np.bool_:
        return arr
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{name} must hold numbers 0/1 or booleans, got dtype {arr.dtype}")
    if not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must be binary (only 0 and 1), found other values")
    return arr.astype(np.bool_)


def _check_pair(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[Any, Any]:
    """Validate both label matrices and check that their shapes agree."""
    t = _as_binary(y_true, "y_true")
    p = _as_binary(y_pred, "y_pred")
    if t.shape != p.shape:
        raise ValueError(f"y_true and y_pred have different shapes: {t.shape} vs {p.shape}")
    if t.shape[1] == 0:
        raise ValueError("label matrices have no columns (n_classes must be at least 1)")
    return t, p


def _check_average(average: Average) -> None:
    if average not in ("macro", "micro", None):
        raise ValueError(f"average must be 'macro', 'micro' or None, got {average!r}")


# ---------------------------------------------------------------------------------------------
# counts and per-count formulas
# ---------------------------------------------------------------------------------------------


def _column_sums(m: Any) -> np.ndarray:
    """Column sums of a bool ndarray or a CSR array, as a 1-D int64 vector."""
    if sp.issparse(m):
        return np.asarray(m.sum(axis=0, dtype=np.int64)).ravel()
    return np.count_nonzero(m, axis=0).astype(np.int64)


def _contingency_checked(t: Any, p: Any) -> np.ndarray:
    """Contingency table of already validated matrices (see :func:`contingency`)."""
    n_docs = t.shape[0]
    if sp.issparse(t) and sp.issparse(p):
        tp = _column_sums(t.multiply(p).tocsr())
    else:
        t_d = t.toarray().astype(np.bool_) if sp.issparse(t) else t
        p_d = p.toarray().astype(np.bool_) if sp.issparse(p) else p
        tp = _column_sums(t_d & p_d)
    n_true = _column_sums(t)
    n_pred = _column_sums(p)
    fp = n_pred - tp
    fn = n_true - tp
    tn = n_docs - tp - fp - fn
    return np.stack([tp, fp, fn, tn], axis=1).astype(np.int64)


def contingency(y_true: ArrayLike, y_pred: ArrayLike) -> np.ndarray:
    """Per-class contingency table.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels (bool, or numbers that are all 0 or 1).

    Returns
    -------
    numpy.ndarray of shape (n_classes, 4), dtype int64
        Columns TP, FP, FN, TN (see :data:`CONTINGENCY_COLUMNS`); each row sums to ``n_docs``.

    Raises
    ------
    ValueError
        If the shapes differ, a matrix is not 2-D, has no columns, or is not binary.
    """
    t, p = _check_pair(y_true, y_pred)
    return _contingency_checked(t, p)


def _counts(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike) -> tuple[np.ndarray, ...]:
    """Broadcast the four counts to float arrays and check that they are non-negative."""
    arrays = np.broadcast_arrays(*(np.asarray(c, dtype=np.float64) for c in (tp, fp, fn, tn)))
    for label, a in zip(CONTINGENCY_COLUMNS, arrays, strict=True):
        if np.any(np.isnan(a)) or np.any(a < 0):
            raise ValueError(f"{label} counts must be non-negative numbers")
    return tuple(arrays)


def _scalar_or_array(x: np.ndarray) -> float | np.ndarray:
    return float(x) if x.ndim == 0 else x


def f1_from_counts(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike = 0) -> float | np.ndarray:
    """F1 from contingency counts (paper, eq. 4), vectorised.

    ``F1 = 2TP / (2TP + FP + FN)`` when ``TP + FP + FN > 0``, else 1.

    Parameters
    ----------
    tp, fp, fn, tn : int or array-like of int
        Counts; broadcast against each other. ``tn`` does not enter F1 and is accepted
        for a signature uniform with :func:`k_from_counts`.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar counts, otherwise a float64 array of the broadcast shape.

    Raises
    ------
    ValueError
        If a count is negative or NaN.
    """
    tp_, fp_, fn_, _ = _counts(tp, fp, fn, tn)
    den = 2.0 * tp_ + fp_ + fn_
    out = np.ones_like(den)
    np.divide(2.0 * tp_, den, out=out, where=den > 0)
    return _scalar_or_array(out)


def k_from_counts(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike) -> float | np.ndarray:
    """K from contingency counts (paper, eq. 5), vectorised.

    ``K = TP/(TP+FN) + TN/(TN+FP) - 1`` when both classes occur; ``2TN/(TN+FP) - 1`` when
    ``TP + FN = 0`` (no positives); ``2TP/(TP+FN) - 1`` when ``TN + FP = 0`` (no negatives).
    With no documents at all (every count 0) K is 1, by the convention explained in the
    module docstring.

    Parameters
    ----------
    tp, fp, fn, tn : int or array-like of int
        Counts; broadcast against each other.

    Returns
    -------
    float or numpy.ndarray
        A float for scalar counts, otherwise a float64 array of the broadcast shape.

    Raises
    ------
    ValueError
        If a count is negative or NaN.
    """
    tp_, fp_, fn_, tn_ = _counts(tp, fp, fn, tn)
    pos = tp_ + fn_
    neg = tn_ + fp_
    # Rates are computed only where their denominator is positive; each branch of eq. 5 then
    # reads only the rates that are defined for it.
    tpr = np.zeros_like(pos)
    np.divide(tp_, pos, out=tpr, where=pos > 0)
    tnr = np.zeros_like(neg)
    np.divide(tn_, neg, out=tnr, where=neg > 0)
    out = np.ones_like(pos)  # pos == 0 and neg == 0: empty set, K = 1 by convention
    both = (pos > 0) & (neg > 0)
    only_neg = (pos == 0) & (neg > 0)
    only_pos = (neg == 0) & (pos > 0)
    out[both] = tpr[both] + tnr[both] - 1.0
    out[only_neg] = 2.0 * tnr[only_neg] - 1.0
    out[only_pos] = 2.0 * tpr[only_pos] - 1.0
    return _scalar_or_array(out)


def _average_counts(table: np.ndarray, fn: Any, average: Average) -> float | np.ndarray:
    """Apply a per-count measure to a contingency table and average it as requested."""
    _check_average(average)
    if average == "micro":
        tp, fp, fn_, tn = table.sum(axis=0)
        return float(fn(tp, fp, fn_, tn))
    per_class = np.atleast_1d(fn(table[:, 0], table[:, 1], table[:, 2], table[:, 3]))
    if average == "macro":
        return float(per_class.mean())
    return per_class


def f1_score(y_true: ArrayLike, y_pred: ArrayLike, average: Average = "macro") -> float | np.ndarray:
    """F1 of multilabel predictions (paper, eq. 4), macro- or micro-averaged.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels.
    average : {"macro", "micro"} or None, default "macro"
        ``"micro"``: sum the counts over classes, then apply eq. 4. ``"macro"``: apply eq. 4 per
        class, then take the mean over classes. ``None``: return the per-class values.

    Returns
    -------
    float or numpy.ndarray of shape (n_classes,)
        The averaged value, or the per-class values when ``average`` is None.

    Raises
    ------
    ValueError
        On invalid labels (see :func:`contingency`) or an unknown ``average``.
    """
    _check_average(average)
    return _average_counts(contingency(y_true, y_pred), f1_from_counts, average)


def k_score(y_true: ArrayLike, y_pred: ArrayLike, average: Average = "macro") -> float | np.ndarray:
    """K of multilabel predictions (paper, eq. 5), macro- or micro-averaged: the parameters, result and errors of
    :func:`f1_score`, with eq. 5 in place of eq. 4."""
    _check_average(average)
    return _average_counts(contingency(y_true, y_pred), k_from_counts, average)


def _f1_macro_present_counts(table: np.ndarray) -> float:
    present = (table[:, 0] + table[:, 2]) > 0
    if not np.any(present):
        return math.nan
    t = table[present]
    return float(np.mean(f1_from_counts(t[:, 0], t[:, 1], t[:, 2], t[:, 3])))


def f1_macro_present(y_true: ArrayLike, y_pred: ArrayLike) -> float:
    """Macro-F1 over the classes with at least one positive in ``y_true``.

    Eq. 4 scores F1 = 1 for a class with no true positives, no false positives and no
    false negatives, so on small test sets (where many classes are absent) the plain macro
    average is inflated by classes that were merely never predicted. This variant averages
    only over the classes that occur in the true labels.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels.

    Returns
    -------
    float
        The mean per-class F1 over present classes; NaN when no class occurs in ``y_true``.
    """
    return _f1_macro_present_counts(contingency(y_true, y_pred))


def measures_from_contingency(table: np.ndarray) -> dict[str, float]:
    """Every measure of one contingency table: the four of :data:`MEASURES` and ``F1_macro_present``.

    Parameters
    ----------
    table : numpy.ndarray of shape (n_classes, 4)
        Per-class counts TP, FP, FN, TN (as :func:`contingency` returns them; float counts are accepted).

    Returns
    -------
    dict of str to float
        ``F1_macro, F1_micro, K_macro, K_micro, F1_macro_present`` (the last NaN when no class occurs).
    """
    return {
        "F1_macro": _average_counts(table, f1_from_counts, "macro"),
        "F1_micro": _average_counts(table, f1_from_counts, "micro"),
        "K_macro": _average_counts(table, k_from_counts, "macro"),
        "K_micro": _average_counts(table, k_from_counts, "micro"),
        "F1_macro_present": _f1_macro_present_counts(table),
    }
