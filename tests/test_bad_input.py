"""Messy input, case by case, through the API and the ``gfun`` command line.

Every case either works (with finite outputs) or fails with a message that says what is wrong and
where. Cases already covered elsewhere are listed in the table of the robustness note and only their
missing side (usually the command line) is tested here.
"""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier
from gfun.baselines.parts import LinearSVMs
from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.demo import load_demo
from gfun.errors import CorpusFormatError, UnseenLanguageError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.funnelling.meta import default_meta
from gfun.persistence.loading import read_manifest

LANGS = ("de", "en", "it")


def _first(corpus: MultilingualCorpus, n: int, langs: tuple[str, ...] = LANGS) -> MultilingualCorpus:
    """The first ``n`` documents of each of ``langs`` (no randomness)."""
    idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in langs])
    return corpus.subset(np.sort(idx))


def _add(corpus: MultilingualCorpus, docs: list[tuple[str, str, str, tuple[str, ...]]]) -> MultilingualCorpus:
    """``corpus`` plus documents given as (id, lang, text, labels)."""
    return MultilingualCorpus(corpus.ids + [d[0] for d in docs], corpus.langs + [d[1] for d in docs],
                              corpus.texts + [d[2] for d in docs], corpus.labels + [d[3] for d in docs],
                              corpus.classes)


@pytest.fixture(scope="module")
def demo() -> dict[str, MultilingualCorpus]:
    """60 training and 20 test documents in each of de, en, it; and the full sets."""
    train, test = load_demo()
    return {"train": _first(train, 60), "test": _first(test, 20), "full_train": train, "full_test": test}


@pytest.fixture(scope="module")
def model(demo) -> GeneralizedFunnelling:
    return GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)).fit(demo["train"])


@pytest.fixture(scope="module")
def folder(demo, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bad-input")
    demo["train"].to_jsonl(path / "train.jsonl")
    demo["test"].to_jsonl(path / "test.jsonl")
    demo["train"].save_classes(path / "classes.json")
    return path


@pytest.fixture(scope="module")
def cli_model(folder: Path) -> Path:
    model = folder / "model"
    assert main(["-q", "train", "--train", str(folder / "train.jsonl"), "--meta-C", "1", "--model", str(model)]) == 0
    return model


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str]:
    code = main(["-q", *map(str, argv)])
    return code, capsys.readouterr().err


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _predict_cli(capsys, model: Path, docs: Path) -> tuple[int, str, list[dict]]:
    out = docs.with_suffix(".pred.jsonl")
    code, err = _cli(capsys, "predict", "--model", model, "--input", docs, "--output", out)
    rows = [json.loads(line) for line in out.read_text().splitlines()] if code == 0 else []
    return code, err, rows


def _assert_finite_outputs(est, texts: list[str], langs: list[str]) -> None:
    pred = est.predict(texts, langs=langs)
    assert pred.shape == (len(texts), len(est.classes_)) and set(np.unique(pred)) <= {0, 1}
    scores = est.decision_function(texts, langs=langs)
    assert np.isfinite(scores).all()
    if isinstance(est, GeneralizedFunnelling):
        proba = est.predict_proba(texts, langs=langs)
        assert np.isfinite(proba).all() and ((proba >= 0) & (proba <= 1)).all()
        assert np.isfinite(est.transform(texts, langs=langs)).all()


BLANK = ["", " ", "\n\t  \r\n", "\u00a0\u2003"]  # empty, spaces, control white space, Unicode spaces


NO_TERMS = ["!!! ... ???", "12 345 6789", "the of and"]  # punctuation, numbers, stop words only


