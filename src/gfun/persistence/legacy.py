"""Every older shape of a saved state, brought to today's in one place: the rest of gfun reads only today's.

A saved model has format version :data:`~gfun.persistence.directory.FORMAT_VERSION`; gfun wrote that version's
states in several shapes as its estimators gained parameters and fitted attributes. :func:`upgrade` rewrites the
state of any of them (JSON metadata and named arrays) into the shape today's ``from_state`` methods read, by
:data:`UPGRADES` chosen by the manifest's format version, so that a loaded model decides exactly as when it was
saved. Each step fills in what the older shape lacked with the value that reproduces the older behaviour:

* :func:`nested_params` - the flat constructor parameters of :class:`~gfun.funnelling.generalized.
  GeneralizedFunnelling` (``meta_C``, ``mapper_C``, ``select_cv``, ...) become its nested ``meta``, ``mapper`` and
  ``aggregation`` estimators;
* a model without ``meta_input/mean`` (the meta-classifier's average training input that explanations read) gets
  its input z-scoring's mean, the same numbers; without ``selected_views_`` / ``dropped_views_`` / ``selected_l2_``
  the views it has, none dropped, ``select``'s raw form;
* a per-language TF-IDF state without ``segment`` keeps runs of text whole (``segment=False``);
* a recurrent view without ``hidden_size_`` had the parameter's value;
* an E view without ``learner`` learned by linear SVMs (``learner="svm"``);
* an UpperBound without ``train_languages_`` has none recorded;
* the flat TF-IDF and SVM parameters of the Naive, UpperBound and cross-lingual baselines (``C``, ``C_grid``,
  ``cv``, ``loss``, ``class_weight``, ``min_df``, ``stopwords``, ``stem``) become their nested ``tfidf`` and
  ``classifier`` parts (:func:`nested_parts`).

Upgrades work on the JSON and the arrays only (no estimator is imported), and leave anything they do not recognise
as it is: a damaged state is still reported by the loader, naming its field.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = ["UPGRADES", "nested_params", "nested_parts", "upgrade"]


def upgrade(estimator: str, meta: dict, arrays: dict[str, np.ndarray], *, format_version: int = 1
            ) -> tuple[dict, dict[str, np.ndarray]]:
    """The state of a model of class ``estimator`` (its manifest's name) saved in format ``format_version``, in
    today's shape (``meta`` and ``arrays`` are changed in place and returned)."""
    for step in UPGRADES.get(format_version, ()) if isinstance(meta, dict) else ():
        try:
            step(estimator, meta, arrays)
        except (AttributeError, TypeError, KeyError, ValueError):  # not a shape gfun wrote: the loader names the
            pass  # damaged field when it reads it
    return meta, arrays


def _funnelling(estimator: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """The model-level shape of GeneralizedFunnelling (nested parameters, every fitted attribute recorded)."""
    if estimator != "GeneralizedFunnelling" or not isinstance(meta.get("params"), dict):
        return
    if "meta_C" in meta["params"]:
        meta["params"] = nested_params(meta["params"])
    views = meta.get("views")
    if not meta.get("selected_views_") and isinstance(views, list):
        meta["selected_views_"] = [e.get("letter") for e in views if isinstance(e, dict)]
    if meta.get("dropped_views_") is None:
        meta["dropped_views_"] = []
    if meta.get("selected_l2_") is None:
        meta["selected_l2_"] = False
    meta.setdefault("fallback_views", [])
    if "meta_input/mean" not in arrays and "scaler/mean" in arrays:
        arrays["meta_input/mean"] = np.asarray(arrays["scaler/mean"], dtype=np.float64)
    for entry in views if isinstance(views, list) else ():
        if not isinstance(entry, dict):
            continue
        state = entry.get("state")
        if (entry.get("view", entry.get("letter")) == "r" and isinstance(state, dict)
                and isinstance(state.get("params"), dict) and "hidden_size" in state["params"]):
            state.setdefault("hidden_size_", state["params"]["hidden_size"])
        if (entry.get("view", entry.get("letter")) == "e" and isinstance(state, dict)
                and isinstance(state.get("params"), dict)):
            state["params"].setdefault("learner", "svm")


def _tfidf(estimator: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Per-language TF-IDF states saved before ``segment``: runs of text stay whole."""
    for state in _dicts(meta):
        if state.get("format") == "gfun.text.TfidfVectorizer" and isinstance(state.get("params"), dict):
            state["params"].setdefault("segment", False)


def _upper_bound(estimator: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    if estimator == "UpperBoundClassifier":
        meta.setdefault("train_languages_", [])


#: The baselines built from a ``tfidf`` and a ``classifier`` part, with the default TF-IDF ``min_df`` of each.
_PART_BASELINES = {"NaiveClassifier": 1, "UpperBoundClassifier": 1, "LRIClassifier": 1, "CLESAClassifier": 1,
                   "KCCAClassifier": 2, "DCIClassifier": 1}
_CLASSIFIER_FLAT = ("C", "C_grid", "cv", "loss", "class_weight")
_TFIDF_FLAT = ("min_df", "stopwords", "stem")


def nested_parts(flat: dict[str, Any], default_min_df: int = 1) -> dict[str, Any]:
    """The saved parameters of a baseline built from parts (``tfidf`` and ``classifier`` as ``{"params"}``) from the
    flat parameters it had before: each flat parameter becomes the parameter of the part it configured."""
    out = {k: v for k, v in flat.items() if k not in _CLASSIFIER_FLAT + _TFIDF_FLAT}
    out["classifier"] = {"params": {k: flat[k] for k in _CLASSIFIER_FLAT if k in flat}}
    out["tfidf"] = {"params": {"min_df": default_min_df, **{k: flat[k] for k in _TFIDF_FLAT if k in flat}}}
    return out


def _baseline_parts(estimator: str, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    params = meta.get("params")
    if estimator in _PART_BASELINES and isinstance(params, dict) and "classifier" not in params:
        meta["params"] = nested_parts(params, _PART_BASELINES[estimator])


#: The upgrades of each format version, in order.
UPGRADES: dict[int, tuple[Callable[[str, dict, dict[str, np.ndarray]], None], ...]] = {
    1: (_funnelling, _tfidf, _upper_bound, _baseline_parts)}


def _dicts(node: Any) -> Iterator[dict]:
    """Every JSON object inside ``node`` (lists of plain values, such as vocabularies, are not walked)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(v for v in item.values() if isinstance(v, dict | list))
        elif isinstance(item, list) and item and isinstance(item[0], dict | list):
            stack.extend(item)


#: The flat parameters of the earlier constructor that went to the meta-classifier, the mappers or both.
_META_FLAT = {"meta_C": "C", "meta_C_grid": "C_grid", "meta_C_selection": "C_selection", "meta_cv": "cv",
              "meta_class_weight": "class_weight", "meta_threshold": "threshold", "probability": "probability"}
_SHARED_FLAT = {"gamma": "gamma", "kernel_approximation": "approximation", "n_components": "n_components",
                "max_memory": "max_memory"}
_POLICY_FLAT = {"train_posteriors": "train_posteriors", "meta_validation": "validation", "meta_zscore": "zscore",
                "block_l2": "block_l2"}
_SELECT_FLAT = {"select_cv": "cv", "select_score": "score", "select_average": "average"}


def nested_params(flat: dict[str, Any]) -> dict[str, Any]:
    """The saved parameters of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` (as ``get_state`` writes
    them: ``meta`` and ``mapper`` as ``{"params"}``, ``aggregation`` as ``{"policy", "params"}``) from the flat
    parameters of a model saved before the meta-classifier, the mappers and the aggregation policy became nested
    estimators.

    Every flat parameter becomes the parameter of the nested estimator it configured, so the loaded model predicts
    exactly as it did.
    """
    flat = dict(flat)
    meta = {new: flat.pop(old) for old, new in _META_FLAT.items() if old in flat}
    mapper = {"C": flat.pop("mapper_C", 1.0)}
    for old, new in _SHARED_FLAT.items():
        if old in flat:
            meta[new] = mapper[new] = flat[old]
            flat.pop(old)
    for key in ("C_grid", "C_selection"):
        if key in meta:
            mapper[key] = meta[key]
    cv = flat.pop("cv", 5)
    mapper["cv"] = cv
    policy_name = flat.pop("aggregation", "select")
    policy = {new: flat.pop(old) for old, new in _POLICY_FLAT.items() if old in flat}
    select = {new: flat.pop(old) for old, new in _SELECT_FLAT.items() if old in flat}
    view_params = {k: dict(v) for k, v in (flat.pop("view_params", None) or {}).items()}
    first_tier_C = flat.pop("first_tier_C", 1.0)
    views = flat["views"]
    letters = isinstance(views, str)
    if letters and "x" in views.lower():
        x = view_params.setdefault("x", {})
        x.setdefault("C", first_tier_C)
        x.setdefault("cv", cv)
    if letters and "w" in views.lower():
        view_params.setdefault("w", {}).setdefault("cv", cv)
    out = {k: flat[k] for k in ("views", "normalize", "cv_groups", "zero_shot_views", "memory", "n_jobs",
                                "random_state", "verbose") if k in flat}
    out.update(view_params=view_params or None,
               aggregation={"policy": policy_name, "params": {**policy, **(select if policy_name == "select" else {})}},
               meta={"params": meta}, mapper={"params": mapper})
    return out
