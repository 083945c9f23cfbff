"""The per-language TF-IDF (gfun.text.tfidf, paper eqs. 1-3), its states and its multilingual wrapper."""

from __future__ import annotations

import io
import json
import logging
import pickle
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from gfun.errors import UnknownLanguageError
from gfun.text.tfidf import MultilingualTfidf, TfidfVectorizer

# Plain analyser: no stop words, no stemming, so the terms are the lower-cased words.
PLAIN = {"stopwords": False, "stem": False}


# |Tr| = 3.  df: apple 2, banana 3, cherry 2, date 1.
TINY = [
    "apple apple apple cherry banana",
    "banana cherry cherry",
    "banana apple date",
]


def _dense(X: sp.spmatrix) -> np.ndarray:
    return np.asarray(X.todense())


def _same_csr(A: sp.csr_matrix, B: sp.csr_matrix) -> bool:
    return (A.shape == B.shape and A.dtype == B.dtype and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))


# --------------------------------------------------------------------------------------------
# TF-IDF against the formulas
# --------------------------------------------------------------------------------------------
class TestTfidfFormulas:
    def test_hand_computed_tiny_corpus(self):
        vec = TfidfVectorizer("en", dtype=np.float64, **PLAIN)
        X = vec.fit_transform(TINY)
        assert vec.vocabulary_ == {"apple": 0, "banana": 1, "cherry": 2, "date": 3}
        assert vec.n_docs_ == 3
        # idf = ln(|Tr| / df)
        np.testing.assert_allclose(vec.idf_, [0.4054651081081644, 0.0, 0.4054651081081644, 1.0986122886681098],
                                   rtol=1e-12)
        expected = np.array([
            # d0: apple tf = 1 + ln 3 = 2.0986122887, w = 2.0986122887 * 0.4054651081 = 0.8509200
            #     cherry tf = 1, w = 0.4054651081; banana idf 0
            #     norm = sqrt(0.8509200^2 + 0.4054651^2) = 0.9425914
            [0.9027501480103622, 0.0, 0.4301652824987960, 0.0],
            # d1: cherry tf = 1 + ln 2 = 1.6931471806 -> the only non-zero weight -> 1
            [0.0, 0.0, 1.0, 0.0],
            # d2: apple 0.4054651081, date 1.0986122887; norm = 1.1710504
            [0.3462415530579614, 0.0, 0.0, 0.9381453975456102],
        ])
        np.testing.assert_allclose(_dense(X), expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(np.sqrt(np.asarray(X.multiply(X).sum(axis=1))).ravel(), 1.0)

    def test_term_in_every_document_has_idf_exactly_zero(self):
        vec = TfidfVectorizer("en", **PLAIN).fit(TINY)
        assert vec.idf_[vec.vocabulary_["banana"]] == 0.0
        X = vec.transform(["banana banana banana apple"])
        assert X[0, vec.vocabulary_["banana"]] == 0.0
        # explicit zeros are not stored
        assert vec.vocabulary_["banana"] not in X.indices

    def test_tf_is_sublinear_natural_log(self):
        vec = TfidfVectorizer("en", dtype=np.float64, **PLAIN).fit(TINY)
        X = _dense(vec.transform(["apple apple date"]))[0]
        a = (1 + np.log(2)) * np.log(3 / 2)
        d = 1.0 * np.log(3)
        norm = np.hypot(a, d)
        np.testing.assert_allclose(X, [a / norm, 0.0, 0.0, d / norm], rtol=1e-12)

    def test_oov_and_zero_idf_documents_give_zero_rows_not_nan(self):
        vec = TfidfVectorizer("en", **PLAIN).fit(TINY)
        X = vec.transform(["kiwi mango", "", "banana", "!!! ---", "apple"])
        assert X.shape == (5, 4)
        assert np.isfinite(X.data).all()
        assert X.getnnz(axis=1).tolist() == [0, 0, 0, 0, 1]
        assert not np.isnan(_dense(X)).any()

    def test_unseen_terms_are_ignored(self):
        vec = TfidfVectorizer("en", **PLAIN).fit(TINY)
        with_oov = vec.transform(["apple kiwi kiwi date mango"])
        without = vec.transform(["apple date"])
        assert _same_csr(with_oov, without)
        assert with_oov.shape[1] == len(vec.vocabulary_)

    def test_fit_transform_equals_fit_then_transform(self):
        docs = TINY + ["cherry date date", "apple"]
        a = TfidfVectorizer("en", **PLAIN).fit_transform(docs)
        b = TfidfVectorizer("en", **PLAIN).fit(docs).transform(docs)
        assert _same_csr(a, b)

    def test_output_types(self):
        X = TfidfVectorizer("en", **PLAIN).fit_transform(TINY)
        assert sp.isspmatrix_csr(X) and X.dtype == np.float32 and X.has_sorted_indices
        X64 = TfidfVectorizer("en", dtype=np.float64, **PLAIN).fit_transform(TINY)
        assert X64.dtype == np.float64
        np.testing.assert_allclose(_dense(X), _dense(X64), rtol=1e-6)

    def test_columns_are_alphabetical_and_independent_of_document_order(self):
        v1 = TfidfVectorizer("en", **PLAIN).fit(TINY)
        v2 = TfidfVectorizer("en", **PLAIN).fit(TINY[::-1])
        assert v1.vocabulary_ == v2.vocabulary_
        assert list(v1.get_feature_names_out()) == ["apple", "banana", "cherry", "date"]
        np.testing.assert_array_equal(v1.idf_, v2.idf_)

    def test_min_df_prunes_without_changing_idf(self):
        vec = TfidfVectorizer("en", min_df=2, **PLAIN).fit(TINY)
        assert list(vec.vocabulary_) == ["apple", "banana", "cherry"]
        np.testing.assert_allclose(vec.idf_, [np.log(1.5), 0.0, np.log(1.5)])
        assert vec.transform(["date"]).nnz == 0

    def test_max_features_keeps_most_frequent_ties_alphabetical(self):
        vec = TfidfVectorizer("en", max_features=2, **PLAIN).fit(TINY)
        # df: banana 3, then apple 2 and cherry 2 (tie -> apple)
        assert vec.vocabulary_ == {"apple": 0, "banana": 1}

    @pytest.mark.parametrize("bad", [{"min_df": 0}, {"min_df": 1.5}, {"max_features": 0},
                                     {"dtype": np.int32}])
    def test_invalid_params(self, bad):
        with pytest.raises(ValueError):
            TfidfVectorizer("en", **bad).fit(TINY)

    def test_empty_inputs(self):
        with pytest.raises(ValueError, match="zero documents"):
            TfidfVectorizer("en").fit([])
        with pytest.raises(ValueError, match="empty vocabulary"):
            TfidfVectorizer("en").fit(["the and of", "", "123"])
        with pytest.raises(TypeError):
            TfidfVectorizer("en").fit("a single string")
        vec = TfidfVectorizer("en", **PLAIN).fit(TINY)
        assert vec.transform([]).shape == (0, 4)

    def test_not_fitted(self):
        from sklearn.exceptions import NotFittedError

        with pytest.raises(NotFittedError):
            TfidfVectorizer("en").transform(["x"])
        with pytest.raises(NotFittedError):
            TfidfVectorizer("en").get_state()

    def test_repeated_terms_after_stemming_are_counted_together(self):
        vec = TfidfVectorizer("en", dtype=np.float64).fit(["gardens garden", "roses"])
        assert "garden" in vec.vocabulary_
        X = _dense(vec.transform(["gardens garden rose"]))[0]
        g, c = vec.vocabulary_["garden"], vec.vocabulary_["rose"]
        # garden counted twice: tf = 1 + ln 2; both terms have idf ln 2
        np.testing.assert_allclose(X[g] / X[c], 1 + np.log(2))

    @settings(max_examples=40, deadline=None)
    @given(st.lists(st.text(alphabet="ab cdéﬁ-'ß\u0301", max_size=30), min_size=1, max_size=12),
           st.lists(st.text(alphabet="ab cdxyé\u0301", max_size=30), max_size=6))
    def test_rows_unit_norm_or_zero(self, train, test):
        vec = TfidfVectorizer("en", min_len=1, **PLAIN)
        try:
            vec.fit(train)
        except ValueError:  # empty vocabulary
            return
        X = vec.transform(test)
        assert np.isfinite(X.data).all()
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64)).ravel()
        assert np.all((np.abs(norms - 1) < 1e-5) | (norms == 0))


