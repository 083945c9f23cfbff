"""Language identification of documents without a language (gfun.text.langid, the ``langid`` extra)."""

from __future__ import annotations

import csv
import json
import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gfun.core.optional import has_optional
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import CorpusFormatError

needs_detector = pytest.mark.skipif(
    not has_optional("py3langid"),
    reason="language detection needs py3langid, the detector of the optional extra: pip install 'gfun[langid]'")


@pytest.fixture(scope="module")
def demo_test() -> MultilingualCorpus:
    """The first 10 test documents of each demo language (Debian package descriptions)."""
    _, test = load_demo()
    return test.subset(np.sort(np.concatenate([ix[:10] for ix in test.by_language().values()])))


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ accuracy
@needs_detector
def test_detects_the_languages_of_real_documents(demo_test: MultilingualCorpus, caplog) -> None:
    from gfun.text.langid import detect_languages

    with caplog.at_level(logging.INFO, logger="gfun.text.langid"):
        found = detect_languages(demo_test.texts, candidates=demo_test.languages)
    accuracy = np.mean(np.asarray(found) == np.asarray(demo_test.langs))
    assert accuracy >= 0.9, f"{accuracy:.2f} of {len(found)} demo documents"
    assert "detected the language of 50 document(s)" in caplog.text


@needs_detector
def test_sib200_sentences_among_all_languages(shared_data: Path) -> None:
    """Parallel sentences in 11 languages (Flores-200), no candidate restriction."""
    from gfun.text.langid import detect_languages

    iso = {"dan": "da", "deu": "de", "eng": "en", "fin": "fi", "fra": "fr", "hun": "hu", "ita": "it", "nld": "nl",
           "por": "pt", "spa": "es", "swe": "sv"}
    texts, truth = [], []
    for folder in sorted((shared_data / "sib200").glob("*_Latn")):
        with open(folder / "test.tsv", encoding="utf-8", newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))[:10]
        texts += [r["text"] for r in rows]
        truth += [iso[folder.name.split("_")[0]]] * len(rows)
    if not texts:
        pytest.skip("no SIB-200 test files under the shared data folder")
    found = detect_languages(texts)
    assert np.mean(np.asarray(found) == np.asarray(truth)) >= 0.98


# ------------------------------------------------------------------------------------------------ candidates
@needs_detector
def test_candidates_are_answered_in_the_callers_spelling() -> None:
    from gfun.text.langid import detect_languages

    texts = ["Das Programm bearbeitet Textdateien und speichert sie automatisch.",
             "The program edits text files and saves them automatically."]
    assert detect_languages(texts) == ["de", "en"]
    assert detect_languages(texts, candidates=["eng_Latn", "deu_Latn"]) == ["deu_Latn", "eng_Latn"]
    assert detect_languages(texts, candidates=["english", "german"]) == ["german", "english"]
    with pytest.raises(ValueError, match="'tlh'"):
        detect_languages(texts, candidates=["en", "tlh"])
    with pytest.raises(ValueError, match="same language"):
        detect_languages(texts, candidates=["en", "eng"])
    with pytest.raises(TypeError, match="single string"):
        detect_languages(texts, candidates="en")
    with pytest.raises(TypeError, match="single string"):
        detect_languages("Das Programm")
    with pytest.raises(ValueError, match="min_confidence"):
        detect_languages(texts, min_confidence=1.5)
    assert detect_languages([]) == []


# ------------------------------------------------------------------------------------------------ refusals
@needs_detector
def test_refuses_when_not_confident_naming_the_document_and_the_guesses() -> None:
    from gfun.errors import LanguageDetectionError
    from gfun.text.langid import detect_languages

    texts = ["The program edits text files and saves them automatically.", "Hallo", "ok",
             "Il programma modifica i file di testo."]
    with pytest.raises(LanguageDetectionError) as err:
        detect_languages(texts)
    exc = err.value
    assert exc.index == 1 and exc.n_failed == 2
    assert len(exc.guesses) == 3 and all(p < 0.5 for _, p in exc.guesses)
    message = str(exc)
    assert "document 1 (text 'Hallo')" in message and "best guesses" in message and "1 more" in message
    assert all(lang in message for lang, _ in exc.guesses)
    assert isinstance(exc, ValueError)  # and a CorpusFormatError: the CLI reports it like any input error


