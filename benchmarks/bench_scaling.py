"""Benchmark: how gFun's cost grows with the number of documents and of classes (debtags).

Two curves, each point fitted in a fresh subprocess (see ``_measure.py``):

* documents: ``n`` training documents per language (every debtags language, up to what the language has:
  the debtags protocol keeps half of a language's usable documents for training, at most 4,921 for da),
  73 classes;
* classes: the ``k`` most frequent tags, 1,000 training documents per language.

``--corpus all`` measures the documents curve on the bigger corpus of every tagged package in every language
with a translation (``load_debtags(split="all")``: 100,286 training documents, 5,718 test documents, parallel
across languages, split by source package): ``--docs`` then counts training documents in all (a uniform sample,
each smaller sample inside the larger ones; ``all`` for every one), and every point is tested on the same test
set. ``--approximation`` sets the meta-classifier's and mappers' ``kernel_approximation`` (``auto``: exact while
it fits in ``--max-memory``; ``none``: always exact), so that exact and approximate curves can be compared;
each row records which method the meta-classifier used.

For each point it prints fit and predict wall time, CPU time, peak memory, the seconds of each phase
(tier 1 = the views, tier 2 = the meta-classifier incl. its Gram matrix and calibration) and macro-F1 on
the run's test set; then the growth exponent ``b`` of ``seconds ~ a * size^b``, fitted by least squares on
the log-log points, for the total and for each phase.

Usage::

    python benchmarks/bench_scaling.py [--views x] [--meta-C 1] [--docs 250,500,1000,2000,4000]
        [--classes 20,40,80,160,300] [--n-jobs 2] [--out benchmarks/results/scaling.csv]
        [--corpus protocol|all] [--approximation auto|none|nystroem-ls|nystroem] [--max-memory 2GB]

    # the 100k curve: exact while it fits, approximate beyond
    python benchmarks/bench_scaling.py --corpus all --docs 6500,12500,25000,50000,all --classes ""
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure, run_isolated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _one(point: dict) -> dict:
    from gfun.datasets.debtags import load_debtags
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.funnelling.meta import default_mapper, default_meta
    from gfun.metrics.evaluation import evaluate

    load_start = os.getloadavg()[0]  # other jobs on the machine: timings are comparable only at similar load
    corpus = point.get("corpus", "protocol")
    if corpus == "all":
        r = load_debtags(run=0, data_dir=point["data_dir"], n_classes=point["classes"], split="all")
        train = r.train
        if point["docs"] != "all" and int(point["docs"]) < len(train):
            keep = np.sort(np.random.RandomState(0).permutation(len(train))[:int(point["docs"])])
            train = train.subset(keep)
    else:
        r = load_debtags(run=0, data_dir=point["data_dir"], n_classes=point["classes"], max_train=point["docs"],
                         max_test=1000)
        train = r.train
    meta_C = point["meta_C"] if point["meta_C"] == "cv" else float(point["meta_C"])
    approx = point.get("approximation", "auto")
    kernel = {"approximation": None if approx == "none" else approx, "max_memory": point.get("max_memory", "2GB")}
    est = GeneralizedFunnelling(views=point["views"], meta=default_meta().set_params(C=meta_C, **kernel),
                                mapper=default_mapper().set_params(**kernel), n_jobs=point["n_jobs"], random_state=0)
    model, pred, figures = measure(lambda: est.fit(train), lambda m: m.predict(r.test))
    res = evaluate(r.test.Y, pred, r.test.langs).loc["average"]
    t = model.timings_
    tier1 = sum(v for k, v in t.items() if k.startswith(("view_", "mapper_")))
    return {**point, "n_train": len(train), "n_test": len(r.test), **figures, "tier1_s": tier1,
            "meta_s": t.get("meta", float("nan")), "method": model.meta_.method_ or "exact",
            "F1_macro": res["F1_macro"], "F1_micro": res["F1_micro"], "load_start": load_start,
            "load_end": os.getloadavg()[0]}


def growth_exponent(sizes: np.ndarray, seconds: np.ndarray) -> float:
    """``b`` of ``seconds ~ a * sizes^b`` (least squares on logarithms)."""
    ok = (sizes > 0) & (seconds > 0)
    if ok.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(sizes[ok]), np.log(seconds[ok]), 1)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--views", default="x")
    ap.add_argument("--meta-C", default="1", help="meta-classifier C, or cv")
    ap.add_argument("--docs", default="250,500,1000,2000,4000", help="training documents per language")
    ap.add_argument("--classes", default="20,40,80,160,300", help="numbers of classes")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--corpus", choices=("protocol", "all"), default="protocol",
                    help="protocol: run 0's sample (--docs per language); all: every tagged package (--docs in all)")
    ap.add_argument("--approximation", choices=("auto", "none", "nystroem-ls", "nystroem"), default="auto")
    ap.add_argument("--max-memory", default="2GB", help="memory budget of one exact kernel SVM")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "scaling.csv"))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        sys.stdout.write(json.dumps(_one(json.loads(args.one))) + "\n")
        return 0
    import pandas as pd

    base = {"data_dir": args.data_dir, "views": args.views, "meta_C": args.meta_C, "n_jobs": args.n_jobs,
            "corpus": args.corpus, "approximation": args.approximation, "max_memory": args.max_memory}
    points = [{"curve": "documents", "docs": n if n == "all" else int(n), "classes": 73}
              for n in args.docs.split(",") if n]
    points += [{"curve": "classes", "docs": 1000, "classes": int(k)} for k in args.classes.split(",") if k]
    rows = []
    for p in points:
        rows.append(run_isolated(__file__, {**base, **p}))
        row = rows[-1]
        sys.stderr.write(f"{p['curve']} docs/lang={p['docs']} classes={p['classes']}: {row['n_train']} train docs, "
                         f"fit {row['fit_s']:.1f} s, predict {row['predict_s']:.1f} s, {row['peak_mb']:.0f} MB\n")
    df = pd.DataFrame(rows)
    df["total_s"] = df["fit_s"] + df["predict_s"]
    path = Path(args.out)
    path.parent.mkdir(parents=True, exist_ok=True)
    df.drop(columns=["data_dir"]).to_csv(path, index=False)
    cols = ["curve", "docs", "classes", "n_train", "method", "fit_s", "predict_s", "total_s", "tier1_s", "meta_s",
            "cpu_s", "peak_mb", "F1_macro", "F1_micro", "load_start", "load_end"]
    lines = [df[cols].to_string(index=False, float_format="{:.2f}".format), "", "growth exponents b (s ~ size^b):"]
    for curve, size in (("documents", "n_train"), ("classes", "classes")):
        sub = df[df.curve == curve]
        if len(sub) < 2:
            continue
        x = sub[size].to_numpy(dtype=float)
        parts = [f"{name} {growth_exponent(x, sub[col].to_numpy(dtype=float)):.2f}"
                 for name, col in (("total", "total_s"), ("tier 1", "tier1_s"), ("meta", "meta_s"),
                                   ("predict", "predict_s"), ("peak MB", "peak_mb"))]
        lines.append(f"  {curve} ({size}): " + ", ".join(parts))
    sys.stdout.write("\n".join(lines) + f"\nwritten to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
