"""Aggregation policies: how the per-view meta-level inputs of a document become the meta-classifier's input.

Each policy is a small estimator that owns its choices (how tier 1 produces the training inputs, what the
meta-classifier is validated on, the normalisation of the blocks) and its fitted state. Every policy reads one
block per view and one boolean mask per view (the documents the view covers):

* :class:`Concat` (the paper): the blocks side by side (every view must cover every document);
* :class:`Mean` (the paper): the average of the available blocks of each document (every block holds |Y|
  posteriors);
* :class:`Stack`: the |Y| posteriors of every view side by side (m·|Y| columns), so that the meta-classifier
  learns how much to trust each view for each class. A view that does not cover a document (a language
  without training documents, seen by M or B only) gets the average of the document's available blocks:
  the best estimate of the missing view's posteriors that the other views give, which turns the document
  into what ``mean`` would give it;
* :class:`WMean`: a weighted average of the standardised posteriors, with one non-negative weight per view and
  class fitted on out-of-fold posteriors by non-negative least squares against the labels (Breiman's
  stacked regressions, 1996), so that a view that carries noise for a class gets little or no weight. A
  document missing a view is averaged over the weights of the views it has;
* :class:`Select` (the default): the mean of the posteriors of the subset of views, normalised or raw, that the
  meta-classifier validates best on out-of-fold inputs (:func:`select_views`).

A policy is fitted by :meth:`Aggregation.fit`, which also trains the meta-classifier through a
:class:`~gfun.funnelling.meta.MetaTrainer` (:class:`Select` needs it to compare its candidates; the others train it
once on their aggregated input).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from gfun.funnelling import AGGREGATIONS
from gfun.funnelling.meta import MetaTrainer, compares_directly, judged_documents
from gfun.funnelling.view_spec import label
from gfun.metrics.measures import f1_from_counts
from gfun.views.normalization import ZScore, l2_normalize

if TYPE_CHECKING:
    from gfun.svm.kernel import RBFSVMOvR

__all__ = ["SELECT_ALL_SUBSETS_UP_TO", "SELECT_AVERAGES", "SELECT_FORMS", "SELECT_SCORES", "Aggregation", "Concat",
           "Mean", "Select", "Selection", "Stack", "ViewBlocks", "WMean", "aggregate", "fallback_input",
           "fit_view_weights", "make_aggregation", "one_standard_error_choice", "select_views"]

logger = logging.getLogger("gfun.funnelling.generalized")

def _masked_mean(blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    total = np.zeros_like(blocks[0], dtype=np.float64)
    count = np.zeros((blocks[0].shape[0], 1))
    for Z, m in zip(blocks, masks, strict=True):
        total[m] += Z[m]
        count[m, 0] += 1
    return total / np.maximum(count, 1)


@dataclass
class ViewBlocks:
    """Each view's block of a batch of documents as a fitted policy reads it, and which documents each view serves
    (what :meth:`gfun.funnelling.generalized.GeneralizedFunnelling.view_blocks` gives).

    Attributes
    ----------
    blocks : list of ndarray (n_docs, d_v)
        One per view of the model (its branches, in order), as the policy aggregates it (``transform_block``);
        zero rows for the documents the view does not serve.
    masks : list of bool ndarray (n_docs,)
        The documents each view serves.
    outputs : list of (ndarray or None)
        Each view's own output (its posteriors, its mapper's, or its features) for the documents it serves, in
        document order; ``None`` when it serves none.
    fallback : bool ndarray (n_docs,)
        The documents of languages no view of the model serves, which the zero-shot fallback views serve.
    fallback_blocks, fallback_masks, fallback_outputs : list
        The same for the zero-shot fallback views (their mapped posteriors).
    """

    fallback: np.ndarray
    blocks: list[np.ndarray] = field(default_factory=list)
    masks: list[np.ndarray] = field(default_factory=list)
    outputs: list[np.ndarray | None] = field(default_factory=list)
    fallback_blocks: list[np.ndarray] = field(default_factory=list)
    fallback_masks: list[np.ndarray] = field(default_factory=list)
    fallback_outputs: list[np.ndarray | None] = field(default_factory=list)


def fallback_input(blocks: list[np.ndarray], masks: list[np.ndarray], width: int) -> np.ndarray:
    """The meta-level input of documents only the zero-shot fallback views serve: the average of the posteriors of
    the fallback views that serve each (``masks``), repeated to ``width`` columns (``stack`` reads one block per
    view: each gets the same estimate)."""
    total = np.zeros(blocks[0].shape if blocks else (0, 0))
    count = np.zeros((total.shape[0], 1))
    for Z, m in zip(blocks, masks, strict=True):
        total[m] += Z[m]
        count[m, 0] += 1
    fill = (total / np.maximum(count, 1)).astype(np.float32)
    return np.tile(fill, width // fill.shape[1])


def aggregate(policy: str, blocks: list[np.ndarray], masks: list[np.ndarray],
              weights: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Combine per-view blocks into the meta-classifier's input (float32), as the policy named ``policy`` does.

    Parameters
    ----------
    policy : {"mean", "concat", "stack", "wmean", "select"}
    blocks : list of ndarray (n_docs, d_v)
        One block per view; rows the view does not cover are ignored (any value).
    masks : list of bool ndarray (n_docs,)
        Which documents each view covers.
    weights : (weights, mean, scale), optional
        What ``wmean`` needs: the output of :func:`fit_view_weights`.
    """
    combiner = make_aggregation(policy)
    if isinstance(combiner, WMean):
        if weights is None:
            raise ValueError("wmean needs fitted view weights (fit_view_weights)")
        combiner.weights_ = weights
    return combiner.combine(blocks, masks)


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


