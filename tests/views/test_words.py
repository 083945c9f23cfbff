"""What the word views say about the words of one document (gfun.views.words), on the bundled demo data."""

from __future__ import annotations

import re

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from gfun.svm.calibration import platt_posteriors
from gfun.views.pooled import PooledPosteriorsView
from gfun.views.posteriors import PosteriorsView
from gfun.views.wce import WordClassEmbeddingView
from gfun.views.words import term_words


@pytest.fixture(scope="module")
def demo():
    train, test = load_demo()
    train = train.select(["de", "en"])
    train = train.subset(range(0, len(train), 5))
    return train, test.select(["de"]).subset(range(3))


def _fit(view, train):
    view.fit_transform(train.texts, np.asarray(train.langs, dtype=object), train.Y.toarray())
    return view


@pytest.mark.parametrize("make", [lambda: PosteriorsView(random_state=0), lambda: PooledPosteriorsView(random_state=0)])
def test_linear_terms_add_up_to_the_view_s_scores(demo, make) -> None:
    train, test = demo
    view = _fit(make(), train)
    text = test.texts[0]
    lt = view.linear_terms(text, "de")
    assert len(lt.terms) == len(set(lt.terms)) == lt.values.shape[0] > 5
    np.testing.assert_allclose(lt.values.sum(axis=0) + lt.intercept, lt.scores, atol=1e-5)
    A, B = (view.models_["de"].platt_A, view.models_["de"].platt_B) if hasattr(view, "models_") else (
        view.platt_A_, view.platt_B_)
    np.testing.assert_allclose(platt_posteriors(lt.scores, A, B),
                               view.transform([text], np.asarray(["de"], dtype=object))[0], atol=1e-6)
    # the words behind each term as the text spells them (a word bigram of P: as the view writes it)
    assert all(any(w in text or " " in w and w in text.lower() for w in words) for words in lt.words)


def test_term_occlusion_is_the_view_without_each_term(demo) -> None:
    """Row 0 is the document's view; row 1 + t the view of the text with term t's words deleted."""
    train, test = demo
    view = _fit(WordClassEmbeddingView(), train)
    text = test.texts[1]
    occ = view.term_occlusion(text, "de")
    langs = np.asarray(["de"], dtype=object)
    np.testing.assert_allclose(occ.views[0], view.transform([text], langs)[0], atol=1e-6)
    assert occ.views.shape[0] == len(occ.terms) + 1
    for t in range(0, len(occ.terms), 7):
        without = re.sub(rf"\b(?:{'|'.join(map(re.escape, occ.words[t]))})\b", " ", text)
        np.testing.assert_allclose(occ.views[1 + t], view.transform([without], langs)[0], atol=1e-5)


def test_term_words_lists_the_spellings_behind_a_stem() -> None:
    from gfun.text.analysis import Analyzer

    analyzer = Analyzer("de")
    text = "Pakete und ein Paket; große Netzwerke"
    terms = analyzer(text)
    words = dict(zip(terms, term_words(text, terms, analyzer.tokenize, analyzer), strict=True))
    assert words[analyzer("Paket")[0]] == ["Pakete", "Paket"]
    assert words[analyzer("große")[0]] == ["große"]
    assert term_words("a b", ["a b"], str.split, lambda t: [t]) == [["a b"]]  # a bigram stands for itself
