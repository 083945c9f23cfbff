"""View-generating functions (VGFs), by the paper's configuration letters.

========  ==========================================================
letter    view
========  ==========================================================
``x``     :class:`~gfun.views.posteriors.PosteriorsView` (calibrated posteriors of per-language SVMs)
``m``     :class:`~gfun.views.embeddings.WordEmbeddingView` (TF-IDF x aligned word vectors, SIF, L2)
``w``     :class:`~gfun.views.wce.WordClassEmbeddingView` (TF-IDF x word-class embeddings, SIF, L2)
``b``     :class:`~gfun.views.transformer.TransformerView` (fine-tuned multilingual transformer, pooled vector)
``r``     :class:`~gfun.views.recurrent.RecurrentView` (GRU over aligned word vectors [+ WCEs])
========  ==========================================================
"""

from __future__ import annotations

import inspect
from typing import Any

from gfun.views.base import UnseenLanguageError, ViewGenerator
from gfun.views.embeddings import WordEmbeddingView
from gfun.views.posteriors import PosteriorsView
from gfun.views.recurrent import RecurrentView
from gfun.views.transformer import TransformerView
from gfun.views.wce import WordClassEmbeddingView

__all__ = [
    "VIEW_CLASSES",
    "PosteriorsView",
    "RecurrentView",
    "TransformerView",
    "UnseenLanguageError",
    "ViewGenerator",
    "WordClassEmbeddingView",
    "WordEmbeddingView",
    "make_view",
]

#: Configuration letter -> view class.
VIEW_CLASSES: dict[str, type[ViewGenerator]] = {
    "x": PosteriorsView,
    "m": WordEmbeddingView,
    "w": WordClassEmbeddingView,
    "b": TransformerView,
    "r": RecurrentView,
}


def make_view(letter: str, **params: Any) -> ViewGenerator:
    """An unfitted view for ``letter``; parameters the view does not accept are ignored."""
    try:
        cls = VIEW_CLASSES[letter]
    except KeyError:
        raise ValueError(f"unknown view letter {letter!r}; available: {''.join(VIEW_CLASSES)}") from None
    accepted = inspect.signature(cls.__init__).parameters
    return cls(**{k: v for k, v in params.items() if k in accepted})
