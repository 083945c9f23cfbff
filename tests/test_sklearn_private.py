"""The fence around scikit-learn's private liblinear/libsvm calls: checked signatures, fallback on any mismatch,
and the fallback (LinearSVC, SVC) gives the same models."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

import gfun.kernel_svm
import gfun.linear_svm
from gfun import sklearn_private
from gfun.datasets.demo import load_demo
from gfun.kernel_svm import RBFSVMOvR
from gfun.linear_svm import fit_linear_ovr


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
    expected = sklearn_private.LIBLINEAR_TRAIN_WRAP
    assert sklearn_private.checked_module("sklearn.svm._liblinear", "train_wrap", expected) is sklearn_private.liblinear
    assert sklearn_private.checked_module("sklearn.svm._liblinear", "train_wrap", expected[:-1]) is None
    assert sklearn_private.checked_module("sklearn.svm._liblinear", "train_wrap_v2", expected) is None
    assert sklearn_private.checked_module("sklearn.svm._no_such_module", "fit", expected) is None


def _linear(data) -> np.ndarray:  # noqa: ANN001
    X, Y, _ = data
    model = fit_linear_ovr(X, Y, C=1.0, random_state=0)
    return np.hstack([model.coef, model.intercept[:, None]])


@pytest.mark.parametrize("behaviour", [_new_argument, _reordered_output])
def test_liblinear_mismatch_falls_back_to_LinearSVC_with_equal_results(data, monkeypatch, behaviour) -> None:
    fast = _linear(data)
    with monkeypatch.context() as mp:
        mp.setattr(gfun.linear_svm, "_liblinear", None)  # LinearSVC from the start
        public = _linear(data)
    monkeypatch.setattr(sklearn_private, "disabled", {})
    monkeypatch.setattr(sklearn_private, "liblinear", _Changed(sklearn_private.liblinear, train_wrap=behaviour))
    fallen_back = _linear(data)
    assert "train_wrap" in sklearn_private.disabled
    np.testing.assert_array_equal(fallen_back, public)
    np.testing.assert_allclose(fast, public, rtol=1e-5, atol=1e-6)


def _rbf(data) -> tuple[np.ndarray, np.ndarray]:  # noqa: ANN001
    _, Y, dense = data
    model = RBFSVMOvR(C=1.0, probability=False, random_state=0).fit(dense, Y)
    return model.decision_function(dense), model.predict(dense)


@pytest.mark.parametrize("behaviour", [_fewer_outputs, _dual_for_both_classes])
def test_libsvm_mismatch_falls_back_to_SVC_with_equal_results(data, monkeypatch, behaviour) -> None:
    fast = _rbf(data)
    with monkeypatch.context() as mp:
        mp.setattr(gfun.kernel_svm, "_libsvm", None)  # SVC from the start
        public = _rbf(data)
    monkeypatch.setattr(sklearn_private, "disabled", {})
    monkeypatch.setattr(sklearn_private, "libsvm", _Changed(sklearn_private.libsvm, fit=behaviour))
    fallen_back = _rbf(data)
    assert "fit" in sklearn_private.disabled
    np.testing.assert_array_equal(fallen_back[0], public[0])
    np.testing.assert_allclose(fast[0], public[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(fast[1], public[1])
