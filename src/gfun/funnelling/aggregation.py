"""Aggregation of the per-view meta-level inputs of Generalized Funnelling.

Every policy reads one block per view and one boolean mask per view (which documents the view covers):

* ``concat`` (the paper): the blocks side by side (every view must cover every document);
* ``mean`` (the paper): the average of the available blocks of each document (every block holds |Y|
  posteriors);
* ``stack``: the |Y| posteriors of every view side by side (m·|Y| columns), so that the meta-classifier
  learns how much to trust each view for each class. A view that does not cover a document (a language
  without training documents, seen by M or B only) gets the average of the document's available blocks:
  the best estimate of the missing view's posteriors that the other views give, which turns the document
  into what ``mean`` would give it;
* ``wmean``: a weighted average of the standardised posteriors, with one non-negative weight per view and
  class fitted on out-of-fold posteriors by non-negative least squares against the labels (Breiman's
  stacked regressions, 1996), so that a view that carries noise for a class gets little or no weight. A
  document missing a view is averaged over the weights of the views it has.
"""

from __future__ import annotations

import numpy as np

__all__ = ["AGGREGATIONS", "DEFAULT_AGGREGATION", "POSTERIOR_AGGREGATIONS", "aggregate", "fit_view_weights"]

#: Every aggregation policy.
AGGREGATIONS: tuple[str, ...] = ("mean", "concat", "stack", "wmean", "select")
#: The policy of ``GeneralizedFunnelling()``, ``gfun train`` and of configurations without a suffix.
DEFAULT_AGGREGATION = "select"
#: Policies whose blocks are |Y| posteriors (non-posterior views go through a mapper).
POSTERIOR_AGGREGATIONS: tuple[str, ...] = ("mean", "stack", "wmean", "select")


def _masked_mean(blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    total = np.zeros_like(blocks[0], dtype=np.float64)
    count = np.zeros((blocks[0].shape[0], 1))
    for Z, m in zip(blocks, masks, strict=True):
        total[m] += Z[m]
        count[m, 0] += 1
    return total / np.maximum(count, 1)


def aggregate(policy: str, blocks: list[np.ndarray], masks: list[np.ndarray],
              weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Combine per-view blocks into the meta-classifier's input (float32).

    Parameters
    ----------
    policy : {"mean", "concat", "stack", "wmean"}
    blocks : list of ndarray (n_docs, d_v)
        One block per view; rows the view does not cover are ignored (any value).
    masks : list of bool ndarray (n_docs,)
        Which documents each view covers.
    weights : (weights, mean, scale), optional
        What ``wmean`` needs: the output of :func:`fit_view_weights`.
    """
    if policy == "concat":
        return np.hstack(blocks).astype(np.float32)
    if policy == "mean":
        return _masked_mean(blocks, masks).astype(np.float32)
    if policy == "stack":
        mean = _masked_mean(blocks, masks)
        return np.hstack([np.where(m[:, None], Z, mean) for Z, m in zip(blocks, masks, strict=True)]
                         ).astype(np.float32)
    if policy == "wmean":
        if weights is None:
            raise ValueError("wmean needs fitted view weights (fit_view_weights)")
        W, mean, scale = weights
        total = np.zeros_like(blocks[0], dtype=np.float64)
        wsum = np.zeros_like(total)
        for Z, m, w, mu, sd in zip(blocks, masks, W, mean, scale, strict=True):
            total[m] += (Z[m] - mu) / sd * w
            wsum[m] += w
        # a class whose available views all have zero weight for a document gets 0 (the training mean)
        return (total / np.where(wsum > 0, wsum, 1.0)).astype(np.float32)
    raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {policy!r}")


def fit_view_weights(blocks: list[np.ndarray], Y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-view, per-class weights of ``wmean``: non-negative least squares of the labels on the posteriors.

    Each view's posterior of a class is standardised (training mean and standard deviation), and the
    centred labels are regressed on the standardised posteriors of the views with non-negative
    coefficients: the weights compare what each view's posteriors tell about the labels, whatever their
    spread, and a view whose posteriors do not vary with the labels (pure noise, or the class prior
    everywhere) gets (almost) no weight.

    Parameters
    ----------
    blocks : list of ndarray (n_docs, n_classes)
        Out-of-fold posteriors of each view on the training documents (in-sample posteriors would reward
        the views that overfit most).
    Y : ndarray (n_docs, n_classes) binary

    Returns
    -------
    weights, mean, scale : ndarray (n_views, n_classes)
        Weights summing to 1 per class (uniform for a class no view explains, e.g. without positives), and
        the standardisation of each view's posteriors.
    """
    from scipy.optimize import nnls

    Y = np.asarray(Y.toarray() if hasattr(Y, "toarray") else Y, dtype=np.float64)
    m, k = len(blocks), Y.shape[1]
    mean = np.stack([B.mean(axis=0) for B in blocks]).astype(np.float64)
    std = np.stack([B.std(axis=0) for B in blocks]).astype(np.float64)
    scale = np.where(std > 1e-12, std, 1.0)
    W = np.full((m, k), 1.0 / m)
    for j in range(k):
        A = np.column_stack([(B[:, j] - mean[v, j]) / scale[v, j] for v, B in enumerate(blocks)])
        w, _ = nnls(A, Y[:, j] - Y[:, j].mean())
        if w.sum() > 0:
            W[:, j] = w / w.sum()
    return W, mean, scale
