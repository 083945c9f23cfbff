"""The experiments (gfun.experiments): configurations, significance tables, resumability, each command end to end.

Everything runs on a tiny sample of the bundled demo data (3 languages, a few dozen documents each, meta C 1).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pytest

from gfun.cli.experiment import add_experiment_parser
from gfun.configuration import parse_config, parse_configs
from gfun.experiments.aggregation import run_aggregation
from gfun.experiments.learning_curve import run_learning_curve
from gfun.experiments.many_shot import run_many_shot
from gfun.experiments.runner import CellStore, ExperimentSettings
from gfun.experiments.tables import dagger, significance_table, to_latex, to_markdown
from gfun.experiments.zero_shot import run_zero_shot
from gfun.metrics.significance import paired_ttest
from gfun.wordvectors.base import WordVectorSource

pytest.importorskip("matplotlib")

TINY = (40, 20, 3)


def tiny(runs: int = 1, **kw) -> ExperimentSettings:
    return ExperimentSettings(dataset="demo", runs=runs, meta_C=1.0, seed=0, sample=TINY, **kw)


class HashedVectors(WordVectorSource):
    """A stand-in word-vector source: a seeded random vector per word, in every language."""

    @property
    def dim(self) -> int:
        return 8

    def lookup(self, lang: str, vocabulary: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        rows = [np.random.RandomState(int(hashlib.md5(w.encode()).hexdigest()[:8], 16)).randn(self.dim)
                for w in vocabulary]
        return (np.asarray(rows, dtype=np.float32).reshape(len(vocabulary), self.dim),
                np.ones(len(vocabulary), dtype=bool))


# ------------------------------------------------------------------------------------------- configurations
def test_parse_configs_names_and_errors():
    cfgs = parse_configs("naive,fun,x,wmx,xm-concat,x")
    assert [c.name for c in cfgs] == ["naive", "fun", "x", "xmw", "xm-concat"]
    assert [c.display for c in cfgs] == ["Naive", "Fun", "gFun-X", "gFun-XMW", "gFun-XM (concat)"]
    assert cfgs[3].group == "gFun, 3 views" and cfgs[0].group == "baselines"
    assert parse_config("m").serves_unseen and not parse_config("x").serves_unseen
    neural = parse_configs("bert,xmb,bmw-concat,r,r_mw,xbr_m,rx_mw-concat")
    assert [c.name for c in neural] == ["bert", "xmb", "mwb-concat", "r_m", "r_mw", "xbr_m", "xr_mw-concat"]
    assert [c.display for c in neural][:2] == ["BERT (fine-tuned)", "gFun-XMB"]
    assert neural[4].display == "gFun-R_MW" and neural[4].r_wce and not neural[3].r_wce
    assert neural[0].serves_unseen and neural[1].serves_unseen and not parse_config("xb-concat").serves_unseen
    with pytest.raises(ValueError, match="recurrent view"):
        parse_config("xm_mw")
    with pytest.raises(ValueError, match="_m or _mw"):
        parse_config("r_w")
    with pytest.raises(ValueError, match="unknown configuration"):
        parse_config("xq")
    with pytest.raises(ValueError, match="aggregation"):
        parse_config("xm-median")


# ------------------------------------------------------------------------------------------- tables
def _scores() -> pd.DataFrame:
    # A is best; B differs from A by a constant-ish small amount with noise (p between .001 and .05);
    # C is equal to A up to noise (p >= .05); D is far below with a constant gap (p = 0).
    a = np.array([0.50, 0.52, 0.48, 0.51, 0.49, 0.53])
    b = a - np.array([0.010, 0.030, 0.015, 0.025, 0.020, 0.012])
    c = a + np.array([-0.02, 0.02, -0.01, 0.01, -0.015, 0.005])
    d = a - 0.2
    rows = [{"config": n, "run": r, "F1_macro": v[r], "F1_micro": v[r]}
            for n, v in (("A", a), ("B", b), ("C", c), ("D", d)) for r in range(6)]
    return pd.DataFrame(rows)


def test_significance_marks_follow_ttest():
    df = _scores()
    a = df[df.config == "A"].F1_macro.to_numpy()
    p = {n: paired_ttest(a, df[df.config == n].F1_macro.to_numpy()) for n in "BCD"}
    assert 0.001 < p["B"] < 0.05 and p["C"] >= 0.05 and p["D"] <= 0.001
    t = significance_table(df, measures=["F1_macro"], groups={"A": "g1", "B": "g1", "C": "g2", "D": "g2"})
    t = t.set_index("method")
    assert t.loc["A", "best"] and not t.loc[["B", "C", "D"], "best"].any()
    assert t["mark"].to_dict() == {"A": "", "B": "†", "C": "‡", "D": ""}
    assert t.loc["C", "group_best"] and t.loc["A", "group_best"] and not t.loc["B", "group_best"]
    assert math.isclose(t.loc["A", "std"], np.std(a, ddof=1))
    assert (dagger(0.05), dagger(0.0499), dagger(0.001), dagger(float("nan"))) == ("‡", "†", "", "")


def test_markdown_and_latex_rendering():
    t = significance_table(_scores(), measures=["F1_macro", "F1_micro"],
                           groups={"A": "g1", "B": "g1", "C": "g2", "D": "g2"})
    md = to_markdown(t, labels={"A": "gFun-A"})
    lines = {line.split("|")[1].strip(): line for line in md.splitlines() if line.startswith("| ")}
    assert "| F1M | F1µ |" in lines["Method"]
    assert "***.505*** ± .019 |" in lines["gFun-A"]  # best overall and of its group
    assert "| .486 ± .019† |" in lines["B"]
    assert "| *.503* ± .032‡ |" in lines["C"]  # best of group g2, not significantly different
    assert "| .305 ± .019 |" in lines["D"]
    tex = to_latex(t, caption="x")
    assert "\\textbf{.505}" in tex and "$^{\\ddag}$" in tex and "$^{\\dag}$" in tex
    assert "\\cellcolor{gray!20}" in tex and tex.count("\\midrule") == 2  # header + one group break


# ------------------------------------------------------------------------------------------- many-shot
def test_many_shot_resumes_to_the_same_tables(tmp_path):
    settings = tiny(runs=2)
    configs = parse_configs("naive,x")
    first = run_many_shot(settings, configs, tmp_path, plots=False)
    assert first["cells"] == {"done": 4, "skipped": 0}
    md = (tmp_path / "many-shot-demo.md").read_text()
    csv = (tmp_path / "many-shot-demo-scores.csv").read_text()
    cell = CellStore(tmp_path / "cells" / "many-shot").load({"run": 1, "config": "x"})
    assert set(cell.columns) >= {"run", "config", "lang", "class", "TP", "FP", "FN", "TN"}
    assert sorted(cell.lang.unique()) == ["da", "de", "en"] and len(cell) == 3 * 30
    assert (tmp_path / "cells" / "many-shot" / "run=1__config=x.parquet").exists()

    again = run_many_shot(settings, configs, tmp_path, plots=False)
    assert again["cells"] == {"done": 0, "skipped": 4}
    (tmp_path / "cells" / "many-shot" / "run=0__config=naive.csv").unlink()
    resumed = run_many_shot(settings, configs, tmp_path, plots=False)
    assert resumed["cells"] == {"done": 1, "skipped": 3}
    assert (tmp_path / "many-shot-demo.md").read_text() == md
    assert (tmp_path / "many-shot-demo-scores.csv").read_text() == csv
    assert not list((tmp_path / "cells").rglob("*.part"))
    with pytest.raises(ValueError, match="other settings"):
        run_many_shot(tiny(runs=2, languages=["da", "de"]), configs, tmp_path, plots=False)


def test_views_are_fitted_once_per_run_and_give_the_same_tables(tmp_path, monkeypatch):
    import gfun.funnelling.branch

    fitted = []
    real = gfun.funnelling.branch._fit_branch

    def counting(view, *args, **kw):
        fitted.append(view.letter)
        return real(view, *args, **kw)

    monkeypatch.setattr(gfun.funnelling.branch, "_fit_branch", counting)
    configs = parse_configs("fun,x,w,xw")
    cached = run_many_shot(tiny(runs=2), configs, tmp_path / "cached", plots=False)
    assert sorted(fitted) == sorted(["x"] * 2 * 2 + ["w"] * 2)  # per run: x for Fun (no normalisation), x, w
    assert not (tmp_path / "cached" / ".view-cache").exists()  # removed once the experiment is complete
    fitted.clear()
    fresh = run_many_shot(tiny(runs=2, view_cache=""), configs, tmp_path / "fresh", plots=False)
    assert sorted(fitted) == sorted(["x"] * 3 * 2 + ["w"] * 2 * 2)
    pd.testing.assert_frame_equal(cached["scores"], fresh["scores"])
    assert (tmp_path / "cached" / "many-shot-demo.md").read_text() == (tmp_path / "fresh" / "many-shot-demo.md"
                                                                        ).read_text()


def test_cli_many_shot_quick(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="gfun")
    add_experiment_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", "many-shot", "--quick", "--configs", "naive,x", "--out", str(tmp_path)])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "| Naive |" in out and "| gFun-X |" in out and "4 cell(s) computed" in out
    for name in ("many-shot-demo.md", "many-shot-demo.tex", "many-shot-demo.csv", "many-shot-demo-scores.csv",
                 "many-shot-demo-improvement.csv", "many-shot-demo-improvement-F1_macro.png"):
        assert (tmp_path / name).stat().st_size > 0, name
    with pytest.raises(ValueError, match="unknown configuration"):
        args = parser.parse_args(["experiment", "many-shot", "--quick", "--configs", "q", "--out", str(tmp_path)])
        args.func(args)


def test_many_shot_zero_shot_table(tmp_path, monkeypatch):
    import gfun.experiments.many_shot as many_shot

    real = many_shot.load_run

    def without_english(settings, run, *, zero_shot_test=True):  # en: a test language without training documents
        train, test = real(settings, run, zero_shot_test=zero_shot_test)
        return train.select(["da", "de"]), test if zero_shot_test else test.select(["da", "de"])

    monkeypatch.setattr(many_shot, "load_run", without_english)
    settings = tiny(runs=2, view_params={"m": {"source": HashedVectors()}})
    configs = parse_configs("naive,x,m")
    res = run_many_shot(settings, configs, tmp_path / "zs", plots=False, zero_shot_test=True)
    assert res["zero_shot_languages"] == ["en"]
    s = res["scores"]
    zero = s[s.setting == "zero-shot"]
    assert set(zero.lang) == {"en", "average"} and zero[zero.config == "m"].F1_macro.notna().all()
    assert zero[zero.config != "m"].F1_macro.isna().all()  # Naive and X cannot serve en
    md = (tmp_path / "zs" / "many-shot-demo-zero-shot.md").read_text()
    assert "| gFun-M |" in md and "gFun-X |" not in md and "Naive" not in md and "| Method | en |" in md
    table = pd.read_csv(tmp_path / "zs" / "many-shot-demo-zero-shot.csv", index_col="config")
    assert list(table.index) == ["m"]
    en = zero[(zero.config == "m") & (zero.lang == "en")]
    assert table.loc["m", "F1_macro_mean"] == pytest.approx(en.F1_macro.mean())
    # the many-shot table is the one of an experiment without zero-shot documents
    plain = run_many_shot(settings, configs, tmp_path / "plain", plots=False)
    assert plain["zero_shot_languages"] == [] and not (tmp_path / "plain" / "many-shot-demo-zero-shot.md").exists()
    assert (tmp_path / "plain" / "many-shot-demo.md").read_text() == (tmp_path / "zs" / "many-shot-demo.md").read_text()
    pd.testing.assert_frame_equal(plain["scores"].reset_index(drop=True),
                                  s[s.setting == "many-shot"].reset_index(drop=True))
    with pytest.raises(ValueError, match="other settings"):  # resumed only with the same choice
        run_many_shot(settings, configs, tmp_path / "zs", plots=False)


def test_cli_sample_and_zero_shot_test_options():
    from gfun.cli.experiment import settings_from_args

    parser = argparse.ArgumentParser(prog="gfun")
    add_experiment_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["experiment", "many-shot", "--dataset", "debtags", "--sample", "150,50,7",
                              "--zero-shot-test"])
    assert settings_from_args(args).sample == (150, 50, 7) and args.zero_shot_test
    assert settings_from_args(parser.parse_args(["experiment", "many-shot", "--quick"])).sample == (60, 30, 3)
    with pytest.raises(ValueError, match="TRAIN,TEST,LANGUAGES"):
        settings_from_args(parser.parse_args(["experiment", "many-shot", "--dataset", "d", "--sample", "150,50"]))
    with pytest.raises(SystemExit):  # the zero-shot experiment has its own zero-shot cells
        parser.parse_args(["experiment", "zero-shot", "--quick", "--zero-shot-test"])


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


# ---------------------------------------------------------------------------- learning curve, aggregation
def test_learning_curve(tmp_path):
    res = run_learning_curve(tiny(), parse_configs("naive,x"), tmp_path, targets=["de"], fractions=[0, 50, 100])
    summ = res["summary"].set_index(["config", "fraction"])
    assert np.isnan(summ.loc[("naive", 0), "F1_macro"]) and np.isnan(summ.loc[("x", 0), "F1_macro"])
    assert not np.isnan(summ.loc[("x", 50), "F1_macro"])
    assert (tmp_path / "learning-curve-demo-de.png").stat().st_size > 0
    assert "target de" in (tmp_path / "learning-curve-demo.md").read_text()
    with pytest.raises(ValueError, match="no training documents"):
        run_learning_curve(tiny(), parse_configs("x"), tmp_path, targets=["sv"])


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
