"""JRC-Acquis TEI-XML reader and the Funnelling protocol, on fixtures built in the corpus format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.jrc import jrc_funnelling_split, load_jrc_acquis, read_jrc_acquis, read_jrc_file
from gfun.datasets.registry import load_dataset
from gfun.errors import CorpusFormatError

LANGS = ("en", "it", "fi")


def tei(celex: str, lang: str, codes: list[str], body: str = "", *, doctype: bool = True) -> str:
    codes_xml = "\n".join(f'<classCode scheme="eurovoc">{c}</classCode>' for c in codes)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        + ('<!DOCTYPE TEI.2 SYSTEM "jrc.dtd">\n' if doctype else "")
        + f'<TEI.2 id="jrc{celex}-{lang}" n="{celex}" lang="{lang}">\n'
        f'<teiHeader lang="{lang}" date.created="2006-05-24">\n'
        f"<fileDesc><titleStmt><title>JRC-ACQUIS {celex}</title></titleStmt></fileDesc>\n"
        f'<profileDesc><textClass>\n{codes_xml}\n<classCode scheme="other">X</classCode>\n'
        "</textClass></profileDesc>\n</teiHeader>\n"
        f"<text><body><head>Act {celex} ({lang})</head>\n"
        f'<div type="body"><p n="1">First paragraph {lang} {celex}.</p>\n<p n="2">{body or "Second."}</p>'
        "</div></body></text>\n</TEI.2>\n"
    )


def write_doc(root: Path, celex: str, lang: str, year: int, codes: list[str], **kw: object) -> Path:
    path = root / lang / str(year) / f"jrc{celex}-{lang}.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tei(celex, lang, codes, **kw), encoding="utf-8")  # type: ignore[arg-type]
    return path


@pytest.fixture()
def jrc_dir(tmp_path: Path) -> Path:
    """20 training-year documents (some missing a language) and 6 documents of 2006."""
    root = tmp_path / "jrc-acquis"
    for k in range(20):
        celex = f"3{2000 + k % 6}R{k:04d}"
        codes = ["100", str(200 + k % 3)] + (["999"] if k == 0 else [])
        for lang in LANGS:
            if lang == "fi" and k % 4 == 0:
                continue  # no Finnish version
            write_doc(root, celex, lang, 2000 + k % 6, codes)
    for k in range(6):
        celex = f"32006D{k:04d}"
        for lang in LANGS:
            if k == 5 and lang == "it":
                continue  # incomplete: dropped from the test set
            write_doc(root, celex, lang, 2006, ["100", str(200 + k % 3)] if k != 4 else ["555"])
    return root


def test_read_file(tmp_path: Path) -> None:
    path = write_doc(tmp_path / "jrc", "31958D1018", "it", 1958, ["1318", "1444", "1318"],
                     body="Libert&agrave; &amp; d&eacute;cision")
    doc = read_jrc_file(path)
    assert (doc.celex, doc.doc_id, doc.lang, doc.year) == ("31958D1018", "jrc31958D1018-it", "it", 1958)
    assert doc.labels == ("1318", "1444")  # only eurovoc codes, deduplicated
    assert doc.text.splitlines() == ["Act 31958D1018 (it)", "First paragraph it 31958D1018.",
                                     "Libertà & décision"]  # entities of the unread DTD resolved


def test_language_and_year_inference(tmp_path: Path) -> None:
    # no -<lang>.xml suffix and no year directory: the language folder and the CELEX number decide
    path = tmp_path / "jrc-de" / "misc" / "doc.xml"
    path.parent.mkdir(parents=True)
    path.write_text(tei("32003L0004", "xx", ["1"]), encoding="utf-8")
    doc = read_jrc_file(path, root=tmp_path)
    assert (doc.lang, doc.year) == ("de", 2003)
    # nothing in the path: the lang attribute
    path2 = tmp_path / "doc.xml"
    path2.write_text(tei("32003L0004", "pt", ["1"]), encoding="utf-8")
    assert read_jrc_file(path2, root=tmp_path).lang == "pt"


@pytest.mark.parametrize(("text", "match", "line", "field"), [
    ('<TEI.2 n="3"><teiHeader>\n<p>unclosed\n</teiHeader></TEI.2>', "malformed XML", 3, None),
    ("<html/>", "expected <TEI.2>", 1, None),
    ('<TEI.2 lang="en">\n<text><body/></text></TEI.2>', "no CELEX", 1, "TEI.2/@n"),
    ('<TEI.2 n="32001R0001" lang="en"><teiHeader>\n<profileDesc><textClass>\n'
     '<classCode scheme="eurovoc"> </classCode>\n</textClass></profileDesc></teiHeader>'
     "<text><body/></text></TEI.2>", "empty EuroVoc code", 3, "classCode"),
    ('<TEI.2 n="32001R0001" lang="en">\n<teiHeader/>\n</TEI.2>', "no <text>", 1, "text"),
    ('<TEI.2 n="X1" lang="en"><text/></TEI.2>', "cannot tell the year", 1, "TEI.2/@n"),
])
def test_malformed(tmp_path: Path, text: str, match: str, line: int, field: str | None) -> None:
    path = tmp_path / "bad.xml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=match) as info:
        read_jrc_file(path)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert info.value.field == field


def test_read_corpus(jrc_dir: Path) -> None:
    corpus = read_jrc_acquis(jrc_dir)
    assert corpus.lang_counts() == {"en": 26, "it": 25, "fi": 21}
    i = corpus.ids.index("en:32000R0000")
    assert corpus.extra["source_id"][i] == "32000R0000"
    assert corpus.extra["year"][i] == 2000
    assert corpus.labels[i] == ("100", "200", "999")
    assert read_jrc_acquis(jrc_dir, langs=["fi"]).languages == ["fi"]
    with pytest.raises(FileNotFoundError):
        read_jrc_acquis(jrc_dir / "en" / "2006" / "none")


def test_duplicate_version(jrc_dir: Path) -> None:
    src = jrc_dir / "en" / "2000" / "jrc32000R0000-en.xml"
    (jrc_dir / "en" / "copy").mkdir()
    (jrc_dir / "en" / "copy" / "jrc32000R0000-en.xml").write_bytes(src.read_bytes())
    with pytest.raises(CorpusFormatError, match="also in"):
        read_jrc_acquis(jrc_dir)


def test_protocol(jrc_dir: Path) -> None:
    corpus = read_jrc_acquis(jrc_dir)
    train, test = jrc_funnelling_split(corpus, run=0, langs=LANGS, n_classes=4)
    # classes: the 4 codes labelling most training documents (999 labels one)
    assert set(train.classes) == {"100", "200", "201", "202"}
    # every training CELEX once, in one language; languages balanced
    celex = train.extra["source_id"]
    assert len(celex) == len(set(celex)) == 20
    counts = train.lang_counts()
    assert max(counts.values()) - min(counts.values()) <= 1
    assert all(y <= 2005 for y in train.extra["year"])
    # test: 2006 documents in all languages; incomplete and class-less ones dropped
    assert set(test.extra["year"]) == {2006}
    assert test.lang_counts() == {"en": 4, "it": 4, "fi": 4}
    assert "en:32006D0004" not in test.ids and "en:32006D0005" not in test.ids
    assert all(labs for labs in train.labels + test.labels)
    # seeded: same run -> same split; another run -> another assignment of languages
    again, _ = jrc_funnelling_split(corpus, run=0, langs=LANGS, n_classes=4)
    assert again.ids == train.ids
    other, _ = jrc_funnelling_split(corpus, run=1, langs=LANGS, n_classes=4)
    assert sorted(other.extra["source_id"]) == sorted(celex) and other.ids != train.ids


def test_protocol_options(jrc_dir: Path) -> None:
    corpus = read_jrc_acquis(jrc_dir)
    train, _ = jrc_funnelling_split(corpus, langs=LANGS, n_classes=2, max_train_per_lang=3,
                                    train_min_year=2002)
    assert max(train.lang_counts().values()) <= 3
    assert min(train.extra["year"]) >= 2002
    assert len(train.classes) == 2
    with pytest.raises(ValueError, match="source_id"):
        jrc_funnelling_split(MultilingualCorpus(["a"], ["en"], ["t"]))


def test_load_with_split_file(jrc_dir: Path) -> None:
    split = {"en": {"train": ["32000R0000", "jrc32001R0001-en"], "test": ["32006D0000"]},
             "it": [["32002R0002"], ["32006D0000"]]}
    (jrc_dir / "splits").mkdir()
    (jrc_dir / "splits" / "run3.json").write_text(json.dumps(split), encoding="utf-8")
    s = load_jrc_acquis(jrc_dir, run=3, langs=["en", "it"], n_classes=2)
    assert s.train.ids == ["en:32000R0000", "en:32001R0001", "it:32002R0002"]
    assert s.test.ids == ["en:32006D0000", "it:32006D0000"]
    assert len(s.classes) == 2 and s.classes[0] == "100"
    # run 0 has no split file: the protocol
    s0 = load_dataset("jrc-acquis", data_dir=jrc_dir, run=0, langs=LANGS, n_classes=4)
    assert s0.name == "jrc-acquis" and len(s0.train) == 20
    # a split naming a missing document
    (jrc_dir / "splits" / "run4.json").write_text(json.dumps({"en": [["nope"], []]}), encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="not in the corpus"):
        load_jrc_acquis(jrc_dir, run=4)
