"""Explanations of GeneralizedFunnelling's decisions on the bundled demo data: the views' contributions add up to
``decision_function`` for every aggregation policy and for documents of languages only some views serve, and the
words of the word views mean what the documentation says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.funnelling.explanation import WORD_MEASURES
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.loading import load_model
from gfun.views.embeddings import WordEmbeddingView
from gfun.views.posteriors import PosteriorsView
from tests.demo_samples import sample_languages
from tests.experiments.settings import HashedVectors

FIXTURES = Path(__file__).parents[1] / "persistence" / "fixtures"


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    """60 training documents in each of de, en, it; 4 test documents in each of de, en and fr (French: a language
    without training documents)."""
    train, test = load_demo()
    return sample_languages(train, 60, 0, ("de", "en", "it")), sample_languages(test, 4, 1, ("de", "en", "fr"))


def _fit(train: MultilingualCorpus, views: str, aggregation: str, **kw) -> GeneralizedFunnelling:
    return GeneralizedFunnelling(views=views, aggregation=aggregation, random_state=0,
                                 meta=default_meta().set_params(C=1.0), **kw).fit(train)


@pytest.fixture(scope="module")
def models(demo) -> dict[str, GeneralizedFunnelling]:
    """gFun-XP with every aggregation policy (a second or so each)."""
    return {agg: _fit(demo[0], "xp", agg) for agg in ("mean", "concat", "stack", "wmean", "select")}


def _check_adds_up(model: GeneralizedFunnelling, docs: MultilingualCorpus) -> None:
    """base + contributions == decision_function for every document and every class."""
    decision = model.decision_function(docs)
    explained = model.explain(docs, labels=list(model.classes_), top_words=0)
    for i, doc in enumerate(explained):
        got = [lab.decision for lab in doc.explained]
        total = [lab.base_value + sum(v.contribution for v in lab.views) for lab in doc.explained]
        np.testing.assert_allclose(got, decision[i], rtol=0, atol=1e-8)
        np.testing.assert_allclose(total, decision[i], rtol=0, atol=1e-8)
        assert doc.labels == [c for c, d in zip(model.classes_, decision[i], strict=True) if d > 0]


@pytest.mark.parametrize("aggregation", ["mean", "concat", "stack", "wmean", "select"])
def test_contributions_add_up_to_the_decision(demo, models, aggregation: str) -> None:
    model = models[aggregation]
    docs = demo[1] if aggregation != "concat" else demo[1].select(["de", "en"])  # concat needs every view
    _check_adds_up(model, docs)


def test_a_view_that_does_not_serve_the_language_contributes_nothing(demo, models) -> None:
    """A French document (no French training documents): X does not serve it, P (one vocabulary) does."""
    model = models["mean"]
    fr = demo[1].select(["fr"])
    for doc in model.explain(fr, top_k=3):
        for lab in doc.explained:
            x, p = lab.views
            assert (x.view, x.used, x.contribution, x.note) == ("x", False, 0.0, "does not serve 'fr'")
            assert p.used and p.contribution == pytest.approx(lab.decision - lab.base_value, abs=1e-12)


def test_zero_shot_fallback_views_explain_the_languages_only_they_serve(demo) -> None:
    """gFun-X with P as its zero-shot view: the French documents are served by P alone, through its mapper."""
    model = _fit(demo[0], "x", "mean", zero_shot_views="p")
    _check_adds_up(model, demo[1])
    by_lang = {doc.lang: doc for doc in model.explain(demo[1])}
    x, p = by_lang["fr"].explained[0].views
    assert not x.used and x.contribution == 0.0 and p.used and p.note == "zero-shot fallback"
    x, p = by_lang["de"].explained[0].views
    assert x.used and not p.used and p.contribution == 0.0 and p.note.startswith("zero-shot fallback, for")


def test_select_gives_nothing_to_the_views_it_did_not_keep(demo, models) -> None:
    model = models["select"]
    explained = model.explain(demo[1])
    assert explained.views == model.view_names_
    for doc in explained:
        for lab in doc.explained:
            for v in lab.views:
                if v.view not in model.selected_views_:
                    assert (v.contribution, v.used) == (0.0, False)


def test_the_base_value_is_the_decision_at_the_average_training_input(demo, models) -> None:
    model = models["stack"]
    base = model.meta_.decision_function(model.scaler_.transform(model.meta_input_mean_[None, :]))[0]
    for doc in model.explain(demo[1]):
        for lab in doc.explained:
            assert lab.base_value == pytest.approx(base[model.classes_.index(lab.label)], abs=1e-12)


def test_x_words_reproduce_the_view_s_own_decision(demo, models) -> None:
    """X's word values are w*x terms: with the intercept they add up to the view's SVM score, whose Platt sigmoid
    is the X posterior the meta level reads."""
    model = models["mean"]
    x_view = model.branches_[0].view
    de = demo[1].select(["de"])
    explained = model.explain(de, top_k=4, top_words=100_000)
    for i, doc in enumerate(explained):
        model_de = x_view.models_["de"]
        score = model_de.svm.decision_function(model_de.vectorizer.transform([de.texts[i]]))[0]
        posterior = x_view.transform([de.texts[i]], np.asarray(["de"], dtype=object))[0]
        for lab in doc.explained:
            j = model.classes_.index(lab.label)
            x = lab.views[0]
            assert x.word_measure == "svm-term"
            terms = x.words_up + x.words_down
            assert terms and all(w.value > 0 for w in x.words_up) and all(w.value < 0 for w in x.words_down)
            assert x.view_score == pytest.approx(score[j], abs=1e-5)
            assert sum(w.value for w in terms) + x.intercept == pytest.approx(x.view_score, abs=1e-5)
            assert x.posterior == pytest.approx(posterior[j], abs=1e-6)
            assert x.posterior == pytest.approx(1 / (1 + np.exp(model_de.platt_A[j] * score[j] + model_de.platt_B[j])),
                                                abs=1e-6)
            # each term comes with the words of the document it stands for, as the text spells them
            assert all(any(word in de.texts[i] for word in w.words) for w in terms)


def test_top_words_keeps_the_strongest(demo, models) -> None:
    model = models["mean"]
    doc = demo[1].select(["en"])
    every = model.explain(doc, top_k=1, top_words=100_000)[0].explained[0].views[0]
    few = model.explain(doc, top_k=1, top_words=2)[0].explained[0].views[0]
    assert [w.term for w in few.words_up] == [w.term for w in every.words_up[:2]]
    assert [w.term for w in few.words_down] == [w.term for w in every.words_down[:2]]
    assert few.contribution == every.contribution


def test_labels_and_top_k_choose_what_is_explained(demo, models) -> None:
    model = models["mean"]
    docs = demo[1].select(["en"])
    decision = model.decision_function(docs)
    by_default = model.explain(docs)
    for i, doc in enumerate(by_default):
        predicted = [c for c, d in zip(model.classes_, decision[i], strict=True) if d > 0]
        assert [lab.label for lab in doc.explained] == (
            sorted(predicted, key=lambda c: -decision[i, model.classes_.index(c)])
            or [model.classes_[int(np.argmax(decision[i]))]])
    chosen = model.classes_[:2]
    assert [lab.label for lab in model.explain(docs, labels=chosen)[0].explained] == chosen
    assert len(model.explain(docs, top_k=5)[0].explained) == 5
    with pytest.raises(ValueError, match=r"unknown label\(s\) \['nope'\]"):
        model.explain(docs, labels=["nope"])
    with pytest.raises(ValueError, match="labels or top_k, not both"):
        model.explain(docs, labels=chosen, top_k=2)
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        model.explain(docs, top_k=0)


def test_texts_with_langs_and_json_and_text_forms(demo, models) -> None:
    model = models["wmean"]
    docs = demo[1].select(["de"])
    explained = model.explain(docs.texts[:2], langs=["de", "de"])
    assert [d.id for d in explained] == ["0", "1"]
    data = json.loads(json.dumps(explained.to_dict(), allow_nan=False))
    assert data["aggregation"] == "wmean" and data["views"] == ["x", "p"]
    first = data["documents"][0]["explained"][0]
    assert {v["view"] for v in first["views"]} == {"x", "p"}
    assert first["views"][0]["word_measure"] == "svm-term" and first["views"][0]["words_up"][0]["term"]
    text = explained[0].to_text()
    label = explained[0].explained[0]
    assert text.startswith("document 0 (de): ")
    assert re.search(rf"{re.escape(label.label)}: decision [+-]\d\.\d{{3}} = base [+-]\d\.\d{{3}} X [+-]", text)
    assert WORD_MEASURES["svm-term"] in text and label.views[0].words_up[0].words[0] in text


def test_a_saved_model_explains_as_it_did(demo, models, tmp_path: Path) -> None:
    model = models["concat"]
    docs = demo[1].select(["en"])
    model.save(str(tmp_path / "model"))
    loaded = load_model(tmp_path / "model")
    assert loaded.explain(docs).to_dict() == model.explain(docs).to_dict()


def test_models_saved_before_explanations(demo) -> None:
    """A model saved by gfun 0.1 with a z-scored meta-level input is explained from the z-scoring's mean; one
    without (Funnelling, no normalisation) is refused with a one-line reason."""
    docs = demo[1].select(["de"])
    x = load_model(FIXTURES / "x")
    _check_adds_up(x, docs)
    with pytest.raises(ValueError, match="without the average of its meta-level training input.*train it again"):
        load_model(FIXTURES / "fun").explain(docs)


def test_m_words_are_the_change_in_its_posterior_without_them(demo) -> None:
    """M's word values are occlusions: the M posterior of the document minus the M posterior of the document
    without the word, here checked by deleting the word from the text (word vectors: a stand-in source with a
    vector for every word of every language, so that M also serves French)."""
    views = [("x", PosteriorsView(random_state=0)), ("m", WordEmbeddingView(source=HashedVectors()))]
    model = GeneralizedFunnelling(views=views, aggregation="mean", random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(demo[0])
    _check_adds_up(model, demo[1])
    m_branch = model.branches_[1]
    for lang in ("de", "fr"):  # French: M alone serves it
        docs = demo[1].select([lang])
        lab = model.explain(docs, top_k=1, top_words=3)[0].explained[0]
        m = lab.views[1]
        assert m.used and m.word_measure == "posterior-change" and m.words_up and m.words_down
        j = model.classes_.index(lab.label)
        for one in (m.words_up[0], m.words_down[0]):
            text = re.sub(rf"\b(?:{'|'.join(map(re.escape, one.words))})\b", " ", docs.texts[0])
            without = m_branch.transform([text], np.asarray([lang], dtype=object))[0, j]
            assert m.posterior - without == pytest.approx(one.value, abs=1e-6)
        if lang == "fr":
            assert not lab.views[0].used and lab.views[0].contribution == 0.0
