"""The many-shot experiment (gfun.experiments.many_shot): resumability, views fitted once per run, the command.

Everything runs on a tiny sample of the bundled demo data (3 languages, a few dozen documents each, meta C 1).
"""

from __future__ import annotations

import argparse

import pandas as pd
import pytest

from gfun.cli.experiment import add_experiment_parser
from gfun.configuration import parse_configs
from gfun.experiments.many_shot import run_many_shot
from gfun.experiments.runner import CellStore
from tests.experiments.settings import HashedVectors, tiny

pytest.importorskip("matplotlib")


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


def test_one_run_tables_say_one_run(tmp_path):
    """The title counts "1 run", and the cells show no "± .000" for a spread that one run does not have."""
    run_many_shot(tiny(runs=1), parse_configs("naive"), tmp_path, plots=False)
    md = (tmp_path / "many-shot-demo.md").read_text()
    assert "(1 run)" in md and "runs)" not in md and "±" not in md.split("\n\n")[1]
    assert "(1 run)." in (tmp_path / "many-shot-demo.tex").read_text()
