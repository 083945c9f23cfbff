"""Labels that differ only by case or surrounding whitespace are one class (normalised with a warning), as language
codes are one language: on the demo data with mutated labels, 30 tags stay 30 classes."""

from __future__ import annotations

import json
import logging
import random

import numpy as np
import pytest

from gfun.corpus.inputs import as_label_matrix
from gfun.corpus.multilingual import MultilingualCorpus, normalize_labels, read_corpus
from gfun.datasets.demo import load_demo
from gfun.metrics.evaluation import evaluate_model


def _mutate(label: str, rnd: random.Random) -> str:
    return rnd.choice([label.upper(), label.title(), label + " ", " " + label + "\t", label.capitalize() + "  "])


@pytest.fixture(scope="module")
def demo() -> tuple[MultilingualCorpus, MultilingualCorpus]:
    return load_demo()


def _mutated_records(corpus: MultilingualCorpus, share: float = 0.3, seed: int = 0) -> list[dict]:
    """The corpus's records with about ``share`` of the label occurrences respelled (case and/or whitespace)."""
    rnd = random.Random(seed)
    records = corpus.to_records()
    for rec in records:
        rec["labels"] = [_mutate(lab, rnd) if rnd.random() < share else lab for lab in rec["labels"]]
    return records


def test_mutated_demo_labels_are_the_demo_classes(demo, caplog) -> None:
    train, _ = demo
    records = _mutated_records(train)
    spellings = {lab for rec in records for lab in rec["labels"]}
    assert len(spellings) > 2 * len(train.classes)  # the split the normalisation prevents
    with caplog.at_level(logging.WARNING, logger="gfun.corpus.multilingual"):
        corpus = MultilingualCorpus.from_records(records)
    assert sorted(corpus.classes) == sorted(train.classes) and len(corpus.classes) == 30
    assert corpus.labels == [tuple(labs) for labs in train.labels]
    warning = next(r.getMessage() for r in caplog.records if "label spelling" in r.getMessage())
    assert "merged into the most frequent spelling" in warning and "more)" in warning  # names them, 10 at most
    first = sorted(s for s in spellings if s not in train.classes)[0]
    assert repr(first) in warning


@pytest.mark.parametrize("suffix", [".jsonl", ".tsv"])
def test_files_with_respelled_labels_read_as_one_class(demo, tmp_path, suffix, caplog) -> None:
    train, _ = demo
    small = train.subset(range(0, len(train), 4))
    records = _mutated_records(small, share=0.2, seed=1)  # written by hand: to_jsonl would write normalised ones
    path = tmp_path / f"train{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        rows = ["id\tlang\tlabels\ttext"] + [f"{r['id']}\t{r['lang']}\t{','.join(r['labels']).replace(chr(9), ' ')}\t"
                                             + r["text"].replace("\t", " ").replace("\n", " ") for r in records]
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="gfun.corpus.multilingual"):
        read = read_corpus(path)
    assert read.classes == tuple(sorted({lab for labs in small.labels for lab in labs}))  # the tags, sorted
    assert read.labels == [tuple(labs) for labs in small.labels]
    assert any("label spelling" in r.getMessage() for r in caplog.records)


def test_a_given_class_list_keeps_its_spelling(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="gfun.corpus.multilingual"):
        corpus = MultilingualCorpus(["a", "b", "c"], ["en"] * 3, ["x"] * 3, [["WEB"], ["Web "], ["web", "Net"]],
                                    classes=["web", "net"])
    assert corpus.labels == [("web",), ("web",), ("web", "net")]  # the variants outnumber the class's spelling
    assert "'WEB' -> 'web'" in caplog.text and "the class list's" in caplog.text
    # two classes that differ by case only, given on purpose, stay two; a third spelling matches neither
    both = MultilingualCorpus(["a", "b"], ["en"] * 2, ["x"] * 2, [["US"], ["us"]], classes=["US", "us"])
    assert both.labels == [("US",), ("us",)]
    with pytest.raises(ValueError, match="'Us'"):
        MultilingualCorpus(["a"], ["en"], ["x"], [["Us"]], classes=["US", "us"])


def test_ties_and_repeats() -> None:
    assert normalize_labels([["b", "B"], ["B"], ["b"]]) == [("B",), ("B",), ("B",)]  # tie: first in sorted order
    assert normalize_labels([[" x", "x "]]) == [("x",)]


def test_fit_style_label_lists_are_normalised_too() -> None:
    Y, classes = as_label_matrix([["Web"], ["web "], ["net", "web"]], 3)
    assert classes == ["net", "web"] and Y.tolist() == [[0, 1], [0, 1], [1, 1]]


class _Fixed:
    def __init__(self, classes: tuple[str, ...], y_pred: np.ndarray) -> None:
        self.classes_, self._y = list(classes), y_pred

    def predict(self, corpus: object) -> np.ndarray:
        return self._y


def test_evaluate_matches_respelled_test_labels_to_the_model_classes(demo) -> None:
    _, test = demo
    model = _Fixed(test.classes, test.Y.toarray())
    respelled = MultilingualCorpus.from_records(_mutated_records(test, share=1.0, seed=2))  # every one respelled
    df = evaluate_model(model, respelled)
    assert (df["unknown_labels"] == 0).all() and (df.loc["average", ["F1_macro", "F1_micro"]] == 1.0).all()


