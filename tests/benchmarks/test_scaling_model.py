"""benchmarks/scaling_model.py: the split of each phase into S and W, the model's curve and its extrapolation."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from tests.benchmarks import load_benchmark


def _module():
    return load_benchmark("scaling_model")


def _curve(S: dict[str, float], W: dict[str, float], n: int = 40000) -> pd.DataFrame:
    """bench_dask rows of a fit that follows S + W / N exactly."""
    rows = []
    for workers in (1, 2, 4, 8):
        row = {"mode": "dask", "workers": workers, "n_jobs": 2, "n_train": n,
               "jobs": json.dumps({"fit_vectorizer": {"tasks": 7, "compute_s": 4.0, "transfer_s": 0.0}})}
        for p in ("view_x", "meta"):
            row[f"{p}_s"] = S[p] + W[p] / workers
            row[f"workers_{p}_s"] = W[p] if workers > 1 else float("nan")
        row["fit_s"] = row["view_x_s"] + row["meta_s"]
        rows.append(row)
    return pd.DataFrame(rows)


def test_serial_and_parallel_parts_are_recovered_and_one_worker_is_left_out():
    mod = _module()
    S, W = {"view_x": 5.0, "meta": 6.0}, {"view_x": 48.0, "meta": 24.0}
    parts = mod.split_phases(_curve(S, W))
    assert sorted(parts.workers.unique()) == [2, 4, 8]  # one worker runs in the calling process: not a point
    assert parts.S.to_numpy() == pytest.approx([S[p] for _ in range(3) for p in mod.PHASES])
    assert mod.model_fit(4, S, W) == pytest.approx(5 + 12 + 6 + 6)


def test_extrapolation_bounds_and_floors():
    mod = _module()
    S, W = {"view_x": 5.0, "meta": 5.0}, {"view_x": 50.0, "meta": 25.0}
    kw = dict(n0=1e4, cores=8, S=S, W=W, x_exponent=1.0, largest_share=0.0, vectorizer_s=0.0, bytes_per_doc=0.0,
              bandwidth_gbit=10.0)
    one = mod.extrapolate(1e6, machines=1, serial_grows=False, **kw)
    assert one == pytest.approx(10 + 75 * 100 / 8)
    assert mod.extrapolate(1e6, machines=1, serial_grows=True, **kw) == pytest.approx(1000 + 75 * 100 / 8)
    # the largest language's TF-IDF job is a floor of the X view that more machines do not lower
    kw.update(largest_share=0.5, vectorizer_s=4.0)
    many = mod.extrapolate(1e6, machines=1000, serial_grows=False, **kw)
    assert many == pytest.approx(10 + 4.0 * 0.5 * 100 + 25 * 100 / 8000)
    # counted in blocks, only its merge is: the floor shrinks by the merge's share
    blocks = mod.extrapolate(1e6, machines=1000, serial_grows=False, merge_share=0.1, **kw)
    assert blocks == pytest.approx(10 + 4.0 * 0.5 * 100 * 0.1 + 25 * 100 / 8000)
    # bytes between machines count from two machines on
    kw.update(bytes_per_doc=1250.0)
    assert mod.extrapolate(1e6, machines=2, serial_grows=False, **kw) - mod.extrapolate(
        1e6, machines=2, serial_grows=False, **{**kw, "bytes_per_doc": 0.0}) == pytest.approx(1.0)


def test_main_prints_the_tables(tmp_path, capsys):
    path = tmp_path / "curve.csv"
    _curve({"view_x": 5.0, "meta": 6.0}, {"view_x": 48.0, "meta": 24.0}).to_csv(path, index=False)
    assert _module().main([str(path), "--sizes", "1e6", "--machines", "1,16"]) == 0
    out = capsys.readouterr().out
    assert "W = 48.0 core-s, S = 5.0 s" in out and "1,000,000 documents" in out and "| 16 |" in out
