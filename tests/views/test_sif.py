"""The SIF step shared by the embedding views (gfun.views.sif): its modes and the first principal component."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.views.sif import CommonComponents, first_component, remove_component
from gfun.views.wce import WordClassEmbeddingView

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


@pytest.mark.parametrize("mode", ["language", "global", "none"])
def test_sif_modes(demo, mode: str) -> None:
    train = _sample(demo[0], 40, 1)
    texts, langs = _arrays(train)
    view = WordClassEmbeddingView(sif=mode)
    Z = view.fit_transform(texts, langs, train.Y)
    assert np.isfinite(Z).all()
    if mode == "none":
        assert view.sif_.component("en") is None
    elif mode == "global":
        np.testing.assert_array_equal(view.sif_.component("en"), view.sif_.component("it"))
        assert abs(Z @ view.sif_.global_).max() < 1e-4  # the component is gone from the training views
    else:
        for lang in LANGS:
            assert abs(Z[langs == lang] @ view.sif_.component(lang)).max() < 1e-4
    with pytest.raises(ValueError, match="sif"):
        WordClassEmbeddingView(sif="both").fit(texts, langs, train.Y)


# ----------------------------------------------------------------------------------------------- SIF helper
def test_first_component_matches_truncated_svd() -> None:
    Z = np.abs(np.random.RandomState(0).normal(size=(50, 7))) + np.linspace(0, 1, 7)
    u = first_component(Z)
    ref = TruncatedSVD(n_components=1, algorithm="arpack").fit(Z).components_[0]
    np.testing.assert_allclose(abs(u @ ref), 1.0, rtol=1e-8)
    assert u[np.argmax(np.abs(u))] > 0
    out = remove_component(Z, u)
    np.testing.assert_allclose(out @ u, 0.0, atol=1e-10)
    assert not first_component(np.zeros((3, 4))).any()
    np.testing.assert_array_equal(remove_component(Z, np.zeros(7)), Z)
    sif = CommonComponents("language").fit({"a": Z[:20], "b": Z[20:]})
    np.testing.assert_array_equal(sif.component("zz"), sif.global_)  # unseen language: global component
    meta, arrays = sif.get_state()
    again = CommonComponents.from_state(meta, arrays)
    np.testing.assert_array_equal(again.transform(Z, "b"), sif.transform(Z, "b"))
