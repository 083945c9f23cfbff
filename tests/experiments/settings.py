"""Small experiment settings for the tests: a tiny sample of the bundled demo data and stand-in word vectors."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from gfun.experiments.runner import ExperimentSettings
from gfun.wordvectors.base import WordVectorSource

#: Training and test documents per language, and languages, of the tiny sample.
TINY = (40, 20, 3)


def tiny(runs: int = 1, **kw) -> ExperimentSettings:
    return ExperimentSettings(dataset="demo", runs=runs, meta_C=1.0, seed=0, sample=TINY, **kw)


class HashedVectors(WordVectorSource):
    """A stand-in word-vector source: a seeded random vector per word, in every language."""

    @property
    def dim(self) -> int:
        return 8

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        rows = [np.random.RandomState(int(hashlib.md5(w.encode()).hexdigest()[:8], 16)).randn(self.dim)
                for w in vocabulary]
        return (np.asarray(rows, dtype=np.float32).reshape(len(vocabulary), self.dim),
                np.ones(len(vocabulary), dtype=bool))
