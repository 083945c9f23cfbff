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