# ------------------------------------------------------------------------------------------------ empty documents
def test_empty_and_whitespace_documents_in_training(demo, folder: Path, capsys) -> None:
    """Empty, blank and term-less training documents are kept; they simply carry no evidence."""
    c0, c1 = demo["train"].classes[:2]
    extra = [(f"blank-{i}", lang, text, (c0,) if i % 2 else (c1,))
             for i, (lang, text) in enumerate(zip(["en", "de", "it", "en", "de", "it", "en"], BLANK + NO_TERMS,
                                                  strict=True))]
    data = _add(demo["train"], extra)
    for est in (GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)),
                NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)):
        est.fit(data)
        _assert_finite_outputs(est, demo["test"].texts, demo["test"].langs)
    data.to_jsonl(folder / "train-blank.jsonl")
    code, err = _cli(capsys, "train", "--train", folder / "train-blank.jsonl", "--meta-C", "1", "--model",
                     folder / "model-blank")
    assert code == 0, err


def test_language_whose_training_documents_are_all_empty_is_refused_naming_it(demo, folder: Path, capsys) -> None:
    c0 = demo["train"].classes[0]
    data = _add(demo["train"], [("f1", "fr", "", (c0,)), ("f2", "fr", "  \n", ()), ("f3", "fr", "123 !!", ())])
    for est in (GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)),
                NaiveClassifier(classifier=LinearSVMs(C=1.0))):
        with pytest.raises(ValueError, match="language 'fr'.*no terms"):
            est.fit(data)
    data.to_jsonl(folder / "train-empty-fr.jsonl")
    code, err = _cli(capsys, "train", "--train", folder / "train-empty-fr.jsonl", "--meta-C", "1", "--model",
                     folder / "never")
    assert code == 1 and "'fr'" in err and "no terms" in err and "Traceback" not in err
    assert not (folder / "never").exists()


def test_empty_and_whitespace_documents_at_prediction(demo, model: GeneralizedFunnelling, folder: Path,
                                                      cli_model: Path, capsys) -> None:
    texts = BLANK + NO_TERMS
    langs = [LANGS[i % 3] for i in range(len(texts))]
    _assert_finite_outputs(model, texts, langs)
    naive = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)
    _assert_finite_outputs(naive.fit(demo["train"]), texts, langs)
    docs = _write_jsonl(folder / "blank.jsonl", [{"id": f"b{i}", "lang": lang, "text": t}
                                                 for i, (t, lang) in enumerate(zip(texts, langs, strict=True))])
    code, err, rows = _predict_cli(capsys, cli_model, docs)
    assert code == 0, err
    assert [r["id"] for r in rows] == [f"b{i}" for i in range(len(texts))]
    assert all(np.isfinite(list(r["probabilities"].values())).all() for r in rows)


# ------------------------------------------------------------------------------------------------ out of vocabulary
def test_out_of_vocabulary_documents_give_finite_views(demo, model: GeneralizedFunnelling) -> None:
    """Every token unseen in training: a zero TF-IDF row, finite posteriors, finite meta input (never NaN)."""
    oov = ["qwzxv blorptang", "Zyxwq vvvkkk ppplmn", "ÆØÅ ŋŋŋ ꙮꙮ"]
    langs = ["en", "de", "it"]
    view = model.views_[0]
    for text, lang in zip(oov, langs, strict=True):
        vec = view.models_[lang].vectorizer
        assert vec.transform([text]).nnz == 0
    Zx = view.transform(oov, np.asarray(langs, dtype=object))
    assert np.isfinite(Zx).all() and ((Zx > 0) & (Zx < 1)).all()
    # an out-of-vocabulary document is represented exactly as an empty one of its language
    np.testing.assert_array_equal(Zx, view.transform(["", "", ""], np.asarray(langs, dtype=object)))
    meta_in = model.transform(oov, langs=langs)
    assert np.isfinite(meta_in).all()
    np.testing.assert_array_equal(meta_in, model.transform(["", "", ""], langs=langs))
    _assert_finite_outputs(model, oov, langs)


