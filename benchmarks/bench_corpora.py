"""gFun-XMW vs Naive and Fun on exceptius and sib200 (many-shot), and sib200 zero-shot with 3 training languages.

Prints one JSON line per result (macro-F1 averaged over languages, micro-F1, per-language macro-F1).

Usage::

    python benchmarks/bench_corpora.py [--meta-C 1] [--word-vectors e5]   # reads $GFUN_DATA or ../shared/data
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from gfun.baselines.naive import NaiveClassifier, make_fun
from gfun.baselines.parts import LinearSVMs
from gfun.datasets.registry import load_dataset
from gfun.funnelling.generalized import GeneralizedFunnelling
from gfun.metrics.evaluation import evaluate

DATA = Path(os.environ.get("GFUN_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _report(dataset: str, config: str, model: Any, test: Any, fit_s: float) -> None:
    df = evaluate(test.Y, model.predict(test), test.langs)
    avg = df.loc["average"]
    out = {"dataset": dataset, "config": config, "fit_s": round(fit_s, 1), "F1_macro": round(float(avg.F1_macro), 4),
           "F1_micro": round(float(avg.F1_micro), 4),
           "per_lang_F1_macro": {k: round(float(v), 3) for k, v in df.F1_macro.items()}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--meta-C", type=float, default=1.0)
    ap.add_argument("--word-vectors", default="e5")
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    common = {"meta_C": args.meta_C, "random_state": 0, "n_jobs": args.n_jobs}
    vp = {"m": {"source": args.word_vectors}}

    def configs(zero_shot: bool) -> list[tuple[str, Any]]:
        if zero_shot:
            return [("fun+zero-shot-fallback(m)", make_fun(zero_shot_views="m", view_params=vp, **common)),
                    ("gfun-xmw", GeneralizedFunnelling(views="xmw", view_params=vp, **common))]
        return [("naive", NaiveClassifier(classifier=LinearSVMs(C="cv"), random_state=0, n_jobs=args.n_jobs)),
                ("fun", make_fun(**common)),
                ("gfun-xmw", GeneralizedFunnelling(views="xmw", view_params=vp, **common))]

    for name in ("exceptius", "sib200"):
        splits = load_dataset(name, data_dir=DATA / name)
        for config, model in configs(zero_shot=False):
            t0 = time.perf_counter()
            model.fit(splits.train)
            _report(name, config, model, splits.test, time.perf_counter() - t0)
    splits = load_dataset("sib200", data_dir=DATA / "sib200")
    train3 = splits.train.select(["en", "it", "de"])
    for config, model in configs(zero_shot=True):
        t0 = time.perf_counter()
        model.fit(train3)
        _report("sib200 zero-shot (train en it de)", config, model, splits.test, time.perf_counter() - t0)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
