"""The fence around scikit-learn's private liblinear/libsvm calls: checked signatures, fallback on any mismatch,
and the fallback (LinearSVC, SVC) gives the same models."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

import gfun.svm.kernel_exact
import gfun.svm.linear
from gfun.datasets.demo import load_demo
from gfun.svm import sklearn_private
from gfun.svm.kernel import RBFSVMOvR
from gfun.svm.linear import fit_linear_ovr


@pytest.fixture(scope="module")
def data() -> tuple:
    train, _ = load_demo()
    en = train.select("en")
    X = TfidfVectorizer(sublinear_tf=True).fit_transform(en.texts).tocsr()
    Y = np.asarray(en.Y.toarray(), dtype=np.int8)
    Y = Y[:, Y.sum(0) >= 5]  # classes with a few positives (a constant class never reaches the solver)
    dense = np.asarray(X[:, :60].toarray(), dtype=np.float64) * 10  # small dense input of the RBF SVMs
    return X, Y, dense


class _Changed:
    """Stand-in for a private module whose function changed in a future scikit-learn release."""

    def __init__(self, real, **behaviour) -> None:  # noqa: ANN001
        self.real, self.behaviour = real, behaviour

    def set_verbosity_wrap(self, level: int) -> None:
        self.real.set_verbosity_wrap(level)

    def train_wrap(self, *args, **kw):  # noqa: ANN002, ANN003, ANN201
        return self.behaviour["train_wrap"](self.real, *args, **kw)

    def fit(self, *args, **kw):  # noqa: ANN002, ANN003, ANN201
        return self.behaviour["fit"](self.real, *args, **kw)


def _new_argument(real, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202 - an added positional parameter
    raise TypeError("train_wrap() takes exactly 13 positional arguments (12 given)")


def _reordered_output(real, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202 - a changed return layout
    raw, n_iter = real.train_wrap(*args, **kw)
    return n_iter, raw


def _fewer_outputs(real, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202
    return real.fit(*args, **kw)[:3]


def _dual_for_both_classes(real, *args, **kw):  # noqa: ANN001, ANN002, ANN003, ANN202 - a changed array shape
    out = list(real.fit(*args, **kw))
    out[3] = np.vstack([out[3], -out[3]])
    return tuple(out)


def test_signatures_are_checked() -> None:
    assert sklearn_private.liblinear is not None and sklearn_private.libsvm is not None  # this scikit-learn's match
    real = sklearn_private.liblinear

    def train_wrap(X, Y, is_sparse, solver_type, eps, bias, C, class_weight, max_iter, random_seed, epsilon,  # noqa: ANN001, ANN202
                   sample_weight, new_option):
        return real.train_wrap(X, Y, is_sparse, solver_type, eps, bias, C, class_weight, max_iter, random_seed,
                               epsilon, sample_weight)

    changed = SimpleNamespace(__name__="future_liblinear", train_wrap=train_wrap,
                              set_verbosity_wrap=real.set_verbosity_wrap)
    expected, probe = sklearn_private.LIBLINEAR_TRAIN_WRAP, sklearn_private._liblinear_agrees
    assert sklearn_private.checked(changed, "train_wrap", expected, probe) is None  # a new parameter
    assert sklearn_private.checked(changed, "train_wrap", (*expected, "new_option"), probe) is changed
    assert sklearn_private.checked(changed, "fit_v2", expected, probe) is None  # renamed away
    assert sklearn_private.checked_module("sklearn.svm._no_such_module", "fit", expected, probe) is None


def test_without_a_signature_a_probe_call_decides() -> None:
    """scikit-learn 1.3 compiles these functions without a readable signature: a call on a small problem decides."""
    real = sklearn_private.libsvm
    unsigned = SimpleNamespace(__name__="old_libsvm", fit=_Unsigned(real.fit),
                               set_verbosity_wrap=real.set_verbosity_wrap)
    assert sklearn_private.checked(unsigned, "fit", (), sklearn_private._libsvm_agrees) is unsigned
    flipped = SimpleNamespace(__name__="old_libsvm", set_verbosity_wrap=real.set_verbosity_wrap,
                              fit=_Unsigned(lambda *a, **k: _dual_for_both_classes(real, *a, **k)))
    assert sklearn_private.checked(flipped, "fit", (), sklearn_private._libsvm_agrees) is None  # output changed
    wrong_sign = SimpleNamespace(__name__="old_libsvm", set_verbosity_wrap=real.set_verbosity_wrap,
                                 fit=_Unsigned(lambda *a, **k: (*(o for o in real.fit(*a, **k)[:3]),
                                                                *(-np.asarray(o) for o in real.fit(*a, **k)[3:5]))))
    assert sklearn_private.checked(wrong_sign, "fit", (), sklearn_private._libsvm_agrees) is None  # meaning changed


class _Unsigned:
    """A callable without a signature (as Cython functions compiled without ``binding``)."""

    __signature__ = property(lambda self: (_ for _ in ()).throw(ValueError("no signature")))

    def __init__(self, fn) -> None:  # noqa: ANN001
        self.fn = fn

    def __call__(self, *args, **kw):  # noqa: ANN002, ANN003, ANN204
        return self.fn(*args, **kw)


def _linear(data) -> np.ndarray:  # noqa: ANN001
    X, Y, _ = data
    model = fit_linear_ovr(X, Y, C=1.0, random_state=0)
    return np.hstack([model.coef, model.intercept[:, None]])


def _rbf(data) -> np.ndarray:  # noqa: ANN001
    _, Y, dense = data
    return RBFSVMOvR(C=1.0, probability=False, random_state=0).fit(dense, Y).decision_function(dense)


#: tier -> (the module that calls the private function, its name there, the fenced module, the function, a fit)
TIERS = {"liblinear": (gfun.svm.linear, "_liblinear", "train_wrap", _linear),
         "libsvm": (gfun.svm.kernel_exact, "_libsvm", "fit", _rbf)}


@pytest.mark.parametrize(("tier", "behaviour"), [("liblinear", _new_argument), ("liblinear", _reordered_output),
                                                 ("libsvm", _fewer_outputs), ("libsvm", _dual_for_both_classes)])
def test_a_mismatch_falls_back_to_the_public_estimator_with_equal_results(data, monkeypatch, tier, behaviour) -> None:
    caller, alias, function, fit = TIERS[tier]
    fast = fit(data)
    with monkeypatch.context() as mp:
        mp.setattr(caller, alias, None)  # LinearSVC / SVC from the start
        public = fit(data)
    monkeypatch.setattr(sklearn_private, "disabled", {})
    monkeypatch.setattr(sklearn_private, tier, _Changed(getattr(sklearn_private, tier), **{function: behaviour}))
    fallen_back = fit(data)
    assert function in sklearn_private.disabled  # abandoned, with a warning, for the rest of the process
    np.testing.assert_array_equal(fallen_back, public)
    np.testing.assert_allclose(fast, public, rtol=1e-5, atol=1e-6)
    assert (np.sign(fast) == np.sign(public)).mean() > 0.999


# ------------------------------------------------------------------------------------- a generator per solve
def test_a_solve_running_while_another_does_gets_a_copy_of_the_module(monkeypatch) -> None:
    """Each concurrent solve has a module (and so a liblinear generator) of its own; the copies are kept."""
    real = sklearn_private.liblinear
    lender = sklearn_private.LiblinearModules(real)
    with lender.lend() as first, lender.lend() as second:
        assert first is real and second is not real and second.train_wrap is not real.train_wrap
    with lender.lend() as again, lender.lend() as other:
        assert {id(again), id(other)} == {id(real), id(second)}  # no third module
    assert len(lender.modules) == 2 and lender.shared_because is None
    X, y = sklearn_private._probe_problem()
    args = (X, y, False, 1, 1e-4, 1.0, 1.0, np.ones(2), 1000, 7, 0.1, np.ones(len(y)))
    np.testing.assert_array_equal(second.train_wrap(*args)[0], real.train_wrap(*args)[0])  # the same code


def test_without_copies_the_solves_take_turns_and_give_the_same_models(data, monkeypatch) -> None:
    monkeypatch.setattr(sklearn_private, "_lenders", {})
    monkeypatch.setattr(sklearn_private, "_copy_refusal", lambda module: "this platform cannot load copies")
    threaded = fit_linear_ovr(data[0], data[1], C=1.0, random_state=0, n_jobs=4)
    (lender,) = sklearn_private._lenders.values()
    assert lender.modules == [sklearn_private.liblinear] and "cannot load copies" in lender.shared_because
    np.testing.assert_array_equal(threaded.coef, _linear(data)[:, :-1])


def test_a_copy_that_does_not_load_makes_the_solves_take_turns(monkeypatch, caplog) -> None:
    def noexec(module):  # noqa: ANN001, ANN202 - as from a temporary folder mounted noexec
        raise ImportError("failed to map segment from shared object")

    monkeypatch.setattr(sklearn_private, "_load_copy", noexec)
    lender = sklearn_private.LiblinearModules(sklearn_private.liblinear)
    with caplog.at_level("INFO", logger=sklearn_private.__name__), lender.lend() as first:
        assert first is sklearn_private.liblinear and lender._add_copy() is None
    assert lender.modules == [first] and "failed to map segment" in lender.shared_because
    assert "take turns" in caplog.text and "failed to map segment" in caplog.text
    with lender.lend() as again:  # the one module, free again
        assert again is first


def test_the_public_estimator_path_gives_the_same_models_on_threads(data, monkeypatch) -> None:
    X, Y, _ = data
    monkeypatch.setattr(gfun.svm.linear, "_liblinear", None)  # LinearSVC.fit per class, on threads
    one = fit_linear_ovr(X, Y, C=1.0, random_state=0)
    for _ in range(3):
        np.testing.assert_array_equal(fit_linear_ovr(X, Y, C=1.0, random_state=0, n_jobs=4).coef, one.coef)


def test_copies_are_refused_where_they_would_share_one_generator(monkeypatch) -> None:
    import os
    import sys

    real = sklearn_private.liblinear
    if os.name == "posix":  # modules are loaded RTLD_LOCAL: a copy has a generator of its own
        assert sklearn_private._copy_refusal(real) is None
    else:
        assert "POSIX" in sklearn_private._copy_refusal(real)
    assert "not a compiled module" in sklearn_private._copy_refusal(SimpleNamespace(__name__="stand_in"))
    if os.name == "posix":
        monkeypatch.setattr(sys, "getdlopenflags", lambda: os.RTLD_NOW | os.RTLD_GLOBAL)
        assert "RTLD_GLOBAL" in sklearn_private._copy_refusal(real)


def test_fitting_and_loading_gfun_x_imports_no_scikit_learn_estimator_package(tmp_path) -> None:
    """Every start of gfun paid 0.3 s for scikit-learn packages whose estimators it calls only as fallbacks
    (``sklearn.svm`` pulls in ``sklearn.linear_model``, ``sklearn.model_selection``, ``sklearn.metrics``): the compiled
    liblinear and libsvm modules are loaded by their path instead, and a package imported later uses those very
    modules (one liblinear generator)."""
    import subprocess
    import sys

    code = f"""
import sys
import gfun
from gfun.datasets.demo import load_demo
train, test = load_demo()
model = gfun.GeneralizedFunnelling(views="x", random_state=0).fit(train)
model.save({str(tmp_path / "m")!r})
gfun.load_model({str(tmp_path / "m")!r}).predict(test)
heavy = [m for m in ("sklearn.svm", "sklearn.linear_model", "sklearn.model_selection", "sklearn.metrics",
                     "sklearn.feature_extraction") if m in sys.modules]
assert not heavy, heavy
from gfun.svm import sklearn_private
import sklearn.svm._base as base
assert base.liblinear is sklearn_private.liblinear is sys.modules["sklearn.svm._liblinear"]
assert base.libsvm is sklearn_private.libsvm is sys.modules["sklearn.svm._libsvm"]
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
