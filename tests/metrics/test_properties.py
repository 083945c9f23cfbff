"""Property-based tests of gfun.metrics (hypothesis): measures, evaluation and the paired t-test."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.metrics import balanced_accuracy_score
from sklearn.metrics import f1_score as sk_f1_score

from gfun.metrics.evaluation import evaluate, per_class_contingency
from gfun.metrics.measures import MEASURES, contingency, f1_from_counts, f1_score, k_from_counts, k_score
from gfun.metrics.significance import paired_ttest

SETTINGS = settings(max_examples=30, deadline=None)
SLOW_SETTINGS = settings(max_examples=12, deadline=None)  # for tests that build DataFrames

counts = st.integers(min_value=0, max_value=1000)


@st.composite
def label_pair(draw: st.DrawFn, min_docs: int = 0, min_classes: int = 1, max_classes: int = 6
               ) -> tuple[np.ndarray, np.ndarray]:
    """Two binary matrices of the same shape (n_docs, n_classes)."""
    n_docs = draw(st.integers(min_value=min_docs, max_value=25))
    n_classes = draw(st.integers(min_value=min_classes, max_value=max_classes))
    shape = (n_docs, n_classes)
    y_true = draw(hnp.arrays(np.bool_, shape))
    y_pred = draw(hnp.arrays(np.bool_, shape))
    return y_true, y_pred


def _all_scores(y_true: object, y_pred: object) -> dict[str, object]:
    return {
        "F1_macro": f1_score(y_true, y_pred, average="macro"),
        "F1_micro": f1_score(y_true, y_pred, average="micro"),
        "K_macro": k_score(y_true, y_pred, average="macro"),
        "K_micro": k_score(y_true, y_pred, average="micro"),
        "F1_none": f1_score(y_true, y_pred, average=None),
        "K_none": k_score(y_true, y_pred, average=None),
    }


# ------------------------------------------------------------------------------ ranges


@SETTINGS
@given(counts, counts, counts, counts)
def test_count_ranges(tp: int, fp: int, fn: int, tn: int) -> None:
    f1 = f1_from_counts(tp, fp, fn, tn)
    k = k_from_counts(tp, fp, fn, tn)
    assert 0.0 <= f1 <= 1.0
    assert -1.0 <= k <= 1.0


@SETTINGS
@given(hnp.arrays(np.int64, st.integers(0, 20), elements=st.integers(0, 100)),
       hnp.arrays(np.int64, st.integers(0, 20), elements=st.integers(0, 100)))
def test_vectorised_equals_scalar(a: np.ndarray, b: np.ndarray) -> None:
    n = min(a.size, b.size)
    tp, fp, fn, tn = a[:n], b[:n], a[::-1][:n], b[::-1][:n]
    f1 = f1_from_counts(tp, fp, fn, tn)
    k = k_from_counts(tp, fp, fn, tn)
    for i in range(n):
        assert f1[i] == f1_from_counts(int(tp[i]), int(fp[i]), int(fn[i]), int(tn[i]))
        assert k[i] == k_from_counts(int(tp[i]), int(fp[i]), int(fn[i]), int(tn[i]))


@SETTINGS
@given(label_pair())
def test_score_ranges(pair: tuple[np.ndarray, np.ndarray]) -> None:
    scores = _all_scores(*pair)
    for name in ("F1_macro", "F1_micro"):
        assert 0.0 <= scores[name] <= 1.0
    for name in ("K_macro", "K_micro"):
        assert -1.0 <= scores[name] <= 1.0
    assert np.all((scores["F1_none"] >= 0) & (scores["F1_none"] <= 1))
    assert np.all((scores["K_none"] >= -1) & (scores["K_none"] <= 1))


@SETTINGS
@given(label_pair())
def test_contingency_margins(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = pair
    table = contingency(y_true, y_pred)
    assert table.dtype == np.int64
    assert np.all(table >= 0)
    np.testing.assert_array_equal(table.sum(axis=1), np.full(y_true.shape[1], y_true.shape[0]))
    np.testing.assert_array_equal(table[:, 0] + table[:, 2], y_true.sum(axis=0))  # TP + FN
    np.testing.assert_array_equal(table[:, 0] + table[:, 1], y_pred.sum(axis=0))  # TP + FP


# --------------------------------------------------------------------- extreme predictions


@SETTINGS
@given(label_pair())
def test_perfect_prediction(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, _ = pair
    scores = _all_scores(y_true, y_true.copy())
    for name in MEASURES:
        assert scores[name] == 1.0
    assert np.all(scores["F1_none"] == 1.0)
    assert np.all(scores["K_none"] == 1.0)


@SETTINGS
@given(label_pair(min_docs=1))
def test_inverted_prediction(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, _ = pair
    inverted = ~y_true
    # Every document is an error for every class: TP = TN = 0, so F1 = 0 and, in each branch
    # of eq. 5, K = -1 (both classes present: 0 + 0 - 1; only one present: 2*0 - 1).
    scores = _all_scores(y_true, inverted)
    assert np.all(scores["K_none"] == -1.0)
    assert scores["K_macro"] == -1.0
    assert scores["K_micro"] == -1.0
    assert np.all(scores["F1_none"] == 0.0)
    assert scores["F1_micro"] == 0.0


@SETTINGS
@given(label_pair(min_docs=2))
def test_inverted_prediction_both_classes_present(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, _ = pair
    y_true[0, :] = True
    y_true[1, :] = False
    np.testing.assert_array_equal(k_score(y_true, ~y_true, average=None), -1.0)


# ------------------------------------------------------------------------- agreement with sklearn


@SETTINGS
@given(label_pair(min_docs=1, min_classes=2))
def test_micro_f1_matches_sklearn(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = pair
    tp, fp, fn, _ = contingency(y_true, y_pred).sum(axis=0)
    assume(tp + fp + fn > 0)
    expected = sk_f1_score(y_true.astype(int), y_pred.astype(int), average="micro")
    assert f1_score(y_true, y_pred, average="micro") == pytest.approx(expected)


@SETTINGS
@given(label_pair(min_docs=1, min_classes=2))
def test_macro_f1_matches_sklearn_zero_division_1(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = pair
    per_class = sk_f1_score(y_true.astype(int), y_pred.astype(int), average=None, zero_division=1)
    np.testing.assert_allclose(f1_score(y_true, y_pred, average=None), per_class)
    assert f1_score(y_true, y_pred, average="macro") == pytest.approx(float(np.mean(per_class)))


@SETTINGS
@given(label_pair(min_docs=2, max_classes=4))
def test_k_is_adjusted_balanced_accuracy(pair: tuple[np.ndarray, np.ndarray]) -> None:
    # With both classes present, K = TPR + TNR - 1 = 2 * balanced accuracy - 1 (Youden's J).
    y_true, y_pred = pair
    y_true[0, :] = True
    y_true[1, :] = False
    k = k_score(y_true, y_pred, average=None)
    for j in range(y_true.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = balanced_accuracy_score(y_true[:, j], y_pred[:, j], adjusted=True)
        assert k[j] == pytest.approx(expected)


# ------------------------------------------------------------------------------ symmetries


@SETTINGS
@given(label_pair())
def test_f1_symmetric_in_true_and_pred(pair: tuple[np.ndarray, np.ndarray]) -> None:
    # swapping the roles swaps FP and FN, which enter eq. 4 only through FP + FN
    y_true, y_pred = pair
    for avg in ("macro", "micro"):
        assert f1_score(y_true, y_pred, average=avg) == pytest.approx(f1_score(y_pred, y_true, average=avg))


@SETTINGS
@given(label_pair())
def test_k_invariant_under_complementing_both(pair: tuple[np.ndarray, np.ndarray]) -> None:
    # Complementing labels and predictions maps TP<->TN, FP<->FN: TPR and TNR swap and the
    # branches "no positives" / "no negatives" swap with them, so K is unchanged.
    y_true, y_pred = pair
    np.testing.assert_allclose(k_score(~y_true, ~y_pred, average=None), k_score(y_true, y_pred, average=None))
    k_micro = k_score(y_true, y_pred, average="micro")
    assert k_score(~y_true, ~y_pred, average="micro") == pytest.approx(k_micro)


@SETTINGS
@given(label_pair(), st.randoms(use_true_random=False))
def test_permutation_invariance(pair: tuple[np.ndarray, np.ndarray], rnd: object) -> None:
    y_true, y_pred = pair
    rows = list(range(y_true.shape[0]))
    cols = list(range(y_true.shape[1]))
    rnd.shuffle(rows)  # type: ignore[attr-defined]
    rnd.shuffle(cols)  # type: ignore[attr-defined]
    base = _all_scores(y_true, y_pred)
    shuffled = _all_scores(y_true[rows][:, cols], y_pred[rows][:, cols])
    for name in MEASURES:
        assert shuffled[name] == pytest.approx(base[name])
    np.testing.assert_allclose(shuffled["F1_none"], base["F1_none"][cols])
    np.testing.assert_allclose(shuffled["K_none"], base["K_none"][cols])


@SETTINGS
@given(label_pair(), st.integers(min_value=2, max_value=3))
def test_replicating_documents_changes_nothing(pair: tuple[np.ndarray, np.ndarray], times: int) -> None:
    # Replicating the test set multiplies every count by `times`: ratios and branches are unchanged.
    y_true, y_pred = pair
    base = _all_scores(y_true, y_pred)
    rep = _all_scores(np.tile(y_true, (times, 1)), np.tile(y_pred, (times, 1)))
    for name in MEASURES:
        assert rep[name] == pytest.approx(base[name])


@SETTINGS
@given(label_pair(max_classes=1))
def test_micro_equals_macro_with_one_class(pair: tuple[np.ndarray, np.ndarray]) -> None:
    y_true, y_pred = pair
    assert f1_score(y_true, y_pred, average="micro") == f1_score(y_true, y_pred, average="macro")
    assert k_score(y_true, y_pred, average="micro") == k_score(y_true, y_pred, average="macro")


# ------------------------------------------------------------------------- sparse and languages


@SETTINGS
@given(label_pair(), st.sampled_from([sp.csr_matrix, sp.csc_matrix, sp.coo_array, sp.csr_array]))
def test_sparse_equals_dense(pair: tuple[np.ndarray, np.ndarray], fmt: type) -> None:
    y_true, y_pred = pair
    np.testing.assert_array_equal(contingency(fmt(y_true), fmt(y_pred)), contingency(y_true, y_pred))
    np.testing.assert_array_equal(contingency(fmt(y_true), y_pred), contingency(y_true, y_pred))


@SLOW_SETTINGS
@given(label_pair(min_docs=1), st.data())
def test_evaluate_rows_are_subset_scores(pair: tuple[np.ndarray, np.ndarray], data: st.DataObject) -> None:
    y_true, y_pred = pair
    langs = np.array(data.draw(st.lists(st.sampled_from(["de", "en", "fr"]),
                                        min_size=len(y_true), max_size=len(y_true))))
    df = evaluate(y_true, y_pred, langs)
    present = sorted(set(langs.tolist()))
    assert list(df.index) == [*present, "average"]
    for lang in present:
        mask = langs == lang
        t, p = y_true[mask], y_pred[mask]
        assert df.loc[lang, "F1_macro"] == pytest.approx(f1_score(t, p, average="macro"))
        assert df.loc[lang, "F1_micro"] == pytest.approx(f1_score(t, p, average="micro"))
        assert df.loc[lang, "K_macro"] == pytest.approx(k_score(t, p, average="macro"))
        assert df.loc[lang, "K_micro"] == pytest.approx(k_score(t, p, average="micro"))
        assert df.loc[lang, "n_docs"] == mask.sum()
    for name in MEASURES:
        assert df.loc["average", name] == pytest.approx(df.loc[present, name].mean())
    assert df.loc["average", "n_docs"] == len(y_true)
    perfect = evaluate(y_true, y_true.copy(), langs)
    assert np.all(perfect[list(MEASURES)].to_numpy() == 1.0)
    long = per_class_contingency(y_true, y_pred, langs)
    summed = long.groupby("class")[["TP", "FP", "FN", "TN"]].sum().to_numpy()
    np.testing.assert_array_equal(summed, contingency(y_true, y_pred))


class _FixedModel:
    """A fitted model's face for evaluate_model: its classes and fixed predictions."""

    def __init__(self, classes: list[str], y_pred: np.ndarray) -> None:
        self.classes_ = np.asarray(classes)
        self._y_pred = y_pred

    def predict(self, corpus: object) -> np.ndarray:
        return self._y_pred


