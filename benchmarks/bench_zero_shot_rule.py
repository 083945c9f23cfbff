"""Zero-shot documents decided without the meta-classifier: the mean of the views that serve them, cut per class.

For the documents of languages without training documents, gFun's meta-classifier (an RBF SVM trained on the
training languages' aggregated posteriors) sees inputs unlike those it was trained on. This script fits a
configuration on each run (``bench_pooled.py``'s estimators, caches and seeds), then scores those documents two
ways: the fitted model's own decision, and the mean of the posteriors of every subset of the views that serve them,
cut per class at the F1-optimal threshold of the same mean over the training documents' out-of-fold posteriors
(:func:`gfun.svm.thresholds.f1_thresholds`, taken where ``select`` receives them). It also prints the ranking
quality (micro and macro average precision) of each input, which locates where the ranking is lost.

Usage::

    python benchmarks/bench_zero_shot_rule.py --dataset debtags --data-dir ../shared/data/debtags --runs 0-9 \\
        --config xpef --vector-cache DIR --view-cache DIR --out results/encoder/debtags-zero-shot-rule.csv
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _runs import run_list  # noqa: E402
from bench_pooled import ENCODER_SETTINGS, build  # noqa: E402


def _row(run: int, rule: str, Y: np.ndarray, langs: np.ndarray, predicted: np.ndarray, ranking: np.ndarray) -> dict:
    """The scores of one rule on the zero-shot documents of one run (printed too)."""
    from sklearn.metrics import average_precision_score

    from gfun.metrics.evaluation import evaluate

    scores = evaluate(Y, predicted.astype(int), langs).loc["average"]
    present = Y.sum(0) > 0
    r = {"run": run, "rule": rule, **{m: scores[m] for m in ("F1_macro", "F1_micro", "K_macro", "K_micro")},
         "microAP": average_precision_score(Y[:, present], ranking[:, present], average="micro"),
         "macroAP": average_precision_score(Y[:, present], ranking[:, present], average="macro")}
    print(f"run {run} {rule:28s} " + " ".join(f"{v:.3f}" for k, v in r.items() if k not in ("run", "rule")),
          flush=True)
    return r


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="debtags")
    ap.add_argument("--data-dir")
    ap.add_argument("--runs", default="0")
    ap.add_argument("--config", default="xpef")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--vector-cache")
    ap.add_argument("--view-cache")
    ap.add_argument("--encoder-settings", choices=sorted(ENCODER_SETTINGS), default="auto",
                    help="the E and F views' frozen pass (bench_pooled.py's)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", help="CSV of the rows")
    args = ap.parse_args(argv)
    from gfun.experiments.runner import ExperimentSettings, load_run
    from gfun.funnelling import select
    from gfun.svm.thresholds import f1_thresholds

    seen: dict = {}
    fit = select.Select.fit

    def keep_blocks(self, train, val, Y, meta, **kw):  # the out-of-fold blocks select receives
        seen.update(val=val, Y=np.asarray(Y), names=list(kw.get("names", ())))
        return fit(self, train, val, Y, meta, **kw)

    select.Select.fit = keep_blocks
    rows = []
    for run in run_list(args.runs):
        train, test = load_run(ExperimentSettings(dataset=args.dataset, data_dir=args.data_dir, view_cache=""), run)
        est = build(args.config, run, args)
        if args.view_cache:
            est.set_params(memory=str(Path(args.view_cache) / f"run={run}"))
        est.fit(train)
        zero = np.flatnonzero([lang not in set(train.langs) for lang in test.langs])
        if not len(zero):
            sys.exit(f"{args.dataset} run {run}: no test document of a language without training documents")
        sub = test.subset(zero)
        Y, langs = sub.Y.toarray(), np.asarray(sub.langs)
        blocks = est.view_blocks(list(sub.texts), np.asarray(sub.langs, dtype=object))
        serving = [i for i, m in enumerate(blocks.masks) if m.all()]

        rows.append(_row(run, "meta-classifier", Y, langs, np.asarray(est.predict(sub)), est.decision_function(sub)))
        for k in range(1, len(serving) + 1):
            for views in itertools.combinations(serving, k):
                name = "mean(" + ",".join(seen["names"][i] for i in views) + ")"
                train_mean = np.mean([seen["val"][i] for i in views], axis=0) - 0.5
                test_mean = np.mean([blocks.blocks[i] for i in views], axis=0) - 0.5
                rows.append(_row(run, name, Y, langs, test_mean > f1_thresholds(train_mean, seen["Y"]), test_mean))
        if args.out:
            pd.DataFrame(rows).to_csv(args.out, index=False)
    frame = pd.DataFrame(rows)
    print(frame.drop(columns="run").groupby("rule", sort=False).mean().round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
