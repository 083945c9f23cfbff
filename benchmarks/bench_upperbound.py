"""UpperBound against gFun-X on a parallel dataset, and where the difference comes from: the data or the learner.

Rows (one run; scores averaged over the test languages, each test document scored in its own language):

* ``upper``: :class:`gfun.baselines.naive.UpperBoundClassifier` (the paper's UpperBound: the Naive baseline's learner,
  TF-IDF + one linear SVM per class, on the English versions of the training documents, tested on the English
  versions of the test documents), C = 1 and C by 5-fold CV;
* ``upper-dedup``: the same with identical English training texts kept once (SIB-200 is fully parallel: every
  English sentence is there once per training language);
* ``gfun-x``: gFun-X (the ``select`` default, meta C = 1) on the original multilingual documents;
* ``gfun-x-english``: gFun-X's learner on UpperBound's data (every document replaced by its English version,
  all of them one English language), i.e. UpperBound with gFun-X's classifier instead of Naive's.

Prints a table and writes a CSV. Usage::

    python benchmarks/bench_upperbound.py --dataset debtags --data-dir ../shared/data/debtags --run 0 \\
        [--out results/upperbound-debtags-run0.csv]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gfun.baselines.naive import UpperBoundClassifier, english_versions
from gfun.baselines.parts import LinearSVMs
from gfun.corpus.multilingual import MultilingualCorpus
from gfun.datasets.registry import load_dataset
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.metrics.evaluation import evaluate

MEASURES = ["F1_macro", "F1_micro", "K_macro", "K_micro"]


def as_english(corpus: MultilingualCorpus, dedup: bool = False) -> MultilingualCorpus:
    """Every document replaced by its English version, labelled as English (identical texts once with ``dedup``)."""
    english = english_versions(corpus)
    idx = range(len(corpus))
    if dedup:
        idx = sorted({t: i for i, t in reversed(list(enumerate(english)))}.values())
    return MultilingualCorpus([f"{corpus.langs[i]}:{corpus.ids[i]}" for i in idx], ["en"] * len(idx),
                              [english[i] for i in idx],
                              [corpus.labels[i] for i in idx], corpus.classes)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="debtags")
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--rows", default="upper,upper-cv,upper-dedup,gfun-x,gfun-x-english")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    s = load_dataset(args.dataset, data_dir=args.data_dir, run=args.run)
    train, test = s.train, s.test
    rs = {"random_state": args.run, "n_jobs": args.n_jobs}
    rows = []
    for name in args.rows.split(","):
        fit_on, predict_on = train, test
        if name in ("upper", "upper-cv", "upper-dedup"):
            est = UpperBoundClassifier(classifier=LinearSVMs(C="cv" if name == "upper-cv" else 1.0), **rs)
            if name == "upper-dedup":
                fit_on = as_english(train, dedup=True)
        elif name == "gfun-x":
            est = GeneralizedFunnelling(views="x", **rs)
        elif name == "gfun-x-english":
            est = GeneralizedFunnelling(views="x", **rs)
            fit_on, predict_on = as_english(train), as_english(test)
        else:
            raise SystemExit(f"unknown row {name!r}")
        t0 = time.perf_counter()
        est.fit(fit_on)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pred = est.predict(predict_on)
        predict_s = time.perf_counter() - t0
        scores = evaluate(test.Y, pred, test.langs).loc["average"]
        Y = test.Y.toarray() if hasattr(test.Y, "toarray") else np.asarray(test.Y)
        pos_rate = float(np.asarray(pred).mean() / max(Y.mean(), 1e-12))
        rows.append({"row": name, "n_train": len(fit_on), **{m: float(scores[m]) for m in MEASURES},
                     "predicted/true positives": pos_rate, "fit_s": fit_s, "predict_s": predict_s})
        print(f"{name}: fit {fit_s:.1f} s, predict {predict_s:.1f} s", flush=True)
    table = pd.DataFrame(rows).set_index("row")
    print(f"\n{args.dataset} run {args.run} ({len(train)} training, {len(test)} test documents)")
    print(table.round(3).to_string())
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        table.to_csv(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
