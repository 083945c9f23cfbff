"""MultilingualCorpus: construction checks, selection/splitting and JSONL/TSV I/O with precise errors."""

from __future__ import annotations

import gzip
import json
import logging
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.corpus.multilingual import MultilingualCorpus, read_corpus
from gfun.datasets.demo import load_demo
from gfun.errors import CorpusFormatError

TRICKY_TEXTS = [
    "plain text",
    "tab\there and\ttwice",
    "new\nline and windows\r\nline",
    "back\\slash, literal \\n and \\t (not escapes), ends with a backslash\\",
    "unicode: è à ø ß — 日本語 \u2028 separator",
    "",
]


@pytest.fixture
def tricky() -> MultilingualCorpus:
    n = len(TRICKY_TEXTS)
    return MultilingualCorpus(
        ids=[f"d{i}" for i in range(n)],
        langs=["en", "it", "en", "da", "it", "en"],
        texts=TRICKY_TEXTS,
        labels=[["b"], ["a", "c"], [], ["c"], ["a"], ["b", "a"]],
        classes=["c", "b", "a"],
        extra={"source": [f"src{i % 3}" for i in range(n)]},
    )


@pytest.fixture(scope="module")
def demo_train() -> MultilingualCorpus:
    return load_demo()[0]


def _write(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def _assert_same_docs(a: MultilingualCorpus, b: MultilingualCorpus) -> None:
    assert a.ids == b.ids
    assert a.langs == b.langs
    assert a.texts == b.texts
    assert a.labels == b.labels
    assert a.classes == b.classes
    assert a.labelled == b.labelled


# ----------------------------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("name", ["c.jsonl", "c.jsonl.gz"])
def test_jsonl_round_trip(tricky: MultilingualCorpus, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    tricky.to_jsonl(path)
    if name.endswith(".gz"):
        assert path.read_bytes()[:2] == b"\x1f\x8b"
    back = MultilingualCorpus.from_jsonl(path, tricky.classes)
    _assert_same_docs(back, tricky)
    assert back.extra["source"] == tricky.extra["source"]
    assert (back.Y != tricky.Y).nnz == 0
    assert read_corpus(path, tricky.classes).texts == TRICKY_TEXTS


@pytest.mark.parametrize("name", ["c.tsv", "c.tsv.gz"])
def test_tsv_round_trip(tricky: MultilingualCorpus, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    tricky.to_tsv(path)
    raw = gzip.decompress(path.read_bytes()) if name.endswith(".gz") else path.read_bytes()
    lines = raw.decode("utf-8").split("\n")
    assert lines[0].split("\t") == ["id", "lang", "labels", "source", "text"]
    assert len(lines) == len(tricky) + 2  # header + one physical line per document + final newline
    assert all(len(line.split("\t")) == 5 for line in lines[1:-1])
    back = MultilingualCorpus.from_tsv(path, tricky.classes)
    _assert_same_docs(back, tricky)
    assert back.extra["source"] == tricky.extra["source"]
    assert read_corpus(path, tricky.classes).texts == TRICKY_TEXTS


@pytest.mark.parametrize("fmt", ["jsonl", "tsv"])
def test_unlabelled_round_trip(tmp_path: Path, fmt: str) -> None:
    corpus = MultilingualCorpus(["1", "2"], ["en", "it"], ["a", "b"])
    assert not corpus.labelled and corpus.classes == ()
    path = tmp_path / f"u.{fmt}"
    getattr(corpus, f"to_{fmt}")(path)
    back = read_corpus(path)
    _assert_same_docs(back, corpus)
    assert back.labels == [(), ()]


def test_extra_fields_of_any_json_type_survive_jsonl(tmp_path: Path) -> None:
    path = _write(tmp_path / "x.jsonl", "\n".join(json.dumps(r) for r in [
        {"id": "1", "lang": "en", "text": "t", "labels": ["a"], "source": "s1", "meta": {"k": [1, 2]}},
        {"id": "2", "lang": "it", "text": "u", "labels": [], "source": "s2"},
    ]) + "\n")
    corpus = MultilingualCorpus.from_jsonl(path)
    assert corpus.extra["source"] == ["s1", "s2"]
    assert corpus.extra["meta"] == [{"k": [1, 2]}, None]
    out = tmp_path / "y.jsonl"
    corpus.to_jsonl(out)
    again = MultilingualCorpus.from_jsonl(out)
    assert again.extra["source"] == ["s1", "s2"] and again.extra["meta"][0] == {"k": [1, 2]}


def test_reading_a_file_adds_no_bookkeeping_field(tricky: MultilingualCorpus, tmp_path: Path) -> None:
    tricky.to_jsonl(tmp_path / "c.jsonl")
    back = MultilingualCorpus.from_jsonl(tmp_path / "c.jsonl")
    assert set(back.extra) == {"source"}
    assert set(back.to_records()[0]) == {"id", "lang", "source", "text", "labels"}


def test_tsv_extra_field_with_tab_and_backslash_round_trips(tmp_path: Path) -> None:
    corpus = MultilingualCorpus(["1"], ["en"], ["t"], [["a"]], extra={"source": ["pkg\twith tab \\ slash"]})
    corpus.to_tsv(tmp_path / "c.tsv")
    assert MultilingualCorpus.from_tsv(tmp_path / "c.tsv").extra["source"] == ["pkg\twith tab \\ slash"]


def test_tsv_label_with_separator_is_refused(tmp_path: Path) -> None:
    corpus = MultilingualCorpus(["1"], ["en"], ["t"], [["a,b"]])
    with pytest.raises(ValueError, match="a,b"):
        corpus.to_tsv(tmp_path / "c.tsv")


def test_demo_train_round_trips(demo_train: MultilingualCorpus, tmp_path: Path) -> None:
    sample = demo_train.subset(range(0, len(demo_train), 7))
    sample.to_jsonl(tmp_path / "d.jsonl.gz")
    sample.to_tsv(tmp_path / "d.tsv")
    for back in (read_corpus(tmp_path / "d.jsonl.gz", sample.classes), read_corpus(tmp_path / "d.tsv", sample.classes)):
        _assert_same_docs(back, sample)
        assert back.extra["source"] == sample.extra["source"]


# ----------------------------------------------------------------------------------------------- ids
def test_same_id_in_two_languages_is_allowed() -> None:
    corpus = MultilingualCorpus(["p", "p"], ["en", "it"], ["x", "y"], [["a"], ["a"]])
    assert len(corpus) == 2 and corpus.languages == ["en", "it"]


def test_duplicated_id_within_a_language_is_rejected() -> None:
    with pytest.raises(CorpusFormatError, match="'p'") as err:
        MultilingualCorpus(["p", "q", "p"], ["en", "en", "en"], ["x", "y", "z"])
    assert err.value.field == "id"


def test_duplicated_id_in_jsonl_names_both_lines(tmp_path: Path) -> None:
    recs = [{"id": "p", "lang": "en", "text": "x"}, {"id": "p", "lang": "it", "text": "y"},
            {"id": "q", "lang": "en", "text": "z"}, {"id": "p", "lang": "en", "text": "w"}]
    path = _write(tmp_path / "dup.jsonl", "".join(json.dumps(r) + "\n" for r in recs))
    with pytest.raises(CorpusFormatError) as err:
        MultilingualCorpus.from_jsonl(path)
    assert (err.value.line, err.value.field, err.value.path) == (4, "id", str(path))
    assert str(path) in str(err.value) and "line 4" in str(err.value) and "line 1" in str(err.value)


def test_duplicated_id_in_tsv_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "dup.tsv", "id\tlang\tlabels\ttext\np\ten\ta\tx\nq\ten\ta\ty\np\ten\ta\tz\n")
    with pytest.raises(CorpusFormatError) as err:
        MultilingualCorpus.from_tsv(path)
    assert err.value.line == 4 and err.value.field == "id"


def test_empty_id_or_language_rejected() -> None:
    with pytest.raises(CorpusFormatError) as err:
        MultilingualCorpus(["a", ""], ["en", "en"], ["x", "y"])
    assert err.value.field == "id"
    with pytest.raises(CorpusFormatError) as err:
        MultilingualCorpus(["a", "b"], ["en", ""], ["x", "y"])
    assert err.value.field == "lang"


# ----------------------------------------------------------------------------------------------- file errors
def _error(path: Path, reader=MultilingualCorpus.from_jsonl, **kw) -> CorpusFormatError:
    with pytest.raises(CorpusFormatError) as err:
        reader(path, **kw)
    assert str(path) in str(err.value)
    assert err.value.path == str(path)
    return err.value


GOOD = json.dumps({"id": "1", "lang": "en", "text": "ok", "labels": ["a"]})


def test_malformed_json_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.jsonl", GOOD + "\n" + '{"id": "2", "lang": "en", "text": "unterminated\n')
    err = _error(path)
    assert err.line == 2 and "line 2" in str(err) and "JSON" in str(err)


def test_json_line_that_is_not_an_object(tmp_path: Path) -> None:
    err = _error(_write(tmp_path / "bad.jsonl", GOOD + "\n\n" + '["id", "lang"]\n'))
    assert err.line == 3 and "object" in str(err)


@pytest.mark.parametrize("missing", ["id", "lang", "text"])
def test_missing_required_field(tmp_path: Path, missing: str) -> None:
    rec = {"id": "2", "lang": "it", "text": "t", "labels": []}
    del rec[missing]
    err = _error(_write(tmp_path / "bad.jsonl", GOOD + "\n" + json.dumps(rec) + "\n"))
    assert (err.line, err.field) == (2, missing)
    assert "line 2" in str(err) and f"field {missing!r}" in str(err)


@pytest.mark.parametrize(("field", "value"), [
    ("text", 42), ("text", ["a"]), ("labels", "a"), ("labels", [1, 2]), ("labels", {"a": 1}),
    ("id", ""), ("id", ["x"]), ("lang", "  "), ("lang", None),
])
def test_wrong_field_type(tmp_path: Path, field: str, value: object) -> None:
    rec = {"id": "2", "lang": "it", "text": "t", "labels": ["a"], field: value}
    err = _error(_write(tmp_path / "bad.jsonl", GOOD + "\n" + GOOD.replace('"1"', '"3"') + "\n"
                        + json.dumps(rec) + "\n"))
    assert (err.line, err.field) == (3, field)
    assert f"field {field!r}" in str(err)


@pytest.mark.parametrize("name", ["bad.jsonl", "bad.jsonl.gz"])
def test_non_utf8_bytes(tmp_path: Path, name: str) -> None:
    raw = (GOOD + "\n").encode() + b'{"id": "2", "lang": "en", "text": "caf\xe9"}\n'
    path = tmp_path / name
    path.write_bytes(gzip.compress(raw) if name.endswith(".gz") else raw)
    err = _error(path)
    assert err.line == 2 and "UTF-8" in str(err)


def test_non_utf8_bytes_in_tsv(tmp_path: Path) -> None:
    path = tmp_path / "bad.tsv"
    path.write_bytes(b"id\tlang\tlabels\ttext\n1\ten\ta\tok\n2\ten\ta\t\xff\xfe\n")
    err = _error(path, MultilingualCorpus.from_tsv)
    assert err.line == 3


def test_tsv_wrong_number_of_columns(tmp_path: Path) -> None:
    path = _write(tmp_path / "bad.tsv", "id\tlang\tlabels\ttext\n1\ten\ta\tok\n2\ten\tno text column\n")
    err = _error(path, MultilingualCorpus.from_tsv)
    assert err.line == 3 and "4" in str(err) and "3" in str(err)
    path = _write(tmp_path / "bad2.tsv", "id\tlang\tlabels\ttext\n1\ten\ta\tok\ttoo\tmany\n")
    assert _error(path, MultilingualCorpus.from_tsv).line == 2


def test_tsv_header_without_required_column(tmp_path: Path) -> None:
    """Only 'text' is needed to read a TSV file (documents to label); a training corpus still needs a language."""
    err = _error(_write(tmp_path / "bad.tsv", "id\tlabels\ttext\n1\ta\tok\n"), MultilingualCorpus.from_tsv)
    assert err.line == 2 and "'lang'" in str(err)
    err = _error(_write(tmp_path / "bad2.tsv", "id\tlang\tlabels\tbody\n1\ten\ta\tok\n"), MultilingualCorpus.from_tsv)
    assert err.line == 1 and "'text'" in str(err)


def test_tsv_empty_file(tmp_path: Path) -> None:
    _error(_write(tmp_path / "empty.tsv", ""), MultilingualCorpus.from_tsv)


def test_missing_file_is_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        MultilingualCorpus.from_jsonl(tmp_path / "nope.jsonl")


def test_blank_lines_are_skipped_and_line_numbers_stay_physical(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.jsonl", "\n" + GOOD + "\n\n   \n" + '{"id": "2", "lang": "en"}\n')
    err = _error(path)
    assert (err.line, err.field) == (5, "text")


# ----------------------------------------------------------------------------------------------- labels
def test_unknown_label_errors_or_is_ignored(tmp_path: Path) -> None:
    with pytest.raises(CorpusFormatError, match="zz") as err:
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], [["a"], ["a", "zz"]], classes=["a", "b"])
    assert err.value.field == "labels"
    corpus = MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], [["a"], ["a", "zz"]], classes=["a", "b"],
                                on_unknown_label="ignore")
    assert corpus.labels == [("a",), ("a",)]
    assert corpus.Y.toarray().tolist() == [[1, 0], [1, 0]]
    path = _write(tmp_path / "c.jsonl", GOOD + "\n" + GOOD.replace('"1"', '"2"').replace('["a"]', '["zz"]') + "\n")
    err2 = _error(path, classes=["a"])
    assert "zz" in str(err2)
    assert MultilingualCorpus.from_jsonl(path, ["a"], on_unknown_label="ignore").labels == [("a",), ()]