#: ``aggregation="select"`` tries every non-empty set of views up to this many views (2^m - 1 sets; all views
#: and single views both normalised and raw); beyond, all views and every set that leaves one out.
SELECT_ALL_SUBSETS_UP_TO = 4
#: What ``select_score`` can be: the mean of validated macro-F1 and micro-F1 (``"f1"``), macro-F1 alone
#: (``"macro-f1"``), or the mean of F1M, F1µ, KM and Kµ (``"f1k"``).
SELECT_SCORES: tuple[str, ...] = ("f1", "macro-f1", "f1k")
#: How ``aggregation="select"`` averages its score: over all training documents at once (``"pooled"``), or per
#: training language, then over languages (``"language"``: as gFun is evaluated,
#: :func:`gfun.metrics.evaluation.evaluate`).
SELECT_AVERAGES: tuple[str, ...] = ("pooled", "language")
#: ``select``'s forms of the sets of views between one view and all: the form all views validated better in, or both.
SELECT_FORMS: tuple[str, ...] = ("preferred", "both")
def _selection_score(name: str) -> Any:
    """The function ``(pred, y) -> float`` of ``select_score`` ``name`` (boolean matrices, documents x classes)."""
    from gfun.metrics.measures import k_from_counts

    if name not in SELECT_SCORES:
        raise ValueError(f"select_score must be one of {SELECT_SCORES}, got {name!r}")

    def score(pred: np.ndarray, y: np.ndarray) -> float:
        tp, fp, fn, tn = (pred & y).sum(0), (pred & ~y).sum(0), (~pred & y).sum(0), (~pred & ~y).sum(0)
        parts = [float(np.mean(f1_from_counts(tp, fp, fn, tn)))]
        if name != "macro-f1":
            parts.append(float(f1_from_counts(tp.sum(), fp.sum(), fn.sum(), tn.sum())))
        if name == "f1k":
            parts += [float(np.mean(k_from_counts(tp, fp, fn, tn))),
                      float(k_from_counts(tp.sum(), fp.sum(), fn.sum(), tn.sum()))]
        return float(np.mean(parts))

    return score


