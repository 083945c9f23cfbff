"""Benchmark: fit / predict time, CPU time, peak memory and accuracy on debtags (one run).

Each configuration runs in a fresh subprocess (see ``_measure.py``). Prints a table, with the seconds
of each phase of the fit (``view_<letter>``, ``mapper_<letter>``, ``meta``), and writes a CSV. Word vectors
of the M view come from ``--word-vectors`` (default ``e5``); encoder-derived vectors are cached under
``$GFUN_CACHE`` after their first computation, which the timings of later fits do not include.

Usage::

    python benchmarks/bench_debtags.py [--run 0] [--data-dir ../shared/data/debtags]
        [--configs naive,fun,gfun-x,gfun-x-C1,...] [--n-jobs 2] [--word-vectors e5]
        [--out benchmarks/results/debtags_run0.csv]

Configurations: ``naive``, ``fun`` and ``gfun-<views>[-<aggregation>]``, built by
:func:`gfun.configuration.build_estimator` with ``gfun train``'s default meta C (C by 5-fold CV over the paper's
6 values for naive, 1 for fun and gFun), each also as ``<name>-C1`` (C = 1), e.g. ``gfun-xmw``, ``gfun-xmw-C1``,
and ``gfun train``'s meta-classifier class weights (``--meta-class-weight train``: ``sqrt`` for gFun, none for the
others; ``none``, ``balanced`` or ``sqrt`` for every configuration).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure, run_isolated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def parse_config(name: str) -> tuple[str, float | None]:
    """(name of a :mod:`gfun.configuration` configuration, meta C) of a benchmark configuration name: ``naive``,
    ``pooled``, ``fun`` or ``gfun-<letters>[-<aggregation>]``, optionally ``-C1`` (meta C 1; otherwise ``None``, the
    configuration's default, as ``gfun train``'s)."""
    from gfun.configuration import parse_config as read_configuration

    base, c1 = (name[:-3], True) if name.endswith("-C1") else (name, False)
    config = base if base in ("naive", "pooled", "fun") else base[5:] if base.startswith("gfun-") else ""
    try:
        read_configuration(config or "?")
    except ValueError as exc:
        raise ValueError(f"unknown configuration {name!r}: naive, pooled, fun or gfun-<view letters>[-<aggregation>], "
                         f"optionally -C1 ({exc})") from None
    return config, 1.0 if c1 else None


def _one(point: dict) -> dict:
    from gfun.configuration import build_estimator, default_meta_class_weight
    from gfun.configuration import parse_config as read_configuration
    from gfun.datasets.debtags import load_debtags
    from gfun.metrics.evaluation import evaluate

    r = load_debtags(run=point["run"], data_dir=point["data_dir"])
    config, meta_C = parse_config(point["config"])
    chosen = point.get("meta_class_weight", "train")
    weight = default_meta_class_weight(read_configuration(config).method, None if chosen == "train" else chosen)
    est = build_estimator(config, meta_C=meta_C, random_state=point["run"], n_jobs=point["n_jobs"],
                          view_params={"m": {"source": point["word_vectors"]}}, meta_class_weight=weight)
    model, pred, figures = measure(lambda: est.fit(r.train), lambda m: m.predict(r.test))
    res = evaluate(r.test.Y, pred, r.test.langs).loc["average"]
    phases = {k: round(v, 2) for k, v in getattr(model, "timings_", {}).items()}
    return {"config": point["config"], **figures, "F1_macro": res["F1_macro"], "F1_micro": res["F1_micro"],
            "K_macro": res["K_macro"], "K_micro": res["K_micro"], "n_train": len(r.train), "n_test": len(r.test),
            "phases": json.dumps(phases)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--configs", default="naive,fun,gfun-x,gfun-x-C1")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--word-vectors", default="e5", help="word-vector source of the M view")
    ap.add_argument("--meta-class-weight", choices=("train", "none", "balanced", "sqrt"), default="train",
                    help="the meta-classifier's class weights: gfun train's (sqrt for gFun, none for the others), or "
                    "one for every configuration")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "debtags_run{run}.csv"))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        sys.stdout.write(json.dumps(_one(json.loads(args.one))) + "\n")
        return 0
    import pandas as pd

    configs = [c for c in args.configs.split(",") if c]
    for config in configs:
        try:
            parse_config(config)
        except ValueError as exc:
            ap.error(str(exc))
    rows = []
    for config in configs:
        rows.append(run_isolated(__file__, {"config": config, "run": args.run, "data_dir": args.data_dir,
                                            "n_jobs": args.n_jobs, "word_vectors": args.word_vectors,
                                            "meta_class_weight": args.meta_class_weight}))
        sys.stderr.write(f"{config}: fit {rows[-1]['fit_s']:.1f} s, predict {rows[-1]['predict_s']:.1f} s\n")
    df = pd.DataFrame(rows).set_index("config")
    path = Path(args.out.format(run=args.run))
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path)
    df["total_s"] = df["fit_s"] + df["predict_s"]
    cols = ["F1_macro", "F1_micro", "K_macro", "K_micro", "fit_s", "predict_s", "total_s", "cpu_s", "peak_mb"]
    with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format,
                           "display.max_colwidth", 200):
        sys.stdout.write(df[cols].to_string() + "\n\nphases (s):\n" + df["phases"].to_string() + "\n")
    sys.stdout.write(f"written to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
