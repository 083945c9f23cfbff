"""What ``select`` keeps when a neural view is among the views: one debtags run, one configuration.

Fits a gFun configuration (default ``xmr_m``: X, M and the recurrent view R_M, ``select`` aggregation, meta C = 1)
on the training set of a debtags run, logs the validated score of every candidate and the one kept, and prints
the test set's F1M, F1µ, KM and Kµ with the fit's wall time and peak RSS. The R view trains with the preset of the
device unless ``--r-params`` says otherwise.

Usage::

    python benchmarks/bench_select_neural.py --word-vectors e5-subword                       # the cpu preset
    python benchmarks/bench_select_neural.py --r-params '{"max_epochs": 12, "patience": 4}'  # any R parameter
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--config", default="xmr_m", help="a gFun configuration (select aggregation unless suffixed)")
    ap.add_argument("--word-vectors", default="e5", help="word-vector source of the M and R views")
    ap.add_argument("--r-params", default=None, help="JSON of R view parameters, e.g. '{\"max_epochs\": 12}'")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", datefmt="%H:%M:%S",
                        stream=sys.stderr)
    from gfun.configuration import build_estimator
    from gfun.datasets.debtags import load_debtags
    from gfun.metrics.evaluation import evaluate

    r = load_debtags(run=args.run, data_dir=args.data_dir)
    view_params = {"m": {"source": args.word_vectors},
                   "r": {"source": args.word_vectors, **json.loads(args.r_params or "{}")}}
    est = build_estimator(args.config, meta_C=1.0, random_state=args.run, n_jobs=args.n_jobs, view_params=view_params)
    est.set_params(verbose=True)
    t = time.perf_counter()
    est.fit(r.train)
    fit_s = time.perf_counter() - t
    scores = evaluate(r.test.Y, est.predict(r.test), r.test.langs).loc["average"]
    kept = "".join(est.selected_views_) + ("" if getattr(est.aggregation_, "l2_", True) else " (raw)")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sys.stdout.write(f"{args.config} run {args.run}: kept {kept}; test F1M {scores['F1_macro']:.3f} F1mu "
                     f"{scores['F1_micro']:.3f} KM {scores['K_macro']:.3f} Kmu {scores['K_micro']:.3f}; fit "
                     f"{fit_s:.0f} s, peak RSS {peak:.0f} MB\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
