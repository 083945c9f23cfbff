"""Experiment tables (gfun.experiments.tables): significance marks, Markdown and LaTeX."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from gfun.experiments.tables import dagger, significance_table, to_latex, to_markdown
from gfun.metrics.significance import paired_ttest

pytest.importorskip("matplotlib")


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


def test_a_single_run_has_no_spread_and_says_so():
    """One run: its scores alone (no "± .000", no significance marks) and a legend that says why."""
    from gfun.experiments.tables import LEGEND, LEGEND_ONE_RUN

    one = _scores().query("run == 0")
    t = significance_table(one, measures=["F1_macro"], groups={"A": "g1", "B": "g1", "C": "g2", "D": "g2"})
    md = to_markdown(t)
    assert "±" not in md and LEGEND_ONE_RUN in md and LEGEND not in md
    assert "| ***.500*** |" in md and "| .490 |" in md
    assert "\\pm" not in to_latex(t) and "± .019" in to_markdown(significance_table(_scores(), measures=["F1_macro"]))


def test_unlabelled_flagged_is_best_lowest() -> None:
    """The share of unlabelled documents given a label is a cost: its best method is the lowest, and the legend says
    what the column is."""
    df = _scores().assign(unlabelled_flagged=lambda d: d["F1_macro"])
    t = significance_table(df, measures=["F1_macro", "unlabelled_flagged"]).set_index(["measure", "method"])
    assert t.loc[("F1_macro", "A"), "best"] and not t.loc[("F1_macro", "D"), "best"]
    assert t.loc[("unlabelled_flagged", "D"), "best"] and not t.loc[("unlabelled_flagged", "A"), "best"]
    assert t.loc[("unlabelled_flagged", "A"), "mark"] == ""  # A is far above D: significantly worse
    md = to_markdown(significance_table(df, measures=["F1_macro", "unlabelled_flagged"]))
    assert "| F1M | unlabelled |" in md and "(the lowest is the best)" in md
    assert "(the lowest is the best)" not in to_markdown(significance_table(df, measures=["F1_macro"]))
