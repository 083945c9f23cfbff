"""The aggregation experiment (gfun.experiments.aggregation) on a tiny sample of the bundled demo data."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from gfun.configuration import parse_configs
from gfun.experiments.aggregation import run_aggregation
from tests.experiments.settings import tiny

pytest.importorskip("matplotlib")


def test_aggregation(tmp_path):
    res = run_aggregation(dataclasses.replace(tiny(), runs=2), parse_configs("naive,x,xw"), tmp_path,
                          policies=("concat", "mean", "select"))
    assert set(res["scores"].config) == {"naive", "x-concat", "x-mean", "x-select", "xw-concat", "xw-mean",
                                         "xw-select"}
    md = (tmp_path / "aggregation-demo.md").read_text()
    assert "gFun-XW (concat)" in md and "gFun-XW (mean)" in md and "gFun-XW (select)" in md
    assert (tmp_path / "aggregation-demo.tex").stat().st_size > 0
    pairs = pd.read_csv(tmp_path / "aggregation-demo-pairs.csv")
    # within each policy, XW is compared with X (its sub-configuration), and with the paper's mean of XW
    row = pairs[(pairs.policy == "select") & (pairs.config == "gFun-XW (select)") & (pairs.measure == "F1_macro")]
    assert list(row.reference) == ["gFun-X (select)", "gFun-XW (mean)"] and row["p"].between(0, 1).all()
    assert "Paired comparisons" in (tmp_path / "aggregation-demo-pairs.md").read_text()
