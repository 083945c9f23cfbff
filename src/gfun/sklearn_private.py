"""The two private scikit-learn functions gfun calls, fenced: checked before use, abandoned on any mismatch.

Tier 1 trains its binary linear SVMs with liblinear's ``train_wrap`` and tier 2 its RBF SVMs with libsvm's
``fit`` directly (``sklearn.svm._liblinear``, ``sklearn.svm._libsvm``): what ``LinearSVC.fit`` and ``SVC.fit``
end up calling, without their per-call validation, which costs more than the small solves themselves and holds
the GIL (see :mod:`gfun.linear_svm`, :mod:`gfun.kernel_svm`). Being private, they may change in any
scikit-learn release. So:

* at import, each is used only if its module imports and its signature is exactly the one gfun was written
  against (:data:`LIBLINEAR_TRAIN_WRAP`, :data:`LIBSVM_FIT`); otherwise it is ``None`` and the callers use the
  public ``LinearSVC``/``SVC``;
* at call time, :func:`liblinear_binary` and :func:`libsvm_binary` return ``None`` (and stop using that function
  for the rest of the process, with one warning) on any exception or any output not shaped as expected; the
  callers then train the same model with the public estimator.

``tests/test_sklearn_private.py`` checks that the fallback gives the same models. The fast path is checked
against the public estimators at the lowest supported scikit-learn too (see the README's Development section).
"""

from __future__ import annotations

import importlib
import inspect
import logging
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["LIBLINEAR_TRAIN_WRAP", "LIBSVM_FIT", "liblinear", "liblinear_binary", "libsvm", "libsvm_binary"]

logger = logging.getLogger(__name__)

#: The parameters of ``sklearn.svm._liblinear.train_wrap`` gfun passes by position (scikit-learn 1.3 to 1.9).
LIBLINEAR_TRAIN_WRAP = ("X", "Y", "is_sparse", "solver_type", "eps", "bias", "C", "class_weight", "max_iter",
                        "random_seed", "epsilon", "sample_weight")
#: The parameters of ``sklearn.svm._libsvm.fit`` (gfun passes X and Y by position, the others by name).
LIBSVM_FIT = ("X", "Y", "svm_type", "kernel", "degree", "gamma", "coef0", "tol", "C", "nu", "epsilon",
              "class_weight", "sample_weight", "shrinking", "probability", "cache_size", "max_iter", "random_seed")

#: Functions abandoned at call time in this process: name -> why.
disabled: dict[str, str] = {}


def checked_module(module: str, function: str, expected: tuple[str, ...]) -> ModuleType | None:
    """``module`` if it imports and its ``function`` has exactly the parameters ``expected``, else None."""
    try:
        mod = importlib.import_module(module)
        params = tuple(inspect.signature(getattr(mod, function)).parameters)
    except Exception as exc:  # noqa: BLE001 - ImportError, AttributeError, no signature: all mean "not usable"
        logger.info("%s.%s is not usable (%s: %s); gfun uses the public estimator", module, function,
                    type(exc).__name__, exc)
        return None
    if params != expected:
        logger.info("%s.%s has the parameters %s, not the expected %s; gfun uses the public estimator",
                    module, function, params, expected)
        return None
    return mod


#: ``sklearn.svm._liblinear`` when its ``train_wrap`` is the one gfun knows, else None.
liblinear = checked_module("sklearn.svm._liblinear", "train_wrap", LIBLINEAR_TRAIN_WRAP)
#: ``sklearn.svm._libsvm`` when its ``fit`` is the one gfun knows, else None.
libsvm = checked_module("sklearn.svm._libsvm", "fit", LIBSVM_FIT)


def _abandon(name: str, exc: BaseException) -> None:
    if name not in disabled:
        logger.warning("scikit-learn's private %s failed (%s: %s); gfun uses the public estimator from now on",
                       name, type(exc).__name__, exc)
    disabled[name] = f"{type(exc).__name__}: {exc}"


def liblinear_binary(X: Any, y: np.ndarray, is_sparse: bool, solver: int, tol: float, C: float,
                     class_weight: np.ndarray, max_iter: int, seed: int) -> tuple[np.ndarray, float] | None:
    """liblinear's binary L2-regularised SVM (labels 0/1, bias 1, unit sample weights): ``(coef float32,
    intercept)``, or None when the private function is unavailable or misbehaves (use ``LinearSVC`` then)."""
    mod = liblinear
    if mod is None or "train_wrap" in disabled:
        return None
    try:
        mod.set_verbosity_wrap(0)
        raw, n_iter = mod.train_wrap(X, np.asarray(y, dtype=np.float64), is_sparse, solver, tol, 1.0, float(C),
                                     class_weight, max_iter, seed, 0.1, np.ones(X.shape[0]))
        raw = np.asarray(raw)
        if raw.shape != (1, X.shape[1] + 1):
            raise ValueError(f"returned coefficients of shape {raw.shape}, expected {(1, X.shape[1] + 1)}")
        if max(n_iter) >= max_iter:
            logger.debug("liblinear reached max_iter=%d (C=%g)", max_iter, C)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - any mismatch means: fall back
        _abandon("train_wrap", exc)
        return None
    return raw[0, :-1].astype(np.float32), float(raw[0, -1])


def libsvm_binary(X: np.ndarray, y: np.ndarray, *, kernel: str, gamma: float, tol: float, C: float,
                  class_weight: np.ndarray, cache_size: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """libsvm's binary C-SVM (labels 0 < 1): ``(support indices, dual coefficients, intercept)`` with the sign of
    ``SVC.decision_function``, or None when the private function is unavailable or misbehaves (use ``SVC``)."""
    mod = libsvm
    if mod is None or "fit" in disabled:
        return None
    try:
        mod.set_verbosity_wrap(0)
        out = mod.fit(X, np.asarray(y, dtype=np.float64), svm_type=0, kernel=kernel, gamma=gamma, tol=tol, C=C,
                      class_weight=class_weight, cache_size=cache_size)
        support, dual, intercept = np.asarray(out[0]), np.asarray(out[3]), np.asarray(out[4])
        if (support.ndim != 1 or dual.shape != (1, support.size) or intercept.shape != (1,)
                or (support.size and not (0 <= support.min() and support.max() < X.shape[0]))):
            raise ValueError(f"returned support {support.shape}, dual {dual.shape}, intercept {intercept.shape}")
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - any mismatch means: fall back
        _abandon("fit", exc)
        return None
    # libsvm's binary model has the opposite sign of SVC's decision_function
    return support.astype(np.int64), -dual[0], -float(intercept[0])