@SLOW_SETTINGS
@given(label_pair(min_docs=1, max_classes=4), st.data())
def test_counting_unknown_labels_never_scores_above_ignoring_them(pair: tuple[np.ndarray, np.ndarray],
                                                                  data: st.DataObject) -> None:
    from gfun.corpus.multilingual import MultilingualCorpus
    from gfun.metrics.evaluation import evaluate_model

    y_true, y_pred = pair
    n_docs, n_known = y_true.shape
    n_unknown = data.draw(st.integers(min_value=1, max_value=3))
    unknown = data.draw(hnp.arrays(np.bool_, (n_docs, n_unknown)))
    langs = data.draw(st.lists(st.sampled_from(["de", "en", "fr"]), min_size=n_docs, max_size=n_docs))
    known = [f"k{j}" for j in range(n_known)]
    labels = [[known[j] for j in np.flatnonzero(y_true[i])] + [f"u{j}" for j in np.flatnonzero(unknown[i])]
              for i in range(n_docs)]
    test = MultilingualCorpus([f"d{i}" for i in range(n_docs)], langs, ["text"] * n_docs, labels)
    model = _FixedModel(known, y_pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ignore = evaluate_model(model, test, unknown_labels="ignore")
        count = evaluate_model(model, test, unknown_labels="count")
    assert list(count.index) == list(ignore.index)
    for name in [*MEASURES, "F1_macro_present"]:
        for row in ignore.index:
            if not math.isnan(ignore.loc[row, name]):  # NaN: no known class occurs there, no score to beat
                assert count.loc[row, name] <= ignore.loc[row, name] + 1e-12, (row, name)
    for lang in ignore.index[:-1]:  # a language without unknown labels scores the same
        if not unknown[np.asarray(langs) == lang].any():
            np.testing.assert_allclose(count.loc[lang, list(MEASURES)].to_numpy(dtype=float),
                                       ignore.loc[lang, list(MEASURES)].to_numpy(dtype=float))


# ----------------------------------------------------------------------------------- t-test


scores = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@SETTINGS
@given(st.lists(st.tuples(scores, scores), min_size=2, max_size=12))
def test_paired_ttest_range_and_symmetry(pairs: list[tuple[float, float]]) -> None:
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    p = paired_ttest(a, b)
    assert 0.0 <= p <= 1.0
    assert paired_ttest(b, a) == pytest.approx(p)
    assert paired_ttest(a, a) == 1.0
