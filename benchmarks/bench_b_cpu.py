"""The B view on a CPU (issue 13): levers of the frozen pass, and the curve of partial fine-tuning over k.

Two parts, each writing a CSV and a text table under ``results/``:

``levers`` (``results/bench-b-cpu-levers.*``)
    Milliseconds per document of the frozen encoder's full forward pass (multilingual-e5-small, 12 layers,
    no gradient) on a sample of debtags run 0's training documents, for: attention (eager / SDPA), batch order
    (random / sorted by length), maximum length (128 / a percentile of the corpus's token lengths), torch threads,
    dynamic int8 quantisation of the Linear layers (with the cosine of its pooled vectors to the float32 ones).

``curve`` (``results/bench-b-cpu-curve.*``)
    gFun-B, gFun-XMB and the fine-tuned transformer (``bert``) on debtags run 0 for ``k`` trainable top layers.
    The frozen pass runs ONCE, at layer ``12 - max(k)``, over the training, test and zero-shot documents; the
    states at layer ``12 - k`` of every other ``k`` are derived from it (the layers in between run once more) and
    put into the view's frozen-pass cache, so that every point reads them. ``bert`` is the fine-tuned network of
    gFun-B's B view used as the classifier (same settings, same seed: what a separate fine-tuning would give).
    Per point: F1M/F1µ of the three, seconds of the frozen pass (shared; its share is reported once), of the
    fine-tuning, of the whole gFun fit and predict, peak RSS. ``--save-bvectors DIR`` writes the B vectors of the
    run's train, test and zero-shot documents for one ``k`` (``--save-k``) as ``.npy`` with their ids and languages.

Usage::

    python benchmarks/bench_b_cpu.py levers --sample 300
    python benchmarks/bench_b_cpu.py curve --run-dir RUN0 --ks 0,1,2 --epochs 3
"""

from __future__ import annotations

import argparse
import csv
import json
import logging
import resource
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
logger = logging.getLogger("bench_b_cpu")
MODEL = "multilingual-e5-small"


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _write(rows: list[dict], stem: str, title: str) -> None:
    out = ROOT / "results"
    out.mkdir(exist_ok=True)
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with open(out / f"{stem}.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    widths = {k: max(len(k), *(len(_fmt(r.get(k))) for r in rows)) for k in keys}
    lines = [title, "", "  ".join(k.ljust(widths[k]) for k in keys)]
    lines += ["  ".join(_fmt(r.get(k)).ljust(widths[k]) for k in keys) for r in rows]
    text = "\n".join(lines) + "\n"
    (out / f"{stem}.txt").write_text(text, encoding="utf-8")
    sys.stdout.write(text)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}" if abs(v) < 10 else f"{v:.1f}"
    return "" if v is None else str(v)


def _tokenize(tokenizer: Any, texts: list[str], max_length: int) -> list[np.ndarray]:
    tok = tokenizer.backend_tokenizer
    tok.no_padding()
    tok.enable_truncation(max_length)
    return [np.asarray(e.ids, dtype=np.int64) for e in tok.encode_batch(texts)]


