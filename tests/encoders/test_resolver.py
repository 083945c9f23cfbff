"""Finding encoders (gfun.encoders.resolver): the cache folder, local folders, the local Hugging Face cache, and
never a download.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.encoders._cache import gfun_cache_dir
from gfun.encoders.resolver import resolve_encoder
from gfun.errors import EncoderNotAvailableError


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Never write into the user's gfun cache (a test passing cache_dir explicitly still wins)."""
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path_factory.mktemp("gfun-cache")))


def test_cache_dir_precedence(monkeypatch, tmp_path):
    monkeypatch.setenv("GFUN_CACHE", str(tmp_path / "g"))
    assert gfun_cache_dir() == tmp_path / "g"
    assert gfun_cache_dir(subdir="encoders") == tmp_path / "g" / "encoders"
    assert gfun_cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("GFUN_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert gfun_cache_dir() == tmp_path / "xdg" / "gfun"


def _tiny_bert_folder(path: Path) -> Path:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "the", "cat", "dog", "gatto", "cane"]
    backend = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)]
    )
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=len(words), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=32,
    )  # fmt: skip
    transformers.BertModel(config).save_pretrained(path)
    tok.save_pretrained(path)
    return path


@pytest.mark.torch
def test_load_encoder_from_local_folder(tmp_path):
    from gfun.encoders.pooling import encode_texts
    from gfun.encoders.resolver import load_encoder

    folder = _tiny_bert_folder(tmp_path / "bert")
    model, tok = load_encoder(folder)
    assert not model.training
    vecs = encode_texts(model, tok, ["the cat", "the dog", "cat"], batch_size=2)
    assert vecs.shape == (3, 32) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1, rtol=1e-5)
    # batching and padding do not change a text's vector
    alone = encode_texts(model, tok, ["the cat"], batch_size=1)
    np.testing.assert_allclose(alone[0], vecs[0], atol=1e-5)
    cls = encode_texts(model, tok, ["the cat"], pooling="cls", normalize=False)
    assert cls.shape == (1, 32)
    with pytest.raises(ValueError):
        encode_texts(model, tok, ["x"], pooling="max")


def test_resolver_never_downloads(tmp_path):
    with pytest.raises(EncoderNotAvailableError, match="never downloads") as info:
        resolve_encoder("gfun-test-org/no-such-model-xyz")
    assert "multilingual-e5-small" in str(info.value)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EncoderNotAvailableError, match="config.json"):
        resolve_encoder(tmp_path / "empty")


def test_resolver_uses_the_local_hf_cache(tmp_path, monkeypatch):
    hub = pytest.importorskip("huggingface_hub")
    snapshot = tmp_path / "models--org--tiny" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "models--org--tiny" / "refs").mkdir()
    (tmp_path / "models--org--tiny" / "refs" / "main").write_text("a" * 40)
    monkeypatch.setattr(hub.constants, "HF_HUB_CACHE", str(tmp_path))
    assert resolve_encoder("org/tiny") == snapshot
