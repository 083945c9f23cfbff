"""How much of gFun-B's margin over the fine-tuned transformer baseline is the baseline's classification head?

Reads a saved model that holds a fine-tuned B network (a gFun model with a B view, or a ``bert`` /
``bert-tuned`` model) and a debtags run folder (``gfun datasets build debtags --run N --out RUN``), and scores on
the run's test and zero-shot test documents:

* ``bert``: the network as the paper's baseline uses it (its output layer, sigmoid > 0.5);
* ``bert-tuned``: the same output layer with the per-class thresholds of
  :class:`gfun.baselines.transformer.TunedTransformerClassifier` (F1-optimal on out-of-fold scores of output
  layers cross-fitted on the network's vectors of the training documents), computed exactly as its ``fit`` does;
* the saved model itself (``gfun evaluate``'s scores), when it is a gFun model.

No fine-tuning: the network is read from the model, its vectors of the training, test and zero-shot documents
computed once (``--vectors FILE.npz`` keeps them for the next call). Scores are F1M, F1µ, KM, Kµ averaged over
languages, as gfun reports them.

Usage::

    python benchmarks/bench_bert_head.py --model M --run-dir run0 [--vectors run0-b-vectors.npz] [--out CSV] \
        [--views-dir DIR]
"""

from __future__ import annotations

import argparse
import csv
import logging
import sys
from pathlib import Path

import numpy as np

logger = logging.getLogger("bench_bert_head")

MEASURES = ("F1_macro", "F1_micro", "K_macro", "K_micro")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, type=Path, help="saved model with a fine-tuned B network")
    ap.add_argument("--run-dir", required=True, type=Path,
                    help="folder with train.jsonl, test.jsonl, test_zeroshot.jsonl (gfun datasets build)")
    ap.add_argument("--vectors", type=Path, default=None, help=".npz of the network's vectors (read if present, "
                    "else written)")
    ap.add_argument("--out", type=Path, default=None, help="CSV of the rows")
    ap.add_argument("--views-dir", type=Path, default=None,
                    help="also write the vectors as benchmarks/bench_neural.py --load-views reads them (gFun with B "
                    "and other views, without fine-tuning again)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")

    import gfun
    from gfun.baselines.transformer import FineTunedTransformerClassifier, TunedTransformerClassifier
    from gfun.corpus.multilingual import read_jsonl
    from gfun.metrics.evaluation import evaluate
    from gfun.svm.linear import make_folds
    from gfun.svm.thresholds import f1_thresholds

    model = gfun.load_model(args.model)
    if isinstance(model, FineTunedTransformerClassifier):
        tuner = model.tuner_
    else:
        views = [b.view for b in getattr(model, "branches_", []) if b.name == "b"]
        if not views:
            ap.error(f"{args.model} holds no fine-tuned B network (no B view, not a bert model)")
        tuner = views[0].tuner_
    sets = {name: read_jsonl(args.run_dir / f"{file}.jsonl", model.classes_)
            for name, file in (("train", "train"), ("test", "test"), ("zero-shot", "test_zeroshot"))}
    if args.vectors is not None and args.vectors.is_file():
        with np.load(args.vectors) as z:
            Z = {name: z[name.replace("-", "_")] for name in sets}
    else:
        Z = {name: tuner.encode(list(corpus.texts)) for name, corpus in sets.items()}
        if args.vectors is not None:
            np.savez(args.vectors, **{name.replace("-", "_"): v for name, v in Z.items()})
    for name, corpus in sets.items():
        if len(Z[name]) != len(corpus):
            ap.error(f"{args.vectors} holds {len(Z[name])} {name} vectors for {len(corpus)} documents")

    if args.views_dir is not None:
        import json

        args.views_dir.mkdir(parents=True, exist_ok=True)
        for name in sets:
            np.save(args.views_dir / f"b-{name}.npy", Z[name])
        (args.views_dir / "b-langs.json").write_text(
            json.dumps({name: [str(x) for x in corpus.langs] for name, corpus in sets.items()}), encoding="utf-8")
        seconds = getattr(tuner, "fit_seconds_", float("nan"))
        (args.views_dir / "b-fit.json").write_text(json.dumps({"b_fit_s": seconds}), encoding="utf-8")
    head = tuner.net_.head
    W = head.weight.detach().float().numpy().astype(np.float64)
    c = head.bias.detach().float().numpy().astype(np.float64)
    Y = sets["train"].Y.toarray().astype(np.float32)
    epochs = int(tuner.settings.get("head_epochs") or 0) or TunedTransformerClassifier.default_head_epochs
    folds = make_folds(len(Y), TunedTransformerClassifier.cv, getattr(model, "random_state", 0))
    thresholds = f1_thresholds(tuner.cross_fitted_logits(Z["train"], Y, folds, epochs), Y.astype(bool))

    rows = []
    for test in ("test", "zero-shot"):
        corpus = sets[test]
        decisions = {"bert": Z[test] @ W.T + c, "bert-tuned": Z[test] @ W.T + c - thresholds}
        for system, d in decisions.items():
            a = evaluate(corpus.Y.toarray(), d > 0, corpus.lang_array).loc["average"]
            rows.append({"system": system, "test": test, **{k: float(a[k]) for k in MEASURES}})
        if not isinstance(model, FineTunedTransformerClassifier):
            a = evaluate(corpus.Y.toarray(), model.predict(corpus), corpus.lang_array).loc["average"]
            rows.append({"system": "the model (" + type(model).__name__ + ")", "test": test,
                         **{k: float(a[k]) for k in MEASURES}})
    print(f"\n{np.count_nonzero(thresholds)} of {len(thresholds)} thresholds moved\n")
    print("| system | test set | F1M | F1µ | KM | Kµ |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['system']} | {r['test']} | " + " | ".join(f"{r[k]:.3f}" for k in MEASURES) + " |")
    if args.out is not None:
        with open(args.out, "w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
