"""Benchmark: liblinear's stopping tolerance in the pooled view P on debtags.

Fits each view on one run's training documents at each tolerance and prints the fit seconds and how far its
outputs move from those at scikit-learn's 1e-4: the largest change of a training posterior (out of fold, what the
meta-classifier learns from) and the mean change of a test posterior. ``gfun.views.pooled.VIEW_TOL`` is P's (and
E's and F's) default; X keeps scikit-learn's (``gfun.svm.linear.LIBLINEAR_TOL``).

Usage::

    python benchmarks/bench_view_tol.py [--run 0] [--data-dir ../shared/data/debtags] [--tols 1e-4,1e-3,1e-2,1e-1]
        [--n-jobs 2]

Run it on an otherwise idle machine for the timings.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from gfun.datasets.debtags import load_debtags
    from gfun.views.pooled import PooledPosteriorsView

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--tols", default="1e-4,1e-3,1e-2,1e-1")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    r = load_debtags(run=args.run, data_dir=args.data_dir)
    tols = [float(t) for t in args.tols.split(",")]
    if tols[0] != 1e-4:
        tols.insert(0, 1e-4)
    rows, reference = [], None
    for tol in tols:
        view = PooledPosteriorsView(tol=tol, n_jobs=args.n_jobs, random_state=args.run)
        t0 = time.perf_counter()
        Z = view.fit_transform(r.train.texts, r.train.langs, r.train.Y)
        seconds = time.perf_counter() - t0
        T = view.transform(r.test.texts, r.test.langs)
        reference = reference or (Z, T)
        rows.append({"tol": tol, "fit_s": round(seconds, 2),
                     "max_train_change": float(np.abs(Z - reference[0]).max()),
                     "mean_test_change": float(np.abs(T - reference[1]).mean())})
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
