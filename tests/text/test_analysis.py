"""The analyser (gfun.text.analysis): stopwords, stemming, tokenisation, language names, and scripts written
without spaces (Chinese, Japanese, Thai) cut into character n-grams.
"""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.metrics.evaluation import evaluate
from gfun.text.analysis import Analyzer, resolve_language
from gfun.text.tfidf import TfidfVectorizer
from gfun.views.embeddings import WordEmbeddingView


# --------------------------------------------------------------------------------------------
# Analyzer
# --------------------------------------------------------------------------------------------
class TestAnalyzer:
    @pytest.mark.parametrize(("lang", "text", "expected"), [
        ("en", "The children were playing with their new computers in the gardens",
         ["children", "play", "comput", "garden"]),
        ("it", "Gli studenti hanno studiato le lezioni nelle università italiane",
         ["student", "stud", "lezion", "univers", "italian"]),
        ("de", "Die Kinder spielten mit den Computern in den Gärten",
         ["kind", "spielt", "comput", "gart"]),
        ("fi", "Lapset leikkivät tietokoneilla puutarhoissa ja taloissa",
         ["laps", "leikkiv", "tietokon", "puutarho", "talo"]),
        ("hu", "A gyerekek a kertekben játszottak a számítógépekkel",
         ["gyerek", "kert", "játszott", "számítógép"]),
        ("fr", "L'enfant jouait avec les ordinateurs dans les jardins",
         ["enfant", "jou", "ordin", "jardin"]),
    ])
    def test_stopwords_and_stems(self, lang, text, expected):
        assert Analyzer(lang)(text) == expected

    @pytest.mark.parametrize(("lang", "text", "expected"), [
        ("en", "The children were playing in the gardens", ["children", "playing", "gardens"]),
        ("it", "Gli studenti hanno studiato nelle università", ["studenti", "studiato", "università"]),
        ("de", "Die Kinder spielten mit den Computern", ["kinder", "spielten", "computern"]),
        ("fi", "Lapset leikkivät ja juoksivat", ["lapset", "leikkivät", "juoksivat"]),
        ("hu", "A gyerekek a kertekben", ["gyerekek", "kertekben"]),
    ])
    def test_stopwords_without_stemming(self, lang, text, expected):
        assert Analyzer(lang, stem=False)(text) == expected

    def test_no_filtering_keeps_everything_but_short_tokens(self):
        assert Analyzer("en", stopwords=False, stem=False)("The cat is on a mat") == [
            "the", "cat", "is", "on", "mat"]
        assert Analyzer("en", stopwords=False, stem=False, min_len=1)("a b") == ["a", "b"]
        assert Analyzer("en", stopwords=False, stem=False, min_len=4)("the cats") == ["cats"]

    def test_unicode_normalisation(self):
        a = Analyzer("en", stopwords=False, stem=False)
        assert a("\ufb01nancial") == ["financial"]                     # 'ﬁ' ligature
        assert a("ＡＢＣ ｆｕｌｌ１２") == ["abc", "full12"]              # full-width letters/digits
        assert a("cafe\u0301") == a("café") == ["café"]                # combining accent composed
        assert a("Straße STRASSE") == ["strasse", "strasse"]           # case folding
        assert a("İSTANBUL Istanbul") == ["istanbul", "istanbul"]      # dotted capital I
        assert a("ΣΊΣΥΦΟΣ σίσυφος") == a("σίσυφοσ σίσυφοσ")            # final sigma folds

    def test_tokenisation_rules(self):
        a = Analyzer("en", stopwords=False, stem=False)
        assert a("state-of-the-art") == ["state", "of", "the", "art"]     # hyphen splits
        assert a("don't l'uomo l’arte") == ["don", "uomo", "arte"]         # apostrophes split
        assert a("foo_bar __init__") == ["foo", "bar", "init"]             # underscore splits
        assert a("mp3 x11 utf8 2024 64-bit 3.14") == ["mp3", "x11", "utf8", "bit"]  # numbers dropped
        keep = Analyzer("en", stopwords=False, stem=False, keep_numbers=True)
        assert keep("version 2024 64-bit") == ["version", "2024", "64", "bit"]
        # Devanagari vowel signs and virama are combining marks: words stay whole
        assert Analyzer("hi", stopwords=False, stem=False).tokenize("हिन्दी नमस्ते") == ["हिन्दी", "नमस्ते"]
        # Arabic-Indic digits are digits too
        assert Analyzer("ar", stopwords=False, stem=False)("٢٠٢٤ كتاب") == ["كتاب"]

    def test_lowercase_false_keeps_case_but_matches_stopwords_caselessly(self):
        a = Analyzer("en", stem=False, lowercase=False)
        assert a("The Cats of THE Garden") == ["Cats", "Garden"]

    def test_custom_stopword_list(self):
        a = Analyzer("en", stopwords=["cat", "Don't"], stem=False)
        assert a("the cat don't dance") == ["the", "dance"]
        assert a.stopwords == ("cat", "Don't")
        with pytest.raises(TypeError):
            Analyzer("en", stopwords="the")

    def test_language_without_resources_only_tokenises_and_logs_once(self, caplog):
        with caplog.at_level(logging.INFO, logger="gfun.text"):
            a = Analyzer("qq")
            assert a("Hello, Wörld of tests!") == ["hello", "wörld", "of", "tests"]
            Analyzer("qq")("again")
        messages = [r.getMessage() for r in caplog.records if "'qq'" in r.getMessage()]
        assert len(messages) == 2  # one for the stop list, one for the stemmer, each only once
        assert not a.has_stemmer and not a.has_stopwords
        assert a.language is None

    def test_partial_resources(self):
        # Estonian: Snowball stemmer, no stop list; Bulgarian: stop list, no stemmer.
        assert Analyzer("et").has_stemmer and not Analyzer("et").has_stopwords
        assert Analyzer("bg").has_stopwords and not Analyzer("bg").has_stemmer

    def test_cache_makes_repeats_free(self):
        a = Analyzer("en")
        a("running runner runs")
        assert a._cache["running"] == "run"
        a._cache["running"] = "SENTINEL"  # a cached token is never re-stemmed
        assert a("running") == ["SENTINEL"]

    def test_pickle_and_equality(self):
        a = Analyzer("de", min_len=3)
        before = a("Die Kinder spielten in den Gärten")
        b = pickle.loads(pickle.dumps(a))
        assert b == a and hash(b) == hash(a)
        assert b("Die Kinder spielten in den Gärten") == before
        assert b._cache  # rebuilt lazily
        assert "_stemmer" not in a.__getstate__() and "_cache" not in a.__getstate__()

    def test_type_and_value_errors(self):
        with pytest.raises(TypeError):
            Analyzer("en")(None)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            Analyzer("")
        with pytest.raises(ValueError):
            Analyzer("en", min_len=0)


