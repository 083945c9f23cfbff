"""The parts the Naive, UpperBound and cross-lingual baselines are built from, as nested estimators.

Each of those baselines takes ``tfidf=`` (a :class:`gfun.text.tfidf.MultilingualTfidf`: the per-language TF-IDF)
and ``classifier=`` (a :class:`LinearSVMs`: one linear SVM per class, C fixed or chosen by cross-validation);
``None`` is the default part. Their parameters are nested parameters of the baseline
(``set_params(classifier__C=10)``, ``get_params()["tfidf__min_df"]``), as for
:class:`~gfun.funnelling.generalized.GeneralizedFunnelling`'s ``meta`` and ``mapper``. The baseline's ``n_jobs`` and
``random_state`` reach the parts at fit, whatever parts it was given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator, clone

from gfun.corpus.inputs import check_C
from gfun.svm.kernel import DEFAULT_C_GRID
from gfun.svm.linear import LinearOvR, fit_linear_ovr, make_folds, select_C
from gfun.text.tfidf import MultilingualTfidf

__all__ = ["LinearSVMs", "NestedPartsMixin"]


class LinearSVMs(BaseEstimator):
    """One-vs-rest linear SVMs (liblinear): the classifier part of the SVM baselines.

    Parameters
    ----------
    C : float or "cv"
        Regularisation; ``"cv"`` chooses it per class by ``cv``-fold cross-validated F1 over ``C_grid``.
    C_grid : sequence of float
    cv : int
    loss : {"squared_hinge", "hinge"}
    class_weight : {None, "balanced"}
    """

    def __init__(self, C: float | str = "cv", C_grid: Sequence[float] = DEFAULT_C_GRID, cv: int = 5,
                 loss: str = "squared_hinge", class_weight: str | None = None) -> None:
        self.C = C
        self.C_grid = C_grid
        self.cv = cv
        self.loss = loss
        self.class_weight = class_weight

    def check(self) -> None:
        """Refuse a bad ``C`` before anything is fitted."""
        check_C(self.C, "C")

    def fit_ovr(self, X: Any, Y: np.ndarray, *, random_state: int | None, groups: np.ndarray | None = None,
                n_jobs: int | None = None) -> tuple[LinearOvR, np.ndarray]:
        """The fitted SVMs of ``X`` (documents x features) and ``Y``, and the C of each class; ``groups``: documents
        that cross-validation keeps in one fold."""
        fit_kw = {"loss": self.loss, "class_weight": self.class_weight, "random_state": random_state, "n_jobs": n_jobs}
        if self.C == "cv":
            Cs = select_C(X, Y, sorted(self.C_grid), make_folds(X.shape[0], self.cv, random_state, groups), **fit_kw)
        else:
            Cs = np.full(Y.shape[1], float(self.C))
        return fit_linear_ovr(X, Y, Cs, **fit_kw), Cs


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    if isinstance(value, type) and issubclass(value, np.generic):  # a dtype given as a numpy type
        return np.dtype(value).name
    if isinstance(value, np.generic):
        return value.item()
    return value


class NestedPartsMixin:
    """``tfidf`` and ``classifier`` as nested estimators: the default part for ``None``, ``<part>__<parameter>`` in
    :meth:`set_params`, and the parts saved as their parameters (:meth:`_params_state`, :meth:`_params_from_state`)."""

    #: Each part's parameter name -> the factory of its default.
    parts: ClassVar[dict[str, Callable[[], BaseEstimator]]] = {"tfidf": MultilingualTfidf, "classifier": LinearSVMs}

    def part(self, name: str) -> Any:
        """A new unfitted part ``name``: a clone of the given one, or the default."""
        value = getattr(self, name)
        return self.parts[name]() if value is None else clone(value)

    def set_params(self, **params: Any) -> Any:
        for key in params:
            name, sep, _ = key.partition("__")
            if sep and name in self.parts and name not in params and getattr(self, name, None) is None:
                setattr(self, name, self.parts[name]())  # made explicit so that its parameters can be set
        return super().set_params(**params)  # type: ignore[misc]

    def _params_state(self) -> dict:
        """The parameters as JSON, each part as ``{"params": {...}}`` (``None``: the default part)."""
        params = {k: _jsonable(v) for k, v in self.get_params(deep=False).items()}  # type: ignore[attr-defined]
        for name in self.parts:
            part = getattr(self, name)
            params[name] = None if part is None else {
                "params": {k: _jsonable(v) for k, v in part.get_params(deep=False).items()}}
        return params

    @classmethod
    def _params_from_state(cls, params: dict) -> dict:
        """The constructor's parameters from :meth:`_params_state`'s."""
        params = dict(params)
        for name, factory in cls.parts.items():
            if isinstance(params.get(name), dict):
                saved = dict(params[name]["params"])
                if "C_grid" in saved:
                    saved["C_grid"] = tuple(saved["C_grid"])
                if "dtype" in saved:
                    saved["dtype"] = np.dtype(saved["dtype"]).type
                params[name] = factory().set_params(**saved)
        return params
