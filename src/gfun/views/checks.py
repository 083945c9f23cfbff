"""Checks that a view-generating function follows the contract of :class:`gfun.views.base.ViewGenerator`.

:func:`check_view` runs them all on an unfitted view (its own data, or a small sample of the bundled demo
corpus) and raises an AssertionError naming the check that failed; each check is also a function of its own
(``check_state_round_trip(fitted)`` ...) taking what :func:`fit_for_check` returns, which is how gfun's test
suite runs them on every registered view. A view that passes them works inside
:class:`~gfun.funnelling.generalized.GeneralizedFunnelling` (fit, transform, save and load when registered with
:func:`gfun.views.register_view`).

Example
-------
>>> from gfun.views.checks import check_view
>>> from gfun.views.posteriors import PosteriorsView
>>> check_view(PosteriorsView(cv=3, random_state=0))  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone

from gfun.errors import UnseenLanguageError
from gfun.views.base import ViewGenerator

__all__ = ["CHECKS", "CheckData", "FittedView", "check_view", "demo_check_data", "fit_for_check"]


@dataclass
class CheckData:
    """Training documents (``texts``, ``langs``, label matrix ``Y``) and test documents of the checks; optionally
    documents of languages without training documents (``zero_shot_texts``, ``zero_shot_langs``), on which the
    checks run where the view covers their language."""

    texts: list[str]
    langs: np.ndarray
    Y: np.ndarray
    test_texts: list[str]
    test_langs: np.ndarray
    zero_shot_texts: list[str] = field(default_factory=list)
    zero_shot_langs: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=object))

    @property
    def languages(self) -> list[str]:
        return sorted(set(self.langs.tolist()))


@dataclass
class FittedView:
    """A view fitted for the checks: the unfitted ``prototype``, the fitted ``view``, its training views ``Z``."""

    prototype: ViewGenerator
    view: ViewGenerator
    Z: np.ndarray
    data: CheckData
    rtol: float = 1e-5
    atol: float = 1e-6


def demo_check_data(langs: Sequence[str] = ("de", "en", "it"), n_train: int = 30, n_test: int = 8,
                    zero_shot: Sequence[str] = ("fr",)) -> CheckData:
    """``n_train`` training and ``n_test`` test documents of each of ``langs`` from the bundled demo corpus, and
    ``n_test`` test documents of each of the ``zero_shot`` languages (no training documents)."""
    from gfun.datasets.demo import load_demo

    train, test = load_demo()

    def sample(corpus, n, which):  # noqa: ANN001, ANN202 - the first n documents of each language, in corpus order
        idx = [i for lang in which for i in np.flatnonzero(corpus.lang_array == lang)[:n]]
        return corpus.subset(idx)

    tr, te, zs = sample(train, n_train, langs), sample(test, n_test, langs), sample(test, n_test, zero_shot)
    return CheckData(list(tr.texts), np.asarray(tr.langs, dtype=object), np.asarray(tr.Y.toarray(), dtype=np.int8),
                     list(te.texts), np.asarray(te.langs, dtype=object), list(zs.texts),
                     np.asarray(zs.langs, dtype=object))


def fit_for_check(view: ViewGenerator, data: CheckData | None = None, *, rtol: float = 1e-5,
                  atol: float = 1e-6) -> FittedView:
    """Fit a clone of the unfitted ``view`` on ``data`` (default: :func:`demo_check_data`)."""
    data = demo_check_data() if data is None else data
    fitted = clone(view)
    Z = fitted.fit_transform(data.texts, data.langs, data.Y)
    return FittedView(view, fitted, np.asarray(Z), data, rtol, atol)


def _close(actual: np.ndarray, expected: np.ndarray, fv: FittedView, what: str) -> None:
    np.testing.assert_allclose(actual, expected, rtol=fv.rtol, atol=fv.atol, err_msg=what)


def check_class_attributes(fv: FittedView) -> None:
    """``output`` is ``"posteriors"`` or ``"features"``; ``language_reach()`` is one of the three answers;
    ``language_coverage()`` (what ``gfun info`` and ``gfun serve`` report) says the same reach and lists the
    training languages."""
    cls = type(fv.view)
    assert cls.output in ("posteriors", "features"), f"{cls.__name__}.output is {cls.output!r}"
    reach = fv.view.language_reach()
    assert reach in ("training", "some", "any"), "language_reach() is not training/some/any"
    coverage = fv.view.language_coverage()
    assert coverage.reach == reach, f"language_coverage().reach is {coverage.reach!r}, language_reach() {reach!r}"
    trained = sorted({str(lang) for lang in fv.data.langs})
    assert list(coverage.trained) == trained, \
        f"language_coverage().trained is {list(coverage.trained)}, the training languages are {trained}"


def check_clone_and_params(fv: FittedView) -> None:
    """``__init__`` stores parameters only (scikit-learn's rule), so ``clone`` gives an equal unfitted view."""
    fresh = clone(fv.view)
    assert type(fresh) is type(fv.view) and fresh.get_params() == fv.view.get_params(), \
        "clone() does not reproduce the view's parameters (does __init__ store each argument as is?)"
    for obj, what in ((fresh, "a clone of the fitted view"), (fv.prototype, "the unfitted view")):
        learned = [k for k in vars(obj) if k.endswith("_") and not k.startswith("_")]
        assert not learned, f"{what} has fitted attributes {learned} (set them in fit, not __init__)"


def check_rows_and_dimensionality(fv: FittedView) -> None:
    """One finite row per document, the same width for every language (|Y| for posteriors)."""
    view, Z, data = fv.view, fv.Z, fv.data
    n = len(data.texts)
    assert Z.ndim == 2 and Z.shape[0] == n, f"fit_transform gave shape {Z.shape} for {n} documents"
    assert np.isfinite(Z).all(), "fit_transform gave non-finite values"
    if view.output == "posteriors":
        assert Z.shape[1] == data.Y.shape[1], f"a posterior view has {Z.shape[1]} columns for {data.Y.shape[1]} classes"
    if hasattr(view, "n_features_out_"):
        assert view.n_features_out_ == Z.shape[1], "n_features_out_ differs from the width of the views"
    for lang in data.languages:
        assert view.covers(lang), f"the view does not cover its training language {lang!r}"
        idx = np.flatnonzero(data.test_langs == lang)
        Zl = view.transform([data.test_texts[i] for i in idx], data.test_langs[idx])
        assert Zl.shape == (len(idx), Z.shape[1]), f"transform gave shape {Zl.shape} for {len(idx)} {lang} documents"


def check_transform_order_and_batch_independence(fv: FittedView) -> None:
    """Rows come in input order, and a document's view does not depend on the other documents of the batch: for
    the training languages and for every zero-shot language of the data that the view covers (a mixed batch of
    both gives each document its view alone)."""
    view, data = fv.view, fv.data
    texts, langs = data.test_texts, data.test_langs
    Z = view.transform(texts, langs)
    perm = np.random.RandomState(0).permutation(len(texts))
    _close(view.transform([texts[i] for i in perm], langs[perm]), Z[perm], fv, "rows not in input order")
    for i in sorted({0, len(texts) // 2}):
        _close(view.transform([texts[i]], langs[i:i + 1])[0], Z[i], fv, "a document's view depends on its batch")
    zs = [i for i, lang in enumerate(data.zero_shot_langs) if view.covers(str(lang))]
    if not zs:
        return
    ztexts, zlangs = [data.zero_shot_texts[i] for i in zs], np.asarray(data.zero_shot_langs, dtype=object)[zs]
    Zz = view.transform(ztexts, zlangs)
    for i in range(len(zs)):
        _close(view.transform([ztexts[i]], zlangs[i:i + 1])[0], Zz[i], fv,
               f"a document of the zero-shot language {zlangs[i]!r} gets another view alone than in its batch")
    mixed = view.transform(list(texts) + ztexts, np.concatenate([langs, zlangs]))
    _close(mixed, np.vstack([Z, Zz]), fv, "a mixed batch of seen and zero-shot languages changes the views")


def check_state_round_trip(fv: FittedView) -> None:
    """``get_state`` is JSON metadata and plain arrays; ``from_state`` gives back the same view (no pickle)."""
    view, data = fv.view, fv.data
    meta, arrays = view.get_state()
    meta = json.loads(json.dumps(meta))  # JSON-able, and survives a round trip
    assert all(isinstance(a, np.ndarray) and a.dtype != object for a in arrays.values()), \
        "get_state arrays must be numpy arrays of a plain dtype"
    loaded = type(view).from_state(meta, {k: np.array(v) for k, v in arrays.items()})
    assert loaded.get_params() == view.get_params(), "from_state does not restore the parameters"
    _close(loaded.transform(data.test_texts, data.test_langs), view.transform(data.test_texts, data.test_langs), fv,
           "the view rebuilt by from_state transforms differently")
    for lang in data.languages:
        assert loaded.covers(lang), f"the rebuilt view does not cover {lang!r}"


def check_refit_is_deterministic(fv: FittedView) -> None:
    """Fitting a clone again gives the same training and test views (seeded by the view's parameters)."""
    again = clone(fv.prototype)
    data = fv.data
    _close(again.fit_transform(data.texts, data.langs, data.Y), fv.Z, fv, "a second fit gives other training views")
    _close(again.transform(data.test_texts, data.test_langs), fv.view.transform(data.test_texts, data.test_langs), fv,
           "a second fit gives other test views")


def check_out_of_vocabulary_documents_are_finite(fv: FittedView, *, expect_zero: bool = False) -> None:
    """Documents without any known word (or empty) get finite views (the zero vector when ``expect_zero``)."""
    langs = fv.data.languages
    texts = ["xqxqxq wvwvwv", "", "12345 !!"]
    Z = fv.view.transform(texts, np.array([langs[i % len(langs)] for i in range(len(texts))], dtype=object))
    assert np.isfinite(Z).all(), "an out-of-vocabulary or empty document gets a non-finite view"
    if expect_zero:
        assert not Z.any(), "an out-of-vocabulary document should get the zero vector"


def check_unseen_language_is_refused(fv: FittedView, *, lang: str = "tlh") -> None:
    """A language the view cannot represent is refused with :class:`UnseenLanguageError` (not garbage views);
    skipped for a view whose ``language_reach()`` is ``"any"``."""
    view = fv.view
    if view.language_reach() == "any":
        return
    assert not view.covers(lang), f"the view claims to cover {lang!r} (no training documents, no resources)"
    try:
        view.transform(["qapla"], np.array([lang], dtype=object))
    except UnseenLanguageError as exc:
        assert lang in str(exc), "the UnseenLanguageError does not name the language"
    else:
        raise AssertionError(f"transform of an unseen language ({lang!r}) did not raise UnseenLanguageError")


#: Every check, by name, in the order :func:`check_view` runs them.
def check_tier_protocol(fv: FittedView) -> None:
    """What the tiers read from a fitted view and clear on it (declared in :mod:`gfun.views.base`): the out-of-fold
    training views, handed over once and shaped like the training views; the held-out training documents, as
    indices; and :meth:`~gfun.views.base.ViewGenerator.release`, after which the view transforms as before."""
    view, n = fv.view, len(fv.data.texts)
    oof = view.pop_training_oof()
    if oof is not None:
        oof = np.asarray(oof)
        assert oof.shape == fv.Z.shape, f"pop_training_oof gives shape {oof.shape}, the training views {fv.Z.shape}"
        assert np.isfinite(oof).all(), "pop_training_oof gives non-finite values"
    assert view.pop_training_oof() is None, "pop_training_oof must hand the out-of-fold training views over once"
    held = view.heldout_documents()
    if held is not None:
        held = np.asarray(held)
        assert held.ndim == 1 and np.issubdtype(held.dtype, np.integer) and bool(((held >= 0) & (held < n)).all()), \
            "heldout_documents must give indices of training documents"
    before = np.asarray(view.transform(fv.data.test_texts, fv.data.test_langs))
    view.release()
    _close(np.asarray(view.transform(fv.data.test_texts, fv.data.test_langs)), before, fv, "transform after release()")


CHECKS: dict[str, Callable[[FittedView], None]] = {
    "class_attributes": check_class_attributes,
    "clone_and_params": check_clone_and_params,
    "rows_and_dimensionality": check_rows_and_dimensionality,
    "transform_order_and_batch_independence": check_transform_order_and_batch_independence,
    "state_round_trip": check_state_round_trip,
    "refit_is_deterministic": check_refit_is_deterministic,
    "out_of_vocabulary_documents_are_finite": check_out_of_vocabulary_documents_are_finite,
    "unseen_language_is_refused": check_unseen_language_is_refused,
    "tier_protocol": check_tier_protocol,
}


def check_view(view: ViewGenerator, data: CheckData | None = None, *, skip: Sequence[str] = (),
               rtol: float = 1e-5, atol: float = 1e-6) -> FittedView:
    """Run every check of :data:`CHECKS` on an unfitted ``view`` (fitted on a clone; ``view`` is not modified).

    Parameters
    ----------
    view : ViewGenerator
        Unfitted, with the parameters to check (small, seeded settings keep it quick).
    data : CheckData, optional
        Documents to fit and transform; default :func:`demo_check_data` (30 training and 8 test documents in
        each of de, en, it from the bundled demo corpus).
    skip : sequence of str
        Names of checks not to run.
    rtol, atol : float
        Tolerances of the comparisons of views (batch independence, round trip, refit).

    Returns
    -------
    FittedView
        The fitted clone and its training views.

    Raises
    ------
    AssertionError
        Naming the check that failed and why.
    """
    unknown = sorted(set(skip) - set(CHECKS))
    if unknown:
        raise ValueError(f"unknown check(s) {unknown}; checks: {list(CHECKS)}")
    if not isinstance(view, ViewGenerator):
        raise TypeError(f"check_view needs a ViewGenerator, got {type(view).__name__}")
    fv = fit_for_check(view, data, rtol=rtol, atol=atol)
    for name, check in CHECKS.items():
        if name in skip:
            continue
        try:
            check(fv)
        except AssertionError as exc:
            raise AssertionError(f"check_view: {type(view).__name__} fails {name}: {exc}") from exc
    return fv
