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
* :class:`~gfun.funnelling.select.Select` (the default, in its own module with its search): the mean of the
  posteriors of the subset of views, normalised or raw, that the meta-classifier validates best on out-of-fold
  inputs.

A policy is fitted by :meth:`Aggregation.fit`, which also trains the meta-classifier through a
:class:`~gfun.funnelling.meta.MetaTrainer` (``select`` needs it to compare its candidates; the others train it
once on their aggregated input), and saves and restores its own fitted state (:meth:`Aggregation.get_state`,
:meth:`Aggregation.from_state`). :mod:`gfun.funnelling.policies` finds a policy by name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from gfun.funnelling.meta import MetaTrainer, UnseenLanguageMeta
from gfun.views.normalization import ZScore, l2_normalize

if TYPE_CHECKING:
    from gfun.svm.kernel import RBFSVMOvR

__all__ = ["Aggregation", "Concat", "Mean", "Stack", "ViewBlocks", "WMean", "fallback_input", "fit_view_weights",
           "mean_input"]

def _masked_mean(blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    total = np.zeros_like(blocks[0], dtype=np.float64)
    count = np.zeros((blocks[0].shape[0], 1))
    for Z, m in zip(blocks, masks, strict=True):
        total[m] += Z[m]
        count[m, 0] += 1
    return total / np.maximum(count, 1)


def mean_input(blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
    """The average of the blocks that cover each document (float32): the input of ``mean`` and ``select``."""
    return _masked_mean(blocks, masks).astype(np.float32)


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
    langs : ndarray of str (n_docs,)
        Each document's language.
    """

    fallback: np.ndarray
    langs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))
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
    #: Whether the views' blocks stand side by side in the input (an absent view's block is then replaced, where the
    #: averaging policies leave it out of the average).
    side_by_side: ClassVar[bool] = False

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
            heldout: Sequence[np.ndarray | None] = (), beyond_training: Sequence[bool] = (),
            language_out: Sequence[str] = ()) -> tuple[np.ndarray, RBFSVMOvR, ZScore | None]:
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
        beyond_training : sequence of bool
            For each view, whether it represents languages beyond its training languages (its
            :meth:`~gfun.views.base.ViewGenerator.language_reach` is not ``"training"``): :class:`Select` trains the
            meta-classifier of languages without training documents on those.
        language_out : sequence of str
            For each view, what its language-out outputs would be
            (:func:`~gfun.funnelling.language_out.language_out_kind`): ``"refit"``
            (fitted again on half the languages), ``"network"`` (it trains a network: never fitted again) or
            ``"vocabulary"`` (refittable, but it reaches other languages only through shared words).
            :class:`Select`'s ``unseen="auto"`` reads it.

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
        """The names of the views the fitted policy reads (every view, except for ``select``)."""
        return list(names)

    def unseen_language_meta(self) -> UnseenLanguageMeta | None:
        """The meta-classifier of the documents of languages without training documents, when the fitted policy has
        one of its own (``select``'s ``unseen="own"``); ``None``: the one meta-classifier serves them."""
        return None

    def language_out_views(self) -> list[str]:
        """The views whose language-out outputs the fitted policy needs to finish its fit (:meth:`choose_unseen`;
        none by default)."""
        return []

    def choose_unseen(self, blocks: list[np.ndarray] | None, Y: np.ndarray, langs: np.ndarray, meta: RBFSVMOvR,
                      scaler: ZScore | None) -> None:
        """Choose how the documents of languages without training documents are classified, from the language-out
        outputs of :meth:`language_out_views` (see :meth:`gfun.funnelling.select.Select.choose_unseen`)."""

    # ------------------------------------------------------------------ saved state
    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """The fitted state beyond the parameters, as entries of the model's saved metadata and named arrays of the
        model (nothing by default)."""
        return {}, {}

    @classmethod
    def from_state(cls, params: dict, meta: dict, arrays: dict[str, np.ndarray], *, kept: Sequence[str]
                   ) -> Aggregation:
        """The fitted policy of parameters ``params`` from what :meth:`get_state` saved in the model's metadata
        (``meta``) and arrays; ``kept``: the views the saved model's meta-classifier reads."""
        return cls(**params)

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
        return mean_input(blocks, masks)


class Concat(Aggregation):
    """The paper's concatenation: the views side by side (every view must cover every document)."""

    name = "concat"
    reads_posteriors = False
    every_view = True
    paper = True
    side_by_side = True

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        return np.hstack(blocks).astype(np.float32)


class Stack(Aggregation):
    """The posteriors of every view side by side, out-of-fold training posteriors by default."""

    name = "stack"
    default_train_posteriors = "cv"
    side_by_side = True

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
    _STATE: ClassVar[tuple[str, ...]] = ("weights", "mean", "scale")

    def _fit_state(self, val: list[np.ndarray], Y: np.ndarray) -> None:
        self.weights_ = fit_view_weights(val, Y)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        return {}, {f"view_weights/{k}": a for k, a in zip(self._STATE, self.weights_, strict=True)}

    @classmethod
    def from_state(cls, params: dict, meta: dict, arrays: dict[str, np.ndarray], *, kept: Sequence[str]) -> WMean:
        policy = cls(**params)
        policy.weights_ = tuple(arrays[f"view_weights/{k}"] for k in cls._STATE)
        return policy

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        W, mean, scale = self.weights_
        total = np.zeros_like(blocks[0], dtype=np.float64)
        wsum = np.zeros_like(total)
        for Z, m, w, mu, sd in zip(blocks, masks, W, mean, scale, strict=True):
            total[m] += (Z[m] - mu) / sd * w
            wsum[m] += w
        # a class whose available views all have zero weight for a document gets 0 (the training mean)
        return (total / np.where(wsum > 0, wsum, 1.0)).astype(np.float32)