# ------------------------------------------------------------------------------------------------ languages
def test_unseen_language_with_the_naive_baseline_cli(folder: Path, capsys) -> None:
    """(gFun's API and CLI: tests/funnelling/test_generalized.py::test_unseen_language, tests/cli/test_main.py.)"""
    model = folder / "model-naive"
    code, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--method", "naive", "--meta-C", "1",
                     "--model", model)
    assert code == 0, err
    docs = _write_jsonl(folder / "fi.jsonl", [{"id": "x", "lang": "fi", "text": "tekstieditori ja kirjasto"}])
    code, err, _ = _predict_cli(capsys, model, docs)
    assert code == 1 and "'fi'" in err and "naive" in err.lower() and "Traceback" not in err


@pytest.mark.parametrize("lang", [None, "", "   ", float("nan")])
def test_missing_language(demo, model: GeneralizedFunnelling, lang: object) -> None:
    """No language: an error naming the document, never a language called 'None' or 'nan'."""
    texts = demo["test"].texts[:3]
    langs = ["en", lang, "de"]
    with pytest.raises(ValueError, match="text 1 has no language"):
        model.predict(texts, langs=langs)
    with pytest.raises(ValueError, match="text 1 has no language"):
        GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)).fit(texts, [["a"], ["b"], ["a"]], langs=langs)
    with pytest.raises(CorpusFormatError, match="no language") as err:
        MultilingualCorpus(["a", "b", "c"], langs, texts)
    assert err.value.field == "lang"


@pytest.mark.parametrize("record", [{"id": "2", "text": "libreria"}, {"id": "2", "lang": None, "text": "libreria"},
                                    {"id": "2", "lang": " ", "text": "libreria"}])
def test_missing_language_field_in_jsonl_cli(folder: Path, cli_model: Path, capsys, record: dict) -> None:
    good = {"id": "1", "lang": "it", "text": "editor di testo", "labels": []}
    path = _write_jsonl(folder / "nolang.jsonl", [good, record])
    code, err, _ = _predict_cli(capsys, cli_model, path)
    assert code == 1 and "nolang.jsonl" in err and "line 2" in err and "'lang'" in err
    code, err = _cli(capsys, "train", "--train", path, "--model", folder / "never")
    assert code == 1 and "line 2" in err and "'lang'" in err


# ------------------------------------------------------------------------------------------------ labels
def test_labels_outside_the_class_list_cli(demo, folder: Path, capsys) -> None:
    """An error by default (naming the label and the current option, not the earlier --ignore-unknown-labels);
    --unknown-labels ignore drops them.

    (The API side: tests/corpus/test_multilingual.py::test_unknown_label_errors_or_is_ignored.)
    """
    recs = demo["train"].to_records()
    recs[5]["labels"] = [*recs[5]["labels"], "made::up"]
    path = _write_jsonl(folder / "unknown-label.jsonl", recs)
    args = ["train", "--train", path, "--classes", folder / "classes.json", "--meta-C", "1", "--model"]
    code, err = _cli(capsys, *args, folder / "never")
    assert code == 1 and "made::up" in err and "--unknown-labels ignore" in err and "line 6" not in err
    assert "--ignore-unknown-labels" not in err
    assert recs[5]["id"] in err
    code, err = _cli(capsys, *args, folder / "model-ignore", "--unknown-labels", "ignore")
    assert code == 0, err
    manifest = read_manifest(folder / "model-ignore")
    assert manifest["classes"] == list(demo["train"].classes)


def test_labels_given_as_a_string_instead_of_a_list() -> None:
    """A string per document would otherwise be split into one-character labels."""
    with pytest.raises(CorpusFormatError, match="list of label names"):
        MultilingualCorpus(["1", "2"], ["en", "en"], ["x", "y"], ["sports", "politics"])


