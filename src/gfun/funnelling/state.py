"""How a fitted :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` is written as a state (JSON-able metadata
and named arrays, see :mod:`gfun.persistence`) and rebuilt from one.

Views are referred to by their registered name (and class path, checked on loading): a saved model never
imports or unpickles code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from gfun.core.state import checked_array, load_state, put_state, put_states
from gfun.funnelling.branch import Branch
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.funnelling.policies import make_aggregation
from gfun.funnelling.view_spec import registered_view_name, saved_view_class, view_names
from gfun.svm.kernel import RBFSVMOvR
from gfun.views import BUILTIN_VIEWS, class_path
from gfun.views.normalization import ZScore

__all__ = ["FunnellingStateMixin"]


class FunnellingStateMixin:
    """``get_state`` / ``from_state`` of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`."""

    def _config_state(self) -> dict:
        """The parameters as JSON: a list of views as ``{"name", "view" (its class's registered name), "class",
        "params"}`` entries (the classes are looked up by registered name when loading, never imported); the nested
        estimators as ``{"params": {...}}`` (``aggregation`` as ``{"policy", "params"}``)."""
        params = self.get_params(deep=False)
        params["memory"] = None  # a cache location is a property of the machine that fitted, not of the model
        params["random_state"] = self.random_seed_ if hasattr(self, "random_seed_") else params["random_state"]
        for name in ("meta", "mapper"):
            if params[name] is not None:
                params[name] = {"params": _jsonable(params[name].get_params(deep=False))}
        if not isinstance(params["aggregation"], str):
            policy = params["aggregation"]
            params["aggregation"] = {"policy": policy.name, "params": _jsonable(policy.get_params(deep=False))}
        if not isinstance(self.views, str):
            entries = []
            for name, entry in zip(view_names(self.views), self.views, strict=True):
                if isinstance(entry, str):
                    entries.append({"name": name, "view": name})
                    continue
                view = entry[1] if isinstance(entry, tuple) else entry
                entries.append({"name": name, "view": registered_view_name(view, name), "class": class_path(type(view)),
                                "params": view.get_params(deep=False)})
            params["views"] = entries
        return _jsonable(params)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        check_is_fitted(self, "meta_")
        policy_meta, arrays = self.aggregation_.get_state()
        meta: dict = {"params": self._config_state(), "classes_": self.classes_,
                      "selected_views_": self.selected_views_, **policy_meta,
                      "dropped_views_": list(self.dropped_views_),
                      "languages_": self.languages_, "n_meta_features_": self.n_meta_features_, "views": [],
                      "mappers": {}, "mapper_scalers": sorted(self.mapper_scalers_)}
        arrays = dict(arrays)
        for key, branches in (("views", self.branches_), ("fallback_views", self.fallback_branches_)):
            prefix = "view" if key == "views" else "fallback"
            meta[key] = []
            for b in branches:
                entry = {"letter": b.name, "state": put_state(b.view, f"{prefix}/{b.name}/", arrays)}
                view = registered_view_name(b.view, b.name)
                if view != b.name or view not in BUILTIN_VIEWS:  # a built-in view under its letter: the letter
                    entry.update(view=view, **{"class": class_path(type(b.view))})
                meta[key].append(entry)
        meta["mappers"] = put_states(self.mappers_, "mapper/{}/", arrays)
        for name, sc in self.mapper_scalers_.items():
            arrays[f"mapper_scaler/{name}/mean"] = sc.mean
            arrays[f"mapper_scaler/{name}/scale"] = sc.scale
        if self.scaler_ is not None:
            arrays["scaler/mean"] = self.scaler_.mean
            arrays["scaler/scale"] = self.scaler_.scale
        if getattr(self, "meta_input_mean_", None) is not None:
            arrays["meta_input/mean"] = self.meta_input_mean_
        meta["meta"] = put_state(self.meta_, "meta/", arrays)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> Any:
        params = dict(meta["params"])
        for name, factory in (("meta", default_meta), ("mapper", default_mapper)):
            if isinstance(params.get(name), dict):
                saved = dict(params[name]["params"])
                if "C_grid" in saved:
                    saved["C_grid"] = tuple(saved["C_grid"])
                params[name] = factory().set_params(**saved)
        if isinstance(params.get("aggregation"), dict):
            entry = params["aggregation"]
            params["aggregation"] = make_aggregation(entry["policy"]).set_params(**entry["params"])
        if not isinstance(params["views"], str):
            params["views"] = [
                e["name"] if "params" not in e else
                (e["name"], saved_view_class(e["view"], e.get("class"))(**e["params"])) for e in params["views"]]
        obj = cls(**params)
        obj.classes_ = list(meta["classes_"])
        obj.languages_ = list(meta["languages_"])
        obj.n_meta_features_ = int(meta["n_meta_features_"])
        obj.selected_views_ = list(meta["selected_views_"])
        obj.dropped_views_ = list(meta["dropped_views_"])
        obj.random_seed_ = params["random_state"]
        scalers = set(meta["mapper_scalers"])
        n_classes = len(obj.classes_)

        def branch(entry: dict, prefix: str) -> Branch:
            name = entry["letter"]
            view = load_state(saved_view_class(entry.get("view", name), entry.get("class")), entry["state"], arrays,
                              f"{prefix}/{name}/")
            mapper = scaler = None
            if name in meta["mappers"]:  # the mapper gives one posterior per class of the model
                checked_array(arrays, f"mapper/{name}/intercept_", (n_classes,), what="one value per class")
                mapper = load_state(RBFSVMOvR, meta["mappers"][name], arrays, f"mapper/{name}/")
            if name in scalers:
                width = (mapper.n_features_in_,) if mapper is not None else (None,)
                scaler = ZScore(*(checked_array(arrays, f"mapper_scaler/{name}/{k}", width, what="one value per "
                                                "feature of the mapper") for k in ("mean", "scale")))
            return Branch(name, view, mapper, scaler, normalize=obj.normalize)

        obj.branches_ = [branch(e, "view") for e in meta["views"]]
        obj.views_ = [b.view for b in obj.branches_]
        obj.fallback_branches_ = [branch(e, "fallback") for e in meta["fallback_views"]]
        obj.scaler_ = (ZScore(*(checked_array(arrays, f"scaler/{k}", (obj.n_meta_features_,),
                                              what="one value per meta-feature") for k in ("mean", "scale")))
                       if "scaler/mean" in arrays else None)
        # the meta-classifier's average training input (explanations read it), unknown for some models without
        # z-scoring (see gfun.persistence.legacy)
        obj.meta_input_mean_ = (checked_array(arrays, "meta_input/mean", (obj.n_meta_features_,),
                                              what="one value per meta-feature") if "meta_input/mean" in arrays
                                else None)
        policy = obj._policy()
        obj.aggregation_ = type(policy).from_state(policy.get_params(deep=False), meta, arrays,
                                                   kept=[n for n in obj.selected_views_ if n in obj.view_names_])
        # the meta-classifier: one decision (and Platt sigmoid) per class, support vectors in the meta-feature space
        checked_array(arrays, "meta/intercept_", (n_classes,), what="one value per class")
        checked_array(arrays, "meta/support_vectors_", (None, obj.n_meta_features_), what="one column per "
                      "meta-feature")
        obj.meta_ = load_state(RBFSVMOvR, meta["meta"], arrays, "meta/")
        obj.timings_ = {}
        return obj


def _jsonable(params: dict) -> dict:
    out = {}
    for k, v in params.items():
        if isinstance(v, tuple):
            v = list(v)
        elif isinstance(v, np.generic):
            v = v.item()
        out[k] = v
    return out

