"""RCV1/RCV2 readers and the Funnelling protocol, on fixtures built in the corpus format."""

from __future__ import annotations

import json
import pickle
import zipfile
from pathlib import Path

import pytest

from gfun.datasets.rcv import load_rcv1_rcv2, parse_newsitem, rcv_funnelling_split, read_rcv
from gfun.datasets.registry import load_dataset
from gfun.errors import CorpusFormatError


def newsitem(itemid: str, lang: str | None, topics: list[str], title: str = "TITLE", *,
             encoding: str = "iso-8859-1") -> bytes:
    lang_attr = f' xml:lang="{lang}"' if lang else ""
    codes = "".join(
        f'<code code="{c}"><editdetail attribution="Reuters BIP Coding Group" action="confirmed"/></code>'
        for c in topics)
    xml = (f'<?xml version="1.0" encoding="{encoding}"?>\n'
           f'<newsitem itemid="{itemid}" id="root" date="1996-08-20"{lang_attr}>\n'
           f"<title>{title}</title>\n<headline>Headline {itemid}</headline>\n"
           f"<text>\n<p>Paragraph one of {itemid}.</p>\n<p>Señal two.</p>\n</text>\n"
           "<metadata>\n"
           '<codes class="bip:countries:1.0"><code code="MEX"/></codes>\n'
           f'<codes class="bip:topics:1.0">{codes}</codes>\n'
           "</metadata>\n</newsitem>\n")
    return xml.encode(encoding)


TOPICS = ["CCAT", "ECAT", "GCAT", "MCAT"]


@pytest.fixture()
def rcv_dir(tmp_path: Path) -> Path:
    """English (RCV1, zipped by day): 12 stories; RCV2 folders: de 12, es 7 (all xml files)."""
    root = tmp_path / "rcv1-rcv2"
    (root / "rcv1").mkdir(parents=True)
    for day in range(2):
        with zipfile.ZipFile(root / "rcv1" / f"1996082{day}.zip", "w") as zf:
            for k in range(6):
                item = 1000 + day * 10 + k
                zf.writestr(f"{item}newsML.xml", newsitem(str(item), "en", [TOPICS[k % 4], "C15"]))
        # a story without topics: dropped by the protocol
    (root / "rcv1" / "999newsML.xml").write_bytes(newsitem("999", "en", []))
    for lang, n, folder in (("de", 12, "german"), ("es", 7, "spanish")):
        (root / "rcv2" / folder).mkdir(parents=True)
        for k in range(n):
            attr = lang if k else None  # the first story relies on the folder name
            (root / "rcv2" / folder / f"{k}.xml").write_bytes(
                newsitem(str(k), attr, [TOPICS[k % 4]], encoding="utf-8"))
    return root


def test_parse_newsitem() -> None:
    doc = parse_newsitem(newsitem("2286", "en-GB", ["E11", "M11", "E11"], "MEXICO: Markets"), "x.xml")
    assert (doc.itemid, doc.lang, doc.date) == ("2286", "en", "1996-08-20")
    assert doc.labels == ("E11", "M11")  # topics only (not countries), deduplicated
    assert doc.text.splitlines() == ["MEXICO: Markets", "Paragraph one of 2286.", "Señal two."]


@pytest.mark.parametrize(("xml", "match", "line", "field"), [
    (b'<newsitem itemid="1" xml:lang="en">\n<title>x</title>\n<text></newsitem>', "malformed XML", 3, None),
    (b"<doc/>", "expected <newsitem>", 1, None),
    (b'<newsitem xml:lang="en">\n</newsitem>', "missing itemid", 1, "newsitem/@itemid"),
    (b'<newsitem itemid="1">\n</newsitem>', "no language", 1, "newsitem/@xml:lang"),
    (b'<newsitem itemid="1" xml:lang="en"><metadata>\n<codes class="bip:topics:1.0">\n<code/>\n'
     b"</codes></metadata></newsitem>", "without a code attribute", 3, "code/@code"),
])
def test_malformed(xml: bytes, match: str, line: int, field: str | None) -> None:
    with pytest.raises(CorpusFormatError, match=match) as info:
        parse_newsitem(xml, "/data/rcv1/1.xml")
    assert info.value.path == "/data/rcv1/1.xml"
    assert info.value.line == line
    assert info.value.field == field


