"""Per-language evaluation (gfun.metrics.evaluation) against scores worked out by hand.

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
    MEASURES,
    contingency,
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


def test_evaluate_two_languages_by_hand() -> None:
    # en = {d1, d3}:
    #   a: true d1,d3 pred d1 -> TP1 FP0 FN1 TN0 : F1 2/3,          K (TN+FP=0) 2*1/2-1 = 0
    #   b: true d3    pred d3 -> TP1 FP0 FN0 TN1 : F1 1,            K 1+1-1 = 1
    #   c: true d1    pred -  -> TP0 FP0 FN1 TN1 : F1 0,            K 0+1-1 = 0
    #   macro F1 = 5/9 ; micro TP2 FP0 FN2 TN2 -> F1 4/6 = 2/3 ; K macro 1/3 ; K micro 2/4+2/2-1 = .5
    #   present: a, b, c all occur -> 5/9
    # it = {d2, d4}:
    #   a: true -     pred d2 -> TP0 FP1 FN0 TN1 : F1 0,            K (TP+FN=0) 2*1/2-1 = 0
    #   b: true d2    pred d2 -> TP1 FP0 FN0 TN1 : F1 1,            K 1
    #   c: true -     pred -  -> TN2             : F1 1 (eq.4 2nd), K 2*2/2-1 = 1
    #   macro F1 = 2/3 ; micro TP1 FP1 FN0 TN4 -> 2/3 ; K macro 2/3 ; K micro 1/1 + 4/5 - 1 = .8
    #   present: only b -> 1
    # average: F1M (5/9+2/3)/2 = 11/18 ; F1µ 2/3 ; KM (1/3+2/3)/2 = .5 ; Kµ (.5+.8)/2 = .65 ;
    #          present (5/9+1)/2 = 7/9 ; n_docs 4
    # unlabelled documents: en none (NaN); it d4, predicted nothing -> 0 flagged; average skips the NaN -> 0
    df = evaluate(Y_TRUE, Y_PRED, LANGS)
    assert list(df.index) == ["en", "it", "average"]
    assert df.index.name == "lang"
    assert list(df.columns) == [*MEASURES, "F1_macro_present", "unlabelled_flagged", "n_docs"]
    expected = pd.DataFrame(
        {
            "F1_macro": [5 / 9, 2 / 3, 11 / 18],
            "F1_micro": [2 / 3, 2 / 3, 2 / 3],
            "K_macro": [1 / 3, 2 / 3, 0.5],
            "K_micro": [0.5, 0.8, 0.65],
            "F1_macro_present": [5 / 9, 1.0, 7 / 9],
            "unlabelled_flagged": [np.nan, 0.0, 0.0],
            "n_docs": np.array([2, 2, 4], dtype=np.int64),
        },
        index=pd.Index(["en", "it", "average"], name="lang"),
    )
    pd.testing.assert_frame_equal(df, expected)


def test_evaluate_languages_sorted_and_numpy_langs() -> None:
    langs = np.array(["it", "en", "it", "en"])
    df = evaluate(Y_TRUE, Y_PRED, langs)
    assert list(df.index) == ["en", "it", "average"]
    # en here is {d2, d4}: the "it" subset of the previous test -> F1M 2/3, Kµ .8
    assert df.loc["en", "F1_macro"] == pytest.approx(2 / 3)
    assert df.loc["en", "K_micro"] == pytest.approx(0.8)


def test_evaluate_without_langs() -> None:
    # same numbers as test_micro_vs_macro_by_hand
    df = evaluate(Y_TRUE, Y_PRED)
    assert list(df.index) == ["all"]
    row = df.loc["all"]
    assert row["F1_macro"] == pytest.approx(0.5)
    assert row["F1_micro"] == pytest.approx(2 / 3)
    assert row["K_macro"] == pytest.approx(1 / 3)
    assert row["K_micro"] == pytest.approx(16 / 35)
    assert row["F1_macro_present"] == pytest.approx(0.5)
    assert df["n_docs"].dtype == np.int64
    assert df.loc["all", "n_docs"] == 4


def test_evaluate_average_skips_nan_present() -> None:
    # language x has no positive at all -> F1_macro_present NaN; the average uses y only.
    # y: one class, TP=1 -> F1 1 ; present 1
    y_true = np.array([[0], [0], [1]])
    y_pred = np.array([[0], [1], [1]])
    df = evaluate(y_true, y_pred, ["x", "x", "y"])
    assert math.isnan(df.loc["x", "F1_macro_present"])
    assert df.loc["average", "F1_macro_present"] == pytest.approx(1.0)
    # x: TP0 FP1 FN0 TN1 -> F1 0, K 2*1/2-1 = 0 ; average F1M (0+1)/2 = .5
    assert df.loc["average", "F1_macro"] == pytest.approx(0.5)


def test_per_class_contingency_long_form() -> None:
    df = per_class_contingency(Y_TRUE, Y_PRED, LANGS, CLASSES)
    assert list(df.columns) == ["lang", "class", "TP", "FP", "FN", "TN"]
    # counts worked out in test_evaluate_two_languages_by_hand
    expected = pd.DataFrame(
        {
            "lang": ["en", "en", "en", "it", "it", "it"],
            "class": ["a", "b", "c", "a", "b", "c"],
            "TP": [1, 1, 0, 0, 1, 0],
            "FP": [0, 0, 0, 1, 0, 0],
            "FN": [1, 0, 1, 0, 0, 0],
            "TN": [0, 1, 1, 1, 1, 2],
        }
    )
    expected[["TP", "FP", "FN", "TN"]] = expected[["TP", "FP", "FN", "TN"]].astype(np.int64)
    pd.testing.assert_frame_equal(df, expected)
    # summing over languages gives the overall table
    summed = df.groupby("class")[["TP", "FP", "FN", "TN"]].sum().to_numpy()
    np.testing.assert_array_equal(summed, EXPECTED_TABLE)


def test_per_class_contingency_defaults() -> None:
    df = per_class_contingency(Y_TRUE, Y_PRED, None)
    assert list(df["lang"]) == ["all"] * 3
    assert list(df["class"]) == [0, 1, 2]
    np.testing.assert_array_equal(df[["TP", "FP", "FN", "TN"]].to_numpy(), EXPECTED_TABLE)


def test_measures_from_contingency_is_what_evaluate_reports() -> None:
    from gfun.metrics.measures import measures_from_contingency

    table = contingency(Y_TRUE, Y_PRED)
    row = evaluate(Y_TRUE, Y_PRED).loc["all"]
    for counts in (table, table.astype(float)):  # stored experiment cells hold float counts
        got = measures_from_contingency(counts)
        assert list(got) == [*MEASURES, "F1_macro_present"]
        assert got == {k: row[k] for k in got}
    no_positive = np.array([[0, 2, 0, 5], [0, 0, 0, 7]])
    assert math.isnan(measures_from_contingency(no_positive)["F1_macro_present"])


# ------------------------------------------------------------------------------------- unknown labels
class _FixedModel:
    def __init__(self, classes: list[str], y_pred: np.ndarray) -> None:
        self.classes_ = np.asarray(classes)
        self._y_pred = y_pred

    def predict(self, corpus: object) -> np.ndarray:
        return self._y_pred


def test_an_unknown_label_counts_only_where_it_occurs() -> None:
    """Two classes a, b; one test document (en) also carries the unknown label z.

    en: d1 {a, z} pred {a}, d2 {} pred {b}      it: d3 {b} pred {}, d4 {} pred {}
    ignore: en a TP1 TN1 -> F1 1, K 1; b FP1 TN1 -> F1 0, K 2*1/2-1 = 0; F1M .5, KM .5
            it a TN2 -> F1 1, K 1; b FN1 TN1 -> F1 0, K 0 + 1 - 1 = 0; F1M .5, KM .5
    count:  en gets class z with FN1 only -> F1 0, K 2*0/1-1 = -1; F1M (1+0+0)/3 = 1/3, KM (1+0-1)/3 = 0
            it is unchanged (z does not occur there: an absent never-predicted class would score F1 = K = 1)
    """
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.metrics.evaluation import evaluate_model

    test = MultilingualCorpus(["d1", "d2", "d3", "d4"], ["en", "en", "it", "it"], ["t"] * 4,
                              [["a", "z"], [], ["b"], []])
    model = _FixedModel(["a", "b"], np.array([[1, 0], [0, 1], [0, 0], [0, 0]]))
    ignore = evaluate_model(model, test, unknown_labels="ignore")
    count = evaluate_model(model, test, unknown_labels="count")
    assert ignore.loc["en", "F1_macro"] == pytest.approx(0.5) and ignore.loc["it", "F1_macro"] == pytest.approx(0.5)
    assert count.loc["en", "F1_macro"] == pytest.approx(1 / 3) and count.loc["en", "K_macro"] == pytest.approx(0.0)
    assert count.loc["it", "F1_macro"] == pytest.approx(0.5) and count.loc["it", "K_macro"] == pytest.approx(0.5)
    # micro, en: a TP1 TN1, b FP1 TN1, z FN1 -> TP1 FP1 FN1 TN2: F1 2/4, K 1/2 + 2/3 - 1
    assert count.loc["en", "F1_micro"] == pytest.approx(0.5)
    assert count.loc["en", "K_micro"] == pytest.approx(1 / 2 + 2 / 3 - 1)
    assert count.loc["average", "F1_macro"] == pytest.approx((1 / 3 + 0.5) / 2)
    assert list(count["unknown_labels"]) == [1, 0, 1]
    for name in MEASURES:
        assert (count[name] <= ignore[name] + 1e-12).all()


def test_unlabelled_flagged_counts_documents_without_labels_given_one() -> None:
    # 6 documents, 2 languages; en: d0 labelled, d1 and d2 unlabelled (d1 gets a label, d2 none) -> 1/2;
    # de: d3 unlabelled and given two labels, d4 unlabelled and given none, d5 labelled and given a wrong one -> 1/2
    y_true = np.array([[1, 0], [0, 0], [0, 0], [0, 0], [0, 0], [0, 1]])
    y_pred = np.array([[1, 0], [0, 1], [0, 0], [1, 1], [0, 0], [1, 0]])
    langs = ["en", "en", "en", "de", "de", "de"]
    df = evaluate(y_true, y_pred, langs)
    assert df.loc["en", "unlabelled_flagged"] == pytest.approx(0.5)
    assert df.loc["de", "unlabelled_flagged"] == pytest.approx(0.5)
    assert evaluate(y_true, y_pred).loc["all", "unlabelled_flagged"] == pytest.approx(2 / 4)
    assert evaluate(sp.csr_matrix(y_true), sp.csr_matrix(y_pred), langs).equals(df)  # sparse: the same table
    # a predictor that never labels anything flags no unlabelled document; one that always does flags all
    assert evaluate(y_true, np.zeros_like(y_pred), langs).loc["average", "unlabelled_flagged"] == 0.0
    assert evaluate(y_true, np.ones_like(y_pred), langs).loc["average", "unlabelled_flagged"] == 1.0


def test_a_document_with_only_unknown_labels_is_not_unlabelled_when_they_count() -> None:
    """en: d1 {z} pred {a}, d2 {} pred {b}, d3 {} pred {}: counting unknown labels, d1 has a label, so 1 of the 2
    unlabelled documents is flagged; ignoring them, d1 is unlabelled too and flagged: 2 of 3."""
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.metrics.evaluation import evaluate_model

    test = MultilingualCorpus(["d1", "d2", "d3"], ["en"] * 3, ["t"] * 3, [["z"], [], []])
    model = _FixedModel(["a", "b"], np.array([[1, 0], [0, 1], [0, 0]]))
    assert evaluate_model(model, test, unknown_labels="count").loc["en", "unlabelled_flagged"] == pytest.approx(0.5)
    assert evaluate_model(model, test, unknown_labels="ignore").loc["en", "unlabelled_flagged"] == pytest.approx(2 / 3)