def one_standard_error_choice(scores: Sequence[float], per_fold: Sequence[np.ndarray], sizes: Sequence[int]) -> int:
    """The candidate ``select`` keeps: the one-standard-error rule (Breiman et al., 1984) on paired folds.

    Among the candidates whose score is within one standard error of the best one's, the smallest (fewest
    views), the best-scoring of those. The standard error is that of the difference between the candidate's
    and the best one's per-fold scores (the candidates share the folds): the noise a fold puts into every
    candidate cancels, and only a view that adds nothing beyond that noise is left out.

    Parameters
    ----------
    scores : sequence of float
        Each candidate's validated score.
    per_fold : sequence of ndarray
        Each candidate's score on each fold (same folds, same order, for every candidate).
    sizes : sequence of int
        Each candidate's number of views.

    Returns
    -------
    int
        The index of the kept candidate.
    """
    scores = np.asarray(scores, dtype=float)
    top = int(np.argmax(scores))
    near = []
    best = np.asarray(per_fold[top], dtype=float)
    for i, folds in enumerate(per_fold):
        diff = best - np.asarray(folds, dtype=float)
        se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        if scores[i] >= scores[top] - se:
            near.append(i)
    return min(near, key=lambda i: (sizes[i], -scores[i]))


@dataclass
class Selection:
    """What :func:`select_views` keeps: the views (indices), their form, every candidate's score, the kept
    candidate's training input and its fitted meta-classifier and input scaler."""

    subset: list[int]
    l2: bool
    scores: dict[str, float]
    Zmeta: np.ndarray
    meta: RBFSVMOvR
    scaler: ZScore | None


