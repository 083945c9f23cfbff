"""Experiment configurations named as in the paper: ``naive``, ``fun``, ``bert``, ``upper``, gFun view letters.

A configuration name is ``naive``, ``fun``, ``bert`` (the fine-tuned transformer baseline, the paper's mBERT
row), ``upper`` (alias ``upperbound``: the paper's UpperBound, parallel datasets only, see
:class:`gfun.baselines.UpperBoundClassifier`) or a string of gFun view letters (``x``, ``w``, ``xm``, ``xmw``,
``xmb``, ...) optionally followed by ``-mean``, ``-concat``, ``-stack``, ``-wmean`` or ``-select`` (the
aggregation, see :mod:`gfun.aggregation`; without a suffix, the estimator's default). With the recurrent view
``r`` the letters end in ``_m`` (R_M: GRU over word vectors, the default) or ``_mw`` (R_MW: word vectors +
WCEs), e.g. ``r_mw``, ``xbr_m``, as in the paper's section 5.

:func:`parse_configs` checks a whole list at once (every bad name in one error, with the valid ones) and logs
every name it canonicalises (``mx`` runs and is reported as ``xm``, ``r`` as ``r_m``, ``upperbound`` as
``upper``): the name in the tables and file names is always the canonical one, never silently another.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gfun.aggregation import AGGREGATIONS, DEFAULT_AGGREGATION

__all__ = ["Config", "PARALLEL_DATASETS", "UNAVAILABLE_VIEWS", "build_estimator", "check_configs_for_dataset",
           "config_names_help", "parse_config", "parse_configs"]

logger = logging.getLogger(__name__)

#: View letters of the paper that gfun does not implement yet, with the reason shown to the user (none left).
UNAVAILABLE_VIEWS: dict[str, str] = {}

_BASELINES = {"naive": "Naive", "fun": "Fun", "bert": "BERT (fine-tuned)", "upper": "UpperBound",
              "lri": "LRI", "clesa": "CLESA", "kcca": "KCCA", "dci": "DCI"}  # the last four: gfun.crosslingual
#: Other spellings of configuration names -> the canonical name.
_ALIASES = {"upperbound": "upper", "upper-bound": "upper", "gfun": "x", "gfun-x": "x"}
#: Datasets whose every document has an English version (``extra["text_en"]``), which ``upper`` needs.
PARALLEL_DATASETS: tuple[str, ...] = ("debtags", "sib200")
#: Variants of the recurrent view: suffix -> whether WCEs are concatenated to the word vectors.
_R_VARIANTS = {"m": False, "mw": True}
_AGGREGATIONS = AGGREGATIONS


@dataclass(frozen=True)
class Config:
    """One experiment configuration.

    Attributes
    ----------
    name : str
        Canonical name (``"naive"``, ``"fun"``, ``"xmw"``, ``"xm-concat"``); used in file names.
    method : {"naive", "fun", "bert", "upper", "gfun"}
    views : str
        gFun view letters in canonical (paper) order, ``""`` for the baselines.
    aggregation : {"mean", "concat", "stack", "wmean"}
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
        if self.method in _BASELINES:
            return _BASELINES[self.method]
        label = f"gFun-{self.views.upper()}" + (("_MW" if self.r_wce else "_M") if "r" in self.views else "")
        return f"{label} ({self.aggregation})" if self.name.endswith(tuple(f"-{a}" for a in _AGGREGATIONS)) else label

    @property
    def group(self) -> str:
        """Group of the paper's tables: ``baselines`` or ``gFun, k view(s)``."""
        if self.method in _BASELINES:
            return "baselines"
        k = len(self.views)
        return f"gFun, {k} view{'s' if k > 1 else ''}"

    @property
    def serves_unseen(self) -> bool:
        """Whether the configuration can classify documents of a language absent from training.

        Naive and gFun configurations made of views that need training documents of the language (X, W)
        cannot; a gFun configuration with M (aligned word embeddings), B (multilingual transformer) or
        R (recurrent network over aligned word vectors) can, with any aggregation but ``concat``; so can the fine-tuned
        transformer baseline, and Fun in the zero-shot experiment, through its auxiliary M classifier
        (``build_estimator(zero_shot=True)``).
        """
        # clesa, kcca: the languages of their parallel collection
        if self.method in ("bert", "fun", "upper", "clesa", "kcca"):
            return True
        zero_shot = set(self.views) & set("mbr")
        return self.method == "gfun" and bool(zero_shot) and (self.aggregation != "concat"
                                                              or set(self.views) <= set("mbr"))


def _view_order() -> str:
    from gfun.views import VIEW_CLASSES

    return "".join(VIEW_CLASSES)


def parse_config(spec: str) -> Config:
    """A :class:`Config` from its name.

    Raises
    ------
    ValueError
        On an unknown name, an unknown or repeated view letter, or a view not available yet (``b``).
    """
    text = spec.strip().lower()
    if not text:
        raise ValueError("empty configuration name")
    text = _ALIASES.get(text, text)
    if text in _BASELINES:
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
    if aggregation not in _AGGREGATIONS:
        raise ValueError(f"configuration {spec!r}: aggregation must be one of {_AGGREGATIONS}, got {aggregation!r}")
    for letter in views:
        if letter in UNAVAILABLE_VIEWS:
            raise ValueError(f"configuration {spec!r}: {UNAVAILABLE_VIEWS[letter]}; drop it from --configs")
    order = _view_order()
    unknown = [c for c in views if c not in order]
    if unknown or not views:
        raise ValueError(f"unknown configuration {spec!r}: expected {', '.join(_BASELINES)}, or gFun view letters "
                         f"from {order!r} (e.g. x, xm, xmw), optionally with -{' / -'.join(_AGGREGATIONS)}")
    if len(set(views)) != len(views):
        raise ValueError(f"configuration {spec!r}: view letters repeat")
    views = "".join(c for c in order if c in views)
    r_wce = _R_VARIANTS[variant or "m"]
    stem = f"{views}_{'mw' if r_wce else 'm'}" if "r" in views else views
    name = f"{stem}-{aggregation}" if explicit else stem
    return Config(name, "gfun", views, aggregation, r_wce)


