"""Generalized Funnelling: view-generating functions -> normalise -> aggregate -> meta-classifier.

Tier 1 fits every view-generating function (VGF) on the training documents of all languages.
Tier 2 normalises the views (L2 per view, z-score per column with training statistics),
aggregates them (``concat``: juxtaposition; ``mean``: each non-posterior view is mapped to |Y|
calibrated posteriors by one RBF SVM trained on all languages, then the available views of
each document are averaged; ``stack``, ``wmean`` and ``select``: learned on training data, see
:mod:`gfun.aggregation`) and trains the meta-classifier (one-vs-rest RBF SVMs) on the documents of
all languages at once.

The default, ``select``, trains the meta-classifier on the in-sample first-tier posteriors as the paper
does, but validates it on their out-of-fold version (what new documents look like): it keeps, by the
validated mean of macro- and micro-F1, the view set (any non-empty subset, a single view included) and the
normalisation that work on the data at hand (a view must beat the noise of the estimate to stay), and moves
a class's decision threshold off the SVM's own only where cross-fitted validation says it pays. ``mean``
and ``concat`` are the paper's policies, unchanged.

Fun, the 2019 method, is the same estimator with the Posteriors view only and no
normalisation (see :func:`gfun.baselines.make_fun`).
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

from gfun._memory import release_free_memory
from gfun.aggregation import (
    AGGREGATIONS,
    DEFAULT_AGGREGATION,
    POSTERIOR_AGGREGATIONS,
    aggregate,
    fit_view_weights,
)
from gfun.estimator import LabelPredictionsMixin
from gfun.inputs import check_C, training_data, unpack
from gfun.kernel_svm import DEFAULT_C_GRID, DEFAULT_MAX_MEMORY, RBFSVMOvR
from gfun.metrics import f1_from_counts
from gfun.normalization import ZScore, l2_normalize
from gfun.scoring import MacroF1ScoreMixin
from gfun.state import sub_arrays
from gfun.views import (
    BUILTIN_VIEWS,
    VIEW_CLASSES,
    accepted_params,
    check_view_name,
    class_path,
    make_view,
    registered_name,
    view_class,
)
from gfun.views.base import UnseenLanguageError, ViewGenerator

__all__ = ["PARALLEL_FIELDS", "Branch", "GeneralizedFunnelling"]

#: Extra fields of a corpus that name the parallel versions (or near-duplicates) of a document, as the
#: loaders write them: SIB-200 ``index_id``, JRC-Acquis ``source_id`` (CELEX), debtags ``source`` (the source
#: package). ``cv_groups="auto"`` keeps documents sharing the first of these in the same fold.
PARALLEL_FIELDS: tuple[str, ...] = ("index_id", "source_id", "source")

logger = logging.getLogger(__name__)

#: ``aggregation="select"`` tries every non-empty set of views up to this many views (2^m - 1 candidates, plus
#: the raw version of all views); beyond, all views and every set that leaves one out.
SELECT_ALL_SUBSETS_UP_TO = 4
#: What ``select_score`` can be: the mean of validated macro-F1 and micro-F1 (``"f1"``), macro-F1 alone
#: (``"macro-f1"``), or the mean of F1M, F1µ, KM and Kµ (``"f1k"``).
SELECT_SCORES: tuple[str, ...] = ("f1", "macro-f1", "f1k")


def _selection_score(name: str) -> Any:
    """The function ``(pred, y) -> float`` of ``select_score`` ``name`` (boolean matrices, documents x classes)."""
    from gfun.metrics import k_from_counts

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


def parse_views(spec: str | Sequence[Any]) -> list[str]:
    """View names from a configuration such as ``"xmw"`` (letters, order-insensitive, no repeats)."""
    if isinstance(spec, str):
        letters = [c for c in spec.lower() if not c.isspace()]
        unknown = [c for c in letters if c not in VIEW_CLASSES]
        if unknown:
            raise ValueError(f"unknown view letter(s) {unknown} in {spec!r}; available: "
                             f"{''.join(n for n in VIEW_CLASSES if len(n) == 1)} (gfun.register_view names a view)")
        if len(set(letters)) != len(letters):
            raise ValueError(f"view letters repeat in {spec!r}")
        if not letters:
            raise ValueError("at least one view is needed")
        return letters
    raise TypeError(f"views must be a string of letters such as 'xmw', got {type(spec).__name__}")


def _view_entry_name(entry: Any) -> str:
    """The name of one entry of a ``views`` list: ``(name, view)``, a registered name, or a view object."""
    if isinstance(entry, tuple):
        if len(entry) != 2 or not isinstance(entry[1], ViewGenerator):
            raise TypeError(f"a views entry is (name, ViewGenerator), a view name or a ViewGenerator, got {entry!r}")
        return check_view_name(entry[0])
    if isinstance(entry, str):
        view_class(entry)
        return entry
    if isinstance(entry, ViewGenerator):
        name = registered_name(type(entry), prefer=type(entry).letter)
        if name is None and type(entry).letter != "?":
            name = type(entry).letter
        if name is None:
            raise ValueError(f"the view {type(entry).__name__} has no name: give one, views=[('name', view), ...], "
                             "or register its class (gfun.register_view)")
        return name
    raise TypeError(f"a views entry is (name, ViewGenerator), a view name or a ViewGenerator, got {entry!r}")


def view_names(spec: str | Sequence[Any]) -> list[str]:
    """The names of the views of a ``views`` configuration, checked: known, and none given twice.

    Raises
    ------
    ValueError
        An unknown name, or two views with the same name.
    """
    if isinstance(spec, str):
        return parse_views(spec)
    if not isinstance(spec, Sequence):
        raise TypeError(f"views must be letters such as 'xmw' or a list of (name, view), got {type(spec).__name__}")
    names = [_view_entry_name(entry) for entry in spec]
    if not names:
        raise ValueError("at least one view is needed")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"two views are named {repeated[0]!r}: every view needs its own name "
                         "(views=[('x', PosteriorsView()), ('x2', PosteriorsView(C=10))])")
    return names


def _check_unique_names(spec: Any) -> None:
    """Refuse a ``views`` configuration that names two views alike (the rest is checked by fit)."""
    if isinstance(spec, str):
        letters = [c for c in spec.lower() if not c.isspace()]
        if len(set(letters)) != len(letters):
            raise ValueError(f"view letters repeat in {spec!r}")
    else:
        view_names(spec)


def _label(names: Sequence[str]) -> str:
    """How a set of views is written in logs and :attr:`GeneralizedFunnelling.selection_scores_`: ``"xm"``."""
    return ("" if all(len(n) == 1 for n in names) else "+").join(names)


class Branch:
    """One view's path to the meta-level: view -> (L2 -> z-score -> mapper to |Y| posteriors).

    The mapper (an RBF SVM per class) and its input z-scoring are present for the views whose output is not
    posteriors when the aggregation reads posteriors; L2 normalisation precedes the z-scoring when
    ``normalize``. :meth:`fit_transform` (training) and :meth:`transform` (new documents) are the same path.

    Attributes
    ----------
    name : str
        The view's name in its model (a letter for the paper's views).
    view : ViewGenerator
    mapper : RBFSVMOvR or None
    scaler : ZScore or None
        The z-scoring of the mapper's input (with ``normalize``).
    normalize : bool
    """

    def __init__(self, name: str, view: ViewGenerator, mapper: RBFSVMOvR | None = None,
                 scaler: ZScore | None = None, normalize: bool = True) -> None:
        self.name, self.view, self.mapper, self.scaler, self.normalize = name, view, mapper, scaler, normalize

    def __repr__(self) -> str:
        return f"Branch({self.name!r}, {type(self.view).__name__}, mapper={self.mapper is not None})"

    @property
    def dim(self) -> int | None:
        """Width of the branch's output: |Y| with a mapper or for a posterior view, else the view's (if it says)."""
        if self.mapper is not None or self.view.output == "posteriors":
            return None
        return getattr(self.view, "n_features_out_", None)

    def fit_transform(self, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, *,
                      groups: np.ndarray | None = None, memory: Any = None,
                      ) -> tuple[np.ndarray, np.ndarray | None, dict[str, float], bool]:
        """Fit the view (and the mapper); return the training documents' output, in-sample and out-of-fold
        (``None`` when the branch has no out-of-fold version), the seconds per phase and whether the fitted
        branch came from ``memory``."""
        fit = _cached_branch(memory)
        key = _branch_key(self.view, self.mapper, self.normalize)
        view, Z, oof, mapper, scaler, seconds, hit = fit(key, self.view, texts, langs, Y, self.normalize, self.mapper,
                                                          groups)
        self.view, self.mapper, self.scaler = view, mapper, scaler
        seconds = {} if hit else {f"{phase.partition('_')[0]}_{self.name}": sec for phase, sec in seconds.items()}
        return Z, oof, seconds, hit

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        """The branch's output for new documents (every one of a language the view covers)."""
        Z = self.view.transform(texts, langs)
        release_free_memory()
        if self.mapper is None:
            return Z
        if self.normalize:
            Z = l2_normalize(Z)
        return self.mapper.predict_proba(self.scaler.transform(Z) if self.scaler else Z)


