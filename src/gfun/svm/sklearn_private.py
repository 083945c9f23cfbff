"""The two private scikit-learn functions gfun calls, fenced: checked before use, abandoned on any mismatch.

Tier 1 trains its binary linear SVMs with liblinear's ``train_wrap`` and tier 2 its RBF SVMs with libsvm's
``fit`` directly (``sklearn.svm._liblinear``, ``sklearn.svm._libsvm``): what ``LinearSVC.fit`` and ``SVC.fit``
end up calling, without their per-call validation, which costs more than the small solves themselves and holds
the GIL (see :mod:`gfun.svm.linear`, :mod:`gfun.svm.kernel`). Being private, they may change in any
scikit-learn release. So:

* at import, each is used only if its module imports and its signature is exactly the one gfun was written
  against (:data:`LIBLINEAR_TRAIN_WRAP`, :data:`LIBSVM_FIT`), or, where the compiled function does not expose
  a signature (scikit-learn 1.3), if one call as gfun makes it gives the public estimator's model on a small
  problem; otherwise it is ``None`` and the callers use the public ``LinearSVC``/``SVC``;
* at call time, :func:`liblinear_binary` and :func:`libsvm_binary` return ``None`` (and stop using that function
  for the rest of the process, with one warning) on any exception or any output not shaped as expected; the
  callers then train the same model with the public estimator.

``tests/svm/test_sklearn_private.py`` checks that the fallback gives the same models. The fast path is checked
against the public estimators at the lowest supported scikit-learn too (see the README's Development section).

liblinear's dual solvers visit the coordinates in a random order drawn from one generator per loaded module
(scikit-learn's ``newrand``), which every call seeds when it starts: two solves running at once in threads of one
process would draw from it in turn, and their models would depend on the threads' timing. :func:`liblinear_module`
therefore lends each solve a module of its own (see :class:`LiblinearModules`), so that a model depends only on its
inputs and seed, whatever ``n_jobs``.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.machinery
import importlib.util
import inspect
import logging
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from types import ModuleType
from typing import Any

import numpy as np

__all__ = ["LIBLINEAR_TRAIN_WRAP", "LIBSVM_FIT", "LiblinearModules", "liblinear", "liblinear_binary",
           "liblinear_module", "libsvm", "libsvm_binary", "public_liblinear"]

logger = logging.getLogger(__name__)

#: The parameters of ``sklearn.svm._liblinear.train_wrap`` gfun passes by position (scikit-learn 1.3 to 1.9).
LIBLINEAR_TRAIN_WRAP = ("X", "Y", "is_sparse", "solver_type", "eps", "bias", "C", "class_weight", "max_iter",
                        "random_seed", "epsilon", "sample_weight")
#: The parameters of ``sklearn.svm._libsvm.fit`` (gfun passes X and Y by position, the others by name).
LIBSVM_FIT = ("X", "Y", "svm_type", "kernel", "degree", "gamma", "coef0", "tol", "C", "nu", "epsilon",
              "class_weight", "sample_weight", "shrinking", "probability", "cache_size", "max_iter", "random_seed")

#: Functions abandoned at call time in this process: name -> why.
disabled: dict[str, str] = {}


def _probe_problem() -> tuple[np.ndarray, np.ndarray]:
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.5], [2.0, 0.0], [0.0, 2.0], [1.5, 0.5], [0.2, 1.2]])
    return X, np.array([0, 1, 1, 0, 1, 0, 1, 0], dtype=np.float64)


def _liblinear_model(raw: Any, n_features: int) -> tuple[np.ndarray, float]:
    """(coef, intercept) from what ``train_wrap`` returned for a binary problem; ValueError if it is not that."""
    raw = np.asarray(raw)
    if raw.shape != (1, n_features + 1):
        raise ValueError(f"returned coefficients of shape {raw.shape}, expected {(1, n_features + 1)}")
    return raw[0, :-1].astype(np.float32), float(raw[0, -1])


def _libsvm_model(out: Any, n_samples: int) -> tuple[np.ndarray, np.ndarray, float]:
    """(support, dual, intercept), with the sign of ``SVC.decision_function``, from what ``fit`` returned for a
    binary problem; ValueError if it is not that."""
    support, dual, intercept = np.asarray(out[0]), np.asarray(out[3]), np.asarray(out[4])
    if (support.ndim != 1 or dual.shape != (1, support.size) or intercept.shape != (1,)
            or (support.size and not (0 <= support.min() and support.max() < n_samples))):
        raise ValueError(f"returned support {support.shape}, dual {dual.shape}, intercept {intercept.shape}")
    # libsvm's binary model has the opposite sign of SVC's decision_function
    return support.astype(np.int64), -dual[0], -float(intercept[0])


def _liblinear_agrees(mod: Any) -> bool:
    """Whether ``mod.train_wrap`` called as gfun calls it gives ``LinearSVC``'s model on a small problem."""
    from sklearn.svm import LinearSVC

    X, y = _probe_problem()
    seed = int(np.random.RandomState(0).randint(np.iinfo("i").max))
    mod.set_verbosity_wrap(0)
    raw, _ = mod.train_wrap(X, y, False, 1, 1e-4, 1.0, 1.0, np.ones(2), 1000, seed, 0.1, np.ones(len(y)))
    coef, intercept = _liblinear_model(raw, X.shape[1])
    svm = LinearSVC(C=1.0, dual=True, tol=1e-4, max_iter=1000, random_state=0).fit(X, y)
    return bool(np.allclose(np.r_[coef, intercept], np.r_[svm.coef_[0], svm.intercept_], atol=1e-6))