def test_labels_that_name_no_class_at_all(demo, folder: Path, capsys) -> None:
    train = demo["train"]
    for est in (GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)),
                NaiveClassifier(classifier=LinearSVMs(C=1.0))):
        with pytest.raises(ValueError, match="no class"):
            est.fit(train.texts, [[] for _ in train.texts], langs=train.langs)
    path = _write_jsonl(folder / "no-labels.jsonl", [{**r, "labels": []} for r in train.to_records()])
    code, err = _cli(capsys, "train", "--train", path, "--meta-C", "1", "--model", folder / "never")
    assert code == 1 and "no class" in err


def test_class_without_positives_anywhere_or_in_one_language(demo, folder: Path, capsys) -> None:
    """Trained all the same (with a warning); the class that has no positive is never predicted.

    (gFun's API: tests/funnelling/test_generalized.py::test_missing_classes_and_a_single_document_language.)
    """
    train, test = demo["train"], demo["test"]
    gone, partial = train.classes[0], train.classes[1]
    labels = [tuple(c for c in ls if c != gone and not (c == partial and lang == "it"))
              for ls, lang in zip(train.labels, train.langs, strict=True)]
    data = MultilingualCorpus(train.ids, train.langs, train.texts, labels, train.classes)
    naive = NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0).fit(data)
    assert not naive.predict(test)[:, 0].any()
    _assert_finite_outputs(naive, test.texts, test.langs)
    data.to_jsonl(folder / "no-positive.jsonl")
    code, err = _cli(capsys, "train", "--train", folder / "no-positive.jsonl", "--classes", folder / "classes.json",
                     "--meta-C", "1", "--model", folder / "model-no-positive")
    assert code == 0 and "no positive training document" in err and gone in err
    code, err, rows = _predict_cli(capsys, folder / "model-no-positive", folder / "test.jsonl")
    assert code == 0 and len(rows) == len(test)
    assert not any(gone in r["labels"] for r in rows) and all(r["probabilities"][gone] < 0.5 for r in rows)


def test_language_with_a_single_training_document_cli(demo, folder: Path, capsys) -> None:
    """(API: tests/funnelling/test_generalized.py and tests/baselines/test_naive.py, single-document language tests.)"""
    lone = demo["full_train"].select("fr").subset([0])
    MultilingualCorpus.concat([demo["train"], lone]).to_jsonl(folder / "lone-fr.jsonl")
    fr_test = demo["full_test"].select("fr").subset(range(5))
    fr_test.to_jsonl(folder / "fr-test.jsonl")
    for method in ("gfun", "naive"):
        model = folder / f"model-lone-{method}"
        code, err = _cli(capsys, "train", "--train", folder / "lone-fr.jsonl", "--method", method, "--meta-C", "1",
                         "--model", model)
        assert code == 0, err
        code, err, rows = _predict_cli(capsys, model, folder / "fr-test.jsonl")
        assert code == 0 and [r["lang"] for r in rows] == ["fr"] * 5


def test_training_on_one_language_only(demo, folder: Path, capsys) -> None:
    en_train, en_test = demo["train"].select("en"), demo["test"].select("en")
    for est in (GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)),
                NaiveClassifier(classifier=LinearSVMs(C=1.0), random_state=0)):
        est.fit(en_train)
        assert est.languages_ == ["en"]
        _assert_finite_outputs(est, en_test.texts, en_test.langs)
        with pytest.raises(UnseenLanguageError, match="'de'"):
            est.predict(demo["test"].select("de"))
    en_train.to_jsonl(folder / "en-only.jsonl")
    code, err = _cli(capsys, "train", "--train", folder / "en-only.jsonl", "--meta-C", "1", "--model",
                     folder / "model-en")
    assert code == 0, err
    assert read_manifest(folder / "model-en")["languages"] == ["en"]


