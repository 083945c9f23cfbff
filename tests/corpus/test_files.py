"""The corpus writers (to_tsv, to_jsonl): they refuse what cannot be read back and keep the old file on error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gfun.corpus.multilingual import MultilingualCorpus, read_corpus, read_tsv
from gfun.errors import CorpusFormatError


# ------------------------------------------------------------------------------------------- corpus writers
def _corpus(**overrides) -> MultilingualCorpus:
    kw = {"ids": ["a", "b"], "langs": ["en", "de"], "texts": ["tab\there", "line\nbreak"],
          "labels": [["x"], ["y"]]}
    kw.update(overrides)
    return MultilingualCorpus(**kw)


@pytest.mark.parametrize("suffix", [".tsv", ".tsv.gz"])
@pytest.mark.parametrize(("field", "overrides"), [
    ("id", {"ids": ["a", "b\tc"]}), ("id", {"ids": ["a", "b\nc"]}), ("lang", {"langs": ["en", "d\te"]}),
    ("labels", {"labels": [["x"], ["y\tz"]]}), ("labels", {"labels": [["x"], ["y\rz"]]}),
    ("labels", {"labels": [["x"], ["y,z"]]}),
])
def test_to_tsv_refuses_what_read_tsv_cannot_read_back(tmp_path: Path, suffix: str, field: str,
                                                       overrides: dict) -> None:
    target = tmp_path / f"c{suffix}"
    _corpus().to_tsv(target)
    before = target.read_bytes()
    with pytest.raises(CorpusFormatError, match=rf"c{suffix}, field '{field}': document 'b"):
        _corpus(**overrides).to_tsv(target)
    assert target.read_bytes() == before and os.listdir(tmp_path) == [target.name]
    back = read_tsv(target)
    assert back.texts == ["tab\there", "line\nbreak"] and back.labels == [("x",), ("y",)]


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_to_jsonl_leaves_the_old_file_when_a_record_cannot_be_written(tmp_path: Path, suffix: str) -> None:
    target = tmp_path / f"c{suffix}"
    _corpus().to_jsonl(target)
    before = target.read_bytes()
    bad = _corpus(extra={"meta": [1, object()]})  # the second document's extra value is not JSON
    with pytest.raises(TypeError):
        bad.to_jsonl(target)
    assert target.read_bytes() == before and os.listdir(tmp_path) == [target.name]
    assert read_corpus(target).ids == ["a", "b"]


def test_read_records_reads_by_extension(tmp_path) -> None:
    from gfun.corpus.files import read_records
    from gfun.datasets.demo import load_demo

    train, _ = load_demo()
    sample = train.subset(range(3))
    sample.to_jsonl(tmp_path / "a.jsonl.gz")
    sample.to_tsv(tmp_path / "a.tsv")
    for name in ("a.jsonl.gz", "a.tsv"):
        records = read_records(tmp_path / name)
        assert [r["id"] for r in records] == sample.ids and [r["__line__"] for r in records] == (
            [1, 2, 3] if name.endswith("gz") else [2, 3, 4])


# ------------------------------------------------------------------------------------------- formats by content
def _rows() -> list[dict]:
    return [{"id": "a", "lang": "en", "labels": ["x", "y"], "text": 'a "quoted", text'},
            {"id": "b", "lang": "de", "labels": ["y"], "text": "line\nbreak"}]


def test_csv_is_read_by_its_header_whatever_its_name(tmp_path: Path) -> None:
    import csv

    from gfun.corpus.files import read_records

    for name in ("docs.csv", "docs.txt", "docs"):
        with open(tmp_path / name, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["id", "lang", "labels", "text"])
            for r in _rows():
                writer.writerow([r["id"], r["lang"], ",".join(r["labels"]), r["text"]])
        corpus = read_corpus(tmp_path / name)
        assert corpus.ids == ["a", "b"] and corpus.texts == [r["text"] for r in _rows()], name
        assert corpus.labels == [("x", "y"), ("y",)]
        assert [r["__line__"] for r in read_records(tmp_path / name)] == [2, 3]


def test_a_tsv_named_txt_and_a_tsv_with_only_a_text_column_are_read(tmp_path: Path) -> None:
    from gfun.corpus.files import read_records

    (tmp_path / "docs.txt").write_text("id\tlang\tlabels\ttext\na\ten\tx\tone\n", encoding="utf-8")
    assert read_corpus(tmp_path / "docs.txt").labels == [("x",)]
    (tmp_path / "only.tsv").write_text("text\nfirst document, with a comma\nsecond\n", encoding="utf-8")
    records = read_records(tmp_path / "only.tsv")
    assert [r["text"] for r in records] == ["first document, with a comma", "second"]
    assert all("id" not in r and "lang" not in r for r in records)
    (tmp_path / "only.csv").write_text('text\n"first, quoted"\nsecond\n', encoding="utf-8")
    assert [r["text"] for r in read_records(tmp_path / "only.csv")] == ["first, quoted", "second"]


def test_tsv_and_csv_on_standard_input_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from gfun.corpus.files import read_records

    for data in (b"id\tlang\ttext\na\ten\thello\n", b'id,lang,text\na,en,"hello"\n'):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        assert [(r["id"], r["lang"], r["text"]) for r in read_records("-")] == [("a", "en", "hello")]


def test_an_unreadable_file_names_the_format_tried_and_why(tmp_path: Path) -> None:
    from gfun.corpus.files import read_records

    (tmp_path / "notes.csv").write_text("title,body\nx,y\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"no 'text' column.*read as CSV: its first line holds "
                                                r"comma-separated column names"):
        read_records(tmp_path / "notes.csv")
    (tmp_path / "bad.jsonl").write_text("id,lang,text\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=r"invalid JSON.*read as JSONL: its name ends in \.jsonl"):
        read_records(tmp_path / "bad.jsonl")


def test_parquet_is_read(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = _rows()
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "docs.parquet")
    corpus = read_corpus(tmp_path / "docs.parquet")
    assert corpus.ids == ["a", "b"] and corpus.texts == [r["text"] for r in rows]
    assert corpus.labels == [("x", "y"), ("y",)] and corpus.languages == ["de", "en"]


def test_parquet_without_pyarrow_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gfun.errors import MissingDependencyError
    from tests.missing_modules import hide_modules

    hide_modules(monkeypatch, "pyarrow")
    (tmp_path / "docs.parquet").write_bytes(b"PAR1")
    with pytest.raises(MissingDependencyError, match="experiments"):
        read_corpus(tmp_path / "docs.parquet")


def test_a_dataframe_is_a_corpus_and_a_training_set() -> None:
    pd = pytest.importorskip("pandas")
    from gfun.corpus.inputs import training_data

    frame = pd.DataFrame({"text": ["one", "two", "three"], "lang": ["en", "de", "en"],
                          "labels": [["x"], ["x", "y"], []]})
    corpus = read_corpus(frame)
    assert corpus.ids == ["0", "1", "2"] and corpus.classes == ("x", "y")
    assert corpus.Y.toarray().tolist() == [[1, 0], [1, 1], [0, 0]]
    texts, langs, Y, classes = training_data(frame)
    assert texts == ["one", "two", "three"] and classes == ["x", "y"] and Y.tolist() == [[1, 0], [1, 1], [0, 0]]


def test_a_json_error_reads_as_english(tmp_path: Path) -> None:
    """'Unterminated string starting at at column 29': the column is named once."""
    (tmp_path / "bad.jsonl").write_text('{"id": "1", "lang": "en", "text": "unterminated\n', encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="Unterminated string starting at column 35") as info:
        read_corpus(tmp_path / "bad.jsonl")
    assert "at at" not in str(info.value)
