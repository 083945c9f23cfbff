"""Turning what users pass to ``fit``/``predict`` into texts, languages and a label matrix."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from gfun.corpus.multilingual import MultilingualCorpus, binarize_labels, normalize_labels, normalize_languages

__all__ = ["FRAME_COLUMNS", "PARALLEL_FIELDS", "as_label_matrix", "check_C", "document_groups", "training_data",
           "unpack"]

#: Extra fields of a corpus that name the parallel versions (or near-duplicates) of a document, as the
#: loaders write them: SIB-200 ``index_id``, JRC-Acquis ``source_id`` (CELEX), debtags ``source`` (the source
#: package). ``cv_groups="auto"`` keeps documents sharing the first of these in the same fold.
PARALLEL_FIELDS: tuple[str, ...] = ("index_id", "source_id", "source")


def check_C(value: Any, name: str = "C", *, allow_cv: bool = True) -> float | str:
    """``value`` as a regularisation constant: a positive finite number (or ``"cv"`` when allowed).

    Raises
    ------
    ValueError
        Naming the parameter: ``"meta_C must be a positive finite number or 'cv', got nan"``.
    """
    if allow_cv and isinstance(value, str) and value == "cv":
        return "cv"
    if (isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(float(value))
            and float(value) > 0):
        return float(value)
    what = "a positive finite number" + (" or 'cv'" if allow_cv else "")
    raise ValueError(f"{name} must be {what}, got {value!r}")


def _is_numeric_row(row: Any) -> bool:
    """A row of a 0/1 matrix given as nested lists (numbers or bools), not a list of label names."""
    return isinstance(row, Sequence | np.ndarray) and len(row) > 0 and all(
        isinstance(v, bool | int | float | np.number | np.bool_) for v in row)


def as_label_matrix(y: Any, n_docs: int, classes: Sequence[str] | None = None
                    ) -> tuple[np.ndarray, list[str]]:
    """A dense int8 label matrix and its class names from a binary matrix or lists of labels."""
    if sp.issparse(y):
        Y = np.asarray(y.toarray())
    elif isinstance(y, np.ndarray) and y.ndim == 2:
        Y = y
    elif isinstance(y, Sequence) and (len(y) == 0 or (not np.isscalar(y[0]) and not _is_numeric_row(y[0]))):
        lists = [list(labs) for labs in y]
        for i, labs in enumerate(lists):
            blank = [lab for lab in labs if not str(lab).strip()]
            if blank:
                raise ValueError(f"document {i} has an empty label {blank[0]!r} (a label must be a non-empty string)")
        lists = normalize_labels(lists, classes)  # "Web " and "web" are one class (with a warning)
        if classes is None:
            classes = sorted({lab for labs in lists for lab in labs})
        Y = binarize_labels(lists, classes).toarray()
    else:
        Y = np.asarray(y)
        if Y.ndim == 1:
            Y = Y[:, None]
    if Y.shape[0] != n_docs:
        raise ValueError(f"got {n_docs} documents but {Y.shape[0]} rows of labels")
    values = np.unique(Y)
    if not np.isin(values, (0, 1)).all():
        raise ValueError(f"the label matrix must be binary (0/1), found values {values[:5].tolist()}")
    if Y.shape[1] == 0:
        raise ValueError("the labels name no class: every document has an empty label list (give the class list, "
                         "or check the labels field)")
    names = list(classes) if classes is not None else [str(j) for j in range(Y.shape[1])]
    if len(names) != Y.shape[1]:
        raise ValueError(f"{len(names)} class names for a label matrix with {Y.shape[1]} columns")
    return Y.astype(np.int8), names


#: The columns a DataFrame given as ``X`` needs: the text and the language of each document.
FRAME_COLUMNS = ("text", "lang")


def _is_frame(X: Any) -> bool:
    return hasattr(X, "columns") and hasattr(X, "iloc")


def unpack(X: Any, langs: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """Texts and languages from a :class:`MultilingualCorpus`, a DataFrame with ``text`` and ``lang`` columns,
    or a list of texts plus ``langs``."""
    if isinstance(X, MultilingualCorpus):
        if langs is not None:
            raise ValueError("langs is taken from the corpus; do not pass it as well")
        return list(X.texts), np.asarray(X.langs, dtype=object)
    if isinstance(X, str):
        raise TypeError("expected a list of texts (or a MultilingualCorpus), got a single string")
    if _is_frame(X):
        missing = [c for c in FRAME_COLUMNS if c not in X.columns]
        if missing:
            raise ValueError(f"a DataFrame X needs the columns {list(FRAME_COLUMNS)}; it lacks {missing} "
                             f"(it has {list(X.columns)})")
        if langs is not None:
            raise ValueError("langs is taken from the DataFrame's 'lang' column; do not pass it as well")
        X, langs = list(X["text"]), list(X["lang"])
    texts = list(X)
    if langs is None:
        raise ValueError("langs (one language code per text) is required when X is a list of texts; where langs "
                         "cannot be passed (GridSearchCV, cross_val_score), give X as a MultilingualCorpus or as a "
                         "DataFrame with 'text' and 'lang' columns")
    if isinstance(langs, str):
        raise TypeError("langs must be a sequence with one language code per text, got a single string")
    langs = list(langs)
    if len(langs) != len(texts):
        raise ValueError(f"got {len(texts)} texts but {len(langs)} languages")
    for i, lang in enumerate(langs):
        if lang is None or (isinstance(lang, float) and lang != lang) or not str(lang).strip():
            raise ValueError(f"text {i} has no language code (got {lang!r}); gfun.text.langid.detect_languages can "
                             "detect it")
    langs_arr = np.asarray(normalize_languages(langs), dtype=object)  # 'EN' and 'en' are one language
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"text {i} ({langs_arr[i]}) is a {type(t).__name__}, expected str")
    return texts, langs_arr


def training_data(X: Any, y: Any = None, langs: Sequence[str] | None = None
                  ) -> tuple[list[str], np.ndarray, np.ndarray, list[str]]:
    """Texts, languages, label matrix and class names of what a ``fit(X, y, langs=...)`` received.

    ``X`` is a labelled :class:`~gfun.corpus.multilingual.MultilingualCorpus` or a DataFrame with ``text``, ``lang``
    and ``labels`` columns (then ``y`` may be omitted), or a list of texts with ``langs``; ``y`` a binary matrix or
    lists of label names (see :func:`as_label_matrix`).
    """
    if y is None and _is_frame(X) and "labels" in X.columns and langs is None:
        X = MultilingualCorpus.from_frame(X)  # a DataFrame with its labels: text, lang, labels columns
    texts, lang_arr = unpack(X, langs)
    if y is None:
        if not getattr(X, "labelled", False):
            raise ValueError("no labels: pass y, or a labelled MultilingualCorpus")
        Y, classes = as_label_matrix(X.Y, len(texts), X.classes)
    else:
        Y, classes = as_label_matrix(y, len(texts))
    return texts, lang_arr, Y, classes


def document_groups(X: Any, n: int, field: str | None) -> np.ndarray | None:
    """The groups of the ``n`` training documents of ``X`` that cross-validation must keep in one fold.

    Parameters
    ----------
    X : MultilingualCorpus or anything else (which has no groups)
    n : int
        Number of documents.
    field : str or None
        The corpus's extra field whose value names a document's group; ``"auto"``: the first of
        :data:`PARALLEL_FIELDS` the corpus has (``None`` when it has none); ``None``: no groups.

    Raises
    ------
    ValueError
        A named field the corpus does not have, or one with a value count other than ``n``.
    """
    if field is None:
        return None
    extra = getattr(X, "extra", None) or {}
    if field == "auto":
        field = next((f for f in PARALLEL_FIELDS if f in extra), None)
        if field is None:
            return None
    elif field not in extra:
        raise ValueError(f"cv_groups={field!r}: the training corpus has no such extra field (it has {sorted(extra)})")
    groups = np.asarray([str(g) for g in extra[field]])
    if groups.shape != (n,):
        raise ValueError(f"cv_groups field {field!r} has {groups.size} values for {n} documents")
    return groups