# ------------------------------------------------------------------------------------------ Unicode normal forms
def test_nfc_and_nfd_spellings_of_a_label_are_one_class_with_a_warning(caplog) -> None:
    import unicodedata

    composed, decomposed = (unicodedata.normalize(form, "rôle::café") for form in ("NFC", "NFD"))
    assert composed != decomposed
    with caplog.at_level(logging.WARNING, logger="gfun"):
        corpus = MultilingualCorpus(["1", "2", "3"], ["fr", "fr", "fr"], ["a", "b", "c"],
                                    [[composed], [decomposed], [decomposed, "other"]])
    assert corpus.classes == ("other", composed)
    assert corpus.Y.toarray()[:, 1].tolist() == [1, 1, 1]
    assert "Unicode NFC" in caplog.text and "another Unicode normal form)" in caplog.text
    # against a class list: the decomposed test label is the model's composed class
    assert normalize_labels([[decomposed]], [composed, "other"]) == [(composed,)]


def test_nfc_and_nfd_language_codes_are_one_language(caplog) -> None:
    import unicodedata

    composed, decomposed = (unicodedata.normalize(form, "é") for form in ("NFC", "NFD"))
    corpus = MultilingualCorpus(["1", "2"], [composed, decomposed], ["a", "b"])
    assert corpus.languages == [composed]


def test_the_language_warning_names_a_code_with_spaces(tmp_path, caplog) -> None:
    path = tmp_path / "spaced.jsonl"
    path.write_text(json.dumps({"id": "1", "lang": " en ", "text": "a", "labels": ["x"]}) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="gfun"):
        corpus = read_corpus(path)
    assert corpus.langs == ["en"] and "' en ' -> 'en'" in caplog.text


# ------------------------------------------------------------------------------------------ a model's classes
def test_keep_reads_labels_against_the_classes_given_and_keeps_the_unknown_ones() -> None:
    """A model keeping 'role::program' and 'ROLE::PROGRAM' apart: test labels are read as its classes, not merged
    by their majority spelling, and a label it does not know is kept (for evaluate_model to count)."""
    classes = ["ROLE::PROGRAM", "role::program"]
    labels = [["role::program"], ["ROLE::PROGRAM"], ["ROLE::PROGRAM"], ["ROLE::PROGRAM", "new::one"]]
    corpus = MultilingualCorpus(list("abcd"), ["da"] * 4, ["t"] * 4, labels, classes, on_unknown_label="keep")
    assert corpus.classes == ("ROLE::PROGRAM", "role::program", "new::one")
    assert corpus.Y.toarray().tolist() == [[0, 1, 0], [1, 0, 0], [1, 0, 0], [1, 0, 1]]
    # what reading without the model's classes did: the majority spelling swallowed the other class
    merged = MultilingualCorpus(list("abcd"), ["da"] * 4, ["t"] * 4, labels)
    assert "role::program" not in merged.classes


def test_evaluate_keeps_classes_that_differ_only_by_case_apart(tmp_path, capsys) -> None:
    """gfun evaluate on a model trained with both 'role::program' and 'ROLE::PROGRAM': each class is scored on its
    own documents (what a hand count from the model's predictions gives), none folded into the other."""
    from gfun.cli.main import main
    from gfun.metrics.evaluation import evaluate

    train, test = load_demo()
    langs = ("de", "en")

    def sample(corpus: MultilingualCorpus, n: int) -> MultilingualCorpus:
        idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in langs])
        return corpus.subset(np.sort(idx))

    def respell(corpus: MultilingualCorpus) -> list[dict]:
        records = corpus.to_records()
        for k, rec in enumerate(records):  # every third 'role::program' becomes the model's other class
            rec["labels"] = ["ROLE::PROGRAM" if lab == "role::program" and k % 3 == 0 else lab
                             for lab in rec["labels"]]
        return records

    train_recs, test_recs = respell(sample(train, 60)), respell(sample(test, 30))
    for name, recs in (("train", train_recs), ("test", test_recs)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
    classes = sorted({lab for r in train_recs + test_recs for lab in r["labels"]})
    assert {"role::program", "ROLE::PROGRAM"} <= set(classes)
    (tmp_path / "classes.json").write_text(json.dumps(classes), encoding="utf-8")
    model = tmp_path / "model"
    assert main(["-q", "train", "--train", str(tmp_path / "train.jsonl"), "--classes", str(tmp_path / "classes.json"),
                 "--views", "x", "--model", str(model)]) == 0
    capsys.readouterr()
    assert main(["-q", "evaluate", "--model", str(model), "--input", str(tmp_path / "test.jsonl"), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    from gfun.persistence.loading import load_model

    fitted = load_model(model)
    truth = MultilingualCorpus.from_records(test_recs, classes)
    by_hand = evaluate(truth.Y, fitted.predict(truth), truth.langs)
    for lang in (*langs, "average"):
        assert scores[lang]["F1_macro"] == pytest.approx(by_hand.loc[lang, "F1_macro"], abs=1e-12), lang
        assert scores[lang]["F1_micro"] == pytest.approx(by_hand.loc[lang, "F1_micro"], abs=1e-12), lang
    assert scores["average"]["n_docs"] == len(truth) and isinstance(scores["average"]["n_docs"], int)
