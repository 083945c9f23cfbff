"""Seconds and bytes allocated per ``RBFSVMOvR.decision_function`` call of a mapper with float32 support vectors.

A mapper of a debtags gFun model holds ~6,500 support vectors of 384 features (M or B view) in float32; the
kernel is computed in float64. Before, every call widened the support vectors (20 MB) and recomputed their
norms; now a call on fewer than ``KEEP_WIDE_SUPPORT_BELOW`` documents (a served request) keeps the widened copy.
Prints, per batch size, the median seconds of a call widening every time and of a call with the kept copy, the
peak bytes numpy allocated in the call (``tracemalloc``), and the largest difference between the two scores
(0: the same bits). Writes a CSV when ``--out`` is given.

Usage::

    python benchmarks/bench_mapper_decision.py [--support 6491] [--features 384] [--repeat 30] [--out FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc

import numpy as np
import pandas as pd

from gfun.svm.kernel import RBFSVMOvR
from gfun.svm.rbf_kernel import rbf_kernel_inplace


def _model(n_sv: int, d: int, k: int, seed: int = 0) -> RBFSVMOvR:
    rng = np.random.default_rng(seed)
    m = RBFSVMOvR(C=1.0, support_dtype="float32")
    m.support_vectors_ = rng.random((n_sv, d)).astype(np.float32)
    m.dual_coef_ = rng.normal(size=(n_sv, k))
    m.intercept_ = rng.normal(size=k)
    m.gamma_, m.n_features_in_ = 1.0 / d, d
    m.nystroem_components_ = None
    return m


def _widened_every_time(m: RBFSVMOvR, X: np.ndarray) -> np.ndarray:
    K = rbf_kernel_inplace(X, np.asarray(m.support_vectors_, dtype=np.float64), m.gamma_)
    return K @ m.dual_coef_ + m.intercept_


def _time(fn, repeat: int) -> tuple[float, int]:
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return statistics.median(times), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--support", type=int, default=6491)
    ap.add_argument("--features", type=int, default=384)
    ap.add_argument("--classes", type=int, default=73)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    m = _model(args.support, args.features, args.classes)
    rows = []
    for batch in (1, 64):
        X = np.random.default_rng(1).random((batch, args.features))
        before, before_peak = _time(lambda X=X: _widened_every_time(m, X), args.repeat)
        after, after_peak = _time(lambda X=X: m.decision_function(X), args.repeat)
        diff = float(np.abs(m.decision_function(X) - _widened_every_time(m, X)).max())
        rows.append({"batch": batch, "before_ms": 1e3 * before, "after_ms": 1e3 * after,
                     "before_peak_MB": before_peak / 2**20, "after_peak_MB": after_peak / 2**20,
                     "max_abs_diff": diff})
    df = pd.DataFrame(rows)
    print(f"{args.support} float32 support vectors x {args.features} features, {args.classes} classes; "
          f"median of {args.repeat} calls")
    print(df.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if args.out:
        df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