@needs_detector
@pytest.mark.parametrize("text", ["", "   \n", "12345 678", "!!! ???"])
def test_refuses_texts_without_letters(text: str) -> None:
    """Even among two candidates, where a uniform guess would pass a 0.5 threshold."""
    from gfun.errors import LanguageDetectionError
    from gfun.text.langid import detect_languages

    with pytest.raises(LanguageDetectionError, match="no letters") as err:
        detect_languages(["Das ist ein Haus.", text], candidates=["de", "en"])
    assert err.value.index == 1 and err.value.guesses == []


# ------------------------------------------------------------------------------------------------ corpora
RECORDS = [
    {"id": "1", "lang": "eng", "text": "A text editor for programmers, with syntax highlighting.", "labels": ["a"]},
    {"id": "2", "text": "Ein Texteditor für Programmierer, mit Syntaxhervorhebung und Makros.", "labels": ["b"]},
    {"id": "3", "lang": None, "text": "Un editor di testo per programmatori, con evidenziazione della sintassi.",
     "labels": ["a"]},
    {"id": "4", "lang": " ", "text": "A library for reading and writing compressed archives.", "labels": ["b"]},
]


@needs_detector
def test_missing_languages_are_filled_in_when_reading_jsonl(tmp_path: Path, caplog) -> None:
    path = _write_jsonl(tmp_path / "docs.jsonl", RECORDS)
    with pytest.raises(CorpusFormatError, match="line 2.*'lang'"):
        MultilingualCorpus.from_jsonl(path)  # the default: a missing language is an error
    with caplog.at_level(logging.INFO, logger="gfun.text.langid"):
        corpus = MultilingualCorpus.from_jsonl(path, detect_language=True)
    # the detected English is written as the file already writes it ("eng"), the others as ISO 639-1 codes
    assert corpus.langs == ["eng", "de", "it", "eng"]
    assert "filled in the missing language of 3 document(s)" in caplog.text and "docs.jsonl" in caplog.text
    restricted = MultilingualCorpus.from_jsonl(path, detect_language=["eng", "deu", "ita"])
    assert restricted.langs == ["eng", "deu", "ita", "eng"]
    assert corpus.texts == [r["text"] for r in RECORDS] and corpus.labels == [("a",), ("b",), ("a",), ("b",)]


@needs_detector
def test_missing_languages_are_filled_in_when_reading_tsv(tmp_path: Path) -> None:
    path = tmp_path / "docs.tsv"
    path.write_text("id\tlang\tlabels\ttext\n1\ten\ta\tThe program edits text files.\n"
                    "2\t\tb\tLe programme modifie des fichiers texte.\n", encoding="utf-8")
    assert MultilingualCorpus.from_tsv(path, detect_language=True).langs == ["en", "fr"]


@needs_detector
def test_undetectable_language_in_a_file_names_file_line_and_id(tmp_path: Path) -> None:
    from gfun.errors import LanguageDetectionError

    path = _write_jsonl(tmp_path / "docs.jsonl", [*RECORDS, {"id": "five", "text": "   "}])
    with pytest.raises(LanguageDetectionError) as err:
        MultilingualCorpus.from_jsonl(path, detect_language=True)
    message = str(err.value)
    assert str(path) in message and "line 5" in message and "'five'" in message and "no letters" in message
    assert err.value.line == 5 and err.value.index == 4 and err.value.field == "lang"


@needs_detector
def test_fill_missing_languages_leaves_complete_records_alone() -> None:
    from gfun.text.langid import fill_missing_languages

    complete = [RECORDS[0]]
    assert fill_missing_languages(complete) == complete
    out = fill_missing_languages(RECORDS, candidates=["en", "de", "it"])
    assert [r.get("lang") for r in RECORDS] == ["eng", None, None, " "]  # the input is not modified
    assert [r["lang"] for r in out] == ["eng", "de", "it", "en"]


def test_detect_language_must_not_be_a_single_string(tmp_path: Path) -> None:
    path = _write_jsonl(tmp_path / "docs.jsonl", RECORDS[:1])
    with pytest.raises(TypeError, match="single string"):
        MultilingualCorpus.from_jsonl(path, detect_language="en")


# ------------------------------------------------------------------------------------------------ packaging
def test_missing_detector_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import gfun.text.langid as langid

    monkeypatch.setitem(sys.modules, "py3langid", None)  # makes "import py3langid" fail
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)
    langid._base_identifier.cache_clear()
    langid._identifier.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pip install 'gfun\[langid\]'"):
            langid.detect_languages(["some text"])
    finally:
        langid._base_identifier.cache_clear()
        langid._identifier.cache_clear()


def test_importing_gfun_langid_does_not_load_the_detector() -> None:
    code = "import sys, gfun.text.langid, gfun.corpus.multilingual; assert 'py3langid' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
