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
    one = mod.extrapolate(1e6, machines=1, serial="constant", **kw)
    assert one == pytest.approx(10 + 75 * 100 / 8)
    assert mod.extrapolate(1e6, machines=1, serial="linear", **kw) == pytest.approx(1000 + 75 * 100 / 8)
    # the largest language's TF-IDF job is a floor of the X view that more machines do not lower
    kw.update(largest_share=0.5, vectorizer_s=4.0)
    many = mod.extrapolate(1e6, machines=1000, serial="constant", **kw)
    assert many == pytest.approx(10 + 4.0 * 0.5 * 100 + 25 * 100 / 8000)
    # counted in blocks, only its merge is: the floor shrinks by the merge's share
    blocks = mod.extrapolate(1e6, machines=1000, serial="constant", merge_share=0.1, **kw)
    assert blocks == pytest.approx(10 + 4.0 * 0.5 * 100 * 0.1 + 25 * 100 / 8000)
    # bytes between machines count from two machines on
    kw.update(bytes_per_doc=1250.0)
    assert mod.extrapolate(1e6, machines=2, serial="constant", **kw) - mod.extrapolate(
        1e6, machines=2, serial="constant", **{**kw, "bytes_per_doc": 0.0}) == pytest.approx(1.0)


def test_main_prints_the_tables(tmp_path, capsys):
    path = tmp_path / "curve.csv"
    _curve({"view_x": 5.0, "meta": 6.0}, {"view_x": 48.0, "meta": 24.0}).to_csv(path, index=False)
    assert _module().main([str(path), "--sizes", "1e6", "--machines", "1,16"]) == 0
    out = capsys.readouterr().out
    assert "W = 48.0 core-s, S = 5.0 s" in out and "1,000,000 documents" in out and "| 16 |" in out


def test_the_serial_part_is_fitted_on_two_sizes_and_extrapolated_from_the_larger(tmp_path, capsys):
    mod = _module()
    W = {"view_x": 48.0, "meta": 24.0}
    # S = 2 + 1e-4 n for the X view, constant 6 s for the meta tier
    small = _curve({"view_x": 2.0 + 1e-4 * 40000, "meta": 6.0}, W, n=40000)
    large = _curve({"view_x": 2.0 + 1e-4 * 100000, "meta": 6.0}, {p: 2.5 * w for p, w in W.items()}, n=100000)
    fitted = mod.fit_serial(mod.split_phases(pd.concat([small, large])))
    assert fitted["view_x"] == pytest.approx((2.0, 1e-4)) and fitted["meta"] == pytest.approx((6.0, 0.0), abs=1e-9)
    kw = dict(n0=1e5, cores=8, S={"view_x": 12.0, "meta": 6.0}, W={"view_x": 120.0, "meta": 60.0}, x_exponent=1.0,
              largest_share=0.0, vectorizer_s=0.0, bytes_per_doc=0.0, bandwidth_gbit=10.0)
    at = mod.extrapolate(1e6, machines=2, serial=fitted, **kw)
    assert at == pytest.approx(2.0 + 100.0 + 6.0 + 180 * 10 / 16)
    # between the bounds: S constant below, S as n above
    assert mod.extrapolate(1e6, machines=2, serial="constant", **kw) < at < mod.extrapolate(
        1e6, machines=2, serial="linear", **kw)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    small.to_csv(a, index=False)
    large.to_csv(b, index=False)
    assert mod.main([str(a), str(b), "--sizes", "1e6", "--machines", "1,16"]) == 0
    out = capsys.readouterr().out
    assert "40,000 training documents" in out and "100,000 training documents" in out
    assert "view_x: a = 2.00 s, b = 100.0 s per 10^6 documents" in out and "S fitted" in out


def test_the_serial_part_is_split_where_the_busiest_worker_is_known():
    mod = _module()
    df = _curve({"view_x": 5.0, "meta": 6.0}, {"view_x": 48.0, "meta": 24.0})
    for p in mod.PHASES:  # the busiest worker computed 1 s more than the mean
        df[f"busiest_worker_{p}_s"] = df[f"workers_{p}_s"] / df["workers"] + 1.0
    parts = mod.split_phases(df)
    assert parts.imbalance.to_numpy() == pytest.approx(1.0)
    assert (parts.idle + parts.imbalance).to_numpy() == pytest.approx(parts.S.to_numpy())
