"""benchmarks/bench_dask.py: the kind of each job and the phase of the fit its computation belongs to."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_dask", ROOT / "benchmarks" / "bench_dask.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod
    sys.path.remove(str(ROOT / "benchmarks"))


def test_jobs_are_counted_per_kind_and_per_phase(bench) -> None:
    assert bench._job_kind("batch_of__fit_binary_2_calls-0f3a") == "fit_binary"
    assert bench._job_kind("batch_of_normal_equations_1_calls-9c1e") == "normal_equations"
    windows = bench._windows(100.0, {"view_x": 2.0, "mapper_m": 1.0, "meta": 3.0})
    assert windows == {"view_x": (100.0, 102.0), "mapper_m": (102.0, 103.0), "meta": (103.0, 106.0)}

    def task(key: str, start: float, stop: float, transfer: float = 0.0, worker: str = "w1") -> dict:
        parts = [{"action": "compute", "start": start, "stop": stop}]
        if transfer:
            parts.insert(0, {"action": "transfer", "start": start - transfer, "stop": start})
        return {"key": key, "startstops": parts, "worker": worker}

    stream = [task("batch_of__fit_language_1_calls-a", 100.5, 101.5), task("batch_of__path_2_calls-b", 103.0, 103.5,
                                                                            transfer=0.25),
              task("batch_of__path_1_calls-c", 105.0, 105.5, worker="w2"),
              task("batch_of_ridge_path_1_calls-d", 102.5, 102.75)]
    kinds, phases, busiest = bench._jobs(stream, windows)
    assert kinds["path"] == {"tasks": 2, "compute_s": 1.0, "transfer_s": 0.25}
    assert kinds["fit_language"]["tasks"] == 1 and kinds["ridge_path"]["compute_s"] == 0.25
    assert phases == {"view_x": 1.0, "mapper_m": 0.25, "meta": 1.0}
    assert busiest == {"view_x": 1.0, "mapper_m": 0.25, "meta": 0.5}  # the meta phase's two jobs ran on two workers
