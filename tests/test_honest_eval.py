"""Evaluations that never report a skewed score silently, and text in scripts written without spaces.

Labels the model does not know, documents without a ``labels`` field, empty labels, case variants of a
language code, non-finite or non-positive C values, labels that contradict the probabilities written beside
them, and Chinese/Japanese/Thai text that used to become one token per clause. Each test builds its files.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest

from gfun.baselines.naive import NaiveClassifier
from gfun.cli.main import main
from gfun.corpus.multilingual import MultilingualCorpus, read_corpus
from gfun.datasets.demo import load_demo
from gfun.errors import CorpusFormatError
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.metrics.evaluation import evaluate, evaluate_model
from gfun.persistence.loading import load_model
from gfun.svm.calibration import fit_platt, platt_posteriors
from gfun.svm.kernel import RBFSVMOvR
from gfun.text.analysis import Analyzer
from gfun.text.tfidf import TfidfVectorizer
from gfun.views.embeddings import WordEmbeddingView
from gfun.views.posteriors import PosteriorsView

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


@pytest.fixture(scope="module")
def model_dir(folder: Path) -> Path:
    model = folder / "model"
    assert main(["-q", "train", "--train", str(folder / "train.jsonl"), "--meta-C", "1", "--model", str(model)]) == 0
    return model


def _cli(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main(["-q", *map(str, argv)])
    out = capsys.readouterr()
    return code, out.out, out.err


def _write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------ unknown test labels
@pytest.fixture(scope="module")
def unknown_test(demo, folder: Path) -> Path:
    """The test file with two labels the model has never seen, on 10 documents (7 en, 3 de)."""
    recs = demo["test"].to_records()
    en = [i for i, r in enumerate(recs) if r["lang"] == "en"][:7]
    de = [i for i, r in enumerate(recs) if r["lang"] == "de"][:3]
    for i in en + de:
        recs[i]["labels"] = [*recs[i]["labels"], "made::up"]
    recs[en[0]]["labels"].append("also::new")
    return _write_jsonl(folder / "test-unknown.jsonl", recs)


def test_evaluate_counts_unknown_labels_as_missed_by_default(model_dir: Path, unknown_test: Path, capsys) -> None:
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--json")
    assert code == 0, err
    table = json.loads(out)
    known = set(load_model(model_dir).classes_)
    expected = {lang: 0 for lang in LANGS}
    for rec in map(json.loads, unknown_test.read_text().splitlines()):
        expected[rec["lang"]] += sum(lab not in known for lab in rec["labels"])
    assert expected["en"] >= 8 and expected["de"] >= 3
    assert {lang: table[lang]["unknown_labels"] for lang in LANGS} == expected
    assert table["average"]["unknown_labels"] == sum(expected.values())
    assert f"WARNING {sum(expected.values())} occurrence(s)" in err and "'made::up'" in err and "missed" in err

    code, out_ignore, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--json",
                                 "--unknown-labels", "ignore")
    assert code == 0, err
    ignored = json.loads(out_ignore)
    assert ignored["average"]["unknown_labels"] == sum(expected.values())
    # counted, the missed positives lower the scores of the languages they occur in; dropped, they do not
    assert table["en"]["F1_micro"] < ignored["en"]["F1_micro"] and table["de"]["F1_micro"] < ignored["de"]["F1_micro"]
    assert table["en"]["F1_macro"] < ignored["en"]["F1_macro"]  # both new labels occur in en: F1 0 for each


def test_evaluate_unknown_labels_error_option_and_table(model_dir: Path, unknown_test: Path, folder: Path,
                                                       capsys) -> None:
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test, "--unknown-labels", "error")
    assert code == 1 and "'made::up'" in err and "--unknown-labels count" in err and "Traceback" not in err
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", unknown_test)
    assert code == 0 and "unknown_labels" in out.splitlines()[0]
    code, out, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", folder / "train.jsonl", "--json")
    assert code == 0 and json.loads(out)["average"]["unknown_labels"] == 0 and "WARNING" not in err


def test_evaluate_model_api_matches_evaluate_without_unknown_labels(demo) -> None:
    model = NaiveClassifier(C=1.0, random_state=0).fit(demo["train"])
    test = demo["test"]
    df = evaluate_model(model, test)
    ref = evaluate(test.Y, model.predict(test), test.langs)
    np.testing.assert_allclose(df[ref.columns].to_numpy(dtype=float), ref.to_numpy(dtype=float))
    assert (df["unknown_labels"] == 0).all()
    relabelled = MultilingualCorpus(test.ids, test.langs, test.texts,
                                    [(*labs, "zz-new") for labs in test.labels])
    counted = evaluate_model(model, relabelled)
    assert counted.loc["average", "unknown_labels"] == len(test)
    # a class present in every document that is never predicted: F1 0 for it, so macro-F1 drops
    assert (counted["F1_macro"] < df["F1_macro"]).all()
    with pytest.raises(ValueError, match="'zz-new'"):
        evaluate_model(model, relabelled, unknown_labels="error")
    np.testing.assert_allclose(evaluate_model(model, relabelled, unknown_labels="ignore")["F1_macro"],
                               df["F1_macro"])


# ------------------------------------------------------------------------------------------ missing labels fields
def test_missing_labels_field_warns_in_training_and_evaluation(demo, folder: Path, model_dir: Path, capsys,
                                                               caplog) -> None:
    """(The command line replaces the logging handlers while it runs: its warnings are read from stderr.)"""
    recs = demo["train"].to_records()
    for i in (3, 7, 11):
        del recs[i]["labels"]
    recs[12]["labels"] = None
    path = _write_jsonl(folder / "train-missing.jsonl", recs)
    code, _, err = _cli(capsys, "train", "--train", path, "--meta-C", "1", "--model", folder / "m-missing")
    assert code == 0, err
    msgs = [line for line in err.splitlines() if "'labels' field" in line]
    assert len(msgs) == 1 and "4 of 180" in msgs[0] and "line 4" in msgs[0] and repr(recs[3]["id"]) in msgs[0]
    assert "--missing-labels negative" in msgs[0]
    code, _, err = _cli(capsys, "train", "--train", path, "--meta-C", "1", "--model", folder / "never",
                        "--missing-labels", "error")
    assert code == 1 and "line 4" in err and "'labels'" in err and not (folder / "never").exists()
    with caplog.at_level(logging.WARNING):
        corpus = read_corpus(path, on_missing_labels="negative")
    assert not [r for r in caplog.records if "'labels' field" in r.getMessage()]
    assert corpus.labels[3] == () and corpus.Y[3].nnz == 0

    test = demo["test"].to_records()
    del test[0]["labels"]
    tpath = _write_jsonl(folder / "test-missing.jsonl", test)
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", tpath)
    assert code == 0 and "1 of 75 document(s) have no 'labels' field" in err
    code, _, err = _cli(capsys, "evaluate", "--model", model_dir, "--test", tpath, "--missing-labels", "error")
    assert code == 1 and "test-missing.jsonl" in err and "line 1" in err


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
        NaiveClassifier(C=1.0).fit(["x y", "y z"], [["a"], [label]], langs=["en", "en"])


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
    model = NaiveClassifier(C=1.0, random_state=0).fit(train.texts, train.labels, langs=upper)
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


# ------------------------------------------------------------------------------------------ C values
@pytest.mark.parametrize(("option", "value"), [("--meta-C", "nan"), ("--meta-C", "inf"), ("--meta-C", "0"),
                                               ("--first-tier-C", "nan"), ("--first-tier-C", "-inf"),
                                               ("--first-tier-C", "0"), ("--first-tier-C", "cv")])
def test_non_finite_or_non_positive_C_is_refused_at_the_argument(folder: Path, capsys, option: str,
                                                                value: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["-q", "train", "--train", str(folder / "train.jsonl"), "--model", str(folder / "never"),
              f"{option}={value}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and f"argument {option}: must be a positive finite number" in err
    assert repr(value) in err and "b'C" not in err and not (folder / "never").exists()


@pytest.mark.parametrize("value", [math.nan, math.inf, 0.0, -1.0])
def test_non_finite_or_non_positive_C_is_refused_by_the_estimators(demo, value: float) -> None:
    train = demo["train"]
    cases = [(GeneralizedFunnelling(meta_C=value), "meta_C"), (GeneralizedFunnelling(first_tier_C=value, meta_C=1.0),
                                                                "first_tier_C"),
             (NaiveClassifier(C=value), "C must be")]
    for est, name in cases:
        with pytest.raises(ValueError, match=name):
            est.fit(train)
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        PosteriorsView(C=value).fit_transform(train.texts, np.asarray(train.langs, dtype=object), train.Y.toarray())
    with pytest.raises(ValueError, match="C must be a positive finite number"):
        RBFSVMOvR(C=value).fit(np.random.RandomState(0).rand(20, 3), np.eye(20, 2, dtype=int))


# ------------------------------------------------------------------------------------------ labels vs probabilities
def test_platt_through_the_origin_agrees_with_the_sign_of_the_score() -> None:
    rng = np.random.RandomState(0)
    y = rng.rand(400, 3) < [0.1, 0.5, 0.9]
    scores = np.where(y, 1.0, -1.0) * rng.rand(400, 3) * 2 + rng.randn(400, 3) + [0.7, -0.4, 0.3]
    A, B = fit_platt(scores, y, fit_intercept=False)
    assert (B == 0).all() and (A < 0).all()
    P = platt_posteriors(scores, A, B)
    np.testing.assert_array_equal(P > 0.5, scores > 0)
    A_free, B_free = fit_platt(scores, y)
    assert ((platt_posteriors(scores, A_free, B_free) > 0.5) != (scores > 0)).any()  # free sigmoids disagree
    anti = fit_platt(-scores, y, fit_intercept=False)[0]  # scores that point the wrong way: still decreasing
    assert (anti < 0).all()


def test_written_labels_are_exactly_the_probabilities_above_one_half(demo, model_dir: Path, folder: Path,
                                                                    capsys) -> None:
    out = folder / "pred.jsonl"
    code, _, err = _cli(capsys, "predict", "--model", model_dir, "--input", folder / "test.jsonl", "--output", out)
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(len(r["labels"]) for r in rows) > 0
    for r in rows:
        assert sorted(r["labels"]) == sorted(c for c, p in r["probabilities"].items() if p > 0.5)
    model = GeneralizedFunnelling(meta_C=1.0, random_state=0).fit(demo["train"])
    np.testing.assert_array_equal(model.predict_proba(demo["test"]) > 0.5, model.predict(demo["test"]) == 1)


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


def test_old_states_keep_whole_runs() -> None:
    meta, arrays = TfidfVectorizer("zh").fit(["土耳其", "黑海"]).get_state()
    del meta["params"]["segment"]  # a state saved before segmentation existed
    assert TfidfVectorizer.from_state(meta, arrays).analyzer_("土耳其") == ["土耳其"]


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
    model = NaiveClassifier(C=1.0, random_state=0).fit(data.train)
    scores = evaluate(data.test.Y, model.predict(data.test), data.test.langs)["F1_macro"]
    assert scores["zh"] > 0.4 and scores["th"] > 0.4
