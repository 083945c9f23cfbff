"""The word-embeddings view (M): word-vector sources by spec, OOV, SIF, zero-shot, and M inside gFun."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_mapper, default_meta
from gfun.metrics.evaluation import evaluate
from gfun.text.analysis import Analyzer
from gfun.views.embeddings import WordEmbeddingView, build_source, source_covers
from gfun.wordvectors.vecfile import VecFileSource
from tests import synthetic_vectors as syn
from tests.synthetic_vectors import make_corpus, write_vec_files

TRAIN = ["de", "en", "it"]


def _spec(folder: Path) -> dict:
    return {"spec": f"vec:{folder}", "cache": False}


@pytest.fixture(scope="module")
def vec_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Aligned vectors (small per-language noise) for en it de fr nl; no sv file."""
    return write_vec_files(tmp_path_factory.mktemp("vec"), ["en", "it", "de", "fr", "nl"])


@pytest.fixture(scope="module")
def exact_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Translations share exactly the same vector."""
    return write_vec_files(tmp_path_factory.mktemp("exact"), ["en", "it", "de", "nl"], noise=0.0)


@pytest.fixture(scope="module")
def corpus() -> tuple[list[str], np.ndarray, np.ndarray]:
    return make_corpus(TRAIN, 60, seed=0)


@pytest.fixture(scope="module")
def view(vec_dir: Path, corpus) -> WordEmbeddingView:
    return WordEmbeddingView(source=_spec(vec_dir)).fit(*corpus)


# ----------------------------------------------------------------------------------------------- sources
def test_build_source_from_specs(vec_dir: Path) -> None:
    for spec in (str(vec_dir), vec_dir, f"vec:{vec_dir}", str(vec_dir / "wiki.multi.{lang}.vec"), _spec(vec_dir),
                 {"spec": str(vec_dir), "cache": False},
                 {"files": {"en": str(vec_dir / "wiki.multi.en.vec")}, "cache": False}):
        source = build_source(spec)
        assert isinstance(source, VecFileSource)
        assert source.vectors("en", [syn.lexicon()["en"][0]]).shape == (1, syn.DIM)
    assert build_source(source) is source
    with pytest.raises(ValueError, match="neither"):
        build_source("/no/such/folder")
    with pytest.raises(ValueError, match="spec"):
        build_source({"max_rows": 10})
    with pytest.raises(TypeError):
        build_source(3)


def test_source_covers(vec_dir: Path) -> None:
    source = build_source(_spec(vec_dir))
    assert source_covers(source, "nl") and not source_covers(source, "sv")

    class Anything:
        def lookup(self, lang, vocabulary): ...

    class Explicit:
        def covers(self, lang):
            return lang == "en"

    assert source_covers(Anything(), "tlh")
    assert source_covers(Explicit(), "en") and not source_covers(Explicit(), "it")


# ----------------------------------------------------------------------------------------------- the view
def test_view_is_tfidf_times_vectors_then_sif_and_l2(view: WordEmbeddingView, corpus) -> None:
    texts, langs, _ = corpus
    assert view.n_features_out_ == syn.DIM and view.languages_ == TRAIN
    idx = np.flatnonzero(langs == "it")[:10]
    sub = [texts[i] for i in idx]
    terms = view.vectorizers_["it"].get_feature_names_out().tolist()
    assert set(terms) <= set(syn.lexicon()["it"])  # surface words: not stemmed
    raw = view.vectorizers_["it"].transform(sub) @ view.matrices_["it"]
    u = view.sif_.component("it")
    expected = raw - np.outer(raw @ u, u)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(view.transform(sub, langs[idx]), expected, rtol=1e-4, atol=1e-5)
    # OOV words have zero rows
    missing = set(syn.lexicon()["it"][syn.N_CONCEPTS - syn.N_MISSING:])
    zero_rows = {t for t, row in zip(terms, view.matrices_["it"], strict=True) if not row.any()}
    assert zero_rows == missing & set(terms)


def test_oov_token_share_is_logged(vec_dir: Path, corpus, caplog: pytest.LogCaptureFixture) -> None:
    texts, langs, Y = corpus
    with caplog.at_level(logging.INFO, logger="gfun.views.embeddings"):
        view = WordEmbeddingView(source=_spec(vec_dir)).fit(texts, langs, Y)
    missing = set(syn.lexicon()["en"][syn.N_CONCEPTS - syn.N_MISSING:])
    tokens = [w for t, lang in zip(texts, langs, strict=True) if lang == "en" for w in t.split()]
    expected = sum(w in missing for w in tokens) / len(tokens)
    assert view.oov_token_share_["en"] == pytest.approx(expected)
    assert 0 < expected < 0.2
    assert any("M view [en]" in r.getMessage() and "of the tokens out of vocabulary" in r.getMessage()
               for r in caplog.records)


def test_translations_get_the_same_view(exact_dir: Path) -> None:
    texts, langs, Y = make_corpus(TRAIN, 40, seed=3, parallel=True)
    view = WordEmbeddingView(source=_spec(exact_dir), sif="global")
    Z = view.fit_transform(texts, langs, Y)
    by_lang = {lang: Z[langs == lang] for lang in TRAIN}
    np.testing.assert_allclose(by_lang["en"], by_lang["it"], atol=1e-5)
    np.testing.assert_allclose(by_lang["en"], by_lang["de"], atol=1e-5)


def test_zero_shot_language(view: WordEmbeddingView, vec_dir: Path) -> None:
    assert view.covers("nl") and view.covers("fr")
    assert not view.covers("sv")  # no word vectors for Swedish
    with pytest.raises(UnseenLanguageError, match="sv"):
        view.transform(["lorem ipsum"], np.array(["sv"], dtype=object))
    # Dutch documents translating English ones land near their English counterparts
    texts, langs, _ = make_corpus(["en", "nl"], 30, seed=5, parallel=True)
    Z = view.transform(texts, langs)
    en, nl = Z[langs == "en"], Z[langs == "nl"]
    np.testing.assert_allclose(np.linalg.norm(nl, axis=1), 1.0, rtol=1e-5)
    cosines = np.sum(en * nl, axis=1)
    assert cosines.mean() > 0.9
    others = np.sum(en * np.roll(nl, 1, axis=0), axis=1)
    assert cosines.mean() > others.mean() + 0.3
    # a single Dutch document gets the view it gets in the batch (sublinear tf, idf 1: nothing learned from the
    # batch), and transforming changes nothing of the fitted view
    one = view.transform([texts[1]], langs[1:2])
    assert langs[1] == "nl" and np.linalg.norm(one) == pytest.approx(1.0, rel=1e-5)
    np.testing.assert_allclose(one[0], Z[1], rtol=1e-5, atol=1e-6)
    assert view.sif_.component("nl") is view.sif_.global_  # the component fitted on training views
    assert "nl" not in view.oov_token_share_


def test_state_without_vectors_refetches_from_the_source(vec_dir: Path, corpus) -> None:
    texts, langs, Y = corpus
    view = WordEmbeddingView(source=_spec(vec_dir), store_vectors=False).fit(texts, langs, Y)
    meta, arrays = view.get_state()
    assert not [k for k in arrays if k.endswith("/matrix")]
    loaded = WordEmbeddingView.from_state(json.loads(json.dumps(meta)), arrays)
    np.testing.assert_allclose(loaded.transform(texts[:20], langs[:20]), view.transform(texts[:20], langs[:20]),
                               rtol=1e-5, atol=1e-6)


def test_source_object_works_but_cannot_be_saved(vec_dir: Path, corpus) -> None:
    texts, langs, Y = corpus
    view = WordEmbeddingView(source=VecFileSource(vec_dir, cache=False)).fit(texts, langs, Y)
    assert view.transform(texts[:3], langs[:3]).shape == (3, syn.DIM)
    with pytest.raises(ValueError, match="cannot be saved"):
        view.get_state()


def test_real_text_with_partial_vectors(tmp_path: Path) -> None:
    """The demo's Debian descriptions, with random vectors for 70% of each language's words."""
    train, _ = load_demo()
    rng = np.random.RandomState(0)
    sample = train.subset(np.sort(np.concatenate([rng.choice(idx, 40, replace=False)
                                                  for lang, idx in train.by_language().items() if lang in TRAIN])))
    texts, langs = list(sample.texts), np.asarray(sample.langs, dtype=object)
    for lang in TRAIN:
        analyze = Analyzer(lang, stem=False)
        words = sorted({w for t, la in zip(texts, langs, strict=True) if la == lang for w in analyze(t)})
        kept = [w for w in words if rng.rand() < 0.7]
        lines = [f"{len(kept)} 8"] + [w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=8)) for w in kept]
        (tmp_path / f"{lang}.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    view = WordEmbeddingView(source=_spec(tmp_path))
    Z = view.fit_transform(texts, langs, sample.Y)
    assert Z.shape == (len(texts), 8) and np.isfinite(Z).all()
    for lang in TRAIN:
        assert 0.1 < view.oov_token_share_[lang] < 0.5
    assert not view.covers("fr")


# ----------------------------------------------------------------------------------------------- in gFun
@pytest.fixture(scope="module")
def split():
    train = make_corpus(TRAIN, 50, seed=10)
    test = make_corpus(TRAIN, 15, seed=11)
    zero = make_corpus(["nl"], 40, seed=12)
    return train, test, zero


def _f1(Y: np.ndarray, pred: np.ndarray) -> float:
    return float(evaluate(Y, pred).loc["all", "F1_micro"])


@pytest.mark.parametrize("aggregation", ["mean", "concat", "stack", "wmean", "select"])
def test_gfun_xm(vec_dir: Path, split, aggregation: str) -> None:
    (texts, langs, Y), (tt, tl, tY), (zt, zl, zY) = split
    model = GeneralizedFunnelling(views='xm', aggregation=aggregation, random_state=0,
                                  view_params={'m': {'source': _spec(vec_dir)}}, meta=default_meta().set_params(C=1.0))
    model.fit(texts, Y, langs=langs)
    dims = {"concat": syn.N_CLASSES + syn.DIM, "stack": 2 * syn.N_CLASSES}
    assert model.n_meta_features_ == dims.get(aggregation, syn.N_CLASSES)
    pred = model.predict(tt, langs=tl)
    assert _f1(tY, pred) > 0.7
    loaded = GeneralizedFunnelling.from_state(*_json_round_trip(model.get_state()))
    np.testing.assert_array_equal(loaded.predict(tt, langs=tl), pred)
    if aggregation != "concat":  # zero-shot: Dutch had no training documents; only M represents it
        zero_pred = model.predict(zt, langs=zl)
        # wmean's meta-classifier learned on X-dominated weighted means, and sees M's posteriors alone here
        assert _f1(zY, zero_pred) > (0.45 if aggregation == "wmean" else 0.6)
        np.testing.assert_array_equal(loaded.predict(zt, langs=zl), zero_pred)
    else:  # concatenation needs every view
        with pytest.raises(UnseenLanguageError, match="nl"):
            model.predict(zt, langs=zl)


def test_gfun_xw_refuses_zero_shot(split) -> None:
    (texts, langs, Y), _, (zt, zl, _) = split
    model = GeneralizedFunnelling(views='xw', random_state=0, meta=default_meta().set_params(C=1.0)).fit(texts, Y,
                                  langs=langs)
    with pytest.raises(UnseenLanguageError, match="'nl'"):
        model.predict(zt, langs=zl)


def _json_round_trip(state: tuple[dict, dict]) -> tuple[dict, dict]:
    meta, arrays = state
    return json.loads(json.dumps(meta)), arrays


@pytest.mark.parametrize("method", ["fun", "gfun-xw"])
def test_zero_shot_fallback_views(vec_dir: Path, split, method: str) -> None:
    """Funnelling's (2019) zero-shot fallback: an auxiliary classifier on M serves only unseen languages."""
    from gfun.baselines.naive import make_fun

    (texts, langs, Y), (tt, tl, tY), (zt, zl, zY) = split
    params = {"meta": default_meta(), "random_state": 0, "zero_shot_views": "m",
              "view_params": {"m": {"source": _spec(vec_dir)}}}
    model = make_fun(**params) if method == "fun" else GeneralizedFunnelling(views="xw", **params)
    plain = (make_fun(random_state=0, meta=default_meta().set_params(C=1.0)) if method == "fun"
             else GeneralizedFunnelling(views='xw', random_state=0, meta=default_meta().set_params(C=1.0)))
    model.fit(texts, Y, langs=langs)
    plain.fit(texts, Y, langs=langs)
    # seen languages: the fallback changes nothing
    np.testing.assert_array_equal(model.decision_function(tt, langs=tl), plain.decision_function(tt, langs=tl))
    with pytest.raises(UnseenLanguageError, match="'nl'"):
        plain.predict(zt, langs=zl)
    zero_pred = model.predict(zt, langs=zl)
    assert _f1(zY, zero_pred) > 0.5
    # a mixed batch gives each document what it gets alone
    mixed = model.predict(list(tt) + list(zt), langs=list(tl) + list(zl))
    np.testing.assert_array_equal(mixed, np.vstack([model.predict(tt, langs=tl), zero_pred]))
    loaded = GeneralizedFunnelling.from_state(*_json_round_trip(model.get_state()))
    np.testing.assert_array_equal(loaded.predict(zt, langs=zl), zero_pred)


