"""A view's path to the meta level of Generalized Funnelling, fitted (optionally cached) and applied alike.

:class:`Branch` is view -> (L2 -> z-score -> mapper to |Y| posteriors); :func:`_fit_branch` fits one, and
:func:`_cached_branch` serves it from a :class:`joblib.Memory` (keyed by :func:`_branch_key`) when one is given.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from gfun.core.memory import release_free_memory
from gfun.core.progress import format_duration
from gfun.estimator import check_finite
from gfun.svm.kernel import RBFSVMOvR
from gfun.views.base import ViewGenerator
from gfun.views.normalization import ZScore, l2_normalize

__all__ = ["Branch"]


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
                                                          groups, self.name)
        self.view, self.mapper, self.scaler = view, mapper, scaler
        seconds = {} if hit else {f"{phase.partition('_')[0]}_{self.name}": sec for phase, sec in seconds.items()}
        return Z, oof, seconds, hit

    def transform(self, texts: Sequence[str], langs: np.ndarray) -> np.ndarray:
        """The branch's output for new documents (every one of a language the view covers); NaN or infinite
        values from the view or its mapper are a :class:`~gfun.errors.NonFiniteError` naming the view."""
        Z = check_finite(self.view.transform(texts, langs), _source(self.name, self.view), langs)
        release_free_memory()
        return self.map(Z, langs)

    def map(self, Z: np.ndarray, langs: Sequence[str]) -> np.ndarray:
        """The branch's output for views ``Z`` of the view (one row per document of ``langs``): ``Z`` itself, or the
        mapper's posteriors (L2 -> z-score -> mapper)."""
        if self.mapper is None:
            return Z
        Zs, _ = _mapper_input(Z, self.normalize, self.scaler)
        return _posteriors(self.mapper, Zs, self.name, self.view, langs)


def branch_fit_line(branch: Branch, seconds: dict[str, float], hit: bool) -> str:
    """What the log of a fit says of one branch, in words: ``"X view (posteriors): fitted in 0.2 s"``, ``"M view
    (word embeddings): fitted in 3.1 s, mapped to posteriors in 0.4 s"``, ``"X view (posteriors): taken from the
    cache"``. ``seconds`` is :meth:`Branch.fit_transform`'s (``view_<name>``, ``mapper_<name>``)."""
    description = type(branch.view).description or type(branch.view).__name__
    head = f"{branch.name.upper()} view ({description})"
    if hit:
        return f"{head}: taken from the cache"
    words = {"view": "fitted", "mapper": "mapped to posteriors"}
    done = [f"{words.get(phase.partition('_')[0], phase.partition('_')[0])} in "
            + (f"{sec:.1f} s" if sec < 10 else format_duration(sec)) for phase, sec in seconds.items()]
    return f"{head}: " + (", ".join(done) or "fitted")


def _source(name: str | None, view: ViewGenerator, prefix: str = "") -> str:
    """What a :class:`~gfun.errors.NonFiniteError` names: the view's name in its model and its class."""
    return f"{prefix}view {name or view.letter!r} ({type(view).__name__})"


def _mapper_input(Z: np.ndarray, normalize: bool, scaler: ZScore | None = None, *, fit: bool = False
                  ) -> tuple[np.ndarray, ZScore | None]:
    """The mapper's input from a view's output: L2 -> z-score with ``normalize`` (the z-scoring fitted on ``Z``
    when ``fit``, else ``scaler``'s), and the z-scoring."""
    if normalize:
        Z = l2_normalize(Z)
        if fit:
            scaler = ZScore.fit(Z)
    return (Z if scaler is None else scaler.transform(Z)), scaler


def _posteriors(mapper: RBFSVMOvR, Zs: np.ndarray, name: str | None, view: ViewGenerator,
                langs: Sequence[str]) -> np.ndarray:
    """The mapper's posteriors of its input ``Zs``; NaN or infinite values are a
    :class:`~gfun.errors.NonFiniteError` naming the view's mapper."""
    return check_finite(mapper.predict_proba(Zs), _source(name, view, "the mapper of "), langs)