def test_mismatched_lengths() -> None:
    with pytest.raises(CorpusFormatError, match="mismatched lengths.*texts=1"):
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x"])
    with pytest.raises(CorpusFormatError, match="labels=3"):
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], [["a"], ["a"], ["a"]])
    with pytest.raises(CorpusFormatError, match="source"):
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], extra={"source": ["s"]})


def test_Y_columns_follow_class_order(tricky: MultilingualCorpus) -> None:
    assert tricky.classes == ("c", "b", "a")
    Y = tricky.Y.toarray()
    assert Y.shape == (6, 3) and Y.dtype == np.int8
    expected = [[0, 1, 0], [1, 0, 1], [0, 0, 0], [1, 0, 0], [0, 0, 1], [0, 1, 1]]
    assert Y.tolist() == expected
    default = MultilingualCorpus(tricky.ids, tricky.langs, tricky.texts, tricky.labels)
    assert default.classes == ("a", "b", "c")
    assert default.Y.toarray().tolist() == [row[::-1] for row in expected]


def test_repeated_labels_count_once_and_duplicate_classes_rejected() -> None:
    corpus = MultilingualCorpus(["1"], ["en"], ["x"], [["a", "a", "b"]])
    assert corpus.labels == [("a", "b")] and corpus.Y.sum() == 2
    with pytest.raises(CorpusFormatError, match="duplicates"):
        MultilingualCorpus(["1"], ["en"], ["x"], [["a"]], classes=["a", "b", "a"])