# ---------------------------------------------------------------------------------------------- levers
def levers(args: argparse.Namespace) -> None:
    import torch

    from gfun.corpus.multilingual import read_corpus
    from gfun.encoders.frozen import FrozenPass, pad_ids
    from gfun.encoders.resolver import load_encoder

    train = read_corpus(Path(args.run_dir) / "train.jsonl")
    encoder, tokenizer = load_encoder(MODEL)
    full = _tokenize(tokenizer, list(train.texts), 512)
    lengths = np.asarray([len(x) for x in full])
    pct = {p: int(np.percentile(lengths, p)) for p in (50, 90, 95, 99)}
    logger.info("token lengths of %d training documents: %s, max %d", len(lengths), pct, lengths.max())
    rng = np.random.RandomState(0)
    sample = [train.texts[i] for i in rng.choice(len(train.texts), args.sample, replace=False)]
    pad = tokenizer.pad_token_id
    cpu = torch.device("cpu")
    n_layers = encoder.config.num_hidden_layers

    def pooled(fp: FrozenPass, ids: list[np.ndarray]) -> np.ndarray:
        states = fp.states(ids)
        return np.stack([s.astype(np.float32).mean(0) for s in states])

    def timed(name: str, *, attn: str, max_length: int, order: str, threads: int, quantize: bool,
              batch: int = 32) -> dict:
        torch.set_num_threads(threads)
        encoder.set_attn_implementation(attn)
        ids = _tokenize(tokenizer, sample, max_length)
        fp = FrozenPass(encoder, n_layers, pad_id=pad, device=cpu, quantize=quantize, batch_size=batch,
                        fingerprint="x")
        if order == "random":  # batches in corpus order: padding to the longest of random documents
            fp.batches = lambda ids: [np.arange(len(ids))[i:i + batch] for i in range(0, len(ids), batch)]
        fp.states(ids[:batch])  # warm-up
        t0 = time.perf_counter()
        vec = pooled(fp, ids)
        sec = time.perf_counter() - t0
        tokens = int(sum(len(x) for x in ids))
        row = {"lever": name, "attention": attn, "max_length": max_length, "order": order, "threads": threads,
               "int8": quantize, "docs": len(ids), "tokens": tokens, "seconds": round(sec, 2),
               "ms_per_doc": round(1000 * sec / len(ids), 2), "peak_mb": round(_peak_mb())}
        logger.info("%s", row)
        return row, vec

    cap = min(args.max_length_cap, pct[95])
    rows = []
    base, ref = timed("baseline (eager, random order)", attn="eager", max_length=128, order="random", threads=2,
                      quantize=False)
    rows.append(base)
    rows.append(timed("length-sorted batches", attn="eager", max_length=128, order="sorted", threads=2,
                      quantize=False)[0])
    r, ref_sorted = timed("+ SDPA attention", attn="sdpa", max_length=128, order="sorted", threads=2, quantize=False)
    rows.append(r)
    rows.append(timed("+ SDPA, 1 thread", attn="sdpa", max_length=128, order="sorted", threads=1, quantize=False)[0])
    rows.append(timed(f"+ SDPA, length p95 = {pct[95]} (cap {args.max_length_cap})", attn="sdpa", max_length=cap,
                      order="sorted", threads=2, quantize=False)[0])
    rows.append(timed("+ SDPA, length 256", attn="sdpa", max_length=256, order="sorted", threads=2,
                      quantize=False)[0])
    r, q = timed("+ SDPA, int8 dynamic quantisation", attn="sdpa", max_length=128, order="sorted", threads=2,
                 quantize=True)
    cos = np.sum(q * ref_sorted, 1) / (np.linalg.norm(q, axis=1) * np.linalg.norm(ref_sorted, axis=1))
    r["int8_cosine_mean"] = round(float(cos.mean()), 4)
    r["int8_cosine_min"] = round(float(cos.min()), 4)
    rows.append(r)
    encoder.set_attn_implementation("sdpa")
    _write(rows, "bench-b-cpu-levers",
           f"Frozen pass of {MODEL} (all {n_layers} layers, no gradient), {args.sample} debtags run 0 training "
           f"documents, CPU; token lengths (training set, untruncated): p50 {pct[50]} p90 {pct[90]} p95 {pct[95]} "
           f"p99 {pct[99]} max {int(lengths.max())}")
    del pad_ids