def _libsvm_agrees(mod: Any) -> bool:
    """Whether ``mod.fit`` called as gfun calls it gives ``SVC``'s model on a small precomputed kernel."""
    from sklearn.svm import SVC

    X, y = _probe_problem()
    K = X @ X.T
    mod.set_verbosity_wrap(0)
    support, dual, intercept = _libsvm_model(mod.fit(K, y, svm_type=0, kernel="precomputed", gamma=1.0, tol=1e-3,
                                                     C=1.0, class_weight=np.empty(0), cache_size=100.0), len(y))
    svm = SVC(C=1.0, kernel="precomputed", tol=1e-3).fit(K, y)
    return bool(np.array_equal(support, svm.support_) and np.allclose(dual, svm.dual_coef_[0], atol=1e-8)
                and np.isclose(intercept, svm.intercept_[0], atol=1e-8))


def checked(mod: Any, function: str, expected: tuple[str, ...], agrees: Any) -> Any:
    """``mod`` if its ``function`` has exactly the parameters ``expected``, or, where the function does not tell
    its parameters (compiled without them, as in scikit-learn 1.3), if ``agrees(mod)`` (a call as gfun makes it
    gives the public estimator's model on a small problem); else None."""
    name = f"{getattr(mod, '__name__', mod)}.{function}"
    try:
        params = tuple(inspect.signature(getattr(mod, function)).parameters)
    except (TypeError, ValueError):  # no signature to read: judge by behaviour
        params = None
    except AttributeError:
        logger.info("%s does not exist; gfun uses the public estimator", name)
        return None
    if params is not None and params != expected:
        logger.info("%s has the parameters %s, not the expected %s; gfun uses the public estimator", name, params,
                    expected)
        return None
    if params is None:
        try:
            ok = agrees(mod)
        except Exception as exc:  # noqa: BLE001 - any failure of the probe means "not usable"
            logger.info("%s fails a probe call (%s: %s); gfun uses the public estimator", name, type(exc).__name__,
                        exc)
            return None
        if not ok:
            logger.info("%s disagrees with the public estimator on a probe problem; gfun uses the public estimator",
                        name)
            return None
    return mod


def import_extension(module: str) -> ModuleType:
    """``importlib.import_module(module)`` for a compiled module of a package, without running the package's
    ``__init__`` when it has not run yet: ``sklearn.svm``'s imports ``sklearn.linear_model``,
    ``sklearn.model_selection`` and ``sklearn.metrics`` (slowing every start of gfun) for the estimator classes gfun
    calls only as fallbacks. The module is registered under its own name, so the package, imported later, uses the
    same module (and the same liblinear generator). Any failure: the plain import."""
    package, _, name = module.rpartition(".")
    if module not in sys.modules and package and package not in sys.modules:
        try:
            top = importlib.import_module(package.partition(".")[0])
            folder = os.path.join(os.path.dirname(top.__file__ or ""), *package.split(".")[1:])
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, name + suffix)
                if os.path.isfile(path):
                    loader = importlib.machinery.ExtensionFileLoader(module, path)
                    spec = importlib.util.spec_from_file_location(module, path, loader=loader)
                    if spec is None:
                        break
                    mod = importlib.util.module_from_spec(spec)
                    loader.exec_module(mod)
                    return sys.modules.setdefault(module, mod)
        except Exception as exc:  # noqa: BLE001 - anything unexpected: the plain import below
            logger.debug("%s: loading the compiled module by its path failed (%s); importing its package", module,
                         exc)
    return importlib.import_module(module)