# --------------------------------------------------------------------------------------------
# Persistence, pickling, sklearn compatibility
# --------------------------------------------------------------------------------------------
def _through_files(meta: dict, arrays: dict[str, np.ndarray]) -> tuple[dict, dict[str, np.ndarray]]:
    """Round-trip through JSON and a pickle-free npz, as the persistence layer does."""
    for arr in arrays.values():
        assert isinstance(arr, np.ndarray) and arr.dtype != object
    meta2 = json.loads(json.dumps(meta))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    buf.seek(0)
    with np.load(buf, allow_pickle=False) as npz:
        arrays2 = {k: npz[k] for k in npz.files}
    return meta2, arrays2


class TestPersistence:
    DOCS = ["Die Kinder spielten im Garten", "Der Garten ist groß", "Kinder lieben Gärten und Blumen"]

    def test_vectorizer_state_round_trip(self):
        vec = TfidfVectorizer("de", min_df=1, dtype=np.float64, stopwords=["ist"]).fit(self.DOCS)
        meta, arrays = vec.get_state()
        assert meta["vocabulary"] == list(vec.get_feature_names_out())
        restored = TfidfVectorizer.from_state(*_through_files(meta, arrays))
        assert restored.get_params() == vec.get_params() | {"stopwords": ["ist"]}
        assert restored.vocabulary_ == vec.vocabulary_ and restored.n_docs_ == vec.n_docs_
        new = ["Blumen im Garten", "unbekannte Wörter", ""]
        assert _same_csr(restored.transform(new), vec.transform(new))
        assert _same_csr(restored.transform(self.DOCS), vec.transform(self.DOCS))

    def test_bad_state(self):
        meta, arrays = TfidfVectorizer("en", **PLAIN).fit(TINY).get_state()
        with pytest.raises(ValueError):
            TfidfVectorizer.from_state({**meta, "format": "other"}, arrays)
        with pytest.raises(ValueError):
            TfidfVectorizer.from_state(meta, {"idf": arrays["idf"][:2]})

    def test_multilingual_state_round_trip(self):
        texts = ["the cat sat", "a dog ran", "il gatto dorme", "der Hund läuft", "the dog sat"]
        langs = ["en", "en", "it", "de", "en"]
        m = MultilingualTfidf(max_features=100).fit(texts, langs)
        restored = MultilingualTfidf.from_state(*_through_files(*m.get_state()))
        assert restored.get_params() == m.get_params()
        assert restored.languages_ == m.languages_
        a, b = m.transform(texts, langs), restored.transform(texts, langs)
        assert a.keys() == b.keys()
        for lang in a:
            np.testing.assert_array_equal(a[lang][0], b[lang][0])
            assert _same_csr(a[lang][1], b[lang][1])

    def test_pickle_and_clone(self):
        vec = TfidfVectorizer("it").fit(["gli studenti studiano", "le università italiane"])
        _ = vec.transform(["studenti"])  # warm the analyser cache
        vec2 = pickle.loads(pickle.dumps(vec))
        assert _same_csr(vec2.transform(["studenti italiani"]), vec.transform(["studenti italiani"]))
        c = clone(vec)
        assert c.get_params() == vec.get_params() and not hasattr(c, "vocabulary_")
        m = MultilingualTfidf(min_df=1).fit(["a cat", "un gatto"], ["en", "it"])
        m2 = pickle.loads(pickle.dumps(m))
        assert _same_csr(m2.transform(["gatto"], ["it"])["it"][1], m.transform(["gatto"], ["it"])["it"][1])
        assert clone(m).get_params() == m.get_params()