def test_read_rcv(rcv_dir: Path) -> None:
    corpus = read_rcv(rcv_dir)
    assert corpus.lang_counts() == {"en": 13, "de": 12, "es": 7}
    i = corpus.ids.index("de:0")  # language from the folder name
    assert corpus.extra["source_id"][i] == "0"
    assert corpus.labels[corpus.ids.index("en:1001")] == ("ECAT", "C15")
    assert read_rcv(rcv_dir, langs=["es"]).languages == ["es"]
    # a broken zip names the file
    (rcv_dir / "rcv1" / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(CorpusFormatError, match="bad.zip"):
        read_rcv(rcv_dir)


def test_duplicate_itemid(rcv_dir: Path) -> None:
    (rcv_dir / "rcv2" / "german" / "again.xml").write_bytes(newsitem("3", "de", ["CCAT"]))
    with pytest.raises(CorpusFormatError, match="itemid 3"):
        read_rcv(rcv_dir)


def test_protocol(rcv_dir: Path) -> None:
    corpus = read_rcv(rcv_dir)
    train, test = rcv_funnelling_split(corpus, run=0, langs=["en", "de", "es"], n_train=4, n_test=5)
    assert train.lang_counts() == {"en": 4, "de": 4, "es": 4}
    assert test.lang_counts() == {"en": 5, "de": 5, "es": 3}  # es has 7: the rest goes to test
    assert not set(train.ids) & set(test.ids)
    assert "en:999" not in train.ids + test.ids  # no topic
    # classes: codes with a positive training document
    used = {lab for labs in train.labels for lab in labs}
    assert set(train.classes) == used and test.classes == train.classes
    again, _ = rcv_funnelling_split(corpus, run=0, langs=["en", "de", "es"], n_train=4, n_test=5)
    other, _ = rcv_funnelling_split(corpus, run=1, langs=["en", "de", "es"], n_train=4, n_test=5)
    assert again.ids == train.ids and other.ids != train.ids
    tr, _ = rcv_funnelling_split(corpus, langs=["en"], n_train=4, n_test=1, classes=["CCAT", "XXX"])
    assert tr.classes == ("CCAT", "XXX")
    with pytest.raises(ValueError, match="no labelled RCV document"):
        rcv_funnelling_split(corpus, langs=["fr"])


def test_load_and_exact_split(rcv_dir: Path) -> None:
    s = load_dataset("rcv1-rcv2", data_dir=rcv_dir, run=0, langs=["en", "de"], n_train=3, n_test=3)
    assert s.name == "rcv1-rcv2" and len(s.train) == 6 and len(s.test) == 6
    # the authors' per-run doc lists, as a pickled dict {lang: (train ids, test ids)}
    doclist = {"en": (["1000", "1011"], ["1012"]), "de": (["de:3"], ["4", "5"])}
    with open(rcv_dir / "rcv1-2_doclist_run2.pickle", "wb") as fh:
        pickle.dump(doclist, fh)
    s2 = load_rcv1_rcv2(rcv_dir, run=2)
    assert s2.train.ids == ["en:1000", "en:1011", "de:3"]
    assert s2.test.ids == ["en:1012", "de:4", "de:5"]
    assert set(s2.classes) == {"CCAT", "C15", "ECAT", "MCAT"}
    # or an explicit JSON file
    path = rcv_dir / "mine.json"
    path.write_text(json.dumps({"es": {"train": ["1"], "test": ["2"]}}), encoding="utf-8")
    s3 = load_rcv1_rcv2(rcv_dir, split_file=path)
    assert s3.train.ids == ["es:1"] and s3.test.ids == ["es:2"]
