"""How a fitted :class:`~gfun.funnelling.generalized.GeneralizedFunnelling` is written as a state (JSON-able metadata and
named arrays, see :mod:`gfun.persistence`) and rebuilt from one.

Views are referred to by their registered name (and class path, checked on loading): a saved model never
imports or unpickles code.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.validation import check_is_fitted

from gfun.core.state import load_state, put_state, put_states
from gfun.funnelling.branch import Branch
from gfun.funnelling.view_spec import registered_view_name, saved_view_class, view_names
from gfun.svm.kernel import RBFSVMOvR
from gfun.views import BUILTIN_VIEWS, class_path
from gfun.views.normalization import ZScore

__all__ = ["FunnellingStateMixin"]


class FunnellingStateMixin:
    """``get_state`` / ``from_state`` of :class:`~gfun.funnelling.generalized.GeneralizedFunnelling`."""

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
                entries.append({"name": name, "view": registered_view_name(view, name), "class": class_path(type(view)),
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
                entry = {"letter": b.name, "state": put_state(b.view, f"{prefix}/{b.name}/", arrays)}
                view = registered_view_name(b.view, b.name)
                if view != b.name or view not in BUILTIN_VIEWS:  # built-in views keep the layout of gfun 0.1
                    entry.update(view=view, **{"class": class_path(type(b.view))})
                meta[key].append(entry)
        meta["mappers"] = put_states(self.mappers_, "mapper/{}/", arrays)
        for name, sc in self.mapper_scalers_.items():
            arrays[f"mapper_scaler/{name}/mean"] = sc.mean
            arrays[f"mapper_scaler/{name}/scale"] = sc.scale
        if getattr(self, "view_weights_", None) is not None:
            for name, arr in zip(("weights", "mean", "scale"), self.view_weights_, strict=True):
                arrays[f"view_weights/{name}"] = arr
        if self.scaler_ is not None:
            arrays["scaler/mean"] = self.scaler_.mean
            arrays["scaler/scale"] = self.scaler_.scale
        meta["meta"] = put_state(self.meta_, "meta/", arrays)
        return meta, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> Any:
        params = dict(meta["params"])
        params["meta_C_grid"] = tuple(params["meta_C_grid"])
        if not isinstance(params["views"], str):
            params["views"] = [
                e["name"] if "params" not in e else
                (e["name"], saved_view_class(e["view"], e.get("class"))(**e["params"])) for e in params["views"]]
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
            view = load_state(saved_view_class(entry.get("view", name), entry.get("class")), entry["state"], arrays,
                              f"{prefix}/{name}/")
            mapper = (load_state(RBFSVMOvR, meta["mappers"][name], arrays, f"mapper/{name}/")
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