# ------------------------------------------------------------------------------------------------ files
def test_duplicated_ids_cli(demo, folder: Path, cli_model: Path, capsys) -> None:
    """Refused with both line numbers, in training and prediction files (JSONL and TSV).

    (API: tests/corpus/test_multilingual.py duplicated-id tests; the same id in two languages is allowed.)
    """
    recs = demo["train"].to_records()[:6]
    recs[4]["id"] = recs[1]["id"]
    recs[4]["lang"] = recs[1]["lang"]
    jsonl = _write_jsonl(folder / "dup.jsonl", recs)
    code, err = _cli(capsys, "train", "--train", jsonl, "--model", folder / "never")
    assert code == 1 and "dup.jsonl" in err and "line 5" in err and "line 2" in err and recs[1]["id"] in err
    MultilingualCorpus(["a", "b"], ["en", "en"], ["x", "y"], [["l"], ["l"]]).to_tsv(folder / "dup.tsv")
    with open(folder / "dup.tsv", "a", encoding="utf-8") as fh:
        fh.write("a\ten\tl\tagain\n")
    code, err, _ = _predict_cli(capsys, cli_model, folder / "dup.tsv")
    assert code == 1 and "dup.tsv" in err and "line 4" in err and "'a'" in err


GOOD_LINE = json.dumps({"id": "1", "lang": "en", "text": "text editor", "labels": ["devel::editor"]})


BAD_FILES = {
    "non-utf8.jsonl": (GOOD_LINE.encode() + b"\n" + b'{"id": "2", "lang": "en", "text": "caf\xe9"}\n', 2, "UTF-8"),
    "non-utf8.jsonl.gz": (gzip.compress(GOOD_LINE.encode() + b"\n\n" + b'{"id": "2", "text": "\xff"}\n'), 3, "UTF-8"),
    "non-utf8.tsv": (b"id\tlang\tlabels\ttext\n1\ten\ta\tok\n2\ten\ta\tna\xefve\n", 3, "UTF-8"),
    "truncated.jsonl": ((GOOD_LINE + "\n" + GOOD_LINE[:25] + "\n").encode(), 2, "invalid JSON"),
    "not-an-object.jsonl": ((GOOD_LINE + '\n["1", "en", "text"]\n').encode(), 2, "JSON object"),
    "lone-surrogate.jsonl": ((GOOD_LINE + '\n{"id": "2", "lang": "en", "text": "x \\udc80 y"}\n').encode(), 2,
                             "surrogate"),
    "wrong-type.jsonl": ((GOOD_LINE + '\n{"id": "2", "lang": "en", "text": ["a", "b"]}\n').encode(), 2, "'text'"),
    "columns.tsv": (b"id\tlang\tlabels\ttext\n1\ten\ta\tok\n2\ten\tok without labels\n", 3, "tab-separated"),
}


@pytest.mark.parametrize("name", sorted(BAD_FILES))
def test_malformed_files_are_reported_with_file_and_line_cli(folder: Path, cli_model: Path, capsys,
                                                             name: str) -> None:
    """Non-UTF-8 bytes and malformed JSONL/TSV lines, at training and prediction time.

    (API: tests/corpus/test_multilingual.py file-error tests.)
    """
    content, line, what = BAD_FILES[name]
    path = folder / name
    path.write_bytes(content)
    for code, err in (_cli(capsys, "train", "--train", path, "--model", folder / "never"),
                      _predict_cli(capsys, cli_model, path)[:2]):
        assert code == 1 and name in err and f"line {line}" in err and what in err and "Traceback" not in err
    assert not (folder / "never").exists()


def test_unreadable_inputs_are_errors_not_tracebacks_cli(folder: Path, cli_model: Path, capsys) -> None:
    (folder / "a-directory").mkdir(exist_ok=True)
    code, err = _cli(capsys, "train", "--train", folder / "a-directory", "--model", folder / "never")
    assert code == 1 and "a-directory" in err
    (folder / "classes-latin1.json").write_bytes(b'["caf\xe9"]')
    code, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--classes", folder / "classes-latin1.json",
                     "--model", folder / "never")
    assert code == 1 and "classes-latin1.json" in err and "UTF-8" in err


