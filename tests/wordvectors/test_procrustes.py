"""Procrustes alignment (gfun.wordvectors.procrustes): a rotation recovered, pivot language kept."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gfun.wordvectors.base import WordVectorSource
from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes


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


def _letters(i: int) -> str:
    """0 -> 'aa', 1 -> 'ab', ...: alphabetic word suffixes (dictionaries keep alphabetic words only)."""
    return "abcdefghijklmnopqrstuvwxyz"[i // 26 % 26] + "abcdefghijklmnopqrstuvwxyz"[i % 26]


def _rotated_languages(n: int = 300, dim: int = 16, seed: int = 0, noise: float = 0.0):
    """English vectors, and 'it' = the same vectors rotated (+ noise), words en{i} <-> it{i}."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n, dim)).astype(np.float32)
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    other = base @ q.T.astype(np.float32) + noise * rng.normal(size=(n, dim)).astype(np.float32)
    table = {
        "en": {f"en{_letters(i)}": base[i] for i in range(n)},
        "it": {f"it{_letters(i)}": other[i] for i in range(n)},
    }
    pairs = [(f"en{_letters(i)}", f"it{_letters(i)}") for i in range(n)]
    return table, pairs, q


def test_procrustes_recovers_a_rotation():
    table, pairs, q = _rotated_languages()
    x = np.stack([table["it"][b] for _, b in pairs])
    y = np.stack([table["en"][a] for a, _ in pairs])
    w = procrustes(x, y)
    np.testing.assert_allclose(w @ w.T, np.eye(w.shape[0]), atol=1e-8)
    np.testing.assert_allclose(x @ w, y, atol=1e-4)
    with pytest.raises(ValueError):
        procrustes(x, y[:-1])


def test_procrustes_aligned_source_maps_only_non_pivot_languages():
    table, pairs, _ = _rotated_languages(noise=0.05)
    base = ArraySource(table)
    aligned = ProcrustesAligned(base, {"it": [(b, a) for a, b in pairs[:200]]}, pivot="en")
    assert aligned.dim == 16 and "procrustes" in aligned.name
    en = aligned.vectors("en", [a for a, _ in pairs[200:]])
    it = aligned.vectors("it", [b for _, b in pairs[200:]])
    cos = np.sum(en * it, axis=1) / np.linalg.norm(en, axis=1) / np.linalg.norm(it, axis=1)
    assert cos.min() > 0.95
    assert aligned.n_pairs_["it"] == 200
    assert aligned.maps_["en"] is None
    # a language without dictionary passes through (unit-normalised)
    lone = ProcrustesAligned(base, {}, pivot="en").vectors("it", ["itaa"])
    np.testing.assert_allclose(lone[0], table["it"]["itaa"] / np.linalg.norm(table["it"]["itaa"]), rtol=1e-5)
