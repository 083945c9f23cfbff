"""Word vectors for the tests: an in-memory source, and a language that is a rotation of English."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gfun.wordvectors.base import WordVectorSource


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


def letters(i: int) -> str:
    """0 -> 'aa', 1 -> 'ab', ...: alphabetic word suffixes (dictionaries keep alphabetic words only)."""
    return "abcdefghijklmnopqrstuvwxyz"[i // 26 % 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26]


def rotated_languages(n: int = 300, dim: int = 16, seed: int = 0, noise: float = 0.0):
    """English vectors, and 'it' = the same vectors rotated (+ noise), words en{i} <-> it{i}."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    other = base @ q.T.astype(np.float32) + noise * rng.normal(size=(n, dim)).astype(np.float32)
    table = {
        "en": {f"en{letters(i)}": base[i] for i in range(n)},
        "it": {f"it{letters(i)}": other[i] for i in range(n)},
    }
    pairs = [(f"en{letters(i)}", f"it{letters(i)}") for i in range(n)]
    return table, pairs, q
