"""Benchmark: the seconds of each cell of a many-shot experiment (what the view cache and the shared fine-tuning save).

Runs ``gfun experiment many-shot`` (:func:`gfun.experiments.many_shot.run_many_shot`) in a fresh output folder on
a sample of a dataset and prints, per run and configuration, the fit and predict seconds the experiment recorded
(``many-shot-<dataset>-timings.csv``) and the wall time of the whole experiment; writes them as CSV.

Usage::

    python benchmarks/bench_experiment_cells.py --dataset debtags --data-dir ../shared/data/debtags \\
        --sample 150,50,7 --configs xm,b,xmb,bert --word-vectors e5-subword [--runs 1] [--out results/x.csv]
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import pandas as pd


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dataset", default="debtags")
    p.add_argument("--data-dir", default="../shared/data/debtags")
    p.add_argument("--sample", default="150,50,7", help="training and test documents per language, languages")
    p.add_argument("--configs", default="xm,b,xmb,bert")
    p.add_argument("--word-vectors", default="e5-subword")
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--meta-C", type=float, default=1.0)
    p.add_argument("--out", default=None, help="CSV of the cell timings")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s", datefmt="%H:%M:%S")

    from gfun.configuration import parse_configs
    from gfun.experiments.many_shot import run_many_shot
    from gfun.experiments.runner import ExperimentSettings

    n_train, n_test, n_langs = (int(x) for x in args.sample.split(","))
    settings = ExperimentSettings(dataset=args.dataset, runs=args.runs, meta_C=args.meta_C, data_dir=args.data_dir,
                                  sample=(n_train, n_test, n_langs), n_jobs=2,
                                  view_params={"m": {"source": args.word_vectors}})
    with tempfile.TemporaryDirectory(prefix="bench-cells-") as tmp:
        t0 = time.perf_counter()
        res = run_many_shot(settings, parse_configs(args.configs), tmp, plots=False)
        wall = time.perf_counter() - t0
        timings = pd.read_csv(Path(tmp) / f"many-shot-{args.dataset}-timings.csv")
    avg = res["scores"][res["scores"]["lang"] == "average"].set_index(["run", "config"])
    timings = timings.join(avg[["F1_macro", "F1_micro"]], on=["run", "config"])
    timings["experiment_wall_s"] = wall
    print(timings.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    print(f"experiment wall: {wall:.1f} s; cells fit {timings.fit_s.sum():.1f} s, "
          f"predict {timings.predict_s.sum():.1f} s")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        timings.to_csv(args.out, index=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