def _fit_branch(view: ViewGenerator, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, normalize: bool,
                mapper: RBFSVMOvR | None, groups: np.ndarray | None = None,
                ) -> tuple[ViewGenerator, np.ndarray, np.ndarray | None, RBFSVMOvR | None, ZScore | None,
                           dict[str, float]]:
    """Fit one view (and its mapper to posteriors, if any); return it with the training documents' meta input.

    Returns the fitted view, the (mapped) training views, in-sample and out-of-fold (``None`` without a
    mapper), the fitted mapper and its input scaler (``None`` without a mapper) and the seconds spent per
    phase. The training views are not L2-normalised yet (see :meth:`GeneralizedFunnelling._block`): a view
    without mapper as it comes, a mapped view as the mapper's |Y| posteriors. The timings are named after the
    view's letter (its class's; as cached branches hold them); :class:`Branch` renames them after the branch.
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    Z = view.fit_transform(texts, langs, Y)
    release_free_memory()  # what the view's fit freed (a transformer's: ~1 GB) is of no use to the SVMs that follow
    seconds[f"view_{view.letter}"] = time.perf_counter() - t0
    oof = getattr(view, "train_oof_", None)  # a posterior view's out-of-fold training posteriors
    if oof is not None:
        del view.train_oof_
    scaler = None
    if mapper is not None:
        t0 = time.perf_counter()
        if normalize:
            Z = l2_normalize(Z)
        scaler = ZScore.fit(Z) if normalize else None
        Zs = scaler.transform(Z) if scaler else Z
        mapper.fit(Zs, Y, groups=groups)
        if mapper.oof_decision_ is not None:
            from gfun.calibration import platt_posteriors

            oof = platt_posteriors(mapper.oof_decision_, mapper.platt_A_, mapper.platt_B_)
        Z = mapper.predict_proba(Zs)
        mapper.oof_decision_ = None  # transient: not worth keeping (or caching)
        release_free_memory()
        seconds[f"mapper_{view.letter}"] = time.perf_counter() - t0
    if getattr(view, "source_", None) is not None:
        view.source_ = None  # word-vector sources (possibly an encoder) are rebuilt on demand, never stored
    return view, np.asarray(Z), oof, mapper, scaler, seconds


_RUNTIME_PARAMS = ("n_jobs", "verbose")


def _branch_key(view: ViewGenerator, mapper: RBFSVMOvR | None, normalize: bool) -> dict:
    """What determines a branch's result, minus run-time settings (so that n_jobs does not miss the cache)."""

    def params(est: Any) -> dict:
        return {k: v for k, v in est.get_params().items() if k not in _RUNTIME_PARAMS}

    from gfun.text import ANALYZER_VERSION

    # "branch": the layout of what a branch returns; bump it when that changes, so old caches are not read
    # (3: mappers keep float32 support vectors)
    return {"branch": 3, "view": type(view).__name__, "params": params(view), "normalize": normalize,
            "analyzer": ANALYZER_VERSION, "mapper": params(mapper) if mapper is not None else None}


