"""Alignment evaluation (gfun.wordvectors.evaluation): P@1, CSLS against hubness."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from gfun.wordvectors.base import WordVectorSource
from gfun.wordvectors.evaluation import evaluate_alignment, translation_precision


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


def test_translation_precision_perfect_and_misses():
    rng = np.random.default_rng(0)
    tgt = rng.normal(size=(20, 8))
    src = tgt[:5] + 0.01 * rng.normal(size=(5, 8))
    src[4] = 0  # out of vocabulary: a miss
    out = translation_precision(src, tgt, [{0}, {1}, {2}, {3}, {4}])
    assert out == {"p1_cosine": 0.8, "p1_csls": 0.8, "n": 5}


def test_csls_reduces_hubness():
    # target 0 is a hub close to every query; CSLS penalises it
    rng = np.random.default_rng(1)
    dim = 30
    queries = rng.normal(size=(40, dim))
    tgt = queries + 1.2 * rng.normal(size=(40, dim))
    hub = queries.mean(axis=0) * 6
    tgt = np.vstack([hub, tgt])
    gold = [{i + 1} for i in range(40)]
    out = translation_precision(queries, tgt, gold, csls_k=5)
    assert out["p1_csls"] >= out["p1_cosine"]


def test_evaluate_alignment_procrustes_fixes_a_rotation():
    table, pairs, _ = _rotated_languages(n=400, noise=0.05)
    source = ArraySource(table)
    plain = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=False)
    refined = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=True)
    assert plain.n_test == 100 and plain.n_candidates == 400 and plain.coverage == 1.0
    assert plain.p1_cosine < 0.2
    assert refined.p1_cosine > 0.95 and refined.p1_csls > 0.95
    assert refined.n_train_pairs == 300
    assert set(refined.as_dict()) >= {"p1_cosine", "p1_csls", "procrustes", "seconds"}