def _fit_branch(view: ViewGenerator, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray, normalize: bool,
                mapper: RBFSVMOvR | None, groups: np.ndarray | None = None, name: str | None = None,
                ) -> tuple[ViewGenerator, np.ndarray, np.ndarray | None, RBFSVMOvR | None, ZScore | None,
                           dict[str, float]]:
    """Fit one view (and its mapper to posteriors, if any); return it with the training documents' meta input.

    Returns the fitted view, the (mapped) training views, in-sample and out-of-fold (``None`` without a
    mapper), the fitted mapper and its input scaler (``None`` without a mapper) and the seconds spent per
    phase. The training views are not L2-normalised yet (see :meth:`GeneralizedFunnelling._block`): a view
    without mapper as it comes, a mapped view as the mapper's |Y| posteriors. The timings are named after the
    view's letter (its class's; as cached branches hold them); :class:`Branch` renames them after the branch.
    NaN or infinite values from the view (or its mapper) are a :class:`~gfun.errors.NonFiniteError` naming the
    view (``name``, its name in the model).
    """
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    fitted = view.fit_transform(texts, langs, Y, **({"groups": groups} if view.takes_groups() else {}))
    Z = check_finite(fitted, _source(name, view), langs)
    # what the view's fit freed (a transformer's is large) is of no use to the SVMs that follow
    release_free_memory()
    seconds[f"view_{view.letter}"] = time.perf_counter() - t0
    oof = view.pop_training_oof()  # a posterior view's out-of-fold training posteriors
    if oof is not None:
        check_finite(oof, _source(name, view), langs)
    scaler = None
    if mapper is not None:
        t0 = time.perf_counter()
        Zs, scaler = _mapper_input(Z, normalize, fit=True)
        mapper.fit(Zs, Y, groups=groups)
        if mapper.oof_decision_ is not None:
            from gfun.svm.calibration import platt_posteriors

            oof = platt_posteriors(mapper.oof_decision_, mapper.platt_A_, mapper.platt_B_)
        Z = _posteriors(mapper, Zs, name, view, langs)
        mapper.oof_decision_ = None  # transient: not worth keeping (or caching)
        release_free_memory()
        seconds[f"mapper_{view.letter}"] = time.perf_counter() - t0
    view.release()
    return view, np.asarray(Z), oof, mapper, scaler, seconds


_RUNTIME_PARAMS = ("n_jobs", "verbose")


def _branch_key(view: ViewGenerator, mapper: RBFSVMOvR | None, normalize: bool) -> dict:
    """What determines a branch's result, minus run-time settings (so that n_jobs does not miss the cache)."""

    def params(est: Any) -> dict:
        found = est.resolved_params() if hasattr(est, "resolved_params") else est.get_params()
        return {k: v for k, v in found.items() if k not in _RUNTIME_PARAMS}

    from gfun.text.analysis import ANALYZER_VERSION

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
    cached = memory.cache(_cached_call, ignore=["view", "mapper", "name"])

    def call(key: dict, view: ViewGenerator, texts: Sequence[str], langs: np.ndarray, Y: np.ndarray,
             normalize: bool, mapper: RBFSVMOvR | None, groups: np.ndarray | None = None,
             name: str | None = None) -> tuple:
        args = (key, view, list(texts), np.asarray(langs, dtype=str), np.asarray(Y, dtype=np.int8), normalize,
                mapper, None if groups is None else np.asarray(groups, dtype=str), name)
        hit = cached.check_call_in_cache(*args)
        return (*cached(*args), hit)

    return call


def _cached_call(key: dict, view: ViewGenerator, texts: list[str], langs: np.ndarray, Y: np.ndarray,
                 normalize: bool, mapper: RBFSVMOvR | None, groups: np.ndarray | None = None,
                 name: str | None = None) -> tuple:
    return _fit_branch(view, texts, np.asarray(langs, dtype=object), Y, normalize, mapper, groups, name)

