"""Experiment configurations named as in the paper: ``naive``, ``fun`` and gFun view letters.

A configuration name is ``naive``, ``fun`` or a string of gFun view letters (``x``, ``w``, ``xm``,
``xmw``, ...) optionally followed by ``-mean`` or ``-concat`` (the aggregation; ``mean`` by default).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Config", "UNAVAILABLE_VIEWS", "build_estimator", "parse_config", "parse_configs"]

#: View letters of the paper that gfun does not implement yet, with the reason shown to the user.
UNAVAILABLE_VIEWS: dict[str, str] = {
    "b": "the B view (fine-tuned multilingual transformer) is not available in gfun yet",
    "r": "the R view (recurrent network over word embeddings) is not available in gfun yet",
}

_BASELINES = {"naive": "Naive", "fun": "Fun"}
_AGGREGATIONS = ("mean", "concat")


@dataclass(frozen=True)
class Config:
    """One experiment configuration.

    Attributes
    ----------
    name : str
        Canonical name (``"naive"``, ``"fun"``, ``"xmw"``, ``"xm-concat"``); used in file names.
    method : {"naive", "fun", "gfun"}
    views : str
        gFun view letters in canonical (paper) order, ``""`` for the baselines.
    aggregation : {"mean", "concat"}
    """

    name: str
    method: str
    views: str = ""
    aggregation: str = "mean"

    @property
    def display(self) -> str:
        """Name as printed in tables: ``Naive``, ``Fun``, ``gFun-XMW``, ``gFun-XM (concat)``."""
        if self.method in _BASELINES:
            return _BASELINES[self.method]
        label = f"gFun-{self.views.upper()}"
        return f"{label} ({self.aggregation})" if self.name.endswith(("-mean", "-concat")) else label

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
        cannot; a gFun configuration with M (aligned word embeddings) can, with ``mean`` aggregation; Fun can
        in the zero-shot experiment, through its auxiliary M classifier (``build_estimator(zero_shot=True)``).
        """
        if self.method == "fun":
            return True
        return self.method == "gfun" and "m" in self.views and (self.aggregation == "mean" or self.views == "m")


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
    if text in _BASELINES:
        return Config(text, text)
    if text in ("gfun", "gfun-x"):
        text = "x"
    views, _, aggregation = text.partition("-")
    if views.startswith("gfun"):
        views = views[4:]
    explicit = bool(aggregation)
    aggregation = aggregation or "mean"
    if aggregation not in _AGGREGATIONS:
        raise ValueError(f"configuration {spec!r}: aggregation must be one of {_AGGREGATIONS}, got {aggregation!r}")
    for letter in views:
        if letter in UNAVAILABLE_VIEWS:
            raise ValueError(f"configuration {spec!r}: {UNAVAILABLE_VIEWS[letter]}; drop it from --configs")
    order = _view_order()
    unknown = [c for c in views if c not in order]
    if unknown or not views:
        raise ValueError(f"unknown configuration {spec!r}: expected naive, fun, or gFun view letters from "
                         f"{order!r} (e.g. x, xm, xmw), optionally with -mean or -concat")
    if len(set(views)) != len(views):
        raise ValueError(f"configuration {spec!r}: view letters repeat")
    views = "".join(c for c in order if c in views)
    name = f"{views}-{aggregation}" if explicit else views
    return Config(name, "gfun", views, aggregation)


def parse_configs(specs: str | Sequence[str]) -> list[Config]:
    """Configurations from a comma-separated list (or a sequence of names), duplicates removed."""
    items = specs.split(",") if isinstance(specs, str) else list(specs)
    out: list[Config] = []
    for item in items:
        if not item.strip():
            continue
        cfg = parse_config(item)
        if cfg.name not in {c.name for c in out}:
            out.append(cfg)
    if not out:
        raise ValueError("no configuration given")
    return out


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
        Extra parameters per view letter (e.g. ``{"m": {"source": "vec:DIR"}}``).
    memory : path or joblib.Memory, optional
        Cache of fitted views shared by the configurations of a run (see ``GeneralizedFunnelling``).
    zero_shot : bool
        Build Fun as in the zero-shot experiments of Esuli et al. (2019), which the paper compares with: an
        auxiliary classifier on the M view (``view_params["m"]``) serves the languages without training data.
    """
    from gfun.baselines import NaiveClassifier, make_fun
    from gfun.funnelling import GeneralizedFunnelling

    if config.method == "naive":
        return NaiveClassifier(C=meta_C, n_jobs=n_jobs, random_state=random_state)
    if config.method == "fun":
        extra = {}
        if zero_shot:
            extra = {"zero_shot_views": "m", "view_params": {k: v for k, v in (view_params or {}).items() if k == "m"}
                     or None}
        return make_fun(meta_C=meta_C, n_jobs=n_jobs, random_state=random_state, memory=memory, **extra)
    params = {k: v for k, v in (view_params or {}).items() if k in config.views}
    return GeneralizedFunnelling(views=config.views, aggregation=config.aggregation, meta_C=meta_C,
                                 view_params=params or None, n_jobs=n_jobs, random_state=random_state,
                                 memory=memory)
