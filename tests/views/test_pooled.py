"""The pooled view (P): one vocabulary over all languages, serving any language."""

from __future__ import annotations

import numpy as np

from gfun.datasets.demo import load_demo
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.views.checks import check_view
from gfun.views.pooled import PooledPosteriorsView
from gfun.views.posteriors import PosteriorsView


def test_the_pooled_view_follows_the_view_contract() -> None:
    fv = check_view(PooledPosteriorsView(random_state=0))
    assert fv.view.language_reach() == "any" and fv.view.covers("tlh")


def test_training_views_are_out_of_fold_unless_asked() -> None:
    train, _ = load_demo()
    train = train.select(["en", "de"]).subset(range(200))
    texts, langs, Y = list(train.texts), np.asarray(train.langs, dtype=object), train.Y.toarray()
    oof_view = PooledPosteriorsView(random_state=0)
    oof = oof_view.fit_transform(texts, langs, Y)
    assert oof_view.pop_training_oof() is None  # the training views already are the out-of-fold ones
    in_view = PooledPosteriorsView(random_state=0, train_posteriors="in-sample")
    in_sample = in_view.fit_transform(texts, langs, Y)
    np.testing.assert_allclose(in_view.pop_training_oof(), oof, rtol=1e-6)
    # classifiers judged on the documents they were trained on look better than out of fold
    assert np.abs(in_sample - Y).mean() < np.abs(oof - Y).mean()


def test_gfun_with_the_pooled_view_serves_a_language_without_training_documents() -> None:
    train, test = load_demo()
    model = GeneralizedFunnelling(views="xp", random_state=0).fit(train.select(["en", "de", "it"]))
    french = test.select(["fr"]).subset(range(40))
    assert "fr" not in model.languages_
    proba = model.predict_proba(french)
    assert proba.shape == (40, len(model.classes_)) and np.isfinite(proba).all()


def test_translations_share_a_fold_when_the_view_is_given_groups() -> None:
    """In a parallel corpus a text's translations share names and numbers: out-of-fold outputs computed with a
    translation in the training folds are nearly in-sample ones. With ``groups``, all translations are held out
    together, and the first tier passes the estimator's groups to a view that takes them."""
    train, _ = load_demo()
    en = train.select(["en"]).subset(range(150))
    texts = list(en.texts) * 2  # every text and its "translation" (here: the same text in a second language)
    langs = np.asarray(["en"] * 150 + ["xx"] * 150, dtype=object)
    Y = np.vstack([en.Y.toarray()] * 2)
    groups = np.asarray([str(i) for i in range(150)] * 2)
    view = PooledPosteriorsView(random_state=0)
    assert view.takes_groups() and not PosteriorsView().takes_groups()
    leaky = view.fit_transform(texts, langs, Y)
    honest = PooledPosteriorsView(random_state=0).fit_transform(texts, langs, Y, groups=groups)
    assert np.abs(honest - Y).mean() > np.abs(leaky - Y).mean()
