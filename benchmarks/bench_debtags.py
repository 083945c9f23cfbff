"""Benchmark: fit / predict time, CPU time, peak memory and accuracy on debtags (one run).

Each configuration runs in a fresh subprocess so that peak memory (ru_maxrss of the process
and of its worker processes) belongs to it alone. Prints a table and writes a CSV.

Usage::

    python benchmarks/bench_debtags.py [--run 0] [--data-dir ../shared/data/debtags]
        [--configs naive,fun,gfun-x,gfun-x-C1] [--n-jobs 2] [--out benchmarks/results/debtags_run0.csv]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CONFIGS = {
    "naive": ("naive", {}),
    "naive-C1": ("naive", {"C": 1.0}),
    "fun": ("fun", {}),
    "fun-C1": ("fun", {"meta_C": 1.0}),
    "gfun-x": ("gfun", {"views": "x"}),
    "gfun-x-C1": ("gfun", {"views": "x", "meta_C": 1.0}),
}


def _one(config: str, run: int, data_dir: str | None, n_jobs: int) -> dict:
    from gfun.baselines import NaiveClassifier, make_fun
    from gfun.datasets.debtags import load_debtags
    from gfun.funnelling import GeneralizedFunnelling
    from gfun.metrics import evaluate

    r = load_debtags(run=run, data_dir=data_dir)
    method, kw = CONFIGS[config]
    if method == "naive":
        est = NaiveClassifier(random_state=run, n_jobs=n_jobs, **kw)
    elif method == "fun":
        est = make_fun(random_state=run, n_jobs=n_jobs, **kw)
    else:
        est = GeneralizedFunnelling(random_state=run, n_jobs=n_jobs, **kw)
    c0 = time.process_time()
    t0 = time.perf_counter()
    est.fit(r.train)
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = est.predict(r.test)
    predict_s = time.perf_counter() - t1
    cpu_self = time.process_time() - c0
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # reap the worker processes so that their usage is counted
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    res = evaluate(r.test.Y, pred, r.test.langs).loc["average"]
    return {"config": config, "fit_s": fit_s, "predict_s": predict_s,
            "cpu_s": cpu_self + children.ru_utime + children.ru_stime,
            "peak_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, children.ru_maxrss) / 1024,
            "F1_macro": res["F1_macro"], "F1_micro": res["F1_micro"], "K_macro": res["K_macro"],
            "K_micro": res["K_micro"], "n_train": len(r.train), "n_test": len(r.test)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--configs", default="naive,fun,gfun-x,gfun-x-C1")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "debtags_run{run}.csv"))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        sys.stdout.write(json.dumps(_one(args.one, args.run, args.data_dir, args.n_jobs)) + "\n")
        return 0
    import pandas as pd

    rows = []
    for config in args.configs.split(","):
        if config not in CONFIGS:
            ap.error(f"unknown config {config!r}; choose from {sorted(CONFIGS)}")
        out = subprocess.run([sys.executable, __file__, "--one", config, "--run", str(args.run), "--data-dir",
                              args.data_dir, "--n-jobs", str(args.n_jobs)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.stderr.write(out.stderr)
            return out.returncode
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        sys.stderr.write(f"{config}: done\n")
    df = pd.DataFrame(rows).set_index("config")
    path = Path(args.out.format(run=args.run))
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path)
    with pd.option_context("display.width", 200, "display.float_format", "{:.3f}".format):
        sys.stdout.write(df.to_string() + "\n")
    sys.stdout.write(f"written to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
