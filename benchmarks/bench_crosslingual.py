"""Benchmark: the cross-lingual baselines (LRI, CLESA, KCCA, DCI) against Fun and gFun-X on one debtags run.

Reads a run written by ``gfun datasets build debtags --run R --out DIR`` (``train.jsonl``, ``test.jsonl``,
``classes.json``); CLESA and KCCA build their parallel collection (``parallel="auto"``) from the debtags
files under ``$GFUN_DATA``. Each configuration runs in a fresh subprocess (see ``_measure.py``); prints the
paper's four measures (averaged over languages), fit / predict seconds, CPU seconds and peak memory, the
seconds spent learning the space and the SVMs, and writes a CSV.

Usage::

    GFUN_DATA=../shared/data python benchmarks/bench_crosslingual.py --run-dir /tmp/xling/run0
        [--configs fun,x,lri,clesa,kcca,dci] [--C cv] [--n-jobs 2] [--out benchmarks/results/crosslingual_run0.csv]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import measure, run_isolated  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _load(run_dir: str):  # noqa: ANN202
    from gfun.corpus.files import read_classes
    from gfun.corpus.multilingual import read_corpus

    classes = read_classes(Path(run_dir) / "classes.json")
    return (read_corpus(Path(run_dir) / "train.jsonl", classes), read_corpus(Path(run_dir) / "test.jsonl", classes))


def _one(point: dict) -> dict:
    from gfun.configuration import build_estimator, parse_config
    from gfun.metrics.evaluation import evaluate

    train, test = _load(point["run_dir"])
    C = point["C"] if point["C"] == "cv" else float(point["C"])
    est = build_estimator(parse_config(point["config"]), meta_C=C, random_state=0, n_jobs=point["n_jobs"])
    model, pred, figures = measure(lambda: est.fit(train), lambda m: m.predict(test))
    res = evaluate(test.Y, pred, test.langs).loc["average"]
    timings = getattr(model, "fit_seconds_", None) or getattr(model, "timings_", {})
    phases = {k: round(v, 2) for k, v in timings.items()}
    return {"config": point["config"], **figures, "F1_macro": res["F1_macro"], "F1_micro": res["F1_micro"],
            "K_macro": res["K_macro"], "K_micro": res["K_micro"], "n_train": len(train), "n_test": len(test),
            "phases": json.dumps(phases)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run-dir", help="output of `gfun datasets build debtags --run R --out DIR`")
    ap.add_argument("--configs", default="fun,x,lri,clesa,kcca,dci")
    ap.add_argument("--C", default="cv", help="C of the SVMs (the meta-classifier's for fun / x), or 'cv'")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "crosslingual.csv"))
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        sys.stdout.write(json.dumps(_one(json.loads(args.one))) + "\n")
        return 0
    if not args.run_dir:
        ap.error("--run-dir is required")
    import pandas as pd

    from gfun.configuration import parse_configs

    configs = [c.name for c in parse_configs(args.configs)]
    rows = []
    for config in configs:
        rows.append(run_isolated(__file__, {"config": config, "run_dir": args.run_dir, "C": args.C,
                                            "n_jobs": args.n_jobs}))
        r = rows[-1]
        sys.stderr.write(f"{config}: F1M {r['F1_macro']:.3f} F1u {r['F1_micro']:.3f} KM {r['K_macro']:.3f} "
                         f"Ku {r['K_micro']:.3f}; fit {r['fit_s']:.1f} s, predict {r['predict_s']:.1f} s\n")
        df = pd.DataFrame(rows).set_index("config")
        path = Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(path)  # after every configuration: a cut run keeps what it measured
    cols = ["F1_macro", "F1_micro", "K_macro", "K_micro", "fit_s", "predict_s", "cpu_s", "peak_mb"]
    with pd.option_context("display.width", 250, "display.float_format", "{:.3f}".format,
                           "display.max_colwidth", 200):
        sys.stdout.write(df[cols].to_string() + "\n\nphases (s):\n" + df["phases"].to_string() + "\n")
    sys.stdout.write(f"written to {path}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
