"""The meta tier of Generalized Funnelling: the meta-classifier, and ``aggregation="select"``'s choice of its input.

:class:`MetaTierMixin` is mixed into :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`: it trains the
meta-classifier (:meth:`~MetaTierMixin._fit_meta`), chooses the views and normalisation ``select`` keeps by
validated F1 (:meth:`~MetaTierMixin._fit_select`), drops the views no document can need, and anchors the
Platt sigmoids so that ``predict_proba > 0.5`` is ``predict``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np

from gfun.funnelling.aggregation import aggregate
from gfun.funnelling.view_spec import label
from gfun.metrics.measures import f1_from_counts
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.normalization import ZScore, l2_normalize

__all__ = ["SELECT_ALL_SUBSETS_UP_TO", "SELECT_AVERAGES", "SELECT_MIN_JUDGED", "SELECT_SCORES", "SELECT_TOL",
           "MetaTierMixin", "one_standard_error_choice"]

logger = logging.getLogger("gfun.funnelling.generalized")

#: ``aggregation="select"`` tries every non-empty set of views up to this many views (2^m - 1 sets; all views
#: and single views both normalised and raw); beyond, all views and every set that leaves one out.
SELECT_ALL_SUBSETS_UP_TO = 4
#: What ``select_score`` can be: the mean of validated macro-F1 and micro-F1 (``"f1"``), macro-F1 alone
#: (``"macro-f1"``), or the mean of F1M, F1µ, KM and Kµ (``"f1k"``).
SELECT_SCORES: tuple[str, ...] = ("f1", "macro-f1", "f1k")
#: How ``aggregation="select"`` averages its score: over all training documents at once (``"pooled"``), or per
#: training language, then over languages (``"language"``: as gFun is evaluated, :func:`gfun.metrics.evaluation.evaluate`).
SELECT_AVERAGES: tuple[str, ...] = ("pooled", "language")
#: libsvm stopping tolerance of the cross-validation models with which ``aggregation="select"`` compares its
#: candidates (libsvm's default is 1e-3; the kept candidate is validated again and trained with it). On debtags run
#: 0 (6,491 documents, 73 classes, 11 candidates) it takes the comparison from 28.6 s to 17.3 s (20.5 s with the
#: kept candidate's second validation) and moves the validated scores by at most .0015, against differences of
#: about .01 between the folds.
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


class MetaTierMixin:
    """The meta-classifier of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` (its parameters ``meta_*``,
    ``select_*``, ``aggregation``, ``normalize``; and ``_seed()``, ``groups_``, ``branches_``)."""

    aggregation: str
    normalize: bool
    meta_validation: str
    meta_threshold: str
    meta_zscore: bool | None
    select_score: str
    select_average: str
    groups_: np.ndarray | None

    def _meta_validation(self) -> str:
        """``meta_validation`` resolved: ``"auto"`` is ``"same"`` for the paper's policies, else ``"oof"``."""
        if self.meta_validation == "auto":
            return "same" if self.aggregation in ("mean", "concat") else "oof"
        return self.meta_validation

    def _meta_threshold(self) -> str:
        """``meta_threshold`` resolved: ``"auto"`` is ``"validated"`` when validating on out-of-fold inputs."""
        if self.meta_threshold == "auto":
            return "validated" if self._meta_validation() == "oof" else "zero"
        return self.meta_threshold

    def _zscore_meta(self) -> bool:
        """Whether the meta-classifier's input is z-scored (``meta_zscore``; ``None`` follows ``normalize``)."""
        return self.normalize if self.meta_zscore is None else bool(self.meta_zscore)

    def _anchor_probabilities(self, Y: np.ndarray) -> None:
        """Refit the meta-classifier's Platt sigmoids through 0.5 at decision 0 (``B = 0``).

        :meth:`predict` thresholds the decision scores at 0 (the paper's rule); with free sigmoids a
        probability could fall on the other side of 0.5 (152 of 22,500 document-class pairs of gFun-X on
        the demo). Anchored, ``predict_proba > 0.5`` equals :meth:`predict` by construction; the
        predicted labels, hence every score, are unchanged.
        """
        meta = self.meta_
        if getattr(meta, "platt_A_", None) is None:
            return
        from gfun.svm.calibration import fit_platt

        oof = getattr(meta, "oof_decision_", None)
        if oof is not None:
            meta.platt_A_, meta.platt_B_ = fit_platt(oof, Y, fit_intercept=False)
        else:  # no held-out scores (too few documents): the logistic of the decision score
            meta.platt_A_, meta.platt_B_ = np.full(Y.shape[1], -1.0), np.zeros(Y.shape[1])

    def _fit_meta(self, Zmeta: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, zscore: bool,
                  cv: int, final: bool = True) -> tuple[RBFSVMOvR, ZScore | None]:
        """The meta-classifier (and its input scaler) trained on ``Zmeta``, validated on ``Zval`` if given.

        ``final=False``: cross-validated only (:meth:`gfun.svm.kernel.RBFSVMOvR.validate`), no final models, as a
        candidate of ``select`` is compared: libsvm tolerance :data:`SELECT_TOL`, no Platt sigmoids.
        """
        scaler = ZScore.fit(Zmeta) if zscore else None
        if scaler is not None:
            Zmeta = scaler.transform(Zmeta)
            Zval = scaler.transform(Zval) if Zval is not None else None
        meta = RBFSVMOvR(C=self.meta_C, C_grid=self.meta_C_grid, C_selection=self.meta_C_selection, cv=cv,
                         gamma=self.gamma, probability=self.probability, class_weight=self.meta_class_weight,
                         threshold=self._meta_threshold(), approximation=self.kernel_approximation,
                         n_components=self.n_components, max_memory=self.max_memory, n_jobs=self.n_jobs,
                         random_state=self._seed(), verbose=self.verbose)
        if not final:
            meta.set_params(tol=SELECT_TOL, probability=False)
        (meta.fit if final else meta.validate)(Zmeta, Y, X_val=Zval, groups=self.groups_)
        return meta, scaler

    def _judged_documents(self, n: int) -> np.ndarray | None:
        """The training documents ``select`` judges its candidates on (a boolean mask), or ``None`` for all.

        A view that trains a network on the training documents gives them outputs far better than a new
        document's (the recurrent view's GRU: held-out macro-F1 .29, its training loss near 0), out-of-fold
        mappers or not; judged on them, such a view wins every comparison. A view that keeps a part of the training
        set out of its training (``heldout_idx_``, the recurrent view's early-stopping split) is judged there: the
        documents every such view held out. With fewer than :data:`SELECT_MIN_JUDGED` of them (per fold), all.
        """
        mask = None
        held = [(b.name, getattr(b.view, "heldout_idx_", None)) for b in self.branches_]
        held = [(name, idx) for name, idx in held if idx is not None]
        for _, idx in held:
            own = np.zeros(n, dtype=bool)
            own[np.asarray(idx, dtype=np.int64)] = True
            mask = own if mask is None else mask & own
        if mask is None:
            return None
        names = label([name for name, _ in held]).upper()
        if mask.sum() < SELECT_MIN_JUDGED * self.select_cv:
            logger.warning("select: view(s) %s held out only %d training documents: the candidates are judged on all "
                           "%d (optimistic for %s)", names, int(mask.sum()), n, names)
            return None
        logger.info("select: candidates judged on the %d training documents view(s) %s did not train on",
                    int(mask.sum()), names)
        return mask

    def _fit_select(self, train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray,
                    langs: np.ndarray | None = None, judged_on: np.ndarray | None = None) -> np.ndarray:
        """``aggregation="select"``: choose the meta-level input by the meta-classifier's validated F1.

        Candidates, each the mean of the posteriors of a set of views, with the paper's normalisation (L2 per
        view, z-scored columns) or without any (Funnelling's raw posteriors; only this form with
        ``normalize=False``): all views and each single view in both forms, then every other non-empty set of
        views when there are at most :data:`SELECT_ALL_SUBSETS_UP_TO` views (every set that leaves one view out
        beyond that) in the form all views validated better in. Single views are tried both ways because their
        better form can differ from that of all views: on EXCEPTIUS X is better raw and X + M + W normalised,
        and the form of all views, forced on X, cost gFun-XMW .04 micro-K against gFun-X. Each candidate's
        meta-classifier is trained on the training inputs (``train``: in-sample, as the paper's) and
        cross-validated with ``select_cv`` folds (one split shared by every candidate) on the out-of-fold
        inputs (``val``); its per-class thresholds are chosen by
        ``meta_threshold`` and validated cross-fitted (each fold judged with thresholds fitted on the others,
        :func:`gfun.svm.thresholds.validated_thresholds`). A candidate is scored by ``select_score`` of those
        predictions, per training language and averaged over the languages (``select_average="language"``, the
        way gFun is evaluated; ``langs`` gives each training document's language) or pooled over all documents
        (``"pooled"``), on the documents ``judged_on`` (a boolean mask, :meth:`_judged_documents`) or all. The kept
        candidate follows the one-standard-error rule (Breiman et al., 1984): the fewest
        views whose score is within one standard error of the best candidate's, the best of those, so that a view
        must earn its place by more than the noise of the estimate; the error is that of the paired difference
        of the two candidates' scores over the folds, which leaves out the noise the folds put into both. Only
        the kept candidate's final models are trained (the others stop after cross-validation). Returns the kept
        meta-classifier's training input.
        """
        from itertools import combinations

        from gfun.svm.linear import make_folds

        letters = self.view_names_
        everyone = np.ones(train[0].shape[0], dtype=bool)
        Yb = np.asarray(Y, dtype=bool)
        folds = make_folds(len(Yb), self.select_cv, self._seed(), self.groups_)  # the meta-classifier's
        score_of = _selection_score(self.select_score)
        if self.select_average not in SELECT_AVERAGES:
            raise ValueError(f"select_average must be one of {SELECT_AVERAGES}, got {self.select_average!r}")
        by_language = self.select_average == "language" and langs is not None
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
            meta, _ = self._fit_meta(tr, va, Y, l2, self.select_cv, final=False)
            if meta.validated_decision_ is None:  # too few documents to cross-validate
                score, per_fold = 0.0, np.zeros(len(folds))
            else:
                pred = meta.validated_decision_ > 0
                per_fold = np.array([judged(pred, te) for _, te in folds])
                score = judged(pred, everything)
            tried[label([letters[i] for i in subset]) + ("" if l2 else " (raw)")] = score
            candidates.append((score, per_fold, subset, l2, tr, va))

        full = tuple(range(len(letters)))
        forms = (True, False) if self.normalize else (False,)
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
        self.meta_, self.scaler_ = self._fit_meta(Zmeta, Zval, Y, l2, self.select_cv)
        self.selected_views_ = [letters[i] for i in subset]
        self.selected_l2_ = bool(l2)
        self.selection_scores_ = tried
        if self.verbose:
            logger.info("select: validated %s %s; kept %s", self.select_score,
                        {k: round(v, 4) for k, v in tried.items()},
                        label(self.selected_views_) + ("" if l2 else " (raw)"))
        return Zmeta

    def _drop_unused_views(self) -> None:
        """``select``: drop the views it did not keep that no document can ever need (with their mappers).

        :meth:`transform` gives a view that ``select`` did not keep only the documents of languages no kept
        view covers. Such a view is dropped when that cannot happen: when a kept view serves any language
        (B; M with an encoder's word vectors), or when it serves only its training languages (X, W), which
        the kept views cover. An unselected M with word vectors for languages without training documents is
        kept when only X (or W) was: it is then the only way to serve them. Predictions are unchanged.
        """
        selected = set(self.selected_views_)
        kept = [b.view for b in self.branches_ if b.name in selected]
        serves_any = any(v.language_reach() == "any" for v in kept)
        dropped = [b.name for b in self.branches_ if b.name not in selected and (serves_any or (
            b.view.language_reach() == "training"
            and all(any(k.covers(lang) for k in kept) for lang in self.languages_)))]
        if not dropped:
            return
        self.branches_ = [b for b in self.branches_ if b.name not in dropped]
        self.views_ = [b.view for b in self.branches_]
        self.dropped_views_ = dropped
        logger.info("select: dropped view(s) %s from the model (not kept, and every language they serve is "
                    "served by %s)", label(dropped).upper(), label(self.selected_views_).upper())

