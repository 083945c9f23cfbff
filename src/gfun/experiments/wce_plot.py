"""Figures (matplotlib, imported lazily: install ``gfun[plots]``).

Plots draw on an Agg canvas of their own (no pyplot, no change of the global backend) and are
written to ``savepath`` when one is given; the :class:`matplotlib.figure.Figure` is returned.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from gfun.core.optional import import_optional

__all__ = ["plot_word_class_embeddings", "top_wce_terms", "wce_figure", "word_class_heatmap"]

logger = logging.getLogger(__name__)


def _new_figure(figsize: tuple[float, float]) -> Any:
    import_optional("matplotlib", purpose="gfun.experiments.wce_plot")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save_figure(fig: Any, savepath: str | os.PathLike, dpi: int) -> None:
    """``fig.savefig(savepath)`` through :func:`gfun.core.atomic.atomic_write` (the real file checked, then replaced
    in one rename); a path without a suffix is left to matplotlib, which appends its default format's."""
    from pathlib import Path

    from gfun.core.atomic import atomic_write

    suffix = Path(savepath).suffix.lstrip(".").lower()
    if not suffix:
        fig.savefig(savepath, dpi=dpi)
        return
    with atomic_write(savepath) as fh:
        fig.savefig(fh, dpi=dpi, format=suffix)


def word_class_heatmap(matrix: np.ndarray, row_labels: Sequence[str], class_labels: Sequence[str],
                       savepath: str | os.PathLike | None = None, *, title: str | None = None,
                       cmap: str = "viridis", dpi: int = 150, colorbar: bool = True) -> Any:
    """Heat map of word-class correlations: one row per word, one column per class (the paper's Figure 2).

    Parameters
    ----------
    matrix : array of shape (n_words, n_classes)
    row_labels : sequence of str
        One label per row (e.g. ``"lawyer (en)"``).
    class_labels : sequence of str
        One label per column.
    savepath : path-like, optional
        Write the figure there (format from the extension, e.g. ``.png``).
    title : str, optional
    cmap : str
        Colour map; ``viridis`` (yellow: high, blue: low) as in the paper.
    dpi : int
        Resolution of the saved file.
    colorbar : bool

    Returns
    -------
    matplotlib.figure.Figure
    """
    matrix = np.asarray(matrix, dtype=float)
    if matrix.shape != (len(row_labels), len(class_labels)):
        raise ValueError(f"matrix of shape {matrix.shape} for {len(row_labels)} row and {len(class_labels)} "
                         "column labels")
    width = min(2.5 + 0.32 * matrix.shape[1], 30.0)
    height = 1.2 + 0.38 * matrix.shape[0] + 0.06 * max((len(c) for c in class_labels), default=0)
    fig = _new_figure((width, height))
    ax = fig.add_subplot()
    image = ax.imshow(matrix, cmap=cmap, aspect="auto", interpolation="nearest")
    ax.set_xticks(np.arange(matrix.shape[1]), labels=list(class_labels), rotation=90, fontsize=7)
    ax.set_yticks(np.arange(matrix.shape[0]), labels=list(row_labels), fontsize=9)
    if title:
        ax.set_title(title)
    if colorbar:
        fig.colorbar(image, ax=ax, shrink=0.8)
    if savepath is not None:
        _save_figure(fig, savepath, dpi)
        logger.info("word-class heat map written to %s", savepath)
    return fig


def _wce_view(model: Any) -> tuple[Any, list[str] | None]:
    """The W view of ``model`` (a fitted W view or gFun model with one) and the model's class names, if any."""
    view, class_names = model, None
    if hasattr(model, "views_"):
        found = [v for v in model.views_ if getattr(v, "letter", None) == "w"]
        if not found:
            raise ValueError("the model has no word-class embeddings (W) view")
        view = found[0]
        class_names = list(getattr(model, "classes_", [])) or None
    if not hasattr(view, "embedding"):
        raise TypeError("expected a fitted WordClassEmbeddingView or a gFun model with one, "
                        f"got {type(model).__name__}")
    return view, class_names


def plot_word_class_embeddings(model: Any, words: Sequence[tuple[str, str]],
                               savepath: str | os.PathLike | None = None, *, class_names: Sequence[str] | None = None,
                               classes: Sequence[int | str] | None = None, title: str | None = None,
                               cmap: str = "viridis", dpi: int = 150) -> Any:
    """Draw the word-class embeddings of chosen words, possibly of several languages.

    Parameters
    ----------
    model : WordClassEmbeddingView or GeneralizedFunnelling
        A fitted W view, or a fitted gFun model with one (its ``classes_`` then name the columns).
    words : sequence of (lang, word)
        Rows, in order, e.g. ``[("en", "lawyer"), ("en", "attorney"), ("it", "avvocato"),
        ("fr", "avocat"), ("it", "borsa")]``. Words are analysed as documents are (stemmed when the
        view stems), so surface forms work.
    savepath : path-like, optional
        Output file (``.png``).
    class_names : sequence of str, optional
        Column names (default: the model's ``classes_``, else the class indices).
    classes : sequence of int or str, optional
        The columns to show, by index or name (default: all).
    title, cmap, dpi
        See :func:`word_class_heatmap`.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    KeyError
        When a word is not in the training vocabulary of its language.
    """
    view, model_classes = _wce_view(model)
    if class_names is None:
        class_names = model_classes
    rows = np.vstack([view.embedding(lang, word) for lang, word in words])
    names = list(class_names) if class_names else [str(j) for j in range(rows.shape[1])]
    if len(names) != rows.shape[1]:
        raise ValueError(f"{len(names)} class names for {rows.shape[1]} classes")
    if classes is not None:
        cols = [names.index(c) if isinstance(c, str) else int(c) for c in classes]
        rows, names = rows[:, cols], [names[j] for j in cols]
    labels = [f"{word} ({lang})" for lang, word in words]
    return word_class_heatmap(rows, labels, names, savepath, title=title, cmap=cmap, dpi=dpi)


