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