def test_with_classes_drops_and_reorders(tricky: MultilingualCorpus) -> None:
    narrowed = tricky.with_classes(["a", "z"])
    assert narrowed.classes == ("a", "z")
    assert narrowed.Y.toarray()[:, 0].tolist() == [0, 1, 0, 0, 1, 1]
    assert narrowed.Y.toarray()[:, 1].sum() == 0


# ----------------------------------------------------------------------------------------------- selection
def test_select_and_subset(tricky: MultilingualCorpus) -> None:
    en = tricky.select("en")
    assert en.ids == ["d0", "d2", "d5"] and set(en.langs) == {"en"}
    assert en.classes == tricky.classes and en.extra["source"] == ["src0", "src2", "src2"]
    two = tricky.select(["it", "da"])
    assert two.ids == ["d1", "d3", "d4"]
    sub = tricky.subset([4, 0])
    assert sub.ids == ["d4", "d0"] and sub.texts == [TRICKY_TEXTS[4], TRICKY_TEXTS[0]]
    assert sub.Y.toarray().tolist() == [[0, 0, 1], [0, 1, 0]]
    mask = np.array([True, False, False, False, False, True])
    assert tricky.subset(mask).ids == ["d0", "d5"]
    assert tricky.select("xx").ids == []
    doc = tricky[1]
    assert (doc.id, doc.lang, doc.labels, doc.extra) == ("d1", "it", ("a", "c"), {"source": "src1"})
    assert [d.id for d in tricky] == tricky.ids
    assert tricky.lang_counts() == {"en": 3, "it": 2, "da": 1}
    assert {k: v.tolist() for k, v in tricky.by_language().items()} == {"da": [3], "en": [0, 2, 5], "it": [1, 4]}