# --------------------------------------------------------------------------------------------
# MultilingualTfidf
# --------------------------------------------------------------------------------------------
class TestMultilingual:
    TEXTS = ["the cat sat on the mat", "il gatto dorme sul divano", "the dog ate the cat food",
             "il cane mangia", "der Hund schläft"]
    LANGS = ["en", "it", "en", "it", "de"]

    def test_one_vectorizer_per_language(self):
        m = MultilingualTfidf(**PLAIN)
        out = m.fit_transform(self.TEXTS, self.LANGS)
        assert m.languages_ == ["de", "en", "it"] == list(out)
        np.testing.assert_array_equal(out["en"][0], [0, 2])
        np.testing.assert_array_equal(out["it"][0], [1, 3])
        np.testing.assert_array_equal(out["de"][0], [4])
        ref = TfidfVectorizer("it", **PLAIN).fit(["il gatto dorme sul divano", "il cane mangia"])
        assert m.vectorizers_["it"].vocabulary_ == ref.vocabulary_
        assert _same_csr(out["it"][1], ref.transform(["il gatto dorme sul divano", "il cane mangia"]))
        assert m.vectorizers_["en"].n_docs_ == 2


    def test_by_language_and_in_parallel(self):
        by_lang = {"it": ["il gatto dorme sul divano", "il cane mangia"], "en": ["the cat sat on the mat"]}
        m = MultilingualTfidf(**PLAIN).fit_by_language(by_lang)
        assert list(m.vectorizers_) == ["it", "en"] and m.languages_ == ["en", "it"]
        ref = TfidfVectorizer("it", **PLAIN).fit(by_lang["it"])
        assert m.vectorizers_["it"].vocabulary_ == ref.vocabulary_
        out = MultilingualTfidf(**PLAIN, n_jobs=2).fit_transform_by_language(by_lang)
        assert _same_csr(out["it"], ref.transform(by_lang["it"]))
        serial = MultilingualTfidf(**PLAIN).fit_transform(self.TEXTS, self.LANGS)
        threaded = MultilingualTfidf(**PLAIN, n_jobs=2).fit_transform(self.TEXTS, self.LANGS)
        assert list(serial) == list(threaded)
        assert all(_same_csr(serial[k][1], threaded[k][1]) for k in serial)
        with pytest.raises(TypeError, match="map each language"):
            MultilingualTfidf().fit_by_language(self.TEXTS)
    def test_transform_groups_rows(self):
        m = MultilingualTfidf(**PLAIN).fit(self.TEXTS, self.LANGS)
        out = m.transform(["il gatto", "the cat", "il cane", "unknown words"], np.array(["it", "en", "it", "en"]))
        assert list(out) == ["en", "it"]
        np.testing.assert_array_equal(out["en"][0], [1, 3])
        np.testing.assert_array_equal(out["it"][0], [0, 2])
        assert out["en"][1].shape == (2, len(m.vectorizers_["en"].vocabulary_))
        assert out["en"][1][1].nnz == 0
        assert m.transform([], []) == {}

    def test_unknown_language(self):
        m = MultilingualTfidf().fit(self.TEXTS, self.LANGS)
        with pytest.raises(UnknownLanguageError) as info:
            m.transform(["bonjour le monde"], ["fr"])
        assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
        msg = str(info.value)
        assert "'fr'" in msg and "de, en, it" in msg
        with pytest.raises(KeyError):
            m.transform(["hola"], ["es"])

    def test_input_validation(self):
        with pytest.raises(ValueError, match="differ in length"):
            MultilingualTfidf().fit(["a b", "c d"], ["en"])
        with pytest.raises(ValueError):
            MultilingualTfidf().fit([], [])
        with pytest.raises(ValueError, match="'de'"):  # empty vocabulary names the language
            MultilingualTfidf().fit(["cats and dogs", "der die das"], ["en", "de"])