# ---------------------------------------------------------------------------------------------- curve
def curve(args: argparse.Namespace) -> None:
    import torch

    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import read_corpus
    from gfun.encoders.frozen import FrozenPass, encoder_layers, pad_states, run_layers
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.funnelling.meta import default_meta
    from gfun.metrics.evaluation import evaluate
    from gfun.metrics.measures import f1_score
    from gfun.views.transformer import TransformerView

    run = Path(args.run_dir)
    classes = read_classes(run / "classes.json")
    train = read_corpus(run / "train.jsonl", classes)
    test = read_corpus(run / "test.jsonl", classes)
    zs = read_corpus(run / "test_zeroshot.jsonl", classes)
    if args.per_language:  # a sample: up to N training and N test documents per language
        from gfun.experiments.runner import sample_corpus

        rng = np.random.RandomState(0)
        train = sample_corpus(train, args.per_language, train.languages, rng)
        test = sample_corpus(test, args.per_language, test.languages, rng)
    ks = sorted(int(k) for k in args.ks.split(","))
    cache = Path(args.cache)
    common = {"model": MODEL, "preset": "cpu", "max_epochs": args.epochs, "random_state": 0, "device": "cpu",
              "frozen_cache": str(cache), "quantize": args.quantize, "progress": False}
    # ---- the frozen pass once, at the lowest cut, for every document of the run
    probe = TransformerView(**common, trainable_layers=max(ks))
    tuner = probe._tuner()
    from gfun.encoders.resolver import load_encoder

    encoder, hf_tok = load_encoder(MODEL)
    tuner.device_ = torch.device("cpu")
    tuner._setup_tokenizer(hf_tok, encoder.config)
    parts = {"train": train, "test": test, "zeroshot": zs}
    ids = {name: tuner._tokenize(list(c.texts)) for name, c in parts.items()}
    n_layers = len(encoder_layers(encoder))
    low = n_layers - max(ks)
    fp_low = FrozenPass(encoder, low, pad_id=tuner.pad_id_, device=tuner.device_, cache_dir=cache,
                        quantize=args.quantize, batch_size=64, progress=True)
    t0 = time.perf_counter()
    states_low = {name: fp_low.states(x) for name, x in ids.items()}
    frozen_s = time.perf_counter() - t0
    n_docs = sum(len(x) for x in ids.values())
    logger.info("frozen pass to layer %d over %d documents: %.1f s (%.1f ms/doc)", low, n_docs, frozen_s,
                1000 * frozen_s / n_docs)
    derive_s = {}
    for k in ks:
        cut = n_layers - k
        if cut == low:
            derive_s[k] = 0.0
            continue
        fp = FrozenPass(encoder, cut, pad_id=tuner.pad_id_, device=tuner.device_, cache_dir=cache,
                        quantize=args.quantize)
        t0 = time.perf_counter()
        for name, x in ids.items():
            path = fp._cache_path(x)
            if path.is_file():
                continue
            out = [None] * len(x)
            for batch in fp.batches(x):
                h, mask = pad_states([states_low[name][i] for i in batch], "cpu")
                with torch.inference_mode():
                    h = run_layers(encoder, [layer.eval() for layer in fp.layers[low:cut]], h, mask)
                h = h.to(torch.float16).numpy()
                for r, i in enumerate(batch):
                    out[i] = h[r, :len(x[i])].copy()
            offsets = np.zeros(len(out) + 1, dtype=np.int64)
            offsets[1:] = np.cumsum([len(s) for s in out])
            fp._write_cache(path, np.concatenate(out), offsets)
        derive_s[k] = time.perf_counter() - t0
        logger.info("states at layer %d derived in %.1f s", cut, derive_s[k])
    del states_low, encoder
    rows = []
    memory = cache / "joblib"
    for k in ks:
        row: dict[str, Any] = {"k": k, "epochs": args.epochs if k else 0, "int8": args.quantize}
        bparams = {**common, "trainable_layers": k}
        if k == 0:
            bparams["max_epochs"] = 1  # only the output layer trains (bert's classifier); the view needs none
        for views in args.configs.split(","):
            gf = GeneralizedFunnelling(views=views, meta=default_meta().set_params(C=args.meta_C),
                                       random_state=0, memory=str(memory),
                                       view_params={"b": bparams, "m": {"source": "e5-subword"}})
            t0 = time.perf_counter()
            gf.fit(train)
            fit_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            pred = gf.predict(test)
            pred_s = time.perf_counter() - t0
            zpred = gf.predict(zs)
            # as `gfun evaluate` and the paper: per language, then averaged over languages
            avg = evaluate(test.Y, pred, test.langs).loc["average"]
            row[f"{views}_F1M"] = round(float(avg["F1_macro"]), 4)
            row[f"{views}_F1u"] = round(float(avg["F1_micro"]), 4)
            row[f"{views}_zs_F1u"] = round(float(evaluate(zs.Y, zpred, zs.langs).loc["average"]["F1_micro"]), 4)
            row[f"{views}_pooled_F1M"] = round(float(f1_score(test.Y, pred, average="macro")), 4)
            row[f"{views}_fit_s"] = round(fit_s, 1)
            row[f"{views}_predict_s"] = round(pred_s, 1)
            if views == "b":  # (in xmb, select may have dropped B: it keeps only the views documents need)
                bview = next(v for v in gf.views_ if v.letter == "b")
                tuner = bview.tuner_
                row["finetune_s"] = round(float(tuner.fit_seconds_), 1)
                row["epoch_s"] = round(float(np.mean([h["seconds"] for h in tuner.history_])), 1)
                bert_pred = (tuner.logits(list(test.texts)) > 0).astype(np.int8)
                bert_avg = evaluate(test.Y, bert_pred, test.langs).loc["average"]
                row["bert_F1M"] = round(float(bert_avg["F1_macro"]), 4)
                row["bert_F1u"] = round(float(bert_avg["F1_micro"]), 4)
                if args.save_bvectors and k == args.save_k:
                    _save_vectors(Path(args.save_bvectors), bview, parts, k, args)
        row["derive_s"] = round(derive_s[k], 1)
        row["peak_mb"] = round(_peak_mb())
        logger.info("%s", row)
        rows.append(row)
        sample = f" (sample: {len(train)} training, {len(test)} test documents)" if args.per_language else ""
        _write(rows, args.stem,
               f"gFun-B / gFun-XMB / bert on debtags run 0{sample}, k top layers of {MODEL} fine-tuned (cpu preset, "
               f"{args.epochs} epochs, meta C {args.meta_C}, int8 frozen part {args.quantize}), 2 CPU cores; "
               f"frozen pass to layer {low} over {n_docs} documents (train+test+zero-shot) ONCE: {frozen_s:.1f} s "
               f"({1000 * frozen_s / n_docs:.1f} ms/doc), "
               "shared by every point; xmb_fit_s reuses the B branch of b (joblib memory)")


