"""Procrustes alignment (gfun.wordvectors.procrustes): a rotation recovered, pivot language kept."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.wordvectors.procrustes import ProcrustesAligned, procrustes
from tests.wordvectors.aligned import ArraySource, rotated_languages


def test_procrustes_recovers_a_rotation():
    table, pairs, q = rotated_languages()
    x = np.stack([table["it"][b] for _, b in pairs])
    y = np.stack([table["en"][a] for a, _ in pairs])
    w = procrustes(x, y)
    np.testing.assert_allclose(w @ w.T, np.eye(w.shape[0]), atol=1e-8)
    np.testing.assert_allclose(x @ w, y, atol=1e-4)
    with pytest.raises(ValueError):
        procrustes(x, y[:-1])


def test_procrustes_aligned_source_maps_only_non_pivot_languages():
    table, pairs, _ = rotated_languages(noise=0.05)
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
