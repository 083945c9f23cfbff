"""The meta tier of Generalized Funnelling: the meta-classifier, and ``select``'s choice of its input.

* :class:`MetaTrainer` trains the meta-classifier (a clone of the estimator's ``meta`` template, one-vs-rest RBF
  SVMs) on a meta-level input, validated on its out-of-fold version when given;
* :func:`select_views` is the search of the :class:`~gfun.funnelling.aggregation.Select` policy: the views and the
  normalisation whose meta-classifier validates best;
* :func:`judged_documents` (the documents ``select`` judges its candidates on), :func:`unused_views` (the views
  ``select`` did not keep and no document can need) and :func:`anchor_probabilities` (Platt sigmoids through 0.5 at
  decision 0, so that ``predict_proba > 0.5`` is ``predict``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import clone

from gfun.funnelling.aggregation import aggregate
from gfun.funnelling.branch import Branch
from gfun.funnelling.view_spec import label
from gfun.metrics.measures import f1_from_counts
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.normalization import ZScore, l2_normalize

__all__ = ["SELECT_ALL_SUBSETS_UP_TO", "SELECT_AVERAGES", "SELECT_MIN_JUDGED", "SELECT_SCORES", "SELECT_TOL",
           "MetaTrainer", "Selection", "anchor_probabilities", "default_mapper", "default_meta", "judged_documents",
           "one_standard_error_choice", "select_views", "unused_views"]

logger = logging.getLogger("gfun.funnelling.generalized")

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
#: libsvm stopping tolerance of the cross-validation models with which ``aggregation="select"`` compares its
#: candidates (libsvm's default is 1e-3; the kept candidate is validated again and trained with it). A looser
#: tolerance makes the comparison markedly cheaper and moves the validated scores far less than the folds differ
#: from one another (the measurements are in docs/select.md).
SELECT_TOL = 0.1
#: ``select`` judges its candidates on the documents a neural view held out of its training only when there are at
#: least this many per cross-validation fold (else on all training documents, with a warning).
SELECT_MIN_JUDGED = 20


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


def default_meta() -> RBFSVMOvR:
    """The meta-classifier of ``meta=None``: RBF SVMs at C = 1 (the authors' setting), the decision threshold chosen
    by the policy's validation (``"auto"``)."""
    return RBFSVMOvR(C=1.0, threshold="auto")


def default_mapper() -> RBFSVMOvR:
    """The mappers of ``mapper=None``: calibrated RBF SVMs at C = 1 (the paper optimises C for the meta-classifier
    only), support vectors kept in float32."""
    return RBFSVMOvR(C=1.0, probability=True, support_dtype="float32")


class MetaTrainer:
    """Trains meta-classifiers: clones of a template, with the estimator's folds, seed and parallelism.

    Parameters
    ----------
    template : RBFSVMOvR
        The estimator's ``meta`` (unfitted). A ``threshold`` of ``"auto"`` becomes ``"validated"`` when the policy
        validates on out-of-fold inputs, else ``"zero"`` (the SVM's own, the paper's).
    validation : {"same", "oof"}
        The policy's resolved validation.
    groups : ndarray, optional
        Groups of training documents that cross-validation keeps in one fold.
    n_jobs, random_state, verbose
        Given to every meta-classifier.
    """

    def __init__(self, template: RBFSVMOvR, *, validation: str, groups: np.ndarray | None, n_jobs: int | None,
                 random_state: int | None, verbose: bool) -> None:
        self.template = template
        self.validation = validation
        self.groups = groups
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def fit(self, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int | None = None,
            final: bool = True) -> tuple[RBFSVMOvR, ZScore | None]:
        """A meta-classifier (and its input scaler) trained on ``Z``, validated on ``Zval`` if given.

        ``cv`` overrides the template's folds. ``final=False``: cross-validated only
        (:meth:`gfun.svm.kernel.RBFSVMOvR.validate`), no final models, as a candidate of ``select`` is compared:
        libsvm tolerance :data:`SELECT_TOL`, no Platt sigmoids.
        """
        scaler = ZScore.fit(Z) if zscore else None
        if scaler is not None:
            Z = scaler.transform(Z)
            Zval = scaler.transform(Zval) if Zval is not None else None
        meta = clone(self.template)
        params: dict[str, Any] = {"n_jobs": self.n_jobs, "random_state": self.random_state, "verbose": self.verbose}
        if cv is not None:
            params["cv"] = cv
        if meta.threshold == "auto":
            params["threshold"] = "validated" if self.validation == "oof" else "zero"
        meta.set_params(**params)
        if not final:
            meta.set_params(tol=SELECT_TOL, probability=False)
        (meta.fit if final else meta.validate)(Z, Y, X_val=Zval, groups=self.groups)
        return meta, scaler


def anchor_probabilities(meta: RBFSVMOvR, Y: np.ndarray) -> None:
    """Refit a fitted meta-classifier's Platt sigmoids through 0.5 at decision 0 (``B = 0``).

    :meth:`predict` thresholds the decision scores at 0 (the paper's rule); with free sigmoids a probability could
    fall on the other side of 0.5. Anchored, ``predict_proba > 0.5`` equals ``predict`` by construction; the
    predicted labels, hence every score, are unchanged.
    """
    if getattr(meta, "platt_A_", None) is None:
        return
    from gfun.svm.calibration import fit_platt

    oof = getattr(meta, "oof_decision_", None)
    if oof is not None:
        meta.platt_A_, meta.platt_B_ = fit_platt(oof, Y, fit_intercept=False)
    else:  # no held-out scores (too few documents): the logistic of the decision score
        meta.platt_A_, meta.platt_B_ = np.full(Y.shape[1], -1.0), np.zeros(Y.shape[1])


def judged_documents(branches: Sequence[Branch], n: int, cv: int) -> np.ndarray | None:
    """The training documents ``select`` judges its candidates on (a boolean mask), or ``None`` for all.

    A view that trains a network on the training documents gives them outputs far better than a new document's
    (a recurrent view's GRU can learn its training documents by heart), out-of-fold mappers or not; judged on
    them, such a view wins every comparison. A view that keeps a part of the training set out of its training
    (``heldout_idx_``, e.g. the early-stopping split of :class:`gfun.views.recurrent.RecurrentView`) is judged
    there: the documents every such view held out. With fewer than :data:`SELECT_MIN_JUDGED` of them per fold, all.
    """
    mask = None
    held = [(b.name, getattr(b.view, "heldout_idx_", None)) for b in branches]
    held = [(name, idx) for name, idx in held if idx is not None]
    for _, idx in held:
        own = np.zeros(n, dtype=bool)
        own[np.asarray(idx, dtype=np.int64)] = True
        mask = own if mask is None else mask & own
    if mask is None:
        return None
    names = label([name for name, _ in held]).upper()
    if mask.sum() < SELECT_MIN_JUDGED * cv:
        logger.warning("select: view(s) %s held out only %d training documents: the candidates are judged on all "
                       "%d (optimistic for %s)", names, int(mask.sum()), n, names)
        return None
    logger.info("select: candidates judged on the %d training documents view(s) %s did not train on",
                int(mask.sum()), names)
    return mask


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
                 judged_on: np.ndarray | None = None) -> Selection:
    """``select``: choose the meta-level input by the meta-classifier's validated F1.

    Candidates, each the mean of the posteriors of a set of views, with the paper's normalisation (L2 per
    view, z-scored columns) or without any (Funnelling's raw posteriors; only this form with
    ``normalize=False``): all views and each single view in both forms, then every other non-empty set of
    views when there are at most :data:`SELECT_ALL_SUBSETS_UP_TO` views (every set that leaves one view out
    beyond that) in the form all views validated better in. Single views are tried both ways because their
    better form can differ from that of all views (a posteriors view may be better raw while the views together
    are better normalised). Each candidate's meta-classifier is trained on the training inputs (``train``:
    in-sample, as the paper's) and cross-validated with ``cv`` folds (one split shared by every candidate) on the
    out-of-fold inputs (``val``); its per-class thresholds are chosen by the meta-classifier's ``threshold`` and
    validated cross-fitted (each fold judged with thresholds fitted on the others,
    :func:`gfun.svm.thresholds.validated_thresholds`). A candidate is scored by ``score`` of those predictions,
    per training language and averaged over the languages (``average="language"``, the way gFun is evaluated;
    ``langs`` gives each training document's language) or pooled over all documents (``"pooled"``), on the
    documents ``judged_on`` (a boolean mask, :func:`judged_documents`) or all. The kept candidate follows the
    one-standard-error rule (Breiman et al., 1984, :func:`one_standard_error_choice`): the fewest views whose
    score is within one standard error of the best candidate's, the best of those, so that a view must earn its
    place by more than the noise of the estimate. Candidates are compared at a coarse libsvm tolerance
    (:data:`SELECT_TOL`) without sigmoids; the kept one is validated again and trained at full precision.
    """
    from itertools import combinations

    from gfun.svm.linear import make_folds

    everyone = np.ones(train[0].shape[0], dtype=bool)
    Yb = np.asarray(Y, dtype=bool)
    folds = make_folds(len(Yb), cv, trainer.random_state, trainer.groups)  # the meta-classifier's
    score_of = _selection_score(score)
    if average not in SELECT_AVERAGES:
        raise ValueError(f"select average must be one of {SELECT_AVERAGES}, got {average!r}")
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

    def attempt(subset: tuple[int, ...], l2: bool) -> None:
        norm = l2_normalize if l2 else (lambda z: z)
        tr = aggregate("mean", [norm(train[i]) for i in subset], [everyone] * len(subset))
        va = aggregate("mean", [norm(val[i]) for i in subset], [everyone] * len(subset))
        meta, _ = trainer.fit(tr, va, Y, zscore=l2, cv=cv, final=False)
        if meta.validated_decision_ is None:  # too few documents to cross-validate
            value, per_fold = 0.0, np.zeros(len(folds))
        else:
            pred = meta.validated_decision_ > 0
            per_fold = np.array([judged(pred, te) for _, te in folds])
            value = judged(pred, everything)
        tried[label([names[i] for i in subset]) + ("" if l2 else " (raw)")] = value
        candidates.append((value, per_fold, subset, l2, tr, va))

    full = tuple(range(len(names)))
    forms = (True, False) if normalize else (False,)
    for l2 in forms:
        attempt(full, l2)
    preferred = max(candidates, key=lambda c: c[0])[3]  # the form all views validate better in
    if len(full) <= SELECT_ALL_SUBSETS_UP_TO:
        subsets = [c for size in range(len(full) - 1, 0, -1) for c in combinations(full, size)]
    else:
        subsets = [tuple(i for i in full if i != drop) for drop in full]
    for subset in subsets:  # single views both ways, the other sets in the preferred form
        for l2 in (forms if len(subset) == 1 else (preferred,)):
            attempt(subset, l2)
    best = candidates[one_standard_error_choice([c[0] for c in candidates], [c[1] for c in candidates],
                                                [len(c[2]) for c in candidates])]
    _, _, subset, l2, Zmeta, Zval = best
    # validated again at full precision, then its final models: the meta-classifier (thresholds and sigmoids
    # included) that a comparison at full precision would give when it keeps the same candidate
    meta, scaler = trainer.fit(Zmeta, Zval, Y, zscore=l2, cv=cv)
    kept = [names[i] for i in subset]
    if trainer.verbose:
        logger.info("select: validated %s %s; kept %s", score, {k: round(v, 4) for k, v in tried.items()},
                    label(kept) + ("" if l2 else " (raw)"))
    return Selection(list(subset), bool(l2), tried, Zmeta, meta, scaler)


def unused_views(branches: Sequence[Branch], selected: Sequence[str], languages: Sequence[str]) -> list[str]:
    """The views ``select`` did not keep that no document can ever need (they are dropped with their mappers).

    A view that ``select`` did not keep serves only the documents of languages no kept view covers. It can be
    dropped when that cannot happen: when a kept view serves any language (B; M with an encoder's word vectors),
    or when it serves only its training languages (X, W), which the kept views cover. An unselected M with word
    vectors for languages without training documents is kept when only X (or W) was: it is then the only way to
    serve them. Predictions are unchanged.
    """
    chosen = set(selected)
    kept = [b.view for b in branches if b.name in chosen]
    serves_any = any(v.language_reach() == "any" for v in kept)
    return [b.name for b in branches if b.name not in chosen and (serves_any or (
        b.view.language_reach() == "training"
        and all(any(k.covers(lang) for k in kept) for lang in languages)))]
