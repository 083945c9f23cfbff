"""The contract of a source of aligned word vectors."""

from __future__ import annotations

import hashlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

__all__ = ["WordVectorSource", "vocabulary_hash"]

logger = logging.getLogger(__name__)


def vocabulary_hash(vocabulary: Sequence[str]) -> str:
    """Return a short, order-sensitive digest of a vocabulary (rows of a matrix follow its order).

    Parameters
    ----------
    vocabulary : sequence of str

    Returns
    -------
    str
        20 hexadecimal characters.
    """
    h = hashlib.sha1(usedforsecurity=False)
    h.update(str(len(vocabulary)).encode())
    for word in vocabulary:
        h.update(b"\x00")
        h.update(word.encode("utf-8", "surrogatepass"))
    return h.hexdigest()[:20]


class WordVectorSource(ABC):
    """A source of word vectors aligned across languages.

    Subclasses implement :meth:`lookup`; :meth:`vectors` is what the word-embedding views call.

    Attributes
    ----------
    oov_share_ : dict
        Language -> share of the last requested vocabulary that got a zero row (out of vocabulary).
    """

    #: Short identifier used in cache keys and reports.
    name: str = "source"

    def __init__(self) -> None:
        self.oov_share_: dict[str, float] = {}

    @property
    @abstractmethod
    def dim(self) -> int:
        """Dimensionality of the vectors."""

    @abstractmethod
    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Vectors of a vocabulary and which words were found.

        Parameters
        ----------
        lang : str
            ISO 639-1 code.
        vocabulary : sequence of str

        Returns
        -------
        matrix : numpy.ndarray
            float32, shape ``(len(vocabulary), dim)``; zero rows for words not found.
        found : numpy.ndarray
            bool, shape ``(len(vocabulary),)``.
        """

    def vectors(self, lang: str, vocabulary: Sequence[str]) -> np.ndarray:
        """Matrix of aligned vectors for a vocabulary, zero rows for out-of-vocabulary words.

        Parameters
        ----------
        lang : str
            ISO 639-1 code.
        vocabulary : sequence of str
            Row order of the result (e.g. the columns of a TF-IDF matrix).

        Returns
        -------
        numpy.ndarray
            float32, shape ``(len(vocabulary), dim)``.  The OOV share is logged and kept in
            ``oov_share_[lang]``.
        """
        vocabulary = list(vocabulary)
        matrix, found = self.lookup(lang, vocabulary)
        share = float(1.0 - found.mean()) if len(vocabulary) else 0.0
        if not hasattr(self, "oov_share_"):
            self.oov_share_ = {}
        self.oov_share_[lang] = share
        logger.info(
            "%s [%s]: %d words, %.1f%% out of vocabulary", self.name, lang, len(vocabulary), 100 * share
        )
        return matrix

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"