def checked_module(module: str, function: str, expected: tuple[str, ...], agrees: Any) -> ModuleType | None:
    """:func:`checked` of ``module`` once imported (:func:`import_extension`); None if it does not import."""
    try:
        mod = import_extension(module)
    except ImportError as exc:
        logger.info("%s does not import (%s); gfun uses the public estimator", module, exc)
        return None
    return checked(mod, function, expected, agrees)


#: ``sklearn.svm._liblinear`` when its ``train_wrap`` is the one gfun knows, else None.
liblinear = checked_module("sklearn.svm._liblinear", "train_wrap", LIBLINEAR_TRAIN_WRAP, _liblinear_agrees)
#: ``sklearn.svm._libsvm`` when its ``fit`` is the one gfun knows, else None.
libsvm = checked_module("sklearn.svm._libsvm", "fit", LIBSVM_FIT, _libsvm_agrees)


#: The symbol of the generator in scikit-learn's liblinear (``newrand.h``); a copy of the module has a generator of
#: its own only if the dynamic loader does not bind every copy to one definition of it visible process-wide.
_GENERATOR_SYMBOL = "mt_rand"


def _copy_refusal(module: Any) -> str | None:
    """Why copies of ``module`` cannot be loaded with generators of their own (None: they can)."""
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        return "it is not a compiled module"
    if os.name != "posix":
        return "copies of a compiled module are loaded on POSIX systems only"
    if sys.getdlopenflags() & os.RTLD_GLOBAL:
        return "Python loads compiled modules with RTLD_GLOBAL (every copy would share one generator)"
    try:
        getattr(ctypes.CDLL(None), _GENERATOR_SYMBOL)
    except AttributeError:
        return None
    return f"its generator ({_GENERATOR_SYMBOL}) is visible process-wide (every copy would share it)"


def _load_copy(module: ModuleType) -> ModuleType:
    """``module`` loaded once more from a copy of its file: the loader gives each file its own globals."""
    folder = tempfile.mkdtemp(prefix="gfun-liblinear-")
    try:
        path = os.path.join(folder, os.path.basename(module.__file__ or ""))
        shutil.copyfile(module.__file__ or "", path)
        loader = importlib.machinery.ExtensionFileLoader(module.__name__, path)
        spec = importlib.util.spec_from_file_location(module.__name__, path, loader=loader)
        if spec is None:
            raise ImportError(f"no import spec for {path}")
        copy = importlib.util.module_from_spec(spec)
        loader.exec_module(copy)
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # the loaded file stays mapped
    if copy is module or getattr(copy, "train_wrap", None) is getattr(module, "train_wrap", None):
        raise ImportError("the loader returned the module already loaded")
    return copy


class LiblinearModules:
    """Lends each liblinear solve running at the same time in this process a module of its own.

    The first solve gets ``module`` itself; a solve that starts while every module is lent gets a new copy (see
    :func:`_load_copy`), kept for later solves: as many modules as solves ever ran at once (``n_jobs``). Every
    module runs the same code, and each call seeds the generator of its module before drawing from it, so a
    model is the same whichever module solved it. Where copies cannot be loaded (:func:`_copy_refusal`, or the
    loading fails), solves wait for the one module: the same models, one solve at a time.
    """

    def __init__(self, module: Any) -> None:
        self.module = module
        self.modules = [module]
        self._free = [module]
        self._available = threading.Condition()
        self.shared_because: str | None = None  # why copies are not made (None: they are, as needed)

    @contextmanager
    def lend(self, *, original: bool = False) -> Iterator[Any]:
        """A module no other solve is using, for the duration of the ``with`` block (``original``: ``module``
        itself, which is what scikit-learn's public estimators call)."""
        with self._available:
            while True:
                if original and self.module in self._free:
                    mod = self.module
                    break
                if not original and self._free:
                    mod = self._free[-1]
                    break
                if not original and self.shared_because is None:
                    mod = self._add_copy()
                    if mod is not None:
                        break
                self._available.wait()
            self._free.remove(mod)
        try:
            yield mod
        finally:
            with self._available:
                self._free.append(mod)
                self._available.notify_all()

    def _add_copy(self) -> Any | None:
        """A new copy of ``module``, kept (in ``modules`` and among the free ones, for the caller to take), or None
        if none can be loaded (then ``shared_because`` says why, and solves take turns from now on)."""
        why = _copy_refusal(self.module)
        if why is None:
            try:
                copy = _load_copy(self.module)
            except Exception as exc:  # noqa: BLE001 - any failure to load means: take turns
                why = f"a copy does not load ({type(exc).__name__}: {exc})"
            else:
                self.modules.append(copy)
                self._free.append(copy)
                logger.debug("liblinear: %d modules for concurrent solves", len(self.modules))
                return copy
        self.shared_because = why
        logger.info("liblinear solves of this process take turns (each model stays the same for any n_jobs): "
                    "%s cannot be loaded twice: %s", getattr(self.module, "__name__", self.module), why)
        return None