def _cached_branch(memory: Any) -> Any:
    """:func:`_fit_branch`, cached by ``memory`` (a path or a :class:`joblib.Memory`) when one is given.

    The returned function gives what :func:`_fit_branch` returns and whether it came from the cache.
    """
    import os

    from sklearn.utils.validation import check_memory

    memory = check_memory(os.fspath(memory) if isinstance(memory, os.PathLike) else memory)
    if memory.location is None:
        return lambda key, *args: (*_fit_branch(*args), False)
    cached = memory.cache(_cached_call, ignore=["view", "mapper"])

    def call(key: dict, view: ViewGenerator, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray,
             normalize: bool, mapper: RBFSVMOvR | None, groups: np.ndarray | None = None) -> tuple:
        args = (key, view, list(texts), np.asarray(langs, dtype=str), np.asarray(Y, dtype=np.int8), normalize,
                mapper, None if groups is None else np.asarray(groups, dtype=str))
        hit = cached.check_call_in_cache(*args)
        return (*cached(*args), hit)

    return call


def _cached_call(key: dict, view: ViewGenerator, texts: list[str], langs: np.ndarray, Y: np.ndarray,
                 normalize: bool, mapper: RBFSVMOvR | None, groups: np.ndarray | None = None) -> tuple:
    return _fit_branch(view, texts, np.asarray(langs, dtype=object), Y, normalize, mapper, groups)