def select_views(train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, trainer: MetaTrainer, *, cv: int,
                 score: str, average: str, normalize: bool, names: Sequence[str], langs: np.ndarray | None = None,
                 judged_on: np.ndarray | None = None, forms: str = "preferred") -> Selection:
    """``select``: choose the meta-level input by the meta-classifier's validated F1.

    Candidates, each the mean of the posteriors of a set of views, with the paper's normalisation (L2 per view,
    z-scored columns) or without any (Funnelling's raw posteriors; only this form with ``normalize=False``): all
    views and each single view in both forms, then every other non-empty set of views when there are at most
    :data:`SELECT_ALL_SUBSETS_UP_TO` views (every set that leaves one view out beyond that) in the form all views
    validated better in (``forms="preferred"``) or in both (``"both"``). Single views are tried both ways because
    their better form can differ from that of all views (a posteriors view may be better raw while the views
    together are better normalised); so can a set's. Each candidate's meta-classifier is trained on the training
    inputs (``train``: in-sample, as the paper's) and cross-validated with ``cv`` folds (one split shared by every
    candidate) on the out-of-fold inputs (``val``); its per-class thresholds are chosen by the meta-classifier's
    ``threshold`` and validated cross-fitted (each fold judged with thresholds fitted on the others,
    :func:`gfun.svm.thresholds.validated_thresholds`). A candidate is scored by ``score`` of those predictions, per
    training language and averaged over the languages (``average="language"``, the way gFun is evaluated; ``langs``
    gives each training document's language) or pooled over all documents (``"pooled"``), on the documents
    ``judged_on`` (a boolean mask, :func:`judged_documents`) or all. The kept candidate follows the
    one-standard-error rule (Breiman et al., 1984, :func:`one_standard_error_choice`): the fewest views whose score
    is within one standard error of the best candidate's, the best of those, so that a view must earn its place by
    more than the noise of the estimate. Candidates are compared at one C
    (:func:`~gfun.funnelling.meta.comparison_C`) without sigmoids: a few (one view's two forms,
    :func:`~gfun.funnelling.meta.compares_directly`) at :data:`~gfun.funnelling.meta.SELECT_DIRECT_TOL`, the
    winner's validation being the kept one's; more at a coarse libsvm tolerance
    (:data:`~gfun.funnelling.meta.SELECT_TOL`), the kept one being validated again at the meta-classifier's own.
    With ``C="cv"``, C is chosen per class for the kept candidate only
    (:meth:`~gfun.funnelling.meta.MetaTrainer.keep`). The final models are trained at the meta-classifier's own
    tolerance.
    """
    from itertools import combinations

    from gfun.svm.linear import make_folds

    everyone = np.ones(train[0].shape[0], dtype=bool)
    Yb = np.asarray(Y, dtype=bool)
    folds = make_folds(len(Yb), cv, trainer.random_state, trainer.groups)  # the meta-classifier's
    score_of = _selection_score(score)
    if average not in SELECT_AVERAGES:
        raise ValueError(f"select average must be one of {SELECT_AVERAGES}, got {average!r}")
    if forms not in SELECT_FORMS:
        raise ValueError(f"select forms must be one of {SELECT_FORMS}, got {forms!r}")
    by_language = average == "language" and langs is not None
    groups = [np.flatnonzero(langs == lang) for lang in np.unique(langs)] if by_language else None

    def judged(pred: np.ndarray, idx: np.ndarray) -> float:
        if judged_on is not None:
            idx = idx[judged_on[idx]]
        if groups is None:
            return score_of(pred[idx], Yb[idx])
        member = np.zeros(len(Yb), dtype=bool)
        member[idx] = True
        parts = [score_of(pred[g[member[g]]], Yb[g[member[g]]]) for g in groups if member[g].any()]
        return float(np.mean(parts))

    everything = np.arange(len(Yb)) if judged_on is None else np.flatnonzero(judged_on)
    candidates: list[tuple] = []
    tried: dict[str, float] = {}
    full = tuple(range(len(names)))
    if len(full) <= SELECT_ALL_SUBSETS_UP_TO:
        subsets = [c for size in range(len(full) - 1, 0, -1) for c in combinations(full, size)]
    else:
        subsets = [tuple(i for i in full if i != drop) for drop in full]
    form_list = (True, False) if normalize else (False,)

    def both_forms(subset: tuple[int, ...]) -> bool:  # single views always; the other sets with forms="both"
        return len(subset) == 1 or forms == "both"

    direct = compares_directly(len(form_list) + sum(len(form_list) if both_forms(s) else 1 for s in subsets))

    def attempt(subset: tuple[int, ...], l2: bool) -> None:
        norm = l2_normalize if l2 else (lambda z: z)
        tr = aggregate("mean", [norm(train[i]) for i in subset], [everyone] * len(subset))
        va = aggregate("mean", [norm(val[i]) for i in subset], [everyone] * len(subset))
        meta = trainer.compare(tr, va, Y, zscore=l2, cv=cv, direct=direct)
        if meta.validated_decision_ is None:  # too few documents to cross-validate
            value, per_fold = 0.0, np.zeros(len(folds))
        else:
            pred = meta.validated_decision_ > 0
            per_fold = np.array([judged(pred, te) for _, te in folds])
            value = judged(pred, everything)
        tried[label([names[i] for i in subset]) + ("" if l2 else " (raw)")] = value
        candidates.append((value, per_fold, subset, l2, tr, va, meta if direct else None))

    for l2 in form_list:
        attempt(full, l2)
    preferred = max(candidates, key=lambda c: c[0])[3]  # the form all views validate better in
    for subset in subsets:
        for l2 in (form_list if both_forms(subset) else (preferred,)):
            attempt(subset, l2)
    best = candidates[one_standard_error_choice([c[0] for c in candidates], [c[1] for c in candidates],
                                                [len(c[2]) for c in candidates])]
    _, _, subset, l2, Zmeta, Zval, compared = best
    meta, scaler = trainer.keep(Zmeta, Zval, Y, zscore=l2, cv=cv, compared=compared)
    kept = [names[i] for i in subset]
    if trainer.verbose:
        logger.info("select: validated %s %s; kept %s", score, {k: round(v, 4) for k, v in tried.items()},
                    label(kept) + ("" if l2 else " (raw)"))
    return Selection(list(subset), bool(l2), tried, Zmeta, meta, scaler)


