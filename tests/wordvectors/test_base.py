"""Word-vector sources (gfun.wordvectors.base): vocabulary hashes and the out-of-vocabulary share."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.wordvectors.base import vocabulary_hash
from tests.wordvectors.aligned import ArraySource


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
