"""gFun view configurations on one debtags run: the paper's Table 5 (mean vs concat) on our corpus.

Prints one JSON line per (configuration, aggregation) with F1M, F1µ, KM, Kµ, fit/predict seconds and, for
configurations that can serve languages without training documents (M in mean mode), the zero-shot macro- and
micro-F1 on fi nl sv hu. Word vectors for M come from ``--word-vectors`` (default: the offline e5 encoder, cached
under $GFUN_CACHE after the first build).

Usage::

    python benchmarks/bench_views.py --meta-C 1 --configs x,m,w,xm,xmw --aggregations mean,concat
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS",
                                                         str(ROOT.parent / "shared" / "data" / "debtags")))
    ap.add_argument("--meta-C", default="1", help="a number, or cv")
    ap.add_argument("--configs", default="x,m,w,xm,xw,xmw")
    ap.add_argument("--aggregations", default="mean,concat")
    ap.add_argument("--word-vectors", default="e5")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)

    from gfun.datasets.debtags import load_debtags
    from gfun.funnelling.generalized import GeneralizedFunnelling
    from gfun.funnelling.meta import default_meta
    from gfun.metrics.evaluation import evaluate

    r = load_debtags(run=args.run, data_dir=args.data_dir)
    meta_C = "cv" if args.meta_C == "cv" else float(args.meta_C)
    for cfg in args.configs.split(","):
        for agg in args.aggregations.split(","):
            model = GeneralizedFunnelling(views=cfg, aggregation=agg, meta=default_meta().set_params(C=meta_C),
                                          random_state=args.run,
                                          n_jobs=args.n_jobs, view_params={"m": {"source": args.word_vectors}})
            t0 = time.perf_counter()
            model.fit(r.train)
            fit_s = time.perf_counter() - t0
            t1 = time.perf_counter()
            pred = model.predict(r.test)
            predict_s = time.perf_counter() - t1
            res = evaluate(r.test.Y, pred, r.test.langs).loc["average"]
            out = {"config": cfg, "aggregation": agg, "meta_C": meta_C, "fit_s": round(fit_s, 1),
                   "predict_s": round(predict_s, 1),
                   **{k: round(float(res[k]), 4) for k in ("F1_macro", "F1_micro", "K_macro", "K_micro")}}
            if "m" in cfg and agg == "mean":
                zs = evaluate(r.test_zeroshot.Y, model.predict(r.test_zeroshot), r.test_zeroshot.langs)
                out["zeroshot_F1_macro"] = {k: round(float(v), 4) for k, v in zs["F1_macro"].items()}
                out["zeroshot_F1_micro"] = {k: round(float(v), 4) for k, v in zs["F1_micro"].items()}
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
