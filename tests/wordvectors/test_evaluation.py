"""Alignment evaluation (gfun.wordvectors.evaluation): P@1, CSLS against hubness."""

from __future__ import annotations

import numpy as np

from gfun.wordvectors.evaluation import evaluate_alignment, translation_precision
from tests.wordvectors.aligned import ArraySource, rotated_languages


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
    table, pairs, _ = rotated_languages(n=400, noise=0.05)
    source = ArraySource(table)
    plain = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=False)
    refined = evaluate_alignment(source, pairs, src="en", tgt="it", n_test=100, use_procrustes=True)
    assert plain.n_test == 100 and plain.n_candidates == 400 and plain.coverage == 1.0
    assert plain.p1_cosine < 0.2
    assert refined.p1_cosine > 0.95 and refined.p1_csls > 0.95
    assert refined.n_train_pairs == 300
    assert set(refined.as_dict()) >= {"p1_cosine", "p1_csls", "procrustes", "seconds"}
