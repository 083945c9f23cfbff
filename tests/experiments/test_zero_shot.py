"""The zero-shot experiment (gfun.experiments.zero_shot): its grid, through the API and the command line."""

from __future__ import annotations

import pandas as pd
import pytest

from gfun.configuration import parse_configs
from gfun.experiments.zero_shot import run_zero_shot
from tests.experiments.settings import HashedVectors, tiny

pytest.importorskip("matplotlib")


# ------------------------------------------------------------------------------------------- zero-shot
def test_zero_shot_grid(tmp_path):
    settings = tiny(view_params={"m": {"source": HashedVectors()}})
    res = run_zero_shot(settings, parse_configs("fun,m"), tmp_path)
    assert res["languages"] == ["da", "de", "en"]
    s = res["scores"]
    assert len(s) == 2 * 3 * 3  # configs x iterations x test languages
    fun_zero = s[(s.config == "fun") & (s.setting == "zero-shot")]
    assert len(fun_zero) == 3 and fun_zero.F1_macro.notna().all()  # Fun (2019): its auxiliary M classifier
    assert s[s.config == "m"].F1_macro.notna().all()  # the M view can
    assert (s[s.setting == "many-shot"].F1_macro.notna()).all()
    g = pd.read_csv(tmp_path / "zero-shot-demo-grid-fun-F1_macro.csv", index_col=0)
    assert list(g.columns) == ["da", "de", "en"] and list(g.index) == ["1: +da", "2: +de", "3: +en"]
    assert not g.isna().any().any()  # Fun serves unseen languages through its auxiliary M classifier
    for name in ("zero-shot-demo-F1_macro.png", "zero-shot-demo-by-n-languages-K_micro.png",
                 "zero-shot-demo-by-n-languages.csv", "zero-shot-demo.md"):
        assert (tmp_path / name).stat().st_size > 0, name


def test_cli_zero_shot_prints_the_grids(tmp_path, capsys):
    """`gfun experiment zero-shot` prints every configuration's grid for every measure, not a one-line summary."""
    from gfun.cli.main import main

    assert main(["-q", "experiment", "zero-shot", "--quick", "--runs", "1", "--configs", "naive,x", "--no-plots",
                 "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    languages = sorted(pd.read_csv(tmp_path / "zero-shot-demo-scores.csv")["lang"].unique())
    assert len(languages) == 3
    header = "| training | " + " | ".join(languages) + " |"
    for name in ("Naive", "gFun-X"):  # neither serves a language without training documents
        for measure in ("F1M", "F1µ", "KM", "Kµ"):
            after = out.split(f"## {name}: {measure}\n\n", 1)[1].splitlines()
            section = after[:next(i for i, line in enumerate(after) if not line.startswith("|"))]
            assert section[0] == header and len(section) == 2 + len(languages), section
            first = section[2].split(" | ")  # trained on the first language only: the others are not served
            assert first[0] == f"| 1: +{languages[0]}" and float(first[1]) > 0 and first[2:] == ["-"] * (
                len(languages) - 2) + ["- |"], section[2]
            assert "-" not in section[-1].replace(f"+{languages[-1]}", "")  # all languages: every cell served
    assert out.rstrip().splitlines()[-1].startswith("zero-shot: 6 cell(s) computed, 0 resumed")