def config_names_help() -> str:
    """The valid configuration names, in words (for error messages and ``--help``)."""
    order = _view_order()
    return (f"{', '.join(_BASELINES)} (alias {', '.join(k for k, v in _ALIASES.items() if v in _BASELINES)}), or "
            f"gFun view letters from {order!r} in any order without repeats (x, m, w, xm, xmw, xmb, ...; with r: "
            f"r_m, r_mw, xr_mw, xbr_m, ...), optionally followed by -{', -'.join(_AGGREGATIONS)}")


def parse_configs(specs: str | Sequence[str]) -> list[Config]:
    """Configurations from a comma-separated list (or a sequence of names), duplicates removed.

    Every name is checked before any is returned; names that are canonicalised (``mx`` -> ``xm``) are logged.

    Raises
    ------
    ValueError
        Listing every bad name of the list with the reason, and the valid names.
    """
    from gfun.experiments.keys import check_key_value

    items = specs.split(",") if isinstance(specs, str) else list(specs)
    out: list[Config] = []
    errors: list[str] = []
    for item in items:
        if not item.strip():
            continue
        try:
            cfg = parse_config(item)
            check_key_value("config", cfg.name)
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
    if any(c.method == "upper" for c in configs) and dataset not in PARALLEL_DATASETS:
        raise ValueError(f"configuration 'upper' (UpperBound) needs the English version of every document, which "
                         f"only the parallel datasets {', '.join(PARALLEL_DATASETS)} provide; {dataset!r} does not: "
                         "drop 'upper' from --configs")
    if dataset in PARALLEL_DATASETS:
        return
    for c in configs:
        if c.method in ("clesa", "kcca") and (view_params or {}).get(c.method, {}).get("parallel", "auto") == "auto":
            raise ValueError(f"configuration {c.name!r} ({c.display}) needs a parallel collection: by default the "
                             f"translations of the training documents, which only the parallel datasets "
                             f"{', '.join(PARALLEL_DATASETS)} provide; for {dataset!r} pass one "
                             f"(--view-param {c.method}.parallel=PATH, a JSONL file of "
                             "gfun.crosslingual.ParallelCollection.to_jsonl) or drop it from --configs")


def build_estimator(config: Config, *, meta_C: float | str = "cv", random_state: int | None = 0,
                    n_jobs: int | None = None, view_params: dict | None = None, memory: Any = None,
                    zero_shot: bool = False) -> Any:
    """The unfitted estimator of a configuration.

    Parameters
    ----------
    config : Config
    meta_C : float or "cv"
        C of the meta-classifier (of the linear SVMs for Naive).
    random_state : int, optional
    n_jobs : int, optional
    view_params : dict, optional
        Extra parameters per view letter (e.g. ``{"m": {"source": "vec:DIR"}}``); the ``bert`` baseline takes
        the B view's (``{"b": {"model": ..., "preset": "cpu"}}``).
    memory : path or joblib.Memory, optional
        Cache of fitted views shared by the configurations of a run (see ``GeneralizedFunnelling``).
    zero_shot : bool
        Build Fun as in the zero-shot experiments of Esuli et al. (2019), which the paper compares with: an
        auxiliary classifier on the M view (``view_params["m"]``) serves the languages without training data.
    """
    from gfun.baselines import FineTunedTransformerClassifier, NaiveClassifier, UpperBoundClassifier, make_fun
    from gfun.funnelling import GeneralizedFunnelling

    if config.method == "naive":
        return NaiveClassifier(C=meta_C, n_jobs=n_jobs, random_state=random_state)
    if config.method == "upper":
        return UpperBoundClassifier(C=meta_C, n_jobs=n_jobs, random_state=random_state)
    if config.method in ("lri", "clesa", "kcca", "dci"):  # view_params[name]: e.g. {"kcca": {"parallel": path}}
        from gfun.crosslingual import make_crosslingual

        return make_crosslingual(config.method, C=meta_C, n_jobs=n_jobs, random_state=random_state,
                                 **(view_params or {}).get(config.method, {}))
    if config.method == "fun":
        extra = {}
        if zero_shot:
            extra = {"zero_shot_views": "m", "view_params": {k: v for k, v in (view_params or {}).items() if k == "m"}
                     or None}
        return make_fun(meta_C=meta_C, n_jobs=n_jobs, random_state=random_state, memory=memory, **extra)
    frozen_cache = getattr(memory, "location", memory)  # the B view and bert share their frozen pass there
    if config.method == "bert":
        bparams = dict((view_params or {}).get("b", {}))
        bparams.setdefault("random_state", random_state)
        if frozen_cache:
            bparams.setdefault("frozen_cache", str(frozen_cache))
        return FineTunedTransformerClassifier(**bparams)
    params = {k: dict(v) for k, v in (view_params or {}).items() if k in config.views}
    if "b" in config.views and frozen_cache:
        params.setdefault("b", {}).setdefault("frozen_cache", str(frozen_cache))
    if "r" in config.views:
        params["r"] = {"wce": config.r_wce, **params.get("r", {})}
    return GeneralizedFunnelling(views=config.views, aggregation=config.aggregation, meta_C=meta_C,
                                 view_params=params or None, n_jobs=n_jobs, random_state=random_state,
                                 memory=memory)
