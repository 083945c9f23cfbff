"""Generalized Funnelling: view-generating functions -> normalise -> aggregate -> meta-classifier.

Tier 1 fits every view-generating function (VGF) on the training documents of all languages.
Tier 2 normalises the views (L2 per view, z-score per column with training statistics),
aggregates them (``concat``: juxtaposition; ``mean``: each non-posterior view is mapped to |Y|
calibrated posteriors by one RBF SVM trained on all languages, then the available views of
each document are averaged; ``stack``, ``wmean`` and ``select``: learned on training data, see
:mod:`gfun.funnelling.aggregation`) and trains the meta-classifier (one-vs-rest RBF SVMs) on the documents of
all languages at once.

The default, ``select``, trains the meta-classifier on the in-sample first-tier posteriors as the paper
does, but validates it on their out-of-fold version (what new documents look like): it keeps, by the
validated mean of macro- and micro-F1, the view set (any non-empty subset, a single view included) and the
normalisation that work on the data at hand (a view must beat the noise of the estimate to stay), and moves
a class's decision threshold off the SVM's own only where cross-fitted validation says it pays. ``mean``
and ``concat`` are the paper's policies, unchanged.

Fun, the 2019 method, is the same estimator with the Posteriors view only and no
normalisation (see :func:`gfun.baselines.naive.make_fun`).
"""

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from gfun.corpus.inputs import check_C, document_groups, training_data, unpack
from gfun.errors import UnseenLanguageError
from gfun.estimator import LabelPredictionsMixin
from gfun.funnelling.aggregation import (
    AGGREGATIONS,
    DEFAULT_AGGREGATION,
    POSTERIOR_AGGREGATIONS,
    aggregate,
    fit_view_weights,
)
from gfun.funnelling.branch import Branch
from gfun.funnelling.meta import MetaTierMixin
from gfun.funnelling.state import FunnellingStateMixin
from gfun.funnelling.view_spec import NamedViewsMixin, check_unique_names, label, parse_views, view_names
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.kernel import DEFAULT_C_GRID, RBFSVMOvR
from gfun.svm.memory_budget import DEFAULT_MAX_MEMORY
from gfun.views.base import ViewGenerator
from gfun.views.normalization import ZScore, l2_normalize

# PARALLEL_FIELDS, parse_views, view_names, Branch and the SELECT_* constants are re-exported: they have always
# been importable from here (the modules named after each concept hold them now)
__all__ = ["Branch", "GeneralizedFunnelling", "parse_views", "view_names"]

logger = logging.getLogger(__name__)


