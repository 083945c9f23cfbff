"""The word-class embedding figure (Figure 2, ``gfun plot wce``): from a fit and from a saved model."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.cli.main import main
from gfun.funnelling.meta import default_meta


# --------------------------------------------------------------------------------------- Figure 2
def test_plot_wce_writes_a_png(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    from PIL import Image

    from gfun.datasets.demo import load_demo

    train, _ = load_demo()
    path = tmp_path / "train.jsonl"
    train.to_jsonl(path)
    out = tmp_path / "wce.png"
    assert main(["plot", "wce", "--train", str(path), "--top", "2", "--out", str(out)]) == 0
    assert f"written to {out}" in capsys.readouterr().out
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size[0] > 200 and im.size[1] > 200
    # chosen words and classes; an unknown word is one error line
    word = next(w for w in train.texts[0].split() if w.isalpha() and len(w) > 4)
    lang = train.langs[0]
    cls = list(train.classes)[:2]
    out2 = tmp_path / "wce2.png"
    assert main(["plot", "wce", "--train", str(path), "--words", f"{lang}:{word}", "--show-classes", ",".join(cls),
                 "--out", str(out2)]) == 0 and out2.is_file()
    assert main(["plot", "wce", "--train", str(path), "--words", f"{lang}:zzqqxxnotaword", "--out",
                 str(tmp_path / "no.png")]) == 1
    assert "not in the training vocabulary" in capsys.readouterr().err


def test_wce_figure_rows_are_the_views_embeddings(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from gfun.datasets.demo import load_demo
    from gfun.experiments.wce_plot import top_wce_terms, wce_figure
    from gfun.views.wce import WordClassEmbeddingView

    train, _ = load_demo()
    view = WordClassEmbeddingView().fit(list(train.texts), np.asarray(train.langs, dtype=object), train.Y)
    lang = sorted(view.languages_)[0]
    top = top_wce_terms(view, lang, 3)
    fig = wce_figure(None, tmp_path / "f.png", model=view, languages=[lang], top=3)
    image = fig.axes[0].images[0].get_array()
    np.testing.assert_allclose(np.asarray(image), np.vstack([r for _, r in top]))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == [f"{t} ({lang})" for t, _ in top]


def test_plot_wce_from_a_saved_model(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    from gfun.datasets.demo import load_demo
    from gfun.funnelling.generalized import GeneralizedFunnelling

    train, _ = load_demo()
    small = train.subset(np.arange(0, len(train), 5))
    GeneralizedFunnelling(views='xw', aggregation='mean', random_state=0,
                          meta=default_meta().set_params(C=1.0)).fit(small).save(tmp_path / "xw")
    GeneralizedFunnelling(views='x', random_state=0,
                          meta=default_meta().set_params(C=1.0)).fit(small).save(tmp_path / "x")
    out = tmp_path / "wce.png"
    assert main(["plot", "wce", "--model", str(tmp_path / "xw"), "--top", "2", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    capsys.readouterr()
    assert main(["plot", "wce", "--model", str(tmp_path / "x"), "--out", str(tmp_path / "no.png")]) == 1
    assert "no word-class embeddings (W) view" in capsys.readouterr().err
    assert main(["plot", "wce", "--out", str(tmp_path / "no.png")]) == 1


def test_default_wce_rows_are_informative_words() -> None:
    """On the demo data, the default rows are words of several training documents, each strongly associated with a
    different class (not the stems of single documents, whose association is the highest and means nothing):
    'dokumentation' and 'spil' in Danish, 'perl' and 'dokumentation' in German, 'game' and 'perl' in English."""
    from gfun.datasets.demo import load_demo
    from gfun.experiments.wce_plot import top_wce_terms
    from gfun.views.wce import WordClassEmbeddingView

    train, _ = load_demo()
    view = WordClassEmbeddingView().fit(list(train.texts), np.asarray(train.langs, dtype=object), train.Y)
    expected = {"da": {"dokumentation", "spil"}, "de": {"perl", "dokumentation"}, "en": {"game", "perl"}}
    for lang, words in expected.items():
        vec, matrix = view.vectorizers_[lang], view.matrices_[lang]
        top = top_wce_terms(view, lang, 4)
        df = {t: vec.n_docs_ * np.exp(-vec.idf_[vec.vocabulary_[t]]) for t, _ in top}
        assert min(df.values()) >= 3 - 1e-6, df
        assert words <= set(df), (lang, [t for t, _ in top])
        assert len({int(row.argmax()) for _, row in top}) == 4  # four different classes
        assert all(row.max() >= 2.0 for _, row in top)  # at least 2 standard deviations above the vocabulary
        assert {t for t, _ in top}.isdisjoint(t for t, j in vec.vocabulary_.items() if matrix[j].max() == matrix.max())
