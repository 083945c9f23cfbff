"""F1, K and contingency tables (gfun.metrics.measures) against scores worked out by hand.

Every expected number below is a literal computed by hand (the arithmetic is in the comments),
never by calling the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from gfun.metrics.evaluation import evaluate, per_class_contingency
from gfun.metrics.measures import (
    contingency,
    f1_from_counts,
    f1_macro_present,
    f1_score,
    k_from_counts,
    k_score,
)

# -------------------------------------------------------------------------------------------
# A 4-document, 3-class example used throughout (classes a, b, c; languages en, it).
#
#        y_true   y_pred   lang
#   d1   1 0 1    1 0 0    en
#   d2   0 1 0    1 1 0    it
#   d3   1 1 0    0 1 0    en
#   d4   0 0 0    0 0 0    it
#
# Class a: true {d1, d3}, pred {d1, d2} -> TP=1 (d1) FP=1 (d2) FN=1 (d3) TN=1 (d4)
# Class b: true {d2, d3}, pred {d2, d3} -> TP=2 FP=0 FN=0 TN=2
# Class c: true {d1},     pred {}       -> TP=0 FP=0 FN=1 TN=3
# -------------------------------------------------------------------------------------------
Y_TRUE = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])


Y_PRED = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 0]])


LANGS = ["en", "it", "en", "it"]


CLASSES = ["a", "b", "c"]


EXPECTED_TABLE = np.array([[1, 1, 1, 1], [2, 0, 0, 2], [0, 0, 1, 3]])


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # TP+FP+FN > 0: 2*3 / (2*3 + 1 + 2) = 6/9
        ((3, 1, 2, 4), 6 / 9),
        # TP=0 but FP>0: 0 / (0 + 2 + 0) = 0
        ((0, 2, 0, 5), 0.0),
        # TP=0 but FN>0: 0 / (0 + 0 + 4) = 0
        ((0, 0, 4, 1), 0.0),
        # perfect, with negatives: 2*5 / (2*5) = 1
        ((5, 0, 0, 7), 1.0),
        # TP=FP=FN=0 (class absent and never predicted): second branch, 1
        ((0, 0, 0, 5), 1.0),
        # no documents at all: still TP=FP=FN=0, 1
        ((0, 0, 0, 0), 1.0),
    ],
)
def test_f1_from_counts_branches(counts: tuple[int, int, int, int], expected: float) -> None:
    assert f1_from_counts(*counts) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        # both classes: 3/(3+1) + 4/(4+2) - 1 = 0.75 + 0.666... - 1 = 5/12
        ((3, 2, 1, 4), 5 / 12),
        # both classes, perfect: 1 + 1 - 1 = 1
        ((2, 0, 0, 3), 1.0),
        # both classes, all wrong: 0 + 0 - 1 = -1
        ((0, 3, 2, 0), -1.0),
        # TP+FN = 0 (no positives): 2 * 3/(3+1) - 1 = 0.5
        ((0, 1, 0, 3), 0.5),
        # TP+FN = 0, nothing predicted: 2 * 5/5 - 1 = 1
        ((0, 0, 0, 5), 1.0),
        # TP+FN = 0, everything predicted: 2 * 0/4 - 1 = -1
        ((0, 4, 0, 0), -1.0),
        # TN+FP = 0 (no negatives): 2 * 1/(1+3) - 1 = -0.5
        ((1, 0, 3, 0), -0.5),
        # TN+FP = 0, all found: 2 * 4/4 - 1 = 1
        ((4, 0, 0, 0), 1.0),
        # zero documents: documented convention K = 1
        ((0, 0, 0, 0), 1.0),
    ],
)
def test_k_from_counts_branches(counts: tuple[int, int, int, int], expected: float) -> None:
    assert k_from_counts(*counts) == pytest.approx(expected)


def test_from_counts_vectorised_and_types() -> None:
    tp = np.array([3, 0, 1, 0])
    fp = np.array([2, 1, 0, 0])
    fn = np.array([1, 0, 3, 0])
    tn = np.array([4, 3, 0, 0])
    # F1: 6/(6+2+1)=6/9 ; 0/(0+1)=0 ; 2/(2+3)=0.4 ; empty -> 1
    np.testing.assert_allclose(f1_from_counts(tp, fp, fn, tn), [6 / 9, 0.0, 0.4, 1.0])
    # K: 3/4+4/6-1=5/12 ; 2*3/4-1=0.5 ; 2*1/4-1=-0.5 ; empty -> 1
    np.testing.assert_allclose(k_from_counts(tp, fp, fn, tn), [5 / 12, 0.5, -0.5, 1.0])
    assert isinstance(f1_from_counts(1, 1, 1, 1), float)
    assert isinstance(k_from_counts(1, 1, 1, 1), float)
    # broadcasting a scalar TN=2 against vectors:
    # (TP1 FP0 FN0 TN2) -> 1/1 + 2/2 - 1 = 1 ; (TP0 FP0 FN1 TN2) -> 0/1 + 2/2 - 1 = 0
    np.testing.assert_allclose(k_from_counts([1, 0], [0, 0], [0, 1], 2), [1.0, 0.0])


def test_from_counts_rejects_negative() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        f1_from_counts(-1, 0, 0, 0)
    with pytest.raises(ValueError, match="non-negative"):
        k_from_counts(1, 0, 0, [0, -2])


def test_contingency_by_hand() -> None:
    table = contingency(Y_TRUE, Y_PRED)
    assert table.dtype == np.int64
    assert table.shape == (3, 4)
    np.testing.assert_array_equal(table, EXPECTED_TABLE)


def test_each_branch_from_label_matrices() -> None:
    # One column per branch, 4 documents.
    # col 0: true 1100, pred 1010 -> TP=1 FP=1 FN=1 TN=1 : F1 = 2/4 = .5, K = .5+.5-1 = 0
    # col 1: true 0000, pred 0000 -> TN=4             : F1 = 1 (eq.4 2nd), K = 2*4/4-1 = 1
    # col 2: true 0000, pred 1000 -> FP=1 TN=3        : F1 = 0,   K = 2*3/4-1 = .5
    # col 3: true 1111, pred 1000 -> TP=1 FN=3        : F1 = 2/5, K = 2*1/4-1 = -.5
    y_true = np.array([[1, 0, 0, 1], [1, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 1]])
    y_pred = np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]])
    np.testing.assert_array_equal(
        contingency(y_true, y_pred), [[1, 1, 1, 1], [0, 0, 0, 4], [0, 1, 0, 3], [1, 0, 3, 0]]
    )
    np.testing.assert_allclose(f1_score(y_true, y_pred, average=None), [0.5, 1.0, 0.0, 0.4])
    np.testing.assert_allclose(k_score(y_true, y_pred, average=None), [0.0, 1.0, 0.5, -0.5])


def test_micro_vs_macro_by_hand() -> None:
    # Per class F1: a = 2/(2+1+1) = .5 ; b = 4/4 = 1 ; c = 0/(0+0+1) = 0 -> macro = 1.5/3 = .5
    # Micro counts: TP=1+2+0=3 FP=1 FN=2 TN=1+2+3=6 -> F1 = 6/(6+1+2) = 2/3
    assert f1_score(Y_TRUE, Y_PRED, average="macro") == pytest.approx(0.5)
    assert f1_score(Y_TRUE, Y_PRED, average="micro") == pytest.approx(2 / 3)
    np.testing.assert_allclose(f1_score(Y_TRUE, Y_PRED, average=None), [0.5, 1.0, 0.0])
    # Per class K: a = 1/2 + 1/2 - 1 = 0 ; b = 1 + 1 - 1 = 1 ; c = 0/1 + 3/3 - 1 = 0 -> macro 1/3
    # Micro K: 3/(3+2) + 6/(6+1) - 1 = .6 + .857142... - 1 = 16/35
    assert k_score(Y_TRUE, Y_PRED, average="macro") == pytest.approx(1 / 3)
    assert k_score(Y_TRUE, Y_PRED, average="micro") == pytest.approx(16 / 35)
    np.testing.assert_allclose(k_score(Y_TRUE, Y_PRED, average=None), [0.0, 1.0, 0.0])
    assert f1_score(Y_TRUE, Y_PRED) == pytest.approx(0.5)  # default is macro
    assert isinstance(f1_score(Y_TRUE, Y_PRED, average="micro"), float)


def test_f1_macro_present() -> None:
    # all three classes occur in Y_TRUE -> same as macro (.5)
    assert f1_macro_present(Y_TRUE, Y_PRED) == pytest.approx(0.5)
    # class 1 absent and never predicted: macro counts it as F1 = 1, "present" drops it.
    # col 0: TP=1 FN=1 -> 2/3 ; col 1: F1 = 1 (absent)
    y_true = np.array([[1, 0], [1, 0], [0, 0]])
    y_pred = np.array([[1, 0], [0, 0], [0, 0]])
    assert f1_score(y_true, y_pred) == pytest.approx((2 / 3 + 1) / 2)
    assert f1_macro_present(y_true, y_pred) == pytest.approx(2 / 3)
    assert math.isnan(f1_macro_present(np.zeros((2, 2)), np.ones((2, 2))))


def test_single_class_vector_input() -> None:
    # 1-D vectors are one class: TP=1 FP=1 FN=0 TN=1 -> F1 = 2/3, K = 1/1 + 1/2 - 1 = .5
    y_true = [1, 0, 0]
    y_pred = [1, 1, 0]
    np.testing.assert_array_equal(contingency(y_true, y_pred), [[1, 1, 0, 1]])
    assert f1_score(y_true, y_pred, average="micro") == pytest.approx(2 / 3)
    assert k_score(y_true, y_pred, average="macro") == pytest.approx(0.5)


def test_zero_documents() -> None:
    empty = np.zeros((0, 3), dtype=int)
    np.testing.assert_array_equal(contingency(empty, empty), np.zeros((3, 4)))
    assert f1_score(empty, empty) == 1.0
    assert k_score(empty, empty, average="micro") == 1.0


@pytest.mark.parametrize("dtype", [bool, np.int8, np.int64, np.float32, np.float64])
def test_dtypes(dtype: type) -> None:
    np.testing.assert_array_equal(
        contingency(Y_TRUE.astype(dtype), Y_PRED.astype(dtype)), EXPECTED_TABLE
    )


SPARSE_FORMATS = [sp.csr_matrix, sp.csc_matrix, sp.coo_matrix, sp.lil_matrix, sp.csr_array, sp.coo_array]


@pytest.mark.parametrize("fmt", SPARSE_FORMATS)
def test_sparse_equals_dense(fmt: type) -> None:
    t, p = fmt(Y_TRUE), fmt(Y_PRED)
    for a, b in [(t, p), (t, Y_PRED), (Y_TRUE, p)]:
        np.testing.assert_array_equal(contingency(a, b), EXPECTED_TABLE)
        for avg in ("macro", "micro"):
            assert f1_score(a, b, average=avg) == f1_score(Y_TRUE, Y_PRED, average=avg)
            assert k_score(a, b, average=avg) == k_score(Y_TRUE, Y_PRED, average=avg)
    pd.testing.assert_frame_equal(evaluate(t, p, LANGS), evaluate(Y_TRUE, Y_PRED, LANGS))
    pd.testing.assert_frame_equal(
        per_class_contingency(t, p, LANGS, CLASSES), per_class_contingency(Y_TRUE, Y_PRED, LANGS, CLASSES)
    )


def test_sparse_bool_and_explicit_zeros_and_duplicates() -> None:
    np.testing.assert_array_equal(
        contingency(sp.csr_matrix(Y_TRUE.astype(bool)), sp.csr_matrix(Y_PRED.astype(bool))), EXPECTED_TABLE
    )
    # an explicitly stored zero at (3, 0) must count as a 0
    rows, cols = np.nonzero(Y_TRUE)
    data = np.append(np.ones(len(rows), dtype=np.int64), 0)
    t_explicit = sp.csr_matrix((data, (np.append(rows, 3), np.append(cols, 0))), shape=Y_TRUE.shape)
    assert t_explicit.nnz == len(rows) + 1
    np.testing.assert_array_equal(contingency(t_explicit, Y_PRED), EXPECTED_TABLE)
    # duplicate COO entries summing to 2 are not binary
    dup = sp.coo_matrix(([1, 1], ([0, 0], [0, 0])), shape=(4, 3))
    with pytest.raises(ValueError, match="binary"):
        contingency(dup, Y_PRED)


@pytest.mark.parametrize(
    ("y_true", "y_pred", "match"),
    [
        (np.zeros((3, 2)), np.zeros((3, 3)), "different shapes"),
        (np.zeros((3, 2)), np.zeros((2, 2)), "different shapes"),
        (np.zeros((2, 2, 2)), np.zeros((2, 2, 2)), "2-D"),
        (np.array([[0, 2]]), np.array([[0, 1]]), "binary"),
        (np.array([[0, 1]]), np.array([[0, -1]]), "binary"),
        (np.array([[0.5, 1.0]]), np.array([[0, 1]]), "binary"),
        (np.array([[np.nan, 1.0]]), np.array([[0, 1]]), "binary"),
        (np.array([["a", "b"]]), np.array([[0, 1]]), "dtype"),
        (np.zeros((3, 0)), np.zeros((3, 0)), "no columns"),
        (sp.csr_matrix(np.array([[0, 3]])), np.array([[0, 1]]), "binary"),
    ],
)
def test_invalid_labels(y_true: object, y_pred: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        contingency(y_true, y_pred)


def test_invalid_average() -> None:
    with pytest.raises(ValueError, match="average"):
        f1_score(Y_TRUE, Y_PRED, average="weighted")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="average"):
        k_score(Y_TRUE, Y_PRED, average="samples")  # type: ignore[arg-type]


def test_invalid_langs_and_classes() -> None:
    with pytest.raises(ValueError, match="langs"):
        evaluate(Y_TRUE, Y_PRED, ["en", "it"])
    with pytest.raises(ValueError, match="average"):
        evaluate(Y_TRUE, Y_PRED, ["en", "average", "en", "it"])
    with pytest.raises(ValueError, match="classes"):
        per_class_contingency(Y_TRUE, Y_PRED, LANGS, ["a", "b"])
    with pytest.raises(ValueError, match="langs"):
        per_class_contingency(Y_TRUE, Y_PRED, ["en"], CLASSES)