class Aggregation(BaseEstimator):
    """Base of the aggregation policies.

    Parameters
    ----------
    train_posteriors : {"auto", "in-sample", "cv"}
        How tier 1 produces the posteriors of the training documents the meta-classifier is trained on: in-sample
        (the paper's choice: X's classifiers and the mappers applied to the documents they were trained on) or
        out-of-fold (as test documents see them). ``"auto"``: the policy's default (:attr:`default_train_posteriors`).
    validation : {"auto", "same", "oof"}
        What the meta-classifier's cross-validation (C selection, Platt sigmoids, thresholds) scores its held-out
        folds on: the training inputs themselves (``"same"``, the paper), or their out-of-fold version (``"oof"``:
        first-tier posteriors of each training document produced by models that did not see it, as those of new
        documents are). ``"auto"``: ``"same"`` for the paper's policies, ``"oof"`` for the others.
    zscore : bool, optional
        Z-score the meta-classifier's input columns with training statistics; ``None`` follows the estimator's
        ``normalize``.
    block_l2 : bool, optional
        L2-normalise each view's block before aggregating; ``None``: with ``normalize`` for the paper's policies,
        never for the others (calibrated posteriors are comparable across views as they are, and their size tells
        how sure a view is, which L2 normalisation would blur).
    """

    #: The policy's name (``aggregation="<name>"``).
    name: ClassVar[str] = ""
    #: Whether every block must hold |Y| posteriors (non-posterior views are mapped to them).
    reads_posteriors: ClassVar[bool] = True
    #: Whether a document needs every view (else the views that cover it are enough).
    every_view: ClassVar[bool] = False
    #: The paper's policies keep the paper's plain cross-validation folds, L2 blocks and validation on the same inputs.
    paper: ClassVar[bool] = False
    #: ``train_posteriors="auto"``.
    default_train_posteriors: ClassVar[str] = "in-sample"

    def __init__(self, train_posteriors: str = "auto", validation: str = "auto", zscore: bool | None = None,
                 block_l2: bool | None = None) -> None:
        self.train_posteriors = train_posteriors
        self.validation = validation
        self.zscore = zscore
        self.block_l2 = block_l2

    # ------------------------------------------------------------------ resolved choices
    def check(self) -> None:
        """Refuse bad parameter values (called by the estimator before anything is fitted)."""
        if self.train_posteriors not in ("auto", "in-sample", "cv"):
            raise ValueError(f"train_posteriors must be 'auto', 'in-sample' or 'cv', got {self.train_posteriors!r}")
        if self.validation not in ("auto", "same", "oof"):
            raise ValueError(f"validation must be 'auto', 'same' or 'oof', got {self.validation!r}")

    def resolved_train_posteriors(self) -> str:
        """``train_posteriors`` with ``"auto"`` resolved."""
        return self.default_train_posteriors if self.train_posteriors == "auto" else self.train_posteriors

    def resolved_validation(self) -> str:
        """``validation`` with ``"auto"`` resolved: ``"same"`` for the paper's policies, else ``"oof"``."""
        if self.validation == "auto":
            return "same" if self.paper else "oof"
        return self.validation

    def zscores(self, normalize: bool) -> bool:
        """Whether the meta-classifier's input is z-scored."""
        return normalize if self.zscore is None else bool(self.zscore)

    def l2_blocks(self, normalize: bool) -> bool:
        """Whether each view's block is L2-normalised before aggregating."""
        return normalize and self.paper if self.block_l2 is None else bool(self.block_l2)

    # ------------------------------------------------------------------ fit / transform
    def fit(self, train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, meta: MetaTrainer, *,
            normalize: bool, names: Sequence[str] = (), langs: np.ndarray | None = None,
            heldout: Sequence[np.ndarray | None] = ()) -> tuple[np.ndarray, RBFSVMOvR, ZScore | None]:
        """Learn the policy's state and train the meta-classifier on the aggregated training input.

        Parameters
        ----------
        train, val : list of ndarray (n_docs, d_v)
            Each view's block of the training documents: what the meta-classifier is trained on, and its version
            for validation (out-of-fold where the view has one).
        Y : ndarray (n_docs, n_classes) binary
        meta : MetaTrainer
            Trains a meta-classifier on an input (and its validation version).
        normalize : bool
            The estimator's ``normalize``.
        names : sequence of str
            The views' names.
        langs : ndarray, optional
            Each training document's language (:class:`Select` averages its score over them).
        heldout : sequence of (ndarray or None)
            For each view, the training documents it kept out of its training
            (:meth:`~gfun.views.base.ViewGenerator.heldout_documents`; :class:`Select` judges its candidates there).

        Returns
        -------
        Zmeta : ndarray
            The meta-classifier's training input (before its z-scoring).
        meta_, scaler_ : RBFSVMOvR, ZScore or None
            The fitted meta-classifier and the z-scoring of its input.
        """
        everyone = [np.ones(train[0].shape[0], dtype=bool)] * len(train)
        self._fit_state(val, Y)
        Zmeta = self.combine(train, everyone)
        Zval = self.combine(val, everyone) if self.resolved_validation() == "oof" else None
        fitted, scaler = meta.fit(Zmeta, Zval, Y, zscore=self.zscores(normalize))
        return Zmeta, fitted, scaler

    def _fit_state(self, val: list[np.ndarray], Y: np.ndarray) -> None:
        """What the policy learns from the validation blocks before the meta-classifier is trained (nothing)."""

    def kept_views(self, names: Sequence[str]) -> list[str]:
        """The names of the views the fitted policy reads (every view, except for :class:`Select`)."""
        return list(names)

    def block(self, Z: np.ndarray, normalize: bool) -> np.ndarray:
        """A view's block as the policy reads it when fitting (L2-normalised for the paper's policies with
        ``normalize``)."""
        if self.l2_blocks(normalize):
            return l2_normalize(Z)
        return np.asarray(Z, dtype=np.float32)

    def transform_block(self, Z: np.ndarray, normalize: bool) -> np.ndarray:
        """A view's block of new documents, as the fitted policy aggregates it."""
        return self.block(Z, normalize)

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        """The meta-classifier's input (float32) from the blocks of the views and the masks of their documents."""
        raise NotImplementedError


