"""``select``'s meta-classifier of languages without training documents (``unseen="own"``), on the bundled demo data:
gFun-XP trained on German, English and Italian keeps X and P, so French documents (no training documents) reach the
meta tier through P alone and get a meta-classifier trained on P's posteriors; the training languages' decisions do
not change, and the model saves, loads and explains them."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.aggregation import mean_input
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.language_out import language_out_folds
from gfun.funnelling.meta import default_meta
from gfun.funnelling.select import SELECT_UNSEEN_MARGIN, Select
from gfun.persistence.loading import load_model
from gfun.views.pooled import PooledPosteriorsView
from gfun.views.posteriors import PosteriorsView
from tests.demo_samples import sample_languages


@pytest.fixture(scope="module")
def data() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """150 training documents in each of de, en, it; 30 test documents in each of de, en, fr."""
    train, test = load_demo()
    return sample_languages(train, 150, 0, ("de", "en", "it")), sample_languages(test, 30, 1, ("de", "en", "fr"))


class _EncoderLikePooledView(PooledPosteriorsView):
    """P, as if it reached other languages by more than their shared words (as the E and F views do): ``unseen="auto"``
    judges it on language-out outputs."""

    transfers_by_vocabulary = False


def _fit(train: MultilingualCorpus, unseen: str, p: type = PooledPosteriorsView, **meta) -> GeneralizedFunnelling:
    return GeneralizedFunnelling(views=[("x", PosteriorsView()), ("p", p())], aggregation=Select(unseen=unseen),
                                 random_state=0, meta=default_meta().set_params(C=1.0, **meta)).fit(train)


@pytest.fixture(scope="module")
def models(data) -> dict[str, GeneralizedFunnelling]:
    return {unseen: _fit(data[0], unseen) for unseen in ("own", "shared")}


def test_languages_without_training_documents_get_a_meta_classifier_of_the_views_that_reach_them(models) -> None:
    own = models["own"]
    assert own.selected_views_ == ["x", "p"]  # the premise: X (training languages only) is kept beside P
    unseen = own.aggregation_.unseen_language_meta()
    assert unseen is not None and unseen.views == ["p"]
    assert unseen.meta.n_features_in_ == len(own.classes_) and unseen.input_mean.shape == (len(own.classes_),)
    assert models["shared"].aggregation_.unseen_language_meta() is None


def test_training_languages_are_classified_as_before_and_unseen_ones_by_their_own(data, models) -> None:
    test = data[1]
    own, shared = models["own"], models["shared"]
    langs = np.asarray(test.langs)
    fr = langs == "fr"
    np.testing.assert_array_equal(own.unseen_rows(langs), fr)
    d_own, d_shared = own.decision_function(test), shared.decision_function(test)
    np.testing.assert_allclose(d_own[~fr], d_shared[~fr], rtol=1e-12, atol=1e-12)  # rows scored in another batch
    assert not np.allclose(d_own[fr], d_shared[fr])
    # a French document's decision is the own meta-classifier's, on the mean of P's posteriors alone
    unseen = own.aggregation_.unseen_language_meta()
    vb = own.view_blocks(list(test.texts), langs)
    p = own.view_names_.index("p")
    Z = mean_input([vb.blocks[p][fr]], [np.ones(int(fr.sum()), dtype=bool)])
    np.testing.assert_allclose(d_own[fr], unseen.decision_function(Z), rtol=1e-10, atol=1e-10)
    # predict, predict_proba and predict_with_proba agree row by row, whichever meta-classifier scored the row
    pred, proba = own.predict_with_proba(test)
    np.testing.assert_array_equal(pred, own.predict(test))
    np.testing.assert_array_equal(pred, (d_own > 0).astype(np.int8))
    np.testing.assert_allclose(proba, own.predict_proba(test))
    np.testing.assert_array_equal(proba > 0.5, pred.astype(bool))  # each meta-classifier's sigmoids are anchored


def test_it_is_saved_loaded_and_described(data, models, tmp_path: Path, capsys) -> None:
    own = models["own"]
    own.save(str(tmp_path / "model"))
    loaded = load_model(str(tmp_path / "model"))
    assert loaded.aggregation_.unseen_language_meta().views == ["p"]
    np.testing.assert_array_equal(loaded.decision_function(data[1]), own.decision_function(data[1]))
    np.testing.assert_array_equal(loaded.predict_proba(data[1]), own.predict_proba(data[1]))
    assert main(["-q", "info", str(tmp_path / "model")]) == 0
    assert re.search(r"other languages\s+own meta-classifier of P\n", capsys.readouterr().out)
    models["shared"].save(str(tmp_path / "shared"))
    assert load_model(str(tmp_path / "shared")).aggregation_.unseen_language_meta() is None
    assert main(["-q", "info", str(tmp_path / "shared")]) == 0
    assert "other languages" not in capsys.readouterr().out


def test_explanations_add_up_with_the_own_meta_classifier(data, models) -> None:
    own = models["own"]
    test = data[1]
    fr = np.flatnonzero(np.asarray(test.langs) == "fr")[:3]
    de = np.flatnonzero(np.asarray(test.langs) == "de")[:2]
    sub = test.subset(np.concatenate([fr, de]))
    explained = own.explain(sub, top_words=0)
    decision = own.decision_function(sub)
    unseen = own.aggregation_.unseen_language_meta()
    own_base = unseen.decision_function(unseen.input_mean[None, :])[0]
    main_base = own.meta_.decision_function(own.scaler_.transform(own.meta_input_mean_[None, :]))[0]
    for i, doc in enumerate(explained):
        for lab in doc.explained:
            j = own.classes_.index(lab.label)
            assert lab.base_value + sum(v.contribution for v in lab.views) == pytest.approx(decision[i, j], abs=1e-9)
            assert lab.base_value == pytest.approx((own_base if doc.lang == "fr" else main_base)[j], abs=1e-12)
            x = next(v for v in lab.views if v.view == "x")
            assert x.used == (doc.lang != "fr")


def test_the_default_judges_and_keeps_the_shared_one_for_a_vocabulary_view(data, models) -> None:
    # gFun-XP: unseen languages reach the meta tier through P alone, whose language-out outputs cannot judge it
    assert Select().unseen == "auto"
    default = GeneralizedFunnelling(views="xp", random_state=0, meta=default_meta().set_params(C=1.0)).fit(data[0])
    assert default.aggregation_.unseen_language_meta() is None and "language_out" not in default.timings_
    assert default.aggregation_.unseen_scores_ == {}
    np.testing.assert_array_equal(default.decision_function(data[1]), models["shared"].decision_function(data[1]))


def test_a_bad_value_is_refused(data) -> None:
    with pytest.raises(ValueError, match="select unseen must be one of"):
        _fit(data[0], "mine")


def test_language_out_folds_never_train_on_a_judged_language_or_translation() -> None:
    langs = np.array(["de", "en", "it", "fr"] * 30, dtype=object)
    folds = language_out_folds(langs, None, 0)
    assert len(folds) == 2
    judged = np.zeros(len(langs), dtype=int)
    for train, judge in folds:
        assert not set(langs[train]) & set(langs[judge]) and train.any() and judge.any()
        judged += judge
    np.testing.assert_array_equal(judged, 1)  # without translation groups, every document judged once
    groups = np.repeat(np.arange(30), 4)  # each text in the four languages
    for train, judge in language_out_folds(langs, groups, 0):
        assert not set(langs[train]) & set(langs[judge])
        assert not set(groups[train]) & set(groups[judge]) and train.any() and judge.any()
    assert language_out_folds(np.array(["de"] * 5, dtype=object), None, 0) == []


def test_auto_keeps_the_meta_classifier_that_scores_better_on_language_out_outputs(data, models) -> None:
    auto = _fit(data[0], "auto", _EncoderLikePooledView)
    scores = auto.aggregation_.unseen_scores_
    assert set(scores) == {"shared", "own"} and "language_out" in auto.timings_
    assert scores["own"].shape == (3,)  # de, en, it: each judged on the outputs of views fitted without it
    diff = scores["own"] - scores["shared"]
    clear = diff.mean() > SELECT_UNSEEN_MARGIN * diff.std(ddof=1) / np.sqrt(len(diff)) and diff.mean() > 0
    chosen = "own" if clear else "shared"
    assert (auto.aggregation_.unseen_language_meta() is not None) == (chosen == "own")
    np.testing.assert_array_equal(auto.decision_function(data[1]), models[chosen].decision_function(data[1]))
    again = _fit(data[0], "auto", _EncoderLikePooledView)
    for name in scores:
        np.testing.assert_array_equal(again.aggregation_.unseen_scores_[name], scores[name])
    assert ((scores["shared"] > 0) & (scores["shared"] < 1)).all() and ((scores["own"] > 0) & (scores["own"] < 1)).all()


def test_auto_has_nothing_to_choose_when_the_kept_views_serve_every_language(data) -> None:
    model = GeneralizedFunnelling(views="p", aggregation=Select(unseen="auto"), random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(data[0])
    assert model.aggregation_.unseen_language_meta() is None and model.aggregation_.unseen_scores_ == {}
    assert "language_out" not in model.timings_


class _NetworkPooledView(PooledPosteriorsView):
    """P, as if it trained a network (and reached other languages by more than shared words): not fitted again for
    language-out outputs."""

    trains_network = True
    transfers_by_vocabulary = False


def test_auto_keeps_the_shared_meta_classifier_when_it_cannot_judge(data, caplog) -> None:
    # a view that trains a network among those that serve unseen languages: never fitted again
    caplog.set_level("INFO", logger="gfun.funnelling.generalized")  # select logs as the estimator
    model = GeneralizedFunnelling(views=[("x", PosteriorsView()), ("p", _NetworkPooledView())],
                                  aggregation=Select(unseen="auto"), random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(data[0])
    assert model.selected_views_ == ["x", "p"]
    assert model.aggregation_.unseen_language_meta() is None and "language_out" not in model.timings_
    assert "P trains a network, not fitted again" in caplog.text
    # a single training language: no language can be left out
    english = data[0].subset(np.flatnonzero(np.asarray(data[0].langs) == "en"))
    model = _fit(english, "auto", _EncoderLikePooledView)
    assert model.aggregation_.unseen_language_meta() is None and model.aggregation_.unseen_scores_ == {}
    assert _fit(english, "own").aggregation_.unseen_language_meta() is not None  # "own" needs no judging
