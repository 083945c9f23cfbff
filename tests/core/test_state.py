"""Fitted states as JSON + arrays (gfun.core.state): the flattening helpers round trip components."""

from __future__ import annotations

import numpy as np


def test_state_flattening_helpers_round_trip_components() -> None:
    """put_state(s) / load_state(s): a component's arrays under a prefix, and back (the one flattening code)."""
    from gfun.core.state import load_state, load_states, prefixed, put_state, put_states, sub_arrays
    from gfun.text.tfidf import TfidfVectorizer

    vecs = {lang: TfidfVectorizer(lang, stopwords=False, stem=False).fit([f"{lang} cat", f"{lang} dog cat"])
            for lang in ("en", "it")}
    arrays: dict[str, np.ndarray] = {"other/x": np.zeros(1)}
    metas = put_states(vecs, "{}/vec/", arrays)
    assert sorted(arrays) == ["en/vec/idf", "it/vec/idf", "other/x"]
    loaded = load_states(TfidfVectorizer, metas, arrays, "{}/vec/")
    for lang, vec in vecs.items():
        assert loaded[lang].vocabulary_ == vec.vocabulary_
        np.testing.assert_array_equal(loaded[lang].transform(["cat dog"]).toarray(),
                                      vec.transform(["cat dog"]).toarray())
    single: dict[str, np.ndarray] = {}
    meta = put_state(vecs["en"], "a/b/", single)
    assert list(single) == ["a/b/idf"]
    assert load_state(TfidfVectorizer, meta, single, "a/b/").vocabulary_ == vecs["en"].vocabulary_
    assert sub_arrays(prefixed({"k": 1, "l": 2}, "p/"), "p/") == {"k": 1, "l": 2}