class GeneralizedFunnelling(NamedViewsMixin, MetaTierMixin, FunnellingStateMixin, LabelPredictionsMixin,
                            MacroF1ScoreMixin, ClassifierMixin, BaseEstimator):
    """Cross-lingual multilabel classifier: the two-tier gFun ensemble.

    Parameters
    ----------
    views : str or list of (str, ViewGenerator)
        The VGFs: named unfitted views, ``[("x", PosteriorsView()), ("m", WordEmbeddingView(source=...))]``
        (as the steps of a :class:`sklearn.pipeline.Pipeline`), or the paper's letters as a shortcut (``"x"``,
        ``"xm"``, ``"xmw"``: the views registered under those letters, with the settings below). A list may
        also hold registered names (``"m"``) and bare view objects (named after their class's registration).
        Two views with the same name are refused. A view's parameters are nested parameters of the estimator
        (``get_params()["m__source"]``, ``set_params(m__source=...)``, a ``GridSearchCV`` grid), for a
        letters configuration too (they then go to ``view_params``). :func:`gfun.views.register_view` names a
        view class of one's own (so that a model with it can be saved and loaded).
    aggregation : {"select", "mean", "concat", "stack", "wmean"}
        How the views of a document are combined before the meta-classifier (see :mod:`gfun.funnelling.aggregation`).
        ``mean`` and ``concat`` are the paper's. ``select`` (the default): the mean of the posteriors of a
        subset of the views (a single view included), with or without the paper's normalisation, chosen by the
        meta-classifier's macro- and micro-F1 validated on out-of-fold inputs (see :meth:`_fit_select`).
        ``stack``: the calibrated posteriors of every view side by side (m·|Y| columns; a view that does not
        cover a document's language gets the mean of the views that do). ``wmean``: a per-view, per-class
        weighted mean of the posteriors, the weights fitted by non-negative least squares on out-of-fold
        posteriors. Every policy but ``concat`` maps each non-posterior view to |Y| posteriors first.
    normalize : bool
        L2-normalise each view and z-score the columns before every classifier that reads views
        (section 3.6). ``False`` gives the original Funnelling. ``stack`` and ``wmean`` read the mapped
        posteriors without L2 normalisation (see ``meta_zscore`` for the meta-classifier's input).
    train_posteriors : {"auto", "in-sample", "cv"}
        How tier 1 produces the posteriors of the training documents that the meta-classifier is trained on:
        in-sample (the paper's choice; X's classifiers and the mappers applied to the documents they were
        trained on) or out-of-fold (as the test documents see them). ``"auto"``: out-of-fold for ``stack`` and
        ``wmean``, in-sample for the paper's ``mean`` and ``concat``.
    first_tier_C : float
        C of the Posteriors view's linear SVMs.
    cv : int
        Folds used by tier-1 calibration and by the mappers of the averaging aggregation.
    meta_C : float or "cv"
        C of the meta-classifier's RBF SVMs; ``"cv"`` chooses it by ``meta_cv``-fold cross-validation over
        ``meta_C_grid``. The default is 1 (the authors' code): on debtags run 0, per-class CV scored below
        C = 1 for gFun-X, -XM and -XMW (F1M .380/.424/.395 vs .381/.433/.406) at 1.2-1.9x the fit time.
    meta_C_grid : sequence of float
    meta_C_selection : {"per-class", "global"}
    meta_cv : int
    meta_class_weight : {None, "balanced"}
        Class weights of the meta-classifier's SVMs. ``None`` is the paper's setting; ``"balanced"`` raises
        recall on rare classes (debtags run 0, gFun-X, C = 1: F1M .381 -> .386, KM .363 -> .380, Kµ .532 -> .553,
        F1µ .560 -> .559).
    meta_zscore : bool, optional
        Z-score the meta-classifier's input columns with training statistics; ``None`` follows ``normalize``.
    meta_threshold : {"auto", "zero", "f1", "validated"}
        Decision threshold of the meta-classifier's SVMs: their own (``"zero"``, the paper's), per class the
        one that maximises F1 on the meta-classifier's out-of-fold scores (``"f1"``), or per class whichever of
        the two raises the mean of macro- and micro-F1 of cross-fitted predictions (``"validated"``; see
        :func:`gfun.svm.thresholds.validated_thresholds`). ``"auto"``: ``"validated"`` when ``meta_validation`` is
        ``"oof"``, else ``"zero"``.
    meta_validation : {"auto", "same", "oof"}
        What the meta-classifier's cross-validation (C selection, Platt sigmoids, thresholds)
        scores its held-out folds on: the training inputs themselves (``"same"``, the paper), or their
        out-of-fold version (``"oof"``: first-tier posteriors of each training document produced by models
        that did not see it, as those of new documents are), while the models are trained on the inputs
        ``train_posteriors`` gives. ``"auto"``: ``"same"`` for ``mean`` and ``concat``, ``"oof"`` otherwise.
    select_cv : int
        Folds of the validation of each candidate of ``aggregation="select"``.
    select_score : {"f1", "macro-f1", "f1k"}
        What ``aggregation="select"`` compares its candidates by, on their validated predictions: the mean of
        macro-F1 and micro-F1 (``"f1"``, the default: a candidate may not buy macro-F1 with micro-F1),
        macro-F1 alone, or the mean of F1M, F1µ, KM and Kµ.
    select_average : {"language", "pooled"}
        How ``aggregation="select"`` averages ``select_score`` over the training documents: per training language,
        then the mean over languages (``"language"``, the default: as gFun is evaluated, each language's F1
        counted once), or over all documents at once (``"pooled"``, before issue 14's third version). Pooled
        scores favour the views that do well on the languages and classes with the most documents: on debtags
        they rated X + B above B alone, which then scored lower on every language's test documents.
    cv_groups : str or None
        Extra field of the training corpus whose value groups documents that cross-validation must keep in
        the same fold (the mappers', the meta-classifier's, ``select``'s): the translations of one text in a
        parallel corpus, or near-duplicates, would otherwise be validated on each other (SIB-200: M's
        out-of-fold macro-F1 .87 without). ``"auto"``: the first of :data:`PARALLEL_FIELDS` the corpus has,
        except for the paper's ``mean`` and ``concat`` (plain folds, as published); ``None``: plain folds.
    block_l2 : bool, optional
        L2-normalise each view's meta-level block (its posteriors); ``None``: with ``normalize`` for ``mean``
        and ``concat`` (the paper), never for ``stack`` and ``wmean``.
    mapper_C : float or "cv"
        C of the RBF SVMs that map non-posterior views to posteriors (``mean`` aggregation). The paper
        optimises C for the meta-classifier only, so the default is a fixed 1; ``"cv"`` chooses it like
        ``meta_C`` (over ``meta_C_grid``, ``cv`` folds).
    gamma : float or "scale"
        RBF width of the meta-classifier and of the mappers.
    kernel_approximation : {"auto", None, "nystroem", "nystroem-ls"}
        How the meta-classifier and the mappers train their RBF SVMs. ``"auto"``: exact (one precomputed Gram
        matrix, memory ``O(n^2)``: 340 MB at 6,500 training documents) while it fits in ``max_memory``, else
        regularised least squares on ``n_components`` Nystroem features of the same kernel (memory and time
        linear in the documents; the switch is logged). ``None``: always exact. ``"nystroem-ls"``,
        ``"nystroem"`` (linear SVMs, slow): always approximate (see :class:`gfun.svm.kernel.RBFSVMOvR`).
    n_components : int
        Nystroem landmarks (k-means centres) of the approximation.
    max_memory : int, float or str
        Memory budget of one exact kernel SVM (bytes, or a string like ``"2GB"``; the default suits a 2-core,
        8 GB machine: exact up to about 14,000 training documents): see ``kernel_approximation="auto"``.
    view_params : dict, optional
        Extra parameters per view name, e.g. ``{"x": {"min_df": 2}}`` or
        ``{"m": {"source": "vec:/path/to/muse"}}``. The W view produces its training views out-of-fold by
        default (``{"w": {"train_views": "in-sample"}}`` gives the paper's setting). A name that no view is
        registered under, or a parameter its view does not have, raises a ValueError.
    memory : str, path or joblib.Memory, optional
        Cache of fitted views (and their mappers), as in :class:`sklearn.pipeline.Pipeline`: a view fitted
        with the same parameters on the same training documents is loaded instead of refitted. Configurations
        that share views (``x``, ``xm``, ``xmw`` ...) then fit each view once; :attr:`cache_hits_` lists
        the views that came from the cache. ``n_jobs`` and ``verbose`` do not take part in the key.
    probability : bool
        Calibrate the meta-classifier so that :meth:`predict_proba` works.
    zero_shot_views : str, optional
        Fallback views (letters, e.g. ``"m"``) used only for documents of languages that no view of ``views``
        covers: each is mapped to |Y| calibrated posteriors by an auxiliary RBF SVM trained on all training
        documents, and their average replaces the meta-level input of such documents. This is how Funnelling
        (2019) classified languages without training data (``make_fun(zero_shot_views="m")``). Needs a
        meta-level representation of |Y| posteriors (``mean`` aggregation, or ``concat`` of the X view alone).
    n_jobs : int, optional
        Parallel jobs (languages in tier 1, classes in tier 2).
    random_state : int, RandomState or None
        Seed for every fold split and solver. A :class:`numpy.random.RandomState` gives, at each fit, one seed
        drawn from it (:attr:`random_seed_`).
    verbose : bool
        Log progress at INFO level.

    Attributes
    ----------
    classes_ : list of str
    languages_ : list of str
        Languages seen in training.
    branches_ : list of Branch
        Each view's path to the meta-level (view, mapper, mapper input scaler), in the order of ``views``.
    view_names_ : list of str
        The names of the views of :attr:`branches_`.
    views_ : list of ViewGenerator
        The fitted views (those of :attr:`branches_`).
    mappers_ : dict of str to RBFSVMOvR
        Per-view mappers to posteriors (every aggregation but ``concat``, non-posterior views), by view name.
    random_seed_ : int or None
        The seed every component was given (``random_state``, or one drawn from it when it is a RandomState).
    view_weights_ : (weights, mean, scale) or None
        What ``wmean`` learned (see :func:`gfun.funnelling.aggregation.fit_view_weights`): arrays (n_views, n_classes),
        rows in the order of :attr:`views_`.
    meta_ : RBFSVMOvR
    timings_ : dict of str to float
        Seconds spent in each phase of the last fit (``view_<letter>``, ``mapper_<letter>``, ``meta``);
        phases served by the cache are absent.
    cache_hits_ : list of str
        Names of the views (and mappers) loaded from ``memory`` by the last fit.
    selected_views_ : list of str
        Names of the views whose posteriors the meta-classifier reads (``select``: the kept ones; else all).
    dropped_views_ : list of str
        Names of the views ``select`` did not keep and that were dropped from :attr:`views_` (and
        :attr:`mappers_`) at the end of the fit, because no document can need them (see
        :meth:`_drop_unused_views`); they are not saved either.
    """

    def __init__(self, views: str | Sequence[tuple[str, ViewGenerator] | ViewGenerator | str] = "x",
                 aggregation: Literal["mean", "concat", "stack", "wmean"] = DEFAULT_AGGREGATION,
                 normalize: bool = True, train_posteriors: Literal["auto", "in-sample", "cv"] = "auto",
                 first_tier_C: float = 1.0, cv: int = 5, meta_C: float | str = 1.0,
                 meta_C_grid: Sequence[float] = DEFAULT_C_GRID, meta_C_selection: str = "per-class",
                 meta_cv: int = 5, meta_class_weight: str | None = None, meta_zscore: bool | None = None,
                 meta_threshold: str = "auto", meta_validation: str = "auto", select_cv: int = 3,
                 select_score: str = "f1", select_average: str = "language", cv_groups: str | None = "auto",
                 block_l2: bool | None = None,
                 mapper_C: float | str = 1.0,
                 gamma: float | str = "scale", kernel_approximation: str | None = "auto", n_components: int = 1000,
                 max_memory: int | float | str = DEFAULT_MAX_MEMORY,
                 view_params: dict | None = None, memory: Any = None,
                 probability: bool = True, zero_shot_views: str | None = None, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | None = None, verbose: bool = False) -> None:
        check_unique_names(views)  # two views with one name are refused here, not only at fit time
        self.views = views
        self.aggregation = aggregation
        self.normalize = normalize
        self.train_posteriors = train_posteriors
        self.first_tier_C = first_tier_C
        self.cv = cv
        self.meta_C = meta_C
        self.meta_C_grid = meta_C_grid
        self.meta_C_selection = meta_C_selection
        self.meta_cv = meta_cv
        self.meta_class_weight = meta_class_weight
        self.meta_zscore = meta_zscore
        self.meta_threshold = meta_threshold
        self.block_l2 = block_l2
        self.meta_validation = meta_validation
        self.select_cv = select_cv
        self.select_score = select_score
        self.select_average = select_average
        self.cv_groups = cv_groups
        self.mapper_C = mapper_C
        self.gamma = gamma
        self.kernel_approximation = kernel_approximation
        self.n_components = n_components
        self.max_memory = max_memory
        self.view_params = view_params
        self.memory = memory
        self.probability = probability
        self.zero_shot_views = zero_shot_views
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------ fitted state, by view name
    @property
    def view_names_(self) -> list[str]:
        return [b.name for b in self.branches_]

    @property
    def mappers_(self) -> dict[str, RBFSVMOvR]:
        return {b.name: b.mapper for b in self.branches_ + self.fallback_branches_ if b.mapper is not None}

    @property
    def mapper_scalers_(self) -> dict[str, ZScore]:
        return {b.name: b.scaler for b in self.branches_ + self.fallback_branches_ if b.scaler is not None}

    @property
    def fallback_views_(self) -> list[ViewGenerator]:
        return [b.view for b in getattr(self, "fallback_branches_", [])]

    # ------------------------------------------------------------------ construction helpers
    def _view_defaults(self, name: str) -> dict[str, Any]:
        """What a letters configuration hands the view ``name`` (given only to views that take it)."""
        defaults: dict[str, Any] = {"n_jobs": self.n_jobs, "random_state": self._seed()}
        if name == "x":
            defaults.update(C=self.first_tier_C, cv=self.cv, train_posteriors=self._train_posteriors())
        elif name == "w":
            # out-of-fold training views: WCEs estimated on the same documents they represent make
            # the training views over-optimistic (demo: F1M .315 in-sample vs .347 out-of-fold)
            defaults.update(cv=self.cv, train_views="cv")
        return defaults

    def _seed(self) -> int | None:
        """The seed of every component: ``random_state``, or the one a fit drew from a RandomState."""
        rs = self.random_state
        if rs is None or isinstance(rs, numbers.Integral):
            return rs
        seed = getattr(self, "random_seed_", None)
        if seed is None:
            raise ValueError("random_state is a RandomState: its seed is drawn by fit")
        return seed

    def _mapper(self) -> RBFSVMOvR:
        return RBFSVMOvR(C=self.mapper_C, C_grid=self.meta_C_grid, C_selection=self.meta_C_selection, cv=self.cv,
                         gamma=self.gamma, probability=True, approximation=self.kernel_approximation,
                         n_components=self.n_components, max_memory=self.max_memory, support_dtype="float32",
                         n_jobs=self.n_jobs,
                         random_state=self._seed(), verbose=self.verbose)

    def _record_branch(self, branch: Branch, seconds: dict[str, float], hit: bool) -> None:
        if hit:
            self.cache_hits_.append(branch.name)
        for phase, sec in seconds.items():
            self.timings_[phase] = self.timings_.get(phase, 0.0) + sec
        if self.verbose:
            logger.info("view %s %s", branch.name.upper(),
                        "taken from the cache" if hit else ", ".join(f"{k} {v:.1f}s" for k, v in seconds.items()))

    def _check_params(self) -> None:
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {self.aggregation!r}")
        if self.train_posteriors not in ("auto", "in-sample", "cv"):
            raise ValueError(f"train_posteriors must be 'auto', 'in-sample' or 'cv', got {self.train_posteriors!r}")
        check_C(self.meta_C, "meta_C")
        check_C(self.first_tier_C, "first_tier_C", allow_cv=False)
        view_names(self.views)
        self._check_view_params()

    def _train_posteriors(self) -> str:
        """``train_posteriors`` resolved: ``"auto"`` is out-of-fold for stack and wmean, in-sample otherwise."""
        if self.train_posteriors == "auto":
            return "cv" if self.aggregation in ("stack", "wmean") else "in-sample"
        return self.train_posteriors

    def _cv_groups(self, X: Any, n: int) -> np.ndarray | None:
        """The groups of the training documents that cross-validation keeps together (``cv_groups``)."""
        if self.cv_groups == "auto" and self.aggregation in ("mean", "concat"):
            return None  # the paper's policies keep the paper's plain folds
        return document_groups(X, n, self.cv_groups)

    def _block(self, Z: np.ndarray) -> np.ndarray:
        """A view's meta-level block: L2-normalised for the paper's policies, raw posteriors for the others.

        ``stack`` and ``wmean`` read calibrated posteriors as they are: they are comparable across views
        already, and their size tells how sure a view is, which L2 normalisation would blur.
        """
        l2 = self.normalize and self.aggregation in ("mean", "concat") if self.block_l2 is None else self.block_l2
        if l2:
            return l2_normalize(Z)
        return np.asarray(Z, dtype=np.float32)

    # ------------------------------------------------------------------ fit
    def fit(self, X: Any, y: Any = None, *, langs: Sequence[str] | None = None) -> GeneralizedFunnelling:
        """Fit both tiers.

        Parameters
        ----------
        X : MultilingualCorpus or list of str
            Training documents. A corpus carries its languages and labels.
        y : array-like (n_docs, n_classes) binary, or list of label lists, optional
            Labels; taken from ``X`` when it is a labelled corpus.
        langs : list of str, optional
            Language of each text when ``X`` is a list of texts.
        """
        self._check_params()
        rs = self.random_state
        self.random_seed_ = rs if rs is None or isinstance(rs, numbers.Integral) else int(
            check_random_state(rs).randint(np.iinfo(np.int32).max))
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if len(texts) == 0:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        self.timings_ = {}
        empty = [lang for lang in self.languages_ if not Y[lang_arr == lang].any()]
        if empty:
            logger.warning("language(s) %s have no positive label in any class", empty)
        no_pos = [classes[j] for j in np.flatnonzero(Y.sum(axis=0) == 0)]
        if no_pos:
            logger.warning("%d class(es) have no positive training document: %s", len(no_pos), no_pos[:10])

        self.groups_ = self._cv_groups(X, len(texts))
        self.branches_: list[Branch] = []
        self.fallback_branches_: list[Branch] = []
        self.cache_hits_: list[str] = []
        train_mapped, val_mapped = [], []  # the meta-classifier's training inputs, and their test-like version
        out_of_fold = self._train_posteriors() == "cv"
        for name, view in self._named_views():
            mapped = self.aggregation in POSTERIOR_AGGREGATIONS and view.output != "posteriors"
            branch = Branch(name, view, self._mapper() if mapped else None, normalize=self.normalize)
            Z, Z_oof, seconds, hit = branch.fit_transform(texts, lang_arr, Y, groups=self.groups_, memory=self.memory)
            self._record_branch(branch, seconds, hit)
            self.branches_.append(branch)
            train_mapped.append(self._block(Z_oof if out_of_fold and Z_oof is not None else Z))
            val_mapped.append(self._block(Z_oof if Z_oof is not None else Z))
        self.views_ = [b.view for b in self.branches_]
        if self.zero_shot_views:
            letters = parse_views(self.zero_shot_views)
            if set(self.view_names_) & set(letters):
                raise ValueError(f"zero_shot_views {self.zero_shot_views!r} repeats a view of views={self.views!r}")
            if self.aggregation == "concat" and [v.output for v in self.views_] != ["posteriors"]:
                raise ValueError("zero_shot_views needs a meta-level input of posteriors: mean, stack or wmean "
                                 "aggregation, or concat of a single posterior view (views='x')")
            for name, view in self._named_views(self.zero_shot_views):
                branch = Branch(name, view, self._mapper(), normalize=self.normalize)
                _, _, seconds, hit = branch.fit_transform(texts, lang_arr, Y, groups=self.groups_, memory=self.memory)
                self._record_branch(branch, seconds, hit)
                self.fallback_branches_.append(branch)
        self.view_weights_ = fit_view_weights(val_mapped, Y) if self.aggregation == "wmean" else None
        self.selected_views_ = self.view_names_
        self.selected_l2_ = None
        t0 = time.perf_counter()
        self.dropped_views_: list[str] = []
        if self.aggregation == "select":
            Zmeta = self._fit_select(train_mapped, val_mapped, Y, lang_arr, self._judged_documents(len(texts)))
            self._drop_unused_views()
        else:
            everyone = [np.ones(len(texts), dtype=bool)] * len(train_mapped)
            Zmeta = self._aggregate(train_mapped, everyone)
            Zval = self._aggregate(val_mapped, everyone) if self._meta_validation() == "oof" else None
            self.meta_, self.scaler_ = self._fit_meta(Zmeta, Zval, Y, self._zscore_meta(), self.meta_cv)
        self._anchor_probabilities(Y)
        self.timings_["meta"] = time.perf_counter() - t0
        self.n_meta_features_ = Zmeta.shape[1]
        return self

    # ------------------------------------------------------------------ inference
    def _aggregate(self, views: list[np.ndarray], masks: list[np.ndarray]) -> np.ndarray:
        policy = "mean" if self.aggregation == "select" else self.aggregation
        return aggregate(policy, views, masks, getattr(self, "view_weights_", None))

    def transform(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Meta-level representation of documents: aggregated, normalised views (the meta-classifier's input).

        Raises
        ------
        UnseenLanguageError
            For a language that no configured view covers (with ``concat``, one that any view does not cover).
        """
        check_is_fitted(self, "meta_")
        texts, lang_arr = unpack(X, langs)
        n = len(texts)
        present = sorted(set(lang_arr.tolist()))
        covering = {lang: [b.name for b in self.branches_ if b.view.covers(lang)] for lang in present}
        fallback = self.fallback_branches_

        def served(names: list[str]) -> bool:
            return bool(names) and (self.aggregation != "concat" or len(names) == len(self.branches_))

        for lang, names in covering.items():
            if not served(names) and not any(b.view.covers(lang) for b in fallback):
                raise UnseenLanguageError(
                    f"language {lang!r} was not seen in training (languages: {self.languages_}) and "
                    + ("no view of this model" if not names else
                       f"only view(s) {names} of {label(self.view_names_).upper()}")
                    + f" can represent it ({self.aggregation} aggregation); views that serve languages without "
                    "training documents: M (aligned word embeddings), B (multilingual transformer)", languages=[lang])
        main_ok = np.asarray([served(covering[lang]) for lang in lang_arr], dtype=bool)
        # ``select`` uses the views it kept; a document none of them covers gets the mean of the others
        selected = set(getattr(self, "selected_views_", None) or self.view_names_)
        kept_cover = np.asarray([any(x in selected for x in covering[lang]) for lang in lang_arr], dtype=bool)
        mapped, masks = [], []
        for branch in self.branches_:
            mask = main_ok & np.asarray([branch.view.covers(lang) for lang in lang_arr], dtype=bool)
            if branch.name not in selected:
                mask &= ~kept_cover
            Z = np.zeros((n, branch.dim or len(self.classes_)), dtype=np.float32)
            if mask.any():
                idx = np.flatnonzero(mask)
                Zv = self._block(branch.transform([texts[i] for i in idx], lang_arr[idx]))
                if getattr(self, "selected_l2_", None):
                    Zv = l2_normalize(Zv)
                Z = np.zeros((n, Zv.shape[1]), dtype=np.float32)
                Z[idx] = Zv
            mapped.append(Z)
            masks.append(mask)
        Zmeta = self._aggregate(mapped, masks)
        rest = np.flatnonzero(~main_ok)
        if rest.size:  # languages only the zero-shot fallback views serve: average of their posteriors
            total = np.zeros((rest.size, len(self.classes_)))
            count = np.zeros((rest.size, 1))
            for branch in fallback:
                sub = np.asarray([branch.view.covers(lang_arr[i]) for i in rest], dtype=bool)
                if not sub.any():
                    continue
                idx = rest[sub]
                P = self._block(branch.transform([texts[i] for i in idx], lang_arr[idx]))
                total[sub] += l2_normalize(P) if getattr(self, "selected_l2_", None) else P
                count[sub, 0] += 1
            fill = (total / np.maximum(count, 1)).astype(np.float32)
            Zmeta[rest] = np.tile(fill, Zmeta.shape[1] // fill.shape[1])  # stack: the same estimate for every view
        return self.scaler_.transform(Zmeta) if self.scaler_ is not None else Zmeta

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Meta-classifier decision scores (n_docs, n_classes); positive means predicted."""
        check_is_fitted(self, "meta_")
        return self.meta_.decision_function(self.transform(X, langs=langs))

    def predict_proba(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Calibrated posterior of each class (n_docs, n_classes).

        Platt sigmoids of the decision scores fitted through 0.5 at score 0, so ``predict_proba(X) > 0.5``
        is :meth:`predict` (for models saved by gfun 0.x before this rule, the two may differ near 0.5).
        """
        check_is_fitted(self, "meta_")
        return self.meta_.predict_proba(self.transform(X, langs=langs))

    def predict_with_proba(self, X: Any, *, langs: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` and :meth:`predict_proba` at the cost of one (the documents are represented and scored
        once)."""
        scores = self.decision_function(X, langs=langs)
        return (scores > 0).astype(np.int8), self.meta_.proba_from_scores(scores)