class Mean(Aggregation):
    """The paper's averaging: each document's meta-level input is the mean of the posteriors of the views that
    cover it (see the module docstring)."""

    name = "mean"
    paper = True

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        return _masked_mean(blocks, masks).astype(np.float32)


class Concat(Aggregation):
    """The paper's concatenation: the views side by side (every view must cover every document)."""

    name = "concat"
    reads_posteriors = False
    every_view = True

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        return np.hstack(blocks).astype(np.float32)
    paper = True


class Stack(Aggregation):
    """The posteriors of every view side by side, out-of-fold training posteriors by default."""

    name = "stack"
    default_train_posteriors = "cv"

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        mean = _masked_mean(blocks, masks)
        return np.hstack([np.where(m[:, None], Z, mean) for Z, m in zip(blocks, masks, strict=True)]
                         ).astype(np.float32)


class WMean(Aggregation):
    """A per-view, per-class weighted mean of the posteriors (weights by non-negative least squares on out-of-fold
    posteriors: :func:`fit_view_weights`).

    Attributes
    ----------
    weights_ : (weights, mean, scale)
        Arrays (n_views, n_classes), rows in the order of the estimator's views.
    """

    name = "wmean"
    default_train_posteriors = "cv"

    def _fit_state(self, val: list[np.ndarray], Y: np.ndarray) -> None:
        self.weights_ = fit_view_weights(val, Y)

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        W, mean, scale = self.weights_
        total = np.zeros_like(blocks[0], dtype=np.float64)
        wsum = np.zeros_like(total)
        for Z, m, w, mu, sd in zip(blocks, masks, W, mean, scale, strict=True):
            total[m] += (Z[m] - mu) / sd * w
            wsum[m] += w
        # a class whose available views all have zero weight for a document gets 0 (the training mean)
        return (total / np.where(wsum > 0, wsum, 1.0)).astype(np.float32)


