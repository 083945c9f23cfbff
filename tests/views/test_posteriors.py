"""gfun.views.posteriors: the X view (per-language TF-IDF -> linear SVMs -> Platt posteriors)."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.views.posteriors import PosteriorsView, _fit_classes


@pytest.fixture(scope="module")
def data():
    train, _ = load_demo()
    rng = np.random.RandomState(0)
    groups = train.by_language()
    rows = [rng.choice(groups[lang], 80, replace=False) for lang in ("en", "it")]
    train = train.subset(np.sort(np.concatenate(rows)))
    return train.texts, np.asarray(train.langs), train.Y.toarray()


def test_posteriors_in_sample_and_out_of_fold(data) -> None:
    texts, langs, Y = data
    view = PosteriorsView(cv=3, random_state=0)
    Z = view.fit_transform(texts, langs, Y)
    assert Z.shape == Y.shape and ((Z >= 0) & (Z <= 1)).all() and view.output == "posteriors"
    np.testing.assert_allclose(Z, view.transform(texts, langs), rtol=1e-5, atol=1e-6)  # in-sample: as transform
    oof = view.pop_training_oof()
    assert oof is not None and oof.shape == Z.shape and not np.allclose(oof, Z)
    cv = PosteriorsView(cv=3, random_state=0, train_posteriors="cv")
    np.testing.assert_allclose(cv.fit_transform(texts, langs, Y), oof, rtol=1e-5, atol=1e-6)
    assert view.covers("en") and not view.covers("fi") and view.language_reach() == "training"
    with pytest.raises(UnseenLanguageError):
        view.transform(["hei"], np.array(["fi"]))


def test_the_view_has_the_same_bits_whatever_its_class_blocks(data, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each class's SVMs depend on its labels, the folds and the seed only: the view fitted in blocks of classes
    (as on a cluster with more workers than languages) is the view fitted a language at a time, bit for bit."""
    import gfun.views.posteriors as posteriors

    texts, langs, Y = data
    whole = PosteriorsView(cv=3, random_state=0)
    Z = whole.fit_transform(texts, langs, Y)
    calls = []
    monkeypatch.setattr(posteriors, "_fit_classes", lambda *a, **k: calls.append(a[1].shape[1]) or
                        _fit_classes(*a, **k))
    blocked = PosteriorsView(cv=3, random_state=0, n_jobs=3)  # 2 languages, 3 workers: 6 jobs wanted
    Zb = blocked.fit_transform(texts, langs, Y)
    # blocks in proportion to each language's nonzeros, rounded up; every class once per language
    assert 2 * 3 <= len(calls) <= 2 * 3 + 2 and sum(calls) == 2 * Y.shape[1]
    assert np.array_equal(Z, Zb) and np.array_equal(whole.pop_training_oof(), blocked.pop_training_oof())
    for lang in ("en", "it"):
        a, b = whole.models_[lang], blocked.models_[lang]
        assert np.array_equal(a.svm.coef, b.svm.coef) and np.array_equal(a.svm.intercept, b.svm.intercept)
        assert np.array_equal(a.platt_A, b.platt_A) and np.array_equal(a.platt_B, b.platt_B)
    assert np.array_equal(whole.transform(texts, langs), blocked.transform(texts, langs))
