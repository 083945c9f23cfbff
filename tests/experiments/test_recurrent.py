"""The recurrent experiment (Tables 6-7) and the README's R example.

Both run on a tiny slice of debtags run 0 (skipped without ../shared/data) with a tiny random BERT, a small GRU
and hashed word vectors written by the test.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gfun.cli.main import main
from gfun.configuration import parse_config

ROOT = Path(__file__).resolve().parents[2]


# ----------------------------------------------------------------------------------- debtags slice
def _hashed_vec_files(folder: Path, texts_by_lang: dict[str, list[str]], dim: int = 8) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for lang, texts in texts_by_lang.items():
        words = sorted({w for t in texts for w in re.findall(r"\w+", t.lower())})
        lines = [f"{len(words)} {dim}"]
        for w in words:
            v = np.random.RandomState(int(hashlib.md5(w.encode()).hexdigest()[:8], 16)).randn(dim)
            lines.append(w + " " + " ".join(f"{x:.4f}" for x in v))
        (folder / f"wiki.multi.{lang}.vec").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def neural_slice(debtags_dir, tmp_path_factory) -> dict:
    pytest.importorskip("torch")
    from gfun.datasets.debtags import load_debtags
    from tests.neural_fixtures import tiny_bert_folder

    r = load_debtags(0, debtags_dir)
    texts = {lang: r.train.select(lang).texts + r.test.select(lang).texts for lang in ("da", "de")}
    root = tmp_path_factory.mktemp("slice")
    return {"vec": _hashed_vec_files(root / "vec", texts),
            "bert": tiny_bert_folder(root / "bert", texts["da"][:200] + texts["de"][:200], hidden=16, layers=2),
            "data": str(debtags_dir)}


def _tiny_neural_options(s: dict) -> list[str]:
    return ["--data-dir", s["data"], "--runs", "1", "--sample", "10,5,2", "--meta-C", "1", "--no-plots",
            "--word-vectors", f"vec:{s['vec']}", "--encoder", str(s["bert"]), "--neural-preset", "cpu",
            "--device", "cpu", "--view-param", "b.max_length=32", "--view-param", "b.max_epochs=1",
            "--view-param", "b.head_epochs=2", "--view-param", "r.hidden_size=8",
            "--view-param", "r.max_epochs=2", "--view-param", "r.batch_size=8"]


@pytest.mark.torch
def test_the_readme_r_example_runs(neural_slice, tmp_path, capsys) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = next(ln for ln in readme.splitlines() if ln.startswith("gfun experiment") and "r_m" in ln)
    argv = shlex.split(line.split("#")[0])[1:]
    out = tmp_path / "out"
    assert main([*argv, *_tiny_neural_options(neural_slice), "--out", str(out)]) == 0
    configs = argv[argv.index("--configs") + 1].split(",")
    table = pd.read_csv(out / "many-shot-debtags.csv")
    assert len(table) == len(configs) and table.filter(like="_mean").notna().all().all()
    for name in configs:
        assert (out / "cells" / "many-shot" / f"run=0__config={parse_config(name).name}.csv").is_file()


@pytest.mark.torch
def test_recurrent_experiment_tables_6_7(neural_slice, tmp_path, capsys) -> None:
    out = tmp_path / "rec"
    argv = ["experiment", "recurrent", "--dataset", "debtags", "--configs", "r_m,r_mw,xr_mw", "--reference", "x",
            *_tiny_neural_options(neural_slice), "--out", str(out)]
    assert main(argv) == 0
    md = (out / "recurrent-debtags.md").read_text(encoding="utf-8")
    assert "Tables 6-7" in md
    for label in ("gFun-R_M |", "gFun-R_MW |", "gFun-XR_MW |", "gFun-X |"):
        assert label in md
    assert sorted(p.name for p in (out / "cells" / "recurrent").glob("*.csv")) == [
        "run=0__config=r_m.csv", "run=0__config=r_mw.csv", "run=0__config=x.csv", "run=0__config=xr_mw.csv"]
    capsys.readouterr()
    assert main(["experiment", "recurrent", "--dataset", "debtags", "--configs", "r_m,xm", "--out",
                 str(tmp_path / "bad")]) == 1
    assert "xm have none: give them as --reference" in capsys.readouterr().err
