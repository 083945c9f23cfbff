"""Word vectors derived from an encoder (gfun.wordvectors.encoder) on a tiny BERT."""

from __future__ import annotations

import numpy as np
import pytest

from gfun.wordvectors.base import vocabulary_hash
from gfun.wordvectors.encoder import EncoderWordVectors


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    pieces = ["<s>", "<pad>", "</s>", "<unk>", "▁", "▁the", "▁cat", "▁dog", "s", "▁il", "▁gatto", "▁cane",
              "▁query", ":", "a", "b", "c", "d", "e", "g", "i", "l", "o", "t"]  # fmt: skip
    vocab = [(p, 0.0 if i < 4 else -1.0 - 0.1 * i) for i, p in enumerate(pieces)]
    backend = Tokenizer(models.Unigram(vocab, unk_id=3))
    backend.normalizer = normalizers.Lowercase()
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    backend.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>", special_tokens=[("<s>", 0), ("</s>", 2)]
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(pieces), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=40,
    )  # fmt: skip
    folder = tmp_path_factory.mktemp("tiny-encoder")
    transformers.BertModel(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.mark.torch
@pytest.mark.parametrize("method", ["isolated", "subword-mean"])
def test_encoder_word_vectors(tiny_encoder, tmp_path, method, monkeypatch):
    vocab = ["the", "cats", "dog", "", "gatto", "dogs"]
    src = EncoderWordVectors(tiny_encoder, method=method, cache_dir=tmp_path, batch_size=2)
    assert src.dim == 32
    mat = src.vectors("en", vocab)
    assert mat.shape == (6, 32) and mat.dtype == np.float32
    assert not mat[3].any() and src.oov_share_["en"] == pytest.approx(1 / 6)
    np.testing.assert_allclose(np.linalg.norm(mat[[0, 1, 2, 4, 5]], axis=1), 1, rtol=1e-5)
    assert not np.allclose(mat[1], mat[2])
    cached = list((tmp_path / "wordvectors").glob("*.npy"))
    assert len(cached) == 1 and f"-{vocabulary_hash(vocab)}.npy" in cached[0].name
    # a second source reads the cache instead of encoding again
    again = EncoderWordVectors(tiny_encoder, method=method, cache_dir=tmp_path)
    monkeypatch.setattr(EncoderWordVectors, "_isolated", lambda *a: pytest.fail("re-encoded"))
    monkeypatch.setattr(EncoderWordVectors, "_subword_mean", lambda *a: pytest.fail("re-encoded"))
    np.testing.assert_array_equal(again.vectors("en", vocab), mat)


@pytest.mark.torch
def test_encoder_word_vectors_isolated_is_batch_invariant(tiny_encoder):
    torch = pytest.importorskip("torch")
    from gfun.encoders.resolver import load_encoder

    pair = load_encoder(tiny_encoder)
    one = EncoderWordVectors(pair, cache=False, batch_size=1).vectors("en", ["cats", "the", "dog"])
    many = EncoderWordVectors(pair, cache=False, batch_size=3).vectors("en", ["cats", "the", "dog"])
    np.testing.assert_allclose(one, many, atol=1e-5)
    # subword-mean is the mean of the input-embedding rows of the pieces
    sub = EncoderWordVectors(pair, method="subword-mean", cache=False, normalize=False).vectors(
        "en", ["cats"]
    )
    model, tok = pair
    ids = tok("cats", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        ref = model.get_input_embeddings().weight[ids].mean(dim=0).numpy()
    np.testing.assert_allclose(sub[0], ref, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(EncoderWordVectors(pair))
    with pytest.raises(ValueError):
        EncoderWordVectors(method="max")


@pytest.mark.torch
def test_encoder_word_bank_reuses_words_across_vocabularies(tiny_encoder, tmp_path, monkeypatch):
    first = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    mat = first.vectors("en", ["the", "cats", "dog"])
    assert first.bank_path().is_file()
    encoded: list[list[str]] = []
    real = EncoderWordVectors._isolated

    def counting(self, words, *args):  # noqa: ANN001, ANN202
        encoded.append(list(words))
        return real(self, words, *args)

    monkeypatch.setattr(EncoderWordVectors, "_isolated", counting)
    # another process (a new source), another vocabulary, another language: only the new word is encoded
    other = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    got = other.vectors("it", ["dog", "gatto", "cats"])
    assert encoded == [["gatto"]]
    np.testing.assert_allclose(got[[0, 2]], mat[[2, 1]], rtol=1e-6)
    np.testing.assert_allclose(got[1], first.vectors("it", ["gatto"])[0], rtol=1e-5, atol=1e-6)
    with np.load(other.bank_path()) as bank:
        assert sorted(bank["words"].tolist()) == ["cats", "dog", "gatto", "the"]
    # a damaged bank is ignored, not fatal
    other.bank_path().write_bytes(b"not an npz")
    third = EncoderWordVectors(tiny_encoder, cache_dir=tmp_path, batch_size=2)
    assert third.vectors("de", ["hund"]).shape == (1, 32)
