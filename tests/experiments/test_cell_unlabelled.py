"""Experiment cells count the test documents without any label and those of them given one
(gfun.experiments.runner.evaluate_cell, cell_scores), so that every experiment table can say how often a model
labels a document that belongs to no class."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gfun.corpus.multilingual import MultilingualCorpus
from gfun.errors import UnseenLanguageError
from gfun.experiments.many_shot import language_average
from gfun.experiments.runner import UNLABELLED_COUNTS, cell_scores, evaluate_cell


class _FirstWord:
    """Predicts class ``a`` for the documents whose text starts with "a"; refuses language ``xx``."""

    classes_ = np.array(["a", "b"])

    def fit(self, corpus: MultilingualCorpus) -> _FirstWord:
        return self

    def predict(self, corpus: MultilingualCorpus) -> np.ndarray:
        if "xx" in corpus.langs:
            raise UnseenLanguageError("xx is not served")
        return np.array([[t.startswith("a"), False] for t in corpus.texts], dtype=np.int8)


def _corpus(rows: list[tuple[str, str, list[str]]]) -> MultilingualCorpus:
    return MultilingualCorpus([f"d{i}" for i in range(len(rows))], [r[0] for r in rows], [r[1] for r in rows],
                              [r[2] for r in rows], classes=["a", "b"])


def test_a_cell_counts_unlabelled_documents_and_those_given_a_label() -> None:
    train = _corpus([("en", "a x", ["a"]), ("en", "b x", ["b"])])
    # en: 3 unlabelled, 2 of them given "a"; de: every document labelled; xx: not served
    test = _corpus([("en", "a 1", []), ("en", "a 2", []), ("en", "c 3", []), ("en", "a 4", ["a"]),
                    ("de", "a 5", ["a"]), ("de", "b 6", ["b"]), ("xx", "a 7", [])])
    frame = evaluate_cell(_FirstWord(), train, test)
    per_lang = frame.groupby("lang")[list(UNLABELLED_COUNTS)].first()
    assert per_lang.loc["en"].tolist() == [3, 2] and per_lang.loc["de"].tolist() == [0, 0]
    assert per_lang.loc["xx"].isna().all()
    scores = cell_scores(frame.assign(run=0, config="c"), ["run", "config"]).set_index("lang")
    assert scores.loc["en", "unlabelled_flagged"] == pytest.approx(2 / 3)
    assert math.isnan(scores.loc["de", "unlabelled_flagged"])  # no unlabelled document there
    assert math.isnan(scores.loc["xx", "unlabelled_flagged"]) and math.isnan(scores.loc["xx", "F1_macro"])
    average = language_average(scores.reset_index(), ["run", "config"])
    assert average["unlabelled_flagged"].iloc[0] == pytest.approx(2 / 3)  # the languages that have some


def test_cells_stored_before_the_counts_score_as_before() -> None:
    train = _corpus([("en", "a x", ["a"])])
    test = _corpus([("en", "a 1", []), ("en", "b 2", ["b"])])
    frame = evaluate_cell(_FirstWord(), train, test).assign(run=0, config="c")
    old = frame.drop(columns=list(UNLABELLED_COUNTS))
    new_scores, old_scores = (cell_scores(f, ["run", "config"]) for f in (frame, old))
    measures = ["F1_macro", "F1_micro", "K_macro", "K_micro"]
    pd.testing.assert_frame_equal(new_scores[measures], old_scores[measures])
    assert new_scores["unlabelled_flagged"].iloc[0] == 1.0 and old_scores["unlabelled_flagged"].isna().all()