def test_concat(tricky: MultilingualCorpus) -> None:
    both = MultilingualCorpus.concat([tricky.select("en"), tricky.select("it")])
    assert both.ids == ["d0", "d2", "d5", "d1", "d4"] and both.extra["source"][3] == "src1"
    with pytest.raises(ValueError, match="class lists"):
        MultilingualCorpus.concat([tricky, tricky.with_classes(["a"])])


def test_split_is_seeded_and_stratified_by_language(demo_train: MultilingualCorpus) -> None:
    tr1, te1 = demo_train.split(0.25, random_state=3)
    tr2, te2 = demo_train.split(0.25, random_state=3)
    _, te3 = demo_train.split(0.25, random_state=4)
    assert te1.ids == te2.ids and te1.langs == te2.langs and tr1.ids == tr2.ids
    assert list(zip(te1.langs, te1.ids, strict=True)) != list(zip(te3.langs, te3.ids, strict=True))
    counts = demo_train.lang_counts()
    assert te1.lang_counts() == {lang: round(0.25 * n) for lang, n in counts.items()}
    assert tr1.lang_counts() == {lang: n - round(0.25 * n) for lang, n in counts.items()}
    keys_tr = set(zip(tr1.langs, tr1.ids, strict=True))
    keys_te = set(zip(te1.langs, te1.ids, strict=True))
    assert not keys_tr & keys_te
    assert keys_tr | keys_te == set(zip(demo_train.langs, demo_train.ids, strict=True))
    _, te_int = demo_train.split(10, random_state=0)
    assert te_int.lang_counts() == dict.fromkeys(counts, 10)


