"""benchmarks/ablation.py: each lever's difference from the base per corpus and setting, its significance, and the
levers that help one corpus and hurt another."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.benchmarks import load_benchmark


def _module():
    return load_benchmark("ablation")


def _rows(corpus_shift: dict[str, float], flagged: bool = False) -> pd.DataFrame:
    """5 runs of the base and of lever ``x:y=1`` (shifted by ``shift`` on F1M, noise elsewhere), many-shot."""
    rng = np.random.default_rng(0)
    rows = []
    shift = corpus_shift["shift"]
    for run in range(5):
        base = 0.5 + rng.normal(0, 0.01)
        for config, delta in (("b", 0.0), ("x:y=1", shift)):
            row = {"run": run, "config": config, "lang": "average", "setting": "many", "fit_s": 10.0,
                   "F1_macro": base + delta + rng.normal(0, 0.001), "F1_micro": base + rng.normal(0, 0.01),
                   "K_macro": base, "K_micro": base}
            if flagged:
                row["unlabelled_flagged"] = 0.2 + delta
            rows.append(row)
    return pd.DataFrame(rows)


def test_report_gives_differences_marks_and_disagreements(tmp_path, capsys):
    mod = _module()
    up, down = _rows({"shift": 0.05}, flagged=True), _rows({"shift": -0.05})
    text = mod.report({"up": up, "down": down}, "b", ["x:y=1"], {"x:y=1": "one lever"})
    lines = text.splitlines()
    up_row = next(line for line in lines[lines.index("## up many-shot"):] if line.startswith("| x:y=1"))
    assert up_row.startswith("| x:y=1 (one lever) | +0.050+ |")
    assert up_row.split("|")[-3].strip() == "+0.050+"  # unlabelled: the sign of the difference
    down_table = lines[lines.index("## down many-shot"):]
    assert "unlabelled" not in down_table[2]  # no unlabelled documents on that corpus: no column
    assert next(line for line in down_table if line.startswith("| x:y=1")).startswith("| x:y=1 (one lever) | -0.050- |")
    assert "- x:y=1, F1M: up on up many-shot; down on down many-shot" in lines
    # the same from the CSVs alone
    out = tmp_path / "out"
    out.mkdir()
    up.to_csv(out / "debtags.csv", index=False)
    down.to_csv(out / "exceptius.csv", index=False)
    assert mod.main(["--corpora", "debtags,exceptius", "--base", "b", "--levers", "x:y=1", "--baselines", "",
                     "--out", str(out), "--report-only"]) == 0
    assert "- x:y=1, F1M: up on debtags many-shot; down on exceptius many-shot" in (out / "ablation.md").read_text()
    assert "## debtags many-shot" in capsys.readouterr().out


def test_a_lever_within_noise_is_unmarked_and_agrees_everywhere():
    mod = _module()
    same = _rows({"shift": 0.0})
    text = mod.report({"a": same, "b2": same}, "b", ["x:y=1"], {})
    row = next(line for line in text.splitlines() if line.startswith("| x:y=1"))
    assert "+" not in row.split("|")[2].strip()[1:] and "-" not in row.split("|")[2].strip()[1:]
    assert "- none:" in text