_lenders: dict[int, LiblinearModules] = {}
_lenders_lock = threading.Lock()


def liblinear_module(module: Any, *, original: bool = False) -> AbstractContextManager[Any]:
    """``with liblinear_module(mod) as m:`` a module running ``mod``'s code that no other solve is using meanwhile
    (:class:`LiblinearModules`); ``original=True`` waits for ``mod`` itself (what ``LinearSVC.fit`` calls)."""
    with _lenders_lock:
        lender = _lenders.get(id(module))
        if lender is None or lender.module is not module:
            lender = _lenders[id(module)] = LiblinearModules(module)
    return lender.lend(original=original)


def public_liblinear() -> AbstractContextManager[Any]:
    """``with public_liblinear():`` around ``LinearSVC.fit``: no other solve uses scikit-learn's liblinear module
    (and its generator) meanwhile."""
    return liblinear_module(importlib.import_module("sklearn.svm._liblinear"), original=True)


def _abandon(name: str, exc: BaseException) -> None:
    if name not in disabled:
        logger.warning("scikit-learn's private %s failed (%s: %s); gfun uses the public estimator from now on",
                       name, type(exc).__name__, exc)
    disabled[name] = f"{type(exc).__name__}: {exc}"


def liblinear_binary(X: Any, y: np.ndarray, is_sparse: bool, solver: int, tol: float, C: float,
                     class_weight: np.ndarray, max_iter: int, seed: int) -> tuple[np.ndarray, float] | None:
    """liblinear's binary L2-regularised SVM (labels 0/1, bias 1, unit sample weights): ``(coef float32,
    intercept)``, or None when the private function is unavailable or misbehaves (use ``LinearSVC`` then)."""
    if liblinear is None or "train_wrap" in disabled:
        return None
    try:
        with liblinear_module(liblinear) as mod:
            mod.set_verbosity_wrap(0)
            raw, n_iter = mod.train_wrap(X, np.asarray(y, dtype=np.float64), is_sparse, solver, tol, 1.0, float(C),
                                         class_weight, max_iter, seed, 0.1, np.ones(X.shape[0]))
        model = _liblinear_model(raw, X.shape[1])
        if max(n_iter) >= max_iter:
            logger.debug("liblinear reached max_iter=%d (C=%g)", max_iter, C)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - any mismatch means: fall back
        _abandon("train_wrap", exc)
        return None
    return model


def libsvm_binary(X: np.ndarray, y: np.ndarray, *, kernel: str, gamma: float, tol: float, C: float,
                  class_weight: np.ndarray, cache_size: float) -> tuple[np.ndarray, np.ndarray, float] | None:
    """libsvm's binary C-SVM (labels 0 < 1): ``(support indices, dual coefficients, intercept)`` with the sign of
    ``SVC.decision_function``, or None when the private function is unavailable or misbehaves (use ``SVC``)."""
    mod = libsvm
    if mod is None or "fit" in disabled:
        return None
    try:
        mod.set_verbosity_wrap(0)
        return _libsvm_model(mod.fit(X, np.asarray(y, dtype=np.float64), svm_type=0, kernel=kernel, gamma=gamma,
                                     tol=tol, C=C, class_weight=class_weight, cache_size=cache_size), X.shape[0])
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - any mismatch means: fall back
        _abandon("fit", exc)
        return None
