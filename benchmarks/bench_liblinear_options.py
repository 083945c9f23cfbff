"""Benchmark: ways to run liblinear solves on threads with repeatable models, on the X view of debtags run 0.

liblinear's dual solvers draw a random coordinate order from one generator per loaded module, seeded by each call;
solves running at once on threads of one process share it. Each option fits the X view (per-language TF-IDF and
linear SVMs, languages as parallel jobs) on the training documents of debtags run 0 with ``n_jobs`` 1 and 2,
``--repeats`` times, and prints the fit time and whether its outputs (posteriors, out-of-fold posteriors, SVM
weights) are the bits of the one-job dual fit:

* ``shared``: every solve calls the one module at once (gfun before the module copies: not repeatable);
* ``copies``: gfun's way: a solve running alongside others gets a copy of the module of its own;
* ``turns``: one module, the solves take turns (what gfun falls back to where copies cannot be loaded);
* ``processes``: ``parallel_config(backend="loky")``: jobs in worker processes, each with its own module;
* ``primal``: liblinear's primal solver (trust-region Newton; no random order), another model: ``--scores`` also
  fits gFun-X (meta C = 1) with the dual and the primal solver and prints their test scores.

Usage::

    python benchmarks/bench_liblinear_options.py [--run 0] [--data-dir ../shared/data/debtags]
        [--options shared,copies,turns,processes,primal] [--repeats 2] [--scores]

Run it on an otherwise idle machine for the timings.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OPTIONS = ("shared", "copies", "turns", "processes", "primal")


@contextlib.contextmanager
def option(name: str) -> Iterator[None]:
    """The process set up to run liblinear as ``name`` says, for the duration of the block."""
    import gfun.svm.linear as linear
    from gfun.svm import sklearn_private

    saved = (sklearn_private.liblinear_module, sklearn_private._copy_refusal, dict(sklearn_private._lenders),
             dict(linear._SOLVER))
    stack = contextlib.ExitStack()
    try:
        if name == "shared":
            sklearn_private.liblinear_module = lambda module, **kw: contextlib.nullcontext(module)
        elif name == "turns":
            sklearn_private._lenders.clear()
            sklearn_private._copy_refusal = lambda module: "the turns option of the benchmark"
        elif name == "processes":
            from joblib import parallel_config

            stack.enter_context(parallel_config(backend="loky"))
        elif name == "primal":
            linear._SOLVER["squared_hinge"] = 2  # L2-regularised squared hinge, primal
        with stack:
            yield
    finally:
        sklearn_private.liblinear_module, sklearn_private._copy_refusal = saved[0], saved[1]
        sklearn_private._lenders.clear()
        sklearn_private._lenders.update(saved[2])
        linear._SOLVER.clear()
        linear._SOLVER.update(saved[3])


def fit_x_view(train: Any, n_jobs: int) -> tuple[float, str]:
    """(seconds, SHA-256 of the outputs) of one X view fit."""
    from gfun.views.posteriors import PosteriorsView

    langs = np.asarray(train.langs, dtype=object)
    t0 = time.perf_counter()
    view = PosteriorsView(random_state=0, n_jobs=n_jobs)
    out = view.fit_transform(train.texts, langs, train.Y.toarray())
    seconds = time.perf_counter() - t0
    digest = hashlib.sha256(out.tobytes() + view.pop_training_oof().tobytes())
    for lang in sorted(view.models_):
        digest.update(view.models_[lang].svm.coef.tobytes() + view.models_[lang].svm.intercept.tobytes())
    return seconds, digest.hexdigest()


def scores(run: Any, solver: str) -> str:
    """Test scores of gFun-X (meta C = 1) with liblinear's dual or primal solver."""
    from gfun.configuration import build_estimator
    from gfun.metrics.evaluation import evaluate

    with option("primal" if solver == "primal" else "copies"):
        est = build_estimator("x", meta_C=1.0, random_state=0, n_jobs=2).fit(run.train)
    res = evaluate(run.test.Y, est.predict(run.test), run.test.langs).loc["average"]
    return f"F1M {res['F1_macro']:.4f}  F1µ {res['F1_micro']:.4f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--data-dir", default=os.environ.get("GFUN_DATA_DEBTAGS", str(ROOT.parent / "shared" / "data"
                                                                                 / "debtags")))
    ap.add_argument("--options", default=",".join(OPTIONS))
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--scores", action="store_true", help="also the test scores of gFun-X, dual and primal")
    args = ap.parse_args()
    names = [o for o in args.options.split(",") if o]
    if unknown := sorted(set(names) - set(OPTIONS)):
        ap.error(f"unknown options {unknown}; choose from {', '.join(OPTIONS)}")
    from gfun.datasets.debtags import load_debtags

    run = load_debtags(run=args.run, data_dir=args.data_dir)
    fit_x_view(run.train, 1)  # warm-up: stemmers, stop words, imports
    reference = fit_x_view(run.train, 1)[1]  # the one-job dual fit
    print(f"{'option':10s} {'n_jobs':>6s} {'median s':>9s}  {'runs (s)':24s} bits of the one-job dual fit")
    for name in names:
        for n_jobs in (1, 2):
            with option(name):
                runs = [fit_x_view(run.train, n_jobs) for _ in range(args.repeats)]
            same = [digest == reference for _, digest in runs]
            times = " ".join(f"{s:.2f}" for s, _ in runs)
            print(f"{name:10s} {n_jobs:6d} {statistics.median(s for s, _ in runs):9.2f}  {times:24s} "
                  f"{'all' if all(same) else 'none' if not any(same) else f'{sum(same)} of {len(same)}'}",
                  flush=True)
    if args.scores:
        for solver in ("dual", "primal"):
            print(f"gFun-X, liblinear {solver}: {scores(run, solver)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
