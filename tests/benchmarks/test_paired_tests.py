"""benchmarks/paired_tests.py: per-run language averages, paired differences and p-values per setting."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from tests.benchmarks import load_benchmark


def _module():
    return load_benchmark("paired_tests")


def test_pair_table_matches_scipy_on_language_averages():
    rng = np.random.default_rng(0)
    rows = []
    for run in range(5):
        for config, shift in (("a", 0.05), ("b", 0.0)):
            for lang in ("da", "de"):
                v = 0.5 + shift + rng.normal(0, 0.01)
                rows.append({"run": run, "config": config, "lang": lang, "F1_macro": v, "F1_micro": v,
                             "K_macro": v, "K_micro": v, "setting": "many-shot"})
    # zero-shot rows where "b" has no score (NaN) must not produce a row
    rows += [{"run": r, "config": c, "lang": "fi", "F1_macro": np.nan if c == "b" else 0.4, "F1_micro": 0.4,
              "K_macro": 0.4, "K_micro": 0.4, "setting": "zero-shot"} for r in range(5) for c in ("a", "b")]
    scores = pd.DataFrame(rows)
    table = _module().pair_table(scores, [("a", "b")])
    lines = table.splitlines()
    assert len(lines) == 3 and lines[2].startswith("| many-shot | a vs b | 5 |")
    avg = scores[scores.setting == "many-shot"].groupby(["config", "run"]).F1_macro.mean()
    diff = (avg["a"] - avg["b"]).mean()
    p = stats.ttest_rel(avg["a"], avg["b"]).pvalue
    assert f"{diff:+.3f} ({p:.2g})" in lines[2]


def test_language_averages_and_names_with_colons(tmp_path, capsys):
    """A benchmark's CSV of language averages (``lang`` always "average", or no ``lang`` column) is read as it
    is; ``--pair`` takes names that ``--pairs`` would split (``bench_pooled.py``'s ``name:param=value``)."""
    rng = np.random.default_rng(1)
    both, plain = "xmp:aggregation__forms=both", "xmp"
    rows = [{"run": run, "config": config, "setting": "many", "fit_s": 1.0, "lang": "average",
             **{m: 0.5 + shift + rng.normal(0, 0.01) for m in ("F1_macro", "F1_micro", "K_macro", "K_micro")}}
            for run in range(4) for config, shift in ((both, 0.02), (plain, 0.0))]
    path = tmp_path / "rows.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    assert _module().main([str(path), "--pair", both, plain]) == 0
    out = capsys.readouterr().out.splitlines()
    frame = pd.DataFrame(rows)
    a = frame[frame.config == both].F1_macro.to_numpy()
    b = frame[frame.config == plain].F1_macro.to_numpy()
    assert out[2].startswith(f"| many | {both} vs {plain} | 4 | {(a - b).mean():+.3f} "
                             f"({stats.ttest_rel(a, b).pvalue:.2g})")