# ---------------------------------------------------------------------------------- the warning on unsegmented text
def _sib200_sample(shared_data: Path, n: int = 50) -> dict[str, list[str]]:
    """The first ``n`` training sentences of each SIB-200 language found under ``shared_data``."""
    from gfun.datasets.sib200 import read_sib200_file

    folders = sorted(p for p in (shared_data / "sib200").iterdir() if (p / "train.tsv").is_file())
    return {p.name: [r["text"] for r in read_sib200_file(p / "train.tsv", p.name.split("_")[0])[:n]]
            for p in folders}


def _unsegmented_warnings(caplog, lang: str, texts: list[str]) -> list[str]:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gfun.text"):
        TfidfVectorizer(lang).fit(texts)
    return [r.getMessage() for r in caplog.records if "written without spaces" in r.getMessage()]


def test_small_corpora_written_with_spaces_raise_no_unsegmented_warning(shared_data: Path, caplog) -> None:
    """50 sentences of every SIB-200 language: most of their terms occur once, but their words are spaced
    (or, for Chinese, Japanese and Thai, cut into n-grams), so nothing warns; without their spaces, the same
    sentences are text gfun cannot tokenise, and that does warn."""
    sample = _sib200_sample(shared_data)
    assert {"eng_Latn", "fin_Latn", "heb_Hebr", "zho_Hans", "jpn_Jpan", "tha_Thai"} <= set(sample)
    for name, texts in sample.items():
        assert _unsegmented_warnings(caplog, name.split("_")[0], texts) == [], name
    for name in ("eng_Latn", "fin_Latn", "heb_Hebr", "hin_Deva", "rus_Cyrl"):
        squeezed = [text.replace(" ", "") for text in sample[name]]
        msgs = _unsegmented_warnings(caplog, name.split("_")[0], squeezed)
        assert len(msgs) == 1 and "cannot tokenise" in msgs[0], name


