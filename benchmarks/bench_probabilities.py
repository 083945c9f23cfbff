"""Predicted labels vs probabilities on the demo: disagreements, F1/K of both rules, log-loss and Brier score.

``predict`` thresholds the decision score at 0; ``predict_proba`` applies the meta-classifier's Platt sigmoids.
Prints one line per configuration (Fun, gFun-X, gFun-XW). Run it with the old and the new tree on ``PYTHONPATH``
to compare::

    PYTHONPATH=src python benchmarks/bench_probabilities.py
"""

import time

import numpy as np

from gfun.configuration import build_estimator
from gfun.datasets.demo import load_demo
from gfun.metrics.evaluation import evaluate


def main() -> None:
    train, test = load_demo()
    Y = test.Y.toarray()
    for name, config in (("Fun", "fun"), ("gFun-X", "x"), ("gFun-XW", "xw")):
        t0 = time.perf_counter()
        est = build_estimator(config, n_jobs=1, random_state=0).fit(train)
        d = est.decision_function(test)
        p = np.clip(est.predict_proba(test), 1e-12, 1 - 1e-12)
        r1 = evaluate(test.Y, est.predict(test), test.langs).loc["average"]
        r2 = evaluate(test.Y, (p > 0.5).astype(int), test.langs).loc["average"]
        log_loss = float(-(Y * np.log(p) + (1 - Y) * np.log(1 - p)).mean())
        brier = float(((p - Y) ** 2).mean())
        print(f"{name}: disagreements {int(((d > 0) != (p > 0.5)).sum())}/{d.size}; predict F1M {r1.F1_macro:.3f} "
              f"F1mu {r1.F1_micro:.3f} KM {r1.K_macro:.3f} Kmu {r1.K_micro:.3f}; proba>0.5 F1M {r2.F1_macro:.3f} "
              f"F1mu {r2.F1_micro:.3f}; log-loss {log_loss:.4f} Brier {brier:.4f}; {time.perf_counter() - t0:.0f}s",
              flush=True)


if __name__ == "__main__":
    main()
