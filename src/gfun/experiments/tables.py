"""Results tables like the paper's Tables 3-5: mean ± std over runs, best in bold, group best marked,
daggers for the methods not significantly different from the best.

Significance follows the caption of the paper's Tables 3-4: a paired two-tailed t-test over runs between
each method and the best one (:func:`gfun.metrics.significance.paired_ttest`); ``†`` marks 0.001 < p < 0.05 and ``‡``
marks p >= 0.05 (not significantly different even at 0.05); no mark means p <= 0.001.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from gfun.metrics.evaluation import UNLABELLED_FLAGGED
from gfun.metrics.formatting import DISPLAY_NAMES
from gfun.metrics.measures import MEASURES
from gfun.metrics.significance import paired_ttest

__all__ = ["ALPHA_STRICT", "ALPHA", "LEGEND", "LEGEND_ONE_RUN", "dagger", "significance_table", "to_latex",
           "to_markdown"]

ALPHA = 0.05
ALPHA_STRICT = 0.001


def dagger(p: float) -> str:
    """``"‡"`` for p >= 0.05, ``"†"`` for 0.001 < p < 0.05, ``""`` otherwise (or for NaN)."""
    if p is None or math.isnan(p):
        return ""
    if p >= ALPHA:
        return "‡"
    if p > ALPHA_STRICT:
        return "†"
    return ""


def significance_table(run_scores: pd.DataFrame, *, method_col: str = "config", run_col: str = "run",
                       measures: Sequence[str] = MEASURES, order: Sequence[str] | None = None,
                       groups: Mapping[str, str] | None = None,
                       lower_is_better: Sequence[str] = (UNLABELLED_FLAGGED,)) -> pd.DataFrame:
    """Mean, std, best, group-best and significance of every (method, measure).

    Parameters
    ----------
    run_scores : pandas.DataFrame
        One row per (method, run): columns ``method_col``, ``run_col`` and the measures (each run's
        score averaged over languages).
    method_col, run_col : str
    measures : sequence of str
    order : sequence of str, optional
        Methods in output order (default: order of appearance).
    groups : mapping of method to group name, optional
        For the group-best mark; by default every method is its own group (no marks).
    lower_is_better : sequence of str
        The measures whose best is the lowest mean (``unlabelled_flagged``: the share of the documents without any
        label that are given one).

    Returns
    -------
    pandas.DataFrame
        One row per (method, measure), in ``order``: ``method, group, measure, mean, std`` (sample
        standard deviation over runs, ddof=1; 0 for one run), ``n_runs``, ``best`` (highest mean, or lowest for
        ``lower_is_better``; ties all best), ``group_best``, ``p_value`` (paired t-test against the best over
        the runs both have; NaN for the best, or with fewer than 2 common runs) and ``mark`` (see :func:`dagger`).
    """
    methods = list(order) if order is not None else list(dict.fromkeys(run_scores[method_col]))
    groups = dict(groups) if groups else {m: m for m in methods}
    rows = []
    for measure in measures:
        per = {m: run_scores.loc[run_scores[method_col] == m].set_index(run_col)[measure].dropna() for m in methods}
        means = {m: float(s.mean()) if len(s) else math.nan for m, s in per.items()}
        sign = -1.0 if measure in lower_is_better else 1.0  # best = the highest of sign * mean
        valid = [m for m in methods if not math.isnan(means[m])]
        top = max((sign * means[m] for m in valid), default=math.nan)
        best_methods = [m for m in valid if sign * means[m] == top]
        group_top: dict[str, float] = {}
        for m in valid:
            g = groups.get(m, m)
            group_top[g] = max(group_top.get(g, -math.inf), sign * means[m])
        for m in methods:
            s = per[m]
            is_best = m in best_methods
            p = math.nan
            if best_methods and not is_best and len(s):
                ref = per[best_methods[0]]
                common = s.index.intersection(ref.index)
                if len(common) >= 2:
                    p = paired_ttest(ref.loc[common].to_numpy(), s.loc[common].to_numpy())
            rows.append({"method": m, "group": groups.get(m, m), "measure": measure, "mean": means[m],
                         "std": float(s.std(ddof=1)) if len(s) > 1 else (0.0 if len(s) else math.nan),
                         "n_runs": len(s), "best": is_best,
                         "group_best": (not math.isnan(means[m]))
                         and sign * means[m] == group_top.get(groups.get(m, m)),
                         "p_value": p, "mark": dagger(p)})
    return pd.DataFrame(rows)


def _num(x: float) -> str:
    if x is None or math.isnan(x):
        return "-"
    text = f"{x:.3f}"
    return text.replace("0.", ".", 1) if abs(x) < 1 else text


def _cells(table: pd.DataFrame, labels: Mapping[str, str] | None, latex: bool
           ) -> tuple[list[str], list[str], list[list[str]], list[str]]:
    measures = list(dict.fromkeys(table["measure"]))
    methods = list(dict.fromkeys(table["method"]))
    mark_groups = table.groupby("group")["method"].nunique().gt(1).to_dict()
    by = table.set_index(["method", "measure"])
    body = []
    for m in methods:
        row = []
        for meas in measures:
            r = by.loc[(m, meas)]
            if math.isnan(r["mean"]):
                row.append("-")
                continue
            mean = _num(r["mean"])
            # one run has no standard deviation (nor significance test): its score alone, no "± .000"
            spread = f" $\\pm$ {_num(r['std'])}" if latex else f" ± {_num(r['std'])}"
            spread = spread if r["n_runs"] > 1 else ""
            mark = r["mark"]
            group_best = bool(r["group_best"]) and mark_groups.get(r["group"], False)
            if latex:
                mean = f"\\textbf{{{mean}}}" if r["best"] else mean
                sup = {"†": "$^{\\dag}$", "‡": "$^{\\ddag}$"}.get(mark, "")
                cell = f"{mean}{spread}{sup}"
                row.append(f"\\cellcolor{{gray!20}}{cell}" if group_best else cell)
            else:
                if r["best"] and group_best:
                    mean = f"***{mean}***"
                elif r["best"]:
                    mean = f"**{mean}**"
                elif group_best:
                    mean = f"*{mean}*"
                row.append(f"{mean}{spread}{mark}")
        body.append(row)
    names = [(labels or {}).get(m, m) for m in methods]
    groups = [str(by.loc[(m, measures[0])]["group"]) for m in methods]
    return [DISPLAY_NAMES.get(x, x) for x in measures], names, body, groups


LEGEND = ("Mean ± standard deviation over runs of the scores averaged over languages. Bold: best method; "
          "italics (grey in LaTeX): best of its group; † and ‡: not significantly different from the best "
          "(paired two-tailed t-test over runs), † with 0.001 < p < 0.05, ‡ with p >= 0.05.")
#: The legend of a table of one run: no standard deviation, no significance test.
LEGEND_ONE_RUN = ("Scores averaged over languages, from one run: no standard deviation nor significance test "
                  "(gfun experiment --runs N gives them). Bold: best method; italics (grey in LaTeX): best of its "
                  "group.")


def to_markdown(table: pd.DataFrame, *, labels: Mapping[str, str] | None = None, title: str | None = None,
                legend: bool = True) -> str:
    """Markdown rendering of :func:`significance_table` (methods as rows, measures as columns)."""
    headers, names, body, _ = _cells(table, labels, latex=False)
    lines = [f"### {title}", ""] if title else []
    lines.append("| Method | " + " | ".join(headers) + " |")
    lines.append("|---|" + "---|" * len(headers))
    lines.extend(f"| {n} | " + " | ".join(r) + " |" for n, r in zip(names, body, strict=True))
    if legend:
        lines += ["", LEGEND if len(table) and table["n_runs"].max() > 1 else LEGEND_ONE_RUN]
        if UNLABELLED_FLAGGED in set(table["measure"]):
            lines[-1] += (f" {DISPLAY_NAMES[UNLABELLED_FLAGGED]}: the share of the test documents without any true "
                          "label that are given a label (the lowest is the best).")
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    return text.replace("\\", "\\textbackslash{}").replace("&", "\\&").replace("%", "\\%").replace("_", "\\_")


def to_latex(table: pd.DataFrame, *, labels: Mapping[str, str] | None = None, caption: str | None = None,
             label: str | None = None) -> str:
    """LaTeX (booktabs) rendering of :func:`significance_table`, a rule between groups.

    Needs ``\\usepackage{booktabs}`` and ``\\usepackage[table]{xcolor}`` (for the grey group-best cells).
    """
    headers, names, body, groups = _cells(table, labels, latex=True)
    tex = {"F1M": "$F_{1}^{M}$", "F1µ": "$F_{1}^{\\mu}$", "KM": "$K^{M}$", "Kµ": "$K^{\\mu}$"}
    out = ["% needs \\usepackage{booktabs} and \\usepackage[table]{xcolor}", "\\begin{table}[ht]", "  \\centering",
           "  \\begin{tabular}{l" + "c" * len(headers) + "}", "    \\toprule",
           "    Method & " + " & ".join(tex.get(h, _latex_escape(h)) for h in headers) + " \\\\", "    \\midrule"]
    prev = None
    for name, row, g in zip(names, body, groups, strict=True):
        if prev is not None and g != prev:
            out.append("    \\midrule")
        out.append(f"    {_latex_escape(name)} & " + " & ".join(row) + " \\\\")
        prev = g
    out += ["    \\bottomrule", "  \\end{tabular}"]
    if caption:
        out.append(f"  \\caption{{{_latex_escape(caption)}}}")
    if label:
        out.append(f"  \\label{{{label}}}")
    out.append("\\end{table}")
    return "\n".join(out) + "\n"


def summary_frame(table: pd.DataFrame) -> pd.DataFrame:
    """Wide machine-readable summary: one row per method, ``<measure>_mean``, ``_std``, ``_p`` columns."""
    wide = {}
    for (method, measure), r in table.set_index(["method", "measure"]).iterrows():
        row = wide.setdefault(method, {"group": r["group"]})
        row[f"{measure}_mean"] = r["mean"]
        row[f"{measure}_std"] = r["std"]
        row[f"{measure}_p"] = r["p_value"]
        row[f"{measure}_mark"] = r["mark"]
    df = pd.DataFrame.from_dict(wide, orient="index")
    df.index.name = "config"
    return df.replace({np.nan: math.nan})
