"""The K-optimal threshold rule (``threshold="k"``) beside the F1-optimal one."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.svm.kernel import RBFSVMOvR
from gfun.svm.linear import make_folds
from gfun.svm.thresholds import f1_thresholds, k_thresholds, validated_thresholds


def test_k_threshold_maximises_true_minus_false_positive_rate():
    # 12 positives scored around -0.5 (a rare class the SVM never predicts), 188 negatives around -1.5
    rng = np.random.RandomState(0)
    y = np.r_[np.ones(12), np.zeros(188)].astype(np.int8)
    s = np.r_[rng.normal(-0.5, 0.4, 12), rng.normal(-1.5, 0.4, 188)]
    t = k_thresholds(s[:, None], y[:, None])[0]
    pred = s > t
    k = pred[y == 1].mean() - pred[y == 0].mean()
    for other in np.linspace(-3, 1, 401):  # no other cut does better
        p = s > other
        assert p[y == 1].mean() - p[y == 0].mean() <= k + 1e-12
    assert t < 0 and pred.sum() >= (s > 0).sum() + 10  # the rare class is now predicted
    # recall-aware: K's cut predicts at least as many documents as F1's
    assert pred.sum() >= (s > f1_thresholds(s[:, None], y[:, None])[0]).sum()


def test_k_rule_leaves_classes_without_evidence_alone():
    s = np.array([[0.3, -1.0], [0.1, -2.0], [-0.2, -0.5], [-1.0, -1.5]])
    Y = np.array([[1, 0], [1, 0], [0, 0], [0, 0]])
    np.testing.assert_array_equal(k_thresholds(s, Y, min_positives=1)[1:], [0.0])  # no positive: threshold 0
    assert k_thresholds(s, Y, min_positives=3)[0] == 0.0  # too few positives to move


def test_k_rule_is_cross_fitted_and_accepted_by_the_meta_classifier():
    rng = np.random.RandomState(1)
    X = rng.randn(150, 4)
    Y = np.c_[X[:, 0] > 1.3, X[:, 1] > 0].astype(np.int8)
    folds = make_folds(150, 5, 0)
    scores = X[:, :2] - 1.0
    full, validated = validated_thresholds(scores, Y, folds, "k")
    np.testing.assert_allclose(full, k_thresholds(scores, Y))
    assert not np.allclose(validated, scores - full)  # each fold judged with thresholds fitted without it
    f1_model = RBFSVMOvR(C=1.0, threshold="f1", random_state=0).fit(X, Y)
    k_model = RBFSVMOvR(C=1.0, threshold="k", random_state=0).fit(X, Y)
    assert k_model.predict(X)[:, 0].sum() >= f1_model.predict(X)[:, 0].sum()
    with pytest.raises(ValueError, match="threshold must be one of"):
        RBFSVMOvR(threshold="recall").fit(X, Y)


def test_gfun_train_meta_threshold_reaches_the_meta_classifier():
    from gfun.cli.main import build_parser, train_estimator

    args = build_parser().parse_args(["train", "--train", "t.jsonl", "--model", "m", "--views", "xp",
                                      "--meta-threshold", "k"])
    assert train_estimator(args).meta.threshold == "k"
    args = build_parser().parse_args(["train", "--train", "t.jsonl", "--model", "m", "--views", "xp"])
    meta = train_estimator(args).meta  # the default rule ("auto"), gfun train's class weights
    assert meta.threshold == "auto" and meta.class_weight == "sqrt"
    args = build_parser().parse_args(["train", "--train", "t.jsonl", "--model", "m", "--views", "xp",
                                      "--meta-class-weight", "none"])
    assert train_estimator(args).meta is None  # the default meta-classifier, as the paper's


def test_the_f1_plus_k_rule_cuts_between_the_f1_and_the_k_optimal_thresholds():
    rng = np.random.RandomState(3)
    y = np.r_[np.ones(30), np.zeros(270)].astype(np.int8)[:, None]
    s = np.r_[rng.normal(0.0, 0.7, 30), rng.normal(-1.2, 0.7, 270)][:, None]
    t_f1, t_k = f1_thresholds(s, y)[0], k_thresholds(s, y)[0]
    t_mix = k_thresholds(s, y, f1_weight=0.5)[0]
    assert t_k < t_f1 and t_k <= t_mix <= t_f1
    full, _ = validated_thresholds(s, y, make_folds(300, 5, 0), "f1+k")
    assert full[0] == t_mix


@pytest.mark.parametrize("rule", ["f1", "validated", "k", "f1+k"])
def test_thresholds_fitted_in_blocks_of_classes_are_the_same_bits(rule: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a cluster the classes' optimal thresholds are fitted in blocks, in parallel: the same numbers (the blocks
    run here on threads, as if on a cluster)."""
    import gfun.core.parallel

    rng = np.random.RandomState(3)
    Y = rng.rand(400, 13) < np.linspace(0.03, 0.5, 13)
    scores = rng.randn(400, 13) + 1.5 * Y - 0.8
    folds = make_folds(400, 3, 0)
    one = validated_thresholds(scores, Y, folds, rule)
    monkeypatch.setattr(gfun.core.parallel, "on_dask_cluster", lambda: True)
    for n_jobs in (2, 5):
        many = validated_thresholds(scores, Y, folds, rule, n_jobs=n_jobs)
        assert np.array_equal(one[0], many[0]) and np.array_equal(one[1], many[1])
    assert np.any(one[0] != 0)
