"""Per-language evaluation: every measure of :mod:`gfun.metrics.measures`, per language of the test set and
averaged over the languages, as the paper reports them (:func:`evaluate`), of a fitted model on a corpus
(:func:`evaluate_model`), and per class (:func:`per_class_contingency`).

The measures themselves (F1 and K, micro- and macro-averaged, equations 4 and 5 of the paper) are defined in
:mod:`gfun.metrics.measures`, the paired t-test (:func:`~gfun.metrics.significance.paired_ttest`) in
:mod:`gfun.metrics.significance` and the plain-text tables (:func:`~gfun.metrics.formatting.format_table`,
:data:`~gfun.metrics.formatting.DISPLAY_NAMES`) in :mod:`gfun.metrics.formatting`.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
import scipy.sparse as sp

from gfun.metrics.measures import (
    CONTINGENCY_COLUMNS,
    MEASURES,
    ArrayLike,
    _check_pair,
    _contingency_checked,
    measures_from_contingency,
)

__all__ = ["CONTINGENCY_COLUMNS", "MEASURES", "evaluate", "evaluate_model", "measures_from_contingency",
           "per_class_contingency"]

logger = logging.getLogger(__name__)

#: Name of the row of :func:`evaluate` that averages the per-language rows.
AVERAGE_ROW = "average"
#: Name of the single row of :func:`evaluate` when no languages are given.
ALL_ROW = "all"


# ---------------------------------------------------------------------------------------------
# per-language evaluation
# ---------------------------------------------------------------------------------------------


def _check_langs(langs: ArrayLike, n_docs: int) -> np.ndarray:
    arr = np.asarray(langs, dtype=object)
    if arr.ndim != 1 or arr.shape[0] != n_docs:
        raise ValueError(f"langs must be a 1-D sequence with one entry per document ({n_docs}), "
                         f"got shape {arr.shape}")
    return arr.astype(str)


def _rows(m: Any, mask: np.ndarray) -> Any:
    return m[np.flatnonzero(mask)] if sp.issparse(m) else m[mask]


def _lang_tables(t: Any, p: Any, langs: np.ndarray) -> dict[str, np.ndarray]:
    """Contingency table of each language, in sorted language order."""
    return {lang: _contingency_checked(_rows(t, langs == lang), _rows(p, langs == lang))
            for lang in sorted(set(langs.tolist()))}


def evaluate(y_true: ArrayLike, y_pred: ArrayLike, langs: ArrayLike | None = None) -> pd.DataFrame:
    """All measures, per language and averaged over languages.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels.
    langs : sequence of str of length n_docs, optional
        Language of each document. When None, all documents are evaluated together.

    Returns
    -------
    pandas.DataFrame
        Index ``lang``: one row per language (sorted), then a row ``"average"`` holding the
        unweighted mean over languages of each measure, which is how the paper reports its
        results. With ``langs=None`` there is a single row ``"all"``. Columns:
        ``F1_macro, F1_micro, K_macro, K_micro`` (see :data:`MEASURES`), ``F1_macro_present``
        (macro-F1 over the classes occurring in that language's true labels, NaN where none
        occurs; the ``average`` row skips NaNs) and ``n_docs`` (the total in the ``average`` row).
        Macro averages are over the whole codeframe in every language.

    Raises
    ------
    ValueError
        On invalid labels, a ``langs`` of the wrong length, or a language named ``"average"``.
    """
    t, p = _check_pair(y_true, y_pred)
    columns = [*MEASURES, "F1_macro_present", "n_docs"]
    if langs is None:
        row = measures_from_contingency(_contingency_checked(t, p))
        row["n_docs"] = t.shape[0]
        df = pd.DataFrame([row], index=pd.Index([ALL_ROW], name="lang"), columns=columns)
        df["n_docs"] = df["n_docs"].astype(np.int64)
        return df
    lang_arr = _check_langs(langs, t.shape[0])
    if AVERAGE_ROW in set(lang_arr.tolist()):
        raise ValueError(f"{AVERAGE_ROW!r} cannot be used as a language code (it names the mean row)")
    rows: dict[str, dict[str, float]] = {}
    for lang, table in _lang_tables(t, p, lang_arr).items():
        rows[lang] = measures_from_contingency(table)
        rows[lang]["n_docs"] = int(table[0].sum())
    df = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    if df.empty:
        df.loc[AVERAGE_ROW] = [math.nan] * (len(columns) - 1) + [0]
    else:
        mean = df[[*MEASURES, "F1_macro_present"]].mean(axis=0, skipna=True)
        df.loc[AVERAGE_ROW] = [*mean.tolist(), int(df["n_docs"].sum())]
    df["n_docs"] = df["n_docs"].astype(np.int64)
    df.index.name = "lang"
    logger.debug("evaluated %d documents in %d languages", t.shape[0], len(df) - 1)
    return df


UnknownLabels = Literal["count", "ignore", "error"]


def evaluate_model(model: Any, test: Any, *, unknown_labels: UnknownLabels = "count") -> pd.DataFrame:
    """Evaluate a fitted model on a labelled corpus, labels the model does not know included.

    Parameters
    ----------
    model : fitted estimator
        Anything with ``classes_`` and ``predict(corpus)`` (gFun, Fun, Naive, the fine-tuned baseline).
    test : MultilingualCorpus
        Labelled test documents, read with their own labels (``classes=None``): a corpus built with the
        model's class list and ``on_unknown_label="ignore"`` has already lost the labels this counts.
    unknown_labels : {"count", "ignore", "error"}
        Test labels outside ``model.classes_``. ``"count"`` (default) scores each as a class the model never
        predicts: its occurrences are missed positives (F1 and K of 0 in a language where it occurs, and,
        as for any class, 1 where it neither occurs nor is predicted). This is the honest score of the model
        on this test set; dropping them instead (``"ignore"``) scores the model on its own class list only
        and reads higher. ``"error"`` refuses such a
        test set. Either way a warning names them and the ``unknown_labels`` column counts them.

    Returns
    -------
    pandas.DataFrame
        :func:`evaluate`'s table plus a column ``unknown_labels``: the occurrences of unknown labels in each
        language (their total in the ``average`` row).
    """
    from gfun.corpus.multilingual import binarize_labels

    if unknown_labels not in ("count", "ignore", "error"):
        raise ValueError(f"unknown_labels must be 'count', 'ignore' or 'error', got {unknown_labels!r}")
    if not getattr(test, "labelled", False):
        raise ValueError("the test documents carry no labels")
    known = [str(c) for c in model.classes_]
    kset = set(known)
    per_doc = np.asarray([sum(lab not in kset for lab in labs) for labs in test.labels], dtype=np.int64)
    unknown = sorted({lab for labs in test.labels for lab in labs} - kset)
    if unknown:
        message = (f"{int(per_doc.sum())} occurrence(s) of {len(unknown)} label(s) the model does not know, in "
                   f"{int((per_doc > 0).sum())} of {len(test)} test documents: "
                   + ", ".join(map(repr, unknown[:5])) + (", ..." if len(unknown) > 5 else ""))
        if unknown_labels == "error":
            raise ValueError(message + " (unknown_labels='count', --unknown-labels count, scores them as missed "
                             "positives; 'ignore' drops them)")
        logger.warning("%s: %s", message, "scored as classes the model never predicts (missed positives)"
                       if unknown_labels == "count" else "dropped: the scores cover the model's classes only")
    classes = known + (unknown if unknown_labels == "count" else [])
    y_true = binarize_labels(test.labels, classes)
    y_pred = np.asarray(model.predict(test))
    if len(classes) > len(known):
        y_pred = np.hstack([y_pred, np.zeros((y_pred.shape[0], len(classes) - len(known)), dtype=y_pred.dtype)])
    df = evaluate(y_true, y_pred, test.langs)
    langs = np.asarray(test.langs, dtype=object)
    counts = {lang: int(per_doc[langs == lang].sum()) for lang in df.index if lang != AVERAGE_ROW}
    df["unknown_labels"] = [counts.get(lang, int(per_doc.sum())) for lang in df.index]
    return df


def per_class_contingency(y_true: ArrayLike, y_pred: ArrayLike, langs: ArrayLike | None,
                          classes: Sequence[Any] | None = None) -> pd.DataFrame:
    """Per-language, per-class contingency counts in long form.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels.
    langs : sequence of str of length n_docs, or None
        Language of each document; None puts every document under language ``"all"``.
    classes : sequence of length n_classes, optional
        Class names in column order; default ``0 .. n_classes-1``.

    Returns
    -------
    pandas.DataFrame
        Columns ``lang, class, TP, FP, FN, TN``; one row per (language, class), languages
        sorted and classes in column order. Any measure can be recomputed from it (micro
        averages over all languages included).

    Raises
    ------
    ValueError
        On invalid labels, a ``langs`` of the wrong length, or ``classes`` of the wrong length.
    """
    t, p = _check_pair(y_true, y_pred)
    n_classes = t.shape[1]
    if classes is None:
        class_list: list[Any] = list(range(n_classes))
    else:
        class_list = list(classes)
        if len(class_list) != n_classes:
            raise ValueError(f"classes has {len(class_list)} names but the label matrices have "
                             f"{n_classes} columns")
    if langs is None:
        tables = {ALL_ROW: _contingency_checked(t, p)}
    else:
        tables = _lang_tables(t, p, _check_langs(langs, t.shape[0]))
    frames = []
    for lang, table in tables.items():
        frame = pd.DataFrame(table, columns=list(CONTINGENCY_COLUMNS))
        frame.insert(0, "class", class_list)
        frame.insert(0, "lang", lang)
        frames.append(frame)
    if not frames:
        return pd.DataFrame({"lang": pd.Series(dtype=str), "class": pd.Series(dtype=object),
                             **{c: pd.Series(dtype=np.int64) for c in CONTINGENCY_COLUMNS}})
    return pd.concat(frames, ignore_index=True)
