"""Word-vector sources (gfun.wordvectors.base): vocabulary hashes and the out-of-vocabulary share."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gfun.wordvectors.base import WordVectorSource, vocabulary_hash


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


class ArraySource(WordVectorSource):
    """In-memory source: language -> {word: vector}."""

    name = "array"

    def __init__(self, table: dict[str, dict[str, np.ndarray]]) -> None:
        super().__init__()
        self.table = table
        self.calls = 0

    @property
    def dim(self) -> int:
        return len(next(iter(next(iter(self.table.values())).values())))

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        self.calls += 1
        words = self.table[lang]
        found = np.array([w in words for w in vocabulary], dtype=bool)
        mat = np.zeros((len(vocabulary), self.dim), dtype=np.float32)
        for i, w in enumerate(vocabulary):
            if w in words:
                mat[i] = words[w]
        return mat, found


def test_vocabulary_hash_is_order_sensitive():
    assert vocabulary_hash(["a", "b"]) != vocabulary_hash(["b", "a"])
    assert vocabulary_hash(["ab"]) != vocabulary_hash(["a", "b"])
    assert vocabulary_hash(["a", "b"]) == vocabulary_hash(("a", "b"))


def test_vectors_reports_oov_share():
    src = ArraySource({"en": {"a": np.ones(4), "b": np.full(4, 2.0)}})
    mat = src.vectors("en", ["a", "zz", "b", "yy"])
    assert mat.shape == (4, 4) and mat.dtype == np.float32
    assert np.all(mat[1] == 0) and np.all(mat[3] == 0)
    assert src.oov_share_["en"] == pytest.approx(0.5)