def vectors(args: argparse.Namespace) -> None:
    """The B vectors of a saved gFun model (``--model``) for the run's train, test and zero-shot documents."""
    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import read_corpus
    from gfun.persistence.loading import load_model

    run = Path(args.run_dir)
    classes = read_classes(run / "classes.json")
    parts = {name: read_corpus(run / f"{file}.jsonl", classes)
             for name, file in (("train", "train"), ("test", "test"), ("zeroshot", "test_zeroshot"))}
    model = load_model(args.model)
    view = next((v for v in model.views_ if v.letter == "b"), None)
    if view is None:
        raise SystemExit(f"{args.model} has no B view (select kept {model.selected_views_} and dropped "
                         f"{getattr(model, 'dropped_views_', [])})")
    k = view.tuner_.trainable_layers_
    _save_vectors(Path(args.save_bvectors), view, parts, k, args,
                  how=f"the B view of the model saved by `gfun train ... --views xmb --word-vectors e5-subword` "
                  f"(no preset named: the cpu preset), read back from {args.model} by\n"
                  f"python benchmarks/bench_b_cpu.py vectors --model {args.model} --save-bvectors "
                  f"{args.save_bvectors}\nParameters: {json.dumps(view.get_params(), default=str)}\n")


def _save_vectors(out: Path, view: Any, parts: dict, k: int, args: argparse.Namespace, how: str | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, corpus in parts.items():
        Z = view.transform(list(corpus.texts), corpus.lang_array)
        np.save(out / f"{name}.npy", Z.astype(np.float32))
        with open(out / f"{name}.ids.jsonl", "w", encoding="utf-8") as fh:
            for doc_id, lang in zip(corpus.ids, corpus.langs, strict=True):
                fh.write(json.dumps({"id": doc_id, "lang": lang}) + "\n")
    how = how or (f"python benchmarks/bench_b_cpu.py curve --run-dir {args.run_dir} --ks {args.ks} "
                  f"--epochs {args.epochs} --save-k {k}\n")
    (out / "README.txt").write_text(
        f"B-view vectors (384-d, float32) of debtags run 0, same order as the run's train.jsonl / test.jsonl /\n"
        f"test_zeroshot.jsonl (ids and languages in <part>.ids.jsonl).\n"
        f"Made by: {how}"
        f"View: multilingual-e5-small, lower {12 - k} layers frozen (int8 dynamic quantisation when the view says\n"
        f"quantize), their states computed once; top {k} layer(s) + linear head fine-tuned by BCE on the 6,491\n"
        f"training documents (3 epochs in the cpu preset), mean pooling, no prefix, max length 128; the training\n"
        f"vectors are the fine-tuned network's vectors of its own training documents (in-sample).\n",
        encoding="utf-8")
    logger.info("B vectors written to %s", out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("part", choices=("levers", "curve", "vectors"))
    p.add_argument("--model", default=None, help="vectors: a saved gFun model with a B view")
    p.add_argument("--run-dir", default=str(ROOT / ".scratch" / "run0"),
                   help="debtags run 0 (gfun datasets build debtags --run 0 --out DIR)")
    p.add_argument("--sample", type=int, default=300)
    p.add_argument("--max-length-cap", type=int, default=256)
    p.add_argument("--ks", default="0,1,2")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--meta-C", type=lambda v: v if v == "cv" else float(v), default=1.0, help="a number or 'cv'")
    p.add_argument("--cache", default=str(ROOT / ".scratch" / "b-cpu-cache"))
    p.add_argument("--quantize", action=argparse.BooleanOptionalAction, default=True,
                   help="int8 dynamic quantisation of the frozen layers (default on)")
    p.add_argument("--per-language", type=int, default=None,
                   help="curve on a sample: up to N training and N test documents per language")
    p.add_argument("--configs", default="b,xmb", help="curve: gFun configurations (b must come first)")
    p.add_argument("--stem", default="bench-b-cpu-curve", help="name of the curve's CSV/txt under results/")
    p.add_argument("--save-bvectors", default=None)
    p.add_argument("--save-k", type=int, default=1)
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S")
    {"levers": levers, "curve": curve, "vectors": vectors}[args.part](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
