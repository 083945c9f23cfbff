"""Benchmark: the E view's learners (ridge in closed form, class-balanced linear SVMs): fit time and the view alone.

Fits :class:`gfun.views.encoder.EncoderPosteriorsView` on one run's training documents with each ``learner`` (the
document vectors read from ``--vector-cache``; texts not in it are encoded first, which the fit seconds include),
then scores the view alone on the test documents: each class decided at the threshold that maximises its F1 on the
view's out-of-fold training posteriors (:func:`gfun.svm.thresholds.f1_thresholds`), many-shot and, where the
dataset has them, on the languages without training documents. Prints a table and writes a CSV.

Usage::

    python benchmarks/bench_e_learner.py --dataset debtags --data-dir ../shared/data/debtags --run 0 \\
        --vector-cache DIR [--n-jobs 2] [--out FILE]
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pooled import ENCODER_SETTINGS  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", default="debtags")
    ap.add_argument("--data-dir")
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--learners", default="ridge,svm")
    ap.add_argument("--vector-cache", default="auto", help="the document-vector cache (default: gfun's)")
    ap.add_argument("--encoder-settings", choices=("auto", "cpu", "gpu"), default="auto",
                    help="E's frozen pass (bench_pooled.py's --encoder-settings)")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", help="CSV of the rows")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    from gfun.corpus.inputs import document_groups
    from gfun.experiments.runner import ExperimentSettings, load_run
    from gfun.metrics.evaluation import evaluate
    from gfun.svm.thresholds import f1_thresholds
    from gfun.views.encoder import EncoderPosteriorsView

    train, test = load_run(ExperimentSettings(dataset=args.dataset, data_dir=args.data_dir, view_cache=""), args.run)
    texts, langs = list(train.texts), np.asarray(train.langs, dtype=object)
    Y = train.Y.toarray().astype(np.int8)
    groups = document_groups(train, len(texts), "auto")
    test_langs, Y_test = np.asarray(test.langs, dtype=object), test.Y.toarray()
    zero = ~np.isin(test_langs, np.unique(langs))
    rows = []
    for learner in args.learners.split(","):
        view = EncoderPosteriorsView(learner=learner, cache_dir=args.vector_cache, random_state=args.run,
                                     n_jobs=args.n_jobs, **ENCODER_SETTINGS[args.encoder_settings])
        view._vectors(texts, fit=True)  # read (or encode) the vectors first: the fit seconds are the learner's
        started = time.perf_counter()
        oof = view.fit_transform(texts, langs, Y, groups=groups)
        seconds = time.perf_counter() - started
        predicted = (view.transform(list(test.texts), test_langs) - 0.5 > f1_thresholds(oof - 0.5, Y)).astype(int)
        for setting, mask in (("many", ~zero), ("zero", zero)):
            if not mask.any():
                continue
            scores = evaluate(Y_test[mask], predicted[mask], test_langs[mask]).loc["average"]
            rows.append({"dataset": args.dataset, "run": args.run, "learner": learner, "setting": setting,
                         "fit_s": round(seconds, 2),
                         **{m: round(float(scores[m]), 4) for m in ("F1_macro", "F1_micro", "K_macro", "K_micro")}})
    frame = pd.DataFrame(rows)
    print(frame.to_string(index=False))
    if args.out:
        frame.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
