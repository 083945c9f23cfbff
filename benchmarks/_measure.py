"""Shared by the benchmark scripts: time and memory of one fit + predict, in a fresh subprocess.

A benchmark script calls :func:`run_isolated` for each point it measures; the child process re-runs the
script with ``--one <json>`` and prints one JSON line made by :func:`measure`, so that peak memory (ru_maxrss
of the process and of its worker processes) belongs to that point alone.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

__all__ = ["measure", "run_isolated"]


def measure(fit: Callable[[], Any], predict: Callable[[Any], Any]) -> tuple[Any, Any, dict[str, float]]:
    """Run ``model = fit()`` then ``predict(model)``; return (model, predictions, figures).

    Figures: ``fit_s``, ``predict_s`` (wall), ``cpu_s`` (user + system of this process and its reaped
    children) and ``peak_mb`` (largest resident set of this process or of a child).
    """
    c0 = time.process_time()
    t0 = time.perf_counter()
    model = fit()
    fit_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    pred = predict(model)
    predict_s = time.perf_counter() - t1
    cpu_self = time.process_time() - c0
    try:  # reap loky workers (if any ran) so that their usage is counted
        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True)
    except ImportError:  # pragma: no cover
        pass
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, children.ru_maxrss) / 1024
    return model, pred, {"fit_s": fit_s, "predict_s": predict_s,
                         "cpu_s": cpu_self + children.ru_utime + children.ru_stime, "peak_mb": peak}


def run_isolated(script: str, point: dict[str, Any], extra_args: list[str] | None = None) -> dict[str, Any]:
    """Run ``python <script> --one '<point as JSON>' [extra_args]`` and return the JSON of its last line."""
    cmd = [sys.executable, script, "--one", json.dumps(point), *(extra_args or [])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.stderr.write(out.stderr[-5000:])
        raise RuntimeError(f"benchmark point {point} failed (exit {out.returncode})")
    return json.loads(out.stdout.strip().splitlines()[-1])
