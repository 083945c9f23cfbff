"""Generalized Funnelling: view-generating functions -> normalise -> aggregate -> meta-classifier.

:meth:`GeneralizedFunnelling.fit` reads top to bottom:

1. tier 1: every view-generating function (VGF) is fitted on the training documents of all languages, through its
   :class:`~gfun.funnelling.branch.Branch` (view -> L2 -> z-score -> mapper to |Y| calibrated posteriors, for the
   views that are not posteriors when the policy reads posteriors), which gives the view's block of the training
   documents (in-sample, and out-of-fold where the branch has it);
2. the zero-shot fallback views, if any, are fitted the same way;
3. the aggregation policy (:mod:`gfun.funnelling.aggregation`) learns its state and trains the meta-classifier
   (one-vs-rest RBF SVMs, :mod:`gfun.funnelling.meta`) on the aggregated blocks of all languages at once;
4. ``select`` drops the views it did not keep that no document can need; the meta-classifier's sigmoids are
   anchored so that ``predict_proba > 0.5`` is ``predict``.

The default policy, ``select``, trains the meta-classifier on the in-sample first-tier posteriors as the paper
does, but validates it on their out-of-fold version (what new documents look like): it keeps, by the validated
mean of macro- and micro-F1, the view set (any non-empty subset, a single view included) and the normalisation
that work on the data at hand (a view must beat the noise of the estimate to stay), and moves a class's decision
threshold off the SVM's own only where cross-fitted validation says it pays (and, on request, gives the documents of
languages without training documents a meta-classifier of their own: ``Select(unseen=...)``). ``mean`` and
``concat`` are the paper's policies.

Fun, the 2019 method, is the same estimator with the Posteriors view only and no normalisation (see
:func:`gfun.baselines.naive.make_fun`).
"""

from __future__ import annotations

import logging
import numbers
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from gfun.corpus.inputs import check_C, document_groups, training_data, unpack
from gfun.errors import UnseenLanguageError
from gfun.estimator import LabelPredictionsMixin, check_finite
from gfun.funnelling import DEFAULT_AGGREGATION
from gfun.funnelling.aggregation import Aggregation, ViewBlocks, fallback_input
from gfun.funnelling.branch import Branch, branch_fit_line
from gfun.funnelling.language_out import language_out_folds, language_out_kind
from gfun.funnelling.meta import MetaTrainer, default_mapper, default_meta
from gfun.funnelling.policies import make_aggregation
from gfun.funnelling.select import unused_views
from gfun.funnelling.state import FunnellingStateMixin
from gfun.funnelling.view_spec import NamedViewsMixin, check_unique_names, label, parse_views, view_names
from gfun.metrics.scoring import MacroF1ScoreMixin
from gfun.svm.kernel import RBFSVMOvR
from gfun.views import views_serving_unseen_languages
from gfun.views.base import ViewGenerator
from gfun.views.normalization import ZScore

if TYPE_CHECKING:
    from gfun.funnelling.explanation import Explanations

__all__ = ["GeneralizedFunnelling"]

logger = logging.getLogger(__name__)

