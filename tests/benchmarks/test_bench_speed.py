"""benchmarks/bench_speed.py: gFun-X train + evaluate as whole processes, and the authors' code's averages."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gfun.datasets.demo import load_demo
from tests.benchmarks import load_benchmark


def _module():
    return load_benchmark("bench_speed")


def test_the_authors_averages_are_read_from_their_output():
    """``main.py`` prints ``Averages: MF1, mF1, ... [F1M F1µ ...]``: the row takes F1M, F1µ and the process time."""
    line = "Averages: MF1, mF1, MK, mK, MP, mP, MR, mR [0.38  0.551 0.3 0.4 0.1 0.1 0.1 0.1]"
    row = _module().run_authors(f"echo '{line}'")
    assert (row["F1_macro"], row["F1_micro"]) == (0.38, 0.551) and row["total_s"] > 0
    assert np.isnan(_module().run_authors("echo done")["F1_macro"])


def test_a_row_runs_gfun_train_and_evaluate(tmp_path: Path):
    """A row is ``gfun train`` then ``gfun evaluate`` in their own processes: both timed, the fit time ``gfun train``
    reports and the average scores ``gfun evaluate --json`` prints."""
    train, test = load_demo()
    langs = ("de", "en")
    for corpus, name, n in ((train, "train", 60), (test, "test", 20)):
        idx = np.concatenate([ix[:n] for lang, ix in corpus.by_language().items() if lang in langs])
        corpus.subset(np.sort(idx)).to_jsonl(tmp_path / f"{name}.jsonl")
    row = _module().run_gfun(tmp_path, "1", 1, tmp_path / "model")
    assert 0 < row["fit_s"] < row["train_s"] and row["total_s"] == pytest.approx(row["train_s"] + row["evaluate_s"])
    assert 0 < row["F1_micro"] <= 1 and (tmp_path / "model").is_dir()
