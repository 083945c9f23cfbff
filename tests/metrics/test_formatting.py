"""Score tables (gfun.metrics.formatting)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gfun.metrics.evaluation import evaluate
from gfun.metrics.formatting import DISPLAY_NAMES, format_table
from gfun.metrics.measures import (
    MEASURES,
)

# -------------------------------------------------------------------------------------------
# A 4-document, 3-class example used throughout (classes a, b, c; languages en, it).
#
#        y_true   y_pred   lang
#   d1   1 0 1    1 0 0    en
#   d2   0 1 0    1 1 0    it
#   d3   1 1 0    0 1 0    en
#   d4   0 0 0    0 0 0    it
#
# Class a: true {d1, d3}, pred {d1, d2} -> TP=1 (d1) FP=1 (d2) FN=1 (d3) TN=1 (d4)
# Class b: true {d2, d3}, pred {d2, d3} -> TP=2 FP=0 FN=0 TN=2
# Class c: true {d1},     pred {}       -> TP=0 FP=0 FN=1 TN=3
# -------------------------------------------------------------------------------------------
Y_TRUE = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0], [0, 0, 0]])


Y_PRED = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 0]])


LANGS = ["en", "it", "en", "it"]


def test_format_table() -> None:
    df = pd.DataFrame(
        {"F1_macro": [0.5, 0.25], "K_micro": [1.0, math.nan], "n_docs": np.array([3, 10], dtype=np.int64)},
        index=pd.Index(["en", "average"], name="lang"),
    )
    text = format_table(df)
    expected = "\n".join(
        [
            "lang       F1M     Kµ  n_docs",
            "-------  -----  -----  ------",
            "en       0.500  1.000       3",
            "average  0.250      -      10",
        ]
    )
    assert text == expected
    assert format_table(df, floatfmt=".1f").splitlines()[2] == "en       0.5  1.0       3"


def test_format_table_of_evaluate_uses_display_names() -> None:
    text = format_table(evaluate(Y_TRUE, Y_PRED, LANGS))
    header = text.splitlines()[0]
    for name in MEASURES:
        assert DISPLAY_NAMES[name] in header
    assert DISPLAY_NAMES == {
        "F1_macro": "F1M",
        "F1_micro": "F1µ",
        "K_macro": "KM",
        "K_micro": "Kµ",
        "F1_macro_present": "F1M(present)",
        "unlabelled_flagged": "unlabelled",
    }
    assert "unlabelled" in header
    assert len(text.splitlines()) == 2 + 3
    assert "0.611" in text  # average F1M 11/18