class GeneralizedFunnelling(NamedViewsMixin, FunnellingStateMixin, LabelPredictionsMixin, MacroF1ScoreMixin,
                            ClassifierMixin, BaseEstimator):
    """Cross-lingual multilabel classifier: the two-tier gFun ensemble.

    Parameters
    ----------
    views : str or list of (str, ViewGenerator)
        The VGFs: named unfitted views, ``[("x", PosteriorsView()), ("m", WordEmbeddingView(source=...))]``
        (as the steps of a :class:`sklearn.pipeline.Pipeline`), or the paper's letters as a shortcut (``"x"``,
        ``"xm"``, ``"xmw"``: the views registered under those letters). A list may also hold registered names
        (``"m"``) and bare view objects (named after their class's registration). Two views with the same name
        are refused, and so are the names of the nested estimators (``meta``, ``mapper``, ``aggregation``). A
        view's parameters are nested parameters of the estimator (``get_params()["m__source"]``,
        ``set_params(m__source=...)``, a ``GridSearchCV`` grid), for a letters configuration too (they then go to
        ``view_params``). :func:`gfun.views.register_view` names a view class of one's own (so that a model with
        it can be saved and loaded).
    view_params : dict, optional
        Parameters per view name for a letters configuration, e.g. ``{"x": {"C": 10}}`` or
        ``{"m": {"source": "vec:/path/to/muse"}}``. The W view produces its training views out-of-fold by
        default (``{"w": {"train_views": "in-sample"}}`` gives the paper's setting). A name that no view is
        registered under, or a parameter its view does not have, raises a ValueError.
    aggregation : str or Aggregation
        How the views of a document are combined before the meta-classifier: a policy of
        :mod:`gfun.funnelling.aggregation` by name (``"select"``, the default; ``"mean"`` and ``"concat"``, the
        paper's; ``"stack"``, ``"wmean"``) or as an object with its own parameters
        (``Select(cv=3, score="f1", average="language")``, ``Mean(train_posteriors="cv")``, ...). Every policy
        but ``concat`` maps each non-posterior view to |Y| posteriors first.
    normalize : bool
        L2-normalise each view and z-score the columns before every classifier that reads views
        (section 3.6). ``False`` gives the original Funnelling.
    meta : RBFSVMOvR, optional
        The meta-classifier (unfitted; cloned at fit, given the estimator's ``n_jobs``, seed and ``verbose``):
        its ``C`` (a number or ``"cv"``: chosen by ``cv``-fold cross-validation over ``C_grid``), ``class_weight``,
        ``threshold`` (``"auto"``: validated per class when the policy validates on out-of-fold inputs, else the
        SVM's own), ``gamma``, kernel ``approximation``, ``max_memory``, ``probability``. ``None``:
        :func:`gfun.funnelling.meta.default_meta` (C = 1, the authors' setting).
    mapper : RBFSVMOvR, optional
        Template of the RBF SVMs that map each non-posterior view to |Y| calibrated posteriors. ``None``:
        :func:`gfun.funnelling.meta.default_mapper` (C = 1: the paper optimises C for the meta-classifier only).
    cv_groups : str or None
        Extra field of the training corpus whose value groups documents that cross-validation must keep in
        the same fold (the mappers', the meta-classifier's, ``select``'s): the translations of one text in a
        parallel corpus, or near-duplicates, would otherwise be validated on each other. ``"auto"``: the first
        of :data:`gfun.corpus.inputs.PARALLEL_FIELDS` the corpus has, except for the paper's ``mean`` and
        ``concat`` (plain folds, as published); ``None``: plain folds.
    zero_shot_views : str, optional
        Fallback views (letters, e.g. ``"m"``) used only for documents of languages that no view of ``views``
        covers: each is mapped to |Y| calibrated posteriors by an auxiliary RBF SVM trained on all training
        documents, and their average replaces the meta-level input of such documents. This is how Funnelling
        (2019) classified languages without training data (``make_fun(zero_shot_views="m")``). Needs a
        meta-level representation of |Y| posteriors (any policy but ``concat``, or ``concat`` of the X view alone).
    memory : str, path or joblib.Memory, optional
        Cache of fitted views (and their mappers), as in :class:`sklearn.pipeline.Pipeline`: a view fitted
        with the same parameters on the same training documents is loaded instead of refitted. Configurations
        that share views (``x``, ``xm``, ``xmw`` ...) then fit each view once; :attr:`cache_hits_` lists
        the views that came from the cache. ``n_jobs`` and ``verbose`` do not take part in the key.
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
    fallback_branches_ : list of Branch
        The same for the views of ``zero_shot_views``.
    view_names_ : list of str
        The names of the views of :attr:`branches_`.
    views_ : list of ViewGenerator
        The fitted views (those of :attr:`branches_`).
    mappers_ : dict of str to RBFSVMOvR
        Per-view mappers to posteriors (every aggregation but ``concat``, non-posterior views), by view name.
    aggregation_ : Aggregation
        The fitted policy.
    meta_ : RBFSVMOvR
        The fitted meta-classifier; ``scaler_`` the z-scoring of its input (or None).
    meta_input_mean_ : ndarray (n_meta_features,)
        The average of the meta-classifier's training input (before its z-scoring): the reference point of
        :meth:`explain`.
    random_seed_ : int or None
        The seed every component was given (``random_state``, or one drawn from it when it is a RandomState).
    timings_ : dict of str to float
        Seconds spent in each phase of the last fit (``view_<letter>``, ``mapper_<letter>``, ``meta``);
        phases served by the cache are absent.
    cache_hits_ : list of str
        Names of the views (and mappers) loaded from ``memory`` by the last fit.
    selected_views_ : list of str
        Names of the views whose posteriors the meta-classifier reads (``select``: the kept ones; else all).
    dropped_views_ : list of str
        Names of the views ``select`` did not keep and that were dropped from :attr:`views_` (and
        :attr:`mappers_`) at the end of the fit, because no document can need them
        (:func:`gfun.funnelling.select.unused_views`); they are not saved either.
    """

    def __init__(self, views: str | Sequence[tuple[str, ViewGenerator] | ViewGenerator | str] = "x",
                 view_params: dict | None = None, aggregation: str | Aggregation = DEFAULT_AGGREGATION,
                 normalize: bool = True, meta: RBFSVMOvR | None = None, mapper: RBFSVMOvR | None = None,
                 cv_groups: str | None = "auto", zero_shot_views: str | None = None, memory: Any = None,
                 n_jobs: int | None = None, random_state: int | np.random.RandomState | None = None,
                 verbose: bool = False) -> None:
        check_unique_names(views)  # two views with one name are refused here, not only at fit time
        self.views = views
        self.view_params = view_params
        self.aggregation = aggregation
        self.normalize = normalize
        self.meta = meta
        self.mapper = mapper
        self.cv_groups = cv_groups
        self.zero_shot_views = zero_shot_views
        self.memory = memory
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
    def _policy(self) -> Aggregation:
        """The unfitted aggregation policy (``aggregation`` by name, or a clone of the given object)."""
        return make_aggregation(self.aggregation)

    def _nested_estimator(self, name: str) -> Any:
        """The nested estimator ``name`` (``meta``, ``mapper``, ``aggregation``), made explicit when it is given by
        default (``None``) or by name, so that ``<name>__<parameter>`` can be set on it."""
        value = getattr(self, name)
        if name == "aggregation" and isinstance(value, str):
            value = make_aggregation(value)
        elif value is None:
            value = default_meta() if name == "meta" else default_mapper()
        setattr(self, name, value)
        return value

    def _view_defaults(self) -> dict[str, Any]:
        """What the estimator hands every view that takes it (see
        :meth:`~gfun.funnelling.view_spec.NamedViewsMixin._named_views`)."""
        return {"n_jobs": self.n_jobs, "random_state": self._seed(), "train_posteriors": self._train_posteriors()}

    def _train_posteriors(self) -> str:
        """How tier 1 produces the training posteriors (the policy's resolved ``train_posteriors``)."""
        return self._policy().resolved_train_posteriors()

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
        """A new unfitted mapper (a clone of ``mapper``) with the estimator's parallelism, seed and verbosity."""
        template = default_mapper() if self.mapper is None else self.mapper
        return clone(template).set_params(n_jobs=self.n_jobs, random_state=self._seed(), verbose=self.verbose)

    def _record_branch(self, branch: Branch, seconds: dict[str, float], hit: bool) -> None:
        if hit:
            self.cache_hits_.append(branch.name)
        for phase, sec in seconds.items():
            self.timings_[phase] = self.timings_.get(phase, 0.0) + sec
        if self.verbose:
            logger.info("%s", branch_fit_line(branch, seconds, hit))

    def _check_params(self) -> Aggregation:
        """Check the parameters that fit reads; return the unfitted policy."""
        policy = self._policy()
        policy.check()
        for name in ("meta", "mapper"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, RBFSVMOvR):
                raise TypeError(f"{name} must be an RBFSVMOvR (gfun.svm.kernel) or None, got {type(value).__name__}")
            if value is not None:  # before any view is fitted
                check_C(value.C, f"{name}__C")
        view_names(self.views)
        self._check_view_params()
        return policy

    def _cv_groups(self, X: Any, n: int, policy: Aggregation) -> np.ndarray | None:
        """The groups of the training documents that cross-validation keeps together (``cv_groups``)."""
        if self.cv_groups == "auto" and policy.paper:
            return None  # the paper's policies keep the paper's plain folds
        return document_groups(X, n, self.cv_groups)

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
        policy = self._check_params()
        rs = self.random_state
        self.random_seed_ = rs if rs is None or isinstance(rs, numbers.Integral) else int(
            check_random_state(rs).randint(np.iinfo(np.int32).max))
        texts, lang_arr, Y, classes = training_data(X, y, langs)
        if len(texts) == 0:
            raise ValueError("no training documents")
        self.classes_ = classes
        self.languages_ = sorted(set(lang_arr.tolist()))
        self.timings_ = {}
        _warn_on_empty_labels(Y, lang_arr, self.languages_, classes)
        self.groups_ = self._cv_groups(X, len(texts), policy)

        # tier 1: each view through its branch; the meta-classifier's training inputs and their test-like version
        self.branches_: list[Branch] = []
        self.fallback_branches_: list[Branch] = []
        self.cache_hits_: list[str] = []
        train_blocks, val_blocks = [], []
        out_of_fold = policy.resolved_train_posteriors() == "cv"
        for name, view in self._named_views():
            mapped = policy.reads_posteriors and view.output != "posteriors"
            branch = Branch(name, view, self._mapper() if mapped else None, normalize=self.normalize)
            Z, Z_oof, seconds, hit = branch.fit_transform(texts, lang_arr, Y, groups=self.groups_, memory=self.memory)
            self._record_branch(branch, seconds, hit)
            self.branches_.append(branch)
            train_blocks.append(policy.block(Z_oof if out_of_fold and Z_oof is not None else Z, self.normalize))
            val_blocks.append(policy.block(Z_oof if Z_oof is not None else Z, self.normalize))
        self.views_ = [b.view for b in self.branches_]

        # the fallback views of languages no view covers
        if self.zero_shot_views:
            self._fit_fallback_views(texts, lang_arr, Y, policy)

        # tier 2: the policy's state and the meta-classifier
        t0 = time.perf_counter()
        trainer = MetaTrainer(default_meta() if self.meta is None else self.meta,
                              validation=policy.resolved_validation(), groups=self.groups_, n_jobs=self.n_jobs,
                              random_state=self._seed(), verbose=self.verbose)
        heldout = [b.view.heldout_documents() for b in self.branches_]
        beyond = [b.view.language_reach() != "training" for b in self.branches_]
        Zmeta, self.meta_, self.scaler_ = policy.fit(train_blocks, val_blocks, Y, trainer, normalize=self.normalize,
                                                     names=self.view_names_, langs=lang_arr, heldout=heldout,
                                                     beyond_training=beyond,
                                                     language_out=[language_out_kind(b.view) for b in self.branches_])
        if policy.language_out_views():  # select's unseen="auto": judged on language-out outputs
            t1 = time.perf_counter()
            if self._choose_unseen(policy, texts, lang_arr, Y):
                self.timings_["language_out"] = time.perf_counter() - t1
        self.aggregation_ = policy
        # the reference of explanations: the meta-classifier's average training input (the z-scoring's mean)
        self.meta_input_mean_ = np.asarray(Zmeta, dtype=np.float64).mean(axis=0)
        self.selected_views_ = policy.kept_views(self.view_names_)
        self.dropped_views_: list[str] = []
        self._drop_unused_views()
        self.meta_.anchor_sigmoids(Y)  # predict_proba > 0.5 is predict
        if policy.unseen_language_meta() is not None:
            policy.unseen_language_meta().meta.anchor_sigmoids(Y)
        self.timings_["meta"] = time.perf_counter() - t0 - self.timings_.get("language_out", 0.0)
        self.n_meta_features_ = Zmeta.shape[1]
        return self

    def _fit_fallback_views(self, texts: list[str], langs: np.ndarray, Y: np.ndarray, policy: Aggregation) -> None:
        """Fit the views of ``zero_shot_views``, each with a mapper to posteriors."""
        letters = parse_views(self.zero_shot_views)
        if set(self.view_names_) & set(letters):
            raise ValueError(f"zero_shot_views {self.zero_shot_views!r} repeats a view of views={self.views!r}")
        if not policy.reads_posteriors and [v.output for v in self.views_] != ["posteriors"]:
            raise ValueError("zero_shot_views needs a meta-level input of posteriors: mean, select, stack or wmean "
                             "aggregation, or concat of a single posterior view (views='x')")
        for name, view in self._named_views(self.zero_shot_views):
            branch = Branch(name, view, self._mapper(), normalize=self.normalize)
            _, _, seconds, hit = branch.fit_transform(texts, langs, Y, groups=self.groups_, memory=self.memory)
            self._record_branch(branch, seconds, hit)
            self.fallback_branches_.append(branch)

    def _choose_unseen(self, policy: Aggregation, texts: list[str], langs: np.ndarray, Y: np.ndarray) -> bool:
        """Give the policy the language-out outputs of its :meth:`~Aggregation.language_out_views` (the views fitted
        again on each fold of :func:`~gfun.funnelling.language_out.language_out_folds`, through ``memory``) to
        choose how languages without training documents are classified (the policy asks for none from a view
        that trains a network: :func:`~gfun.funnelling.language_out.language_out_kind`). Whether views were
        fitted."""
        names = policy.language_out_views()
        branches = [b for b in self.branches_ if b.name in names]
        folds = language_out_folds(langs, self.groups_, self._seed())
        blocks = [np.zeros((len(texts), len(self.classes_)), dtype=np.float32) for _ in branches]
        judged = np.zeros(len(texts), dtype=bool)
        for train, judge in folds:
            judge = judge & np.asarray([all(b.view.covers(lang) for b in branches) for lang in langs], dtype=bool)
            if not train.any() or not judge.any():
                continue
            tr, te = np.flatnonzero(train), np.flatnonzero(judge)
            for k, fitted in enumerate(branches):
                branch = Branch(fitted.name, clone(fitted.view),
                                self._mapper() if fitted.mapper is not None else None, normalize=self.normalize)
                branch.fit_transform([texts[i] for i in tr], langs[tr], Y[tr],
                                     groups=None if self.groups_ is None else self.groups_[tr], memory=self.memory)
                blocks[k][te] = policy.transform_block(branch.transform([texts[i] for i in te], langs[te]),
                                                       self.normalize)
            judged[te] = True
        if self.verbose:
            logger.info("language-out outputs of %s for %d of %d training documents", label(names).upper(),
                        int(judged.sum()), len(texts))
        policy.choose_unseen([B[judged] for B in blocks], Y[judged], langs[judged], self.meta_, self.scaler_)
        return bool(folds)

    def _drop_unused_views(self) -> None:
        """Drop the views the policy did not keep (``select``) that no document can need (see
        :func:`gfun.funnelling.select.unused_views`)."""
        dropped = unused_views(self.branches_, self.selected_views_, self.languages_)
        if not dropped:
            return
        self.branches_ = [b for b in self.branches_ if b.name not in dropped]
        self.views_ = [b.view for b in self.branches_]
        self.dropped_views_ = dropped
        logger.info("select: dropped view(s) %s from the model (not kept, and every language they serve is "
                    "served by %s)", label(dropped).upper(), label(self.selected_views_).upper())

    # ------------------------------------------------------------------ inference
    def transform(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Meta-level representation of documents: aggregated, normalised views (the meta-classifier's input; for
        the documents of languages without training documents, that of :meth:`unseen_rows`'s meta-classifier).

        Raises
        ------
        UnseenLanguageError
            For a language that no configured view covers (with ``concat``, one that any view does not cover).
        """
        return self._meta_input(X, langs)[0]

    def _meta_input(self, X: Any, langs: Sequence[str] | None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`transform` of the documents and :meth:`unseen_rows` of them."""
        check_is_fitted(self, "meta_")
        texts, lang_arr = unpack(X, langs)
        vb = self.view_blocks(texts, lang_arr)
        Zmeta = self.aggregation_.combine(vb.blocks, vb.masks)
        rest = np.flatnonzero(vb.fallback)
        if rest.size:  # languages only the zero-shot fallback views serve: average of their posteriors
            Zmeta[rest] = fallback_input([B[rest] for B in vb.fallback_blocks], [m[rest] for m in vb.fallback_masks],
                                         Zmeta.shape[1])
        unseen = self.unseen_rows(lang_arr, vb.fallback)
        out = self.scaler_.transform(Zmeta) if self.scaler_ is not None else Zmeta
        own = self.aggregation_.unseen_language_meta()
        if unseen.any() and own.scaler is not None:
            out[unseen] = own.scaler.transform(Zmeta[unseen])
        return out, unseen

    def unseen_rows(self, langs: Sequence[str], fallback: np.ndarray | None = None) -> np.ndarray:
        """Which documents (of languages ``langs``) the meta-classifier of languages without training documents
        classifies (:class:`~gfun.funnelling.meta.UnseenLanguageMeta`, ``select``'s ``unseen="own"``): those of a
        language not seen in training, except the documents only the ``zero_shot_views`` serve (``fallback``).
        All ``False`` for a model without one."""
        lang_arr = np.asarray(langs, dtype=object)
        if self.aggregation_.unseen_language_meta() is None:
            return np.zeros(len(lang_arr), dtype=bool)
        seen = set(self.languages_)
        rows = np.asarray([lang not in seen for lang in lang_arr], dtype=bool)
        return rows if fallback is None else rows & ~np.asarray(fallback, dtype=bool)

    def _scores(self, Z: np.ndarray, unseen: np.ndarray) -> np.ndarray:
        """The decisions of the meta-level inputs ``Z`` (z-scored), by each document's meta-classifier."""
        if not unseen.any():
            return self.meta_.decision_function(Z)
        scores = np.empty((Z.shape[0], len(self.classes_)))
        if not unseen.all():
            scores[~unseen] = self.meta_.decision_function(Z[~unseen])
        scores[unseen] = self.aggregation_.unseen_language_meta().meta.decision_function(Z[unseen])
        return scores

    def _proba(self, scores: np.ndarray, unseen: np.ndarray) -> np.ndarray:
        """The calibrated posteriors of the decisions ``scores``, by each document's meta-classifier's sigmoids."""
        proba = self.meta_.proba_from_scores(scores)
        if unseen.any():
            proba[unseen] = self.aggregation_.unseen_language_meta().meta.proba_from_scores(scores[unseen])
        return proba

    def view_blocks(self, texts: Sequence[str], langs: np.ndarray) -> ViewBlocks:
        """Each view's block of the documents as the fitted policy aggregates it, and which documents it serves.

        The kept views serve the documents of the languages they cover; a document none of them covers gets the
        other views that cover it (with ``concat``, every view must cover it); a language no view covers gets the
        ``zero_shot_views``. :meth:`transform` combines the blocks; :meth:`explain` also reads them.

        Raises
        ------
        UnseenLanguageError
            For a language that no configured view covers (with ``concat``, one that any view does not cover).
        """
        check_is_fitted(self, "meta_")
        policy = self.aggregation_
        lang_arr = np.asarray(langs, dtype=object)
        n = len(texts)
        present = sorted(set(lang_arr.tolist()))
        covering = {lang: [b.name for b in self.branches_ if b.view.covers(lang)] for lang in present}
        fallback = self.fallback_branches_

        def served(names: list[str]) -> bool:
            return bool(names) and (not policy.every_view or len(names) == len(self.branches_))

        for lang, names in covering.items():
            if not served(names) and not any(b.view.covers(lang) for b in fallback):
                raise UnseenLanguageError(
                    f"language {lang!r} was not seen in training (languages: {self.languages_}) and "
                    + ("no view of this model" if not names else
                       f"only view(s) {names} of {label(self.view_names_).upper()}")
                    + f" can represent it ({policy.name} aggregation); views that serve languages without "
                    f"training documents: {', '.join(views_serving_unseen_languages())}", languages=[lang])
        main_ok = np.asarray([served(covering[lang]) for lang in lang_arr], dtype=bool)
        # the kept views serve the documents they cover; a document none of them covers gets the mean of the others
        selected = set(self.selected_views_)
        kept_cover = np.asarray([any(x in selected for x in covering[lang]) for lang in lang_arr], dtype=bool)
        out = ViewBlocks(fallback=~main_ok, langs=lang_arr)

        def run(branch: Branch, mask: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray | None]:
            """The branch's block of the documents of ``mask`` (zero rows elsewhere) and its own output for them."""
            if not mask.any():
                return np.zeros((n, width), dtype=np.float32), None
            idx = np.flatnonzero(mask)
            raw = branch.transform([texts[i] for i in idx], lang_arr[idx])
            Zv = policy.transform_block(raw, self.normalize)
            Z = np.zeros((n, Zv.shape[1]), dtype=np.float32)
            Z[idx] = Zv
            return Z, raw

        for branch in self.branches_:
            mask = main_ok & np.asarray([branch.view.covers(lang) for lang in lang_arr], dtype=bool)
            if branch.name not in selected:
                mask &= ~kept_cover
            block, raw = run(branch, mask, branch.dim or len(self.classes_))
            out.blocks.append(block)
            out.masks.append(mask)
            out.outputs.append(raw)
        for branch in fallback:
            mask = ~main_ok & np.asarray([branch.view.covers(lang) for lang in lang_arr], dtype=bool)
            block, raw = run(branch, mask, len(self.classes_))
            out.fallback_blocks.append(block)
            out.fallback_masks.append(mask)
            out.fallback_outputs.append(raw)
        return out

    def decision_function(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Meta-classifier decision scores (n_docs, n_classes); positive means predicted.

        Raises :class:`~gfun.errors.NonFiniteError` naming the view (or the meta-classifier) that gave NaN or
        infinite values.
        """
        check_is_fitted(self, "meta_")
        return check_finite(self._scores(*self._meta_input(X, langs)), "the meta-classifier")

    def predict_proba(self, X: Any, *, langs: Sequence[str] | None = None) -> np.ndarray:
        """Calibrated posterior of each class (n_docs, n_classes).

        Platt sigmoids of the decision scores fitted through 0.5 at score 0, so ``predict_proba(X) > 0.5``
        is :meth:`predict`.
        """
        check_is_fitted(self, "meta_")
        Z, unseen = self._meta_input(X, langs)
        return self._proba(self._scores(Z, unseen), unseen)

    def explain(self, X: Any, *, langs: Sequence[str] | None = None, labels: Sequence[str] | None = None,
                top_k: int | None = None, top_words: int = 10) -> Explanations:
        """Why each document gets its labels: each view's contribution to the meta-classifier's decision, and the
        words of the document that pushed each label up or down (see :mod:`gfun.funnelling.explanation`).

        For every document and label explained, ``base_value + sum of the views' contributions == decision``
        (the :meth:`decision_function` value), exactly: the contributions are the views' Shapley values, an absent
        view dropped from the average (``mean``, ``select``, ``wmean``) or replaced by its training average
        (``concat``, ``stack``). Words: for X and P the terms' shares ``w * x`` of the view's SVM score; for M and W
        the change in the view's posterior when the word is removed.

        Parameters
        ----------
        X : MultilingualCorpus, DataFrame or list of str
            Documents, as :meth:`predict` takes them.
        langs : list of str, optional
            Language of each text when ``X`` is a list of texts.
        labels : list of str, optional
            The labels to explain for every document (default: the predicted ones; the best-scoring one when none
            is predicted).
        top_k : int, optional
            Explain the ``top_k`` best-scoring labels of each document instead.
        top_words : int
            Most words shown per view and direction (0: no words, faster).

        Returns
        -------
        Explanations
            One :class:`~gfun.funnelling.explanation.DocumentExplanation` per document, with ``to_dict()`` and
            ``to_text()``.
        """
        from gfun.funnelling.explanation import explain_model

        return explain_model(self, X, langs=langs, labels=labels, top_k=top_k, top_words=top_words)

    def predict_with_proba(self, X: Any, *, langs: Sequence[str] | None = None) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`predict` and :meth:`predict_proba` at the cost of one (the documents are represented and scored
        once)."""
        check_is_fitted(self, "meta_")
        Z, unseen = self._meta_input(X, langs)
        scores = check_finite(self._scores(Z, unseen), "the meta-classifier")
        return (scores > 0).astype(np.int8), self._proba(scores, unseen)


def _warn_on_empty_labels(Y: np.ndarray, langs: np.ndarray, languages: list[str], classes: list[str]) -> None:
    """Log the languages without any positive label and the classes without any positive training document."""
    empty = [lang for lang in languages if not Y[langs == lang].any()]
    if empty:
        logger.warning("language(s) %s have no positive label in any class", empty)
    no_pos = [classes[j] for j in np.flatnonzero(Y.sum(axis=0) == 0)]
    if no_pos:
        logger.warning("%d class(es) have no positive training document: %s", len(no_pos), no_pos[:10])
