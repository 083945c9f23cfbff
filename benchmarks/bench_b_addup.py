"""What the other views add to the B view, over debtags runs: gFun-B against P, X and M on top of the same B vectors.

Each run fits gFun-B as ``gfun experiment many-shot --configs b`` does (``cpu`` preset, seed = run, meta C = 1,
``b.frozen_cache``: the network fine-tuned once per run is reused, e.g. the networks of the 10-run ``b,bert,bert-tuned``
experiment in RESULTS.md), then computes that network's vectors of the run's training and test documents once and
hands them to every other configuration, so that each row differs from gFun-B only by the views beside B and the
aggregation. A configuration is a name of ``gfun experiment`` (``pb``, ``xmpb``, ``pb-wmean`` ...); the suffix
``~oof`` replaces its aggregation by ``mean`` validated on out-of-fold inputs (``Mean(validation="oof")``: the
candidates' own policy inside ``select``, with its per-class thresholds, kept whatever the one-standard-error rule
would choose); ``~both`` has ``select`` try every set of views normalised and raw (``Select(forms="both")``). Rows
are scored per language and averaged over languages (``many``: the training languages; ``zero``:
fi, hu, nl, sv, without training documents), appended to ``--out`` as they come (an interrupted run resumes), and
the table at the end gives the mean over runs with the paired t-test against ``b`` (``+`` / ``-``: significantly
better / worse, p < .05).

Usage::

    python benchmarks/bench_b_addup.py --data-dir ../shared/data/debtags --runs 0-9 --frozen-cache <dir> \\
        --configs b,pb~oof,pb,pb-wmean,xpb~oof,xmpb --out results/b-addup-debtags/10runs.csv
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

import bench_neural  # noqa: E402 - the precomputed-B stand-in
from bench_pooled import MEASURES, _runs, table  # noqa: E402

ZERO_SHOT = ("fi", "hu", "nl", "sv")
logger = logging.getLogger("bench_b_addup")


def share_b_vectors(view: object, corpora: list) -> None:
    """Compute the fitted B view's vectors of ``corpora`` once and make every ``b`` view of a configuration read them
    (``bench_neural.PrecomputedB``)."""
    index: dict[tuple[str, str], int] = {}
    rows = []
    for corpus in corpora:
        Z = view.transform(corpus.texts, corpus.lang_array)
        for i, key in enumerate(zip(corpus.langs, corpus.texts, strict=True)):
            if (str(key[0]), key[1]) not in index:
                index[(str(key[0]), key[1])] = len(index)
                rows.append(Z[i])
    bench_neural._B_CACHE["b"] = {"index": index, "Z": np.asarray(rows, dtype=np.float32)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", default=str(ROOT.parents[1] / "shared" / "data" / "debtags"))
    ap.add_argument("--runs", default="0")
    ap.add_argument("--configs", default="b,pb~oof,pb,pb-wmean,xpb~oof,xmpb")
    ap.add_argument("--frozen-cache", required=True,
                    help="the B view's frozen_cache: fine-tuned networks are reused from (or stored in) it")
    ap.add_argument("--word-vectors", default="e5-subword")
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--out", required=True, help="CSV of the rows (resumable)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    import gfun.views as gviews
    from gfun.configuration import build_estimator, parse_config
    from gfun.experiments.runner import ExperimentSettings, experiment_estimator, load_run
    from gfun.funnelling.aggregation import Mean
    from gfun.metrics.evaluation import evaluate

    specs = [s for s in args.configs.split(",") if s]
    if "b" not in specs:
        specs.insert(0, "b")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = pd.read_csv(out) if out.exists() else pd.DataFrame(columns=["run", "config"])
    settings = ExperimentSettings(dataset="debtags", meta_C=1.0, seed=0, data_dir=args.data_dir, n_jobs=args.n_jobs,
                                  view_params={"m": {"source": args.word_vectors}, "r": {"source": args.word_vectors},
                                               "b": {"frozen_cache": args.frozen_cache}}, view_cache="")
    real_b = gviews.VIEW_CLASSES["b"]
    for run in _runs(args.runs):
        todo = [s for s in specs if not ((done["run"] == run) & (done["config"] == s)).any()]
        if not todo:
            continue
        train, test = load_run(settings, run)
        zero = np.isin(np.asarray(test.langs), ZERO_SHOT)
        parts = {"many": test.subset(np.flatnonzero(~zero)), "zero": test.subset(np.flatnonzero(zero))}
        gviews.VIEW_CLASSES["b"] = real_b
        t = time.perf_counter()
        est_b = experiment_estimator(settings, parse_config("b"), run)  # gFun-B of the experiment, seed = run
        est_b.fit(train)
        b_fit_s = time.perf_counter() - t
        share_b_vectors(next(v for v in est_b.views_ if v.letter == "b"), [train, test])
        gviews.VIEW_CLASSES["b"] = bench_neural.PrecomputedB
        for spec in todo:
            t = time.perf_counter()
            if spec == "b":
                est, fit_s = est_b, b_fit_s
            else:
                name, _, policy = spec.partition("~")
                est = build_estimator(parse_config(name), meta_C=1.0, random_state=run, n_jobs=args.n_jobs,
                                      view_params={"m": {"source": args.word_vectors}, "b": {"key": "b"}})
                if policy == "oof":
                    est.set_params(aggregation=Mean(validation="oof"))
                elif policy == "both":
                    est.set_params(aggregation__forms="both")
                elif policy:
                    ap.error(f"{spec}: the suffixes are ~oof and ~both")
                est.fit(train)
                fit_s = time.perf_counter() - t
            rows = []
            for setting, part in parts.items():
                s = evaluate(part.Y, est.predict(part), part.langs).loc["average"]
                rows.append({"run": run, "config": spec, "setting": setting, "fit_s": round(fit_s, 1),
                             **{m: float(s[m]) for m in MEASURES}})
            logger.warning("run %d %s: %s", run, spec, "; ".join(
                f"{r['setting']} " + "/".join(f"{r[m]:.3f}" for m in MEASURES) for r in rows))
            pd.DataFrame(rows).to_csv(out, mode="a", header=not out.exists(), index=False)
    print(table(pd.read_csv(out), specs, "b"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
