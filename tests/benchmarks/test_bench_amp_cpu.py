"""benchmarks/bench_amp_cpu.py: the forward pass timed in float32 and in bfloat16, on a tiny local BERT."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.benchmarks import load_benchmark
from tests.neural_fixtures import single_torch_thread, tiny_bert_folder

pytest.importorskip("torch")
pytest.importorskip("transformers")
one_thread = pytest.fixture(scope="module", autouse=True)(single_torch_thread)


def test_prints_one_row_per_precision_with_a_time_per_repeat(tmp_path: Path, capsys) -> None:
    from gfun.datasets.demo import load_demo

    folder = tiny_bert_folder(tmp_path / "tiny", list(load_demo()[1].texts[:40]))
    assert load_benchmark("bench_amp_cpu").main(["--model", str(folder), "--docs", "40", "--repeat", "2",
                                                 "--threads", "1", "--max-length", "48"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{folder}, 40 documents, 1 threads; torch CPU capability ")
    rows = {line.split()[0]: re.findall(r"(\d+\.\d+)s", line) for line in lines[2:]}
    assert set(rows) == {"float32", "bfloat16"} and all(len(v) == 2 and all(float(s) > 0 for s in v)
                                                       for v in rows.values())