# ------------------------------------------------------------------------------------------------ size
def test_one_megabyte_document(demo, model: GeneralizedFunnelling, folder: Path, cli_model: Path, capsys) -> None:
    """1 MB of text trains and predicts in bounded time (a few seconds here), with finite outputs."""
    train = demo["train"]
    prose = " ".join(train.select("en").texts)
    big = (prose * (1_000_000 // len(prose) + 1))[:1_000_000]
    one_token = "x" * 1_000_000
    t0 = time.perf_counter()
    GeneralizedFunnelling(random_state=0, meta=default_meta().set_params(C=1.0)).fit(
        _add(train, [("big", "en", big, (train.classes[0],))]))
    _assert_finite_outputs(model, [big, one_token], ["en", "de"])
    docs = _write_jsonl(folder / "big.jsonl", [{"id": "big", "lang": "en", "text": big}])
    code, err, rows = _predict_cli(capsys, cli_model, docs)
    elapsed = time.perf_counter() - t0
    assert code == 0 and len(rows) == 1, err
    assert elapsed < 60, f"1 MB documents took {elapsed:.1f} s"


# ------------------------------------------------------------------------------------------------ lengths
def test_mismatched_lengths_of_texts_languages_and_labels(demo, model: GeneralizedFunnelling) -> None:
    """(The corpus container: tests/corpus/test_multilingual.py::test_mismatched_lengths.)"""
    train = demo["train"]
    texts, langs, Y = train.texts[:6], train.langs[:6], train.Y.toarray()[:6]
    for est in (GeneralizedFunnelling(meta=default_meta().set_params(C=1.0)),
                NaiveClassifier(classifier=LinearSVMs(C=1.0))):
        with pytest.raises(ValueError, match="6 texts but 5 languages"):
            est.fit(texts, Y, langs=langs[:5])
        with pytest.raises(ValueError, match="6 documents but 5 rows"):
            est.fit(texts, Y[:5], langs=langs)
        with pytest.raises(ValueError, match="6 documents but 7 rows"):
            est.fit(texts, [["a"]] * 7, langs=langs)
        with pytest.raises(TypeError, match="single string"):
            est.fit(texts[:2], Y[:2], langs="en")
    with pytest.raises(ValueError, match="3 texts but 2 languages"):
        model.predict(texts[:3], langs=langs[:2])
    with pytest.raises(CorpusFormatError, match="mismatched lengths.*labels=2"):
        MultilingualCorpus(["1", "2", "3"], ["en"] * 3, ["a", "b", "c"], [["x"], ["y"]])


# ------------------------------------------------------------ bad arguments: one line, no traceback
@pytest.mark.parametrize(("param", "says"), [
    ('x.stopwords="yes"', "x.stopwords takes true or false (or a JSON list of words), got the string 'yes'"),
    ("x.min_df=2.5", "x.min_df takes an integer, got the number 2.5"),
    ("x.C=true", "x.C takes a number, got true"),
    ("x.stopwrds=false", "'x' (PosteriorsView) has no parameter 'stopwrds'; its parameters: C, class_weight"),
])
def test_a_view_param_of_the_wrong_type_is_refused_before_fitting_cli(folder: Path, capsys, param: str,
                                                                       says: str) -> None:
    """``--view-param 'x.stopwords="yes"'`` gave a TypeError traceback from inside the fit."""
    code, err = _cli(capsys, "train", "--train", folder / "train.jsonl", "--views", "x", "--view-param", param,
                     "--model", folder / "never")
    assert code == 1 and says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (folder / "never").exists()


def test_a_jsonl_line_nested_too_deeply_is_a_line_error_cli(folder: Path, cli_model: Path, capsys) -> None:
    """A JSONL line nested 200,000 deep gave a RecursionError traceback."""
    deep = folder / "deep.jsonl"
    deep.write_text('{"id": "a", "lang": "en", "text": "x", "extra": ' + "[" * 200_000 + "]" * 200_000 + "}\n",
                    encoding="utf-8")
    code, err, _ = _predict_cli(capsys, cli_model, deep)
    assert code == 1 and "deep.jsonl, line 1: invalid JSON (arrays or objects nested too deeply)" in err, err
    assert "Traceback" not in err


@pytest.mark.parametrize("suffix", [".tsv", ".jsonl"])
def test_a_byte_order_mark_is_ignored_cli(demo, folder: Path, cli_model: Path, capsys, suffix: str) -> None:
    """A TSV saved with a byte-order mark failed with "lacks column(s) ['id']; found ['\\ufeffid', ...]"."""
    path = folder / f"bom{suffix}"
    getattr(demo["test"].subset(range(5)), f"to_{suffix[1:]}")(path)
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, err, rows = _predict_cli(capsys, cli_model, path)
    assert code == 0, err
    assert [r["id"] for r in rows] == demo["test"].ids[:5]


def test_a_vec_file_with_nan_names_file_and_line(tmp_path: Path) -> None:
    """A .vec file with NaN gave "Eigenvalues did not converge" from deep inside the fit."""
    from gfun.views.embeddings import WordEmbeddingView
    from tests.synthetic_vectors import make_corpus, write_vec_files

    folder = write_vec_files(tmp_path / "vec", ["en", "it"])
    lines = (folder / "wiki.multi.en.vec").read_text(encoding="utf-8").splitlines()
    word, *values = lines[3].split(" ")
    values[1] = "nan"
    lines[3] = " ".join([word, *values])
    (folder / "wiki.multi.en.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts, langs, Y = make_corpus(["en", "it"], 30, seed=0)
    with pytest.raises(ValueError, match=rf"wiki.multi.en.vec, line 4: the vector of '{word}' has a non-finite "
                                         r"value \('nan' in column 3\)"):
        WordEmbeddingView(source={"spec": f"vec:{folder}", "cache": False}).fit_transform(texts, langs, Y)


def test_a_read_only_output_directory_is_refused_before_the_model_is_loaded(folder: Path, cli_model: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Predictions into a read-only directory failed only after predicting, naming the temporary file; the
    directory is tested first (as an unprivileged user: root may write anywhere)."""
    import os
    import shutil
    import tempfile

    import gfun.persistence.loading

    loads = []
    real = gfun.persistence.loading.load_model
    monkeypatch.setattr(gfun.persistence.loading, "load_model", lambda path: loads.append(path) or real(path))
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    ro = base / "ro"
    ro.mkdir()
    base.chmod(0o755)
    shutil.copy(folder / "test.jsonl", base / "test.jsonl")
    (base / "test.jsonl").chmod(0o644)
    ro.chmod(0o555)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 99
        try:
            os.close(read)
            if os.geteuid() == 0:
                os.setuid(65534)
            import io
            import sys

            sys.stderr = io.StringIO()
            code = main(["-q", "predict", "--model", str(cli_model), "--input", str(base / "test.jsonl"),
                         "--output", str(ro / "out.jsonl")])
            os.write(write, f"{len(loads)}\n{sys.stderr.getvalue()}".encode())
        finally:
            os._exit(code)
    os.close(write)
    try:
        _, status = os.waitpid(pid, 0)
        with os.fdopen(read) as fh:
            n_loads, err = fh.read().split("\n", 1)
    finally:
        ro.chmod(0o755)
        shutil.rmtree(base)
    assert os.waitstatus_to_exitcode(status) == 1, err
    assert n_loads == "0", "the model was loaded before the output directory was checked"
    assert f"--output cannot write {ro / 'out.jsonl'}: {ro}: the directory is not writable" in err, err
    assert ".tmp" not in err and "nothing was predicted" in err
    assert len(err.strip().splitlines()) == 1
