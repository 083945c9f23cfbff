"""Removal of the first principal component of document embeddings (SIF, section 3.6 of the paper).

Arora et al. (2017) build a sentence embedding as a weighted average of word embeddings and then
subtract its projection on the first singular vector of the matrix of embeddings ("common
component removal"), a direction that word-embedding training tends to fill with meaningless,
frequency-related mass. gFun applies the same step to the TF-IDF-weighted averages of the M and
W views.

As in the reference implementation of SIF (``TruncatedSVD(n_components=1)``), the component is
the first right singular vector of the *uncentred* matrix. Unlike the authors' gFun code, which
recomputes the component on every batch it transforms (so that test documents alter each other's
views), a :class:`CommonComponents` is fitted once on the training views and then applied unchanged.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["SIF_MODES", "CommonComponents", "first_component", "remove_component"]


def first_component(Z: np.ndarray) -> np.ndarray:
    """First right singular vector of ``Z`` (uncentred), as a unit vector with a fixed sign.

    Parameters
    ----------
    Z : ndarray of shape (n, d)

    Returns
    -------
    ndarray of shape (d,), float64
        Unit vector whose largest-magnitude coordinate is positive (so that refits are identical);
        all zeros when ``Z`` is all zeros or has no rows.
    """
    Z = np.asarray(Z, dtype=np.float64)
    d = Z.shape[1]
    if Z.shape[0] == 0 or not np.any(Z):
        return np.zeros(d)
    gram = Z.T @ Z  # (d, d): cheaper than an SVD of Z when n >> d
    _, vecs = np.linalg.eigh(gram)
    u = vecs[:, -1]
    if u[np.argmax(np.abs(u))] < 0:
        u = -u
    return u / np.linalg.norm(u)


def remove_component(Z: np.ndarray, u: np.ndarray) -> np.ndarray:
    """``Z - (Z u) u^T``: rows of ``Z`` without their projection on the unit vector ``u``.

    An all-zero row stays zero; a zero ``u`` leaves ``Z`` unchanged.
    """
    Z = np.asarray(Z, dtype=np.float64)
    return Z - np.outer(Z @ u, u)


SIF_MODES = ("language", "global", "none")

SIFMode = Literal["language", "global", "none"]


class CommonComponents:
    """The SIF step of a view: components fitted on the training views, removed from any view.

    Parameters
    ----------
    mode : {"language", "global", "none"}
        ``"language"``: one component per training language, fitted on that language's training
        views (what the authors' code does per batch, here fitted once); ``"global"``: one
        component fitted on the training views of all languages stacked; ``"none"``: no removal.
        With ``"language"``, a language without training documents (zero-shot) gets the global
        component.

    Attributes
    ----------
    global_ : ndarray of shape (d,)
    per_language_ : dict of str to ndarray of shape (d,)
    """

    def __init__(self, mode: SIFMode = "language") -> None:
        if mode not in SIF_MODES:
            raise ValueError(f"sif must be one of {SIF_MODES}, got {mode!r}")
        self.mode = mode
        self.global_: np.ndarray | None = None
        self.per_language_: dict[str, np.ndarray] = {}

    def fit(self, views: dict[str, np.ndarray]) -> CommonComponents:
        """Fit on the training views of each language (``lang -> (n_lang, d)``)."""
        stacked = np.vstack(list(views.values()))
        self.global_ = first_component(stacked)
        self.per_language_ = ({lang: first_component(Z) for lang, Z in views.items()}
                              if self.mode == "language" else {})
        return self

    def component(self, lang: str) -> np.ndarray | None:
        """The component removed from the views of ``lang`` (None: nothing removed)."""
        if self.mode == "none":
            return None
        if self.mode == "language" and lang in self.per_language_:
            return self.per_language_[lang]
        return self.global_

    def transform(self, Z: np.ndarray, lang: str) -> np.ndarray:
        """Views of ``lang`` without their common component (float32)."""
        u = self.component(lang)
        out = Z if u is None else remove_component(Z, u)
        return np.asarray(out, dtype=np.float32)

    def get_state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """JSON-able metadata and arrays (``global``, ``lang/<code>``)."""
        arrays = {f"lang/{lang}": u for lang, u in self.per_language_.items()}
        if self.global_ is not None:
            arrays["global"] = self.global_
        return {"mode": self.mode, "languages": sorted(self.per_language_)}, arrays

    @classmethod
    def from_state(cls, meta: dict, arrays: dict[str, np.ndarray]) -> CommonComponents:
        """Rebuild from :meth:`get_state` output."""
        obj = cls(meta["mode"])
        obj.global_ = np.asarray(arrays["global"], dtype=np.float64) if "global" in arrays else None
        obj.per_language_ = {lang: np.asarray(arrays[f"lang/{lang}"], dtype=np.float64)
                             for lang in meta["languages"]}
        return obj
