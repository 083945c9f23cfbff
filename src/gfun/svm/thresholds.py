"""Per-class decision thresholds fitted on out-of-fold decision scores (``threshold="f1"`` / ``"validated"`` of
:class:`gfun.svm.kernel.RBFSVMOvR`), and their cross-fitted validation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from joblib import delayed

from gfun.core.parallel import run_parallel, split_blocks
from gfun.metrics.measures import f1_from_counts

__all__ = ["MIN_POSITIVES_FOR_THRESHOLD", "THRESHOLD_RULES", "THRESHOLD_SHRINKAGE", "f1_thresholds", "k_thresholds",
           "validated_thresholds"]

#: The threshold rules :func:`validated_thresholds` knows.
THRESHOLD_RULES: tuple[str, ...] = ("zero", "f1", "validated", "k", "f1+k")


#: Fewest positive training samples a class needs before ``threshold="f1"`` moves its threshold: with fewer,
#: the F1-optimal cut of the out-of-fold scores is mostly noise, and moving the threshold there costs more F1 on
#: new documents than it gains (as on the bundled demo sample, with a few positives per class).
MIN_POSITIVES_FOR_THRESHOLD = 10


def f1_thresholds(scores: np.ndarray, Y: np.ndarray, min_positives: int = MIN_POSITIVES_FOR_THRESHOLD
                  ) -> np.ndarray:
    """Per column, the threshold on ``scores`` that maximises F1 against the binary ``Y``.

    The threshold lies halfway between the lowest score predicted positive and the next one (0 for a column
    with fewer than ``min_positives`` positives, or where no threshold reaches an F1 above 0); among equally
    good cuts, the one closest to 0 wins.
    """
    return k_thresholds(scores, Y, min_positives, f1_weight=1.0)


def k_thresholds(scores: np.ndarray, Y: np.ndarray, min_positives: int = MIN_POSITIVES_FOR_THRESHOLD,
                 f1_weight: float = 0.0) -> np.ndarray:
    """Per column, the threshold on ``scores`` that maximises K against the binary ``Y`` (with ``f1_weight`` > 0:
    ``(1 - f1_weight) * K + f1_weight * F1``).

    K of one class (the paper's, Youden's J where the class has positive and negative documents) is the true
    positive rate minus the false positive rate: a missed positive of a rare class costs as much as many false
    alarms, so the K-optimal threshold predicts rare classes far more often than the F1-optimal one; weighing F1 in
    (``f1_weight=0.5``: the ``"f1+k"`` rule) gives a cut between the two. The threshold lies halfway between the
    lowest score predicted positive and the next one (0 for a column with fewer than ``min_positives`` positives, or
    without negatives); among equally good cuts, the one closest to 0 wins.
    """
    n, k = scores.shape
    out = np.zeros(k)
    for j in range(k):
        y = Y[:, j].astype(bool)
        n_pos = int(y.sum())
        if n_pos < max(min_positives, 1) or n_pos == n:
            continue
        order = np.argsort(-scores[:, j], kind="stable")
        s = scores[order, j]
        tp = np.cumsum(y[order])
        predicted = np.arange(1, n + 1)
        gain = tp / n_pos - (predicted - tp) / (n - n_pos)
        if f1_weight:
            gain = (1.0 - f1_weight) * gain + f1_weight * 2.0 * tp / (predicted + n_pos)
        cut = np.append((s[:-1] + s[1:]) / 2.0, s[-1] - 1.0)
        gain = np.where(np.append(s[:-1] > s[1:], True), gain, -np.inf)
        best = gain.max()
        if best <= 0:
            continue
        ties = np.flatnonzero(gain >= best - 1e-12)
        out[j] = cut[ties[np.argmin(np.abs(cut[ties]))]]
    return out


#: Fractions of the F1-optimal threshold that ``threshold="validated"`` chooses from, per class (0 is the
#: SVM's own threshold).
THRESHOLD_SHRINKAGE: tuple[float, ...] = (0.0, 1.0)


def _optimal_and_crossed(scores: np.ndarray, Y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                         rule: str, min_positives: int) -> tuple[np.ndarray, np.ndarray]:
    """The optimal threshold of each column (the ``rule``'s) on all of ``scores``, and per document the one fitted
    without its fold."""
    f1_weight = {"k": 0.0, "f1+k": 0.5}.get(rule, 1.0)
    full = k_thresholds(scores, Y, min_positives, f1_weight=f1_weight)
    crossed = np.zeros_like(scores)
    for tr, te in folds:
        crossed[te] = k_thresholds(scores[tr], Y[tr], min_positives, f1_weight=f1_weight)
    return full, crossed


def validated_thresholds(scores: np.ndarray, Y: np.ndarray, folds: Sequence[tuple[np.ndarray, np.ndarray]],
                         rule: str = "validated", shrinkage: Sequence[float] = THRESHOLD_SHRINKAGE,
                         min_positives: int = MIN_POSITIVES_FOR_THRESHOLD, n_jobs: int | None = None
                         ) -> tuple[np.ndarray, np.ndarray]:
    """Per-class decision thresholds on out-of-fold ``scores`` and their honest (cross-fitted) validation.

    The F1-optimal threshold of a class fitted on the very scores it is judged on always looks better than
    the SVM's own (0). Here each fold's documents are judged with the thresholds fitted on the other folds'
    scores, which is what a threshold does to new documents.

    Parameters
    ----------
    scores : ndarray (n_samples, n_classes)
        Out-of-fold decision scores.
    Y : ndarray (n_samples, n_classes) binary
    folds : sequence of (train, test) index arrays
        The folds that produced ``scores``.
    rule : {"zero", "f1", "validated", "k", "f1+k"}
        ``"zero"``: every threshold 0. ``"f1"``: every class's F1-optimal threshold (:func:`f1_thresholds`).
        ``"k"``: every class's K-optimal threshold (:func:`k_thresholds`: recall-aware, for K). ``"f1+k"``: the
        threshold that maximises the mean of the class's F1 and K (between the two).
        ``"validated"``: per class, the fraction of its F1-optimal threshold (among ``shrinkage``; 0 keeps the
        SVM's own) that most raises the mean of macro-F1 and micro-F1 of the cross-fitted predictions, the
        other classes kept at 0: a class moves its threshold only when the validated gain is real, and a move
        that buys one class's F1 with many false positives (micro-F1) does not pass.
    shrinkage : sequence of float
        The fractions ``"validated"`` chooses from.
    min_positives : int
        See :func:`f1_thresholds`.
    n_jobs : int, optional
        Blocks of classes whose optimal thresholds are fitted in parallel, on a Dask cluster's workers or, from
        :data:`gfun.core.parallel.SPLIT_FROM_ROWS` samples on, on threads (:func:`gfun.core.parallel.split_blocks`);
        the same thresholds for any ``n_jobs``.

    Returns
    -------
    thresholds : ndarray (n_classes,)
        Fitted on all of ``scores``.
    validated : ndarray (n_samples, n_classes)
        ``scores`` minus the threshold each document's class would get without the document's fold
        (positive: predicted): the predictions to validate the rule (and the model) with.
    """
    Y = np.asarray(Y, dtype=bool)
    n, k = scores.shape
    if rule == "zero" or not len(folds):
        return np.zeros(k), scores.copy()
    if rule not in THRESHOLD_RULES:
        raise ValueError(f"threshold rule must be one of {THRESHOLD_RULES}, got {rule!r}")
    blocks = split_blocks(k, n_jobs, rows=n)
    if len(blocks) == 1:
        full, crossed = _optimal_and_crossed(scores, Y, folds, rule, min_positives)
    else:  # each class's thresholds depend on its own column only
        parts = run_parallel((delayed(_optimal_and_crossed)(scores[:, b], Y[:, b], folds, rule, min_positives)
                              for b in blocks), n_jobs)
        full, crossed = np.concatenate([f for f, _ in parts]), np.hstack([c for _, c in parts])
    # crossed: per document, the optimal threshold fitted without its fold
    if rule in ("f1", "k", "f1+k"):
        return full, scores - crossed

    def counts(pred: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return (pred & Y).sum(0), (pred & ~Y).sum(0), (~pred & Y).sum(0)

    tp0, fp0, fn0 = counts(scores > 0)
    f10 = f1_from_counts(tp0, fp0, fn0)
    TP, FP, FN = tp0.sum(), fp0.sum(), fn0.sum()
    micro0 = f1_from_counts(TP, FP, FN)
    best_gain, best_frac = np.zeros(k), np.zeros(k)
    for frac in shrinkage:
        if frac == 0:
            continue
        tp, fp, fn = counts(scores > frac * crossed)
        macro_gain = (f1_from_counts(tp, fp, fn) - f10) / k
        micro_gain = f1_from_counts(TP - tp0 + tp, FP - fp0 + fp, FN - fn0 + fn) - micro0
        gain = (macro_gain + micro_gain) / 2
        better = gain > best_gain + 1e-12
        best_gain[better], best_frac[better] = gain[better], frac
    return best_frac * full, scores - best_frac * crossed