@pytest.mark.parametrize("bounds", [[0, 5], [0, 2, 5], [0, 1, 2, 3, 4, 5], [0, 0, 3, 5, 5]])
def test_counting_in_blocks_fits_the_same_bits_as_one_pass(bounds: list[int]) -> None:
    """A language's texts counted in consecutive blocks (on a cluster's workers) and merged give the vectorizer and
    the matrix of one pass over them: the same terms in the same columns, the same idf, the same bits (empty blocks
    included)."""
    texts = [*TINY, "date elderberry fig apple", "fig fig banana cherry"]
    one = TfidfVectorizer("en", **PLAIN)
    expected = one.fit_transform(texts)
    blocked = TfidfVectorizer("en", **PLAIN)
    counts = blocked.fit_blocks([blocked.count_block(texts[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    assert blocked.vocabulary_ == one.vocabulary_ and np.array_equal(blocked.idf_, one.idf_)
    assert _same_csr(blocked._weight(counts), expected)
    assert _same_csr(blocked.transform(texts), one.transform(texts))


def test_multilingual_tfidf_on_a_cluster_counts_large_languages_in_blocks(monkeypatch) -> None:
    import gfun.text.tfidf as tfidf

    texts = [*TINY, "banana date fig", "Apfel Banane Kirsche", "Banane Dattel", "apple fig fig"]
    langs = ["en", "en", "en", "en", "de", "de", "en"]
    reference = MultilingualTfidf(**PLAIN).fit_transform(texts, langs)
    cut = []
    monkeypatch.setattr(tfidf, "on_dask_cluster", lambda: True)
    monkeypatch.setattr(tfidf, "document_blocks", lambda sizes, n_jobs: cut.append(list(sizes)) or [2, 3])
    blocked = MultilingualTfidf(**PLAIN).fit_transform(texts, langs)
    assert cut == [[2, 5]]  # de, en: the sizes the blocks were chosen from
    assert list(blocked) == list(reference)
    for lang, (rows, X) in reference.items():
        assert np.array_equal(blocked[lang][0], rows) and _same_csr(blocked[lang][1], X)
    with pytest.raises(ValueError, match="no block"):
        tfidf.merge_term_counts([])
