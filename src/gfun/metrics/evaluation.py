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

__all__ = ["CONTINGENCY_COLUMNS", "MEASURES", "UNLABELLED_FLAGGED", "evaluate", "evaluate_model",
           "measures_from_contingency", "per_class_contingency", "unlabelled_counts"]

logger = logging.getLogger(__name__)

#: Name of the row of :func:`evaluate` that averages the per-language rows.
AVERAGE_ROW = "average"
#: Name of the single row of :func:`evaluate` when no languages are given.
ALL_ROW = "all"
#: Column of :func:`evaluate`: the share of the documents without any true label that get at least one predicted
#: label (NaN where there is no such document).
UNLABELLED_FLAGGED = "unlabelled_flagged"


# ---------------------------------------------------------------------------------------------
# per-language evaluation
# ---------------------------------------------------------------------------------------------


def _check_langs(langs: ArrayLike, n_docs: int) -> np.ndarray:
    arr = np.asarray(langs, dtype=object)
    if arr.ndim != 1 or arr.shape[0] != n_docs:
        raise ValueError(f"langs must be a 1-D sequence with one entry per document ({n_docs}), "
                         f"got shape {arr.shape}")
    return arr.astype(str)


def _row_langs(langs: ArrayLike, n_docs: int) -> np.ndarray:
    """:func:`_check_langs`, refusing a language that would collide with the ``average`` row."""
    arr = _check_langs(langs, n_docs)
    if AVERAGE_ROW in set(arr.tolist()):
        raise ValueError(f"{AVERAGE_ROW!r} cannot be used as a language code (it names the mean row)")
    return arr


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
        occurs; the ``average`` row skips NaNs), ``unlabelled_flagged`` (the share of that language's documents
        without any true label that get at least one predicted label: how often a document that belongs to no
        class is given one; NaN where every document has a label; the ``average`` row skips NaNs) and ``n_docs``
        (the total in the ``average`` row).
        Macro averages are over the whole codeframe in every language.

    Raises
    ------
    ValueError
        On invalid labels, a ``langs`` of the wrong length, or a language named ``"average"``.
    """
    t, p = _check_pair(y_true, y_pred)
    columns = [*MEASURES, "F1_macro_present", UNLABELLED_FLAGGED, "n_docs"]
    if langs is None:
        row = measures_from_contingency(_contingency_checked(t, p))
        row[UNLABELLED_FLAGGED] = _flagged_share(_has_label(t), p)
        row["n_docs"] = t.shape[0]
        df = pd.DataFrame([row], index=pd.Index([ALL_ROW], name="lang"), columns=columns)
        df["n_docs"] = df["n_docs"].astype(np.int64)
        return df
    lang_arr = _row_langs(langs, t.shape[0])
    tables = _lang_tables(t, p, lang_arr)
    labelled = _has_label(t)
    flagged = {lang: _flagged_share(labelled[lang_arr == lang], _rows(p, lang_arr == lang)) for lang in tables}
    return _language_frame(tables, {lang: int(table[0].sum()) for lang, table in tables.items()}, t.shape[0],
                           flagged)


def _flagged_share(labelled: np.ndarray, p: Any) -> float:
    """The share of the documents not ``labelled`` that get at least one predicted label (NaN without any)."""
    n, flagged = _flagged_counts(labelled, p)
    return flagged / n if n else math.nan


def _flagged_counts(labelled: np.ndarray, p: Any) -> tuple[int, int]:
    """How many documents are not ``labelled``, and how many of them get at least one predicted label."""
    predicted = np.asarray(p.sum(axis=1)).ravel() > 0
    return int((~labelled).sum()), int(predicted[~labelled].sum())


def unlabelled_counts(y_true: ArrayLike, y_pred: ArrayLike) -> tuple[int, int]:
    """The documents without any true label, and how many of them get at least one predicted label: what
    ``unlabelled_flagged`` (:func:`evaluate`) is the ratio of, as counts that add up over batches and runs.

    Parameters
    ----------
    y_true, y_pred : array-like or sparse matrix of shape (n_docs, n_classes)
        Binary true and predicted labels.
    """
    t, p = _check_pair(y_true, y_pred)
    return _flagged_counts(_has_label(t), p)


def _has_label(t: Any) -> np.ndarray:
    return np.asarray(t.sum(axis=1)).ravel() > 0


def _language_frame(tables: dict[str, np.ndarray], n_docs: dict[str, int], n_total: int,
                    flagged: dict[str, float]) -> pd.DataFrame:
    """:func:`evaluate`'s table from each language's contingency table (rows: classes; TP, FP, FN, TN) and share of
    flagged unlabelled documents."""
    columns = [*MEASURES, "F1_macro_present", UNLABELLED_FLAGGED, "n_docs"]
    rows: dict[str, dict[str, float]] = {}
    for lang, table in tables.items():
        rows[lang] = measures_from_contingency(table)
        rows[lang][UNLABELLED_FLAGGED] = flagged[lang]
        rows[lang]["n_docs"] = n_docs[lang]
    df = pd.DataFrame.from_dict(rows, orient="index", columns=columns)
    if df.empty:
        df.loc[AVERAGE_ROW] = [math.nan] * (len(columns) - 1) + [0]
    else:
        mean = df[[*MEASURES, "F1_macro_present", UNLABELLED_FLAGGED]].mean(axis=0, skipna=True)
        df.loc[AVERAGE_ROW] = [*mean.tolist(), int(df["n_docs"].sum())]
    df["n_docs"] = df["n_docs"].astype(np.int64)
    df.index.name = "lang"
    logger.debug("evaluated %d documents in %d languages", n_total, len(df) - 1)
    return df


UnknownLabels = Literal["count", "ignore", "error"]


def evaluate_model(model: Any, test: Any, *, unknown_labels: UnknownLabels = "count") -> pd.DataFrame:
    """Evaluate a fitted model on a labelled corpus, labels the model does not know included.

    Parameters
    ----------
    model : fitted estimator
        Anything with ``classes_`` and ``predict(corpus)`` (gFun, Fun, Naive, the fine-tuned baseline).
    test : MultilingualCorpus
        Labelled test documents, read against the model's classes with their unknown labels kept
        (``read_corpus(path, model.classes_, on_unknown_label="keep")``, as ``gfun evaluate`` reads them): a label
        is then matched to the model's own spelling, so two classes of the model that differ only by case stay
        two. A corpus read with ``classes=None`` has had its case variants merged into their most frequent spelling
        already, and one read with ``on_unknown_label="ignore"`` has lost the labels this counts. A label that
        differs from a class of the model only by case, surrounding whitespace or Unicode normal form is that
        class (with a warning; :func:`gfun.corpus.multilingual.normalize_labels`).
    unknown_labels : {"count", "ignore", "error"}
        Test labels outside ``model.classes_``:

        - ``"ignore"``: they are dropped; every language is scored on the model's classes (a document whose labels
          are all unknown is a negative for each of them): :func:`evaluate` of the model's predictions.
        - ``"count"`` (default): the same per-class tables, plus, in each language where an unknown label occurs,
          one class for it with TP = FP = TN = 0 and FN = the number of that language's documents carrying it.
          Such a class scores F1 = 0 and K = -1 (the lowest of each) and enters that language's macro averages
          as one more class and its micro sums as false negatives; in a language where it does not occur it is
          not a class at all (an absent, never-predicted class would score F1 = K = 1 and raise the average).
          It gets no true negatives: a model that cannot predict a class earns no credit for not predicting it.
          So ``"count"`` never scores above ``"ignore"`` on any measure of any row (``F1_macro_present`` is NaN
          under ``"ignore"`` in a language where no known class occurs, and a number under ``"count"`` there
          when an unknown one does), and equals it where no unknown label occurs.
        - ``"error"``: such a test set is refused (``ValueError`` naming the labels).

        Either way a warning names them and the ``unknown_labels`` column counts them.

    Returns
    -------
    pandas.DataFrame
        :func:`evaluate`'s table plus a column ``unknown_labels``: the occurrences of unknown labels in each
        language (their total in the ``average`` row).
    """
    from gfun.corpus.multilingual import binarize_labels, normalize_labels

    if unknown_labels not in ("count", "ignore", "error"):
        raise ValueError(f"unknown_labels must be 'count', 'ignore' or 'error', got {unknown_labels!r}")
    if not getattr(test, "labelled", False):
        raise ValueError("the test documents carry no labels")
    known = [str(c) for c in model.classes_]
    kset = set(known)
    labels = normalize_labels(test.labels, known)  # "Web" for the model's "web" is that class, with a warning
    per_doc = np.asarray([sum(lab not in kset for lab in labs) for labs in labels], dtype=np.int64)
    unknown = sorted({lab for labs in labels for lab in labs} - kset)
    if unknown:
        message = (f"{int(per_doc.sum())} occurrence(s) of {len(unknown)} label(s) the model does not know, in "
                   f"{int((per_doc > 0).sum())} of {len(test)} test documents: "
                   + ", ".join(map(repr, unknown[:5])) + (", ..." if len(unknown) > 5 else ""))
        if unknown_labels == "error":
            raise ValueError(message + " (unknown_labels='count', --unknown-labels count, scores them as missed "
                             "positives; 'ignore' drops them)")
        logger.warning("%s: %s", message, "scored as missed positives, in the languages where they occur"
                       if unknown_labels == "count" else "dropped: the scores cover the model's classes only")
    y_true = binarize_labels(labels, known)
    y_pred = np.asarray(model.predict(test))
    langs = np.asarray(test.langs, dtype=object)
    if unknown and unknown_labels == "count":
        t, p = _check_pair(y_true, y_pred)
        lang_arr = _row_langs(langs, t.shape[0])
        missed = binarize_labels(labels, unknown)
        tables = _lang_tables(t, p, lang_arr)
        n_docs = {lang: int((lang_arr == lang).sum()) for lang in tables}
        for lang, table in tables.items():
            fn = np.asarray(missed[np.flatnonzero(lang_arr == lang)].sum(axis=0)).ravel()
            extra = np.zeros((int((fn > 0).sum()), table.shape[1]), dtype=table.dtype)
            extra[:, 2] = fn[fn > 0]  # FN only: TP = FP = TN = 0
            tables[lang] = np.vstack([table, extra])
        labelled = _has_label(t) | (per_doc > 0)  # a document with only unknown labels has labels
        flagged = {lang: _flagged_share(labelled[lang_arr == lang], _rows(p, lang_arr == lang)) for lang in tables}
        df = _language_frame(tables, n_docs, t.shape[0], flagged)
    else:
        df = evaluate(y_true, y_pred, test.langs)
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
