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

from gfun._optional import import_optional

__all__ = ["plot_word_class_embeddings", "word_class_heatmap"]

logger = logging.getLogger(__name__)


def _new_figure(figsize: tuple[float, float]) -> Any:
    import_optional("matplotlib", purpose="gfun.plots")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


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
        fig.savefig(savepath, dpi=dpi)
        logger.info("word-class heat map written to %s", savepath)
    return fig


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
    view = model
    if hasattr(model, "views_"):
        found = [v for v in model.views_ if getattr(v, "letter", None) == "w"]
        if not found:
            raise ValueError("the model has no word-class embeddings (W) view")
        view = found[0]
        if class_names is None:
            class_names = list(getattr(model, "classes_", []))
    if not hasattr(view, "embedding"):
        raise TypeError("expected a fitted WordClassEmbeddingView or a gFun model with one, "
                        f"got {type(model).__name__}")
    rows = np.vstack([view.embedding(lang, word) for lang, word in words])
    names = list(class_names) if class_names else [str(j) for j in range(rows.shape[1])]
    if len(names) != rows.shape[1]:
        raise ValueError(f"{len(names)} class names for {rows.shape[1]} classes")
    if classes is not None:
        cols = [names.index(c) if isinstance(c, str) else int(c) for c in classes]
        rows, names = rows[:, cols], [names[j] for j in cols]
    labels = [f"{word} ({lang})" for lang, word in words]
    return word_class_heatmap(rows, labels, names, savepath, title=title, cmap=cmap, dpi=dpi)