class GeneralizedFunnelling(LabelPredictionsMixin, MacroF1ScoreMixin, ClassifierMixin, BaseEstimator):
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
        How the views of a document are combined before the meta-classifier (see :mod:`gfun.aggregation`).
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
        :func:`gfun.kernel_svm.validated_thresholds`). ``"auto"``: ``"validated"`` when ``meta_validation`` is
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
        ``"nystroem"`` (linear SVMs, slow): always approximate (see :class:`gfun.kernel_svm.RBFSVMOvR`).
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
        What ``wmean`` learned (see :func:`gfun.aggregation.fit_view_weights`): arrays (n_views, n_classes),
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
                 select_score: str = "f1", cv_groups: str | None = "auto",
                 block_l2: bool | None = None,
                 mapper_C: float | str = 1.0,
                 gamma: float | str = "scale", kernel_approximation: str | None = "auto", n_components: int = 1000,
                 max_memory: int | float | str = DEFAULT_MAX_MEMORY,
                 view_params: dict | None = None, memory: Any = None,
                 probability: bool = True, zero_shot_views: str | None = None, n_jobs: int | None = None,
                 random_state: int | np.random.RandomState | None = None, verbose: bool = False) -> None:
        _check_unique_names(views)  # two views with one name are refused here, not only at fit time
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

    def _check_view_params(self) -> dict[str, dict]:
        """``view_params``, checked: every name registered, every parameter one its view has."""
        extra = self.view_params or {}
        if not isinstance(extra, dict):
            raise TypeError(f"view_params must be a dict of view name -> parameters, got {type(extra).__name__}")
        configured = {} if isinstance(self.views, str) else {
            n: e for n, e in zip(view_names(self.views), self.views, strict=True) if not isinstance(e, str)}
        for name, params in extra.items():
            if name in configured:
                view = configured[name][1] if isinstance(configured[name], tuple) else configured[name]
                cls = type(view)
            else:
                cls = view_class(name)
            unknown = sorted(set(params or {}) - accepted_params(cls))
            if unknown:
                raise ValueError(f"view_params[{name!r}]: {cls.__name__} has no parameter(s) {unknown}; its "
                                 f"parameters: {sorted(accepted_params(cls))}")
        return extra

    def _named_views(self, spec: Any = None) -> list[tuple[str, ViewGenerator]]:
        """The configured views, unfitted, with their names (new objects: ``views`` is not modified)."""
        from sklearn.base import clone

        spec = self.views if spec is None else spec
        extra = self._check_view_params()
        entries = parse_views(spec) if isinstance(spec, str) else list(spec)
        out = []
        for name, entry in zip(view_names(spec), entries, strict=True):
            if isinstance(entry, str):
                view = make_view(name, defaults=self._view_defaults(name), **extra.get(name, {}))
            else:
                view = clone(entry[1] if isinstance(entry, tuple) else entry)
                if extra.get(name):
                    view.set_params(**extra[name])
                if self._train_posteriors() == "cv" and "train_posteriors" in view.get_params():
                    view.set_params(train_posteriors="cv")  # out-of-fold training posteriors for stack, wmean
            out.append((name, view))
        return out

    def _build_views(self, spec: Any = None) -> list[ViewGenerator]:
        """The configured views, unfitted (see :meth:`_named_views`)."""
        return [view for _, view in self._named_views(spec)]

    def _seed(self) -> int | None:
        """The seed of every component: ``random_state``, or the one a fit drew from a RandomState."""
        rs = self.random_state
        if rs is None or isinstance(rs, numbers.Integral):
            return rs
        seed = getattr(self, "random_seed_", None)
        if seed is None:
            raise ValueError("random_state is a RandomState: its seed is drawn by fit")
        return seed

    # ------------------------------------------------------------------ nested parameters
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The estimator's parameters; with ``deep``, also each view object of ``views`` (by name) and its
        parameters, as ``<name>__<parameter>`` (as :class:`sklearn.pipeline.Pipeline` does). A letters
        configuration has no view objects: :meth:`set_params` takes ``<letter>__<parameter>`` all the same."""
        out = super().get_params(deep=False)
        if not deep or isinstance(self.views, str):
            return out
        for name, entry in zip(view_names(self.views), self.views, strict=True):
            if isinstance(entry, str):
                continue
            view = entry[1] if isinstance(entry, tuple) else entry
            out[name] = view
            out.update({f"{name}__{k}": v for k, v in view.get_params(deep=True).items()})
        return out

    def set_params(self, **params: Any) -> GeneralizedFunnelling:
        """Set parameters, a view's as ``<name>__<parameter>`` (``m__source=...``) or a whole view as ``<name>``
        (for a list of named views). For a letters configuration a view's parameters go to ``view_params``."""
        mine = super().get_params(deep=False)
        own = {k: v for k, v in params.items() if "__" not in k and k in mine}
        nested: dict[str, dict[str, Any]] = {}
        replaced: dict[str, Any] = {}
        for key, value in params.items():
            if key in own:
                continue
            name, sep, sub = key.partition("__")
            if sep:
                nested.setdefault(name, {})[sub] = value
            else:
                replaced[name] = value
        super().set_params(**own)
        names = view_names(self.views)
        unknown = sorted((set(nested) | set(replaced)) - set(names))
        if unknown:
            raise ValueError(f"invalid parameter(s) {unknown} of GeneralizedFunnelling: no view is named "
                             f"{unknown[0]!r} (views: {names})")
        if isinstance(self.views, str) and replaced:
            raise ValueError(f"views={self.views!r} is a letters configuration: set a view's parameters "
                             f"(e.g. {sorted(replaced)[0]}__<parameter>), or give views as a list of (name, view)")
        entries = [self.views] if isinstance(self.views, str) else list(self.views)
        by_name = dict(zip(names, entries, strict=True)) if not isinstance(self.views, str) else {}
        extra = {k: dict(v) for k, v in (self.view_params or {}).items()}
        for name, sub in nested.items():
            entry = replaced.get(name, by_name.get(name, name))
            if isinstance(entry, str):  # a view built from its name: its parameters live in view_params
                extra.setdefault(name, {}).update(sub)
            else:
                (entry[1] if isinstance(entry, tuple) else entry).set_params(**sub)
        if extra != (self.view_params or {}):
            self.view_params = extra
        if replaced:
            self.views = [(n, replaced[n]) if n in replaced else e for n, e in zip(names, entries, strict=True)]
            view_names(self.views)
        self._check_view_params()
        return self

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
        if self.cv_groups is None:
            return None
        extra = getattr(X, "extra", None) or {}
        if self.cv_groups == "auto":
            if self.aggregation in ("mean", "concat"):  # the paper's policies keep the paper's plain folds
                return None
            name = next((f for f in PARALLEL_FIELDS if f in extra), None)
            if name is None:
                return None
        else:
            name = self.cv_groups
            if name not in extra:
                raise ValueError(f"cv_groups={name!r}: the training corpus has no such extra field "
                                 f"(it has {sorted(extra)})")
        groups = np.asarray([str(g) for g in extra[name]])
        if groups.shape != (n,):
            raise ValueError(f"cv_groups field {name!r} has {groups.size} values for {n} documents")
        return groups

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
            Zmeta = self._fit_select(train_mapped, val_mapped, Y)
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
        from gfun.calibration import fit_platt

        oof = getattr(meta, "oof_decision_", None)
        if oof is not None:
            meta.platt_A_, meta.platt_B_ = fit_platt(oof, Y, fit_intercept=False)
        else:  # no held-out scores (too few documents): the logistic of the decision score
            meta.platt_A_, meta.platt_B_ = np.full(Y.shape[1], -1.0), np.zeros(Y.shape[1])

    def _fit_meta(self, Zmeta: np.ndarray, Zval: np.ndarray | None, Y: np.ndarray, zscore: bool,
                  cv: int, final: bool = True) -> tuple[RBFSVMOvR, ZScore | None]:
        """The meta-classifier (and its input scaler) trained on ``Zmeta``, validated on ``Zval`` if given.

        ``final=False``: cross-validated only (:meth:`gfun.kernel_svm.RBFSVMOvR.validate`), no final models.
        """
        scaler = ZScore.fit(Zmeta) if zscore else None
        if scaler is not None:
            Zmeta = scaler.transform(Zmeta)
            Zval = scaler.transform(Zval) if Zval is not None else None
        meta = RBFSVMOvR(C=self.meta_C, C_grid=self.meta_C_grid, C_selection=self.meta_C_selection, cv=cv,
                         gamma=self.gamma, probability=self.probability, class_weight=self.meta_class_weight,
                         threshold=self._meta_threshold(), approximation=self.kernel_approximation,
                         n_components=self.n_components, max_memory=self.max_memory, n_jobs=self.n_jobs,
                         random_state=self._seed(),
                         verbose=self.verbose)
        (meta.fit if final else meta.validate)(Zmeta, Y, X_val=Zval, groups=self.groups_)
        return meta, scaler

    def _fit_select(self, train: list[np.ndarray], val: list[np.ndarray], Y: np.ndarray) -> np.ndarray:
        """``aggregation="select"``: choose the meta-level input by the meta-classifier's validated F1.

        Candidates, each the mean of the posteriors of a set of views: all views with the paper's
        normalisation (L2 per view, z-scored columns) and without any (Funnelling's raw posteriors); then,
        with the better of the two, every other non-empty set of views when there are at most
        :data:`SELECT_ALL_SUBSETS_UP_TO` views (a single view included: gFun-XMW can fall back to X alone),
        every set that leaves one view out beyond that. Each candidate's meta-classifier is trained on the
        training inputs (``train``: in-sample, as the paper's) and cross-validated with ``select_cv`` folds (one
        split shared by every candidate) on the out-of-fold inputs (``val``); its per-class thresholds are
        chosen by ``meta_threshold`` and validated cross-fitted (each fold judged with thresholds fitted on the
        others, :func:`gfun.kernel_svm.validated_thresholds`). A candidate is scored by ``select_score`` of
        those predictions. The kept candidate follows the one-standard-error rule (Breiman et al., 1984): the
        fewest views whose score is within one standard error (over folds) of the best candidate's, the best of
        those, so that a view must earn its place by more than the noise of the estimate. Only the kept
        candidate's final models are trained (the others stop after cross-validation). Returns the kept
        meta-classifier's training input.
        """
        from itertools import combinations

        from gfun.linear_svm import make_folds

        letters = self.view_names_
        everyone = np.ones(train[0].shape[0], dtype=bool)
        Yb = np.asarray(Y, dtype=bool)
        folds = make_folds(len(Yb), self.select_cv, self._seed(), self.groups_)  # the meta-classifier's
        score_of = _selection_score(self.select_score)
        candidates: list[tuple] = []
        tried: dict[str, float] = {}

        def attempt(subset: tuple[int, ...], l2: bool) -> None:
            norm = l2_normalize if l2 else (lambda z: z)
            tr = aggregate("mean", [norm(train[i]) for i in subset], [everyone] * len(subset))
            va = aggregate("mean", [norm(val[i]) for i in subset], [everyone] * len(subset))
            meta, scaler = self._fit_meta(tr, va, Y, l2, self.select_cv, final=False)
            if meta.validated_decision_ is None:  # too few documents to cross-validate
                score, se = 0.0, 0.0
            else:
                pred = meta.validated_decision_ > 0
                per_fold = [score_of(pred[te], Yb[te]) for _, te in folds]
                score = score_of(pred, Yb)
                se = float(np.std(per_fold, ddof=1) / np.sqrt(len(per_fold))) if len(per_fold) > 1 else 0.0
            meta.validated_decision_ = None  # free what the comparison no longer needs
            tried[_label([letters[i] for i in subset]) + ("" if l2 else " (raw)")] = score
            candidates.append((score, se, subset, l2, meta, scaler, tr))

        full = tuple(range(len(letters)))
        if self.normalize:
            attempt(full, True)
        attempt(full, False)
        l2 = max(candidates, key=lambda c: c[0])[3]
        if len(full) <= SELECT_ALL_SUBSETS_UP_TO:
            subsets = [c for size in range(len(full) - 1, 0, -1) for c in combinations(full, size)]
        else:
            subsets = [tuple(i for i in full if i != drop) for drop in full]
        for subset in subsets:
            attempt(subset, l2)
        # one-standard-error rule: the fewest views whose validated score is within one standard error (over
        # folds) of the best candidate's; among those, the best
        top = max(candidates, key=lambda c: c[0])
        near = [c for c in candidates if c[0] >= top[0] - top[1]]
        best = min(near, key=lambda c: (len(c[2]), -c[0]))
        _, _, subset, l2, meta, self.scaler_, Zmeta = best
        self.meta_ = meta.finish(self.scaler_.transform(Zmeta) if self.scaler_ is not None else Zmeta, Y)
        self.selected_views_ = [letters[i] for i in subset]
        self.selected_l2_ = bool(l2)
        self.selection_scores_ = tried
        if self.verbose:
            logger.info("select: validated %s %s; kept %s", self.select_score,
                        {k: round(v, 4) for k, v in tried.items()},
                        _label(self.selected_views_) + ("" if l2 else " (raw)"))
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
                    "served by %s)", _label(dropped).upper(), _label(self.selected_views_).upper())

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
                       f"only view(s) {names} of {_label(self.view_names_).upper()}")
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

    def _config_state(self) -> dict:
        """The parameters as JSON: a list of views as ``{"name", "view" (its class's registered name), "class",
        "params"}`` entries (the classes are looked up by registered name when loading, never imported)."""
        params = self.get_params(deep=False)
        params["memory"] = None  # a cache location is a property of the machine that fitted, not of the model
        params["random_state"] = self.random_seed_ if hasattr(self, "random_seed_") else params["random_state"]
        if not isinstance(self.views, str):
            entries = []
            for name, entry in zip(view_names(self.views), self.views, strict=True):
                if isinstance(entry, str):
                    entries.append({"name": name, "view": name})
                    continue
                view = entry[1] if isinstance(entry, tuple) else entry
                entries.append({"name": name, "view": _registered(view, name), "class": class_path(type(view)),
                                "params": view.get_params(deep=False)})
            params["views"] = entries
        return _jsonable(params)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "meta_")
        meta: dict = {"params": self._config_state(), "classes_": self.classes_,
                      "selected_views_": getattr(self, "selected_views_", None),
                      "selected_l2_": getattr(self, "selected_l2_", None),
                      "dropped_views_": list(getattr(self, "dropped_views_", [])),
                      "languages_": self.languages_, "n_meta_features_": self.n_meta_features_, "views": [],
                      "mappers": {}, "mapper_scalers": sorted(self.mapper_scalers_)}
        arrays: dict[str, np.ndarray] = {}
        for key, branches in (("views", self.branches_), ("fallback_views", self.fallback_branches_)):
            prefix = "view" if key == "views" else "fallback"
            meta[key] = []
            for b in branches:
                vmeta, varr = b.view.get_state()
                entry = {"letter": b.name, "state": vmeta}
                view = _registered(b.view, b.name)
                if view != b.name or view not in BUILTIN_VIEWS:  # built-in views keep the layout of gfun 0.1
                    entry.update(view=view, **{"class": class_path(type(b.view))})
                meta[key].append(entry)
                arrays.update({f"{prefix}/{b.name}/{k}": v for k, v in varr.items()})
        for name, mapper in self.mappers_.items():
            mmeta, marr = mapper.get_state()
            meta["mappers"][name] = mmeta
            arrays.update({f"mapper/{name}/{k}": v for k, v in marr.items()})
        for name, sc in self.mapper_scalers_.items():
            arrays[f"mapper_scaler/{name}/mean"] = sc.mean
            arrays[f"mapper_scaler/{name}/scale"] = sc.scale
        if getattr(self, "view_weights_", None) is not None:
            for name, arr in zip(("weights", "mean", "scale"), self.view_weights_, strict=True):
                arrays[f"view_weights/{name}"] = arr
        if self.scaler_ is not None:
            arrays["scaler/mean"] = self.scaler_.mean
            arrays["scaler/scale"] = self.scaler_.scale
        mmeta, marr = self.meta_.get_state()
        meta["meta"] = mmeta
        arrays.update({f"meta/{k}": v for k, v in marr.items()})
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> GeneralizedFunnelling:
        params = dict(meta["params"])
        params["meta_C_grid"] = tuple(params["meta_C_grid"])
        if not isinstance(params["views"], str):
            params["views"] = [
                e["name"] if "params" not in e else
                (e["name"], _view_class_of(e["view"], e.get("class"))(**e["params"])) for e in params["views"]]
        obj = cls(**params)
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.n_meta_features_ = int(meta["n_meta_features_"])
        obj.selected_views_ = meta.get("selected_views_") or [e["letter"] for e in meta["views"]]
        obj.selected_l2_ = meta.get("selected_l2_")
        obj.dropped_views_ = list(meta.get("dropped_views_") or [])
        obj.random_seed_ = params["random_state"]
        scalers = set(meta["mapper_scalers"])

        def branch(entry: dict, prefix: str) -> Branch:
            name = entry["letter"]
            view = _view_class_of(entry.get("view", name), entry.get("class")).from_state(
                entry["state"], sub_arrays(arrays, f"{prefix}/{name}/"))
            mapper = (RBFSVMOvR.from_state(meta["mappers"][name], sub_arrays(arrays, f"mapper/{name}/"))
                      if name in meta["mappers"] else None)
            scaler = (ZScore(arrays[f"mapper_scaler/{name}/mean"], arrays[f"mapper_scaler/{name}/scale"])
                      if name in scalers else None)
            return Branch(name, view, mapper, scaler, normalize=obj.normalize)

        obj.branches_ = [branch(e, "view") for e in meta["views"]]
        obj.views_ = [b.view for b in obj.branches_]
        obj.fallback_branches_ = [branch(e, "fallback") for e in meta.get("fallback_views", [])]
        obj.scaler_ = ZScore(arrays["scaler/mean"], arrays["scaler/scale"]) if "scaler/mean" in arrays else None
        obj.view_weights_ = (tuple(arrays[f"view_weights/{k}"] for k in ("weights", "mean", "scale"))
                             if "view_weights/weights" in arrays else None)
        obj.meta_ = RBFSVMOvR.from_state(meta["meta"], sub_arrays(arrays, "meta/"))
        obj.timings_ = {}
        return obj


def _registered(view: ViewGenerator, name: str) -> str:
    """The name ``view``'s class is registered under (how a saved model refers to it)."""
    registered = registered_name(type(view), prefer=name)
    if registered is None:
        raise ValueError(f"cannot save view {name!r}: its class {class_path(type(view))} is not registered; "
                         f"gfun.register_view({name!r}, {type(view).__name__}) gives it a name (and loading the model "
                         "needs the same registration)")
    return registered


def _view_class_of(name: str, path: str | None) -> type[ViewGenerator]:
    """The registered view class a saved model names (``path``: the class's import path when it was saved)."""
    from gfun.errors import UnregisteredViewError

    cls = VIEW_CLASSES.get(name)
    if cls is None:
        raise UnregisteredViewError(
            f"the model has a view of class {path or '?'} registered as {name!r}, and no view is registered under "
            f"that name here: import the class and call gfun.register_view({name!r}, <class>) before loading "
            "(a saved model never imports or unpickles code)")
    if path is not None and class_path(cls) != path:
        raise UnregisteredViewError(
            f"the model's view {name!r} was saved from class {path}, but {name!r} is registered here as "
            f"{class_path(cls)}: register the same class before loading")
    return cls


def _jsonable(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, tuple):
            v = list(v)
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out