def top_wce_terms(view: Any, lang: str, n: int) -> list[tuple[str, np.ndarray]]:
    """The ``n`` vocabulary terms of ``lang`` that say most about a class, with their word-class embeddings.

    A term's score is its embedding's peak (its strongest class association, in standard deviations over the
    vocabulary) times the log of its training document frequency: a term of a single document carries that
    document's labels exactly and peaks highest, but says nothing (its score is 0), while a term of many documents
    of one class is what the figure is meant to show. The terms are taken by score, one per class first (the class
    of its peak), then the best of the others, so that the rows show as many classes as they can.

    Parameters
    ----------
    view : WordClassEmbeddingView
        Fitted.
    lang : str
    n : int

    Returns
    -------
    list of (term, ndarray)
        In the order chosen (ties by term); terms are analysed forms (stems when the view stems).
    """
    if lang not in view.vectorizers_:
        raise KeyError(f"no word-class embeddings for language {lang!r} (fitted on {view.languages_})")
    matrix = view.matrices_[lang]
    vectorizer = view.vectorizers_[lang]
    terms = {j: t for t, j in vectorizer.vocabulary_.items()}
    df = np.rint(vectorizer.n_docs_ * np.exp(-vectorizer.idf_))  # idf = ln(n_docs / df)
    score = matrix.max(axis=1) * np.log(np.maximum(df, 1.0))
    ranked = sorted((j for j in range(matrix.shape[0]) if score[j] > 0), key=lambda j: (-score[j], terms[j]))
    first, rest, shown = [], [], set()
    for j in ranked:
        peak_class = int(matrix[j].argmax())
        (rest if peak_class in shown else first).append(j)
        shown.add(peak_class)
    return [(terms[j], matrix[j]) for j in (first + rest)[:n]]


def wce_figure(corpus: Any, savepath: str | os.PathLike, *, words: Sequence[tuple[str, str]] | None = None,
               languages: Sequence[str] | None = None, top: int = 4, classes: Sequence[str] | None = None,
               model: Any = None, title: str | None = None, dpi: int = 150) -> Any:
    """The paper's Figure 2 from a labelled corpus (or a fitted model): word-class embeddings as a heat map.

    Parameters
    ----------
    corpus : MultilingualCorpus, optional
        Labelled training documents; a :class:`~gfun.views.wce.WordClassEmbeddingView` is fitted on them
        (ignored when ``model`` is given).
    savepath : path-like
        Output file (``.png``).
    words : sequence of (lang, word), optional
        Rows (analysed as documents are). By default the ``top`` terms of each language of ``languages`` that say
        most about a class: strongly associated with it and found in several training documents
        (:func:`top_wce_terms`).
    languages : sequence of str, optional
        Languages of the default rows (default: every language of the view, at most 3, alphabetical).
    top : int
    classes : sequence of str, optional
        Columns to show (default: every class).
    model : WordClassEmbeddingView or GeneralizedFunnelling, optional
        A fitted W view, or a fitted gFun model with one, instead of fitting one on ``corpus``.
    title : str, optional
    dpi : int

    Returns
    -------
    matplotlib.figure.Figure
    """
    from gfun.views.wce import WordClassEmbeddingView

    if model is None:
        if corpus is None:
            raise ValueError("give a labelled corpus or a fitted model")
        view = WordClassEmbeddingView().fit(list(corpus.texts), np.asarray(corpus.langs, dtype=object), corpus.Y)
        class_names: list[str] | None = list(corpus.classes)
    else:
        view, class_names = _wce_view(model)
    n_classes = next(iter(view.matrices_.values())).shape[1]
    if class_names is None or len(class_names) != n_classes:
        class_names = [str(j) for j in range(n_classes)]
    if words:
        rows = np.vstack([view.embedding(lang, word) for lang, word in words])
        labels = [f"{word} ({lang})" for lang, word in words]
    else:
        langs = list(languages) if languages else sorted(view.languages_)[:3]
        picked = [(lang, term, row) for lang in langs for term, row in top_wce_terms(view, lang, top)]
        rows = np.vstack([r for _, _, r in picked])
        labels = [f"{term} ({lang})" for lang, term, _ in picked]
    if classes:
        unknown = [c for c in classes if c not in class_names]
        if unknown:
            raise ValueError(f"unknown classes {unknown}; the model's are {class_names}")
        cols = [class_names.index(c) for c in classes]
        rows, class_names = rows[:, cols], [class_names[j] for j in cols]
    return word_class_heatmap(rows, labels, class_names, savepath, title=title or "Word-class embeddings",
                              dpi=dpi)