def test_grouped_split_keeps_groups_together() -> None:
    n = 60
    rng = np.random.RandomState(0)
    langs = ["en" if i % 2 else "it" for i in range(n)]
    groups = [f"g{rng.randint(12)}" for _ in range(n)]
    corpus = MultilingualCorpus([str(i) for i in range(n)], langs, ["t"] * n, [["a"]] * n,
                                extra={"source": groups})
    for seed in range(5):
        train, test = corpus.split(0.3, random_state=seed, groups="source")
        assert len(train) + len(test) == n and len(test) > 0 and len(train) > 0
        for lang in ("en", "it"):
            tr_groups = {g for g, lg in zip(train.extra["source"], train.langs, strict=True) if lg == lang}
            te_groups = {g for g, lg in zip(test.extra["source"], test.langs, strict=True) if lg == lang}
            assert not tr_groups & te_groups
    with pytest.raises(KeyError, match="nope"):
        corpus.split(0.3, groups="nope")


@pytest.mark.parametrize("bad", [0.0, 1.0, 1.5, -0.2])
def test_split_rejects_bad_fraction(tricky: MultilingualCorpus, bad: float) -> None:
    with pytest.raises(ValueError, match="test_size"):
        tricky.split(bad, random_state=0)


LANGS = ("de", "en", "it")