@pytest.mark.parametrize(("code", "name"), [
    ("en", "english"), ("EN", "english"), ("eng", "english"), ("eng_Latn", "english"),
    ("pt-BR", "portuguese"), ("nb", "norwegian"), ("no", "norwegian"), ("deu", "german"),
    ("german", "german"), ("hun_Latn", "hungarian"), ("xx", None), ("zz_Latn", None),
])
def test_resolve_language(code, name):
    assert resolve_language(code) == name


# ------------------------------------------------------------------------------------------ scripts without spaces
def test_chinese_japanese_thai_are_cut_into_character_ngrams() -> None:
    zh = Analyzer("zh")("土耳其三面环海，iPhone手机")
    assert {"土耳", "耳其", "环海", "海", "iphone", "手机"} <= set(zh)
    assert "土耳其三面环海" not in zh
    ja = Analyzer("ja")("トルコは三方を海に囲まれた国")
    assert {"トル", "ルコ", "三方", "海", "国"} <= set(ja) and max(map(len, ja)) <= 2
    th = Analyzer("th")("ประเทศตุรกีมีทะเล")
    assert "ประ" in th and "ตุรกี" in th  # clusters: a letter keeps its vowel and tone marks
    assert max(len(t) for t in th) < 8
    # the script decides, not the language code; words of other scripts are left alone
    assert Analyzer("en").tokenize("Hello 中文 world") == ["hello", "中", "中文", "文", "world"]
    assert Analyzer("ko").tokenize("터키는 서쪽") == ["터", "터키", "키", "키는", "는", "서", "서쪽", "쪽"]
    assert Analyzer("zh", segment=False)("土耳其三面环海") == ["土耳其三面环海"]


def test_sentences_in_chinese_share_terms() -> None:
    X = TfidfVectorizer("zh").fit_transform(["西面是爱琴海", "北面是黑海", "我喜欢猫"])
    assert (X[0] @ X[1].T).toarray()[0, 0] > 0  # "面": before, one token per sentence and no overlap


def test_m_view_with_an_encoder_source_keeps_whole_runs() -> None:
    assert WordEmbeddingView(source="e5-subword")._vectorizer_params()["segment"] is False
    assert WordEmbeddingView(source={"spec": "e5"})._vectorizer_params()["segment"] is False
    assert WordEmbeddingView(source="vec:/nowhere/{lang}.vec")._vectorizer_params()["segment"] is True


def test_script_gfun_cannot_tokenise_is_a_warning(caplog) -> None:
    rng = np.random.RandomState(0)
    javanese = [chr(c) for c in range(0xA984, 0xA9B2)]  # Javanese letters, written without spaces
    texts = ["".join(rng.choice(javanese, 40)) + " " + "".join(rng.choice(javanese, 30)) for _ in range(30)]
    with caplog.at_level(logging.WARNING, logger="gfun.text"):
        TfidfVectorizer("jv").fit(texts)
    msgs = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(msgs) == 1 and "'jv'" in msgs[0] and "cannot tokenise" in msgs[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="gfun.text"):
        TfidfVectorizer("jv", segment=False).fit(texts)  # whole runs asked for (the M view with e5 vectors)
        TfidfVectorizer("zh").fit(["土耳其三面环海", "西面是爱琴海", "北面是黑海", "南面则是地中海"] * 8)
        TfidfVectorizer("en").fit([f"the cat number {i} sat on mat {i % 3}" for i in range(30)])
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


def test_chinese_topic_classification_learns(shared_data: Path) -> None:
    """SIB-200 zho_Hans, Naive: macro-F1 0.03 with one token per clause, about 0.67 with n-grams."""
    from gfun.datasets.sib200 import load_sib200

    data = load_sib200(shared_data / "sib200", ["zho_Hans", "tha_Thai"])
    model = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(data.train)
    scores = evaluate(data.test.Y, model.predict(data.test), data.test.langs)["F1_macro"]
    assert scores["zh"] > 0.4 and scores["th"] > 0.4