def test_zero_shot_fallback_needs_posterior_input(vec_dir: Path, split) -> None:
    (texts, langs, Y), _, _ = split
    model = GeneralizedFunnelling(views='xw', aggregation='concat', zero_shot_views='m',
                                  view_params={'m': {'source': _spec(vec_dir)}}, meta=default_meta().set_params(C=1.0))
    with pytest.raises(ValueError, match="zero_shot_views"):
        model.fit(texts, Y, langs=langs)


def test_vec_file_vectors_are_stored_by_default(view: WordEmbeddingView) -> None:
    meta, arrays = view.get_state()
    assert view.store_vectors == "auto" and "vectors_sha256" not in meta
    assert {f"{lang}/matrix" for lang in TRAIN} <= set(arrays)


def test_subword_vectors_are_stored_by_reference_and_checked(tmp_path: Path, corpus) -> None:
    """e5-subword-like vectors (sub-word means of a local encoder's input embeddings) are recomputed at load time."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from gfun.configuration import neural_view_params
    from gfun.errors import ReferenceMismatchError
    from gfun.persistence.loading import load_model
    from tests.neural_fixtures import tiny_bert_folder

    texts, langs, Y = corpus
    encoder = tiny_bert_folder(tmp_path / "encoder", texts)
    spec = {"spec": f"encoder-subword:{encoder}", "cache": False}
    model = GeneralizedFunnelling(views='xm', aggregation='mean', random_state=0, view_params={'m': {'source': spec}},
                                  meta=default_meta().set_params(C=1.0),
                                  mapper=default_mapper().set_params(cv=3)).fit(texts, Y, langs=langs)
    view = model.views_[1]
    meta, arrays = view.get_state()
    assert not [k for k in arrays if k.endswith("/matrix")] and sorted(meta["vectors_sha256"]) == TRAIN
    loaded = WordEmbeddingView.from_state(json.loads(json.dumps(meta)), arrays)
    for lang in TRAIN:
        np.testing.assert_array_equal(loaded.matrices_[lang], view.matrices_[lang])
    np.testing.assert_array_equal(loaded.transform(texts, langs), view.transform(texts, langs))
    # an encoder's sub-word vectors serve any language (what gfun info and gfun serve report)
    for m_view in (view, loaded):
        assert m_view.language_coverage().describe() == f"any language (trained on {', '.join(sorted(TRAIN))})"
    model.save(tmp_path / "model")
    np.testing.assert_array_equal(load_model(tmp_path / "model").decision_function(texts, langs=langs),
                                  model.decision_function(texts, langs=langs))
    # self-contained: the matrices are in the state (what `gfun train --self-contained` asks for)
    assert neural_view_params("e5-subword", self_contained=True)["m"] == {"source": "e5-subword",
                                                                          "store_vectors": True}
    view.set_params(store_vectors=True)
    model.save(tmp_path / "full")
    full_meta, full_arrays = view.get_state()
    view.set_params(store_vectors="auto")
    assert "vectors_sha256" not in full_meta and {f"{lang}/matrix" for lang in TRAIN} <= set(full_arrays)
    # another encoder under the same name: the by-reference model is refused, naming the file and the source
    tiny_bert_folder(encoder, texts[:40])
    with pytest.raises(ReferenceMismatchError, match=r"(?s)state\.json.*encoder-subword.*differ"):
        load_model(tmp_path / "model")
    np.testing.assert_array_equal(load_model(tmp_path / "full").decision_function(texts, langs=langs),
                                  model.decision_function(texts, langs=langs))
