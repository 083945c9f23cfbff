"""Writers of E5S1 files (:mod:`gfun.encoders.e5s1_format`), for tiny models built inside the tests."""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

from gfun.encoders.e5s1_format import MAGIC, Q4_0_BLOCK, QK, tensor_shapes


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
    blocks = np.empty(len(x), dtype=Q4_0_BLOCK)
    blocks["d"] = d
    blocks["qs"] = q[:, :16] | (q[:, 16:] << 4)
    return blocks.tobytes()



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
    names = list(tensor_shapes(config))
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

