"""Orthogonal Procrustes refinement of one language's vectors onto a pivot language (English).

As in MUSE's supervised mode: given dictionary pairs ``(x_i, y_i)`` (source word of language
``L``, its pivot-language translation), find the orthogonal ``W`` minimising
``sum ||x_i W - y_i||^2``; the solution is ``W = U V^T`` with ``U S V^T`` the SVD of ``X^T Y``.
Every vector of ``L`` is then mapped by ``W``; pivot-language vectors are left as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import numpy as np

from gfun.wordvectors.base import WordVectorSource

__all__ = ["ProcrustesAligned", "procrustes"]

logger = logging.getLogger(__name__)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def procrustes(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Orthogonal map ``W`` minimising ``||source @ W - target||_F``.

    Parameters
    ----------
    source, target : numpy.ndarray
        Shape ``(n_pairs, dim)``, row ``i`` of both = the two sides of pair ``i``.

    Returns
    -------
    numpy.ndarray
        ``(dim, dim)`` orthogonal matrix.
    """
    source = np.asarray(source, dtype=np.float64)
    target = np.asarray(target, dtype=np.float64)
    if source.shape != target.shape:
        raise ValueError(f"shape mismatch: {source.shape} vs {target.shape}")
    u, _, vt = np.linalg.svd(source.T @ target)
    return u @ vt


class ProcrustesAligned(WordVectorSource):
    """Wrap a source and map each non-pivot language onto the pivot with Procrustes.

    Parameters
    ----------
    source : WordVectorSource
        The base source (e.g. encoder-derived or ``.vec`` vectors).
    dictionaries : mapping
        Language -> sequence of ``(word in that language, pivot-language word)`` pairs used to fit
        the map.  Languages without a dictionary are returned unmapped (with a warning).
    pivot : str
        The language others are mapped onto (left unchanged).
    normalize : bool
        L2-normalise vectors before fitting (and the result), as MUSE's ``renorm`` does.
    min_pairs : int
        Fewer usable pairs than this (both words found by the source) leaves the language
        unmapped.

    Attributes
    ----------
    maps_ : dict
        Language -> fitted ``(dim, dim)`` matrix.
    n_pairs_ : dict
        Language -> number of pairs the map was fitted on.
    """

    def __init__(
        self,
        source: WordVectorSource,
        dictionaries: Mapping[str, Sequence[tuple[str, str]]],
        *,
        pivot: str = "en",
        normalize: bool = True,
        min_pairs: int = 50,
    ) -> None:
        super().__init__()
        self.source = source
        self.dictionaries = dictionaries
        self.pivot = pivot
        self.normalize = normalize
        self.min_pairs = min_pairs
        self.maps_: dict[str, np.ndarray | None] = {}
        self.n_pairs_: dict[str, int] = {}

    @property
    def name(self) -> str:  # type: ignore[override]
        return f"{self.source.name}+procrustes"

    @property
    def dim(self) -> int:
        return self.source.dim

    def fit_language(self, lang: str) -> np.ndarray | None:
        """Fit (once) and return the map of a language onto the pivot, or None when unmapped."""
        if lang in self.maps_:
            return self.maps_[lang]
        pairs = list(self.dictionaries.get(lang, ()))
        if lang == self.pivot or not pairs:
            if lang != self.pivot:
                logger.warning("no dictionary for %s: its vectors are not refined by Procrustes", lang)
            self.maps_[lang] = None
            return None
        src_words = list(dict.fromkeys(a for a, _ in pairs))
        piv_words = list(dict.fromkeys(b for _, b in pairs))
        src_mat, src_found = self.source.lookup(lang, src_words)
        piv_mat, piv_found = self.source.lookup(self.pivot, piv_words)
        src_row = {w: i for i, w in enumerate(src_words)}
        piv_row = {w: i for i, w in enumerate(piv_words)}
        usable = [
            (src_row[a], piv_row[b]) for a, b in pairs if src_found[src_row[a]] and piv_found[piv_row[b]]
        ]
        self.n_pairs_[lang] = len(usable)
        if len(usable) < self.min_pairs:
            logger.warning("%s: only %d usable dictionary pairs; Procrustes skipped", lang, len(usable))
            self.maps_[lang] = None
            return None
        x = src_mat[[i for i, _ in usable]]
        y = piv_mat[[j for _, j in usable]]
        if self.normalize:
            x, y = _unit(x), _unit(y)
        w = procrustes(x, y).astype(np.float32)
        logger.info("%s -> %s: Procrustes fitted on %d pairs", lang, self.pivot, len(usable))
        self.maps_[lang] = w
        return w

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        matrix, found = self.source.lookup(lang, vocabulary)
        w = self.fit_language(lang)
        if self.normalize:
            matrix = _unit(matrix) * found[:, None]
        if w is not None:
            matrix = matrix @ w
        return matrix.astype(np.float32, copy=False), found