class Select(Aggregation):
    """The mean of the posteriors of the views, normalised or raw, that validate best (the default policy).

    The candidates, their validation and the one-standard-error rule that keeps one of them are those of
    :func:`select_views`.

    Parameters
    ----------
    cv : int
        Folds of the validation of each candidate.
    score : {"f1", "macro-f1", "f1k"}
        What the candidates are compared by, on their validated predictions: the mean of macro-F1 and micro-F1
        (``"f1"``: a candidate may not buy macro-F1 with micro-F1), macro-F1 alone, or the mean of F1M, F1µ, KM
        and Kµ.
    average : {"language", "pooled"}
        How ``score`` is averaged over the training documents: per training language, then the mean over
        languages (``"language"``: as gFun is evaluated, each language's F1 counted once), or over all documents
        at once (``"pooled"``, which favours the views that do well on the languages with the most documents).
    forms : {"preferred", "both"}
        The forms (normalised, raw) that the sets of views between one view and all are tried in: the form all
        views validated better in, or both (more candidates: 3 more for 3 views, 10 for 4).
    train_posteriors, validation, zscore, block_l2
        As for every policy (:class:`Aggregation`); ``zscore`` and ``block_l2`` apply to the candidates that are
        not chosen raw.

    Attributes
    ----------
    selected_ : list of str
        The names of the kept views.
    l2_ : bool
        Whether the kept candidate is normalised (each block L2-normalised, the input z-scored) or raw.
    scores_ : dict of str to float
        The validated score of every candidate.
    """

    name = "select"

    def __init__(self, cv: int = 3, score: str = "f1", average: str = "language", train_posteriors: str = "auto",
                 validation: str = "auto", zscore: bool | None = None, block_l2: bool | None = None,
                 forms: str = "preferred") -> None:
        super().__init__(train_posteriors=train_posteriors, validation=validation, zscore=zscore, block_l2=block_l2)
        self.cv = cv
        self.score = score
        self.average = average
        self.forms = forms

    def fit(self, train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, meta: MetaTrainer, *,
            normalize: bool, names: Sequence[str] = (), langs: np.ndarray | None = None,
            heldout: Sequence[np.ndarray | None] = ()) -> tuple[np.ndarray, RBFSVMOvR, ZScore | None]:
        judged_on = judged_documents(names, heldout, len(Y), self.cv)
        chosen = select_views(train, val, Y, meta, cv=self.cv, score=self.score, average=self.average,
                              normalize=normalize, names=names, langs=langs, judged_on=judged_on,
                              forms=self.forms)
        self.selected_ = [names[i] for i in chosen.subset]
        self.l2_, self.scores_ = chosen.l2, chosen.scores
        return chosen.Zmeta, chosen.meta, chosen.scaler

    def kept_views(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if n in self.selected_]

    def transform_block(self, Z: np.ndarray, normalize: bool) -> np.ndarray:
        Z = self.block(Z, normalize)
        return l2_normalize(Z) if self.l2_ else Z

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        return _masked_mean(blocks, masks).astype(np.float32)


_POLICIES: dict[str, type[Aggregation]] = {cls.name: cls for cls in (Mean, Concat, Stack, WMean, Select)}


def make_aggregation(aggregation: str | Aggregation) -> Aggregation:
    """An unfitted policy: a new one for a name, a clone of a policy object.

    Raises
    ------
    ValueError
        On an unknown name or object.
    """
    if isinstance(aggregation, Aggregation):
        return clone(aggregation)
    if isinstance(aggregation, str) and aggregation in _POLICIES:
        return _POLICIES[aggregation]()
    raise ValueError(f"aggregation must be one of {AGGREGATIONS} or an Aggregation object, got {aggregation!r}")