def _first(corpus: MultilingualCorpus, n: int) -> MultilingualCorpus:
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in LANGS])
    return corpus.subset(np.sort(idx))


@pytest.fixture(scope="module")
def demo() -> dict[str, MultilingualCorpus]:
    train, test = load_demo()
    return {"train": _first(train, 60), "test": _first(test, 25)}


@pytest.fixture(scope="module")
def folder(demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("honest")
    demo["train"].to_jsonl(path / "train.jsonl")
    demo["test"].to_jsonl(path / "test.jsonl")
    return path


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ empty labels
@pytest.mark.parametrize("label", ["", "  ", "\t"])
def test_empty_label_is_refused_with_file_line_and_field(folder: Path, label: str) -> None:
    recs = [{"id": "1", "lang": "en", "text": "a text editor", "labels": ["use::editing"]},
            {"id": "2", "lang": "en", "text": "a web browser", "labels": ["use::browsing", label]}]
    path = _write_jsonl(folder / "empty-label.jsonl", recs)
    with pytest.raises(CorpusFormatError, match="empty label") as err:
        read_corpus(path)
    assert err.value.line == 2 and err.value.field == "labels" and err.value.path == str(path)
    with pytest.raises(CorpusFormatError, match="empty label"):
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], [["a"], ["b", label]])
    with pytest.raises(ValueError, match="empty label"):
        NaiveClassifier(classifier=LinearSVMs(C=1.0)).fit(["x y", "y z"], [["a"], [label]], langs=["en", "en"])


def test_empty_label_in_tsv_is_refused(folder: Path) -> None:
    path = folder / "empty-label.tsv"
    path.write_text("id\tlang\tlabels\ttext\n1\ten\ta\tone\n2\ten\ta,,b\ttwo\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match="empty label") as err:
        read_corpus(path)
    assert err.value.line == 3 and err.value.field == "labels"
    path.write_text("id\tlang\tlabels\ttext\n1\ten\ta\tone\n2\ten\t\ttwo\n", encoding="utf-8")
    assert read_corpus(path).labels == [("a",), ()]  # an empty cell is a document with no label


# ------------------------------------------------------------------------------------------ language codes
def test_language_codes_are_case_normalised_with_one_warning(demo, caplog) -> None:
    train = demo["train"]
    upper = [lang.upper() if i % 2 else f" {lang} " for i, lang in enumerate(train.langs)]
    with caplog.at_level(logging.WARNING, logger="gfun.corpus.multilingual"):
        corpus = MultilingualCorpus(train.ids, upper, train.texts, train.labels, train.classes)
    assert corpus.languages == ["de", "en", "it"]
    msgs = [r.getMessage() for r in caplog.records if "normalised" in r.getMessage()]
    assert len(msgs) == 1 and "'EN' -> 'en'" in msgs[0] and "' de ' -> 'de'" in msgs[0]
    model = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(train.texts, train.labels, langs=upper)
    assert model.languages_ == ["de", "en", "it"]
    test = demo["test"]
    np.testing.assert_array_equal(model.predict(test.texts, langs=[g.upper() for g in test.langs]),
                                  model.predict(test))


def test_language_case_variants_in_a_file_are_one_language(folder: Path) -> None:
    path = _write_jsonl(folder / "case.jsonl", [
        {"id": "1", "lang": "EN", "text": "a text editor", "labels": ["a"]},
        {"id": "2", "lang": "en", "text": "a web browser", "labels": ["b"]},
        {"id": "1", "lang": "en", "text": "the same id again", "labels": ["b"]}])
    with pytest.raises(CorpusFormatError, match="duplicated id '1' in language 'en'") as err:
        read_corpus(path)
    assert err.value.line == 3
