"""gfun.views.posteriors: the X view (per-language TF-IDF -> linear SVMs -> Platt posteriors)."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.views.posteriors import PosteriorsView


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
