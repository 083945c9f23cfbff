"""The word-class embeddings view (W) and the word-class heat map."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.metrics.evaluation import evaluate
from gfun.views.sif import remove_component
from gfun.views.wce import WordClassEmbeddingView, word_class_embeddings

LANGS = ["de", "en", "it"]


def _sample(corpus: MultilingualCorpus, n: int, seed: int, langs=LANGS) -> MultilingualCorpus:
    rng = np.random.RandomState(seed)
    groups = corpus.by_language()
    return corpus.subset(np.sort(np.concatenate([rng.choice(groups[lang], n, replace=False) for lang in langs])))


def _arrays(corpus: MultilingualCorpus) -> tuple[list[str], np.ndarray]:
    return list(corpus.texts), np.asarray(corpus.langs, dtype=object)


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return load_demo()


@pytest.fixture(scope="module")
def full_view(demo) -> WordClassEmbeddingView:
    """W view fitted on the whole demo training set (5 languages x 350 documents, ~1 s)."""
    train = demo[0]
    return WordClassEmbeddingView().fit(*_arrays(train), train.Y)


# ----------------------------------------------------------------------------------------------- WCE matrix
def test_word_class_embeddings_by_hand() -> None:
    X = sp.csr_matrix(np.array([[0.6, 0.8, 0.0, 0.0],
                                [0.0, 0.6, 0.8, 0.0],
                                [0.0, 0.0, 1.0, 0.0]]))
    Y = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0]])
    # normalised dot product: share of each word's TF-IDF mass in documents of each class
    S = np.array([[1.0, 0.0, 0.0],
                  [0.8 / 1.4, 0.6 / 1.4, 0.0],
                  [0.0, 1.0, 0.0]])
    expected = np.zeros((4, 3))
    expected[:3, :2] = (S[:, :2] - S[:, :2].mean(axis=0)) / S[:, :2].std(axis=0)
    W = word_class_embeddings(X, Y)
    assert W.dtype == np.float32 and W.shape == (4, 3)
    np.testing.assert_allclose(W, expected, rtol=1e-5, atol=1e-6)
    assert not W[3].any()  # a word without TF-IDF mass: zero row
    assert not W[:, 2].any()  # a class without positives: zero column
    np.testing.assert_allclose(word_class_embeddings(X.toarray(), Y), W)


def test_translations_get_similar_wces_on_real_data(full_view: WordClassEmbeddingView, demo) -> None:
    classes = demo[0].classes
    games = classes.index("use::gameplaying")
    for lang, word in [("en", "game"), ("it", "gioco"), ("de", "Spiel"), ("fr", "jeu"), ("da", "spil")]:
        assert int(np.argmax(full_view.embedding(lang, word))) == games, (lang, word)

    def cos(a: tuple[str, str], b: tuple[str, str]) -> float:
        u, v = full_view.embedding(*a), full_view.embedding(*b)
        return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))

    assert cos(("en", "game"), ("it", "gioco")) > 0.6
    assert cos(("en", "game"), ("it", "gioco")) > cos(("en", "game"), ("it", "libreria")) + 0.5
    assert cos(("fr", "bibliothèque"), ("de", "Bibliothek")) > cos(("fr", "bibliothèque"), ("de", "Spiel"))
    np.testing.assert_array_equal(full_view.embedding("en", "Games"), full_view.embedding("en", "game"))  # stems
    with pytest.raises(KeyError, match="vocabulary"):
        full_view.embedding("en", "qxqxqxq")
    with pytest.raises(KeyError, match="language"):
        full_view.embedding("sv", "spel")


# ----------------------------------------------------------------------------------------------- the view
def test_view_shape_norm_and_coverage(full_view: WordClassEmbeddingView, demo) -> None:
    test = demo[1]
    Z = full_view.transform(*_arrays(test))
    assert Z.shape == (len(test), 30) and full_view.n_features_out_ == 30 and Z.dtype == np.float32
    norms = np.linalg.norm(Z, axis=1)
    np.testing.assert_allclose(norms[norms > 0], 1.0, rtol=1e-5)
    assert (norms > 0).mean() > 0.95
    assert full_view.languages_ == ["da", "de", "en", "fr", "it"]
    assert not full_view.covers("sv")
    with pytest.raises(UnseenLanguageError, match="sv"):
        full_view.transform(["ett spel"], np.array(["sv"], dtype=object))


def test_views_compose_tfidf_wce_sif_l2(full_view: WordClassEmbeddingView, demo) -> None:
    texts, langs = _arrays(demo[1])
    idx = np.flatnonzero(langs == "it")[:20]
    sub = [texts[i] for i in idx]
    raw = full_view.vectorizers_["it"].transform(sub) @ full_view.matrices_["it"]
    u = full_view.sif_.component("it")
    expected = remove_component(raw, u)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(full_view.transform(sub, langs[idx]), expected, rtol=1e-4, atol=1e-5)


def test_in_sample_training_views_equal_transform_and_cv_differs(demo) -> None:
    train = _sample(demo[0], 60, 0)
    texts, langs = _arrays(train)
    view = WordClassEmbeddingView(train_views="in-sample")
    Z = view.fit_transform(texts, langs, train.Y)
    np.testing.assert_allclose(Z, view.transform(texts, langs), rtol=1e-5, atol=1e-6)
    cv = WordClassEmbeddingView(train_views="cv", cv=3, random_state=0)
    Zcv = cv.fit_transform(texts, langs, train.Y)
    assert Zcv.shape == Z.shape and np.isfinite(Zcv).all()
    np.testing.assert_allclose(cv.matrices_["en"], view.matrices_["en"])  # test-time WCEs: all documents
    # out-of-fold views agree less with the labels than in-sample ones (which have seen them)
    Y = train.Y.toarray().astype(bool)

    def label_margin(V: np.ndarray) -> float:
        return float(np.mean([V[i, Y[i]].mean() - V[i, ~Y[i]].mean() for i in range(len(V)) if Y[i].any()]))

    assert label_margin(Zcv) < label_margin(Z)
    with pytest.raises(ValueError, match="train_views"):
        WordClassEmbeddingView(train_views="oob").fit(texts, langs, train.Y)


# ----------------------------------------------------------------------------------------------- heat map
def test_heat_map_png(full_view: WordClassEmbeddingView, demo, tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from gfun.experiments.wce_plot import plot_word_class_embeddings

    words = [("en", "game"), ("it", "gioco"), ("de", "Spiel"), ("fr", "jeu"), ("da", "bibliotek")]
    path = tmp_path / "wce.png"
    fig = plot_word_class_embeddings(full_view, words, path, class_names=demo[0].classes,
                                     classes=["use::gameplaying", "devel::library", 3, "role::shared-lib"])
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [f"{w} ({lang})" for lang, w in words]
    assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["use::gameplaying", "devel::library"]
    with pytest.raises(KeyError):
        plot_word_class_embeddings(full_view, [("en", "qxqxqxq")])


# ----------------------------------------------------------------------------------------------- in gFun
@pytest.fixture(scope="module")
def small(demo) -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return _sample(demo[0], 100, 0), _sample(demo[1], 40, 1)


@pytest.mark.parametrize("aggregation", ["mean", "concat"])
def test_gfun_xw(small, aggregation: str) -> None:
    train, test = small
    model = GeneralizedFunnelling(views='xw', aggregation=aggregation, random_state=0,
                                  meta=default_meta().set_params(C=1.0)).fit(train)
    assert [v.letter for v in model.views_] == ["x", "w"]
    assert ("w" in model.mappers_) == (aggregation == "mean")
    assert model.n_meta_features_ == (30 if aggregation == "mean" else 60)
    pred = model.predict(test)
    assert pred.shape == (len(test), 30)
    scores = evaluate(test.Y.toarray(), pred)
    assert scores.loc["all", "F1_micro"] > 0.2  # X alone: ~0.41 on this small sample, XW ~0.26-0.31
    meta, arrays = model.get_state()
    loaded = GeneralizedFunnelling.from_state(meta, arrays)
    np.testing.assert_array_equal(loaded.predict(test), pred)
    unseen = _sample(load_demo()[1], 3, 2, langs=["fr"])
    with pytest.raises(UnseenLanguageError, match="fr"):
        model.predict(unseen)
