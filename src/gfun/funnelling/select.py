"""The ``select`` policy, whole: its parameters, its search over sets of views, the meta-classifiers it compares
and keeps, the documents it judges on, the views it lets the model drop, and its saved state.

:class:`Select` (the default policy) keeps the mean of the posteriors of the set of views, normalised or raw, whose
meta-classifier validates best (:func:`select_views`): every candidate is cross-validated (:func:`compare`) on the
documents the views did not train on (:func:`judged_documents`), the one-standard-error rule keeps one
(:func:`one_standard_error_choice`), whose meta-classifier is trained at full precision (:func:`keep`). The views
it did not keep that no document can need are dropped from the model (:func:`unused_views`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gfun.core.state import load_state, put_state
from gfun.funnelling.aggregation import Aggregation, mean_input
from gfun.funnelling.meta import MetaTrainer, UnseenLanguageMeta
from gfun.funnelling.view_spec import label
from gfun.metrics.measures import f1_from_counts
from gfun.views.normalization import ZScore, l2_normalize

if TYPE_CHECKING:
    from gfun.funnelling.branch import Branch
    from gfun.svm.kernel import RBFSVMOvR

__all__ = ["SELECT_ALL_SUBSETS_UP_TO", "SELECT_AVERAGES", "SELECT_FORMS", "SELECT_MIN_JUDGED", "SELECT_SCORES",
           "SELECT_SEARCHES", "SELECT_TOL", "SELECT_UNSEEN", "SELECT_UNSEEN_MARGIN", "Select", "Selection", "compare",
           "comparison_C", "judged_documents", "keep", "one_standard_error_choice", "select_views", "sets_to_try",
           "unseen_language_meta", "unused_views", "within_one_standard_error"]

logger = logging.getLogger("gfun.funnelling.generalized")

#: ``aggregation="select"`` searches the sets of views up to this many views (all views and single views both
#: normalised and raw); beyond, it tries all views and every set that leaves one out.
SELECT_ALL_SUBSETS_UP_TO = 4
#: How ``select`` searches the sets of views (:data:`SELECT_ALL_SUBSETS_UP_TO` views at most): from all views
#: downwards, trying a set only if a set one view larger that holds it validated within one standard error of the
#: best candidate (``"backward"``), or every non-empty set (``"exhaustive"``).
SELECT_SEARCHES: tuple[str, ...] = ("backward", "exhaustive")
#: What ``select_score`` can be: the mean of validated macro-F1 and micro-F1 (``"f1"``), macro-F1 alone
#: (``"macro-f1"``), or the mean of F1M, F1µ, KM and Kµ (``"f1k"``).
SELECT_SCORES: tuple[str, ...] = ("f1", "macro-f1", "f1k")
#: How ``aggregation="select"`` averages its score: over all training documents at once (``"pooled"``), or per
#: training language, then over languages (``"language"``: as gFun is evaluated,
#: :func:`gfun.metrics.evaluation.evaluate`).
SELECT_AVERAGES: tuple[str, ...] = ("pooled", "language")
#: ``select``'s forms of the sets of views between one view and all: the form all views validated better in, or both.
SELECT_FORMS: tuple[str, ...] = ("preferred", "both")
#: libsvm stopping tolerance of ``select``'s cross-validation of its candidates (libsvm's default is 1e-3): the kept
#: candidate's validation is its comparison's (its thresholds and sigmoids; with ``C="cv"``, its held-out decisions
#: at the comparison's C, the rest of the grid validated at this tolerance too), and only its final models are trained
#: at the meta-classifier's own ``tol``. The validated scores move by less than the folds differ from one another.
SELECT_TOL = 0.05
#: ``select`` judges its candidates on the documents a neural view held out of its training only when there are at
#: least this many per cross-validation fold (else on all training documents, with a warning).
SELECT_MIN_JUDGED = 20
#: What ``select``'s ``unseen`` can be: the one meta-classifier of all documents (``"shared"``), a meta-classifier of
#: their own for the documents of languages without training documents (``"own"``), or the one of the two that
#: classifies the training documents' language-out outputs better (``"auto"``).
SELECT_UNSEEN: tuple[str, ...] = ("auto", "shared", "own")
#: ``unseen="auto"`` keeps the own meta-classifier of unseen languages only when its language-out score beats the
#: shared one's by at least this many standard errors of their per-language differences (a paired t statistic of 2):
#: the shared meta-classifier, which needs nothing more, is kept unless the difference is clear.
SELECT_UNSEEN_MARGIN = 2.0


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
    search : {"backward", "exhaustive"}
        Which sets of views are tried: from all views downwards, a set only if a set one view larger that holds it
        validated within one standard error of the best candidate (``"backward"``: the rule keeps the smallest such
        set, and a set seldom validates better than every larger set it is part of), or every non-empty set
        (``"exhaustive"``). Beyond :data:`SELECT_ALL_SUBSETS_UP_TO` views both try all views and the sets that leave
        one out.
    unseen : {"auto", "shared", "own"}
        How the documents of languages without training documents are classified. Only the views that represent any
        language serve them (not X or W), so their input is the mean of fewer views than the kept candidate's:
        ``"shared"`` (the paper's), the kept candidate's meta-classifier reads their mean of fewer views; ``"own"``
        gives them a meta-classifier trained on the mean of those views (the kept ones that reach unseen languages;
        all such views of the model when no kept view does), in the kept candidate's form, with its class weights
        and validated thresholds (:func:`unseen_language_meta`); ``"auto"`` (the default) keeps the second only
        where it scores clearly better (by ``score``, per language, :data:`SELECT_UNSEEN_MARGIN` standard errors) on
        the training documents' language-out outputs: those views fitted again on half of the training languages
        (and translation groups) give the other half's documents the outputs of a language they never saw
        (:mod:`gfun.funnelling.language_out`; :meth:`choose_unseen`). The training languages' own out-of-fold
        outputs cannot decide it: ``"own"`` raised debtags' zero-shot micro-F1 and lowered every zero-shot measure
        of debtags-rare. ``"auto"`` judges nothing, and keeps the shared one, where those views include one that
        trains a network (B, R: not fitted again) or are all views that reach other languages only through shared
        words (P alone, as in gFun-XP: training languages that share words with each other flatter its language-out
        outputs; judged, it was kept in 5 of 10 runs of debtags and lowered the zero-shot macro-F1 by .014). For
        gFun-XPEF it chose the second meta-classifier in every run of debtags (zero-shot micro-F1 +.022, Kµ +.032)
        and in none of debtags-rare, where that one is .057 worse (RESULTS.md, "The meta-classifier of languages
        without training documents"). The documents of training languages are classified the same whatever the
        choice.
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
    fold_scores_ : dict of str to ndarray
        Every candidate's score on each fold (the folds are shared: the standard errors of the rule are those of
        the differences). Not saved with the model.
    unseen_ : UnseenLanguageMeta or None
        The meta-classifier of the documents of languages without training documents (``unseen="own"``, or
        ``"auto"`` when it won, and the views that serve them are not the kept ones).
    unseen_scores_ : dict of str to ndarray
        With ``unseen="auto"``, the language-out score of ``"shared"`` and ``"own"`` on each judged training language
        (empty when there was nothing to choose). Not saved with the model.
    """

    name = "select"

    def __init__(self, cv: int = 3, score: str = "f1", average: str = "language", train_posteriors: str = "auto",
                 validation: str = "auto", zscore: bool | None = None, block_l2: bool | None = None,
                 forms: str = "preferred", search: str = "backward", unseen: str = "auto") -> None:
        super().__init__(train_posteriors=train_posteriors, validation=validation, zscore=zscore, block_l2=block_l2)
        self.cv = cv
        self.score = score
        self.average = average
        self.forms = forms
        self.search = search
        self.unseen = unseen

    def check(self) -> None:
        super().check()
        if self.unseen not in SELECT_UNSEEN:
            raise ValueError(f"select unseen must be one of {SELECT_UNSEEN}, got {self.unseen!r}")

    def fit(self, train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, meta: MetaTrainer, *,
            normalize: bool, names: Sequence[str] = (), langs: np.ndarray | None = None,
            heldout: Sequence[np.ndarray | None] = (), beyond_training: Sequence[bool] = (),
            language_out: Sequence[str] = ()) -> tuple[np.ndarray, RBFSVMOvR, ZScore | None]:
        judged_on = judged_documents(names, heldout, len(Y), self.cv)
        reach = [i for i, beyond in enumerate(beyond_training) if beyond] if self.unseen != "shared" else []
        chosen = select_views(train, val, Y, meta, cv=self.cv, score=self.score, average=self.average,
                              normalize=normalize, names=names, langs=langs, judged_on=judged_on,
                              forms=self.forms, search=self.search, hold_within=reach)
        self.selected_ = [names[i] for i in chosen.subset]
        self.l2_, self.scores_, self.fold_scores_ = chosen.l2, chosen.scores, chosen.fold_scores
        self.unseen_scores_: dict[str, np.ndarray] = {}
        self.unseen_ = None
        if self.unseen == "own" or (self.unseen == "auto" and _judgeable(chosen, names, beyond_training,
                                                                           language_out)):
            self.unseen_ = unseen_language_meta(train, val, Y, meta, chosen, names, beyond_training, cv=self.cv)
        return chosen.Zmeta, chosen.meta, chosen.scaler

    def unseen_language_meta(self) -> UnseenLanguageMeta | None:
        return getattr(self, "unseen_", None)

    def language_out_views(self) -> list[str]:
        """The views whose language-out outputs :meth:`choose_unseen` needs (those of :attr:`unseen_` with
        ``unseen="auto"``; none otherwise)."""
        own = self.unseen_language_meta()
        return list(own.views) if self.unseen == "auto" and own is not None else []

    def choose_unseen(self, blocks: list[np.ndarray] | None, Y: np.ndarray, langs: np.ndarray, meta: RBFSVMOvR,
                      scaler: ZScore | None) -> None:
        """``unseen="auto"``: keep :attr:`unseen_` only if it classifies the judged training documents, given their
        language-out outputs, better than the kept candidate's meta-classifier does, by ``score`` per language and
        by at least :data:`SELECT_UNSEEN_MARGIN` standard errors of the per-language differences.

        Parameters
        ----------
        blocks : list of ndarray (n_judged, n_classes), or None
            The language-out outputs of the views of :meth:`language_out_views` (in that order), as the policy
            aggregates them (``transform_block``), for the judged documents. ``None`` (or no judged document): the
            model has none (a view that trains a network, a single training language), and the shared
            meta-classifier is kept.
        Y, langs : ndarray
            Their labels and languages.
        meta, scaler : RBFSVMOvR, ZScore or None
            The kept candidate's meta-classifier and the z-scoring of its input.
        """
        own = self.unseen_language_meta()
        if own is None:
            return
        if blocks is None or len(np.unique(langs)) < 2:
            self.unseen_ = None
            logger.info("select: languages without training documents get the shared meta-classifier (no "
                        "language-out outputs to judge another on)")
            return
        Z = mean_input(blocks, [np.ones(len(Y), dtype=bool)] * len(blocks))
        score_of = _selection_score(self.score)
        Yb = np.asarray(Y, dtype=bool)
        decisions = {"shared": meta.decision_function(scaler.transform(Z) if scaler is not None else Z),
                     "own": own.decision_function(Z)}
        for name, d in decisions.items():
            self.unseen_scores_[name] = np.array([score_of(d[langs == lang] > 0, Yb[langs == lang])
                                                  for lang in np.unique(langs)])
        diff = self.unseen_scores_["own"] - self.unseen_scores_["shared"]
        se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        if not diff.mean() > SELECT_UNSEEN_MARGIN * se:  # se >= 0: a tie keeps the shared one
            self.unseen_ = None
        logger.info("select: languages without training documents get %s (language-out %s: shared %.4f, own %.4f, "
                    "difference %+.4f, standard error %.4f)",
                    "their own meta-classifier" if self.unseen_ is not None else "the shared meta-classifier",
                    self.score, self.unseen_scores_["shared"].mean(), self.unseen_scores_["own"].mean(), diff.mean(),
                    se)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        meta: dict = {"selected_l2_": self.l2_}
        arrays: dict[str, np.ndarray] = {}
        if self.unseen_language_meta() is not None:
            meta["unseen_language_meta"] = put_state(self.unseen_, "unseen/", arrays)
        return meta, arrays

    @classmethod
    def from_state(cls, params: dict, meta: dict, arrays: dict[str, np.ndarray], *, kept: Sequence[str]) -> Select:
        policy = cls(**params)
        policy.selected_ = list(kept)
        policy.l2_ = bool(meta["selected_l2_"])
        policy.scores_, policy.fold_scores_ = {}, {}  # not saved
        entry = meta.get("unseen_language_meta")  # absent: saved with unseen="shared", or by an earlier gfun
        policy.unseen_ = None if entry is None else load_state(UnseenLanguageMeta, entry, arrays, "unseen/")
        return policy

    def kept_views(self, names: Sequence[str]) -> list[str]:
        return [n for n in names if n in self.selected_]

    def transform_block(self, Z: np.ndarray, normalize: bool) -> np.ndarray:
        Z = self.block(Z, normalize)
        return l2_normalize(Z) if self.l2_ else Z

    def combine(self, blocks: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        return mean_input(blocks, masks)


def comparison_C(template: RBFSVMOvR) -> float:
    """The C at which ``select`` compares its candidates: the meta-classifier's own, or with ``C="cv"`` the value of
    its grid nearest 1 (on a log scale; 1, gfun's default, in the paper's grid). C is then chosen by
    cross-validation over the whole grid for the kept candidate only."""
    if isinstance(template.C, str):
        return min(sorted(float(c) for c in template.C_grid), key=lambda c: abs(np.log(c)))
    return float(template.C)


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


def within_one_standard_error(scores: Sequence[float], per_fold: Sequence[np.ndarray]) -> list[int]:
    """The candidates whose score is within one standard error of the best one's (indices, in order).

    The standard error is that of the difference between the candidate's and the best one's per-fold scores (the
    candidates share the folds): the noise a fold puts into every candidate cancels.
    """
    scores = np.asarray(scores, dtype=float)
    top = int(np.argmax(scores))
    best = np.asarray(per_fold[top], dtype=float)
    near = []
    for i, folds in enumerate(per_fold):
        diff = best - np.asarray(folds, dtype=float)
        se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        if scores[i] >= scores[top] - se:
            near.append(i)
    return near


def one_standard_error_choice(scores: Sequence[float], per_fold: Sequence[np.ndarray], sizes: Sequence[int]) -> int:
    """The candidate ``select`` keeps: the one-standard-error rule (Breiman et al., 1984) on paired folds.

    Among the candidates whose score is within one standard error of the best one's
    (:func:`within_one_standard_error`), the smallest (fewest views), the best-scoring of those: only a view that
    adds nothing beyond the noise of the folds is left out.

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
    near = within_one_standard_error(scores, per_fold)
    return min(near, key=lambda i: (sizes[i], -float(scores[i])))


def _held(scores: Sequence[float], per_fold: Sequence[np.ndarray], sizes: Sequence[int]) -> set[int]:
    """The candidates so far whose validations ``select`` holds: the best-scoring one and the one the
    one-standard-error rule keeps (the arguments of :func:`one_standard_error_choice`)."""
    return {int(np.argmax(scores)), one_standard_error_choice(scores, per_fold, sizes)}


def sets_to_try(subsets: Sequence[tuple], size: int, near: Sequence[tuple], search: str) -> list[tuple]:
    """The sets of ``size`` views among ``subsets`` that ``select``'s ``search`` validates: all of them
    (``"exhaustive"``), or those a set one view larger among ``near`` (the candidates so far within one standard
    error of the best, :func:`within_one_standard_error`) holds (``"backward"``)."""
    level = [s for s in subsets if len(s) == size]
    if search == "exhaustive":
        return level
    larger = [set(n) for n in near if len(n) == size + 1]
    return [s for s in level if any(set(s) <= n for n in larger)]


@dataclass
class Selection:
    """What :func:`select_views` keeps: the views (indices), their form, every candidate's score (and per fold), the
    kept candidate's training input and its fitted meta-classifier and input scaler."""

    subset: list[int]
    l2: bool
    scores: dict[str, float]
    fold_scores: dict[str, np.ndarray]
    Zmeta: np.ndarray
    meta: RBFSVMOvR
    scaler: ZScore | None
    held: dict[tuple[tuple[int, ...], bool], RBFSVMOvR] = field(default_factory=dict)


def select_views(train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, trainer: MetaTrainer, *, cv: int,
                 score: str, average: str, normalize: bool, names: Sequence[str], langs: np.ndarray | None = None,
                 judged_on: np.ndarray | None = None, forms: str = "preferred", search: str = "backward",
                 hold_within: Sequence[int] = ()) -> Selection:
    """``select``: choose the meta-level input by the meta-classifier's validated F1.

    Candidates, each the mean of the posteriors of a set of views, with the paper's normalisation (L2 per view,
    z-scored columns) or without any (Funnelling's raw posteriors; only this form with ``normalize=False``): all
    views and each single view in both forms, then the other non-empty sets of views when there are at most
    :data:`SELECT_ALL_SUBSETS_UP_TO` views (every set that leaves one view out beyond that) in the form all views
    validated better in (``forms="preferred"``) or in both (``"both"``). The sets are tried from the largest
    down; with ``search="backward"`` a set is tried only if a set one view larger that holds it validated within one
    standard error of the best candidate so far (:func:`within_one_standard_error`): the rule below keeps the
    smallest such set, and a set seldom validates better than every larger set it is part of
    (``search="exhaustive"`` tries every set). Single views are tried both ways because
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
    more than the noise of the estimate. Candidates are compared at one C (:func:`comparison_C`) without sigmoids,
    at libsvm tolerance :data:`SELECT_TOL`, and the kept candidate's validation is its comparison's (:func:`keep`).
    The validations of the best candidate so far and of the one the rule keeps so far are held, the others
    released (memory for two, however many candidates); a kept candidate whose validation was released is
    validated again, to the same numbers. With ``C="cv"``, C is chosen per class for the kept candidate only
    (:func:`keep`). The final models are trained at the meta-classifier's own tolerance. The validations of the
    candidates made of views of ``hold_within`` only are held too (:attr:`Selection.held`, by set and form), for
    :func:`unseen_language_meta`.
    """
    from itertools import combinations

    from gfun.svm.linear import make_folds

    everyone = np.ones(train[0].shape[0], dtype=bool)
    Yb = np.asarray(Y, dtype=bool)
    within = set(hold_within)
    kept_for_unseen: dict[tuple[tuple[int, ...], bool], RBFSVMOvR] = {}
    folds = make_folds(len(Yb), cv, trainer.random_state, trainer.groups)  # the meta-classifier's
    score_of = _selection_score(score)
    if average not in SELECT_AVERAGES:
        raise ValueError(f"select average must be one of {SELECT_AVERAGES}, got {average!r}")
    if forms not in SELECT_FORMS:
        raise ValueError(f"select forms must be one of {SELECT_FORMS}, got {forms!r}")
    if search not in SELECT_SEARCHES:
        raise ValueError(f"select search must be one of {SELECT_SEARCHES}, got {search!r}")
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
    candidates: list[list] = []
    tried: dict[str, float] = {}
    per_fold_of: dict[str, np.ndarray] = {}
    full = tuple(range(len(names)))
    if len(full) <= SELECT_ALL_SUBSETS_UP_TO:
        subsets = [c for size in range(len(full) - 1, 0, -1) for c in combinations(full, size)]
    else:
        subsets = [tuple(i for i in full if i != drop) for drop in full]
    form_list = (True, False) if normalize else (False,)

    def both_forms(subset: tuple[int, ...]) -> bool:  # single views always; the other sets with forms="both"
        return len(subset) == 1 or forms == "both"

    def attempt(subset: tuple[int, ...], l2: bool) -> None:
        norm = l2_normalize if l2 else (lambda z: z)
        tr = mean_input([norm(train[i]) for i in subset], [everyone] * len(subset))
        va = mean_input([norm(val[i]) for i in subset], [everyone] * len(subset))
        meta = compare(trainer, tr, va, Y, zscore=l2, cv=cv)
        if meta.validated_decision_ is None:  # too few documents to cross-validate
            value, per_fold = 0.0, np.zeros(len(folds))
        else:
            pred = meta.validated_decision_ > 0
            per_fold = np.array([judged(pred, te) for _, te in folds])
            value = judged(pred, everything)
        name = label([names[i] for i in subset]) + ("" if l2 else " (raw)")
        tried[name], per_fold_of[name] = value, per_fold
        candidates.append([value, per_fold, subset, l2, tr, va, meta])
        held = _held([c[0] for c in candidates], [c[1] for c in candidates], [len(c[2]) for c in candidates])
        if meta.validated_decision_ is not None and set(subset) <= within:
            kept_for_unseen[(tuple(subset), bool(l2))] = meta
        for i, candidate in enumerate(candidates):
            if i not in held:
                candidate[6] = None  # released

    def choice() -> int:
        return one_standard_error_choice([c[0] for c in candidates], [c[1] for c in candidates],
                                         [len(c[2]) for c in candidates])

    for l2 in form_list:
        attempt(full, l2)
    preferred = max(candidates, key=lambda c: c[0])[3]  # the form all views validate better in
    for size in sorted({len(s) for s in subsets}, reverse=True):
        near = [candidates[i][2] for i in within_one_standard_error([c[0] for c in candidates],
                                                                    [c[1] for c in candidates])]
        for subset in sets_to_try(subsets, size, near, search):
            for l2 in (form_list if both_forms(subset) else (preferred,)):
                attempt(subset, l2)
    _, _, subset, l2, Zmeta, Zval, compared = candidates[choice()]
    if compared is None:  # released: the same validation again
        compared = compare(trainer, Zmeta, Zval, Y, zscore=l2, cv=cv)
    meta, scaler = keep(trainer, Zmeta, Zval, Y, zscore=l2, cv=cv, compared=compared)
    kept = [names[i] for i in subset]
    if trainer.verbose:
        logger.info("select: validated %s %s; kept %s", score, {k: round(v, 4) for k, v in tried.items()},
                    label(kept) + ("" if l2 else " (raw)"))
    return Selection(list(subset), bool(l2), tried, per_fold_of, Zmeta, meta, scaler, kept_for_unseen)


def unseen_language_meta(train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray, trainer: MetaTrainer,
                         chosen: Selection, names: Sequence[str], beyond_training: Sequence[bool], *, cv: int
                         ) -> UnseenLanguageMeta | None:
    """The meta-classifier of the documents of languages without training documents (``unseen="own"``).

    It reads the mean of the views that serve such documents: the kept views that represent languages beyond their
    training ones (``beyond_training``), or, when no kept view does, every such view of the model (those a document
    of an unseen language then gets). It is trained and validated as the kept candidate's meta-classifier is
    (:func:`compare`, :func:`keep`), on the same training documents, in the kept candidate's form (the search's
    validation of that set, when it tried it: :attr:`Selection.held`). ``None`` when those views are the kept ones
    (the kept candidate's meta-classifier already reads them) or there are none.
    """
    views = unseen_views(chosen.subset, beyond_training, len(names))
    if not views or views == list(chosen.subset):
        return None
    everyone = [np.ones(train[0].shape[0], dtype=bool)] * len(views)
    norm = l2_normalize if chosen.l2 else (lambda z: z)
    Z = mean_input([norm(train[i]) for i in views], everyone)
    Zval = mean_input([norm(val[i]) for i in views], everyone)
    compared = chosen.held.get((tuple(views), bool(chosen.l2)))
    if compared is None:
        compared = compare(trainer, Z, Zval, Y, zscore=chosen.l2, cv=cv)
    meta, scaler = keep(trainer, Z, Zval, Y, zscore=chosen.l2, cv=cv, compared=compared)
    kept = [names[i] for i in views]
    if trainer.verbose:
        logger.info("select: languages without training documents get a meta-classifier of %s", label(kept).upper())
    return UnseenLanguageMeta(kept, meta, scaler, np.asarray(Z, dtype=np.float64).mean(axis=0))


def unseen_views(kept: Sequence[int], beyond_training: Sequence[bool], n_views: int) -> list[int]:
    """The views that serve the documents of languages without training documents: the kept ones that represent
    languages beyond their training ones, or, when no kept view does, every such view of the model."""
    reach = list(beyond_training) or [False] * n_views
    return [i for i in kept if reach[i]] or [i for i in range(n_views) if reach[i]]


def _judgeable(chosen: Selection, names: Sequence[str], beyond_training: Sequence[bool],
               language_out: Sequence[str]) -> bool:
    """Whether ``unseen="auto"`` can judge a meta-classifier of the views that serve languages without training
    documents on their language-out outputs: not when one of them trains a network (never fitted again), nor when
    all of them reach other languages only through shared words (their language-out outputs flatter them: gFun-XP's
    P alone was chosen in 5 of 10 runs of debtags and lowered its zero-shot macro-F1 by .014); an empty
    ``language_out`` judges every view."""
    views = unseen_views(chosen.subset, beyond_training, len(names))
    if not views or views == list(chosen.subset):
        return True  # nothing to judge: unseen_language_meta gives None
    kinds = [language_out[i] if language_out else "refit" for i in views]
    if "network" in kinds or all(kind == "vocabulary" for kind in kinds):
        logger.info("select: languages without training documents get the shared meta-classifier (%s %s)",
                    label([names[i] for i in views]).upper(),
                    "trains a network, not fitted again for language-out outputs" if "network" in kinds
                    else "reaches other languages only through shared words")
        return False
    return True


def judged_documents(names: Sequence[str], heldout: Sequence[np.ndarray | None], n: int, cv: int,
                     ) -> np.ndarray | None:
    """The training documents ``select`` judges its candidates on (a boolean mask), or ``None`` for all.

    A view that trains a network on the training documents gives them outputs far better than a new document's
    (a recurrent view's GRU can learn its training documents by heart), out-of-fold mappers or not; judged on
    them, such a view wins every comparison. A view that keeps a part of the training set out of its training
    (``heldout_idx_``, e.g. the early-stopping split of :class:`gfun.views.recurrent.RecurrentView`) is judged
    there: the documents every such view held out. With fewer than :data:`SELECT_MIN_JUDGED` of them per fold, all.
    """
    mask = None
    held = [(name, idx) for name, idx in zip(names, heldout, strict=False) if idx is not None]
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


def compare(trainer: MetaTrainer, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool,
            cv: int) -> RBFSVMOvR:
    """The cross-validation of a candidate of ``select`` by a clone of ``trainer``'s template
    (:meth:`gfun.svm.kernel.RBFSVMOvR.validate`: no final models, no sigmoids) at :func:`comparison_C` and
    :data:`SELECT_TOL`; the kept candidate's validation is this one (:func:`keep`)."""
    _, Z, Zval = trainer.scaled(Z, Zval, zscore)
    meta = trainer.clone(cv, C=comparison_C(trainer.template), probability=False, tol=SELECT_TOL)
    return meta.validate(Z, Y, X_val=Zval, groups=trainer.groups)

def keep(trainer: MetaTrainer, Z: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, *, zscore: bool, cv: int,
         compared: RBFSVMOvR) -> tuple[RBFSVMOvR, ZScore | None]:
    """The meta-classifier (and its input scaler) of the candidate ``select`` keeps, trained at the template's
    ``tol``.

    ``compared``: the candidate's :func:`compare`. Its validation is the model's at a fixed C; with ``C="cv"`` the
    kept candidate is validated over the template's grid at :data:`SELECT_TOL`, ``compared``'s held-out decisions
    standing for :func:`comparison_C`.
    """
    scaler, Z, Zval = trainer.scaled(Z, Zval, zscore)
    reusable = compared.oof_decision_ is not None  # None: too few documents to validate
    if reusable and not isinstance(trainer.template.C, str):
        meta = compared.set_params(probability=trainer.template.probability).calibrate(Y)
    else:
        meta = trainer.clone(cv, tol=SELECT_TOL)
        meta.validate(Z, Y, X_val=Zval, groups=trainer.groups, known=compared if reusable else None)
    meta.set_params(tol=trainer.template.tol)
    return meta.finish(Z, Y), scaler


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
